#!/usr/bin/env bash
# `make bench`: times the attention core's whole trace at n = 512, d_model = 512, 8 heads with its
# reference loops and with the fast kernels, next to numpy (OpenBLAS) and PyTorch when installed,
# measures peak memory at n = 1024, and rewrites tests/BENCH.md with the figures.
# Rounds (default 3) alternate the programs so that load from other work hits each alike.
set -eu
cd "$(dirname "$0")/../.."
out=build/bench
rounds=${BENCH_ROUNDS:-3}
mkdir -p "$out"
CC=${CC:-cc}
flags="-std=c11 -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion"
flags="$flags -D_POSIX_C_SOURCE=200809L -O2 -g -Isrc"
python=/usr/bin/python3

# 1. the two cores: the reference loops and the kernels. Until src/attention.c calls the kernels,
#    tests/bench/attention-kernels.patch makes that version; afterwards the patch, reversed,
#    gives back the reference loops.
kernels_note="" reference_note=""
if grep -q 'kernels_' src/attention.c; then
    cp src/attention.c "$out/attention_kernels.c"
    kernels_note="src/attention.c as it is (it calls the kernels)"
    if patch -s -R -o "$out/attention_reference.c" src/attention.c \
           tests/bench/attention-kernels.patch >/dev/null 2>&1; then
        reference_note="src/attention.c with tests/bench/attention-kernels.patch reversed"
    else
        rm -f "$out/attention_reference.c"
        reference_note="not measured: the patch no longer reverses onto src/attention.c"
    fi
else
    cp src/attention.c "$out/attention_reference.c"
    reference_note="src/attention.c as it is (textbook loops)"
    if patch -s -o "$out/attention_kernels.c" src/attention.c \
           tests/bench/attention-kernels.patch >/dev/null 2>&1; then
        kernels_note="src/attention.c with tests/bench/attention-kernels.patch applied"
    else
        rm -f "$out/attention_kernels.c"
        kernels_note="not measured: the patch no longer applies to src/attention.c"
    fi
fi
for core in reference kernels; do
    [ -f "$out/attention_$core.c" ] || continue
    $CC $flags -o "$out/bench_$core" tests/bench/bench_trace.c "$out/attention_$core.c" \
        src/kernels.c src/stages.c src/random.c -lm
done

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

# 2. what else is running, before
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# the second frame of top: CPU use over the last half second, not since each process started
busiest() {
    top -b -n 2 -d 0.5 -o %CPU -w 200 2>/dev/null | awk '/^top -/ { frame++ } frame == 2 && $1 ~ /^[0-9]+$/ \
        && n < 5 && $9 + 0 >= 5 { printf "%s%s %s%%", sep, $12, $9; sep = ", "; n++ }'
}
others_before=$(busiest)

# 3. the rounds at n = 512
ref_best=() ker_best=() kerN_best=() np1_best=() np2_best=() torch_best=()
ker_medians="" kerN_medians="" np2_medians="" torch_medians=""
np1_cores="" np2_cores="" torch_cores=""
ker_med=() kerN_med=() np1_med=() np2_med=() torch_med=()
threads=$(nproc)
for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    if [ -x "$out/bench_reference" ] && [ "$round" -eq 1 ]; then
        "$out/bench_reference" 512 512 8 3 | tr ' ' '\n' > "$out/reference.txt"
        ref_best+=("$(value "$out/reference.txt" best_s)")
    fi
    if [ -x "$out/bench_kernels" ]; then
        ATTNSTEP_THREADS=1 "$out/bench_kernels" 512 512 8 11 | tr ' ' '\n' > "$out/kernels.txt"
        ker_best+=("$(value "$out/kernels.txt" best_s)")
        ker_medians="$ker_medians $(ms "$(value "$out/kernels.txt" median_s)")"
        ker_med+=("$(value "$out/kernels.txt" median_s)")
        ATTNSTEP_THREADS=$threads "$out/bench_kernels" 512 512 8 11 | tr ' ' '\n' \
            > "$out/kernels_threads.txt"
        kerN_best+=("$(value "$out/kernels_threads.txt" best_s)")
        kerN_medians="$kerN_medians $(ms "$(value "$out/kernels_threads.txt" median_s)")"
        kerN_med+=("$(value "$out/kernels_threads.txt" median_s)")
    fi
    if [ -x "$python" ]; then
        "$python" tests/bench/compare.py numpy 512 512 8 11 > "$out/python.txt" 2>&1 || true
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
            "$python" tests/bench/compare.py torch 512 512 8 11 >> "$out/python.txt" 2>&1 || true
        np1_best+=("$(value "$out/python.txt" numpy_threads_1_best_s)")
        np2_best+=("$(value "$out/python.txt" numpy_threads_2_best_s)")
        torch_best+=("$(value "$out/python.txt" torch_best_s)")
        np2_medians="$np2_medians $(ms "$(value "$out/python.txt" numpy_threads_2_median_s)")"
        torch_medians="$torch_medians $(ms "$(value "$out/python.txt" torch_median_s)")"
        np1_med+=("$(value "$out/python.txt" numpy_threads_1_median_s)")
        np2_med+=("$(value "$out/python.txt" numpy_threads_2_median_s)")
        torch_med+=("$(value "$out/python.txt" torch_median_s)")
        np1_cores="$np1_cores $(value "$out/python.txt" numpy_threads_1_cores)"
        np2_cores="$np2_cores $(value "$out/python.txt" numpy_threads_2_cores)"
        torch_cores="$torch_cores $(value "$out/python.txt" torch_cores)"
    fi
