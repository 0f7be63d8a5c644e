#!/usr/bin/python3
"""Every gradient node against PyTorch autograd (tests/check_torch_gradients.sh runs this).
Random float64 lessons with `loss: {target: ...}` cover each path of the forward pass (one and
several heads; no, causal, window and explicit masks; cross-attention; RoPE; ALiBi; kv_heads
and multi-query; biases; scale on and off; the online softmax; layer and RMS norm, before
attention and after the residual, and the residual alone; dropout in training mode, its keep
mask drawn again from --json's seed by reference_attention.py's generator, with GQA, RoPE,
cross-attention, a norm and contributions); the shipped lessons that have a
loss are compared too. The forward stages normed, residual and output must equal PyTorch's
(torch.nn.LayerNorm's function, the RMS norm by its formula in torch ops) within 1e-12 too. PyTorch computes the same forward with its own operations, the same loss
½ Σ (output − target)², and .backward(); every d_* stage of attnstep's --json must equal the
.grad of its tensor within 1e-12, the masked cells of d_scores, d_scaled, d_biased and d_masked
must be exactly 0, and "loss" must equal the loss. Fails (never skips) when PyTorch is missing.
Usage: torch_gradients.py ATTNSTEP SCRATCH_DIR [LESSON...]"""
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_attention import dropout_keep  # noqa: E402  the documented generator, again

try:
    import torch
except ImportError as missing:
    sys.exit(f"check_torch_gradients: {missing.name} is missing; install python3-torch with "
             "`bash .ci/install-deps test` (CI does)")

ATTNSTEP, SCRATCH = sys.argv[1], sys.argv[2]
TOKENS = ["the", "cat", "sat", "on", "a", "warm", "mat", "today"]
SOURCE = ["le", "chat", "noir", "dort", "ici"]
TOLERANCE = 1e-12
failures = []


def rows_yaml(m):
    return "".join("  - [" + ", ".join(repr(float(v)) for v in row) + "]\n" for row in m.tolist())


def lesson_text(case, x, src, params, target):
    text = f"title: {case['name']}\ntokens: [{', '.join(TOKENS[:x.shape[0]])}]\n"
    if src is not None:
        text += f"source: [{', '.join(SOURCE[:src.shape[0]])}]\n"
    text += f"heads: {case['heads']}\nscale: {'true' if case.get('scale', True) else 'false'}\n"
    for key in ("mask", "positional", "bias", "kv_heads", "softmax", "tile", "dropout",
                "contributions"):
        if key in case:
            text += f"{key}: {case[key]}\n"
    text += "embeddings:\n"
    for token, row in zip(TOKENS, x.tolist()):
        text += f"  {token}: [{', '.join(repr(float(v)) for v in row)}]\n"
    if src is not None:
        for token, row in zip(SOURCE, src.tolist()):
            text += f"  {token}: [{', '.join(repr(float(v)) for v in row)}]\n"
    if "norm" in case:
        norm = case["norm"]
        text += f"norm: {{kind: {norm['kind']}, place: {norm['place']}"
        if "eps" in norm:
            text += f", eps: {norm['eps']!r}"
        for name in ("gain", "bias"):
            if name in params:
                text += f", {name}: [{', '.join(repr(float(v)) for v in params[name].tolist())}]"
        text += "}\n"
    if case.get("residual"):
        text += "residual: true\n"
    for name, value in params.items():
        if name in ("gain", "bias"):
            continue
        if name.startswith("b_"):
            text += f"{name}: [{', '.join(repr(float(v)) for v in value.tolist())}]\n"
        else:
            text += f"{name}:\n" + rows_yaml(value)
    text += "loss:\n  target:\n" + "".join("    " + line for line in rows_yaml(target).splitlines(True))
    return text


