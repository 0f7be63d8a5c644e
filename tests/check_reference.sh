#!/usr/bin/env bash
# `attnstep --json` against an independent Python implementation (tests/reference_attention.py),
# to 1e-12, for every shipped lesson and the reference lessons in tests/reference/.
set -u
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/reference_attention.py ./attnstep lessons/*.yaml tests/reference/*.yaml
