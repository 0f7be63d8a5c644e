#!/usr/bin/env bash
# The what-if section of tests/BENCH.md (issue 29): an edit's redraw at n = 1024, d_model 512,
# 8 heads, timed by the UI itself (ATTNSTEP_KEY_TIMES: each Enter of tests/bench/whatif.keys,
# from the key read to the frame drawn) for an embedding, a query weight and an output weight.
# Prints the section (markdown) on stdout; with --write, puts it in place of the section in
# tests/BENCH.md (`make bench-whatif`); `make bench` (tests/bench/run.sh) runs it too.
# WHATIF_ROUNDS (default 3) runs of the eleven edits each; the load is written beside them.
set -eu
cd "$(dirname "$0")/../.."
out=build/bench
rounds=${WHATIF_ROUNDS:-3}
lesson=tests/bench/long_1024.yaml keys=tests/bench/whatif.keys screen=200x60
goal_ms=150
mkdir -p "$out"
[ -x ./attnstep ] || { echo "whatif.sh: build ./attnstep first (make)" >&2; exit 1; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# "the number edited | recomputed from | --at": the three kinds of edit
cases=(
    "an embedding|input: every stage, every head|input[w0000,0]"
    "a query weight, W_Q[0,0]|Q: head 1's scores, softmax and context, then concat and output|Q[w0000,0]"
    "an output weight, W_O[0,0]|output|output[w0000,0]"
)
rows="" all_met=yes
for c in "${cases[@]}"; do
    IFS='|' read -r what from at <<< "$c"
    : > "$out/whatif_times.txt"
    for round in $(seq 1 "$rounds"); do
        echo "what if? $at, round $round of $rounds" >&2
        rm -rf "$out/whatif_state" && mkdir -p "$out/whatif_state"
        rm -f "$out/whatif.tsv"
        ATTNSTEP_KEY_TIMES="$out/whatif.tsv" LANG=C.UTF-8 XDG_STATE_HOME="$out/whatif_state" \
            ./attnstep --keys "$keys" --screen "$screen" --at "$at" "$lesson" > /dev/null
        awk -F'\t' '$1 == "Enter" && $2 == "edit" { print $3 }' "$out/whatif.tsv" \
            >> "$out/whatif_times.txt"
    done
    # count, median (the lower middle), best, worst, in µs
    read -r n median best worst < <(sort -n "$out/whatif_times.txt" | awk '{ v[NR] = $1 }
        END { printf "%d %d %d %d\n", NR, v[int((NR + 1) / 2)], v[1], v[NR] }')
    ms() { awk -v us="$1" 'BEGIN { printf "%.0f ms", us / 1000 }'; }
    met=$([ "$median" -lt $((goal_ms * 1000)) ] && echo met || echo "not met")
    [ "$met" = met ] || all_met=no
    rows="$rows| $what (\`--at '$at'\`) | $from | $n | $(ms "$median") | $(ms "$best") | $(ms "$worst") | $met |
"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cores=$(nproc)
section="## What if? An edit at n = 1024, d_model = 512, 8 heads (issue 29)

Written by \`tests/bench/whatif.sh\` (\`make bench\`, or \`make bench-whatif\` for this section
alone) on $(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores, load average $load_before before and
$load_after after (1, 5 and 15 minutes), default threads. Each Enter of the edit line
(\`$keys\`: eleven edits, $rounds runs), from the key read to the frame drawn: the edit applied,
what it reaches recomputed (\`trace_recompute_changes\`: from the first stage that reads the
number, of a per-head stage only the heads it reaches), the marks, the redraw; the extremes of a
changed matrix are measured when it is shown. The goal: a median under $goal_ms ms.

| the number edited | recomputed | edits | median | best | worst | $goal_ms ms |
| --- | --- | --- | --- | --- | --- | --- |
${rows}
An embedding reaches every head (its token's query, key and value, so every row's softmax): its
time is the forward pass's from the input. The worst of each row is a run's first edit, which
also copies the trace (the numbers before any edit, for the marks).

    ATTNSTEP_KEY_TIMES=times.tsv ./attnstep --keys $keys --screen $screen \\
        --at 'input[w0000,0]' $lesson   # and Q[w0000,0], output[w0000,0]"
if [ "${1:-}" = --write ]; then
    python3 - "$section" <<'PY'
import sys
section = sys.argv[1].rstrip("\n") + "\n"
path = "tests/BENCH.md"
text = open(path, encoding="utf-8").read()
start = text.find("## What if? An edit at n = 1024")
if start < 0:
    text = text.rstrip("\n") + "\n\n" + section
else:
    end = text.find("\n## ", start + 1)
    text = text[:start] + section + ("" if end < 0 else text[end:])
open(path, "w", encoding="utf-8").write(text)
PY
    echo "wrote the what-if section of tests/BENCH.md (goal met for all three: $all_met)" >&2
else
    printf '%s\n' "$section"
fi
