#!/usr/bin/env bash
# The exit statuses README and the man page list, in the cases issue #11 found wrong: an
# option the chosen mode ignores (64, naming it), an unknown TERM and a stdin that is not a
# terminal (the plain trace with a note saying which), the one-line messages of each.
set -u
cd "$(dirname "$0")/.."
lesson=tests/reference/cat_sat.yaml
failures=0

# exits STATUS MESSAGE COMMAND...: COMMAND exits STATUS and its stderr is exactly MESSAGE.
exits() {
    local want_status=$1 want=$2; shift 2
    local said; said=$("$@" 2>&1 >/dev/null)
    local status=$?
    if [ "$status" -eq "$want_status" ] && [ "$said" = "$want" ]; then
        echo "ok   $* -> $status"
    else
        printf 'FAIL %s\n     status %s, expected %s\n     said: %s\n     want: %s\n' "$*" \
            "$status" "$want_status" "$said" "$want"
        failures=$((failures + 1))
    fi
}
try="Try 'attnstep --help' for more information."

exits 64 "attnstep: --at does nothing with --json"$'\n'"$try" ./attnstep --json --at bogus "$lesson"
exits 64 "attnstep: --head does nothing with --plain"$'\n'"$try" ./attnstep --plain --head 99 "$lesson"
exits 64 "attnstep: --keys does nothing with --plain"$'\n'"$try" \
    ./attnstep --plain --keys /nonexistent "$lesson"
exits 64 "attnstep: --precision does nothing with --json"$'\n'"$try" \
    ./attnstep --json --precision 3 "$lesson"
exits 64 "attnstep: --screen does nothing with --markdown"$'\n'"$try" \
    ./attnstep --markdown --screen 80x24 "$lesson"
exits 64 "attnstep: --d-model does nothing with --stats"$'\n'"$try" \
    ./attnstep --stats --d-model 8 "$lesson"
exits 64 "attnstep: --head does nothing with --cost"$'\n'"$try" ./attnstep --cost --head 2
exits 64 "attnstep: --color does nothing with --check"$'\n'"$try" \
    ./attnstep --check --color never "$lesson"
exits 64 "attnstep: --precision does nothing with --check"$'\n'"$try" \
    ./attnstep --check --precision 2 "$lesson"
# The options each mode does use are accepted.
exits 0 "" ./attnstep --explain 'weights[0,1]' --head 1 --precision 2 "$lesson"
exits 0 "" ./attnstep --csv weights --head 1 --precision 2 "$lesson"
exits 0 "" ./attnstep --plain --precision 2 "$lesson"
exits 0 "" ./attnstep --cost --d-model 8 --heads 2
# Without a mode and without a terminal, the plain trace stands in for the UI: its options
# are not mistakes there.
exits 0 "" ./attnstep --at 'weights[0,1]' --color never "$lesson"
# --head past the lesson's heads says how many there are, in every mode that takes it.
exits 64 "attnstep: head 2 does not exist: this lesson has 1 head"$'\n'"$try" \
    ./attnstep --csv weights --head 2 "$lesson"
exits 64 "attnstep: head 5 does not exist: this lesson has 4 heads"$'\n'"$try" \
    ./attnstep --csv weights --head 5 lessons/four_heads.yaml
exits 64 "attnstep: head 3 does not exist: this lesson has 1 head"$'\n'"$try" \
    ./attnstep --explain 'weights[0,0]' --head 3 "$lesson"

# On a terminal that curses does not know, or with stdin not a terminal, the plain trace with
# a note that says which (as TERM=dumb does).
on_tty() {  # on_tty TERM COMMAND: runs COMMAND in a pseudo-terminal, stdout and stderr merged
    TERM=$1 script -qec "$2" /dev/null </dev/null | tr -d '\r'
}
note() {
    echo "attnstep: this terminal cannot run the interactive UI ($1); printing the plain trace"
}
check_fallback() {
    local what=$1 term=$2 command=$3 want; want=$(note "$4")
    local out; out=$(on_tty "$term" "$command; echo status=\$?")
    if [ "$(head -1 <<<"$out")" = "$want" ] && grep -q '^cat  0.6296  0.3704$' <<<"$out" &&
        [ "$(tail -1 <<<"$out")" = "status=0" ]; then
        echo "ok   $what"
    else
        printf 'FAIL %s\n%s\n' "$what" "$(head -3 <<<"$out")"; failures=$((failures + 1))
    fi
}
check_fallback "an unknown TERM falls back to the plain trace" nonexistent \
    "./attnstep $lesson" "TERM=nonexistent is a terminal type curses does not know"
check_fallback "stdin not a terminal is said as that" xterm \
    "./attnstep $lesson </dev/null" "standard input is not a terminal"
check_fallback "TERM=dumb is said as before" dumb "./attnstep $lesson" "TERM is unset or dumb"
# A terminal type curses knows but that cannot address the cursor (no cup) gets the plain
# trace too (issue 26: it got an unreadable UI, scrolled line after line).
terminfo=$(mktemp -d)
printf 'nocup|a terminal without cursor addressing,\n\tam, cols#80, lines#24, bel=^G, cr=\\r, cud1=\\n,\n' \
    >"$terminfo/nocup.src"
if tic -o "$terminfo" "$terminfo/nocup.src" 2>/dev/null; then
    export TERMINFO=$terminfo
    check_fallback "a TERM without cursor addressing falls back to the plain trace" nocup \
        "./attnstep $lesson" "TERM=nocup is a terminal type curses does not know"
    unset TERMINFO
fi
rm -rf "$terminfo"

echo "exit codes: $failures failed"
[ "$failures" -eq 0 ]
