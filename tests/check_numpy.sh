#!/usr/bin/env bash
# Data files and numpy's draws against numpy itself (tests/numpy_files.py): .npy round trips in
# every supported dtype and order, CSV, bit-exact randn for several seeds and shapes, the path
# rules. Fails with a clear message when python3-numpy is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/numpy_files.py ./attnstep "$scratch"
