/* numpy's legacy RandomState normals, written from the published algorithms: MT19937
 * (Matsumoto and Nishimura, 1998) seeded by init_genrand, 53-bit uniforms from two words, and
 * the polar (Marsaglia) method that keeps its second value for the next call. */
#include <math.h>
#include "numpy_random.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF   /* numpy computes x*x + y*y with two roundings */
#endif

enum { SHIFT = 397 };          /* MT19937's middle word offset m */
#define MATRIX_A 0x9908b0dfu
#define UPPER_MASK 0x80000000u
#define LOWER_MASK 0x7fffffffu

void numpy_random_seed(numpy_random_state *state, uint32_t seed) {
    state->key[0] = seed;
    for (uint32_t i = 1; i < NUMPY_RANDOM_WORDS; i++) {
        uint32_t previous = state->key[i - 1];
        state->key[i] = 1812433253u * (previous ^ (previous >> 30)) + i;
    }
    state->position = NUMPY_RANDOM_WORDS;
    state->has_cached = false;
    state->cached = 0.0;
}

/* One word of the twist: the upper bit of key[i], the lower 31 of key[next], through A. */
static uint32_t twist(uint32_t upper, uint32_t lower, uint32_t far) {
    uint32_t y = (upper & UPPER_MASK) | (lower & LOWER_MASK);
    return far ^ (y >> 1) ^ ((y & 1u) ? MATRIX_A : 0u);
}

static void regenerate(numpy_random_state *state) {
    uint32_t *k = state->key;
    for (int i = 0; i < NUMPY_RANDOM_WORDS; i++)
        k[i] = twist(k[i], k[(i + 1) % NUMPY_RANDOM_WORDS], k[(i + SHIFT) % NUMPY_RANDOM_WORDS]);
    state->position = 0;
}

uint32_t numpy_random_next32(numpy_random_state *state) {
    if (state->position >= NUMPY_RANDOM_WORDS) regenerate(state);
    uint32_t y = state->key[state->position++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double numpy_random_uniform(numpy_random_state *state) {
    uint32_t a = numpy_random_next32(state) >> 5, b = numpy_random_next32(state) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

double numpy_random_normal(numpy_random_state *state) {
    if (state->has_cached) {
        state->has_cached = false;
        return state->cached;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * numpy_random_uniform(state) - 1.0;
        x2 = 2.0 * numpy_random_uniform(state) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    state->cached = f * x1;
    state->has_cached = true;
    return f * x2;
}

void numpy_random_fill(numpy_random_state *state, double scale, double *values, size_t count) {
    for (size_t i = 0; i < count; i++) values[i] = scale * numpy_random_normal(state);
}
