#!/usr/bin/python3
"""The causal and sliding-window masks and grouped-query attention against PyTorch
(tests/check_torch_masks.sh runs this). Random float64 layers are written as lessons; attnstep's
weights (each head) and output must equal PyTorch's to 1e-12:
  - causal and window masks through torch.nn.MultiheadAttention itself, with a boolean attn_mask
    (True where a query may not look) built from torch.triu;
  - grouped-query and multi-query attention (kv_heads) as LLaMA computes it: K and V projected
    to kv_heads heads, then repeat_kv (each key/value head repeated for heads / kv_heads
    consecutive query heads), then softmax(QKᵀ/√d_k) V with torch's own operations.
Fails (never skips) when PyTorch is missing.
Usage: torch_masks.py ATTNSTEP SCRATCH_DIR"""
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError as missing:
    sys.exit(f"check_torch_masks: {missing.name} is missing; install python3-torch with "
             "`bash .ci/install-deps test` (CI does)")

ATTNSTEP, SCRATCH = sys.argv[1], sys.argv[2]
TOKENS = ["the", "cat", "sat", "on", "a", "warm", "mat"]
failures = []


def matrix_yaml(name, m):
    """A matrix as a lesson writes it: a list of rows, every digit of each double."""
    return f"{name}:\n" + "".join("  - [" + ", ".join(repr(float(v)) for v in row) + "]\n"
                                  for row in m.tolist())


def write_lesson(name, x, w_q, w_k, w_v, w_o, heads, mask, kv_heads=None):
    """A lesson whose input is x and whose weights are attnstep's (rows are inputs: Q = x·W_Q)."""
    text = f"title: {name}\ntokens: [{', '.join(TOKENS[:len(x)])}]\nheads: {heads}\n"
    text += f"mask: {mask}\n" + (f"kv_heads: {kv_heads}\n" if kv_heads else "")
    text += "embeddings:\n" + "".join(f"  {t}: [{', '.join(repr(float(v)) for v in row)}]\n"
                                      for t, row in zip(TOKENS, x.tolist()))
    for key, m in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v), ("W_O", w_o)):
        text += matrix_yaml(key, m)
    path = os.path.join(SCRATCH, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def attnstep_stages(path):
    result = subprocess.run([ATTNSTEP, "--json", path], capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        failures.append(f"{path}: attnstep exited {result.returncode}: {result.stderr.strip()}")
        return None
    return {(s["name"], s["head"]): torch.tensor(s["values"], dtype=torch.float64)
            for s in json.loads(result.stdout)["stages"] if s["name"] in ("weights", "output")}


def compare(label, stages, weights, output):
    """weights: (heads, n, n) from PyTorch; output: (n, d_model)."""
    if stages is None:
        return
    for h in range(weights.shape[0]):
        difference = (stages[("weights", h + 1)] - weights[h]).abs().max().item()
        if difference > 1e-12:
            failures.append(f"{label}: weights of head {h + 1} differ from PyTorch's by "
                            f"{difference:.3g}")
    difference = (stages[("output", None)] - output).abs().max().item()
    if difference > 1e-12:
        failures.append(f"{label}: output differs from PyTorch's by {difference:.3g}")
    else:
        print(f"ok   {label}: weights and output equal PyTorch's within 1e-12")


def hidden(n, window=None):
    """PyTorch's boolean attn_mask: True where query i may not look at key j."""
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    if window is None:
        return future
    return future | torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-window)


def check_mask(label, mask_yaml, attn_mask, heads=2, d_model=8, n=7):
    """nn.MultiheadAttention itself, without biases, under attn_mask."""
    layer = torch.nn.MultiheadAttention(d_model, heads, bias=False, dtype=torch.float64)
    layer.eval()
    x = torch.randn(n, d_model, dtype=torch.float64)
    with torch.no_grad():
        output, weights = layer(x, x, x, attn_mask=attn_mask, need_weights=True,
                                average_attn_weights=False)
        w_q, w_k, w_v = layer.in_proj_weight.chunk(3)
        path = write_lesson(label.replace(" ", "_"), x, w_q.T, w_k.T, w_v.T,
                            layer.out_proj.weight.T, heads, mask_yaml)
    compare(label, attnstep_stages(path), weights, output)


def repeat_kv(x, n_rep):
    """LLaMA's repeat_kv on (kv_heads, n, d_k): each key/value head n_rep times in a row."""
    kv_heads, n, d_k = x.shape
    return x[:, None, :, :].expand(kv_heads, n_rep, n, d_k).reshape(kv_heads * n_rep, n, d_k)


def check_gqa(label, heads, kv_heads, mask_yaml, attn_mask, d_model=8, n=7):
    d_k = d_model // heads
    x = torch.randn(n, d_model, dtype=torch.float64)
    w_q = torch.randn(d_model, d_model, dtype=torch.float64) / d_model ** 0.5
    w_k = torch.randn(d_model, kv_heads * d_k, dtype=torch.float64) / d_model ** 0.5
    w_v = torch.randn(d_model, kv_heads * d_k, dtype=torch.float64) / d_model ** 0.5
    w_o = torch.randn(d_model, d_model, dtype=torch.float64) / d_model ** 0.5
    q = (x @ w_q).view(n, heads, d_k).transpose(0, 1)
    k = repeat_kv((x @ w_k).view(n, kv_heads, d_k).transpose(0, 1), heads // kv_heads)
    v = repeat_kv((x @ w_v).view(n, kv_heads, d_k).transpose(0, 1), heads // kv_heads)
    scores = (q @ k.transpose(1, 2)) / d_k ** 0.5
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    output = (weights @ v).transpose(0, 1).reshape(n, d_model) @ w_o
    path = write_lesson(label.replace(" ", "_").replace("/", "_"), x, w_q, w_k, w_v, w_o, heads,
                        mask_yaml, kv_heads)
    compare(label, attnstep_stages(path), weights, output)


torch.manual_seed(13)
check_mask("causal mask", "causal", hidden(7))
check_mask("window of 3", "{window: 3}", hidden(7, 3))
check_mask("window of 1", "{window: 1}", hidden(7, 1))
check_gqa("GQA 4 heads 2 kv_heads", 4, 2, "none", None)
check_gqa("MQA 4 heads 1 kv_head causal", 4, 1, "causal", hidden(7))
check_gqa("GQA 4 heads 2 kv_heads window of 2", 4, 2, "{window: 2}", hidden(7, 2))
for failure in failures:
    print("FAIL " + failure)
print(f"torch masks: {len(failures)} failed")
sys.exit(1 if failures else 0)
