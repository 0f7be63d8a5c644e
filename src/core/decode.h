/* Decoding with a KV cache: the tokens of a causal (or sliding-window) self-attention generated
 * one at a time, as a language model generates them, each new token's query meeting the keys
 * and values of the tokens before it, kept in a cache that grows by one row per token. */
#ifndef ATTNSTEP_DECODE_H
#define ATTNSTEP_DECODE_H

#include <stdbool.h>
#include "trace.h"

/* What decoding has made so far: a trace of the same input, prepared but not computed, whose
 * rows 0 … length − 1 the forward runner has made one token at a time (trace_forward over the
 * row of each token): row p of scores and weights holds columns 0 … p (the keys the cache had
 * when token p came), of running_max and running_sum its tiles 0 … p / tile. */
typedef struct {
    const trace *t;   /* the trace whose input is decoded (none of its stages is read) */
    int length;       /* tokens decoded so far */
    trace cache;      /* the K/V cache and every other stage, row by row */
} decode_state;

/* Whether t can be decoded token by token: self-attention under a causal or window mask (with
 * or without RoPE, ALiBi, grouped keys and values or the online softmax). */
bool decode_supported(const trace *t);

/* Prepares to decode t's tokens (decode_supported(t) must hold): an empty cache. Returns false
 * when out of memory (d is then empty). Free with decode_free. */
bool decode_begin(decode_state *d, const trace *t);

/* Decodes token d->length by the forward runner over its row alone: its q, k and v rows (k and v
 * join the cache; with RoPE q and k are turned at the token's position, and the cache keeps the
 * turned key), its scores against the cache, its weights and context rows in each head (with
 * the online softmax, by the recurrence over the cache's tiles), and its output row; then
 * d->length grows by one. Each number is computed by the operations trace_compute runs, so
 * the rows are the trace's, bit for bit, whatever options say (NULL: the defaults).
 * d->length must be below n. */
void decode_token(decode_state *d, const trace_options *options);

/* The decoded value of a cell of any stage the trace has (head from 1 for a per-head stage),
 * row below d->length; of a stage whose columns are the keys or their tiles, a column the
 * row's token knew (up to row, or row / tile). */
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
