/* The body of the softmax's elementwise kernels (kernels_softmax.c, nothing else, includes it
 * twice): written once over a vector of LANES doubles, VEC (VECI and VECU the same bits as
 * integers), built for four lanes (AVX2, NEON, portable: what a 256-bit vector or a pair of
 * 128-bit ones holds) and for eight (AVX-512), each function named W(name): name_4 or name_8.
 * FUSED(p, r, c, kind) is the width's fused multiply-add. Every operation acts on its own lane,
 * so both widths give the same bits. */

/* exp(x) for x ≤ 0, LANES at a time; x < −745.2 (below the smallest subnormal, and −∞) gives 0.
 * x = k·ln 2 + r with |r| ≤ ln 2 / 2, exp(r) by its Taylor series to r¹³ (the next term is below
 * 2⁻⁵⁶ of the result) in fused Horner steps, then 2^k built in the exponent field. 2^k is applied
 * in two halves so that results in the subnormal range still scale exactly until the final
 * rounding. Within 2 ulp of the correctly rounded exp (tests/test_kernels.c checks it against
 * libm's). Every step is an IEEE operation with one rounding on its own lane, so it gives the
 * same bits wherever and however wide it runs: the portable softmax runs this very code (libm's
 * fma), not libm's exp, so a trace's weights do not depend on the processor. */
static inline __attribute__((always_inline))
void W(exp_nonpositive)(VEC *out, const VEC *in, fused_kind kind)
{
    const double log2e = 0x1.71547652b82fep0, shifter = 0x1.8p52;
    /* ln 2 split so that k·ln2_hi is exact for |k| < 2^21 (Cody and Waite's reduction) */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    /* 1/13!, 1/12!, …, 1/2!, 1, 1: the Taylor coefficients, highest first, each in every lane
     * (so that each step reads its vector straight from memory) */
#if LANES == 8
#define SPLAT(c) { (c), (c), (c), (c), (c), (c), (c), (c) }
#else
#define SPLAT(c) { (c), (c), (c), (c) }
#endif
    static const VEC taylor[] = {
        SPLAT(1.0 / 6227020800.0), SPLAT(1.0 / 479001600.0), SPLAT(1.0 / 39916800.0),
        SPLAT(1.0 / 3628800.0), SPLAT(1.0 / 362880.0), SPLAT(1.0 / 40320.0),
        SPLAT(1.0 / 5040.0), SPLAT(1.0 / 720.0), SPLAT(1.0 / 120.0), SPLAT(1.0 / 24.0),
        SPLAT(1.0 / 6.0), SPLAT(0.5), SPLAT(1.0), SPLAT(1.0),
    };
    static const VEC shift = SPLAT(0x1.8p52);
#undef SPLAT
    VEC x = *in;
    VECI underflow = x < -745.2;
    x = (VEC)((VECI)x & ~underflow); /* 0 in those lanes: −∞ would make NaN on the way */
    /* k = round(x / ln 2), by adding 1.5·2^52 so the rounding happens in the addition */
    VEC t = x * log2e + shifter;
    VEC k = t - shifter;
    VEC r = (x - k * ln2_hi) - k * ln2_lo;
    VEC p = taylor[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < sizeof taylor / sizeof taylor[0]; i++)
        FUSED(&p, &r, &taylor[i], kind);
    /* the low bits of t hold k; 2^k1 · 2^k2 with k1 = ⌊k/2⌋ keeps both factors normal (k is in
     * [−1075, 0]: the shift is done on k + 2048, non-negative, which needs no arithmetic shift,
     * an instruction AVX2 lacks). Unsigned lanes: the same bits as two's complement, and a NaN
     * lane's nonsense wraps around instead of overflowing. */
    VECU ki = (VECU)t - (VECU)shift;
    VECU k1 = ((ki + 2048) >> 1) - 1024, k2 = ki - k1;
    VEC scale1 = (VEC)((k1 + 1023) << 52), scale2 = (VEC)((k2 + 1023) << 52);
    VEC result = p * scale1 * scale2;
    *out = (VEC)((VECI)result & ~underflow);
}

/* sums += the lanes of e, four at a time (an eight-lane vector its first four, then its last
 * four): lane l of sums adds the elements j ≡ l (mod 4) in the order of j, the four running
 * sums a row has always had, whatever the width. */
static inline __attribute__((always_inline)) void W(add_halves)(v4d *sums, const VEC *e)
{
#if LANES == 8
    v4d low, high;
    memcpy(&low, e, sizeof low);
    memcpy(&high, (const double *)e + 4, sizeof high);
    *sums += low;
    *sums += high;
#else
    *sums += *e;
#endif
}

/* exp of x − shift into out for n ≤ LANES numbers (the rest of the vector −∞, so 0), added to
 * sums when sums is not NULL. */
