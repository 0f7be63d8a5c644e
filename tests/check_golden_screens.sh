#!/usr/bin/env bash
# Headless screen tests: runs the UI on every tests/screens/*.keys script with an in-memory
# screen and compares the dumped screens with the golden tests/screens/*.screen files.
# UPDATE_GOLDEN=1 rewrites the golden files instead (read `git diff` before committing).
# A script's first line says how to run it: "# attnstep [VAR=value]... ARGS..." (see README).
set -u
cd "$(dirname "$0")/.."
binary=./attnstep
[ -x "$binary" ] || { echo "check_golden_screens: $binary is not built"; exit 1; }

# Reads a script's first line into env_words and args (and screen: --screen 80x24 unless the
# line gives one); returns 1 when the line is not "# attnstep [VAR=value]... ARGS...".
read_header() {
    local hash program rest word words
    read -r hash program rest < "$1"
    [ "$hash" = "#" ] && [ "$program" = attnstep ] || return 1
    read -ra words <<< "$rest"
    env_words=() args=()
    for word in "${words[@]}"; do
        if [ ${#args[@]} -eq 0 ] && [[ "$word" =~ ^[A-Z_]+= ]]; then env_words+=("$word")
        else args+=("$word"); fi
    done
    screen=(--screen 80x24)
    [[ " ${args[*]} " == *" --screen "* ]] && screen=()
    return 0
}

# Runs the headless UI on a script as its first line says; extra words go before attnstep.
# Each run keeps its progress in a state folder of its own, empty at the start, so no screen
# depends on the scripts before it or on the real home.
run_script() {
    local keys=$1 state status; shift
    state=$(mktemp -d)
    env -u NO_COLOR -u ATTNSTEP_LESSONS LANG=C.UTF-8 LC_ALL= XDG_STATE_HOME="$state" \
        "${env_words[@]}" "$@" "$binary" --keys "$keys" "${screen[@]}" "${args[@]}"
    status=$?
    rm -rf "$state"
    return $status
}

failed=0 count=0
for keys in tests/screens/*.keys; do
    [ -e "$keys" ] || continue
    name=${keys%.keys}
    golden=$name.screen
    if ! read_header "$keys"; then
        echo "FAIL $keys: the first line must be '# attnstep [VAR=value]... ARGS...'"
        failed=$((failed + 1)); continue
    fi
    count=$((count + 1))
    actual=$(run_script "$keys" 2>&1; echo "exit status $?")
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        printf '%s\n' "$actual" > "$golden"
        echo "updated $golden"
    elif ! diff -u "$golden" <(printf '%s\n' "$actual") > /tmp/attnstep-screen-diff.$$ 2>&1; then
        echo "FAIL $keys (expected $golden, got +):"
        cat /tmp/attnstep-screen-diff.$$
        failed=$((failed + 1))
    else
        echo "ok   $keys"
    fi
done
rm -f /tmp/attnstep-screen-diff.$$
echo "golden screens: $((count - failed)) of $count match"
# The leader's boxes (tests/screens/class/) are drawn by a cmocka test, which compares them
# itself in `make test`; here only rewritten, so that `make update-golden` rewrites them too.
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    state=$(mktemp -d)
    if make --no-print-directory -s build/tests/test_class_boxes \
            && XDG_STATE_HOME="$state" build/tests/test_class_boxes >/dev/null 2>&1; then
        echo "updated tests/screens/class/*.screen"
    else
        echo "FAIL test_class_boxes could not rewrite tests/screens/class/"; failed=$((failed + 1))
    fi
    rm -rf "$state"
fi

# The headless UI under valgrind memcheck: memory errors and definite or indirect leaks fail
# (ncurses keeps some memory on purpose, still reachable at exit). These scripts cover the
# questions, reloading (good, broken and vanished saves), stepping in and the picker. Left out
# without valgrind, and where it cannot run the binary: `make test-asan` names check_valgrind in
# SKIP_SUITES, as valgrind does not run sanitized binaries.
# A skip is said, and is a failure in CI (CI=true) when valgrind is missing.
valgrind_skip=""
if [[ " ${SKIP_SUITES:-} " == *" check_valgrind "* ]]; then
    valgrind_skip="check_valgrind is in SKIP_SUITES"
elif ! command -v valgrind > /dev/null; then
    valgrind_skip="valgrind is missing (.ci/install-deps installs it)"
    [ "${CI:-}" = true ] && failed=$((failed + 1))
fi
[ -z "$valgrind_skip" ] || [ "${UPDATE_GOLDEN:-0}" = 1 ] || echo "SKIP valgrind of the headless UI: $valgrind_skip"
if [ "${UPDATE_GOLDEN:-0}" != 1 ] && [ -z "$valgrind_skip" ]; then
    log=$(mktemp)
    for keys in tests/screens/{question_choice,question_right,reload,step_into,picker,compare_picker}.keys; do
        read_header "$keys" || continue
        if run_script "$keys" valgrind -q --leak-check=full --error-exitcode=99 \
                --errors-for-leak-kinds=definite,indirect > /dev/null 2> "$log"; then
            echo "ok   valgrind $keys"
        else
            echo "FAIL valgrind $keys:"; cat "$log"; failed=$((failed + 1))
        fi
    done
    rm -f "$log"
fi
[ "$failed" -eq 0 ] && [ "$count" -gt 0 ]
