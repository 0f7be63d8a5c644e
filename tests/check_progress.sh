#!/usr/bin/env bash
# Progress kept between runs, through the real binary and its headless UI: a lesson reopens
# where it was left (unless --at says where), the picker shows it, a corrupt file is ignored
# with a note, --reset forgets it, and a read-only state folder never stops a lesson.
# Every run uses a state folder under a temporary directory, never the real home.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
[ -x ./attnstep ] || { echo "check_progress: ./attnstep is not built"; exit 1; }
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # the read-only case below runs as another user when run as root
lesson=lessons/bank_river.yaml
state=$tmp/state
failures=0
# ui KEYS ARGS...: the headless UI with XDG_STATE_HOME=$state, the keys given one a line and a
# dump at the end; its screen and messages in $out, its exit status in $status.
ui() {
    local keys=$1; shift
    printf '%s\n' $keys > "$tmp/keys"
    out=$(env -u ATTNSTEP_LESSONS -u NO_COLOR LANG=C.UTF-8 XDG_STATE_HOME="$state" \
          ./attnstep --keys "$tmp/keys" --screen 80x24 "$@" 2>&1)
    status=$?
}
# shows WANT_STATUS TEXT...: the last run exited with WANT_STATUS and showed every TEXT.
shows() {
    local want=$1 text; shift
    [ "$status" -eq "$want" ] || { echo "  exit status $status, expected $want"; return 1; }
    for text in "$@"; do
        grep -qF -- "$text" <<<"$out" || { echo "  no \"$text\" in:"; sed 's/^/  | /' <<<"$out"; return 1; }
    done
}
lacks() {  # lacks TEXT: the last run did not show TEXT
    ! grep -qF -- "$1" <<<"$out" || { echo "  \"$1\" was shown"; return 1; }
}

ui "n n n q" "$lesson"
check "a lesson quits cleanly, keeping its place" shows 0 "step 4 of 9"
check "the place is one file in \$XDG_STATE_HOME/attnstep" \
    test "$(ls "$state/attnstep" | grep -c '\.progress$')" -eq 1
ui "dump q" "$lesson"
check "the lesson reopens where it was left" shows 0 "step 4 of 9"
ui "dump q" "$lesson" --at 'weights[bank,river]'
check "--at wins over the saved place" shows 0 "weights"
check "  (not step 4)" lacks "step 4 of 9"
at_step=$(grep -o 'step [0-9]* of 9' <<<"$out" | head -1)
ui "dump q" "$lesson"
check "the place --at opened is the one kept now" shows 0 "${at_step:?--at showed no step}"
XDG_STATE_HOME="$state" ./attnstep --reset "$lesson" > /dev/null
ui "n n n q" "$lesson"

printf 'dump\nq\n' >"$state/picker.keys"   # a regular file: key scripts may not be pipes
out=$(env LANG=C.UTF-8 XDG_STATE_HOME="$state" ATTNSTEP_LESSONS=lessons \
      ./attnstep --keys "$state/picker.keys" --screen 100x40 2>&1); status=$?
check "the picker shows where each lesson was left" shows 0 "bank of the river" "step 4 of 9"

