#!/usr/bin/env bash
# Drives the real attnstep binary inside tmux and asserts on what the terminal shows: stepping
# to weights, the explanation line, step-into, heads, NO_COLOR, LANG=C, resizing, several TERMs,
# and a clean shell after q, Ctrl-C, SIGTERM and SIGHUP. Waits poll the screen; no fixed sleeps.
set -u
unset TMUX   # our own server even when the tests run inside tmux
cd "$(dirname "$0")/.."
. tests/lib.sh
binary=./attnstep
[ -x "$binary" ] || { echo "check_tmux: $binary is not built"; exit 1; }
command -v tmux > /dev/null || { echo "check_tmux: tmux is missing (.ci/install-deps installs it)"; exit 1; }

socket=attnstep-test-$$   # our own server, so other tmux sessions are never touched
tmux=(tmux -L "$socket" -f /dev/null)
state_root=$(mktemp -d)   # each run keeps its progress in a folder of its own (start)
trap '"${tmux[@]}" kill-server 2> /dev/null; rm -rf "$state_root"' EXIT   # and the reload test's folder, below
pane=ui
failures=0 run=0

screen() { "${tmux[@]}" capture-pane -p -t "$pane" "$@"; }

# The step counter "step K of N" on screen, or nothing.
step_shown() { screen | grep -o 'step [0-9]* of [0-9]*' | head -1; }

# A question waiting for its answer (the narration rule says " question "): Esc skips it.
question_shown() { screen | grep -qE -- '(─|-) question (─|-)'; }
skip_question() {
    question_shown || return 0
    send Escape
    local deadline=$((SECONDS + 10))
    while question_shown; do
        [ $SECONDS -ge $deadline ] && { echo "  Esc does not skip the question"; return 1; }
        sleep 0.05
    done
}

# Presses KEY (n or p) until the title names the stage TEXT (e.g. "weights ·"): the shipped
# lesson may gain or lose narration steps, so the tests do not count them. Questions on the way
# are skipped; one at TEXT is left waiting (skip_question shows the stage).
step_to() {
    local key=$1 text=$2 i before deadline
    for ((i = 0; i < 30; i++)); do
        screen | head -1 | grep -qF -- "$text" && return 0
        skip_question || return 1
        before=$(step_shown)
        send "$key"
        deadline=$((SECONDS + 10))
        while [ "$(step_shown)" = "$before" ]; do
            [ $SECONDS -ge $deadline ] && { echo "  $key does not move from $before"; return 1; }
            sleep 0.05
        done
    done
    echo "  never reached: $text"; return 1
}

# Starts attnstep in the pane with the given environment and arguments; the shell prints
# EXITED-N=status when it ends, N counting the runs so an old marker is never mistaken. Each
# run starts with no progress kept (a state folder of its own), whatever the runs before did.
start() {
    run=$((run + 1))
    "${tmux[@]}" send-keys -t "$pane" "clear; env XDG_STATE_HOME=$state_root/$run $* ; echo EXITED-$run=\$?" Enter
}

send() { "${tmux[@]}" send-keys -t "$pane" "$@"; }

# The program has ended with status $1 and the terminal is back to normal: main screen, cursor
# shown, mouse reporting off.
ended_cleanly() {
    wait_for "EXITED-$run=$1" || return 1
    local state
    state=$("${tmux[@]}" display-message -p -t "$pane" '#{alternate_on} #{cursor_flag} #{mouse_any_flag}')
    [ "$state" = "0 1 0" ] || { echo "  terminal state (alternate cursor mouse): $state"; return 1; }
}

"${tmux[@]}" new-session -d -s "$pane" -x 100 -y 30 \
    "env PS1='ready\$ ' LANG=C.UTF-8 bash --norc --noprofile" || exit 1
wait_for 'ready$' || exit 1

cat_sat() {   # every step from the first to weights, with the hand-worked numbers
    start TERM=xterm-256color "$binary" lessons/cat_sat.yaml
    wait_for "step 1 of" || return 1
    step_to n "weights ·" || return 1
    skip_question || return 1
    wait_for "0.6296" "0.3704"
}
check "cat_sat reaches weights and shows 0.6296 and 0.3704" cat_sat

explain() {   # back to scores, up and left to cat,cat whatever was selected, then right
    step_to p "scores ·" || return 1
    send k k h h
    wait_for "scores[cat,cat] =" || return 1
    send l
    wait_for "scores[cat,sat] = q_cat · k_sat = (1.0 × 0.0) + (0.5 × 1.0) = 0.5"
}
check "the explanation of scores[cat,sat] shows its arithmetic" explain

