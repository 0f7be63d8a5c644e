#!/usr/bin/env bash
# Classroom mode on one machine (issue #14): a headless leader and 30 headless followers on
# loopback through cat_sat (two questions): every follower's screen is checked at every step
# against the leader's (at its own size for some), then the leader is killed and started again
# on the same port and the followers rejoin it by themselves; a wrong code and another lesson
# are refused. Every wait polls for a state with a deadline; the leader's port is the kernel's.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
[ -n "${CLASS_KEEP:-}" ] && trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; echo "kept $tmp"' EXIT || trap cleanup EXIT
lesson=lessons/cat_sat.yaml
followers=${CLASS_FOLLOWERS:-30}
code=0123456789abcdef
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# until SECONDS COMMAND...: polls COMMAND until it succeeds, or fails after SECONDS.
until_true() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.05
    done
}

# Splits a run's output into one file per screen dump: PREFIX.1, PREFIX.2, ... without the
# status line's class words (the leader's "leading :" and a follower's "following") and of the
# title line all but the stage and step (a follower's own score takes room there), which are
# all that may differ.
split_dumps() {
    awk -v p="$2" '/^--- screen/{n++; next} n{print > (p "." n)}' "$1"
    local f; for f in "$2".*; do
        [ -e "$f" ] && sed -i -E -e '/(─ leading :|─ following ─)/s/^(── [^─]*).*/\1/' \
            -e '1s/.* ([^ ]+ · step [0-9]+ of [0-9]+)$/\1/' "$f"
    done
}
dumps() { local n; n=$(grep -c '^--- screen' "$1" 2>/dev/null); echo "${n:-0}"; }

start_leader() {   # start_leader NAME LISTEN SCRIPT
    XDG_STATE_HOME=$tmp/state/$1 ./attnstep --lead --listen "$2" --code $code --per-address 64 --keys "$3" \
        "$lesson" >"$tmp/$1.out" 2>"$tmp/$1.err" &
    pids+=($!)
    leader_pid=$!
    until_true 10 grep -qs 'port [0-9]' "$tmp/$1.err" || { fail "$1 did not start"; cat "$tmp/$1.err"; exit 1; }
    port=$(sed -n 's/.*port \([0-9]*\),.*/\1/p' "$tmp/$1.err" | head -1)
}

# The first leader: a cell selected (j), then every step of the lesson; at each of the two
# questions it waits for every answer and dumps its tally, then reveals (Esc). It dumps once
# every follower shows each place, then holds the class until it is killed.
# One more follower, "late Zoë", joins and never answers: the leader names it as the one it
# waits for (a name with a control character is refused before it is sent, see below).
{
    echo "await joined $((followers + 1))"; echo "await synced"; echo dump
    for key in j n n n n esc n n n n esc n n n n; do
        [ "$key" = esc ] && { echo "await answered $followers"; echo dump; }
        echo "$key"; echo "await synced"; echo dump
    done
    echo "await joined 1000"
} >"$tmp/lead1.keys"
# Followers answer each question when it is open: the first with choice 1 (every third one 2),
# the second with 0.63 (right) or, every other one, 0.5; each dumps its screen once it has
# answered, before the leader reveals.
follower_keys() {
    echo "await question"; [ $(($1 % 3)) -eq 0 ] && echo 2 || echo 1; echo dump
    echo "await question"; echo 0; echo .
    [ $(($1 % 2)) -eq 0 ] && echo 5 || { echo 6; echo 3; }; echo enter; echo dump
}
# Moves a follower's screens dumped while it held its answer (PREFIX.N) to PREFIX.held.K and
# numbers the others (its places) again from 1.
separate_held() {
    local n=1 m=1 k=1
    while [ -e "$1.$n" ]; do
        if grep -q 'wait for the reveal' "$1.$n"; then mv "$1.$n" "$1.held.$k"; k=$((k + 1))
        else [ $n -ne $m ] && mv "$1.$n" "$1.$m"; m=$((m + 1)); fi
        n=$((n + 1))
    done
}
start_leader lead1 127.0.0.1:0 "$tmp/lead1.keys"
: >"$tmp/empty.keys"
follower_pids=()
XDG_STATE_HOME=$tmp/state/late ./attnstep --follow "127.0.0.1:$port" --code $code \
    --name "late Zoë" --keys "$tmp/empty.keys" "$lesson" >/dev/null 2>&1 &
