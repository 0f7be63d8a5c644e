#!/usr/bin/env bash
# One walk, one numbering: every shipped lesson (and the two-head screen lesson) numbers its steps
# alike in the UI, --plain and --markdown, with the same stage formula and head at each number.
set -u
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/check_steps.py ./attnstep lessons/*.yaml tests/screens/two_heads.yaml \
    tests/reference/decode_two_heads.yaml tests/reference/decode_online_rope_gqa.yaml
