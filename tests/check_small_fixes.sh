#!/usr/bin/env bash
# The smaller findings of issue #11: a subnormal number is a number, keys do nothing unseen
# while "terminal too small" is shown, a failed reload's error stands alone in the status line,
# --csv takes --precision (exact without it).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=tests/reference/cat_sat.yaml
failures=0
printf 'title: tiny\ntokens: [a]\nembeddings:\n  a: [4.9e-324, 1.0]\n' >"$tmp/subnormal.yaml"
check "4.9e-324 (the smallest subnormal) is accepted and kept exactly" bash -c \
    "./attnstep --json '$tmp/subnormal.yaml' | grep -qF '[[4.9406564584124654e-324, 1]]'"
printf 'title: tiny\ntokens: [a]\nembeddings:\n  a: [1e-400, 1.0]\n' >"$tmp/underflow.yaml"
check "1e-400 (zero once read) is still refused, 65" bash -c \
    "out=\$(./attnstep --check '$tmp/underflow.yaml' 2>&1); [ \$? -eq 65 ] &&
     [ \"\${out%%\$'\\n'*}\" = \"$tmp/underflow.yaml:4:7: error: the embedding of 'a': '1e-400' is too small for a double: it rounds to zero (the smallest is about 4.9e-324); write 0 if zero is meant\" ]"

# n, j and Tab pressed while the terminal is too small change nothing: once it grows, the
# first step with the first cell is shown; q still quits there.
printf 'resize 20x5\nn\nn\nj\ntab\nresize 100x30\ndump\nq\n' >"$tmp/small_keys"
check "keys are ignored while the terminal is too small" bash -c \
    "out=\$(./attnstep --keys '$tmp/small_keys' '$lesson') && grep -q 'step 1 of' <<<\"\$out\" &&
     grep -q '▸cat \[1.0000\] 0.5000' <<<\"\$out\""
printf 'resize 20x5\nq\nn\nn\n' >"$tmp/small_quit"
check "q quits while the terminal is too small" bash -c \
    "out=\$(./attnstep --keys '$tmp/small_quit' '$lesson') && grep -q 'terminal too small' <<<\"\$out\" &&
     ! grep -q 'step 3 of' <<<\"\$out\""

# A reload that fails after one that worked: the narration rule says so and the error is above
# the narration, with no stale "reloaded" beside it.
printf 'reload %s\ndump\nreload %s\ndump\nq\n' "$lesson" "$tmp/missing.yaml" >"$tmp/reload_keys"
check "a failed reload does not keep the last 'reloaded' beside its error" bash -c \
    "out=\$(./attnstep --keys '$tmp/reload_keys' --screen 120x16 '$lesson') &&
     [ \"\$(grep -c 'reloaded cat_sat.yaml' <<<\"\$out\")\" = 1 ] &&
     grep -q '── the save did not load: the last good version is shown ──' <<<\"\$out\" &&
     grep -q '^ cat_sat.yaml: error: cannot be read: No such file or directory\$' <<<\"\$out\""

check "--csv is exact without --precision" bash -c \
    "./attnstep --csv weights '$lesson' | grep -q '^cat,0.62956009596964146,0.37043990403035854'"
check "--csv --precision 3 rounds to 3 decimals" bash -c \
    "[ \"\$(./attnstep --csv weights --precision 3 '$lesson' | tr -d '\r')\" = \$'weights,cat,sat\ncat,0.630,0.370\nsat,0.413,0.587' ]"
check "--csv --precision keeps -inf for hidden cells" bash -c \
    "./attnstep --csv masked --precision 2 lessons/causal.yaml | sed -n 2p | grep -q ',-inf,-inf'"

echo "small fixes: $failures failed"
[ "$failures" -eq 0 ]
