#!/usr/bin/env bash
# valgrind memcheck over every output path of every lesson: zero errors, zero leaks.
set -u
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "check_valgrind: valgrind is missing (.ci/install-deps installs it)"; exit 1; }
failed=0 count=0
memcheck() {
    count=$((count + 1))
    if ! valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
            --error-exitcode=99 "$@" >/dev/null 2>"$log"; then
        echo "FAIL valgrind: $*"; cat "$log"; failed=1
    fi
}
log=$(mktemp); trap 'rm -f "$log"' EXIT
for lesson in lessons/*.yaml tests/reference/*.yaml; do
    memcheck ./attnstep --json "$lesson"
done
for lesson in lessons/cat_sat.yaml tests/reference/cross_two_heads.yaml; do
    memcheck ./attnstep --plain "$lesson"
    memcheck ./attnstep --markdown "$lesson"
    memcheck ./attnstep --csv weights --head 1 "$lesson"
    memcheck ./attnstep --explain 'weights[1,0]' "$lesson"
done
for bad in tests/bad/*.yaml; do
    [ -e "$bad" ] || continue
    count=$((count + 1))
    valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
        --error-exitcode=99 ./attnstep --check "$bad" >/dev/null 2>"$log"
    [ $? -ne 99 ] || { echo "FAIL valgrind: --check $bad"; cat "$log"; failed=1; }
done
echo "valgrind: $count runs"
exit $failed
