#!/usr/bin/env bash
# --record and --replay (issue #14): a headless run recorded, then replayed headless, ends on
# the same screen; a replay waits its "wait MS" lines (a --keys run does not); bad waits,
# --replay with --keys and an unwritable recording are refused with their status and message.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=lessons/cat_sat.yaml
failures=0
export XDG_STATE_HOME=$tmp/state   # never the real home's progress
# The recording of a run that steps, selects, steps in, answers a question, resizes and quits
# to the score box and back; replayed without a terminal it draws the same last screen. Each run
# keeps its progress apart, so that nothing saved by one changes where the next starts.
printf '%s\n' n n 1 j l s s 'resize 100x30' n tab ']' P q >"$tmp/keys"
round_trip() {
    XDG_STATE_HOME=$tmp/s1 ./attnstep --keys "$tmp/keys" --record "$tmp/rec" "$lesson" \
        >"$tmp/recorded" </dev/null || { echo "  the recorded run failed"; return 1; }
    XDG_STATE_HOME=$tmp/s2 ./attnstep --replay "$tmp/rec" "$lesson" >"$tmp/replayed" </dev/null \
        || { echo "  the replay failed"; return 1; }
    # a recording holds keys, not screens: the last dump of each run is the screen it ended on
    local last; last() { awk '/^--- screen/{s=""} {s=s $0 "\n"} END{printf "%s", s}' "$1"; }
    [ -s "$tmp/recorded" ] && [ "$(last "$tmp/recorded")" = "$(last "$tmp/replayed")" ] \
        || { echo "  the screens differ:"; diff <(last "$tmp/recorded") <(last "$tmp/replayed"); return 1; }
    grep -qx 'resize 100x30' "$tmp/rec" && grep -qx 'tab' "$tmp/rec" \
        || { echo "  the recording lacks its resize or tab:"; cat "$tmp/rec"; return 1; }
}
check "a recorded headless run replays to the same screen" round_trip

# The same keys replayed a second time, from a recording started anew: progress saved by the
# first replay does not move the second (a replay neither reads nor writes progress).
replay_twice() {
    XDG_STATE_HOME=$tmp/s2 ./attnstep --replay "$tmp/rec" "$lesson" >"$tmp/again" </dev/null &&
    cmp -s "$tmp/replayed" "$tmp/again"
}
check "a replay starts at the first step whatever was saved before" replay_twice

# A replay waits: three waits of 150 ms take at least 0.45 s; the same file as --keys does not
# wait (compared with the replay, not with a fixed bound).
printf '%s\n' n 'wait 150' n 'wait 150' j 'wait 150' l >"$tmp/paced"
paced() {
    local start=$EPOCHREALTIME
    ./attnstep --replay "$tmp/paced" "$lesson" >"$tmp/paced.out" </dev/null || return 1
    local replay_us=$(( (${EPOCHREALTIME/./} - ${start/./}) ))
    start=$EPOCHREALTIME   # progress of its own: --keys would resume where another run stopped
    XDG_STATE_HOME=$tmp/s3 ./attnstep --keys "$tmp/paced" "$lesson" >"$tmp/keys.out" </dev/null || return 1
    local keys_us=$(( (${EPOCHREALTIME/./} - ${start/./}) ))
    [ "$replay_us" -ge 450000 ] || { echo "  the replay took ${replay_us} us"; return 1; }
    [ "$keys_us" -lt "$replay_us" ] || { echo "  --keys took ${keys_us} us, the replay ${replay_us} us"; return 1; }
    cmp -s "$tmp/paced.out" "$tmp/keys.out" || { echo "  the two runs differ"; return 1; }
}
check "a replay waits its waits; --keys skips them" paced

wait_error="wait needs whole milliseconds from 0 to 3600000, e.g. 'wait 250'"
for bad in 'wait' 'wait -5' 'wait 1.5' 'wait 3600001' 'wait 2s'; do
    printf 'n\n%s\nn\n' "$bad" >"$tmp/bad"
    stderr_is 64 "attnstep: $tmp/bad:2: $wait_error" ./attnstep --replay "$tmp/bad" "$lesson"
done
stderr_is 64 "attnstep: --replay and --keys both give the keys: choose one
Try 'attnstep --help' for more information." ./attnstep --replay "$tmp/paced" --keys "$tmp/paced" "$lesson"
stderr_is 66 "attnstep: $tmp/none: cannot read the key script: No such file or directory" \
    ./attnstep --replay "$tmp/none" "$lesson"
