#!/usr/bin/env bash
# `make bench`: times the attention core's whole trace at n = 512, d_model = 512, 8 heads with its
# reference loops and with the fast kernels, next to numpy (OpenBLAS) and PyTorch when installed,
# measures peak memory at n = 1024, times the UI's keypresses on the 1024-token lesson and its
# start-up on cat_sat (through ATTNSTEP_KEY_TIMES, see src/ui/ui.h), and rewrites tests/BENCH.md.
# Rounds (default 5) alternate the programs so that load from other work hits each alike.
set -eu
cd "$(dirname "$0")/../.."
out=build/bench
rounds=${BENCH_ROUNDS:-5}
mkdir -p "$out"
CC=${CC:-cc}
flags="-std=c11 -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion"
flags="$flags -D_POSIX_C_SOURCE=200809L -O2 -g -ffp-contract=off -Isrc/core"
python=/usr/bin/python3

# 1. one program times both: the core as it is (its kernels), and with `reference` the textbook
#    loops of tests/textbook.c, which tests/test_kernels.c holds the kernels and the trace to, so
#    that the row cannot rot while the tests pass.
$CC $flags -Itests -o "$out/bench_trace" tests/bench/bench_trace.c tests/textbook.c src/core/*.c \
    src/core/ops/*.c -lm -lpthread
bench="$out/bench_trace"
# the kernels alone at the same shapes, and the processor's peak (tests/bench/peak.c)
$CC $flags -o "$out/bench_kernels" tests/bench/bench_kernels.c src/core/kernels*.c -lm -lpthread
$CC $flags -o "$out/peak" tests/bench/peak.c
kernels_note="src/core as it is"
reference_note="tests/textbook.c (the fused loops tests/test_kernels.c holds the kernels and the trace to), 1 thread"

# Prints the value of key from key=value lines in file.
value() { sed -n "s/^$2=//p" "$1" | head -n 1; }
# The middle of the numbers given (the lower middle for an even count).
middle() {
    printf '%s\n' "$@" | grep -v '^$' | sort -g \
        | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
# The smallest of the numbers given.
smallest() { printf '%s\n' "$@" | grep -v '^$' | sort -g | head -n 1; }
ms() { [ -n "$1" ] && awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }' || echo "—"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' \
          || echo "—"; }
mib() { [ -n "$1" ] && awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }' || echo "—"; }
# The layer's flops at n = d_model = 512: two a fused multiply-add, the four projections
# (4·n·d²) and QKᵀ and weights·V (2·n²·d); the softmax's exponentials are not counted.
flops=$(awk 'BEGIN { n = 512; d = 512; printf "%.0f", 2 * (4 * n * d * d + 2 * n * n * d) }')
# "12.3 ms, 98.0 GFLOP/s, 83 % of peak" for a time in seconds on $2 cores
rate() {
    [ -n "$1" ] || { echo "—"; return; }
    awk -v s="$1" -v f="$flops" -v p="${peak_gflops:-}" -v c="${2:-1}" 'BEGIN {
        printf "%.1f GFLOP/s", f / s * 1e-9
        if (p != "") printf ", %.0f %% of %s peak", 100 * f / s * 1e-9 / (p * c), (c == 1 ? "a core'"'"'s" : c " cores'"'"'")
    }'
}

# 0. the processor's peak on one core, measured: its clock, the FMA's latency and how many
#    vector FMAs it retires a cycle (tests/bench/peak.c)
"$out/peak" > "$out/peak.txt"
peak_gflops=$(value "$out/peak.txt" peak_gflops)
peak_line=$(awk -F= '{ v[$1] = $2 } END {
    if (v["peak_missing"] != "") { print "not measured (" v["peak_missing"] ")"; exit }
    printf "%.1f GFLOP/s a core = %s GHz (measured: dependent integer additions) × %d doubles (%s) × 2 flops × %d FMA units (measured: %s vector FMAs a cycle, each of %s cycles latency); %s GFLOP/s reached by twelve independent FMA chains",
        v["peak_gflops"], v["clock_ghz"], v["lanes"], v["vector"], v["fma_units"], v["fma_per_cycle"], v["fma_latency_cycles"], v["measured_fma_gflops"] }' "$out/peak.txt")

# 2. what else is running, before; and the figures of the run before, to see if they reproduce
load_before=$(cut -d' ' -f1-3 /proc/loadavg) uptime_before=$(uptime)
# a figure "| name | 12.3 ms |" of the previous tests/BENCH.md, in seconds ("" when absent)
previous_ms() {
    [ -f tests/BENCH.md ] || return 0
    grep -F "| $1 | " tests/BENCH.md | head -n 1 | sed -n 's/^| [^|]* | \([0-9.]*\) ms |.*/\1/p' \
        | awk 'NF { printf "%.6f", $1 / 1000 }'
}
rm -f "$out/previous.md"
if [ -f tests/BENCH.md ]; then cp tests/BENCH.md "$out/previous.md"; fi
prev_date=$( [ -f tests/BENCH.md ] && sed -n 's/^Written by .* on \([0-9-]* [0-9:]* UTC\).*/\1/p' tests/BENCH.md | head -n 1 || true)
prev_ker=$(previous_ms "core, kernels, 1 thread")
# the runs before 2026-12-01 timed every trace with its allocation and page faults
prev_method="the same method"
grep -qs "a whole trace_compute on fresh memory" tests/BENCH.md \
    || prev_method="another method (the allocation and page faults timed with the computation), so the core's figures are not comparable"
