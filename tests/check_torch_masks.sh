#!/usr/bin/env bash
# The causal and window masks (through torch.nn.MultiheadAttention) and grouped-query attention
# (LLaMA's repeat_kv) against PyTorch, to 1e-12 (tests/torch_masks.py). Fails with a clear
# message when python3-torch is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 tests/torch_masks.py ./attnstep "$scratch"