done
ref=$(smallest "${ref_best[@]:-}") ker=$(smallest "${ker_best[@]:-}")
kerN=$(smallest "${kerN_best[@]:-}")
ker_m=$(middle "${ker_med[@]:-}") kerN_m=$(middle "${kerN_med[@]:-}")
np1_m=$(middle "${np1_med[@]:-}") np2_m=$(middle "${np2_med[@]:-}")
torch_m=$(middle "${torch_med[@]:-}")
np1=$(smallest "${np1_best[@]:-}") np2=$(smallest "${np2_best[@]:-}")
torch=$(smallest "${torch_best[@]:-}")
numpy_version=$(value "$out/python.txt" numpy_version 2>/dev/null || true)
numpy_blas=$(value "$out/python.txt" numpy_blas 2>/dev/null || true)
torch_version=$(value "$out/python.txt" torch_version 2>/dev/null || true)
numpy_missing=$(value "$out/python.txt" numpy_missing 2>/dev/null || true)
torch_missing=$(value "$out/python.txt" torch_missing 2>/dev/null || true)
[ -x "$python" ] || numpy_missing="no $python"

# 4. peak memory at n = 1024, each core in a fresh process
ref_rss="" ker_rss="" ker_1024=""
if [ -x "$out/bench_reference" ]; then
    ref_rss=$("$out/bench_reference" 1024 512 8 1 | tr ' ' '\n' | sed -n 's/^peak_rss_kb=//p')
fi
if [ -x "$out/bench_kernels" ]; then
    ATTNSTEP_THREADS=$threads "$out/bench_kernels" 1024 512 8 3 | tr ' ' '\n' \
        > "$out/kernels_1024.txt"
    ker_rss=$(value "$out/kernels_1024.txt" peak_rss_kb)
    ker_1024=$(value "$out/kernels_1024.txt" best_s)
fi

# 5. the program's own view: --stats and --cost of ./attnstep
program=./attnstep program_note="./attnstep"
stats_text="(not run)" cost_text="(not run)"
if [ -n "$program" ]; then
    stats_text=$("$program" --stats tests/bench/long_1024.yaml 2>&1 || true)
    cost_text=$("$program" --cost 2>&1 || true)
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
others_after=$(busiest)
verdict() { # $1 measured, $2 bound: "met" when $1 <= $2
    [ -n "$1" ] && [ -n "$2" ] || { echo "not measured"; return; }
    awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b ? "met" : "not met") }'
}
twice_numpy=$( [ -n "$np2" ] && awk -v x="$np2" 'BEGIN { print 2 * x }' || true)

cat > tests/BENCH.md <<EOF
# Benchmarks