file=$(ls "$state"/attnstep/*.progress)
printf 'attnstep progress 1\nsteps 9\nstep 3\n' > "$file"   # cut short: no "end"
ui "dump q" "$lesson"
check "a corrupt progress file is ignored, with a note" \
    shows 0 "saved progress unreadable; starting afresh" "step 1 of 9"
ui "n dump q" "$lesson"
check "  and the next save replaces it" shows 0 "step 2 of 9"
ui "dump q" "$lesson"
check "  (read back)" shows 0 "step 2 of 9"

# R in the picker, then y: the selected lesson's progress is reset (n keeps it). Progress is
# keyed by the lesson's text, so the copy differs from $lesson by a comment.
mkdir -p "$tmp/one" && { cat "$lesson"; echo "# a copy: its own progress"; } > "$tmp/one/bank_river.yaml"
printf 'R\nn\ndump\nR\ny\ndump\nq\n' > "$tmp/reset.keys"
ui "n n q" "$tmp/one/bank_river.yaml"
out=$(env LANG=C.UTF-8 XDG_STATE_HOME="$state" ATTNSTEP_LESSONS="$tmp/one" \
      ./attnstep --keys "$tmp/reset.keys" --screen 100x30 2>&1); status=$?
check "the picker's R asks, n keeps the progress" shows 0 "progress kept" "step 3 of 9"
check "  and y resets it" shows 0 'progress of "The bank of the river: a query finds its key" reset' \
    "not started"
out=$(XDG_STATE_HOME="$state" ./attnstep --reset "$tmp/one/bank_river.yaml" 2>&1); status=$?
check "  leaving nothing for --reset" shows 0 "no progress was kept"

out=$(XDG_STATE_HOME="$state" ./attnstep --reset "$lesson" 2>&1); status=$?
check "--reset LESSON clears that lesson's progress" shows 0 "$lesson: progress cleared"
ui "dump q" "$lesson"
check "  and it opens at the first step again" shows 0 "step 1 of 9"
ui "q" lessons/cat_sat.yaml
out=$(XDG_STATE_HOME="$state" ./attnstep --reset 2>&1); status=$?
check "--reset clears every lesson's progress" shows 0 "progress cleared: 2 lessons ($state/attnstep)"
check "  leaving no file behind" test -z "$(ls -A "$state/attnstep")"
out=$(XDG_STATE_HOME="$state" ./attnstep --reset "$lesson" 2>&1); status=$?
check "--reset of a lesson with nothing kept says so" shows 0 "$lesson: no progress was kept"
out=$(XDG_STATE_HOME="$state" ./attnstep --reset no/such.yaml 2>&1); status=$?
check "--reset of no such lesson exits 66" \
    shows 66 "attnstep: --reset: no/such.yaml: no such lesson, and no progress kept for it"
out=$(env -u XDG_STATE_HOME -u HOME ./attnstep --reset 2>&1); status=$?
check "--reset without XDG_STATE_HOME or HOME exits 64" \
    shows 64 "neither XDG_STATE_HOME nor HOME names a folder"
out=$(env -u XDG_STATE_HOME HOME="$tmp/home" ./attnstep --reset 2>&1); status=$?
check "without XDG_STATE_HOME, progress lives in ~/.local/state/attnstep" \
    shows 0 "($tmp/home/.local/state/attnstep)"

# A read-only state folder: the lesson runs and says progress is not being saved. Root may
# write anywhere, so as root the UI runs as nobody (setpriv, from util-linux).
mkdir -p "$tmp/ro/attnstep" && chmod 555 "$tmp/ro/attnstep" "$tmp/ro"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
printf 'n\ndump\nq\n' > "$tmp/keys"; chmod 644 "$tmp/keys"
out=$(env -u ATTNSTEP_LESSONS LANG=C.UTF-8 XDG_STATE_HOME="$tmp/ro" "${as_user[@]}" \
      ./attnstep --keys "$tmp/keys" --screen 120x24 "$lesson" 2>&1); status=$?
check "a read-only state folder never stops the lesson" \
    shows 0 "progress is not being saved: $tmp/ro/attnstep: Permission denied" \
    "step 2 of 9"
check "  and nothing is written there" test -z "$(ls -A "$tmp/ro/attnstep")"

# A full disk: no write succeeds (a file size limit of 0 makes every write fail, as ENOSPC
# would; SIGXFSZ ignored so the write returns its error). The answer is taken, the note says
# progress is not being saved, and no temporary file is left behind.
full=$tmp/full
printf 'n\nn\nn\nn\n1\ndump\nq\nq\n' > "$tmp/keys"
out=$(trap '' XFSZ; ulimit -f 0; env -u ATTNSTEP_LESSONS LANG=C.UTF-8 XDG_STATE_HOME="$full" \
      ./attnstep --keys "$tmp/keys" --screen 160x24 lessons/cat_sat.yaml 2>&1); status=$?
check "a full disk never stops the lesson" \
    shows 0 "score 1/1" "progress is not being saved: cannot write $full/attnstep/" ".progress: File too large"
check "  and leaves no file behind" test -z "$(ls -A "$full/attnstep")"

check "--help lists --reset" bash -c './attnstep --help | grep -q -- "--reset \[LESSON...\]"'
check "--help lists XDG_STATE_HOME" bash -c './attnstep --help | grep -q "^  *XDG_STATE_HOME"'

[ "$failures" -eq 0 ] && echo "progress: every check passed" || echo "progress: $failures failed"
[ "$failures" -eq 0 ]
