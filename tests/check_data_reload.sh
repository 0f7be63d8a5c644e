#!/usr/bin/env bash
# Live reload follows a lesson's data files ({file: NAME}) as it follows the lesson itself:
# attnstep runs in tmux on a copy of tea.npy and a lesson that loads it; numpy rewrites the
# file, and the screen must show the new numbers, a broken file's error beside the last good
# view, and the claim a changed file breaks. Waits poll the screen; no fixed sleeps.
set -u
unset TMUX   # our own server even when the tests run inside tmux
cd "$(dirname "$0")/.."
. tests/lib.sh
binary=$PWD/attnstep
[ -x "$binary" ] || { echo "check_data_reload: $binary is not built"; exit 1; }
command -v tmux > /dev/null ||
    { echo "check_data_reload: tmux is missing (.ci/install-deps installs it)"; exit 1; }
/usr/bin/python3 -c 'import numpy' 2> /dev/null \
    || { echo "check_data_reload: python3-numpy is missing (.ci/install-deps installs it)"
         exit 1; }

socket=attnstep-data-$$   # our own server, so other tmux sessions are never touched
tmux=(tmux -L "$socket" -f /dev/null)
dir=$(mktemp -d)
trap '"${tmux[@]}" kill-server 2> /dev/null; rm -rf "$dir"' EXIT
pane=ui failures=0 run=0

screen() { "${tmux[@]}" capture-pane -p -t "$pane"; }

# Starts attnstep in the pane (progress in a folder of this run); the shell prints
# EXITED-N=status when it ends.
start() {
    run=$((run + 1))
    "${tmux[@]}" send-keys -t "$pane" \
        "clear; env XDG_STATE_HOME=$dir/state$run TERM=xterm-256color $* ; echo EXITED-$run=\$?" \
        Enter
}

send() { "${tmux[@]}" send-keys -t "$pane" "$@"; }

# Writes tea.npy in the run's folder: the shipped embeddings with cell (row, col) set to value,
# written to a temporary file and renamed, as an editor or np.save in a notebook would replace it.
write_tea() {
    /usr/bin/python3 - "$dir/tea.npy" "$@" <<'EOF'
import os, sys
import numpy as np
path, row, col, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
x = np.load("lessons/tea.npy")
x[row, col] = value
np.save(path + ".new.npy", x)
os.replace(path + ".new.npy", path)
EOF
}

"${tmux[@]}" new-session -d -s "$pane" -x 100 -y 30 \
    "env PS1='ready\$ ' LANG=C.UTF-8 bash --norc --noprofile" || exit 1
wait_for 'ready$' || exit 1

follows_data() {   # the lesson has no claims: every edit of its numbers loads
    cp lessons/tea.npy "$dir/tea.npy"
    printf 'title: tea from a file\ntokens: [she, poured, the, tea]\n%s\n' \
        'embeddings: {file: tea.npy}' \
        > "$dir/lesson.yaml"
    start "$binary" --at "'input[poured,1]'" "$dir/lesson.yaml"
    wait_for "[1.0000]" "input · step" || return 1
    write_tea 1 1 2.5
    wait_for "[2.5000]" "reloaded lesson.yaml" || return 1
    head -c 60 lessons/tea.npy > "$dir/tea.npy.new" && mv "$dir/tea.npy.new" "$dir/tea.npy"
    wait_for "lesson.yaml:3:20: error: embeddings 'tea.npy'" "[2.5000]" || return 1
    write_tea 1 1 -0.75
    wait_for "[-0.7500]" || return 1
    wait_gone "error:" || return 1
    send q
    wait_for "EXITED-$run=0"
}
check "rewriting tea.npy reloads the lesson that loads it; a broken file keeps the last view" \
    follows_data

breaks_claim() {   # tea_full claims input[poured,1] = 1: a file that changes it is refused
    cp lessons/tea_full.yaml lessons/tea.npy "$dir/"
    start "$binary" --at "'input[poured,1]'" "$dir/tea_full.yaml"
    wait_for "[1.0000]" || return 1
    write_tea 1 1 3
    wait_for "claim 'input[poured,1] = 1' is false" "[1.0000]" || return 1
    write_tea 1 1 1
    wait_gone "error:" || return 1
    wait_for "reloaded tea_full.yaml" "[1.0000]" || return 1
    send q
    wait_for "EXITED-$run=0"
}
check "a tea.npy that breaks tea_full's claim is refused, with the claim, until it is put back" \
    breaks_claim

allow_paths_in_the_ui() {   # --allow-paths reaches the UI's loads and its reloads (headless)
    mkdir -p "$dir/out" "$dir/in"
    cp lessons/tea.npy "$dir/out/tea.npy"
    printf 'title: tea from elsewhere\ntokens: [she, poured, the, tea]\nembeddings: {file: %s}\n' \
        "$dir/out/tea.npy" > "$dir/in/lesson.yaml"
    printf 'reload %s\ndump\n' "$dir/in/lesson.yaml" > "$dir/keys"   # reloads whatever the stamp
    local status
    XDG_STATE_HOME=$dir/state-ui "$binary" --keys "$dir/keys" "$dir/in/lesson.yaml" \
        > "$dir/screen" 2> "$dir/err"
    status=$?
    if [ $status -ne 65 ] || ! grep -qF "run attnstep with --allow-paths" "$dir/err"; then
        echo "  without --allow-paths: exit $status (expected 65)"; cat "$dir/err"; return 1
    fi
    XDG_STATE_HOME=$dir/state-ui "$binary" --allow-paths --keys "$dir/keys" "$dir/in/lesson.yaml" \
        > "$dir/screen" 2> "$dir/err"
    status=$?
    if [ $status -ne 0 ] || ! grep -qF "reloaded lesson.yaml" "$dir/screen"; then
        echo "  with --allow-paths: exit $status, the screen:"; sed 's/^/  | /' "$dir/screen"
        cat "$dir/err"; return 1
    fi
}
check "--allow-paths lets the UI open and reload a lesson whose data file is elsewhere" \
    allow_paths_in_the_ui

echo "data file reload checks: $failures failed"
[ "$failures" -eq 0 ]