def run(path):
    result = subprocess.run([ATTNSTEP, "--json", path], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        failures.append(f"{path}: attnstep exited {result.returncode}: {result.stderr.strip()}")
        return None
    return json.loads(result.stdout)


def hidden_cells(mask, n, m, window):
    """True where query i may not look at key j, as attnstep's mask rule says."""
    i = torch.arange(n).unsqueeze(1)
    j = torch.arange(m).unsqueeze(0)
    if mask == "causal":
        return j > i
    if mask == "window":
        return (j > i) | (j <= i - window)
    return torch.zeros(n, m, dtype=torch.bool)


def alibi_slope(h, heads):
    below = 1
    while below * 2 <= heads:
        below *= 2
    if h <= below:
        return 2.0 ** (-8.0 * h / below)
    return 2.0 ** (-8.0 * (2 * (h - below) - 1) / (2 * below))


def rope(x, d_k, base):
    """Each head's pairs (2p, 2p+1) of row pos turned by pos · base^(−2p/d_k)."""
    n, cols = x.shape
    out = torch.empty_like(x)
    for col in range(0, cols, 2):
        p = (col % d_k) // 2
        angle = torch.arange(n, dtype=torch.float64) * base ** (-2.0 * p / d_k)
        c, s = torch.cos(angle), torch.sin(angle)
        out[:, col] = x[:, col] * c - x[:, col + 1] * s
        out[:, col + 1] = x[:, col] * s + x[:, col + 1] * c
    return out


def normalise(x, data, param):
    """normed of rows x as the lesson's norm makes it: torch's layer_norm (biased variance), or
    the RMS norm x / √(mean(x²) + eps) · gain (torch.nn.RMSNorm's formula)."""
    norm = data["_case"]["norm"]
    eps = norm.get("eps", 1e-5)
    if norm["kind"] == "layer":
        bias = param("bias") if "bias" in data["_params"] else None
        return torch.nn.functional.layer_norm(x, (x.shape[1],), param("gain"), bias, eps)
    return x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + eps) * param("gain")


def reference(data, hidden, given=None):
    """The forward pass and its gradients, by torch, from a lesson's --json: {stage name: tensor
    or [tensor per head]} of every gradient, and the loss. A parameter in `given` (name →
    tensor) is that tensor, whose .grad the backward pass fills (torch_training.py's SGD)."""
    stage = {s["name"]: [torch.tensor(s["values"], dtype=torch.float64)]
             for s in data["stages"] if s["name"] in ("input", "source_input")}
    heads, d_model = data["heads"], data["d_model"]
    d_k = d_model // heads
    leaf = {}

    def param(name):
        if given and name in given:
            return given[name]
        t = torch.tensor(data["_params"][name], dtype=torch.float64, requires_grad=True)
        leaf[name] = t
        return t

    x = stage["input"][0].clone().requires_grad_(True)
    leaf["input"] = x
    src = x
    if "source_input" in stage:
        src = stage["source_input"][0].clone().requires_grad_(True)
        leaf["source_input"] = src
    p = data["_params"]

    def project(rows, w, b):
        out = rows @ param(w)
        return out + param(b) if b in p else out

    named = {}
    norm = data["_case"].get("norm")
    if norm and norm["place"] == "pre":
        src = named["normed"] = normalise(x, data, param)
        attend = src
    else:
        attend = x
    q, k, v = project(attend, "W_Q", "b_Q"), project(src, "W_K", "b_K"), project(src, "W_V", "b_V")
    named.update(Q=q, K=k, V=v)
    if data["_case"].get("positional") == "rope":
        base = data.get("rope_base", 10000.0)
        q_r, k_r = rope(q, d_k, base), rope(k, d_k, base)
        named.update(Q_rotated=q_r, K_rotated=k_r)
    else:
        q_r, k_r = q, k
    n, m = q.shape[0], k.shape[0]
    kv_heads = k.shape[1] // d_k
    per_head = {name: [] for name in ("scores", "scaled", "biased", "masked", "weights", "dropped",
                                      "context")}
    dropout = data.get("dropout")   # the mask drawn again from the seed --json reports
    keep = dropout_keep(dropout, heads, n, m) if dropout else None
    contexts = []
    for h in range(heads):
        g = h // (heads // kv_heads)
        scores = q_r[:, h * d_k:(h + 1) * d_k] @ k_r[:, g * d_k:(g + 1) * d_k].T
        scaled = scores / math.sqrt(d_k) if data["_case"].get("scale", True) else scores * 1.0
        after = scaled
        if data["_case"].get("bias") == "alibi":
            distance = (torch.arange(n).unsqueeze(1) - torch.arange(m).unsqueeze(0)).abs()
            after = scaled - alibi_slope(h + 1, heads) * distance.to(torch.float64)
            per_head["biased"].append(after)
        masked = after.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        attended = weights
        if keep:   # training mode: weights × keep / (1 − p), as attnstep computes it
            attended = weights * torch.tensor(keep[h], dtype=torch.float64) / (1.0 - dropout["p"])
            per_head["dropped"].append(attended)
        context = attended @ v[:, g * d_k:(g + 1) * d_k]
        for name, t in (("scores", scores), ("scaled", scaled), ("masked", masked),
                        ("weights", weights), ("context", context)):
            per_head[name].append(t)
        contexts.append(context)
    concat = torch.cat(contexts, dim=1)
    output = project(concat, "W_O", "b_O")
    named.update(concat=concat, output=output)
    last = output
    if data["_case"].get("residual"):
        last = named["residual"] = x + output
    if norm and norm["place"] == "post":
        last = named["normed"] = normalise(last, data, param)
    for t in list(named.values()) + [t for ts in per_head.values() for t in ts]:
        t.retain_grad()
    target = torch.tensor(data["_target"], dtype=torch.float64)
    loss = 0.5 * ((last - target) ** 2).sum()
    loss.backward()
    data["_forward"] = {name: named[name].detach() for name in ("normed", "residual", "output")
                        if name in named}
    grads = {"d_" + name: [t.grad] for name, t in named.items()}
    grads.update({"d_" + name: [t.grad] for name, t in leaf.items()})
    grads.update({"d_" + name: [t.grad for t in ts] for name, ts in per_head.items() if ts})
    return grads, loss.item()


