#!/usr/bin/env bash
# The classroom in front of a room (issues 25 and 26): a headless leader and 30 followers on
# loopback through cat_sat's first question. Two followers go back (p) right after answering:
# the leader's "here" count drops by two without the leader moving, within a second. After the
# reveal the leader's status line keeps the counts; its roster (W) lists 30 names with their
# steps; its results box (r) has the question's counts. Then the traffic of an encrypted leader
# (--encrypt), read through a TCP relay, shows no code, name or answer, where the same class
# without it shows them. Every wait polls for a state with a deadline.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
lesson=lessons/cat_sat.yaml
followers=30
code=0123456789abcdef
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
until_true() {   # until_true SECONDS COMMAND...
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.05; done
}
dumps() { local n; n=$(grep -c '^--- screen' "$1" 2>/dev/null); echo "${n:-0}"; }
has_dumps() { [ "$(dumps "$1")" -ge "$2" ]; }   # has_dumps FILE N
screen() { awk -v n="$2" '/^--- screen/{k++; next} k==n' "$1"; }   # screen FILE N

start_leader() {   # start_leader NAME SCRIPT OPTION...
    local name=$1 keys=$2; shift 2
    XDG_STATE_HOME=$tmp/state/$name ./attnstep --lead --listen 127.0.0.1:0 --code $code \
        --per-address 64 "$@" --keys "$keys" "$lesson" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pids+=($!); leader_pid=$!
    until_true 10 grep -qs 'students run' "$tmp/$name.err" || { fail "$name did not start"; cat "$tmp/$name.err"; exit 1; }
    port=$(sed -n 's/.*port \([0-9]*\),.*/\1/p' "$tmp/$name.err" | head -1)
    key=$(sed -n 's/.* --key \([0-9a-f]*\) .*/\1/p' "$tmp/$name.err" | head -1)
}

# The leader: every follower joined and at step 1, then to the question (step 5); once all
# answered it dumps (1), waits until 28 are here and dumps (2), reveals and dumps (3), opens
# the roster (4) and the results (5).
{
    echo "await joined $followers"; echo "await synced"
    for k in n n n n; do echo $k; done
    echo "await answered $followers"; echo dump
    echo "await here $((followers - 2))"; echo dump
    echo esc; echo "await joined $followers"; echo dump
    echo "await here $((followers - 2))"; echo W; echo dump; echo q
    echo r; echo dump; echo q
    echo "await joined 1000"
} >"$tmp/lead.keys"
start_leader lead "$tmp/lead.keys" --screen 100x50
for i in $(seq 1 $followers); do
    { echo "await question"; [ $((i % 3)) -eq 0 ] && echo 2 || echo 1
      [ "$i" -le 2 ] && echo p; } >"$tmp/f$i.keys"
    XDG_STATE_HOME=$tmp/state/f$i ./attnstep --follow "127.0.0.1:$port" --code $code \
        --name "student $i" --keys "$tmp/f$i.keys" "$lesson" >/dev/null 2>&1 &
    pids+=($!)
done
# the time each leader dump appears, to measure how soon the count follows the followers
: >"$tmp/times"
watch_dumps() {
    local seen=0 n
    while [ $seen -lt 5 ] && kill -0 "$leader_pid" 2>/dev/null; do
        n=$(dumps "$tmp/lead.out")
        while [ $seen -lt "$n" ]; do seen=$((seen + 1)); echo "$seen $(date +%s.%N)" >>"$tmp/times"; done
        sleep 0.02
    done
}
watch_dumps &
watcher=$!
until_true 90 has_dumps "$tmp/lead.out" 5 || fail "the leader dumped $(dumps "$tmp/lead.out") of 5 screens"
wait $watcher 2>/dev/null
third=$((followers / 3))
counts="1×$((followers - third)) 2×$third"
screen "$tmp/lead.out" 1 | grep -qF "answered $followers/$followers: $counts" \
    && echo "ok   every answer counted: $counts" || { fail "the tally:"; screen "$tmp/lead.out" 1 | grep answered; }
# (the second dump comes only once "await here 28" saw the count drop; the roster says it too)
grep -q 'step 5 of 13' <(screen "$tmp/lead.out" 2) \
    && echo "ok   two followers went back (p): the leader counts $((followers - 2)) here without moving" \
    || fail "the here count: the leader moved"
t1=$(sed -n 's/^1 //p' "$tmp/times"); t2=$(sed -n 's/^2 //p' "$tmp/times")
awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(b - a < 1.0) }' \
    && echo "ok   the here count followed within a second ($(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s)" \
    || fail "the here count took $(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }') s"
