#!/usr/bin/env bash
# --reader (issue 30): scripted sessions on standard input (tests/reader/NAME.commands) against
# golden transcripts (NAME.txt); no byte below 0x20 but the newline and no ESC in any output,
# a lesson full of control characters included; no question's answer before it is given.
set -u -o pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# plain_lines FILE: only printable bytes and newlines.
plain_lines() {
    LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]' "$1" && { echo "  a control byte in $1:"; LC_ALL=C grep -nP '[\x00-\x09\x0b-\x1f\x7f]' "$1" | cat -v | head -3; return 1; }
    return 0
}

# before_verdict FILE VERDICT TEXT...: none of the texts appears before the line VERDICT starts.
before_verdict() {
    local file=$1 verdict=$2; shift 2
    local at; at=$(grep -n -m1 -F -- "$verdict" "$file" | cut -d: -f1)
    [ -n "$at" ] || { echo "  no verdict '$verdict'"; return 1; }
    local text
    for text in "$@"; do
        if head -n $((at - 1)) "$file" | grep -qF -- "$text"; then
            echo "  '$text' shown before the answer was given:"; head -n $((at - 1)) "$file" | grep -nF -- "$text" | head -3
            return 1
        fi
    done
}

for commands in tests/reader/*.commands; do
    name=$(basename "$commands" .commands)
    out=$tmp/$name.txt
    ./attnstep --reader "lessons/$name.yaml" <"$commands" >"$out" 2>"$tmp/err"
    status=$?
    check "$name: runs to its end with status 0" test $status -eq 0
    check "$name: nothing on standard error" test ! -s "$tmp/err"
    check "$name: plain lines only" plain_lines "$out"
    check "$name: the golden transcript" golden_compare "tests/reader/$name.txt" "$out"
done
check "cat_sat: the share is not told before it is answered" \
    before_verdict "$tmp/cat_sat.txt" "Right: cat gives" 0.6296 0.63
check "cat_sat: the first question's key is not told before it is answered" \
    before_verdict "$tmp/cat_sat.txt" "Not quite: the answer is cat" 1.25 1.2500
check "bank_loan: head 2's choice is not told before it is answered" \
    before_verdict "$tmp/bank_loan.txt" "Right: bank gives 0.6259" 0.6259 0.63

# `step N` reaches the script's last step and no further (a lesson of two steps, no question
# to hold the walk): step 2 is its last, step 3 is refused with the range.
cat >"$tmp/two_steps.yaml" <<'YAML'
title: two steps
tokens: [a, b]
d_model: 2
embeddings: {random: normal, seed: 1}
steps:
  - stage: scores
  - stage: weights
YAML
check "step N: the last step is reached" bash -c \
    "printf 'step 2\\n' | ./attnstep --reader '$tmp/two_steps.yaml' | grep -q '^Step 2 of 2'"
check "step N: one past the last is refused with the range" bash -c \
    "printf 'step 3\\n' | ./attnstep --reader '$tmp/two_steps.yaml' | grep -qF 'No step 3: the lesson has steps 1 to 2.'"

# A lesson whose text carries ESC, CSI, C1 and bidirectional controls, read every way.
cat >"$tmp/evil.yaml" <<'YAML'
title: "T\e]0;PWNED\a \e[31mred \u009b2J \u202Eevil"
about: "about \e[2J \u009d \u202E"
tokens: ["\e[31ma", "b\u009bc", "\u202Ed", "x\ty"]
d_model: 2
embeddings: {random: normal, seed: 1}
steps:
  - stage: scores
    focus: [0, 1]
    ask: "q\e]52;c;SGVsbG8=\a?"
    choices: ["x\e[1m", "y\u202E"]
    answer: "x\e[1m"
    say: "say \e[2J \u009b \u202E"
  - stage: weights
    say: "line one \e[31m\nline two \u0085 \u2066"
YAML
printf '%s\n' read 'answer 2' read 'row b\xc2\x9bc' 'cell weights[0,1]' why next read \
    "$(printf 'bogus \033[2J')" help quit >"$tmp/evil.commands"
./attnstep --reader "$tmp/evil.yaml" <"$tmp/evil.commands" >"$tmp/evil.txt" 2>"$tmp/evil.err"
status=$?
check "controls: runs with status 0" test $status -eq 0
check "controls: the tokens escaped, as every view writes them" grep -qF 'row \x1b[31ma' "$tmp/evil.txt"
check "controls: plain lines only" plain_lines "$tmp/evil.txt"
check "controls: no raw U+202E, U+2066 or C1" bash -c "! LC_ALL=C grep -qF -e \$'\\xe2\\x80\\xae' -e \$'\\xe2\\x81\\xa6' -e \$'\\xc2\\x9b' '$tmp/evil.txt'"
check "controls: stderr plain too" plain_lines "$tmp/evil.err"

# Bad input to the mode itself.
check "--reader with --svg is one mode too many" bash -c "./attnstep --reader --svg weights lessons/cat_sat.yaml </dev/null 2>&1 | grep -qF 'choose one of'"
check "--ramp does nothing with --reader" bash -c "./attnstep --reader --ramp inferno lessons/cat_sat.yaml </dev/null 2>&1 | grep -qF -- '--ramp does nothing with --reader'"
exit $failures
