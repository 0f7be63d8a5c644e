/* A small, documented pseudo-random generator for lesson matrices and embeddings: the same
 * seed gives bit-identical numbers on any IEEE-754 machine (lessons/README.md, "Random values"). */
#ifndef ATTNSTEP_RANDOM_H
#define ATTNSTEP_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/* xoshiro256** state, seeded through splitmix64. */
typedef struct {
    uint64_t s[4];
} random_state;

typedef enum {
    RANDOM_NORMAL,   /* standard normal (Box–Muller), times scale */
    RANDOM_XAVIER    /* uniform on (−a, a), a = √(6 / (fan_in + fan_out)), times scale */
} random_kind;

void random_seed(random_state *state, uint64_t seed);

/* The next 64 raw bits of xoshiro256**. */
uint64_t random_next(random_state *state);

/* Uniform on [0, 1): the top 53 bits of the next output, times 2^-53. */
double random_uniform(random_state *state);

/* Standard normal: sqrt(−2 ln(1 − u1)) · cos(2π u2) with u1, u2 the next two uniforms. */
double random_normal(random_state *state);

/* Fills count values, drawn in order, of the given kind. fan is fan_in + fan_out (for xavier).
 * Every value is multiplied by scale. */
void random_fill(random_state *state, random_kind kind, int fan, double scale,
                 double *values, size_t count);

#endif
