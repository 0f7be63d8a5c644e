#!/usr/bin/env bash
# make bench's classroom figure (issue #14): a headless leader with BENCH_FOLLOWERS (200)
# headless followers on loopback; the leader's keypresses are timed (ATTNSTEP_KEY_TIMES, the
# frame drawn and the place sent to every follower) while the followers take each place, and
# the leader's memory is read from /proc. Prints a Markdown section for tests/BENCH.md.
set -u
cd "$(dirname "$0")/../.."
n=${BENCH_FOLLOWERS:-200}
tmp=$(mktemp -d)
pids=()
trap '{ for p in "${pids[@]}"; do kill -9 "$p"; done; wait; } 2>/dev/null; rm -rf "$tmp"' EXIT
lesson=lessons/cat_sat.yaml code=00000000000000be
# forty moves and steps, sent without waiting for the class: the leader must never wait for it
keys="j l k h n j n l n k p h n n j l"
{
    echo "await joined $n"; echo "await synced"
    for round in 1 2 3; do for k in $keys; do echo "$k"; done; echo g; done
    echo "await synced"
} >"$tmp/lead.keys"
: >"$tmp/empty.keys"

# measure NICENESS: one class, its followers at that niceness; prints "KEYS MEDIAN WORST
# LEADER_KIB FOLLOWER_KIB" (milliseconds, KiB), or fails
measure() {
    local niceness=$1 i h hwm=0 follower_hwm=0 deadline port leader
    pids=()
    rm -f "$tmp/times.tsv" "$tmp/lead.err"
    ATTNSTEP_KEY_TIMES=$tmp/times.tsv XDG_STATE_HOME=$tmp/state ./attnstep --lead \
        --listen 127.0.0.1:0 --code $code --keys "$tmp/lead.keys" "$lesson" >/dev/null \
        2>"$tmp/lead.err" &
    leader=$!; pids+=($leader)
    deadline=$((SECONDS + 30))
    until grep -qs 'port [0-9]' "$tmp/lead.err"; do
        [ $SECONDS -ge $deadline ] && { echo "class_load: the leader did not start" >&2; return 1; }
        sleep 0.05
    done
    port=$(sed -n 's/.*port \([0-9]*\),.*/\1/p' "$tmp/lead.err" | head -1)
    for i in $(seq 1 "$n"); do
        XDG_STATE_HOME=$tmp/state nice -n "$niceness" ./attnstep --follow "127.0.0.1:$port" \
            --code $code --name "s$i" --keys "$tmp/empty.keys" "$lesson" >/dev/null 2>&1 &
        pids+=($!)
    done
    # The leader ends after its keys and the class caught up; its peak memory (VmHWM only
    # grows) is read until then, and a follower's while it still runs.
    deadline=$((SECONDS + 180))
    while kill -0 "$leader" 2>/dev/null; do
        h=$(awk '/^VmHWM/ { print $2 }' "/proc/$leader/status" 2>/dev/null)
        [ -n "$h" ] && hwm=$h
        h=$(awk '/^VmHWM/ { print $2 }' "/proc/${pids[1]}/status" 2>/dev/null)
        [ -n "$h" ] && follower_hwm=$h
        [ $SECONDS -ge $deadline ] &&
            { echo "class_load: the leader did not get through its keys" >&2; return 1; }
        sleep 0.1
    done
    wait "$leader" || { echo "class_load: the leader failed:" >&2; cat "$tmp/lead.err" >&2; return 1; }
    { for p in "${pids[@]}"; do kill -9 "$p"; done; wait; } 2>/dev/null
    pids=()
    grep -v '^first-frame' "$tmp/times.tsv" | cut -f3 | sort -n | awk -v l="$hwm" \
        -v f="$follower_hwm" '{ v[NR] = $1 } END {
        printf "%d %.2f %.2f %d %d\n", NR, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000, l, f }'
}
# the followers as the leader's equals on its two cores, then niced (a stand-in for a class
# whose followers run on their own machines, as they do in a classroom)
measure 0 >"$tmp/shared" && measure 19 >"$tmp/niced" || exit 1
read -r shared_keys shared_median shared_worst hwm follower_hwm <"$tmp/shared"
read -r _ niced_median niced_worst _ _ <"$tmp/niced"
verdict() { awk -v w="$1" 'BEGIN { print (w <= 16 ? "met" : "not met") }'; }
cat <<SECTION
## A class of $n followers

A headless \`attnstep --lead\` on cat_sat with $n headless \`--follow\` processes on loopback,
all on this machine ($(nproc) cores): $shared_keys keypresses of the leader (moves and steps,
none waiting for the class), each timed from the key read to its frame drawn, the new place
sent to every follower included. Run twice: with the followers as the leader's equals on the
same cores, and with the followers at \`nice 19\`, which stands for a class whose followers run
on their own machines (the leader then has a core when it needs one).

| figure | followers at the leader's priority | followers at nice 19 |
| --- | --- | --- |
| leader keypress, median | $shared_median ms | $niced_median ms |
| leader keypress, worst | $shared_worst ms | $niced_worst ms |
| target: worst within 16 ms | $(verdict "$shared_worst") | $(verdict "$niced_worst") |
| leader peak memory (VmHWM) | $((hwm / 1024)) MiB | |
| one follower's peak memory | $((follower_hwm / 1024)) MiB | |

\`\`\`
BENCH_FOLLOWERS=$n bash tests/bench/class_load.sh
\`\`\`
SECTION
