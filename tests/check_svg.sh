#!/usr/bin/env bash
# The figures (issue 30): --svg of every stage and head of every shipped lesson and --svg-dir of
# every walk parse as XML; rsvg-convert's PNGs have the ramp's colours at the largest, smallest
# and a masked cell; lesson text comes out escaped; bad arguments are refused (check_svg.py).
set -eu
cd "$(dirname "$0")/.."
command -v rsvg-convert >/dev/null || { echo "rsvg-convert is missing (librsvg2-bin): .ci/install-deps test"; exit 1; }
exec python3 tests/check_svg.py ./attnstep