numpy_now=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)
prev_np2=$(previous_ms "numpy $numpy_now (OpenBLAS), 2 threads")
# files written before 2026-12-01 named the row differently
[ -n "$prev_np2" ] || prev_np2=$(previous_ms "numpy $numpy_now, 2 threads (OpenBLAS default)")
# the second frame of top: CPU use over the last half second, not since each process started
busiest() {
    top -b -n 2 -d 0.5 -o %CPU -w 200 2>/dev/null | awk '/^top -/ { frame++ } frame == 2 && $1 ~ /^[0-9]+$/ \
        && n < 5 && $9 + 0 >= 5 { printf "%s%s %s%%", sep, $12, $9; sep = ", "; n++ }'
}
others_before=$(busiest)

# 3. the rounds at n = 512
ref_best=() ker_best=() kerN_best=() np1_best=() np2_best=() torch_best=() torch2_best=()
torch2_med=() kernel_lines=""
# OpenBLAS 0.3.21 does not know every processor with AVX-512 (a Zen 5 gets its Haswell kernels,
# AVX2): where the processor has AVX-512 and OpenBLAS chose otherwise, numpy and PyTorch also
# run on its AVX-512 kernels (OPENBLAS_CORETYPE=SkylakeX), and the targets take the faster.
np1x_best=() torchx_best=() np1x_med=() torchx_med=() forced=""
ker_medians="" kerN_medians="" np1_medians="" np2_medians="" torch_medians="" torch2_medians=""
np1_cores="" np2_cores="" torch_cores="" ker_cores="" kerN_cores=""
ker_med=() kerN_med=() np1_med=() np2_med=() torch_med=()
ker_alloc=() ker_faults="" ker_path="" ref_diff=""
threads=2   # the targets compare two threads with numpy's two
for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    if [ "$round" -eq 1 ]; then
        "$bench" 512 512 8 3 reference | tr ' ' '\n' > "$out/reference.txt"
        ref_best+=("$(value "$out/reference.txt" best_s)")
        ref_diff=$(value "$out/reference.txt" max_output_diff)
    fi
    ATTNSTEP_THREADS=1 "$bench" 512 512 8 11 | tr ' ' '\n' > "$out/kernels.txt"
    ker_best+=("$(value "$out/kernels.txt" best_s)")
    ker_medians="$ker_medians $(ms "$(value "$out/kernels.txt" median_s)")"
    ker_med+=("$(value "$out/kernels.txt" median_s)")
    ker_alloc+=("$(value "$out/kernels.txt" alloc_best_s)")
    ker_faults="$ker_faults $(value "$out/kernels.txt" faults_per_trace)"
    ker_path=$(value "$out/kernels.txt" path)
    ATTNSTEP_THREADS=$threads "$bench" 512 512 8 11 | tr ' ' '\n' \
        > "$out/kernels_threads.txt"
    kerN_best+=("$(value "$out/kernels_threads.txt" best_s)")
    kerN_medians="$kerN_medians $(ms "$(value "$out/kernels_threads.txt" median_s)")"
    kerN_med+=("$(value "$out/kernels_threads.txt" median_s)")
    ker_cores="$ker_cores $(value "$out/kernels.txt" cores)"
    kerN_cores="$kerN_cores $(value "$out/kernels_threads.txt" cores)"
    if [ -x "$python" ]; then
        "$python" tests/bench/compare.py numpy 512 512 8 11 > "$out/python.txt" 2>&1 || true
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
            "$python" tests/bench/compare.py torch 512 512 8 11 >> "$out/python.txt" 2>&1 || true
        np1_best+=("$(value "$out/python.txt" numpy_threads_1_best_s)")
        np1_medians="$np1_medians $(ms "$(value "$out/python.txt" numpy_threads_1_median_s)")"
        np2_best+=("$(value "$out/python.txt" numpy_threads_2_best_s)")
        torch_best+=("$(value "$out/python.txt" torch_best_s)")
        np2_medians="$np2_medians $(ms "$(value "$out/python.txt" numpy_threads_2_median_s)")"
        torch_medians="$torch_medians $(ms "$(value "$out/python.txt" torch_median_s)")"
        np1_med+=("$(value "$out/python.txt" numpy_threads_1_median_s)")
        np2_med+=("$(value "$out/python.txt" numpy_threads_2_median_s)")
        torch_med+=("$(value "$out/python.txt" torch_median_s)")
        OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 \
            "$python" tests/bench/compare.py torch 512 512 8 11 2 >> "$out/python.txt" 2>&1 || true
        torch2_best+=("$(value "$out/python.txt" torch_threads_2_best_s)")
        torch2_med+=("$(value "$out/python.txt" torch_threads_2_median_s)")
        torch2_medians="$torch2_medians $(ms "$(value "$out/python.txt" torch_threads_2_median_s)")"
        np1_cores="$np1_cores $(value "$out/python.txt" numpy_threads_1_cores)"
        if grep -q -w avx512f /proc/cpuinfo \
            && ! value "$out/python.txt" numpy_blas | grep -q -E 'SkylakeX|Cooperlake|SapphireRapids'; then
            forced="SkylakeX"
            OPENBLAS_CORETYPE=$forced "$python" tests/bench/compare.py numpy 512 512 8 11 \
                > "$out/python_forced.txt" 2>&1 || true
            OPENBLAS_CORETYPE=$forced OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
                "$python" tests/bench/compare.py torch 512 512 8 11 >> "$out/python_forced.txt" 2>&1 || true
            np1x_best+=("$(value "$out/python_forced.txt" numpy_threads_1_best_s)")
            np1x_med+=("$(value "$out/python_forced.txt" numpy_threads_1_median_s)")
            torchx_best+=("$(value "$out/python_forced.txt" torch_best_s)")
            torchx_med+=("$(value "$out/python_forced.txt" torch_median_s)")
            forced_blas=$(value "$out/python_forced.txt" numpy_blas)
        fi
        np2_cores="$np2_cores $(value "$out/python.txt" numpy_threads_2_cores)"
        torch_cores="$torch_cores $(value "$out/python.txt" torch_cores)"
    fi
    # the kernels alone, one thread, at the layer's shapes
    kernel_lines="$kernel_lines
