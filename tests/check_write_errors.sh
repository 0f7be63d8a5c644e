#!/usr/bin/env bash
# No failed write passes unseen: every mode that writes to stdout, run into /dev/full and with
# stdout closed, exits 74 with one line naming what it could not write; --check, which writes
# nothing to stdout, still succeeds with stdout closed.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=tests/reference/cat_sat.yaml
failures=0
printf 'n\ndump\nq\n' >"$tmp/keys"

# fails_to_write WHAT REASON COMMAND...: COMMAND (its stdout already redirected by the caller's
# wrapper) exits 74 and says exactly "attnstep: cannot write WHAT to standard output: REASON".
fails_to_write() {
    local what=$1 reason=$2 target=$3; shift 3
    local message status
    if [ "$target" = closed ]; then
        message=$("$@" 2>&1 >&-); status=$?
    else
        message=$("$@" 2>&1 >/dev/full); status=$?
    fi
    local want="attnstep: cannot write $what to standard output${reason:+: $reason}"
    if [ "$status" -eq 74 ] && [ "$message" = "$want" ]; then
        echo "ok   $* ($target)"
    else
        printf 'FAIL %s (%s)\n     status %s, expected 74\n     said: %s\n     want: %s\n' \
            "$*" "$target" "$status" "$message" "$want"
        failures=$((failures + 1))
    fi
}

each_target() {  # each_target WHAT COMMAND...: into /dev/full and into a closed stdout
    local what=$1; shift
    fails_to_write "$what" "No space left on device" full "$@"
    fails_to_write "$what" "Bad file descriptor" closed "$@"
}

each_target "the output of --plain" ./attnstep --plain "$lesson"
each_target "the output of --json" ./attnstep --json "$lesson"
each_target "the output of --markdown" ./attnstep --markdown "$lesson"
each_target "the output of --csv" ./attnstep --csv weights "$lesson"
each_target "the output of --explain" ./attnstep --explain 'weights[0,1]' "$lesson"
each_target "the output of --stats" ./attnstep --stats "$lesson"
each_target "the output of --cost" ./attnstep --cost --d-model 8 --heads 2
each_target "the output of --template" ./attnstep --template
each_target "the output of --help" ./attnstep --help
each_target "the output of --help-keys" ./attnstep --help-keys
each_target "the output of --help-keys" ./attnstep --help-keys=man
each_target "the output of --version" ./attnstep --version
each_target "the plain trace" ./attnstep "$lesson"
# The headless UI's dumps: the failure is seen, the reason is not kept through curses.
fails_to_write "the UI's screens" "" full ./attnstep --keys "$tmp/keys" "$lesson"
fails_to_write "the UI's screens" "" closed ./attnstep --keys "$tmp/keys" "$lesson"

if ./attnstep --check "$lesson" >&- 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
    echo "ok   --check with stdout closed succeeds (it writes nothing there)"
else
    echo "FAIL --check with stdout closed succeeds"; failures=$((failures + 1))
fi
# A closed stdout is held by /dev/null for reading: the lesson cannot take its number and
# receive the output.
cp "$lesson" "$tmp/lesson.yaml"
./attnstep --plain "$tmp/lesson.yaml" >&- 2>/dev/null
if [ $? -eq 74 ] && cmp -s "$lesson" "$tmp/lesson.yaml"; then
    echo "ok   with stdout closed the lesson file is left as it was"
else
    echo "FAIL with stdout closed the lesson file is left as it was"; failures=$((failures + 1))
fi

echo "write errors: $failures failed"
[ "$failures" -eq 0 ]