step_into() {   # s fills the cells one by one in reading order
    send s
    wait_for "cell 1 of 4" "scores[cat,cat] = q_cat · k_cat" || return 1
    send s
    wait_for "cell 2 of 4" "scores[cat,sat] = q_cat · k_sat" || return 1
    send s
    wait_for "cell 3 of 4" "scores[sat,cat] = q_sat · k_cat" || return 1
    send s
    wait_for "cell 4 of 4" "scores[sat,sat] = q_sat · k_sat" || return 1
    send o
    wait_gone "cell 4 of 4"
}
check "step-into walks the cells in order" step_into

resize() {   # 40x12, then too small, then back to full size with a correct redraw
    send G
    wait_for "output ·" || return 1
    send g
    wait_for "input ·" || return 1
    step_to n "weights ·" || return 1
    send k h
    local step; step=$(step_shown)
    "${tmux[@]}" resize-window -t "$pane" -x 40 -y 12
    wait_for "$step" "0.6296" "0.3704" || return 1
    screen | grep -qE '^  scores +│' && { echo "  the stage list is still drawn at 40x12"; return 1; }
    "${tmux[@]}" resize-window -t "$pane" -x 20 -y 6
    wait_for "terminal too small" || return 1
    "${tmux[@]}" resize-window -t "$pane" -x 100 -y 30
    wait_for "▸ weights" "0.6296" "0.3704" "q quit" "$step" || return 1
    wait_gone "terminal too small" || return 1
    screen | grep -qE '^  scores +│' || { echo "  the stage list is not back"; return 1; }
}
check "resizing to 40x12 and back redraws correctly" resize

quit() {
    send q
    ended_cleanly 0
}
check "q returns a clean shell" quit

heads() {   # Tab changes the matrix to the other head's
    start TERM=xterm-256color "$binary" --at "'weights[bank,river]'" --head 2 tests/screens/two_heads.yaml
    wait_for "head 2 of 2" "[0.3132]" || return 1
    send Tab
    wait_for "head 1 of 2" "[0.3199]" || return 1
    screen | grep -qF "0.3132" && { echo "  head 2's weights still shown"; return 1; }
    send 2
    wait_for "head 2 of 2" "[0.3132]" || return 1
    send q
    ended_cleanly 0
}
check "switching heads changes the matrix" heads

questions() {   # predict, then reveal: numbers hidden until answered, a verdict, the score
    start TERM=xterm-256color "$binary" tests/screens/extra/questions.yaml
    wait_for "step 1 of" || return 1
    step_to n "scores ·" || return 1
    wait_for "What will the score of it against street be?" "within ± 0.01 counts): _" || return 1
    screen | grep -qF "4.0" && { echo "  scores shown before the answer"; return 1; }
    send 0 Enter
    wait_for "Right: scores[it,street] = 0.0; 0.0 is within ± 0.01" "score 1/1" "[0.0000]" || return 1
    step_to n "weights ·" || return 1
    wait_for "1  animal" "2  street" || return 1
    send 2
    wait_for "Not quite: the answer is animal (0.576); street gets 0.14" \
        "score 1/2" "[0.5760]" || return 1
    send p   # the script's step 1
    wait_for "scores ·" "step 1 of" || return 1
    send n   # answered already: shown answered, not asked again
    wait_for "weights ·" "Not quite" "score 1/2" || return 1
    send q
    wait_for "You answered 1 of 2 questions right" || return 1
    send x
    ended_cleanly 0
}
check "a question hides the stage, judges the answer and keeps the score" questions

reload_dir=$(mktemp -d)
trap '"${tmux[@]}" kill-server 2> /dev/null; rm -rf "$reload_dir" "$state_root"' EXIT

live_reload() {   # edits of the open lesson show within a second or two; broken ones do not
    local lesson=$reload_dir/lesson.yaml
    cp tests/screens/reload/lesson.yaml "$lesson"
    start TERM=xterm-256color "$binary" --at "'weights[cat,sat]'" "$lesson"
    wait_for "[0.3704]" || return 1
    local wait_limit=2
    sed -i 's/cat: \[1.0, 0.5\]/cat: [3.0, 0.5]/' "$lesson"
    wait_for "[0.0021]" "weights · step 8 of 11" || return 1
    sed -i 's/cat: \[3.0, 0.5\]/cat: [3.0, 0.5/' "$lesson"   # half-way through an edit
    wait_for "lesson.yaml:6:8: error: this '[' is never closed" "[0.0021]" || return 1
    sed -i 's/cat: \[3.0, 0.5$/cat: [1.0, 0.5]/' "$lesson"
    wait_for "[0.3704]" "about this stage" || return 1
    wait_gone "error:" || return 1
    mv "$lesson" "$lesson.moved"
    wait_for "lesson.yaml: error: the file is gone" "[0.3704]" || return 1
    mv "$lesson.moved" "$lesson"
    wait_gone "error:" || return 1
    send q
    ended_cleanly 0
}
check "editing the open lesson reloads it; a broken edit keeps the last good view" live_reload

