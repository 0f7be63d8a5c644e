/* The kernels' elementwise work: the stable row softmax with its own exponential, and the scan
 * for non-finite numbers. One body of eight-lane vector code, built once per path (AVX-512,
 * AVX2 with FMA, NEON, portable) with the same operations in the same order per lane, so every
 * path gives the same bits. See kernels.h. */
#include <math.h>
#include <string.h>
#include "kernels_private.h"

/* Eight doubles as one value: GCC and Clang lower it to one AVX-512 register, two AVX2 or four
 * SSE2 or NEON ones, whatever the build has. v8i is the same bits seen as integers (comparisons
 * give all-ones or zero lanes). The row sums keep four lanes (v4d), the order they always had. */
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8i __attribute__((vector_size(64)));
typedef unsigned long long v8u __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
#define LANES 8

/* memcpy, which compilers turn into vector loads and stores, avoids both alignment and
 * strict-aliasing assumptions. */
#define LOAD(v, p) memcpy(&(v), (p), sizeof(v8d))
#define STORE(p, v) memcpy((p), &(v), sizeof(v8d))

/* How a build computes a fused multiply-add: a constant in each build, so the branches fold. */
typedef enum { FUSED_LIBM, FUSED_AVX2, FUSED_AVX512, FUSED_NEON } fused_kind;

#ifdef KERNELS_X86
/* *p = *p · *r + *c rounded once, eight lanes, by the FMA instruction (one AVX-512 register or
 * two AVX2 ones). Not always_inline: the other builds name them too (in a branch they never
 * take), where they cannot be inlined. Vectors go by pointer, which keeps the calling convention
 * out of it. */
AVX512 static inline void fused8_avx512(v8d *p, const v8d *r, const v8d *c)
{
    *p = _mm512_fmadd_pd(*p, *r, *c);
}

AVX2_FMA static inline void fused8_avx2(v8d *p, const v8d *r, const v8d *c)
{
    double pl[LANES], rl[LANES], cl[LANES];
    memcpy(pl, p, sizeof pl);
    memcpy(rl, r, sizeof rl);
    memcpy(cl, c, sizeof cl);
    for (int half = 0; half < LANES; half += 4)
        _mm256_storeu_pd(pl + half, _mm256_fmadd_pd(_mm256_loadu_pd(pl + half),
                                                    _mm256_loadu_pd(rl + half),
                                                    _mm256_loadu_pd(cl + half)));
    memcpy(p, pl, sizeof pl);
}
#endif

/* *p = *p · *r + *c rounded once, eight lanes: the FMA instruction of the build's kind, else
 * libm's fma, lane by lane; the same bits either way. */
static inline __attribute__((always_inline))
void fused8(v8d *p, const v8d *r, const v8d *c, fused_kind kind)
{
#ifdef KERNELS_X86
    if (kind == FUSED_AVX512) {
        fused8_avx512(p, r, c);
        return;
    }
    if (kind == FUSED_AVX2) {
        fused8_avx2(p, r, c);
        return;
    }
#endif
#ifdef KERNELS_NEON
    if (kind == FUSED_NEON) { /* four NEON registers of two lanes: vfmaq_f64(c, p, r) = c + p·r */
        double pl[LANES], rl[LANES], cl[LANES];
        memcpy(pl, p, sizeof pl);
        memcpy(rl, r, sizeof rl);
        memcpy(cl, c, sizeof cl);
        for (int pair = 0; pair < LANES; pair += 2)
            vst1q_f64(pl + pair, vfmaq_f64(vld1q_f64(cl + pair), vld1q_f64(pl + pair),
                                           vld1q_f64(rl + pair)));
        memcpy(p, pl, sizeof pl);
        return;
    }
#endif
    (void)kind;
    for (int lane = 0; lane < LANES; lane++)
        (*p)[lane] = fma((*p)[lane], (*r)[lane], (*c)[lane]);
}

/* exp(x) for x ≤ 0, eight at a time; x < −745.2 (below the smallest subnormal, and −∞) gives 0.
 * x = k·ln 2 + r with |r| ≤ ln 2 / 2, exp(r) by its Taylor series to r¹³ (the next term is below
 * 2⁻⁵⁶ of the result) in fused Horner steps, then 2^k built in the exponent field. 2^k is applied
 * in two halves so that results in the subnormal range still scale exactly until the final
 * rounding. Within 2 ulp of the correctly rounded exp (tests/test_kernels.c checks it against
 * libm's). Every step is an IEEE operation with one rounding on its own lane, so it gives the
 * same bits wherever and however wide it runs: the portable softmax runs this very code (libm's
 * fma), not libm's exp, so a trace's weights do not depend on the processor. */
