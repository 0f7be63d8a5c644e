# Shell helpers shared by the tests/check_*.sh scripts (sourced, not run).

# golden_compare GOLDEN ACTUAL: passes when the file ACTUAL equals GOLDEN; prints the diff
# otherwise. With UPDATE_GOLDEN=1 it rewrites GOLDEN instead (`make update-golden`).
golden_compare() {
    local golden=$1 actual=$2
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        mkdir -p "$(dirname "$golden")"
        cp "$actual" "$golden"
        return 0
    fi
    if [ ! -f "$golden" ]; then
        echo "missing golden file $golden (run 'make update-golden' and read the diff)"
        return 1
    fi
    if ! diff -u "$golden" "$actual"; then
        echo "differs from $golden (if the change is meant, 'make update-golden' and read the diff)"
        return 1
    fi
}

# check DESCRIPTION COMMAND...: one assertion: prints "ok   DESCRIPTION" when COMMAND succeeds,
# else "FAIL DESCRIPTION" and counts it in $failures (each script starts it at 0 and exits with
# its count).
check() {
    local what=$1; shift
    if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

# expect_status WANT COMMAND...: runs COMMAND, passes when it exits with status WANT.
expect_status() {
    local want=$1; shift
    "$@"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "exit status $got, expected $want: $*"
        return 1
    fi
}

# For the tmux checks, which define screen() to print what the terminal shows:
# Polls the screen until it contains every given text (fixed strings), or fails after
# $wait_limit seconds (10 unless set).
wait_for() {
    local deadline=$((SECONDS + ${wait_limit:-10})) text missing
    while :; do
        missing=""
        local now; now=$(screen)
        for text in "$@"; do
            grep -qF -- "$text" <<< "$now" || { missing=$text; break; }
        done
        [ -z "$missing" ] && return 0
        if [ $SECONDS -ge $deadline ]; then
            echo "  timed out waiting for: $missing"; echo "  the screen was:"; screen | sed 's/^/  | /'
            return 1
        fi
        sleep 0.05
    done
}

# Polls until the screen no longer contains text.
wait_gone() {
    local deadline=$((SECONDS + 10))
    while screen | grep -qF -- "$1"; do
        if [ $SECONDS -ge $deadline ]; then echo "  still on screen: $1"; return 1; fi
        sleep 0.05
    done
}

# stderr_is STATUS MESSAGE COMMAND...: the command exits STATUS, its stderr exactly MESSAGE;
# counts a failure in $failures otherwise.
stderr_is() {
    local want_status=$1 want=$2; shift 2
    local said; said=$(timeout 10 "$@" 2>&1 >/dev/null </dev/null)
    local status=$?
    if [ "$status" -eq "$want_status" ] && [ "$said" = "$want" ]; then
        echo "ok   $want"
    else
        printf 'FAIL status %s (expected %s)\n     said: %s\n     want: %s\n' "$status" \
            "$want_status" "$said" "$want"
        failures=$((failures + 1))
    fi
}
