#!/usr/bin/env bash
# Ctrl-L redraws the whole screen: text written straight to the terminal behind curses' back
# (as another program writing to the tty would) stays until Ctrl-L, then is gone. The headless
# screen cannot show this: it dumps what curses means to draw, which a scribble never touches
# (see the report of issue #17), so this runs the real binary in tmux.
set -u
unset TMUX
cd "$(dirname "$0")/.."
[ -x ./attnstep ] || { echo "check_redraw: ./attnstep is not built"; exit 1; }
command -v tmux >/dev/null || { echo "check_redraw: tmux is missing (.ci/install-deps installs it)"; exit 1; }
. tests/lib.sh
socket=attnstep-redraw-$$
tmux=(tmux -L "$socket" -f /dev/null)
opened=0
state_root=$(mktemp -d)   # each opening keeps its progress in a folder of its own
trap 'end_run; "${tmux[@]}" kill-server 2>/dev/null; rm -rf "$state_root"' EXIT
"${tmux[@]}" new-session -d -s keep "sleep 600"   # keeps the server up between the cases
failures=0
screen() { "${tmux[@]}" capture-pane -p -t redraw; }
# waits (up to 10 s) until the screen has (or, with !, lacks) the fixed text
wait_screen() {
    local want=1; [ "$1" = ! ] && { want=0; shift; }
    local deadline=$((SECONDS + 10)) has
    while :; do
        screen | grep -qF -- "$1" && has=1 || has=0
        [ $has -eq $want ] && return 0
        [ $SECONDS -ge $deadline ] && { echo "  the screen was:"; screen | sed 's/^/  | /'; return 1; }
        sleep 0.05
    done
}
# The UI's wake-ups so far: every idle read times out after 250 ms and wakes its main thread, a
# voluntary context switch of the process in the pane (the shell's one child).
wakeups() {
    local pane pid
    pane=$("${tmux[@]}" display -p -t redraw '#{pane_pid}')
    pid=$(cat "/proc/$pane/task/$pane/children" 2>/dev/null)
    awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/${pid%% *}/status" 2>/dev/null
}
# idle_ticks N: waits (up to 10 s) until the UI has woken N more times: a wait on the program,
# not on the clock, so that a loaded machine cannot shorten the quiet moment it checks.
idle_ticks() {
    local from; from=$(wakeups)
    [ -n "$from" ] || { echo "  cannot read the UI's wake-ups"; return 1; }
    local deadline=$((SECONDS + 10)) now
    while now=$(wakeups); [ -n "$now" ] && [ "$now" -lt $((from + $1)) ]; do
        [ $SECONDS -ge $deadline ] && { echo "  the UI woke $((now - from)) times in 10 s"; return 1; }
        sleep 0.05
    done
}

# end_run: quits the attnstep of the pane with q (as often as its open panes need, for up to
# 10 s) and waits until the pane says it ended, before anything kills the session. Killing it
# with attnstep still running hangs the tty up while the program exits; under ASan that exit
# runs LeakSanitizer's stop-the-world, and the hang-up's SIGCONT to the orphaned process group
# cancels the stop it waits for: the process then spun on a processor for good (make test-asan).
end_run() {
    "${tmux[@]}" has-session -t redraw 2>/dev/null || return 0
    local deadline=$((SECONDS + 10))
    until screen | grep -qF "ATTNSTEP-ENDED"; do
        [ $SECONDS -ge $deadline ] && { echo "  q did not end attnstep in 10 s"; return 1; }
        "${tmux[@]}" send-keys -t redraw q
        sleep 0.2
    done
}

# scribble TEXT: writes TEXT at the top left of the terminal, unknown to curses
scribble() { printf '\033[1;1H%s' "$1" >"$("${tmux[@]}" display -p -t redraw '#{pane_tty}')"; }

# redraw_clears READY KEYS ARGS...: opens attnstep ARGS, presses KEYS (tmux key names, blank
# for none), waits for READY, scribbles, checks the scribble stays over a quiet moment, then
# that Ctrl-L removes it and READY is back
redraw_clears() {
    local ready=$1 keys=$2; shift 2
    end_run
    "${tmux[@]}" kill-session -t redraw 2>/dev/null
    opened=$((opened + 1))
    "${tmux[@]}" new-session -d -s redraw -x 80 -y 24 \
        "env -u NO_COLOR ATTNSTEP_LESSONS=tests/screens LANG=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME=$state_root/$opened ./attnstep $*; echo ATTNSTEP-ENDED; sleep 30"
    [ -z "$keys" ] || "${tmux[@]}" send-keys -t redraw $keys
    wait_screen "$ready" || return 1
    scribble SCRIBBLED-OVER-THE-SCREEN
    wait_screen SCRIBBLED-OVER-THE-SCREEN || return 1
    idle_ticks 3 || return 1   # so two whole idle ticks at least: nothing repaints by itself
    screen | grep -qF SCRIBBLED-OVER-THE-SCREEN || { echo "  the scribble went without Ctrl-L"; return 1; }
    "${tmux[@]}" send-keys -t redraw C-l
    wait_screen ! SCRIBBLED-OVER-THE-SCREEN || { echo "  Ctrl-L left the scribble"; return 1; }
    wait_screen "$ready"
    local status=$?
    end_run || status=1
    "${tmux[@]}" kill-session -t redraw
    return $status
}
check "Ctrl-L redraws a lesson" redraw_clears "step 1 of" "" tests/screens/cat_sat.yaml
check "Ctrl-L redraws a lesson while a question waits" redraw_clears "What will the score" "n n n n" tests/screens/extra/questions.yaml
check "Ctrl-L redraws the score" redraw_clears "score" "G" tests/screens/cat_sat.yaml
check "Ctrl-L redraws the lesson picker" redraw_clears "two heads over a river bank" ""
check "Ctrl-L redraws the help and keeps it open" redraw_clears "other key closes" "?" tests/screens/cat_sat.yaml
check "Ctrl-L redraws the sum pane and keeps it open" redraw_clears "every term" "e" tests/screens/cat_sat.yaml
echo "redraw: $failures failed"
[ "$failures" -eq 0 ]
