#!/usr/bin/env bash
# Special files never hang or spin: a FIFO (without a writer), a device or a directory given as
# a lesson or a key script is refused at once with one line (66) in every mode; in a lesson
# folder the picker lists it with a note; a reload from one keeps the last good view. Every run
# is under `timeout`, so a hang fails (status 124) instead of stopping the suite.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=tests/reference/cat_sat.yaml
failures=0
mkfifo "$tmp/fifo.yaml"
mkdir "$tmp/folder.yaml"
: >"$tmp/empty_keys"
declare -A kind=([$tmp/fifo.yaml]=FIFO [/dev/zero]=device [$tmp/folder.yaml]=directory)

# refused WANT_MESSAGE COMMAND...: exits 66 within 10 s, saying exactly WANT_MESSAGE.
refused() {
    local want=$1; shift
    local said; said=$(timeout 10 "$@" 2>&1 >/dev/null </dev/null)
    local status=$?
    if [ "$status" -eq 66 ] && [ "$said" = "$want" ]; then
        echo "ok   $*"
    else
        printf 'FAIL %s\n     status %s, expected 66\n     said: %s\n     want: %s\n' \
            "$*" "$status" "$said" "$want"
        failures=$((failures + 1))
    fi
}

for file in "$tmp/fifo.yaml" /dev/zero "$tmp/folder.yaml"; do
    why="cannot read: it is a ${kind[$file]}, not a regular file"
    for mode in --plain --json --markdown "--csv weights" "--explain weights[0,0]" --stats \
                --check ""; do
        # shellcheck disable=SC2086  # the mode's words are meant to split
        refused "$file: error: $why" ./attnstep $mode "$file"
    done
    refused "$file: error: $why" ./attnstep --keys "$tmp/empty_keys" "$file"
    refused "attnstep: $file: cannot read the key script: it is a ${kind[$file]}, not a regular file" \
        ./attnstep --keys "$file" "$lesson"
done

# The picker lists a FIFO and a directory of its folder with a note, and opens nothing.
mkdir "$tmp/lessons"
cp "$lesson" "$tmp/lessons/a.yaml"
mkfifo "$tmp/lessons/b.yaml"
mkdir "$tmp/lessons/c.yaml"
printf 'dump\nq\n' >"$tmp/keys"
screen=$(ATTNSTEP_LESSONS="$tmp/lessons" timeout 10 ./attnstep --keys "$tmp/keys" --screen 80x12)
status=$?
if [ $status -eq 0 ] && grep -q 'does not load: cannot read: it is a FIFO, not a regular file' <<<"$screen" &&
    grep -q 'does not load: cannot read: it is a directory, not a regular file' <<<"$screen" &&
    grep -q '▸ cat sat' <<<"$screen"; then
    echo "ok   the picker notes a FIFO and a directory in its folder"
else
    printf 'FAIL the picker notes a FIFO and a directory in its folder (status %s)\n%s\n' \
        "$status" "$screen"; failures=$((failures + 1))
fi

# A FIFO named ORDER (issue 26: the picker opened it with fopen and hung) is ignored: the
# folder's lessons are listed alphabetically, at once.
mkdir "$tmp/ordered"
cp "$lesson" "$tmp/ordered/b.yaml"
sed 's/^title: .*/title: "the first by name"/' "$lesson" >"$tmp/ordered/a.yaml"
mkfifo "$tmp/ordered/ORDER"
screen=$(ATTNSTEP_LESSONS="$tmp/ordered" timeout 10 ./attnstep --keys "$tmp/keys" --screen 80x12)
status=$?
if [ $status -eq 0 ] && grep -q '▸ the first by name' <<<"$screen"; then
    echo "ok   a FIFO named ORDER does not hang the picker"
else
    printf 'FAIL a FIFO named ORDER does not hang the picker (status %s)\n%s\n' "$status" "$screen"
    failures=$((failures + 1))
fi

# A reload from a FIFO keeps the last good view with the error above the narration; q works.
printf 'reload %s\ndump\nq\n' "$tmp/fifo.yaml" >"$tmp/reload_keys"
screen=$(timeout 10 ./attnstep --keys "$tmp/reload_keys" --screen 100x16 "$lesson")
status=$?
if [ $status -eq 0 ] && grep -q '^ cat_sat.yaml: error: cannot be read: it is a FIFO, not a regular file$' <<<"$screen" &&
    grep -q '▸cat \[1.0000\] 0.5000' <<<"$screen"; then
    echo "ok   a reload from a FIFO keeps the view and says why above the narration"
else
    printf 'FAIL a reload from a FIFO keeps the view (status %s)\n%s\n' "$status" "$screen"
    failures=$((failures + 1))
fi

# An 8 GB sparse lesson (issue 26) is refused by its size before any of it is read or hashed
# (hashing it whole for the progress key took 31 s): in every mode, in the UI, in the picker, as
# a reload's text and by --reset, each within 2 s (a fraction of that here; the bound is for a
# loaded machine).
truncate -s 8G "$tmp/sparse.yaml"
mkdir "$tmp/picker"
cp "$lesson" "$tmp/picker/" && truncate -s 8G "$tmp/picker/huge.yaml"
printf 'dump\nq\n' >"$tmp/dump_keys"
printf 'reload %s\ndump\nq\n' "$tmp/sparse.yaml" >"$tmp/reload_keys"
too_large="the file is larger than the limit of 4 MiB (4194304 bytes)"
quick() {   # quick STATUS WANT COMMAND...: STATUS within 2 s, its output (both streams) holding WANT
    local want_status=$1 want=$2; shift 2
    local start=$EPOCHREALTIME said status
    said=$(timeout 60 env XDG_STATE_HOME="$tmp/state" "$@" 2>&1 </dev/null)
    status=$?
    local ms=$(( (${EPOCHREALTIME/./} - ${start/./}) / 1000 ))
    if [ "$status" -eq "$want_status" ] && [ "$ms" -le 2000 ] && grep -qF -- "$want" <<<"$said"; then
        echo "ok   ${ms} ms: $*"
    else
        printf 'FAIL %s\n     status %s (expected %s), %s ms; want "%s" in:\n%s\n' "$*" "$status" \
            "$want_status" "$ms" "$want" "$(head -c 600 <<<"$said")"
        failures=$((failures + 1))
    fi
}
for mode in --plain --json --markdown "--csv weights" "--explain weights[0,0]" --stats --check; do
    # shellcheck disable=SC2086  # the mode's words are meant to split
    quick 65 "$tmp/sparse.yaml: error: $too_large" ./attnstep $mode "$tmp/sparse.yaml"
done
quick 65 "$tmp/sparse.yaml: error: $too_large" ./attnstep --keys "$tmp/empty_keys" "$tmp/sparse.yaml"
quick 0 "does not load: $too_large" env ATTNSTEP_LESSONS="$tmp/picker" ./attnstep --keys "$tmp/dump_keys"
quick 0 "error: the file is larger than the limit of 4 MiB" ./attnstep --keys "$tmp/reload_keys" "$lesson"
quick 0 "no progress was kept" ./attnstep --reset "$tmp/sparse.yaml"

echo "special files: $failures failed"
[ "$failures" -eq 0 ]