# Colour escape sequences: SGR parameters 30-38, 40-48, 90-97, 100-107 (39 and 49 are resets).
has_colour() { grep -qP '\e\[(\d+;)*(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;\d+)*m'; }

colour_control() {   # the check below means something only if colour shows by default
    start TERM=xterm-256color "$binary" --at "'weights[cat,sat]'" lessons/cat_sat.yaml
    wait_for "[0.3704]" || return 1
    screen -e | has_colour || { echo "  no colour even without NO_COLOR"; return 1; }
    send q
    ended_cleanly 0
}
check "colour is used when allowed" colour_control

no_color() {
    start NO_COLOR=1 TERM=xterm-256color "$binary" --at "'weights[cat,sat]'" lessons/cat_sat.yaml
    wait_for "[0.3704]" "░" || return 1
    screen -e | has_colour && { echo "  colour escape codes with NO_COLOR=1"; return 1; }
    send q
    ended_cleanly 0
}
check "NO_COLOR draws without colour, with shade glyphs" no_color

lang_c() {
    start LANG=C LC_ALL=C TERM=xterm-256color "$binary" --color=never --at "'weights[cat,sat]'" lessons/cat_sat.yaml
    wait_for " attnstep * " "exp(0.8839 - 0.8839)" "[0.3704]" || return 1
    screen | grep -qF -e "·" -e "−" -e "▸" -e "░" && { echo "  UTF-8 text with LANG=C"; return 1; }
    screen -e | has_colour && { echo "  colour escape codes with --color=never"; return 1; }
    send q
    ended_cleanly 0
}
check "LANG=C draws ASCII without colour" lang_c

for term in xterm xterm-256color screen linux; do
    each_term() {
        start TERM=$term "$binary" lessons/cat_sat.yaml
        wait_for "step 1 of" || return 1
        step_to n "weights ·" || return 1
        skip_question || return 1
        wait_for "0.6296" "0.3704" || return 1
        send q
        ended_cleanly 0
    }
    check "TERM=$term steps to weights and quits cleanly" each_term
done

# The attnstep process whose parent is $1 (read from /proc: procps may not be installed).
attnstep_child_of() {
    local stat pid comm state ppid rest
    for stat in /proc/[0-9]*/stat; do
        read -r pid comm state ppid rest < "$stat" 2> /dev/null || continue
        [ "$ppid" = "$1" ] && [ "$comm" = "(attnstep)" ] && { echo "$pid"; return; }
    done
}

signals() {   # Ctrl-C, then SIGTERM and SIGHUP from outside: the process dies, the terminal is fine
    start TERM=xterm-256color "$binary" lessons/cat_sat.yaml
    wait_for "step 1 of" || return 1
    send C-c
    ended_cleanly 130 || return 1
    local sig status
    for sig in TERM HUP; do
        [ $sig = TERM ] && status=143 || status=129
        start TERM=xterm-256color "$binary" lessons/cat_sat.yaml
        wait_for "step 1 of" || return 1
        local shell child
        shell=$("${tmux[@]}" display-message -p -t "$pane" '#{pane_pid}')
        child=$(attnstep_child_of "$shell")
        [ -n "$child" ] || { echo "  cannot find the attnstep process"; return 1; }
        kill -$sig "$child"
        ended_cleanly $status || return 1
    done
}
check "Ctrl-C, SIGTERM and SIGHUP restore the terminal" signals

# ---- in front of a class (issue 12) ----

# The selected cell in a real 256-colour terminal: its brackets and number keep a ramp
# background, and nothing between them is in reverse video.
heat_frame() {
    start TERM=xterm-256color "$binary" --at "'weights[cat,sat]'" lessons/cat_sat.yaml
    wait_for "[0.3704]" || return 1
    local cell
    cell=$(screen -e | grep -aoP '\e\[48;5;\d+m\[.*?0\.3704.*?\]' | head -1)
    [ -n "$cell" ] || { echo "  the selected cell has no ramp background"; return 1; }
    grep -qP '\e\[(\d+;)*7(;\d+)*m' <<< "$cell" && { echo "  the selected cell is in reverse video"; return 1; }
    send -          # one decimal fewer, live
    wait_for "[0.370]" "3 decimals" || return 1
    send +
    wait_for "[0.3704]" "4 decimals" || return 1
    send q
    ended_cleanly 0
}
check "the selected heatmap cell keeps its colour; + and - change the decimals" heat_frame