pids+=($!); follower_pids+=($!)
for i in $(seq 1 $followers); do
    size=80x24; [ "$i" -gt $((followers * 5 / 6)) ] && size=100x30   # five at a size of their own
    follower_keys "$i" >"$tmp/f$i.keys"
    XDG_STATE_HOME=$tmp/state/f$i ./attnstep --follow "127.0.0.1:$port" --code $code \
        --name "student $i" --screen $size --keys "$tmp/f$i.keys" "$lesson" \
        >"$tmp/f$i.out" 2>"$tmp/f$i.err" &
    pids+=($!); follower_pids+=($!)
done

expected=16   # the first place, then one for each of the 15 keys
all_dumped() {
    local i; for i in $(seq 1 $followers); do [ "$(dumps "$tmp/f$i.out")" -ge $1 ] || return 1; done
}
until_true 60 all_dumped $((expected + 2)) || fail "not every follower showed the $expected places"
[ "$(dumps "$tmp/lead1.out")" -eq $((expected + 2)) ] || fail "the leader dumped $(dumps "$tmp/lead1.out") screens"
split_dumps "$tmp/lead1.out" "$tmp/T"
awk -v p="$tmp/R" '/^--- screen/{n++; next} n{print > (p "." n)}' "$tmp/lead1.out"   # as shown
# The leader's dumps are its places, with the tallies of the two questions after places 6 and
# 11: T.7 and T.13.
for n in $(seq 1 $expected); do cp "$tmp/T.$((n + (n > 6) + (n > 11)))" "$tmp/L.$n"; done
third=$((followers / 3)); half=$((followers / 2))
grep -qF "answered $followers/$((followers + 1)): 1×$((followers - third)) 2×$third · waiting: late Zoë" "$tmp/R.7" \
    && echo "ok   the leader's tally of the choices: 1×$((followers - third)) 2×$third, waiting for late Zoë" \
    || { fail "the tally of the first question:"; grep answered "$tmp/R.7"; }
# the numbers as a histogram: half at the least (0.5) and half at the largest (0.63), nothing
# between (six bars: the first and last full, four empty), how many are right (the lesson's key
# 0.63 ± 0.01, itself not shown) and the name still waited for (in the median's room), all of
# it in the status line at 80 columns (the tally takes the room of "leading :PORT")
grep -qF "─ answered $followers/$((followers + 1)): 0.5 ▕█    █▏ 0.63 · $((followers - half)) right · waiting: late Zoë ─" "$tmp/R.13" \
    && echo "ok   the leader's histogram of the numbers: 0.5 ▕█    █▏ 0.63 · $((followers - half)) right · waiting: late Zoë" \
    || { fail "the tally of the second question:"; grep answered "$tmp/R.13"; }
# the tally is the leader's alone: no follower's screen ever shows it
! grep -qE '▕|answered [0-9]+/[0-9]+:|[0-9] right ·' "$tmp"/f*.out \
    && echo "ok   no follower's screen shows the tally" || fail "a follower's screen shows the tally"
# above the narration: what the leader's screen shows of the lesson (a follower's own answer
# and verdict are in the narration, its own)
above() { sed '/^── /,$d' "$1"; }
same_screens=0 same_steps=0
held_hidden=0
for i in $(seq 1 $followers); do
    split_dumps "$tmp/f$i.out" "$tmp/F$i"
    separate_held "$tmp/F$i"
    # answered but not yet revealed: the question still hides the stage, and no verdict
    for h in 1 2; do
        [ -e "$tmp/F$i.held.$h" ] && grep -q '── question' "$tmp/F$i.held.$h" \
            && ! grep -qE 'Right|Not quite' "$tmp/F$i.held.$h" && held_hidden=$((held_hidden + 1)) \
            || fail "follower $i, answer $h: not held back until the reveal"
    done
    for n in $(seq 1 $expected); do
        if [ "$i" -le $((followers * 5 / 6)) ]; then   # the leader's size: the same screen, to the character
            cmp -s <(above "$tmp/L.$n") <(above "$tmp/F$i.$n") && same_screens=$((same_screens + 1)) \
                || { fail "follower $i, place $n differs from the leader's:"; diff "$tmp/L.$n" "$tmp/F$i.$n" | head -8; }
        else   # its own size: the same step, and the question hidden alike
            a=$(grep -o 'step [0-9]* of [0-9]*' "$tmp/L.$n" | head -1)
            b=$(grep -o 'step [0-9]* of [0-9]*' "$tmp/F$i.$n" | head -1)
            qa=$(grep -c -- '── question' "$tmp/L.$n"); qb=$(grep -c -- '── question' "$tmp/F$i.$n")
            [ -n "$a" ] && [ "$a" = "$b" ] && [ "$qa" = "$qb" ] && same_steps=$((same_steps + 1)) \
                || fail "follower $i (100x30), place $n: '$b' (question $qb), the leader '$a' (question $qa)"
        fi
    done
