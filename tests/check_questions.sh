#!/usr/bin/env bash
# Questions never leak: in every shipped lesson (and the screen tests' question lesson), no open
# question's screen marks, names or shows its answer (tests/check_questions.py says what is
# looked for).
set -u
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/check_questions.py ./attnstep lessons/*.yaml tests/screens/extra/questions.yaml
