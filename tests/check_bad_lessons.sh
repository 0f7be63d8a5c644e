#!/usr/bin/env bash
# The bad-lesson corpus: every tests/bad/NAME.yaml must be refused by `attnstep --check` with
# exactly the lines of NAME.expected on stderr, nothing on stdout, and exit status 65 (or the
# status written in NAME.status); `attnstep --plain` must refuse it with the same status and
# print nothing on stdout (no partial output). UPDATE_EXPECTED=1 rewrites the .expected files
# from the program instead; read `git diff tests/bad` before committing them.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0 count=0

# run_case MODE LESSON WANT: runs attnstep MODE LESSON; prints what is wrong, returns 1 if any.
run_case() {
    local mode=$1 lesson=$2 want=$3 status ok=0
    timeout 60 ./attnstep "$mode" "$lesson" >"$tmp/out" 2>"$tmp/err"
    status=$?
    if [ "$status" -ne "$want" ]; then
        echo "FAIL $lesson: attnstep $mode exited $status, expected $want"; ok=1
    fi
    if [ -s "$tmp/out" ]; then
        echo "FAIL $lesson: attnstep $mode wrote to stdout:"; head -c 600 "$tmp/out"; echo; ok=1
    fi
    return $ok
}

for lesson in tests/bad/*.yaml; do
    [ -e "$lesson" ] || continue
    name=${lesson%.yaml}
    count=$((count + 1))
    want=65
    [ -f "$name.status" ] && want=$(cat "$name.status")
    run_case --check "$lesson" "$want" || failed=1
    if [ "${UPDATE_EXPECTED:-0}" = 1 ]; then
        cp "$tmp/err" "$name.expected"
    elif [ ! -f "$name.expected" ]; then
        echo "FAIL $lesson: $name.expected is missing"; failed=1
    elif ! diff -u "$name.expected" "$tmp/err"; then
        echo "FAIL $lesson: the diagnostics differ from $name.expected"; failed=1
    fi
    run_case --plain "$lesson" "$want" || failed=1
done
if [ "$count" -lt 30 ]; then
    echo "FAIL: only $count bad lessons in tests/bad (expected at least 30)"; failed=1
fi
echo "bad lessons: $count checked"
exit $failed