done
echo "ok   $same_screens follower screens equal to the leader's, $same_steps at their own size on the leader's step"
echo "ok   $held_hidden answers held back (question still open, no verdict) until the leader revealed"
# Once the leader reveals, each follower sees the answer and whether it was right: the same
# verdict for the same answer, and another for the other one.
verdicts() {
    local i v; for i in $(seq 1 $followers); do
        v=$(grep -oE '(Right|Not quite)' "$tmp/F$i.$1" | head -1)
        echo "$(($i % $2 == 0)) ${v:-none}"
    done | sort -u | tr '\n' ';'
}
v1=$(verdicts 7 3) v2=$(verdicts 12 2)
[ "$v1" = "0 Not quite;1 Right;" ] || [ "$v1" = "0 Right;1 Not quite;" ] \
    && echo "ok   first question: each follower sees its verdict ($v1)" || fail "first question's verdicts: $v1"
[ "$v2" = "0 Not quite;1 Right;" ] || [ "$v2" = "0 Right;1 Not quite;" ] \
    && echo "ok   second question: each follower sees its verdict ($v2)" || fail "second question's verdicts: $v2"
# the follower's own words after the reveal name both answers as its keys did: follower 3 pressed
# 2 (sat) where the key is 1 (cat)
grep -qF "you answered 2 (sat): not quite, it is 1 (cat)" "$tmp/F3.7" \
    && echo "ok   a wrong choice's follower is told its answer and the key by their numbers" \
    || { fail "follower 3's words after the reveal:"; grep -h "you answered" "$tmp/F3.7"; }
! cmp -s "$tmp/L.1" "$tmp/L.2" && grep -q 'step 1 of 13' "$tmp/L.2" \
    && grep -q 'step 5 of 13' "$tmp/L.6" && grep -q '── question' "$tmp/L.6" \
    && grep -q 'step 9 of 13' "$tmp/L.11" && grep -q '── question' "$tmp/L.11" \
    && grep -q 'step 13 of 13' "$tmp/L.16" \
    && echo "ok   the leader selected a cell and went through both questions to the last step" \
    || fail "the leader's walk is not the expected one"

# The leader dies without a word; a new one on the same port and code gets the class back.
{ kill -9 "$leader_pid"; wait "$leader_pid"; } 2>/dev/null
printf 'await joined %d\nawait synced\ndump\nn\nn\nawait synced\ndump\n' $((followers + 1)) >"$tmp/lead2.keys"
start_leader lead2 "127.0.0.1:$port" "$tmp/lead2.keys"
status_all=0
for p in "${follower_pids[@]}"; do
    wait "$p"; s=$?; [ $s -eq 0 ] || status_all=$s
done
wait "$leader_pid" || fail "the second leader exited $?"
[ $status_all -eq 0 ] && echo "ok   every follower rejoined the restarted leader and left with it (exit 0)" \
    || fail "a follower exited $status_all"
split_dumps "$tmp/lead2.out" "$tmp/M"
rejoined=0
for i in $(seq 1 $((followers * 5 / 6))); do
    n=$(( $(dumps "$tmp/f$i.out") - 3 ))   # the last place taken (the last dump is at exit)
    split_dumps "$tmp/f$i.out" "$tmp/G$i"
    separate_held "$tmp/G$i"
    cmp -s "$tmp/M.2" "$tmp/G$i.$n" && rejoined=$((rejoined + 1)) || fail "follower $i does not show the new leader's place"
