#!/usr/bin/env bash
# A size sweep of the headless UI, 40x12 to 250x70 (issue 25): no stray character beside the
# help overlay or the sum pane, no explanation line without its result, on every step of the
# lessons whose screens a class sees, and of the layer at real size (32 tokens of 512 numbers, 8
# heads: the step list, the scrolled matrix and its column window at every size).
set -u
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/check_sweep.py ./attnstep lessons/bank_loan.yaml \
    lessons/animal_it.yaml lessons/four_heads.yaml lessons/window.yaml lessons/causal.yaml \
    lessons/gqa.yaml lessons/biases.yaml lessons/real_size.yaml
