#!/usr/bin/python3
"""What each head adds (contributions: true) against numpy (tests/check_contributions.sh runs
this). For random lessons (one to four heads, GQA, masks, RoPE, biases, dropout) and every
shipped lesson with `contributions: true`, from attnstep's --json and the lesson's W_O and b_O:
head_output of head h must be context_h · W_O[rows of head h], Σ_h head_output + b_O must be
output, and weighted_norms[i,j] must be ‖a[i,j] · V_h[j] · W_O^h‖₂ (Kobayashi et al. 2020, a
the weights, or dropped under dropout), each within 1e-12. Fails (never skips) when numpy is
missing or when no lesson has contributions.
Usage: check_contributions.py ATTNSTEP SCRATCH_DIR [LESSON...]"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError as missing:
    sys.exit(f"check_contributions: {missing.name} is missing; install python3-numpy with "
             "`bash .ci/install-deps test` (CI does)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_attention import load  # noqa: E402  W_O and b_O as the lesson gives them

ATTNSTEP, SCRATCH = sys.argv[1], sys.argv[2]
TOKENS = ["the", "cat", "sat", "on", "a", "warm", "mat"]
TOLERANCE = 1e-12
failures = []


def rows_yaml(m):
    return "".join("  - [" + ", ".join(repr(float(v)) for v in row) + "]\n" for row in m)


def random_lesson(case, seed):
    """A lesson of n tokens with numpy's random matrices written out, and its W_O, b_O."""
    rng = np.random.default_rng(seed)
    n, d, heads = case.get("n", 5), case.get("d_model", 8), case["heads"]
    kv = case.get("kv_heads", heads) * (d // heads)
    text = f"title: {case['name']}\ntokens: [{', '.join(TOKENS[:n])}]\nheads: {heads}\n"
    text += "contributions: true\n"
    for key in ("mask", "positional", "kv_heads", "dropout"):
        if key in case:
            text += f"{key}: {case[key]}\n"
    text += "embeddings:\n" + "".join(
        f"  {t}: [{', '.join(repr(float(v)) for v in rng.normal(size=d))}]\n" for t in TOKENS[:n])
    w_o = rng.normal(size=(d, d)) / np.sqrt(d)
    for name, shape in (("W_Q", (d, d)), ("W_K", (d, kv)), ("W_V", (d, kv))):
        text += f"{name}:\n" + rows_yaml(rng.normal(size=shape) / np.sqrt(d))
    text += "W_O:\n" + rows_yaml(w_o)
    b_o = None
    if case.get("biases"):
        b_o = rng.normal(size=d)
        text += f"b_V: [{', '.join(repr(float(v)) for v in rng.normal(size=kv))}]\n"
        text += f"b_O: [{', '.join(repr(float(v)) for v in b_o)}]\n"
    return text


def stages_of(data):
    """{name: [matrix per head]} of --json's stages (one matrix for a stage of the layer)."""
    out = {}
    for s in data["stages"]:
        out.setdefault(s["name"], []).append(np.array(
            [[np.nan if v is None else v for v in row] for row in s["values"]], dtype=np.float64))
    return out


def close(label, mine, theirs):
    difference = np.max(np.abs(mine - theirs) / np.maximum(1.0, np.abs(theirs)))
    if not difference <= TOLERANCE:
        failures.append(f"{label} differs from numpy by {difference:.3g} (> {TOLERANCE:g})")
    return mine.size


def check(path):
    run = subprocess.run([ATTNSTEP, "--json", path], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        failures.append(f"{path}: attnstep exited {run.returncode}: {run.stderr.strip()}")
        return 0
    data = json.loads(run.stdout)
    lesson = load(path)
    w_o = np.array(lesson["weights"]["W_O"], dtype=np.float64)
    b_o = np.array(lesson["biases"].get("b_O", [0.0] * data["d_model"]), dtype=np.float64)
    s = stages_of(data)
    if "head_output" not in s or "weighted_norms" not in s:
        failures.append(f"{path}: --json has no head_output or weighted_norms")
        return 0
    heads, d_k = data["heads"], data["d_k"]
    group = heads // (s["V"][0].shape[1] // d_k)
    attended = s.get("dropped", s["weights"])
    checked = 0
    for h in range(heads):
        w_o_h = w_o[h * d_k:(h + 1) * d_k]
        g = h // group
        v_h = s["V"][0][:, g * d_k:(g + 1) * d_k]
        checked += close(f"{path}: head_output head {h + 1}", s["head_output"][h],
                         s["context"][h] @ w_o_h)
        a = attended[h]
        norms = np.array([[np.linalg.norm(a[i, j] * (v_h[j] @ w_o_h)) for j in range(a.shape[1])]
                          for i in range(a.shape[0])])
        checked += close(f"{path}: weighted_norms head {h + 1}", s["weighted_norms"][h], norms)
    checked += close(f"{path}: Σ_h head_output + b_O against output",
                     sum(s["head_output"]) + b_o, s["output"][0])
    return checked


CASES = [
    {"name": "one_head", "heads": 1},
    {"name": "two_heads_causal", "heads": 2, "mask": "causal", "biases": True},
    {"name": "four_heads_gqa", "heads": 4, "kv_heads": 2, "mask": "{window: 2}", "n": 6},
    {"name": "rope_dropout", "heads": 2, "positional": "rope", "dropout": "{p: 0.3, seed: 8}",
     "biases": True},
    {"name": "mqa_dropout", "heads": 4, "kv_heads": 1, "dropout": "{p: 0.5, seed: 2}", "n": 7},
]


def main():
    total, lessons = 0, 0
    for seed, case in enumerate(CASES):
        path = os.path.join(SCRATCH, case["name"] + ".yaml")
        with open(path, "w") as f:
            f.write(random_lesson(case, 2000 + seed))
        total += check(path)
        lessons += 1
    shipped = [p for p in sys.argv[3:] if load(p)["contributions"]]
    if not shipped:
        failures.append("no shipped lesson has contributions: true")
    for path in shipped:
        total += check(path)
        lessons += 1
    for failure in failures:
        print("check_contributions: FAIL:", failure)
    if failures:
        sys.exit(1)
    print(f"check_contributions: {len(CASES)} random lessons and {len(shipped)} shipped, "
          f"{total} cells of head_output, weighted_norms and their sum equal numpy within "
          f"{TOLERANCE:g}")


main()