$(ATTNSTEP_THREADS=1 "$out/bench_kernels" 512 512 8 | grep '^kernel=')"
    # and the AVX2 code that AVX2-only processors run, where this one runs AVX-512
    if ATTNSTEP_THREADS=1 "$out/bench_kernels" 512 512 8 avx2 > "$out/kernels_avx2.txt" \
        && grep -q '^path=avx2+fma' "$out/kernels_avx2.txt" && [ "$ker_path" != "avx2+fma" ]; then
        kernel_lines="$kernel_lines
$(grep '^kernel=' "$out/kernels_avx2.txt" | sed 's/^kernel=\([a-z]*\)/kernel=\1,_the_AVX2_code/')"
    fi
done
# the peak again after the rounds: the clock moves with the load of the other core
"$out/peak" > "$out/peak_end.txt"
peak_end=$(value "$out/peak_end.txt" peak_gflops) clock_end=$(value "$out/peak_end.txt" clock_ghz)
ref=$(smallest "${ref_best[@]:-}") ker=$(smallest "${ker_best[@]:-}")
torch2=$(smallest "${torch2_best[@]:-}") torch2_m=$(middle "${torch2_med[@]:-}")
# one row per kernel: its best time of the rounds, its rate and its share of a core's peak
kernel_rows=$(printf '%s\n' "$kernel_lines" | awk -v p="${peak_gflops:-}" '
    /^kernel=/ { split($1, k, "="); split($2, t, "="); name = k[2]; s = t[2] + 0
                 split($3, r, "="); if (!(name in best) || s < best[name]) { best[name] = s; rate[name] = r[2]; unit[name] = r[1] }
                 if (!(name in order)) { order[name] = ++count; names[count] = name } }
    END { for (i = 1; i <= count; i++) { n = names[i]; label = n; gsub("_", " ", label)
              if (unit[n] == "gflops")
                  printf "| %s | %.2f ms | %.1f GFLOP/s | %s |\n", label, best[n] * 1000, rate[n], (p != "" ? sprintf("%.0f %%", 100 * rate[n] / p) : "—")
              else
                  printf "| %s | %.2f ms | %.3f G exponentials/s | — |\n", label, best[n] * 1000, rate[n] } }')
ker_a=$(smallest "${ker_alloc[@]:-}")
kerN=$(smallest "${kerN_best[@]:-}")
ker_m=$(middle "${ker_med[@]:-}") kerN_m=$(middle "${kerN_med[@]:-}")
np1_m=$(middle "${np1_med[@]:-}") np2_m=$(middle "${np2_med[@]:-}")
torch_m=$(middle "${torch_med[@]:-}")
np1=$(smallest "${np1_best[@]:-}") np2=$(smallest "${np2_best[@]:-}")
torch=$(smallest "${torch_best[@]:-}")
np1x=$(smallest "${np1x_best[@]:-}") torchx=$(smallest "${torchx_best[@]:-}")
np1x_m=$(middle "${np1x_med[@]:-}") torchx_m=$(middle "${torchx_med[@]:-}")
# what the targets compare with: the faster of OpenBLAS's own choice and its AVX-512 kernels
np1_t=$(smallest "$np1" "$np1x") torch_t=$(smallest "$torch" "$torchx")
np1_tm=$(smallest "$np1_m" "$np1x_m") torch_tm=$(smallest "$torch_m" "$torchx_m")
numpy_version=$(value "$out/python.txt" numpy_version 2>/dev/null || true)
numpy_blas=$(value "$out/python.txt" numpy_blas 2>/dev/null || true)
torch_version=$(value "$out/python.txt" torch_version 2>/dev/null || true)
numpy_missing=$(value "$out/python.txt" numpy_missing 2>/dev/null || true)
torch_missing=$(value "$out/python.txt" torch_missing 2>/dev/null || true)
[ -x "$python" ] || numpy_missing="no $python"

# 4. peak memory at n = 1024, each core in a fresh process
ref_rss=$("$bench" 1024 512 8 1 reference | tr ' ' '\n' | sed -n 's/^peak_rss_kb=//p')
ATTNSTEP_THREADS=$threads "$bench" 1024 512 8 3 | tr ' ' '\n' > "$out/kernels_1024.txt"
ker_rss=$(value "$out/kernels_1024.txt" peak_rss_kb)
ker_1024=$(value "$out/kernels_1024.txt" best_s)

# 5. the program's own view: --stats and --cost of ./attnstep
program=./attnstep program_note="./attnstep"
stats_text="(not run)" cost_text="(not run)"
if [ -n "$program" ]; then
    stats_text=$("$program" --stats tests/bench/long_1024.yaml 2>&1 || true)
    cost_text=$("$program" --cost 2>&1 || true)
fi

# 6. the UI: every keypress of tests/bench/ui_latency.keys on the 1024-token lesson at 200x60,
#    timed by the UI itself (ATTNSTEP_KEY_TIMES: from reading the key to the frame refreshed into
#    the in-memory screen), once per round; then start-up to the first frame of cat_sat.
ui_lesson=tests/bench/long_1024.yaml ui_keys=tests/bench/ui_latency.keys ui_screen=200x60
ui_rounds=$rounds
ui_others=$(busiest) ui_load=$(cut -d' ' -f1-3 /proc/loadavg)
rm -f "$out"/ui_times_*.tsv
for round in $(seq 1 "$ui_rounds"); do
    echo "UI keys, round $round of $ui_rounds" >&2
    # each round opens the lesson at its first step: progress kept in a fresh folder
    rm -rf "$out/state" && mkdir -p "$out/state"
    ATTNSTEP_KEY_TIMES="$out/ui_times_$round.tsv" LANG=C.UTF-8 XDG_STATE_HOME="$out/state" \
        ./attnstep --keys "$ui_keys" --screen "$ui_screen" "$ui_lesson" > /dev/null
done
cat "$out"/ui_times_*.tsv | grep -v '^first-frame' > "$out/ui_keys.tsv"
ui_key_count=$(wc -l < "$out/ui_keys.tsv")
ui_script_keys=$(grep -c -v -E '^[[:space:]]*(#|$|dump)' "$ui_keys")
# One table row per kind of key (median is the lower middle, as above), then every key together.
per_kind() { # $1: the kinds' column with "+scroll" kept apart (1) or merged (0)
    awk -F'\t' -v keep="$1" '{ k = $2; if (!keep) sub(/\+scroll$/, "", k); print k "\t" $3 }' \
        "$out/ui_keys.tsv" | sort -t"$(printf '\t')" -k1,1 -k2,2n \
        | awk -F'\t' 'function row() { if (n) printf "| %s | %d | %.2f ms | %.2f ms |\n", kind, n, \
                           v[int((n + 1) / 2)] / 1000, v[n] / 1000 }
                      $1 != kind { row(); kind = $1; n = 0 } { v[++n] = $2 } END { row() }'
}
ui_rows=$(per_kind 1)
ui_all=$(cut -f3 "$out/ui_keys.tsv" | sort -n | awk '{ v[NR] = $1 } END { if (NR)
    printf "%d %d", v[int((NR + 1) / 2)], v[NR] }')
ui_median=${ui_all% *} ui_worst=${ui_all#* }
ui_load_us=$(cat "$out"/ui_times_*.tsv | awk -F'\t' '$1 == "first-frame" { print $3 }' | sort -n \
    | awk '{ v[NR] = $1 } END { if (NR) printf "%.0f ms (best) to %.0f ms", v[1] / 1000, v[NR] / 1000 }')

startup_runs=${BENCH_STARTUP_RUNS:-50}
echo "start-up of cat_sat, $startup_runs runs" >&2
printf 'dump\n' > "$out/startup.keys"
: > "$out/startup.txt"
for run in $(seq 1 "$startup_runs"); do
    rm -f "$out/startup.tsv"
    launched=$EPOCHREALTIME   # bash's own clock: no process started to read it
    ATTNSTEP_KEY_TIMES="$out/startup.tsv" LANG=C.UTF-8 \
        ./attnstep --keys "$out/startup.keys" --screen 80x24 lessons/cat_sat.yaml > /dev/null
    ended=$EPOCHREALTIME
    # launch -> first frame (wall clock), ui_run's entry -> first frame, launch -> exit; in µs
    awk -F'\t' -v s="$launched" -v e="$ended" '$1 == "first-frame" {
        printf "%.0f %d %.0f\n", ($4 - s) * 1e6, $3, (e - s) * 1e6 }' "$out/startup.tsv" \
        >> "$out/startup.txt"
done
# best, median and worst of column $1 of startup.txt, in ms
startup_col() {
    cut -d' ' -f"$1" "$out/startup.txt" | sort -n | awk '{ v[NR] = $1 } END { if (NR)
        printf "%.2f ms | %.2f ms | %.2f ms", v[1] / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'
}
startup_n=$(wc -l < "$out/startup.txt")
startup_median=$(cut -d' ' -f1 "$out/startup.txt" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
startup_worst=$(cut -d' ' -f1 "$out/startup.txt" | sort -n | tail -n 1)
under() { # $1 measured µs, $2 bound µs
    [ -n "$1" ] && [ -n "$2" ] || { echo "not measured"; return; }
    [ "$1" -lt "$2" ] && echo "met" || echo "not met"
}

load_after=$(cut -d' ' -f1-3 /proc/loadavg) uptime_after=$(uptime)
# how far a figure moved from the run before: "+12 %" (empty when either is missing)
moved() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.0f %%", (a / b - 1) * 100 }' || echo "—"; }
within() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; print (r >= 0.8 && r <= 1.2 ? "within 20 %" : "not within 20 %") }' || echo "not compared"; }
others_after=$(busiest)
verdict() { # $1 measured, $2 bound: "met" when $1 <= $2
    [ -n "$1" ] && [ -n "$2" ] || { echo "not measured"; return; }
    awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b ? "met" : "not met") }'
}
# $1 × $2 ("" when $1 is missing)
scaled() { [ -n "$1" ] && awk -v x="$1" -v f="$2" 'BEGIN { print x * f }' || true; }
faster() { # $1 measured, $2 the other: "met" when $1 < $2
    [ -n "$1" ] && [ -n "$2" ] || { echo "not measured"; return; }
    awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? "met" : "not met") }'
}

