#!/usr/bin/env bash
# The test runner behind `make test`: runs every cmocka binary given as an argument and every
# tests/check_*.sh script, then prints one closing line "N passed, N failed".
# Scripts that compare against golden files rewrite them instead when UPDATE_GOLDEN=1
# (`make update-golden` runs only those: scripts whose name contains "golden").
# SKIP_SUITES names suites left out of this run, said in the output (`make test-asan` leaves
# out valgrind, which cannot run sanitized binaries; the plain `make test` runs it).
set -u
cd "$(dirname "$0")/.."
golden_only=0
if [ "${1:-}" = "--golden-only" ]; then golden_only=1; shift; fi

# No suite writes the real home: progress the UI keeps goes to a folder of this run (suites
# that open a lesson more than once give each run a folder of its own besides).
XDG_STATE_HOME=$(mktemp -d); export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME"' EXIT

passed=0 failed=0 failures=""
run_suite() {
    local name=$1; shift
    case " ${SKIP_SUITES:-} " in
        *" $name "*) echo "=== $name: left out of this run (SKIP_SUITES)"; return ;;
    esac
    echo "=== $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failures="$failures $name"
        echo "*** FAILED: $name"
    fi
}

if [ $golden_only -eq 0 ]; then
    for binary in "$@"; do run_suite "$(basename "$binary")" "$binary"; done
fi
for script in tests/check_*.sh; do
    [ -e "$script" ] || continue
    if [ $golden_only -eq 1 ] && [[ "$script" != *golden* ]]; then continue; fi
    run_suite "$(basename "$script" .sh)" bash "$script"
done

echo
[ -n "$failures" ] && echo "failed suites:$failures"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