screen "$tmp/lead.out" 3 | grep -qE "── narration ─.* right $((followers - third))/$followers · $counts ─" \
    && echo "ok   after the reveal the leader still shows the counts: right $((followers - third))/$followers · $counts" \
    || { fail "after the reveal:"; screen "$tmp/lead.out" 3 | grep -- '── '; }
roster=$(screen "$tmp/lead.out" 4)
listed=$(grep -cE '│   student [0-9]+ +step [0-9]+ · head 1 ' <<<"$roster")
back=$(grep -cE '│   student [12] +step 4 · head 1 ' <<<"$roster")
at5=$(grep -cE '│   student [0-9]+ +step 5 · head 1 +answered ' <<<"$roster")
grep -qF "$followers followers · $((followers - 2)) here · $followers answered" <<<"$roster" \
    && [ "$listed" -eq $((followers < 46 ? followers : 46)) ] && [ "$back" -eq 2 ] \
    && [ "$at5" -eq $((listed - 2)) ] \
    && echo "ok   the roster lists $listed names on screen with their steps (2 at step 4, $at5 at step 5, answered)" \
    || { fail "the roster ($listed listed, $back at step 4, $at5 at step 5):"; echo "$roster"; }
screen "$tmp/lead.out" 5 | grep -qF "step 5 · answered $followers of $followers · right $((followers - third)) · skipped 0" \
    && echo "ok   r: the class's results of the question" || { fail "the results box:"; screen "$tmp/lead.out" 5; }
{ kill -9 "${pids[@]}"; wait; } 2>/dev/null
pids=()

# Encryption: a follower joins through a relay that keeps every byte it passes.
cat >"$tmp/relay.py" <<'EOF'
import socket, sys, threading
listen, target, capture = int(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3], "ab", 0)
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0)); server.listen(8)
open(sys.argv[4], "w").write(str(server.getsockname()[1]))
def pump(a, b):
    while True:
        data = a.recv(65536)
        if not data: break
        capture.write(data); b.sendall(data)
    b.close()
while True:
    client, _ = server.accept()
    upstream = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
EOF
# capture NAME OPTION...: a leader (with OPTION), one follower through the relay that answers
# the first question; the bytes in $tmp/NAME.bytes.
capture() {
    local name=$1; shift
    printf 'await joined 1\nn\nn\nn\nn\nawait answered 1\ndump\nawait joined 1000\n' >"$tmp/$name.keys"
    start_leader "$name" "$tmp/$name.keys" "$@"
    rm -f "$tmp/$name.port"; : >"$tmp/$name.bytes"
    python3 "$tmp/relay.py" 0 "$port" "$tmp/$name.bytes" "$tmp/$name.port" & pids+=($!)
    until_true 10 test -s "$tmp/$name.port" || { fail "the relay did not start"; return; }
    printf 'await question\n2\n' >"$tmp/$name.f.keys"
    XDG_STATE_HOME=$tmp/state/$name.f ./attnstep --follow "127.0.0.1:$(cat "$tmp/$name.port")" \
        --code $code ${key:+--key $key} --name "secret Quokka" --keys "$tmp/$name.f.keys" \
        "$lesson" >/dev/null 2>&1 &
    pids+=($!)
    until_true 30 has_dumps "$tmp/$name.out" 1 || fail "$name: the answer never arrived"
}
clear_words() { grep -caE "$code|secret Quokka|attnstep/1|choice 2" "$1"; }
capture plain
[ "$(clear_words "$tmp/plain.bytes")" -gt 0 ] && [ -z "$key" ] \
    && echo "ok   without encryption the relay reads the code, the name and the answer" \
    || fail "the relay did not see the plain class"
{ kill -9 "${pids[@]}"; wait; } 2>/dev/null
pids=()
capture curve --encrypt
[ -n "$key" ] && [ "$(stat -c %s "$tmp/curve.bytes")" -gt 500 ] && [ "$(clear_words "$tmp/curve.bytes")" -eq 0 ] \
    && echo "ok   --encrypt: $(stat -c %s "$tmp/curve.bytes") bytes through the relay, no code, name or answer in clear" \
    || { fail "the encrypted class's bytes:"; grep -aoE "$code|secret Quokka|attnstep/1[^\n]{0,30}" "$tmp/curve.bytes" | head -3; }

echo "class_scale: $failures failed"
[ "$failures" -eq 0 ]
