#!/usr/bin/env bash
# tools/export_torch_layer.py against PyTorch (tests/torch_export.py): real float64
# nn.MultiheadAttention layers, without biases and with non-zero ones (bias=True), exported and
# stepped by attnstep give PyTorch's weights and output to 1e-12. Fails with a clear message
# when python3-torch is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/torch_export.py ./attnstep "$scratch"
