/* The lesson generator: splitmix64 → xoshiro256** → 53-bit uniforms → normal (Box–Muller)
 * or xavier. log and cos are computed here from + − × ÷ and sqrt only, which IEEE 754 rounds
 * exactly, so the numbers do not depend on the platform's libm. */
#include <math.h>   /* sqrt only: IEEE 754 rounds it exactly, unlike log and cos */
#include <stddef.h>
#include "random.h"

#ifdef __clang__
/* A fused multiply-add rounds once instead of twice and would change the last bits. */
#pragma STDC FP_CONTRACT OFF
#endif

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void random_seed(random_state *state, uint64_t seed) {
    for (int i = 0; i < 4; i++) state->s[i] = splitmix64(&seed);
}

uint64_t random_next(random_state *state) {
    uint64_t *s = state->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double random_uniform(random_state *state) {
    return (double)(random_next(state) >> 11) * 0x1.0p-53;
}

/* ln x for 0 < x ≤ 1: x = m·2^e with m in [√½, √2), ln m = 2·atanh(t), t = (m−1)/(m+1),
 * |t| < 0.172, summed to t^25 (the next term is below 2^-60 of the result). */
static double log_portable(double x) {
    int e = 0;
    while (x < 0.70710678118654752440) { x *= 2.0; e--; }  /* exact: powers of two */
    double t = (x - 1.0) / (x + 1.0), t2 = t * t, term = t, sum = 0.0;
    for (int k = 1; k <= 25; k += 2) {
        sum += term / k;
        term *= t2;
    }
    /* ln 2 split into a part with few bits (exact times e) and the rest. */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    return 2.0 * sum + e * ln2_hi + e * ln2_lo;
}

/* Taylor series for |x| ≤ π/4, to x^22 and x^23 (error below 2^-60). */
static double cos_series(double x) {
    double x2 = x * x, term = 1.0, sum = 1.0;
    for (int k = 2; k <= 22; k += 2) {
        term *= -x2 / ((k - 1) * k);
        sum += term;
    }
    return sum;
}

static double sin_series(double x) {
    double x2 = x * x, term = x, sum = x;
    for (int k = 3; k <= 23; k += 2) {
        term *= -x2 / ((k - 1) * k);
        sum += term;
    }
    return sum;
}

/* cos(2π u) for 0 ≤ u < 1, reduced by octant so that the series always sees |x| ≤ π/4. */
static double cos_turns(double u) {
    const double two_pi = 6.28318530717958647692;
    double v = u * 8.0;                 /* exact */
    int octant = (int)v;                /* 0 … 7 */
    int k = (octant + 1) / 2;           /* nearest quarter turn */
    double x = (u - k * 0.25) * two_pi; /* u − k/4 is exact: both share u's binade or below */
    switch (k & 3) {
    case 0: return cos_series(x);
    case 1: return -sin_series(x);
    case 2: return -cos_series(x);
    default: return sin_series(x);
    }
}

double random_normal(random_state *state) {
    double u1 = 1.0 - random_uniform(state);  /* (0, 1]: the logarithm stays finite */
    double u2 = random_uniform(state);
    return sqrt(-2.0 * log_portable(u1)) * cos_turns(u2);
}

void random_fill(random_state *state, random_kind kind, int fan, double scale,
                 double *values, size_t count) {
    double a = kind == RANDOM_XAVIER ? sqrt(6.0 / fan) : 0.0;
    for (size_t i = 0; i < count; i++) {
        double x = kind == RANDOM_XAVIER ? (2.0 * random_uniform(state) - 1.0) * a
                                         : random_normal(state);
        values[i] = x * scale;
    }
}
