#!/usr/bin/env bash
# The awkward numbers (0, a subnormal, ±1e308, 1e100, −∞) through every view — --plain and
# --markdown at several precisions, --csv, --explain of every cell and the headless UI —
# against --json's values (tests/numbers/compare.py says how they are compared).
set -u
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/numbers/compare.py tests/numbers/awkward.yaml lessons/cat_sat.yaml