static inline __attribute__((always_inline))
void exp_nonpositive(v8d *out, const v8d *in, fused_kind kind)
{
    const double log2e = 0x1.71547652b82fep0, shifter = 0x1.8p52;
    /* ln 2 split so that k·ln2_hi is exact for |k| < 2^21 (Cody and Waite's reduction) */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    /* 1/13!, 1/12!, …, 1/2!, 1, 1: the Taylor coefficients, highest first, each in every lane
     * (so that each step reads its vector straight from memory) */
#define SPLAT(c) { (c), (c), (c), (c), (c), (c), (c), (c) }
    static const v8d taylor[] = {
        SPLAT(1.0 / 6227020800.0), SPLAT(1.0 / 479001600.0), SPLAT(1.0 / 39916800.0),
        SPLAT(1.0 / 3628800.0), SPLAT(1.0 / 362880.0), SPLAT(1.0 / 40320.0),
        SPLAT(1.0 / 5040.0), SPLAT(1.0 / 720.0), SPLAT(1.0 / 120.0), SPLAT(1.0 / 24.0),
        SPLAT(1.0 / 6.0), SPLAT(0.5), SPLAT(1.0), SPLAT(1.0),
    };
    static const v8d shift = SPLAT(0x1.8p52);
#undef SPLAT
    v8d x = *in;
    v8i underflow = x < -745.2;
    x = (v8d)((v8i)x & ~underflow); /* 0 in those lanes: −∞ would make NaN on the way */
    /* k = round(x / ln 2), by adding 1.5·2^52 so the rounding happens in the addition */
    v8d t = x * log2e + shifter;
    v8d k = t - shifter;
    v8d r = (x - k * ln2_hi) - k * ln2_lo;
    v8d p = taylor[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < sizeof taylor / sizeof taylor[0]; i++)
        fused8(&p, &r, &taylor[i], kind);
    /* the low bits of t hold k; 2^k1 · 2^k2 with k1 = ⌊k/2⌋ keeps both factors normal (k is in
     * [−1075, 0]: the shift is done on k + 2048, non-negative, which needs no arithmetic shift,
     * an instruction AVX2 lacks). Unsigned lanes: the same bits as two's complement, and a NaN
     * lane's nonsense wraps around instead of overflowing. */
    v8u ki = (v8u)t - (v8u)shift;
    v8u k1 = ((ki + 2048) >> 1) - 1024, k2 = ki - k1;
    v8d scale1 = (v8d)((k1 + 1023) << 52), scale2 = (v8d)((k2 + 1023) << 52);
    v8d result = p * scale1 * scale2;
    *out = (v8d)((v8i)result & ~underflow);
}

/* sums += the eight lanes of e, its first four then its last four: lane l of sums adds the
 * elements j ≡ l (mod 4) in the order of j, the four running sums a row has always had. */
static inline __attribute__((always_inline)) void add_halves(v4d *sums, const v8d *e)
{
    v4d low, high;
    memcpy(&low, e, sizeof low);
    memcpy(&high, (const double *)e + 4, sizeof high);
    *sums += low;
    *sums += high;
}

/* exp of x − shift into out for n ≤ LANES numbers (the rest of the vector −∞, so 0), added to
 * sums when sums is not NULL. */
static inline __attribute__((always_inline))
void exp_tail(double *out, const double *x, size_t n, double shift, v4d *sums, fused_kind kind)
{
    v8d v = { -INFINITY, -INFINITY, -INFINITY, -INFINITY,
              -INFINITY, -INFINITY, -INFINITY, -INFINITY }, e;
    memcpy(&v, x, n * sizeof *x);
    v -= shift;
    exp_nonpositive(&e, &v, kind);
    memcpy(out, &e, n * sizeof *out);
    if (sums)
        add_halves(sums, &e);
}

/* w[j] = the scaled score s[j] for j < count (score / divisor, the core's own rule with the
 * divisor it gives, √d_k, bit-for-bit as the core divides; IEEE division is exact-rounded in
 * vectors too; s may be w, and with scale false each number is kept as it is), and the largest
 * of them, which the softmax shifts by. When the divisor is a power of two (d_k = 1, 4, 16, 64, …)
 * its reciprocal is exact, and x · (1/2^e) is the same real number as x / 2^e, so rounded the
 * same: the much cheaper multiplication. The maximum is taken in four vectors of running maxima,
 * so that no step waits for the one before: max is exact, so the order does not matter. */
