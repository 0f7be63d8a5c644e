#!/usr/bin/env bash
# tools/export_torch_layer.py against PyTorch (tests/torch_export.py): a real float64
# nn.MultiheadAttention exported and stepped by attnstep gives PyTorch's weights and output to
# 1e-12. Fails with a clear message when python3-torch is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/torch_export.py ./attnstep "$scratch"