# --present on an 80x24 projector terminal: no step list and every column of four_heads'
# weights with its full label (no scroll note); P switches it off, and the step list, which would
# cost the matrix a column there, stays hidden with the key bar offering L; L gives it back.
present() {
    "${tmux[@]}" resize-window -t "$pane" -x 80 -y 24
    start TERM=xterm-256color "$binary" --present --at "'weights[fox,dog]'" --head 4 lessons/four_heads.yaml
    wait_for "which word will fox look at most" || return 1
    skip_question || return 1
    wait_for "quick" "brown" "jumps" "lazy" "[0.5859]" || return 1
    screen | grep -qF "cols " && { echo "  --present scrolls the columns at 80x24"; return 1; }
    screen | grep -qF "head 1      │" && { echo "  --present shows the step list"; return 1; }
    send P
    wait_for "presentation off" "L step list  q quit" || return 1
    send L
    wait_for "  scores        │" || return 1
    send q
    ended_cleanly 0
    local status=$?
    "${tmux[@]}" resize-window -t "$pane" -x 100 -y 30
    return $status
}
check "--present at 80x24 shows every column with full labels; P switches it off" present

# The open lesson replaced by a FIFO (issue #11 froze the UI inside open()): the error is in
# the status line, the last good view stays, and q quits at once.
fifo_reload() {
    local dir; dir=$(mktemp -d)
    cp tests/screens/reload/lesson.yaml "$dir/lesson.yaml"
    start TERM=xterm-256color "$binary" --at "'weights[cat,sat]'" "$dir/lesson.yaml"
    wait_for "[0.3704]" || { rm -rf "$dir"; return 1; }
    rm "$dir/lesson.yaml"
    mkfifo "$dir/lesson.yaml"
    wait_for "lesson.yaml: error: cannot read: it is a FIFO, not a regular file" "[0.3704]" ||
        { rm -rf "$dir"; return 1; }
    send q
    ended_cleanly 0
    local status=$?
    rm -rf "$dir"
    return $status
}
check "a lesson replaced by a FIFO keeps the view, says why, and q quits" fifo_reload

# Every other signal whose default action ends the process (issue #11): the terminal is restored
# first, then the process ends by that signal (the shell says 128 + its number). No core file:
# XCPU's and XFSZ's default action would write one.
other_signals() {
    local sig number shell child
    for sig in USR1 USR2 ALRM PIPE VTALRM PROF XCPU XFSZ IO STKFLT PWR RTMIN RTMIN+5 RTMAX; do
        number=$(kill -l $sig) || return 1
        start TERM=xterm-256color sh -c "'ulimit -c 0; exec $binary lessons/cat_sat.yaml'"
        wait_for "step 1 of" || return 1
        shell=$("${tmux[@]}" display-message -p -t "$pane" '#{pane_pid}')
        child=$(attnstep_child_of "$shell")
        [ -n "$child" ] || { echo "  cannot find the attnstep process"; return 1; }
        kill -$sig "$child"
        ended_cleanly $((128 + number)) || { echo "  after SIG$sig"; return 1; }
    done
}
check "USR1, USR2, ALRM, PIPE, VTALRM, PROF, XCPU, XFSZ, IO, STKFLT, PWR and the real-time signals restore the terminal" other_signals

# --compare with the shipped pairs (issue 12): the same cell of both lessons, the difference
# line and the ≠ marks; narrower than 100 columns the panes stack, shorter than 20 rows too
# the screen says it is too small; q returns a clean shell.
compare_pair() {   # compare_pair A B CELL DIFFERENCE
    "${tmux[@]}" resize-window -t "$pane" -x 120 -y 30
    start TERM=xterm-256color "$binary" --compare --at "'$3'" "lessons/$1" "lessons/$2"
    wait_for "comparing two lessons" " A · " " B · " "$4" || return 1
    if [[ "$4" == *"cells differ"* ]]; then wait_for "≠" || return 1; fi
    "${tmux[@]}" resize-window -t "$pane" -x 80 -y 24
    wait_for " A · " " B · " "$4" || return 1
    "${tmux[@]}" resize-window -t "$pane" -x 80 -y 16
    wait_for "too small for a comparison" || return 1
    "${tmux[@]}" resize-window -t "$pane" -x 100 -y 30
    wait_for "$4" || return 1
    send q
    ended_cleanly 0
}
check "--compare: scaled against unscaled" compare_pair no_scale.yaml with_scale.yaml \
    'weights[birds,sing]' "weights[birds,sing]: 0.0108 vs 0.1264 · 16 of 16 cells differ"