def compare(label, data, grads, loss, hidden):
    got = {}
    for s in data["stages"]:
        if s["name"].startswith("d_"):
            got.setdefault(s["name"], []).append(torch.tensor(s["values"], dtype=torch.float64))
    gradient_stages = [name for name in got if name.startswith("d_")]
    missing = sorted(set(grads) - set(gradient_stages))
    extra = sorted(set(gradient_stages) - set(grads))
    if missing or extra:
        failures.append(f"{label}: gradient stages missing {missing}, unexpected {extra}")
    if "loss" not in data or abs(data["loss"] - loss) > TOLERANCE * max(1.0, abs(loss)):
        failures.append(f"{label}: loss {data.get('loss')} is not PyTorch's {loss!r}")
    checked = 0
    for s in data["stages"]:
        theirs = data.get("_forward", {}).get(s["name"])
        if theirs is None:
            continue
        mine = torch.tensor(s["values"], dtype=torch.float64)
        difference = (mine - theirs).abs().max().item()
        checked += mine.numel()
        if difference > TOLERANCE:
            failures.append(f"{label}: {s['name']} differs from PyTorch by {difference:.3g} "
                            f"(> {TOLERANCE:g})")
    for name in sorted(set(grads) & set(gradient_stages)):
        for h, (mine, theirs) in enumerate(zip(got[name], grads[name])):
            theirs = theirs.reshape(mine.shape)
            difference = (mine - theirs).abs().max().item()
            checked += mine.numel()
            if difference > TOLERANCE:
                failures.append(f"{label}: {name} head {h + 1} differs from autograd by "
                                f"{difference:.3g} (> {TOLERANCE:g})")
            if name in ("d_scores", "d_scaled", "d_biased", "d_masked"):
                hid = mine[hidden]
                if hid.numel() and not bool((hid == 0).all() and not torch.signbit(hid).any()):
                    failures.append(f"{label}: {name} head {h + 1} has a masked cell that is not "
                                    "exactly 0")
    return checked