done
grep -q 'step 3 of 13' "$tmp/M.2" && echo "ok   $rejoined followers show the restarted leader's step" \
    || fail "the restarted leader is not at step 3"

# Refusals: a wrong code (64), another lesson (65, naming both hashes).
printf 'await joined 1000\n' >"$tmp/hold.keys"
start_leader lead3 127.0.0.1:0 "$tmp/hold.keys"
timeout 20 ./attnstep --follow "127.0.0.1:$port" --code ffffffffffffffff --keys "$tmp/empty.keys" \
    "$lesson" >/dev/null 2>"$tmp/code.err"
s=$?; [ $s -eq 64 ] && grep -qx 'attnstep: --follow: the leader refused: wrong class code' "$tmp/code.err" \
    && echo "ok   a wrong class code is refused (64)" || { fail "wrong code: status $s"; cat "$tmp/code.err"; }
# a code one digit too long (a paste with one character more) is refused before any join
timeout 20 ./attnstep --follow "127.0.0.1:$port" --code 0123456789abcdef0 --keys "$tmp/empty.keys" \
    "$lesson" >/dev/null 2>"$tmp/long.err"
s=$?; [ $s -eq 64 ] && grep -qx 'attnstep: --code: a class code is 16 hex digits, as the leader printed it' "$tmp/long.err" \
    && echo "ok   a class code of 17 digits is refused (64) before joining" || { fail "17-digit code: status $s"; cat "$tmp/long.err"; }
timeout 20 ./attnstep --follow "127.0.0.1:$port" --code $code --keys "$tmp/empty.keys" \
    lessons/no_scale.yaml >/dev/null 2>"$tmp/hash.err"
s=$?; [ $s -eq 65 ] && grep -qE "^attnstep: --follow: the leader's lesson is not this one: its text has hash [0-9a-f]{16}, this lesson's [0-9a-f]{16} \(open the same file\)$" "$tmp/hash.err" \
    && echo "ok   another lesson is refused naming both hashes (65)" || { fail "another lesson: status $s"; cat "$tmp/hash.err"; }
{ kill -9 "$leader_pid"; wait "$leader_pid"; } 2>/dev/null

# Issue 26: one follower per name: a second "twin" is refused while the first is there.
printf 'await joined 1\ndump\nawait joined 1000\n' >"$tmp/lead5.keys"
start_leader lead5 127.0.0.1:0 "$tmp/lead5.keys"
XDG_STATE_HOME=$tmp/state/twin ./attnstep --follow "127.0.0.1:$port" --code $code --name twin \
    --keys "$tmp/empty.keys" "$lesson" >/dev/null 2>&1 &
twin_pid=$!; pids+=($twin_pid)
until_true 20 grep -qs '^--- screen' "$tmp/lead5.out" || fail "the first twin did not join"
timeout 20 ./attnstep --follow "127.0.0.1:$port" --code $code --name twin --keys "$tmp/empty.keys" \
    "$lesson" >/dev/null 2>"$tmp/twin.err"; s=$?
[ $s -eq 64 ] && grep -qxF "attnstep: --follow: the leader refused: another follower has the name 'twin' (choose another with --name)" "$tmp/twin.err" \
    && echo "ok   a second follower named twin is refused (64)" || { fail "a taken name: status $s"; cat "$tmp/twin.err"; }
{ kill -9 "$twin_pid" "$leader_pid"; wait "$twin_pid" "$leader_pid"; } 2>/dev/null

# Issue 26: --listen 0:PORT binds every address, and the banner says so; a class off loopback
# is encrypted, and the banner gives the key followers need.
printf 'await joined 1000\n' >"$tmp/hold.keys"
XDG_STATE_HOME=$tmp/state/every ./attnstep --lead --listen 0:0 --code $code --keys "$tmp/hold.keys" \
    "$lesson" >/dev/null 2>"$tmp/every.err" &
