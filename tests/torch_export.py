#!/usr/bin/python3
"""tools/export_torch_layer.py against PyTorch itself (tests/check_torch.sh runs this): a
float64 nn.MultiheadAttention without biases and one with non-zero biases, saved whole,
exported with its input; attnstep's attention weights (each head) and output must equal
PyTorch's to 1e-12. Also a layer found by name inside a model, the --demo layer, and the
refusals (add_bias_kv, add_zero_attn, a wrong input shape, a misspelt --layer).
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


def lesson_keys(lesson_path):
    """The top-level keys the exported lesson gives."""
    with open(lesson_path, encoding="utf-8") as f:
        return {line.split(":")[0] for line in f if line[:1].isalpha()}


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

# 3. A layer with non-zero biases (bias=True), two heads: b_Q, b_K, b_V and b_O exported.
with_bias = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)
with torch.no_grad():
    with_bias.in_proj_bias.normal_(0.0, 0.5)
    with_bias.out_proj.bias.normal_(0.0, 0.5)
status, stderr, lesson = export(with_bias, x, tokens, "bias")
if status != 0:
    failures.append(f"layer with biases: the tool exited {status}: {stderr}")
else:
    if not {"b_Q", "b_K", "b_V", "b_O"} <= lesson_keys(lesson):
        failures.append(f"layer with biases: the lesson lacks a bias: {lesson_keys(lesson)}")
    compare("layer with biases, 2 heads", with_bias, x, lesson)
if "b_Q" in lesson_keys(os.path.join(SCRATCH, "bare", "out", "lesson.yaml")):
    failures.append("bare layer: the lesson gives a bias the layer does not have")

# 4. --demo: a seeded layer with biases, as the guide shows it.
demo = subprocess.run(["/usr/bin/python3", TOOL, "--demo", "--out",
                       os.path.join(SCRATCH, "demo")], capture_output=True, text=True,
                      timeout=120)
check = subprocess.run([ATTNSTEP, "--check", demo.stdout.strip()], capture_output=True,
                       text=True, timeout=60)
if demo.returncode != 0 or check.returncode != 0:
    failures.append(f"--demo: the tool exited {demo.returncode} ({demo.stderr.strip()}), "
                    f"attnstep --check {check.returncode} ({check.stderr.strip()})")

# 5. Refusals.
bias_kv = torch.nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, dtype=torch.float64)
expect_refusal("add_bias_kv", *export(bias_kv, x, tokens, "bias_kv")[:2], "add_bias_kv=True")
zero_attn = torch.nn.MultiheadAttention(8, 2, add_zero_attn=True, dtype=torch.float64)
expect_refusal("add_zero_attn", *export(zero_attn, x, tokens, "zero_attn")[:2],
               "add_zero_attn=True")
expect_refusal("too few tokens", *export(layer, x, tokens[:4], "short")[:2],
               "4 tokens given for an input of 5 rows")

# 6. A misspelt --layer: exit 64, the nearest name and the model's attention layers listed.
stack = torch.nn.TransformerEncoder(model, num_layers=2, enable_nested_tensor=False)
status, stderr, _ = export(stack, x, tokens, "typo", "layers.1.self_atn")
want = ("--layer: the model has no layer 'layers.1.self_atn'; did you mean 'layers.1.self_attn'? "
        "(its attention layers: layers.0.self_attn, layers.1.self_attn)")
if status != 64 or want not in stderr:
    failures.append(f"--layer typo: expected exit 64 and '{want}', got {status}: {stderr.strip()}")

for failure in failures:
    print("FAIL", failure)
print(f"torch export: {len(failures)} failures")
sys.exit(1 if failures else 0)
