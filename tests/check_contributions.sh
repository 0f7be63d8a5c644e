#!/usr/bin/env bash
# What each head adds against numpy (tests/check_contributions.py): head_output, Σ_h head_output
# + b_O = output and weighted_norms (Kobayashi et al.'s ‖weight · v · W_O^h‖) within 1e-12, on 5
# random lessons (GQA, masks, RoPE, biases, dropout) and every shipped lesson with
# contributions: true. Fails with a clear message when python3-numpy is missing.
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/check_contributions.py ./attnstep "$scratch" lessons/*.yaml