every_pid=$!; pids+=($every_pid)
until_true 10 grep -qs 'students run' "$tmp/every.err"
grep -qE '^attnstep: leading on every address of this machine \(0\.0\.0\.0\), port [0-9]+, class code 0123456789abcdef$' "$tmp/every.err" \
    && grep -qE '^attnstep: students run: attnstep --follow HOST:[0-9]+ --code 0123456789abcdef --key [0-9a-f]{64} LESSON$' "$tmp/every.err" \
    && echo "ok   --listen 0:PORT: the banner says every address, and gives the key" \
    || { fail "the banner of --listen 0:0:"; cat "$tmp/every.err"; }
{ kill -9 "$every_pid"; wait "$every_pid"; } 2>/dev/null

# Issue 24: a follower that goes back (p) while the leader waits on a question, then follows
# again (f), finds the question still asked: never its answer, never a verdict.
printf 'await joined 1\nawait synced\nn\nn\nn\nn\nawait synced\nawait joined 1000\n' >"$tmp/lead4.keys"
start_leader lead4 127.0.0.1:0 "$tmp/lead4.keys"
printf 'await question\np\ndump\nf\nawait question\ndump\n' >"$tmp/back.keys"
XDG_STATE_HOME=$tmp/state/back ./attnstep --follow "127.0.0.1:$port" --code $code --name back \
    --keys "$tmp/back.keys" "$lesson" >"$tmp/back.out" 2>&1 &
back_pid=$!; pids+=($back_pid)
back_done() { [ "$(grep -c '── question' "$tmp/back.out")" -ge 2 ] && grep -q 'step 4 of 13' "$tmp/back.out"; }
until_true 30 back_done || fail "the follower did not go back and follow again"
{ kill -9 "$back_pid" "$leader_pid"; wait "$back_pid" "$leader_pid"; } 2>/dev/null
split_dumps "$tmp/back.out" "$tmp/B"
last=$(dumps "$tmp/back.out")
grep -q 'step 5 of 13' "$tmp/B.$last" && grep -q '── question' "$tmp/B.$last" \
    && ! grep -qE 'Answer:|Right|Not quite' "$tmp/back.out" \
    && echo "ok   p then f during the leader's open question: still asked, its answer never shown" \
    || { fail "p then f during an open question:"; cat "$tmp/B.$last"; }

# Bad command lines.
says() {   # says STATUS MESSAGE ARGS...
    local want_status=$1 want=$2; shift 2
    local said; said=$(timeout 10 ./attnstep "$@" 2>&1 >/dev/null </dev/null | head -1); local s=${PIPESTATUS[0]}
    said=$(timeout 10 ./attnstep "$@" 2>&1 >/dev/null </dev/null | head -1)
    timeout 10 ./attnstep "$@" >/dev/null 2>&1 </dev/null; s=$?
    [ "$s" -eq "$want_status" ] && [ "$said" = "$want" ] && echo "ok   $want" \
        || fail "status $s (expected $want_status): '$said', expected '$want'"
}
says 64 "attnstep: --lead and --follow: choose one" --lead --follow 127.0.0.1:1 --code $code --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --listen goes with --lead" --listen 127.0.0.1:0 --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --follow: needs the class code (--code)" --follow 127.0.0.1:1 --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --code: a class code is 16 hex digits, as the leader printed it" --follow 127.0.0.1:1 --code 123 --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --lead: --listen takes ADDRESS:PORT, e.g. 127.0.0.1:7340 (port 0: any free one)" --lead --listen nowhere --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --follow: --follow takes HOST:PORT, e.g. 127.0.0.1:7340" --follow 'bad host' --code $code --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --follow: --name takes 1 to 32 bytes of text, without control characters or a space at either end" --follow 127.0.0.1:1 --code $code --name "$(printf 'a\033[2Jb')" --keys "$tmp/empty.keys" "$lesson"

says 64 "attnstep: --key goes with --follow" --key 00 --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --per-address and --encrypt go with --lead" --encrypt --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --follow: --key takes the leader's key, 64 hex digits, as it printed it" --follow 127.0.0.1:1 --code $code --key 12 --keys "$tmp/empty.keys" "$lesson"
says 64 "attnstep: --follow: a leader on another machine is followed with its key: add --key KEY as the leader printed it" --follow 192.0.2.1:7340 --code $code --keys "$tmp/empty.keys" "$lesson"

echo "class: $failures failed"
[ "$failures" -eq 0 ]