static inline __attribute__((always_inline))
double scale_max(double *w, const double *s, int count, bool scale, double divisor)
{
    int exponent;
    bool power_of_two = scale && frexp(divisor, &exponent) == 0.5;
    double reciprocal = 1.0 / divisor, row_max = -INFINITY;
    v8d best[4];
    for (int q = 0; q < 4; q++)
        best[q] = (v8d){ -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                         -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    int j = 0;
    for (; j + 4 * LANES <= count; j += 4 * LANES)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            v8d x;
            LOAD(x, s + j + q * LANES);
            if (power_of_two)
                x *= reciprocal;
            else if (scale)
                x /= divisor;
            STORE(w + j + q * LANES, x);
            v8i greater = x > best[q];
            best[q] = (v8d)(((v8i)x & greater) | ((v8i)best[q] & ~greater));
        }
    for (int q = 0; q < 4; q++)
        for (int lane = 0; lane < LANES; lane++)
            row_max = best[q][lane] > row_max ? best[q][lane] : row_max;
    for (; j < count; j++) {
        w[j] = power_of_two ? s[j] * reciprocal : scale ? s[j] / divisor : s[j];
        row_max = w[j] > row_max ? w[j] : row_max;
    }
    return row_max;
}

/* The rest of a row's softmax: w holds its masked, scaled scores (hidden cells −∞) and row_max
 * their largest on entry, the weights on return. */
static inline __attribute__((always_inline))
void exp_normalise(double *w, int m, double row_max, fused_kind kind)
{
    int j;
    /* exponentials shifted by the row max (the stability trick: the largest is exp(0) = 1 and
     * none overflows; the shift cancels in the ratio); hidden cells, −∞, give exactly 0, and so
     * do the lanes past the row's end, whose +0 leaves a sum unchanged */
    v4d sums = { 0.0, 0.0, 0.0, 0.0 };
    /* STEP vectors a step, so that as many Horner chains are in flight side by side */
#define STEP 4
    for (j = 0; j + STEP * LANES <= m; j += STEP * LANES) {
        v8d x[STEP], e[STEP];
#pragma GCC unroll 4
        for (int q = 0; q < STEP; q++) {
            LOAD(x[q], w + j + q * LANES);
            x[q] -= row_max;
            exp_nonpositive(&e[q], &x[q], kind);
        }
#pragma GCC unroll 4
        for (int q = 0; q < STEP; q++) {
            STORE(w + j + q * LANES, e[q]);
            add_halves(&sums, &e[q]);
        }
    }
#undef STEP
    for (; j + LANES <= m; j += LANES) {
        v8d x, e;
        LOAD(x, w + j);
        x -= row_max;
        exp_nonpositive(&e, &x, kind);
        STORE(w + j, e);
        add_halves(&sums, &e);
    }
    if (j < m)
        exp_tail(w + j, w + j, (size_t)(m - j), row_max, &sums, kind);
    double sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    /* normalise (a division, as the textbook writes it, not a multiplication by 1/sum) */
    for (j = 0; j + LANES <= m; j += LANES) {
        v8d x;
        LOAD(x, w + j);
        x /= sum;
        STORE(w + j, x);
    }
    for (; j < m; j++)
        w[j] /= sum;
}

/* The exponential over an array, eight at a time (the tail padded with −∞). */
static inline __attribute__((always_inline))
void exp_array(double *out, const double *in, size_t count, fused_kind kind)
{
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        v8d x, e;
        LOAD(x, in + i);
        exp_nonpositive(&e, &x, kind);
        STORE(out + i, e);
    }
    if (i < count)
        exp_tail(out + i, in + i, count - i, 0.0, NULL, kind);
}

/* The sum of x·0 over an array is 0 when every x is finite and NaN as soon as one is ±∞ or NaN. */
static inline __attribute__((always_inline)) bool all_finite(const double *x, size_t count)
{
    v8d acc = { 0.0 };
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        v8d v;
        LOAD(v, x + i);
        acc += v * 0.0;
    }
    double tail = 0.0;
    for (; i < count; i++)
        tail += x[i] * 0.0;
    for (int lane = 0; lane < LANES; lane++)
        tail += acc[lane];
    return tail == 0.0;
}

/* One build of the elementwise kernels per path: the same source, the target's instructions. */
typedef struct {
    double (*scale_max)(double *w, const double *s, int count, bool scale, double divisor);
    void (*exp_normalise)(double *w, int m, double row_max);
    void (*exp_array)(double *out, const double *in, size_t count);
    bool (*all_finite)(const double *x, size_t count);
} row_kernels;

