/* Decoding with a KV cache (decode.h): one token at a time, through the same kernels as the
 * forward pass, so that every decoded row is the causal trace's row to the bit. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "online.h"
#include "stage_functions.h"

typedef unsigned long long tally;

bool decode_supported(const trace *t)
{
    return !t->in->source && (t->in->mask == MASK_CAUSAL || t->in->mask == MASK_WINDOW);
}

static int kv_cols(const trace *t)
{
    return t->kv_heads * t->d_k;
}

bool decode_begin(decode_state *d, const trace *t)
{
    assert(decode_supported(t));
    size_t n = (size_t)t->n, d_model = (size_t)t->d_model, kv = (size_t)kv_cols(t),
           heads = (size_t)t->heads, rope = t->in->rope, tiles = (size_t)trace_tile_count(t);
    size_t sizes[] = { n * d_model, n * kv, n * kv, rope * n * d_model, rope * n * kv,
                       heads * n * n, heads * n * tiles, heads * n * tiles, heads * n * n,
                       heads * n * (size_t)t->d_k, n * d_model, n * d_model, n, n };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += sizes[i];
    *d = (decode_state){ .t = t, .memory = calloc(total, sizeof(double)) };
    if (!d->memory)
        return false;
    double **parts[] = { &d->q, &d->k, &d->v, &d->q_rotated, &d->k_rotated, &d->scores,
                         &d->running_max, &d->running_sum, &d->weights, &d->context, &d->concat,
                         &d->output, &d->unmasked, &d->masked };
    static const stage_id stages[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_Q_ROTATED,
                                       STAGE_K_ROTATED, STAGE_SCORES, STAGE_RUNNING_MAX,
                                       STAGE_RUNNING_SUM, STAGE_WEIGHTS, STAGE_CONTEXT,
                                       STAGE_CONCAT, STAGE_OUTPUT, STAGE_COUNT, STAGE_COUNT };
    double *next = d->memory;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        *parts[i] = sizes[i] > 0 ? next : NULL;  /* a part the lesson does not use stays NULL */
        if (stages[i] != STAGE_COUNT)             /* the last two are scratch rows */
            d->stored[stages[i]] = *parts[i];
        next += sizes[i];
    }
    return true;
}

void decode_free(decode_state *d)
{
    free(d->memory);
    memset(d, 0, sizeof *d);
}

static double read_row(const void *row, int key)
{
    return ((const double *)row)[key];
}

/* The online softmax of token p in one head over the cache's p + 1 keys, in tiles: the masked
 * row (the trace's `masked`: scaled or biased, −∞ at hidden keys), running_max and running_sum
 * for the tiles 0 … p / tile, then weights and context from the recurrence (online.c, as the
 * trace computes them: tiles after p's hold only hidden keys and change nothing). */
static void decode_online(decode_state *d, int head, int p, const double *unmasked,
                          double *weights, double *context, size_t kv_offset,
                          const kernels_config *config)
{
    const trace *t = d->t;
    for (int j = 0; j <= p; j++)
        d->masked[j] = trace_is_hidden(t, p, j) ? -INFINITY : unmasked[j];
    online_row r = { read_row, d->masked, p + 1, t->in->tile, d->v + kv_offset,
                     (size_t)kv_cols(t), t->d_k };
    size_t stride = (size_t)trace_tile_count(t),
           row = ((size_t)(head - 1) * (size_t)t->n + (size_t)p) * stride;
    double *max = d->running_max + row, *sum = d->running_sum + row, total = 0.0;
    online_running_max(&r, max);
    for (int b = 0; b < online_tiles(&r); b++) {
        online_tile(&r, max, b, &total, NULL, config);
        sum[b] = total;
    }
    int last = online_tiles(&r) - 1;
    for (int j = 0; j <= p; j++)
        weights[j] = online_weight(d->masked[j], max[last], sum[last], config);
    double context_sum = online_context(&r, max, context, config);
    assert(context_sum == sum[last]);  /* the same recurrence, step for step */
    (void)context_sum;
}

/* The row the softmax reads, scaled and, with ALiBi, biased = scaled − m_h·|p − j|, as
 * trace_read_scaled and compute_biased make them. */
static void unmasked_row(decode_state *d, int head, int p, const double *scores)
{
    const trace *t = d->t;
    for (int j = 0; j <= p; j++)
        d->unmasked[j] = (t->in->scale ? scores[j] / sqrt((double)t->d_k) : scores[j])
                         - (t->in->alibi ? trace_alibi_bias(t, head, p, j) : 0.0);
}

/* One head of token p: scores against the p + 1 cached keys, the softmax over them (the
 * window's hidden keys excluded by its rule), and the context from the cached values. */