static inline __attribute__((always_inline))
void W(exp_tail)(double *out, const double *x, size_t n, double shift, v4d *sums, fused_kind kind)
{
    VEC v, e;
    for (int lane = 0; lane < LANES; lane++)
        v[lane] = -INFINITY;
    memcpy(&v, x, n * sizeof *x);
    v -= shift;
    W(exp_nonpositive)(&e, &v, kind);
    memcpy(out, &e, n * sizeof *out);
    if (sums)
        W(add_halves)(sums, &e);
}

/* w[j] = the scaled score s[j] for j < count (score / divisor, the core's own rule with the
 * divisor it gives, √d_k, bit-for-bit as the core divides; IEEE division is exact-rounded in
 * vectors too; s may be w, and with scale false each number is kept as it is), and the largest
 * of them, which the softmax shifts by. When the divisor is a power of two (d_k = 1, 4, 16, 64, …)
 * its reciprocal is exact, and x · (1/2^e) is the same real number as x / 2^e, so rounded the
 * same: the much cheaper multiplication. The maximum is taken in four vectors of running maxima,
 * so that no step waits for the one before: max is exact, so the order does not matter. */
static inline __attribute__((always_inline))
double W(scale_max)(double *w, const double *s, int count, bool scale, double divisor)
{
    int exponent;
    bool power_of_two = scale && frexp(divisor, &exponent) == 0.5;
    double reciprocal = 1.0 / divisor, row_max = -INFINITY;
    VEC best[4];
    for (int q = 0; q < 4; q++)
        for (int lane = 0; lane < LANES; lane++)
            best[q][lane] = -INFINITY;
    int j = 0;
    for (; j + 4 * LANES <= count; j += 4 * LANES)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            VEC x;
            LOAD(x, s + j + q * LANES);
            if (power_of_two)
                x *= reciprocal;
            else if (scale)
                x /= divisor;
            STORE(w + j + q * LANES, x);
            VECI greater = x > best[q];
            best[q] = (VEC)(((VECI)x & greater) | ((VECI)best[q] & ~greater));
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
void W(exp_normalise)(double *w, int m, double row_max, fused_kind kind)
{
    int j;
    /* exponentials shifted by the row max (the stability trick: the largest is exp(0) = 1 and
     * none overflows; the shift cancels in the ratio); hidden cells, −∞, give exactly 0, and so
     * do the lanes past the row's end, whose +0 leaves a sum unchanged */
    v4d sums = { 0.0, 0.0, 0.0, 0.0 };
    /* STEP vectors a step, so that as many Horner chains are in flight side by side (as many as
     * the registers hold: 16 of AVX2's, 32 of AVX-512's) */
#define STEP (LANES == 8 ? 8 : 4)
    for (j = 0; j + STEP * LANES <= m; j += STEP * LANES) {
        VEC x[STEP], e[STEP];
#pragma GCC unroll 8
        for (int q = 0; q < STEP; q++) {
            LOAD(x[q], w + j + q * LANES);
            x[q] -= row_max;
            W(exp_nonpositive)(&e[q], &x[q], kind);
        }
#pragma GCC unroll 8
        for (int q = 0; q < STEP; q++) {
            STORE(w + j + q * LANES, e[q]);
            W(add_halves)(&sums, &e[q]);
        }
    }
#undef STEP
    for (; j + LANES <= m; j += LANES) {
        VEC x, e;
        LOAD(x, w + j);
        x -= row_max;
        W(exp_nonpositive)(&e, &x, kind);
        STORE(w + j, e);
        W(add_halves)(&sums, &e);
    }
    if (j < m)
        W(exp_tail)(w + j, w + j, (size_t)(m - j), row_max, &sums, kind);
    double sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    /* normalise (a division, as the textbook writes it, not a multiplication by 1/sum) */
    for (j = 0; j + LANES <= m; j += LANES) {
        VEC x;
        LOAD(x, w + j);
        x /= sum;
        STORE(w + j, x);
    }
    for (; j < m; j++)
        w[j] /= sum;
}

/* The exponential over an array, eight at a time (the tail padded with −∞). */
static inline __attribute__((always_inline))
void W(exp_array)(double *out, const double *in, size_t count, fused_kind kind)
{
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        VEC x, e;
        LOAD(x, in + i);
        W(exp_nonpositive)(&e, &x, kind);
        STORE(out + i, e);
    }
    if (i < count)
        W(exp_tail)(out + i, in + i, count - i, 0.0, NULL, kind);
}

/* The sum of x·0 over an array is 0 when every x is finite and NaN as soon as one is ±∞ or NaN. */
static inline __attribute__((always_inline)) bool W(all_finite)(const double *x, size_t count)
{
    VEC acc = { 0.0 };
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        VEC v;
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

