#!/usr/bin/env bash
# Every gradient node (d_output … d_input, d_W_*, d_b_*, d_normed, d_residual, d_gain, d_bias,
# d_dropped) and the loss against PyTorch autograd in float64 (tests/torch_gradients.py): 23
# random lessons that cover every path of the forward pass (layer and RMS norm before attention
# and after the residual, and dropout's mask drawn again from its seed, among them), the
# lessons of tests/gradients/ (a target by token and from a file) and
# every shipped lesson with a loss; the shipped lessons with a norm or the residual and no loss
# have normed and residual held to PyTorch's forward. Fails with a clear message when
# python3-torch is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/torch_gradients.py ./attnstep "$scratch" \
    tests/gradients/*.yaml $(grep -l "^loss:\|^norm:\|^residual:" lessons/*.yaml)