stderr_is 74 "attnstep: --record $tmp/no/such/folder: cannot write the recording: No such file or directory" \
    ./attnstep --keys "$tmp/keys" --record "$tmp/no/such/folder" "$lesson"
# --record never destroys anything (issue 26): a FILE that is an input of the run (the lesson,
# under its own name, a hard link or a symbolic link; a data file; the key script) is refused
# before anything is written, and stays byte for byte; a FIFO or a device is refused at once
# (a FIFO used to block forever); a run whose lesson does not load leaves FILE as it was.
refused_as() {   # refused_as WHAT FILE ARGS...: 64, the message, and FILE unchanged
    local what=$1 file=$2; shift 2
    cp "$file" "$tmp/before"
    stderr_is 64 "attnstep: --record $file: it is $what of this run, which the recording would replace: choose another file" \
        ./attnstep --keys "$tmp/keys" --record "$file" "$@"
    cmp -s "$file" "$tmp/before" || { echo "FAIL $file changed"; failures=$((failures + 1)); }
    ls -A "$(dirname "$file")" | grep -q '^\.' &&
        { echo "FAIL a temporary file is left beside $file"; failures=$((failures + 1)); }
    return 0
}
mkdir "$tmp/own"
cp "$lesson" "$tmp/own/mine.yaml"
ln "$tmp/own/mine.yaml" "$tmp/own/hard.yaml"
ln -s mine.yaml "$tmp/own/soft.yaml"
refused_as "the lesson" "$tmp/own/mine.yaml" "$tmp/own/mine.yaml"
refused_as "the lesson" "$tmp/own/hard.yaml" "$tmp/own/mine.yaml"
refused_as "the lesson" "$tmp/own/soft.yaml" "$tmp/own/mine.yaml"
cp "$tmp/keys" "$tmp/own/keys"
stderr_is 64 "attnstep: --record $tmp/own/keys: it is the key script of this run, which the recording would replace: choose another file" \
    ./attnstep --keys "$tmp/own/keys" --record "$tmp/own/keys" "$lesson"
cmp -s "$tmp/own/keys" "$tmp/keys" || { echo "FAIL the key script changed"; failures=$((failures + 1)); }
mkdir "$tmp/tea"
cp lessons/tea_causal.yaml lessons/tea.npy "$tmp/tea/"
refused_as "a data file of the lesson" "$tmp/tea/tea.npy" "$tmp/tea/tea_causal.yaml"
mkfifo "$tmp/fifo"
stderr_is 74 "attnstep: --record $tmp/fifo: cannot write the recording: it is a FIFO, not a regular file" \
    ./attnstep --keys "$tmp/keys" --record "$tmp/fifo" "$lesson"
stderr_is 74 "attnstep: --record /dev/null: cannot write the recording: it is a device, not a regular file" \
    ./attnstep --keys "$tmp/keys" --record /dev/null "$lesson"
stderr_is 74 "attnstep: --record $tmp: cannot write the recording: it is a directory, not a regular file" \
    ./attnstep --keys "$tmp/keys" --record "$tmp" "$lesson"
kept_on_failure() {   # a lesson that does not load: the old recording stays, nothing beside it
    printf 'old\n' >"$tmp/own/old.rec"
    ./attnstep --keys "$tmp/keys" --record "$tmp/own/old.rec" "$tmp/none.yaml" 2>/dev/null
    [ $? -eq 66 ] && [ "$(cat "$tmp/own/old.rec")" = old ] || { echo "  the old recording changed"; return 1; }
    [ "$(ls -A "$tmp/own" | wc -l)" -eq 5 ] || { echo "  left beside it:"; ls -A "$tmp/own"; return 1; }
}
check "a run that does not start leaves the old recording and no temporary file" kept_on_failure
replaced_at_end() {   # an old recording is replaced by the new one, with fopen's mode
    printf 'old\n' >"$tmp/own/old.rec"
    (umask 022; ./attnstep --keys "$tmp/keys" --record "$tmp/own/old.rec" "$lesson" >/dev/null) || return 1
    grep -qx 'resize 100x30' "$tmp/own/old.rec" || { echo "  not replaced"; return 1; }
    [ "$(stat -c %a "$tmp/own/old.rec")" = 644 ] || { echo "  mode $(stat -c %a "$tmp/own/old.rec")"; return 1; }
    [ "$(ls -A "$tmp/own" | wc -l)" -eq 5 ] || { echo "  left beside it:"; ls -A "$tmp/own"; return 1; }
}
check "a finished run replaces the old recording, with the usual mode, nothing left beside it" replaced_at_end

echo "record and replay: $failures failed"
[ "$failures" -eq 0 ]