Written by \`make bench\` (tests/bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'); rerun it to
refresh. Every figure is the best of repeated runs, measured in one run of the script.

## Machine

- $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(free -g | awk '/^Mem:/ { print $2 " GiB" }') memory
- $($CC --version | head -n 1), flags \`$flags\`
- load average before: $load_before; after: $load_after
- other processes using ≥ 5% of a core, at the start: ${others_before:-none}; at the end: ${others_after:-none}
- vector units: $(grep -o -w -E 'avx2|avx512f|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')(the kernels run their AVX2 build)

## The whole trace at n = 512, d_model = 512, 8 heads

The core computes every stage (Q, K, V, per-head scores, softmax, context, concat, output) and
checks the trace for overflow; numpy does the same products as 2-D BLAS calls and the same stable
softmax; PyTorch runs \`nn.MultiheadAttention\` (float64, no bias, weights returned per head).

| what | best | ratio to numpy (2 threads) | median of the rounds' medians | ratio |
| --- | --- | --- | --- | --- |
| core, reference loops (1 thread) | $(ms "$ref") | $(ratio "$ref" "$np2") | | |
| core, kernels, 1 thread | $(ms "$ker") | $(ratio "$ker" "$np2") | $(ms "$ker_m") | $(ratio "$ker_m" "$np2_m") |
| core, kernels, $threads threads | $(ms "$kerN") | $(ratio "$kerN" "$np2") | $(ms "$kerN_m") | $(ratio "$kerN_m" "$np2_m") |
| numpy $numpy_version, 1 thread | $(ms "$np1") | $(ratio "$np1" "$np2") | $(ms "$np1_m") | $(ratio "$np1_m" "$np2_m") |
| numpy $numpy_version, 2 threads (OpenBLAS default) | $(ms "$np2") | 1.00 | $(ms "$np2_m") | 1.00 |
| PyTorch $torch_version nn.MultiheadAttention, 1 thread | $(ms "$torch") | $(ratio "$torch" "$np2") | $(ms "$torch_m") | $(ratio "$torch_m" "$np2_m") |

Medians per round: kernels, 1 thread$ker_medians; kernels, $threads threads$kerN_medians;
numpy (2 threads)$np2_medians; PyTorch$torch_medians.
CPU time over wall time per round (cores really used): numpy 1 thread$np1_cores; numpy 2 threads$np2_cores;
PyTorch$torch_cores.

Reading these figures: the programs run in alternation, round after round, so that other work on
the machine (listed above) slows each alike; "best" is the least disturbed run, and the medians
show how much the load moved. A "2 threads" figure only gets the second core when nothing else
holds it: the CPU/wall ratios say how many cores each really had. The kernels' products are the
textbook sums bit for bit; their softmax is within 2 ulp of libm's exp (tests/test_kernels.c).

- reference loops: $reference_note
- kernels: $kernels_note
- numpy's BLAS: ${numpy_blas:-—}${numpy_missing:+ (numpy missing: $numpy_missing)}${torch_missing:+; PyTorch missing: $torch_missing}
- target "at most 2× numpy", on the best times: $(verdict "$ker" "$twice_numpy") with 1 thread, $(verdict "$kerN" "$twice_numpy") with $threads
- target "less than PyTorch (1 thread)", on the best times: $(verdict "$ker" "$torch") with 1 thread, $(verdict "$kerN" "$torch") with $threads;
  on the medians: $(verdict "$ker_m" "$torch_m") with 1 thread, $(verdict "$kerN_m" "$torch_m") with $threads

## Peak memory at n = 1024, d_model = 512, 8 heads

Peak resident memory (ru_maxrss) of a process that builds random inputs and computes one trace:

| core | peak memory | time of the trace |
| --- | --- | --- |
| reference loops | $(mib "$ref_rss") | |
| kernels ($threads threads) | $(mib "$ker_rss") | $(ms "$ker_1024") |

Target: under 200 MB (195,312 KiB): $(verdict "$ker_rss" "$((200 * 1000 * 1000 / 1024))") (kernels: $(awk -v k="${ker_rss:-0}" 'BEGIN { printf "%.1f MB", k * 1024 / 1e6 }')).

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

## Commands

\`\`\`
make bench                     # this file; BENCH_ROUNDS=N for more rounds
ATTNSTEP_THREADS=1 build/bench/bench_kernels 512 512 8 11
ATTNSTEP_THREADS=$threads build/bench/bench_kernels 512 512 8 11
build/bench/bench_reference 512 512 8 3
$python tests/bench/compare.py numpy 512 512 8 11
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $python tests/bench/compare.py torch 512 512 8 11
ATTNSTEP_THREADS=$threads build/bench/bench_kernels 1024 512 8 3
tests/bench/make_lesson.sh 1024 512 8 > tests/bench/long_1024.yaml
\`\`\`
EOF
echo "wrote tests/BENCH.md" >&2
