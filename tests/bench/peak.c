/* The processor's double-precision peak for tests/bench/run.sh, measured on one core: its clock
 * (a chain of dependent integer additions, one cycle each), the FMA's latency (a chain of
 * dependent vector FMAs) and how many vector FMAs it retires per cycle (many independent chains),
 * printed as key=value lines. The peak is clock × lanes × 2 flops × FMA units, the units being
 * the measured FMAs per cycle rounded to a whole number. x86-64 only: elsewhere it says so. */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Short runs, many times: on a shared machine the best of many runs of a millisecond or so is one
 * that nothing interrupted (a longer run is more likely to lose a time slice). */
#define REPEATS 250000L
#define FMA_STEPS 50000L
#define RUNS 200

/* Seconds of REPEATS × 16 dependent additions: each waits one cycle for the one before it (the
 * processor cannot run them side by side), so this is 16 × REPEATS cycles. */
static double integer_chain(void)
{
    unsigned long x = 0;
    double start = now();
    for (long i = 0; i < REPEATS; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                         : "+r"(x));
    double elapsed = now() - start;
    return x == 16UL * REPEATS ? elapsed : -1.0;
}

/* The FMA loops are written in assembly: a compiler is free to spill accumulators, which would
 * measure the loads and stores instead. FMA3(D, M, A) is D = M · D + A (vfmadd213pd), one
 * rounding; from 0 with M = 0.5 and A = 1 each chain converges on 2, so no lane is ever
 * subnormal or infinite. Each loop runs FMA_STEPS steps of 24 FMAs. */
#define FMA3(r, m, a) "vfmadd213pd %%" a ", %%" m ", %%" r "\n\t"
#define CHAIN24(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) \
    FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) \
    FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) \
    FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) FMA3(r, m, a) \
    FMA3(r, m, a) FMA3(r, m, a)
#define WIDE12(p, m, a) FMA3(p "0", m, a) FMA3(p "1", m, a) FMA3(p "2", m, a) \
    FMA3(p "3", m, a) FMA3(p "4", m, a) FMA3(p "5", m, a) FMA3(p "6", m, a) FMA3(p "7", m, a) \
    FMA3(p "8", m, a) FMA3(p "9", m, a) FMA3(p "10", m, a) FMA3(p "11", m, a)
#define SETUP(p) "vbroadcastsd %[m], %%" p "14\n\tvbroadcastsd %[a], %%" p "15\n\t"
#define ZERO(p) "vxorpd %%" p "0, %%" p "0, %%" p "0\n\t"

static const double half = 0.5, one = 1.0;

/* 24 dependent FMAs a step: their latency. */
static double fma_chain(bool wide)
{
    long steps = FMA_STEPS;
    double start = now();
    if (wide)
        __asm__ volatile(SETUP("zmm") ZERO("zmm") "1:\n\t" CHAIN24("zmm0", "zmm14", "zmm15")
                         "dec %[n]\n\tjnz 1b" : [n] "+r"(steps)
                         : [m] "m"(half), [a] "m"(one) : "xmm0", "xmm14", "xmm15", "cc");
    else
        __asm__ volatile(SETUP("ymm") ZERO("ymm") "1:\n\t" CHAIN24("ymm0", "ymm14", "ymm15")
                         "dec %[n]\n\tjnz 1b" : [n] "+r"(steps)
                         : [m] "m"(half), [a] "m"(one) : "xmm0", "xmm14", "xmm15", "cc");
    return now() - start;
}

/* Twelve independent chains, each taking two FMAs a step (24 a step): the throughput. */
static double fma_wide(bool wide)
{
    long steps = FMA_STEPS;
    double start = now();
#define CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                 "xmm10", "xmm11", "xmm14", "xmm15", "cc"
    if (wide)
        __asm__ volatile(SETUP("zmm") "1:\n\t" WIDE12("zmm", "zmm14", "zmm15")
                         WIDE12("zmm", "zmm14", "zmm15") "dec %[n]\n\tjnz 1b" : [n] "+r"(steps)
                         : [m] "m"(half), [a] "m"(one) : CLOBBERS);
    else
        __asm__ volatile(SETUP("ymm") "1:\n\t" WIDE12("ymm", "ymm14", "ymm15")
                         WIDE12("ymm", "ymm14", "ymm15") "dec %[n]\n\tjnz 1b" : [n] "+r"(steps)
                         : [m] "m"(half), [a] "m"(one) : CLOBBERS);
#undef CLOBBERS
    return now() - start;
}

/* The three measures taken in turn, RUNS times, each keeping its best: interleaved, so that a
 * change of clock or of load touches all three alike. */
int main(void)
{
    bool wide = __builtin_cpu_supports("avx512f");
    bool fma = wide || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
    double integer = 1e300, chain = 1e300, many = 1e300;
    for (int r = 0; r < RUNS; r++) {
        double t = integer_chain();
        if (t < 0) {
            fprintf(stderr, "peak: the integer chain miscounted\n");
            return 70;
        }
        integer = t < integer ? t : integer;
        if (!fma)
            continue;
        t = fma_chain(wide);
        chain = t < chain ? t : chain;
        t = fma_wide(wide);
        many = t < many ? t : many;
    }
    double ghz = 16.0 * (double)REPEATS / integer * 1e-9;
    if (!fma) {
        printf("clock_ghz=%.3f\npeak_missing=no AVX2 with FMA\n", ghz);
        return 0;
    }
    int lanes = wide ? 8 : 4, per_step = 24;  /* FMAs a step, in both loops */
    double fmas = (double)per_step * (double)FMA_STEPS;
    double latency = chain / fmas * ghz * 1e9, per_cycle = fmas / many / (ghz * 1e9);
    int units = (int)(per_cycle + 0.5) < 1 ? 1 : (int)(per_cycle + 0.5);
    printf("clock_ghz=%.3f\nvector=%s\nlanes=%d\nfma_latency_cycles=%.2f\n"
           "fma_per_cycle=%.2f\nfma_units=%d\npeak_gflops=%.1f\nmeasured_fma_gflops=%.1f\n",
           ghz, wide ? "avx512" : "avx2", lanes, latency, per_cycle, units,
           ghz * lanes * 2.0 * units, fmas * lanes * 2.0 / many * 1e-9);
    return 0;
}
#else
int main(void)
{
    printf("peak_missing=measured on x86-64 only\n");
    return 0;
}
#endif
