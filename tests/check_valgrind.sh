#!/usr/bin/env bash
# valgrind memcheck over every output path of every lesson: zero errors, zero leaks.
# A process under valgrind spends most of a second starting (reading the symbols of two dozen
# shared libraries) before attnstep does anything, so inputs share a process wherever they
# can: one --check of every bad lesson, one of every good one, and test_every_output (every
# lesson in every format, as CSV for every stage and head, explained at cells of every stage)
# over the good lessons in two halves; the program's own command line for each output mode on
# two lessons. The processes run side by side, one per processor. --read-inline-info=no saves
# a fifth of each start-up; a report then names the functions without the frames inlined
# into them (rerun that command under valgrind alone for those).
set -u
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "check_valgrind: valgrind is missing (.ci/install-deps installs it)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
parallel=$(nproc 2>/dev/null || echo 2)
processes=0 inputs=0

# memcheck ANY|OK INPUTS ARGS...: ./attnstep ARGS under memcheck, in the background, counted as
# INPUTS inputs. It fails with any valgrind error or leak (exit status 99); with OK also when
# attnstep fails (the bad lessons are meant to fail: ANY). A failure leaves its report in
# $tmp/N.fail. PROGRAM is ./attnstep unless set for the call.
memcheck() {
    local any=$1 count=$2 program=${PROGRAM:-./attnstep}; shift 2
    processes=$((processes + 1)) inputs=$((inputs + count))
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
    local report=$tmp/$processes
    (
        valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
            --read-inline-info=no --error-exitcode=99 "$program" "$@" >/dev/null 2>"$report.log"
        status=$?
        if [ $status -eq 99 ] || { [ "$any" = OK ] && [ $status -ne 0 ]; }; then
            { echo "FAIL valgrind (exit status $status): $program $*"; cat "$report.log"; } \
                >"$report.fail"
        fi
    ) &
}

bad=(tests/bad/*.yaml)
good=(lessons/*.yaml tests/reference/*.yaml)
# the longest first (too_many_nodes.yaml alone is most of it), so that it ends with the others
[ -e "${bad[0]}" ] && memcheck ANY ${#bad[@]} --check "${bad[@]}"
memcheck OK ${#good[@]} --check "${good[@]}"
every_output=${BUILD:-build}/tests/test_every_output
[ -x "$every_output" ] || { echo "FAIL $every_output is not built (make test builds it)"; exit 1; }
# The two lessons at d_model 512 go through every output here only in their --check above: each
# output of them is the code every other lesson runs, over 16,384-number matrices, and under
# memcheck that took 17 s of processor time (test_every_output runs them unwatched, and
# `make test-asan` under the sanitizers).
outputs=()
for lesson in "${good[@]}"; do
    case $lesson in lessons/real_size.yaml|lessons/attention_cost.yaml) ;; *) outputs+=("$lesson") ;; esac
done
half=$(( (${#outputs[@]} + 1) / 2 ))
PROGRAM=$every_output memcheck OK "$half" "${outputs[@]:0:half}"
PROGRAM=$every_output memcheck OK $(( ${#outputs[@]} - half )) "${outputs[@]:half}"
for lesson in lessons/cat_sat.yaml tests/reference/cross_two_heads.yaml; do
    memcheck OK 1 --json "$lesson"
    memcheck OK 1 --plain "$lesson"
    memcheck OK 1 --markdown "$lesson"
    memcheck OK 1 --csv weights --head 1 "$lesson"
    memcheck OK 1 --explain 'weights[1,0]' "$lesson"
done
wait
failed=0
for report in "$tmp"/*.fail; do
    [ -e "$report" ] || continue
    cat "$report"; failed=$((failed + 1))
done
echo "valgrind: $inputs inputs in $processes processes, $failed failed"
[ $failed -eq 0 ]