def random_case(case, seed):
    torch.manual_seed(seed)
    n, d_model, heads = case.get("n", 5), case.get("d_model", 8), case["heads"]
    d_k = d_model // heads
    kv = int(case.get("kv_heads", heads)) * d_k
    x = torch.randn(n, d_model, dtype=torch.float64)
    src = torch.randn(case["source"], d_model, dtype=torch.float64) if "source" in case else None
    params = {"W_Q": torch.randn(d_model, d_model, dtype=torch.float64) / math.sqrt(d_model),
              "W_K": torch.randn(d_model, kv, dtype=torch.float64) / math.sqrt(d_model),
              "W_V": torch.randn(d_model, kv, dtype=torch.float64) / math.sqrt(d_model),
              "W_O": torch.randn(d_model, d_model, dtype=torch.float64) / math.sqrt(d_model)}
    if "norm" in case:
        params["gain"] = 1.0 + 0.5 * torch.randn(d_model, dtype=torch.float64)
        if case["norm"]["kind"] == "layer":
            params["bias"] = 0.5 * torch.randn(d_model, dtype=torch.float64)
    if case.get("biases"):
        params.update(b_Q=torch.randn(d_model, dtype=torch.float64),
                      b_K=torch.randn(kv, dtype=torch.float64),
                      b_V=torch.randn(kv, dtype=torch.float64),
                      b_O=torch.randn(d_model, dtype=torch.float64))
    target = torch.randn(n, d_model, dtype=torch.float64)
    return x, src, params, target


CASES = [
    {"name": "one_head", "heads": 1},
    {"name": "two_heads_causal", "heads": 2, "mask": "causal"},
    {"name": "four_heads_window", "heads": 4, "mask": "{window: 2}", "n": 6},
    {"name": "no_scale", "heads": 2, "scale": False},
    {"name": "biases", "heads": 2, "biases": True, "mask": "causal"},
    {"name": "cross", "heads": 2, "source": 4, "biases": True},
    {"name": "rope", "heads": 2, "positional": "rope", "mask": "causal"},
    {"name": "rope_cross", "heads": 2, "positional": "rope", "source": 3},
    {"name": "alibi", "heads": 4, "bias": "alibi", "mask": "causal", "n": 6},
    {"name": "gqa", "heads": 4, "kv_heads": 2, "mask": "causal", "biases": True},
    {"name": "mqa_rope", "heads": 4, "kv_heads": 1, "positional": "rope"},
    {"name": "online", "heads": 2, "softmax": "online", "tile": 2, "mask": "causal"},
    {"name": "everything", "heads": 4, "kv_heads": 2, "positional": "rope", "bias": "alibi",
     "mask": "{window: 3}", "biases": True, "scale": False, "n": 7},
    {"name": "residual", "heads": 2, "residual": True, "mask": "causal"},
    {"name": "pre_layer", "heads": 2, "norm": {"kind": "layer", "place": "pre"}},
    {"name": "pre_layer_residual", "heads": 4, "norm": {"kind": "layer", "place": "pre"},
     "residual": True, "positional": "rope", "mask": "causal", "biases": True},
    {"name": "pre_rms_residual", "heads": 2, "norm": {"kind": "rms", "place": "pre", "eps": 0.01},
     "residual": True, "mask": "{window: 2}", "biases": True, "n": 6},
    {"name": "post_layer", "heads": 2, "norm": {"kind": "layer", "place": "post", "eps": 0.001},
     "residual": True, "bias": "alibi", "mask": "causal", "biases": True},
    {"name": "post_rms", "heads": 4, "kv_heads": 2, "norm": {"kind": "rms", "place": "post"},
     "residual": True, "positional": "rope", "n": 7},
    {"name": "dropout", "heads": 2, "dropout": "{p: 0.3, seed: 5}", "mask": "causal"},
    {"name": "dropout_gqa_contributions", "heads": 4, "kv_heads": 2, "biases": True,
     "dropout": "{p: 0.5, seed: 17}", "contributions": "true", "positional": "rope", "n": 6},
    {"name": "dropout_cross", "heads": 2, "source": 4, "dropout": "{p: 0.2, seed: 3}"},
    {"name": "dropout_pre_norm_residual", "heads": 2, "norm": {"kind": "layer", "place": "pre"},
     "residual": True, "dropout": "{p: 0.4, seed: 99}", "mask": "{window: 2}",
     "contributions": "true"},
]