check "--compare: one head against two" compare_pair bank_loan_one_head.yaml bank_loan.yaml \
    'weights[bank,river]' "weights[bank,river]: 0.3285 vs 0.7073"
check "--compare: two word orders pair by token and nothing differs" compare_pair \
    bank_river.yaml scrambled.yaml 'weights[bank,river]' "weights[bank,river]: 0.6488 vs 0.6488 · no cell differs"
check "--compare: positions against none" compare_pair scrambled.yaml scrambled_positional.yaml \
    'weights[bank,river]' "weights[bank,river]: 0.6488 vs 0.3888 · 25 of 25 cells differ"

# C in a lesson: pick the second lesson from its folder, compare, q back to the lesson.
compare_key() {
    start TERM=xterm-256color "$binary" lessons/no_scale.yaml
    wait_for "step 1 of 7" || return 1
    send C
    wait_for "side by side with lessons/no_scale.yaml" || return 1
    send Enter
    wait_for "comparing two lessons" " B · " || return 1
    send n
    wait_for "step 2 of 7" || return 1
    send q
    wait_for "birds sing at dawn, unscaled" "step 1 of 7" || return 1
    screen | grep -qF "comparing two lessons" && { echo "  q did not leave the comparison"; return 1; }
    send q
    ended_cleanly 0
}
check "C in a lesson compares it with a lesson picked from its folder; q goes back" compare_key

# --replay on the terminal (issue #14): the recording plays at its pace with its state on the
# last row; space pauses, + and - change the speed, lesson keys wait; q hands over, and then
# the lesson's keys work again.
replay() {
    printf '%s\n' n 'wait 100' n 'wait 600000' n >"$state_root/demo.keys"
    start TERM=xterm-256color "$binary" --replay "$state_root/demo.keys" lessons/no_scale.yaml
    wait_for "step 3 of 7" "replay x1" "Space pause" || return 1
    send Space
    wait_for "paused x1" "Space resume" || return 1
    send + +
    wait_for "paused x4" || return 1
    send - - -
    wait_for "paused x0.5" || return 1
    send n
    send q
    wait_gone "paused x0.5" || return 1
    [ "$(step_shown)" = "step 3 of 7" ] || { echo "  n moved the lesson during the replay"; return 1; }
    send n
    wait_for "step 4 of 7" || return 1
    send q
    ended_cleanly 0
}
check "--replay plays at its pace; space pauses, + and - change the speed, q hands over" replay

# --follow on the terminal (issue #14): the status line says following; a key that moves puts
# the follower on its own (and the leader's next step does not move it); f follows again.
follow_class() {
    printf 'await joined 1\nawait synced\nn\nawait synced\nawait joined 1000\n' >"$state_root/lead.keys"
    XDG_STATE_HOME=$state_root/leader "$binary" --lead --listen 127.0.0.1:0 --code 00000000000000ab \
        --keys "$state_root/lead.keys" lessons/no_scale.yaml >/dev/null 2>"$state_root/lead.err" &
    local leader=$! port="" deadline=$((SECONDS + 10))
    while [ -z "$port" ]; do
        port=$(sed -n 's/.*port \([0-9]*\),.*/\1/p' "$state_root/lead.err" 2>/dev/null | head -1)
        [ $SECONDS -ge $deadline ] && { echo "  the leader did not start"; kill "$leader"; return 1; }
        sleep 0.05
    done
    start TERM=xterm-256color "$binary" --follow "127.0.0.1:$port" --code 00000000000000ab \
        --name tmux lessons/no_scale.yaml
    local ok=0
    wait_for "step 2 of 7" " following " && { send j; wait_for "on your own — f to follow"; } \
        && { send n; wait_for "step 3 of 7"; } && { send f; wait_for "step 2 of 7" " following "; } \
        && { send q; ended_cleanly 0; } || ok=1
    { kill -9 "$leader"; wait "$leader"; } 2>/dev/null
    return $ok
}
check "--follow: following, on your own after a move, f follows again" follow_class

echo "tmux checks: $failures failed"
[ "$failures" -eq 0 ]
