#!/usr/bin/python3
"""tools/export_torch_layer.py against PyTorch itself (tests/check_torch.sh runs this): a
float64 nn.MultiheadAttention without biases, saved whole, exported with its input; attnstep's
attention weights (each head) and output must equal PyTorch's to 1e-12. Also a layer found by
name inside a model, and the refusals (non-zero biases, add_bias_kv, a wrong input shape).
Usage: torch_export.py ATTNSTEP SCRATCH_DIR"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as missing:
    sys.exit(f"check_torch: {missing.name} is missing; install python3-torch and python3-numpy "
             "with `bash .ci/install-deps test` (CI does)")

ATTNSTEP, SCRATCH = sys.argv[1], sys.argv[2]
TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                    "export_torch_layer.py")
failures = []


def export(model, x, tokens, name, layer_name=""):
    """Saves model and x, runs the tool; returns (exit status, stderr, lesson path)."""
    folder = os.path.join(SCRATCH, name)
    os.makedirs(folder, exist_ok=True)
    torch.save(model, os.path.join(folder, "model.pt"))
    np.save(os.path.join(folder, "x.npy"), x)
    command = ["/usr/bin/python3", TOOL, "--model", os.path.join(folder, "model.pt"),
               "--input", os.path.join(folder, "x.npy"), "--tokens", " ".join(tokens),
               "--out", os.path.join(folder, "out")]
    if layer_name:
        command += ["--layer", layer_name]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return result.returncode, result.stderr, result.stdout.strip()


def compare(label, layer, x, lesson_path):
    layer.eval()   # attnstep shows inference: no attention dropout
    with torch.no_grad():
        xt = torch.from_numpy(x)
        output, weights = layer(xt, xt, xt, need_weights=True, average_attn_weights=False)
    result = subprocess.run([ATTNSTEP, "--json", lesson_path], capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        failures.append(f"{label}: attnstep exited {result.returncode}: {result.stderr}")
        return
    stages = {(s["name"], s["head"]): np.array(s["values"], dtype=float)
              for s in json.loads(result.stdout)["stages"]}
    for head in range(layer.num_heads):
        got, want = stages[("weights", head + 1)], weights[head].numpy()
        if got.shape != want.shape or np.max(np.abs(got - want)) > 1e-12:
            failures.append(f"{label}: weights of head {head + 1} differ from PyTorch's by "
                            f"{np.max(np.abs(got - want)) if got.shape == want.shape else got.shape}")
    got, want = stages[("output", None)], output.numpy()
    if got.shape != want.shape or np.max(np.abs(got - want)) > 1e-12:
        failures.append(f"{label}: output differs from PyTorch's")


def expect_refusal(label, status, stderr, words):
    if status != 65 or words not in stderr:
        failures.append(f"{label}: expected exit 65 and '{words}', got {status}: {stderr.strip()}")


torch.manual_seed(3)
tokens = ["the", "cat", "sat", "on", "mat"]

# 1. A bare float64 layer without biases, two heads.
layer = torch.nn.MultiheadAttention(8, 2, bias=False, dtype=torch.float64)
x = torch.randn(5, 8, dtype=torch.float64).numpy()
status, stderr, lesson = export(layer, x, tokens, "bare")
if status != 0:
    failures.append(f"bare layer: the tool exited {status}: {stderr}")
else:
    compare("bare layer, 2 heads", layer, x, lesson)

# 2. A model's attention layer by name (its biases are PyTorch's initial zeros), four heads.
model = torch.nn.TransformerEncoderLayer(8, 4, dim_feedforward=16, dtype=torch.float64)
status, stderr, lesson = export(model, x, tokens, "by_name", "self_attn")
if status != 0:
    failures.append(f"layer by name: the tool exited {status}: {stderr}")
else:
    compare("self_attn of a TransformerEncoderLayer, 4 heads", model.self_attn, x, lesson)

# 3. Refusals.
with_bias = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)
with torch.no_grad():
    with_bias.in_proj_bias.fill_(0.5)
expect_refusal("non-zero bias", *export(with_bias, x, tokens, "bias")[:2],
               "non-zero in_proj_bias")
bias_kv = torch.nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, dtype=torch.float64)
expect_refusal("add_bias_kv", *export(bias_kv, x, tokens, "bias_kv")[:2], "add_bias_kv=True")
expect_refusal("too few tokens", *export(layer, x, tokens[:4], "short")[:2],
               "4 tokens given for an input of 5 rows")

for failure in failures:
    print("FAIL", failure)
print(f"torch export: {len(failures)} failures")
sys.exit(1 if failures else 0)