static void decode_head(decode_state *d, int head, int p, const kernels_config *config)
{
    const trace *t = d->t;
    size_t n = (size_t)t->n, kv = (size_t)kv_cols(t), d_k = (size_t)t->d_k;
    size_t q_offset = (size_t)(head - 1) * d_k,
           kv_offset = (size_t)(trace_kv_group(t, head) - 1) * d_k;
    double *scores = d->scores + ((size_t)(head - 1) * n + (size_t)p) * n;
    double *weights = d->weights + ((size_t)(head - 1) * n + (size_t)p) * n;
    double *context = d->context + ((size_t)(head - 1) * n + (size_t)p) * d_k;
    const double *q = t->in->rope ? d->q_rotated : d->q, *k = t->in->rope ? d->k_rotated : d->k;
    kernels_gemm(1, p + 1, t->d_k, q + (size_t)p * (size_t)t->d_model + q_offset,
                 (size_t)t->d_model, k + kv_offset, kv, true, scores, n, config);
    if (t->in->alibi || t->in->online_softmax)
        unmasked_row(d, head, p, scores);
    if (t->in->online_softmax) {
        decode_online(d, head, p, d->unmasked, weights, context, kv_offset, config);
    } else {
        /* the scaling stays in the softmax's rule unless ALiBi's biased row is read */
        kernels_softmax_rule rule = {
            .scale = t->in->scale && !t->in->alibi, .d_k = t->d_k,
            .allowed = t->visible ? t->visible + (size_t)p * (size_t)t->m : NULL,
        };
        kernels_softmax(weights, t->in->alibi ? d->unmasked : scores, 1, p + 1, &rule, config);
        kernels_context(context, weights, d->v, 1, p + 1, t->d_k, (int)kv, (int)kv_offset,
                        config);
    }
    memcpy(d->concat + (size_t)p * (size_t)t->d_model + q_offset, context, d_k * sizeof(double));
}

/* RoPE: token p's query and key turned at position p; the cache keeps the turned key. */
static void rotate_token(decode_state *d, int p)
{
    const trace *t = d->t;
    size_t q_row = (size_t)p * (size_t)t->d_model, k_row = (size_t)p * (size_t)kv_cols(t);
    trace_rope_rotate(t, p, d->q + q_row, d->q_rotated + q_row, t->d_model);
    trace_rope_rotate(t, p, d->k + k_row, d->k_rotated + k_row, kv_cols(t));
}

void decode_token(decode_state *d, const trace_options *options)
{
    kernels_config settings = trace_kernels_config(options), *config = &settings;
    const trace *t = d->t;
    int p = d->length, d_model = t->d_model, kv = kv_cols(t);
    assert(p < t->n);
    const double *x = trace_block(t, STAGE_INPUT, 1) + (size_t)p * (size_t)d_model;
    trace_project(d->q + (size_t)p * (size_t)d_model, x, 1, d_model, t->in->W_Q, t->in->b_Q,
                  d_model, config);
    trace_project(d->k + (size_t)p * (size_t)kv, x, 1, d_model, t->in->W_K, t->in->b_K, kv,
                  config);
    trace_project(d->v + (size_t)p * (size_t)kv, x, 1, d_model, t->in->W_V, t->in->b_V, kv,
                  config);
    if (t->in->rope)
        rotate_token(d, p);
    for (int h = 1; h <= t->heads; h++)
        decode_head(d, h, p, config);
    trace_project(d->output + (size_t)p * (size_t)d_model,
                  d->concat + (size_t)p * (size_t)d_model, 1, d_model, t->in->W_O, t->in->b_O,
                  d_model, config);
    d->length++;
}

double decode_value(const decode_state *d, stage_id stage, int head, int row, int col)
{
    const trace *t = d->t;
    const double *block = d->stored[stage];
    assert(block && row < d->length);
    size_t heads_before = stage_get(stage)->per_head ? (size_t)(head - 1) : 0;
    size_t rows = (size_t)trace_rows(t, stage), cols = (size_t)trace_cols(t, stage);
    return block[(heads_before * rows + (size_t)row) * cols + (size_t)col];
}

tally decode_token_multiplications(const trace *t, int position)
{
    tally d = (tally)t->d_model, kv = (tally)kv_cols(t), keys = (tally)position + 1;
    tally rotations = t->in->rope ? 2 * (d + kv) : 0;  /* as cost_rotated counts a cell */
    return 2 * d * d + 2 * d * kv + rotations + 2 * (tally)t->heads * keys * (tally)t->d_k;
}

tally decode_prefix_multiplications(const trace *t, int position)
{
    tally total = 0;
    for (int p = 0; p <= position; p++)
        total += decode_token_multiplications(t, p);
    return total;
}
