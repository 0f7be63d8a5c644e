#!/usr/bin/env bash
# Headless screen tests: runs the UI on every tests/screens/*.keys script with an in-memory
# screen and compares the dumped screens with the golden tests/screens/*.screen files.
# UPDATE_GOLDEN=1 rewrites the golden files instead (read `git diff` before committing).
# A script's first line says how to run it: "# attnstep [VAR=value]... ARGS..." (see README).
set -u
cd "$(dirname "$0")/.."
binary=./attnstep
[ -x "$binary" ] || { echo "check_golden_screens: $binary is not built"; exit 1; }

failed=0 count=0
for keys in tests/screens/*.keys; do
    [ -e "$keys" ] || continue
    name=${keys%.keys}
    golden=$name.screen
    read -r hash program rest < "$keys"
    if [ "$hash" != "#" ] || [ "$program" != attnstep ]; then
        echo "FAIL $keys: the first line must be '# attnstep [VAR=value]... ARGS...'"
        failed=$((failed + 1)); continue
    fi
    read -ra words <<< "$rest"
    env_words=() args=()
    for word in "${words[@]}"; do
        if [ ${#args[@]} -eq 0 ] && [[ "$word" =~ ^[A-Z_]+= ]]; then env_words+=("$word")
        else args+=("$word"); fi
    done
    screen=(--screen 80x24)
    [[ " ${args[*]} " == *" --screen "* ]] && screen=()
    count=$((count + 1))
    actual=$(env -u NO_COLOR -u ATTNSTEP_LESSONS LANG=C.UTF-8 LC_ALL= "${env_words[@]}" \
             "$binary" --keys "$keys" "${screen[@]}" "${args[@]}" 2>&1; echo "exit status $?")
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
[ "$failed" -eq 0 ] && [ "$count" -gt 0 ]