#define ROW_KERNELS(suffix, attributes, kind)                                                \
    attributes static double scale_max_##suffix(double *w, const double *s, int count,       \
                                                bool scale, double divisor)                 \
    {                                                                                       \
        return scale_max(w, s, count, scale, divisor);                                      \
    }                                                                                       \
    attributes static void exp_normalise_##suffix(double *w, int m, double row_max)          \
    {                                                                                       \
        exp_normalise(w, m, row_max, kind);                                                 \
    }                                                                                       \
    attributes static void exp_array_##suffix(double *out, const double *in, size_t count)   \
    {                                                                                       \
        exp_array(out, in, count, kind);                                                    \
    }                                                                                       \
    attributes static bool all_finite_##suffix(const double *x, size_t count)               \
    {                                                                                       \
        return all_finite(x, count);                                                        \
    }                                                                                       \
    static const row_kernels row_kernels_##suffix = {                                        \
        scale_max_##suffix, exp_normalise_##suffix, exp_array_##suffix, all_finite_##suffix, \
    };

ROW_KERNELS(portable, , FUSED_LIBM)
#ifdef KERNELS_X86
ROW_KERNELS(avx2, AVX2_FMA, FUSED_AVX2)
ROW_KERNELS(avx512, AVX512, FUSED_AVX512)
#endif
#ifdef KERNELS_NEON
ROW_KERNELS(neon, , FUSED_NEON)
#endif

/* The build that config's path runs (the finite scan needs only AVX2, which both x86 vector
 * paths have). */
static const row_kernels *row_kernels_for(const kernels_config *config)
{
    switch (kernels_path_of(config)) {
#ifdef KERNELS_X86
    case PATH_AVX512:
        return &row_kernels_avx512;
    case PATH_AVX2_FMA:
        return &row_kernels_avx2;
#endif
#ifdef KERNELS_NEON
    case PATH_NEON:
        return &row_kernels_neon;
#endif
    default:
        return &row_kernels_portable;
    }
}

void kernels_exp_nonpositive(double *out, const double *in, size_t count,
                             const kernels_config *config)
{
    row_kernels_for(config)->exp_array(out, in, count);
}

bool kernels_all_finite(const double *x, size_t count, const kernels_config *config)
{
    return row_kernels_for(config)->all_finite(x, count);
}

typedef struct {
    double *weights;
    const double *scores;
    int n, m;
    const kernels_softmax_rule *rule;
    const row_kernels *code;
} softmax_job;

/* Rows in one chunk of a softmax: enough to make taking a chunk cheap beside computing it. */
#define SOFTMAX_ROWS 8

/* One chunk of rows of a softmax, row by row: the scaled scores into weights with their max,
 * hidden cells −∞ (so their exponential is exactly 0), then the row's stable softmax. A causal
 * row scales only the cells it sees; a row under an allowed mask is scaled whole, masked, and
 * its max taken again over what it sees. */
static void softmax_work(void *argument, int chunk, double *scratch)
{
    (void)scratch;
    const softmax_job *x = argument;
    const kernels_softmax_rule *rule = x->rule;
    const row_kernels *code = x->code;
    int row0 = chunk * SOFTMAX_ROWS, m = x->m;
    int end = x->n - row0 < SOFTMAX_ROWS ? x->n : row0 + SOFTMAX_ROWS;
    for (int i = row0; i < end; i++) {
        double *w = x->weights + (size_t)i * (size_t)m;
        const double *s = x->scores + (size_t)i * (size_t)m;
        const unsigned char *allowed = rule->causal ? NULL : rule->allowed;
        int seen = rule->causal && i + 1 < m ? i + 1 : m;
        double row_max = code->scale_max(w, s, seen, rule->scale, rule->divisor);
        for (int j = seen; j < m; j++)
            w[j] = -INFINITY;
        if (allowed) {
            for (int j = 0; j < m; j++)
                if (allowed[(size_t)i * (size_t)m + (size_t)j] == 0)
                    w[j] = -INFINITY;
            row_max = code->scale_max(w, w, m, false, 1.0);
        }
        code->exp_normalise(w, m, row_max);
    }
}

void kernels_softmax(double *weights, const double *scores, int n, int m,
                     const kernels_softmax_rule *rule, const kernels_config *config)
{
    softmax_job job = { weights, scores, n, m, rule, row_kernels_for(config) };
    /* an exponential costs about as much as twenty multiply-adds */
    kernels_run_shared(softmax_work, &job, (n + SOFTMAX_ROWS - 1) / SOFTMAX_ROWS, NULL, 0,
                       20.0 * (double)n * (double)m, config);
}
