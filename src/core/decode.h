/* Decoding with a KV cache: the tokens of a causal (or sliding-window) self-attention generated
 * one at a time, as a language model generates them, each new token's query meeting the keys
 * and values of the tokens before it, kept in a cache that grows by one row per token. */
#ifndef ATTNSTEP_DECODE_H
#define ATTNSTEP_DECODE_H

#include <stdbool.h>
#include "trace.h"

/* What decoding has made so far. The rows 0 … length − 1 of each matrix hold numbers; row p of
 * scores and weights holds columns 0 … p (the keys the cache had when token p came). */
typedef struct {
    const trace *t;       /* the trace whose input is decoded: its input rows, shape and mask
                             (none of its computed stages is read) */
    int length;           /* tokens decoded so far */
    double *memory;       /* the one allocation */
    double *q;            /* (n, d_model) each token's query, used once */
    double *k, *v;        /* (n, kv_heads·d_k) the KV cache (without RoPE; k is the projection) */
    double *q_rotated;    /* (n, d_model) with RoPE, each query turned at its position; else NULL */
    double *k_rotated;    /* (n, kv_heads·d_k) with RoPE, the cache of keys turned at their
                             positions, as llama2.c keeps it; else NULL */
    double *scores;       /* (heads, n, n) */
    double *running_max;  /* (heads, n, tiles) with the online softmax: row p holds its tiles
                             0 … p / tile (the tiles of the cache); else NULL */
    double *running_sum;  /* (heads, n, tiles) likewise */
    double *weights;      /* (heads, n, n) */
    double *context;      /* (heads, n, d_k) */
    double *concat;       /* (n, d_model) */
    double *output;       /* (n, d_model) */
    double *unmasked;     /* (n) scratch: the row the softmax reads (scaled, biased with ALiBi) */
    double *masked;       /* (n) scratch: that row with −∞ at hidden keys, for the online softmax */
    const double *stored[STAGE_COUNT];  /* each stage above by its id, laid out as the trace lays
                                           it out; NULL for a stage decoding does not make */
} decode_state;

/* Whether t can be decoded token by token: self-attention under a causal or window mask (with
 * or without RoPE, ALiBi, grouped keys and values or the online softmax). */
bool decode_supported(const trace *t);

/* Prepares to decode t's tokens (decode_supported(t) must hold): an empty cache. Returns false
 * when out of memory (d is then empty). Free with decode_free. */
bool decode_begin(decode_state *d, const trace *t);

/* Decodes token d->length: its q, k and v rows (k and v join the cache; with RoPE q and k are
 * turned at the token's position first, and the cache keeps the turned key), its scores against
 * the cache, its weights and context rows in each head (with the online softmax, by the
 * recurrence over the cache's tiles), and its output row; then d->length grows by one. Each number is computed as trace_compute computes it (fused products in k
 * order, the kernels' softmax over the visible keys), so the rows are the trace's, bit for
 * bit, whatever options say (NULL: the defaults). d->length must be below n. */
void decode_token(decode_state *d, const trace_options *options);

/* The decoded value of a cell: stage Q, K, V, Q_rotated and K_rotated (RoPE), scores,
 * running_max and running_sum (the online softmax: column a tile up to row / tile), weights,
 * context, concat or output, head from 1 for a per-head stage; row below d->length. */
double decode_value(const decode_state *d, stage_id stage, int head, int row, int col);

/* The multiplications of decoding token `position` with the cache: its three projections and
 * the output's (and RoPE's turn of its q and k, two per number), and in each head one dot
 * product of d_k terms per cached key for the scores and one term per cached value for each
 * context column: linear in position. */
unsigned long long decode_token_multiplications(const trace *t, int position);

/* The multiplications of the same token without a cache: recomputing attention over the whole
 * prefix 0 … position, every row of it (quadratic in position). */
unsigned long long decode_prefix_multiplications(const trace *t, int position);

void decode_free(decode_state *d);

#endif