echo "a class of ${BENCH_FOLLOWERS:-200} followers (tests/bench/class_load.sh)" >&2
class_text=$(bash tests/bench/class_load.sh || echo "## A class of followers

Not measured: tests/bench/class_load.sh failed (its message is on make bench's stderr).")

# 7. what if?: an edit's redraw on the same lesson (tests/bench/whatif.sh writes the section)
whatif_text=$(bash tests/bench/whatif.sh)

# the rows and notes of OpenBLAS's AVX-512 kernels, when they were run
forced_rows="" forced_note="" forced_blas_note=""
if [ -n "$forced" ]; then
    forced_rows="| numpy $numpy_version (OpenBLAS, OPENBLAS_CORETYPE=$forced: its AVX-512 kernels), 1 thread | $(ms "$np1x") | $(ms "$np1x_m") | $(rate "$np1x" 1) | $(ratio "$np1x" "$np1") | $(ratio "$np1x_m" "$np1_m") | $(ratio "$np1x" "$torchx") |
| PyTorch $torch_version nn.MultiheadAttention (OPENBLAS_CORETYPE=$forced), 1 thread | $(ms "$torchx") | $(ms "$torchx_m") | $(rate "$torchx" 1) | $(ratio "$torchx" "$np1") | $(ratio "$torchx_m" "$np1_m") | 1.00 |
"
    forced_note=" (on one thread, numpy's and PyTorch's figures are the faster of OpenBLAS's own
choice of kernels and its AVX-512 ones)"
    forced_blas_note="; with OPENBLAS_CORETYPE=$forced: ${forced_blas:-?}"
fi

cat > tests/BENCH.md <<EOF
# Benchmarks

Written by \`make bench\` (tests/bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'); rerun it to
refresh. Every figure of the core is the best of repeated runs, measured in one run of the script,
on memory already allocated and touched (a whole trace_compute, with its allocation and page
faults, is given apart); the UI's keypresses and start-up are given as median and worst.

The machine is shared: the load below was recorded as it was. Figures taken under load are
slower and noisier than on a quiet machine; regenerate this file on a quiet machine before
comparing it with another.

## Machine

- $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(free -g | awk '/^Mem:/ { print $2 " GiB" }') memory
- $($CC --version | head -n 1), flags \`$flags\`
- command: \`make bench\` (BENCH_ROUNDS=$rounds)
- \`uptime\` before: $uptime_before
- \`uptime\` after: $uptime_after
- load average before: $load_before; after: $load_after
- other processes using ≥ 5% of a core, at the start: ${others_before:-none}; at the end: ${others_after:-none}
- vector units: $(grep -o -w -E 'avx2|avx512f|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')(the kernels' products ran on their \`${ker_path:-?}\` code)
- double-precision peak (tests/bench/peak.c, measured at the start): $peak_line; measured
  again after the rounds: ${peak_end:-?} GFLOP/s at ${clock_end:-?} GHz (a core's clock rises when the other core idles,
  so the shares of the peak below are approximate: they use the first figure)

## The whole trace at n = 512, d_model = 512, 8 heads: attnstep, numpy and PyTorch side by side

The core computes every stored stage (input, Q, K, V, per-head scores, softmax, context, concat,
output) again on the memory of a trace computed once, after a warm-up run (each stage into one
scratch matrix, as \`--stats\` does): no allocation and no page fault is timed. numpy does the same
products as 2-D BLAS calls and the same stable softmax, allocating its arrays as numpy does;
PyTorch runs \`nn.MultiheadAttention\` (float64, no bias, weights returned per head). Each round
runs each program once (11 timed runs each, after a warm-up); "best" is the best run of all rounds,
"median" the median of the rounds' medians. The products ran on the core's \`${ker_path:-?}\` code.

The rate is the layer's $(awk -v f="$flops" 'BEGIN { printf "%.3f", f * 1e-9 }') GFLOP (two flops a multiply-add: the four projections and QKᵀ and
weights·V; the softmax is not counted) over the best time, and its share of the peak above
(of two cores' for two threads).

| what | best | median | best: rate | best ÷ numpy's, same threads | median ÷ numpy's | best ÷ PyTorch's, same threads |
| --- | --- | --- | --- | --- | --- | --- |
| core, kernels, 1 thread | $(ms "$ker") | $(ms "$ker_m") | $(rate "$ker" 1) | $(ratio "$ker" "$np1") | $(ratio "$ker_m" "$np1_m") | $(ratio "$ker" "$torch") |
| numpy $numpy_version (OpenBLAS), 1 thread | $(ms "$np1") | $(ms "$np1_m") | $(rate "$np1" 1) | 1.00 | 1.00 | $(ratio "$np1" "$torch") |
| PyTorch $torch_version nn.MultiheadAttention, 1 thread | $(ms "$torch") | $(ms "$torch_m") | $(rate "$torch" 1) | $(ratio "$torch" "$np1") | $(ratio "$torch_m" "$np1_m") | 1.00 |
$forced_rows| core, kernels, $threads threads | $(ms "$kerN") | $(ms "$kerN_m") | $(rate "$kerN" 2) | $(ratio "$kerN" "$np2") | $(ratio "$kerN_m" "$np2_m") | $(ratio "$kerN" "$torch2") |
| numpy $numpy_version (OpenBLAS), 2 threads | $(ms "$np2") | $(ms "$np2_m") | $(rate "$np2" 2) | 1.00 | 1.00 | $(ratio "$np2" "$torch2") |
| PyTorch $torch_version nn.MultiheadAttention, 2 threads | $(ms "$torch2") | $(ms "$torch2_m") | $(rate "$torch2" 2) | $(ratio "$torch2" "$np2") | $(ratio "$torch2_m" "$np2_m") | 1.00 |
| core, reference loops (1 thread, 1 round) | $(ms "$ref") | | $(rate "$ref" 1) | | | |
| core, kernels, 1 thread, a whole trace_compute on fresh memory | $(ms "$ker_a") | | $(rate "$ker_a" 1) | | | |

Targets (issue 31), on the best times and, in brackets, on the medians$forced_note:
- 1 thread, at most 1.0 × numpy's 1 thread: $(verdict "$ker" "$np1_t") ($(verdict "$ker_m" "$np1_tm")): $(ratio "$ker" "$np1_t") ($(ratio "$ker_m" "$np1_tm"))
- 1 thread, at most 0.85 × PyTorch's 1 thread: $(verdict "$ker" "$(scaled "$torch_t" 0.85)") ($(verdict "$ker_m" "$(scaled "$torch_tm" 0.85)")): $(ratio "$ker" "$torch_t") ($(ratio "$ker_m" "$torch_tm"))
- $threads threads, faster than numpy's 2 threads: $(faster "$kerN" "$np2") ($(faster "$kerN_m" "$np2_m"))
- $threads threads, faster than PyTorch's 2 threads: $(faster "$kerN" "$torch2") ($(faster "$kerN_m" "$torch2_m"))

These verdicts are unconfirmed while the machine is loaded (the load is recorded above and
below): other work slows each program differently (numpy and PyTorch start a Python process each
round), so only figures from a quiet machine settle a target.

Medians per round: kernels, 1 thread$ker_medians; kernels, $threads threads$kerN_medians;
numpy (1 thread)$np1_medians; numpy (2 threads)$np2_medians; PyTorch$torch_medians; PyTorch (2 threads)$torch2_medians.
Minor page faults of one whole trace_compute on fresh memory, per round:$ker_faults (the memory
the computation above runs on was touched before it is timed).
CPU time over wall time per round (cores really used): kernels, 1 thread$ker_cores; kernels,
$threads threads$kerN_cores; numpy 1 thread$np1_cores; numpy 2 threads$np2_cores; PyTorch$torch_cores.

Reading these figures: the programs run in alternation, round after round, so that other work on
the machine (listed above) slows each alike; "best" is the least disturbed run, and the medians
show how much the load moved. A "2 threads" figure only gets the second core when nothing else
holds it: the CPU/wall ratios say how many cores each really had. Every product of the core is
the textbook sum with fused multiply-add in k order, bit for bit on every path; its softmax's
exponential is within 2 ulp of libm's and the same bits on every path (tests/test_kernels.c,
tests/test_paths.c).

- reference loops: $reference_note; its output differs from the core's by at most ${ref_diff:-?} (the exponential: libm's in the loops, the kernels' own in the core)
- kernels: $kernels_note
- numpy's BLAS: ${numpy_blas:-—}${numpy_missing:+ (numpy missing: $numpy_missing)}${torch_missing:+; PyTorch missing: $torch_missing}$forced_blas_note

### The kernels alone, one thread

\`build/bench/bench_kernels 512 512 8\` (tests/bench/bench_kernels.c), once a round: each kernel at the
layer's shapes on memory already touched (the eight heads' scores, softmax and context one
after another, each head's matrices reused), its best time of all rounds. A head's buffers are
reused, so these run warmer in cache than the trace's blocks above.

| kernel | best | rate | of a core's peak |
| --- | --- | --- | --- |
$kernel_rows

AArch64 (NEON) is tested for its bits under qemu-aarch64 (tests/check_arm64.sh) but not timed
here: no arm64 machine was available. Under emulation, where every FMA lane is done in software,
NEON was 1.13 times as fast as the portable code at n = 512, d_model = 512, 8 heads, one thread (7.18 s against
8.12 s, measured once on 2026-12-01): a sanity figure, not a benchmark.

## Does it reproduce?

Compared with the run before (${prev_date:-none}), on the best times at n = 512:
core, kernels, 1 thread $(ms "$prev_ker") then, $(ms "$ker") now ($(moved "$ker" "$prev_ker"), $(within "$ker" "$prev_ker"));
numpy, 2 threads $(ms "$prev_np2") then, $(ms "$np2") now ($(moved "$np2" "$prev_np2"), $(within "$np2" "$prev_np2")).
That run used $prev_method. Each run measures under the load recorded above; a figure
that moved by more than 20 % between two runs is more likely the load than the program.

Every timing of this file against the same figure of the run before (tests/bench/reproduce.py;
best and median alike, and the UI's worst cases, which are the least stable):

@REPRODUCE@

## Peak memory at n = 1024, d_model = 512, 8 heads

Peak resident memory (ru_maxrss) of a process that builds random inputs and computes a trace
(three whole traces before it, each freed), taken before the timing's scratch matrix; the time is
that of the stages run again, as above:

| core | peak memory | time of the trace |
| --- | --- | --- |
| reference loops | $(mib "$ref_rss") | |
| kernels ($threads threads) | $(mib "$ker_rss") | $(ms "$ker_1024") |

Target: under 200 MB (195,312 KiB): $(verdict "$ker_rss" "$((200 * 1000 * 1000 / 1024))") (kernels: $(awk -v k="${ker_rss:-0}" 'BEGIN { printf "%.1f MB", k * 1024 / 1e6 }')).

## The UI at 1024 tokens: every keypress, redrawn

\`attnstep --keys $ui_keys --screen $ui_screen $ui_lesson\`, in $ui_rounds runs
($ui_script_keys keys a run; $ui_key_count timed keys in all: a key that quits draws no frame and
is not timed). Each key's time is measured by the UI itself (ATTNSTEP_KEY_TIMES, src/ui/ui.h): the
wall time from reading the key to the end of its frame, drawn into the in-memory screen and
refreshed (curses' update of its virtual screen and the escape codes, written to /dev/null). A
"+scroll" kind is a key that made the matrix scroll (every visible cell moves); step-in moves
to the first cell, so it scrolls back. Loading and tracing the lesson before the first frame took
$ui_load_us (in the UI, per run). When the UI was timed the load average was $ui_load, and
other processes using ≥ 5% of a core were: ${ui_others:-none}.

| key kind | keys | median | worst |
| --- | --- | --- | --- |
$ui_rows
| **all keys** | $ui_key_count | **$(awk -v u="$ui_median" 'BEGIN { printf "%.2f ms", u / 1000 }')** | **$(awk -v u="$ui_worst" 'BEGIN { printf "%.2f ms", u / 1000 }')** |

Target (every key under 2 ms median and 16 ms worst): median $(under "$ui_median" 2000),
worst $(under "$ui_worst" 16000).

## Start-up to the first frame of cat_sat

\`./attnstep --keys KEYS --screen 80x24 lessons/cat_sat.yaml\` with a one-line script (\`dump\`),
$startup_n runs one after another. "Launch" is bash's \$EPOCHREALTIME just before it starts the
process (fork, exec, dynamic linking and main's option parsing are counted); "first frame" is the
wall clock the UI writes once its first frame is refreshed; "ui_run" counts from the UI's entry
(loading and tracing the lesson, starting curses, drawing).

| from → to | best | median | worst |
| --- | --- | --- | --- |
| launch → first frame | $(startup_col 1) |
| ui_run entry → first frame | $(startup_col 2) |
| launch → exit (screen dumped, curses ended) | $(startup_col 3) |

Target (launch to the first frame under 20 ms): median $(under "$startup_median" 20000), worst $(under "$startup_worst" 20000).

## attnstep --stats tests/bench/long_1024.yaml

Run by $program_note.

\`\`\`
$stats_text
\`\`\`

## attnstep --cost

Run by the same program, with its defaults (d_model 64, 4 heads).

\`\`\`
$cost_text
\`\`\`

$class_text

## Commands

\`\`\`
make bench                     # this file; BENCH_ROUNDS=N for more rounds
ATTNSTEP_THREADS=1 build/bench/bench_trace 512 512 8 11
ATTNSTEP_THREADS=$threads build/bench/bench_trace 512 512 8 11
ATTNSTEP_THREADS=1 build/bench/bench_kernels 512 512 8
build/bench/peak
build/bench/bench_trace 512 512 8 3 reference
$python tests/bench/compare.py numpy 512 512 8 11
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $python tests/bench/compare.py torch 512 512 8 11
OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 $python tests/bench/compare.py torch 512 512 8 11 2
ATTNSTEP_THREADS=$threads build/bench/bench_trace 1024 512 8 3
tests/bench/make_lesson.sh 1024 512 8 > tests/bench/long_1024.yaml
ATTNSTEP_KEY_TIMES=times.tsv ./attnstep --keys $ui_keys --screen $ui_screen $ui_lesson
tests/bench/whatif.sh --write  # the what-if section alone (make bench-whatif)
\`\`\`

$whatif_text
EOF
# the comparison needs the new file written: it replaces the @REPRODUCE@ line
if [ -f "$out/previous.md" ]; then
    python3 tests/bench/reproduce.py "$out/previous.md" tests/BENCH.md > "$out/reproduce.txt"
else
    echo "- no run before to compare with" > "$out/reproduce.txt"
fi
python3 - "$out/reproduce.txt" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read().rstrip("\n") or "- nothing to compare"
bench = open("tests/BENCH.md", encoding="utf-8").read().replace("@REPRODUCE@", text)
open("tests/BENCH.md", "w", encoding="utf-8").write(bench)
PY
echo "wrote tests/BENCH.md" >&2
