#!/usr/bin/env bash
# The test runner behind `make test` and `make check`, in three forms:
#   run.sh --suite NAME COMMAND...   runs one suite (a cmocka binary or a check script), its
#                                    output kept in $SUITE_DIR/NAME.log and printed only if it
#                                    fails; its result in $SUITE_DIR/NAME.result. The Makefile
#                                    runs one of these per suite, side by side (make -j).
#   run.sh --summary NAME...         prints the failed suites' output, their names and the one
#                                    closing line "tests: N passed, N failed"; fails if any did.
#   run.sh [--golden-only] BINARY... everything in turn, as --suite and --summary would: every
#                                    binary given and every tests/check_*.sh script.
# Scripts that compare against golden files rewrite them instead when UPDATE_GOLDEN=1
# (`make update-golden` runs only those: scripts whose name contains "golden").
# SKIP_SUITES names suites left out of this run, said in the output (`make test-asan` leaves
# out valgrind, which cannot run sanitized binaries; the plain `make test` runs it).
# ATTNSTEP_TIMING_MS is 0 unless set: --stats and --cost then time each part for a few
# milliseconds instead of 50, since the suites check their text and statuses, not this machine.
set -u
cd "$(dirname "$0")/.."
SUITE_DIR=${SUITE_DIR:-${BUILD:-build}/suites}
export ATTNSTEP_TIMING_MS=${ATTNSTEP_TIMING_MS:-0}

# run_suite NAME COMMAND...: one suite, with a folder of its own for the progress the UI keeps
# (no suite writes the real home; suites that open a lesson more than once give each run a
# folder of its own besides). Prints one line as it ends; always succeeds (the result says).
run_suite() {
    local name=$1; shift
    local log=$SUITE_DIR/$name.log result=$SUITE_DIR/$name.result
    mkdir -p "$SUITE_DIR"
    rm -f "$log" "$result"
    case " ${SKIP_SUITES:-} " in
        *" $name "*) echo skipped >"$result"; echo "=== $name: left out of this run (SKIP_SUITES)"
                     return 0 ;;
    esac
    local state; state=$(mktemp -d)
    local start=$SECONDS cpu
    # in a subshell of its own, whose `times` then says the suite's processor time (its
    # children's user and system time, the second line)
    local verdict=passed mark="==="
    (ATTNSTEP_SUITE=$name XDG_STATE_HOME=$state "$@" >"$log" 2>&1 </dev/null; status=$?; times >"$log.cpu"
     exit $status) || { verdict=failed; mark="***"; }
    echo $verdict >"$result"
    cpu=$(tail -n 1 "$log.cpu"); rm -f "$log.cpu"
    echo "$mark $name: $verdict ($((SECONDS - start)) s; processor ${cpu/ / + })"
    rm -rf "$state"
}

# left_running: the processes of this tree's programs (./attnstep, the test binaries) that a
# suite started (ATTNSTEP_SUITE in their environment, which run_suite sets; a tmux server passes
# it on to its panes) still running once every suite has ended: each is named with its suite and
# killed. A suite that leaves one behind has a bug (check_redraw once left a picker spinning under
# ASan), and it would load the machine for everything after. A program the user runs by hand
# from the same tree has no ATTNSTEP_SUITE and is left alone. Read from /proc (procps may be
# missing).
left_running() {
    local here=$PWD status exe pid suite count=0
    for status in /proc/[0-9]*; do
        pid=${status#/proc/}
        exe=$(readlink "$status/exe" 2>/dev/null) || continue
        case $exe in "$here/attnstep"|"$here/${BUILD:-build}/tests/"*) ;; *) continue ;; esac
        suite=$(tr '\0' '\n' <"$status/environ" 2>/dev/null | sed -n 's/^ATTNSTEP_SUITE=//p')
        [ -n "$suite" ] || continue
        echo "left running by $suite: $pid $(tr '\0' ' ' <"$status/cmdline")"
        kill -9 "$pid" 2>/dev/null; count=$((count + 1))
    done
    [ $count -eq 0 ]
}

# summary NAME...: a suite without a result (it never ran to its end) counts as failed, and so
# does a process a suite left running.
summary() {
    local passed=0 failed=0 failures="" name result
    for name in "$@"; do
        result=$(cat "$SUITE_DIR/$name.result" 2>/dev/null || echo failed)
        case $result in
            passed) passed=$((passed + 1)) ;;
            skipped) ;;
            *) failed=$((failed + 1)); failures="$failures $name"
               echo; echo "=== $name (failed), its output ($SUITE_DIR/$name.log):"
               cat "$SUITE_DIR/$name.log" 2>/dev/null ;;
        esac
    done
    echo
    left_running || { failed=$((failed + 1)); failures="$failures (processes left running)"; }
    [ -n "$failures" ] && echo "failed suites:$failures"
    echo "tests: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

case "${1:-}" in
    --suite) shift; run_suite "$@"; exit 0 ;;
    --summary) shift; summary "$@"; exit ;;
esac
golden_only=0
if [ "${1:-}" = "--golden-only" ]; then golden_only=1; shift; fi
names=()
if [ $golden_only -eq 0 ]; then
    for binary in "$@"; do
        names+=("$(basename "$binary")"); run_suite "${names[-1]}" "$binary"
    done
fi
for script in tests/check_*.sh; do
    [ -e "$script" ] || continue
    if [ $golden_only -eq 1 ] && [[ "$script" != *golden* ]]; then continue; fi
    names+=("$(basename "$script" .sh)"); run_suite "${names[-1]}" bash "$script"
done
summary "${names[@]}"