def mask_of(case):
    mask = case.get("mask", "none")
    if mask.startswith("{window"):
        return "window", int(re.search(r"\d+", mask).group())
    return mask, 0


def main():
    total = 0
    for seed, case in enumerate(CASES):
        x, src, params, target = random_case(case, 1000 + seed)
        path = os.path.join(SCRATCH, case["name"] + ".yaml")
        with open(path, "w") as f:
            f.write(lesson_text(case, x, src, params, target))
        data = run(path)
        if data is None:
            continue
        data["_params"] = {k: v.tolist() for k, v in params.items()}
        data["_target"], data["_case"] = target.tolist(), case
        mask, window = mask_of(case)
        hidden = hidden_cells(mask, x.shape[0], src.shape[0] if src is not None else x.shape[0],
                              window)
        grads, loss = reference(data, hidden)
        total += compare(case["name"], data, grads, loss, hidden)
    for path in sys.argv[3:]:
        total += shipped(path)
    for failure in failures:
        print("check_torch_gradients: FAIL:", failure)
    if failures:
        sys.exit(1)
    print(f"check_torch_gradients: {len(CASES)} random lessons and {len(sys.argv) - 3} shipped "
          f"{total} gradient cells equal PyTorch autograd within {TOLERANCE:g}")


def shipped_setup(path):
    """A shipped lesson with a loss, as reference() reads it: its parameters and target from
    --json ("params", "target"), its configuration from the JSON's configuration lines, the
    hidden cells from masked's (null: −∞) and whether it scales from scaled against scores (or
    d_scaled against d_scores).
    (None, None) after a failure."""
    data = run(path)
    if data is None:
        return None, None
    if "target" not in data:
        failures.append(f"{path}: --json has no target: the lesson has no loss")
        return None, None
    first = {}
    for s in data["stages"]:
        first.setdefault(s["name"], s["values"])
    hidden = torch.tensor([[v is None for v in row] for row in first["masked"]])
    # scores of 0 (a zero W_Q) are their own scaling: their gradients tell it then
    scaled = (first["scaled"] != first["scores"] or first["d_scaled"] != first["d_scores"]
              or data["d_k"] == 1)
    data["_params"], data["_target"] = data["params"], data["target"]
    data["_case"] = {"positional": data.get("positional"), "bias": data.get("bias"),
                     "scale": scaled, "residual": data.get("residual", False)}
    if "norm" in data:
        data["_case"]["norm"] = data["norm"]
    return data, hidden


def forward_only(path):
    """A shipped lesson with a norm or the residual but no loss: normed and residual from its
    own input and output (--json has no weights without a loss) against PyTorch's layer_norm
    (or the RMS formula) and x + output, within 1e-12."""
    data = run(path)
    if data is None:
        return 0
    stage = {s["name"]: torch.tensor(s["values"], dtype=torch.float64) for s in data["stages"]}
    if "norm" not in data and not data.get("residual"):
        failures.append(f"{path}: --json has neither norm nor residual")
        return 0
    data["_params"] = data.get("biases", {})
    data["_case"] = {"norm": data.get("norm")}
    expected = {}
    if data.get("residual"):
        expected["residual"] = stage["input"] + stage["output"]
    if "norm" in data:
        rows = stage["residual"] if data["norm"]["place"] == "post" else stage["input"]

        def param(name):
            return torch.tensor(data["_params"][name], dtype=torch.float64)
        expected["normed"] = normalise(rows, data, param)
    checked = 0
    for name, theirs in expected.items():
        difference = (stage[name] - theirs).abs().max().item()
        checked += theirs.numel()
        if difference > TOLERANCE:
            failures.append(f"{os.path.basename(path)}: {name} differs from PyTorch by "
                            f"{difference:.3g} (> {TOLERANCE:g})")
    return checked


def shipped(path):
    with open(path, encoding="utf-8") as f:
        if not re.search(r"^loss:", f.read(), re.M):
            return forward_only(path)
    data, hidden = shipped_setup(path)
    if data is None:
        return 0
    grads, loss = reference(data, hidden)
    return compare(os.path.basename(path), data, grads, loss, hidden)


if __name__ == "__main__":
    main()
