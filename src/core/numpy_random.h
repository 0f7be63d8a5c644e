/* numpy's legacy normal draws, reproduced: np.random.seed(S) then np.random.randn(...) gives the
 * same doubles as numpy_random_seed(S) then numpy_random_normal, bit for bit, on one libm. */
#ifndef ATTNSTEP_NUMPY_RANDOM_H
#define ATTNSTEP_NUMPY_RANDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NUMPY_RANDOM_WORDS 624   /* MT19937's state: 624 words of 32 bits */

/* MT19937 plus the second normal of the last polar pair, kept for the next draw as numpy's
 * legacy RandomState keeps it. */
typedef struct {
    uint32_t key[NUMPY_RANDOM_WORDS];
    int position;                /* the next word of key to temper; NUMPY_RANDOM_WORDS: regenerate */
    bool has_cached;
    double cached;
} numpy_random_state;

/* Seeds as numpy's legacy seeding of an integer seed from 0 to 2^32 − 1 (MT19937's
 * init_genrand), and forgets any cached normal. */
void numpy_random_seed(numpy_random_state *state, uint32_t seed);

/* The next 32 tempered bits of MT19937. */
uint32_t numpy_random_next32(numpy_random_state *state);

/* Uniform on [0, 1) from two 32-bit outputs: (a >> 5, b >> 6) as a 53-bit fraction. */
double numpy_random_uniform(numpy_random_state *state);

/* Standard normal, numpy's legacy way: the cached value if there is one; otherwise a point
 * (x1, x2) uniform in the unit disc (rejecting r² ≥ 1 and r² = 0), f = √(−2 ln r² / r²),
 * caching f·x1 and returning f·x2. */
double numpy_random_normal(numpy_random_state *state);

/* Fills count values with numpy_random_normal, in order (randn's row-major order), each
 * multiplied by scale. */
void numpy_random_fill(numpy_random_state *state, double scale, double *values, size_t count);

#endif
