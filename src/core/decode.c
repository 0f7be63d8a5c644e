/* Decoding with a KV cache (decode.h): one token at a time, through the same kernels as the
 * forward pass, so that every decoded row is the causal trace's row to the bit. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "stage_functions.h"

typedef unsigned long long tally;

bool decode_supported(const trace *t)
{
    return !t->in->source && (t->in->mask == MASK_CAUSAL || t->in->mask == MASK_WINDOW)
        && !t->in->rope && !t->in->online_softmax;
}

static int kv_cols(const trace *t)
{
    return t->kv_heads * t->d_k;
}

bool decode_begin(decode_state *d, const trace *t)
{
    assert(decode_supported(t));
    size_t n = (size_t)t->n, d_model = (size_t)t->d_model, kv = (size_t)kv_cols(t),
           heads = (size_t)t->heads;
    size_t sizes[] = { n * d_model, n * kv, n * kv, heads * n * n, heads * n * n,
                       heads * n * (size_t)t->d_k, n * d_model, n * d_model, n };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += sizes[i];
    *d = (decode_state){ .t = t, .memory = calloc(total, sizeof(double)) };
    if (!d->memory)
        return false;
    double **parts[] = { &d->q, &d->k, &d->v, &d->scores, &d->weights, &d->context, &d->concat,
                         &d->output, &d->unmasked };
    double *next = d->memory;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        *parts[i] = next;
        next += sizes[i];
    }
    return true;
}

void decode_free(decode_state *d)
{
    free(d->memory);
    memset(d, 0, sizeof *d);
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
    kernels_gemm(1, p + 1, t->d_k, d->q + (size_t)p * (size_t)t->d_model + q_offset,
                 (size_t)t->d_model, d->k + kv_offset, kv, true, scores, n, config);
    /* ALiBi: the softmax reads biased = scaled − m_h·|p − j|, made as compute_biased makes it */
    const double *read = scores;
    if (t->in->alibi) {
        for (int j = 0; j <= p; j++)
            d->unmasked[j] = (t->in->scale ? scores[j] / sqrt((double)t->d_k) : scores[j])
                             - trace_alibi_bias(t, head, p, j);
        read = d->unmasked;
    }
    kernels_softmax_rule rule = {
        .scale = t->in->scale && !t->in->alibi, .d_k = t->d_k,
        .allowed = t->visible ? t->visible + (size_t)p * (size_t)t->m : NULL,
    };
    kernels_softmax(weights, read, 1, p + 1, &rule, config);
    double *context = d->context + ((size_t)(head - 1) * n + (size_t)p) * d_k;
    kernels_context(context, weights, d->v, 1, p + 1, t->d_k, (int)kv, (int)kv_offset, config);
    memcpy(d->concat + (size_t)p * (size_t)t->d_model + q_offset, context, d_k * sizeof(double));
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
    size_t n = (size_t)t->n, h = (size_t)(head - 1), r = (size_t)row, c = (size_t)col;
    assert(row < d->length);
    switch (stage) {
    case STAGE_Q: return d->q[r * (size_t)t->d_model + c];
    case STAGE_K: return d->k[r * (size_t)kv_cols(t) + c];
    case STAGE_V: return d->v[r * (size_t)kv_cols(t) + c];
    case STAGE_SCORES: return d->scores[(h * n + r) * n + c];
    case STAGE_WEIGHTS: return d->weights[(h * n + r) * n + c];
    case STAGE_CONTEXT: return d->context[(h * n + r) * (size_t)t->d_k + c];
    case STAGE_CONCAT: return d->concat[r * (size_t)t->d_model + c];
    case STAGE_OUTPUT: return d->output[r * (size_t)t->d_model + c];
    default: break;
    }
    assert(!"a stage decoding does not make");
    return NAN;
}

tally decode_token_multiplications(const trace *t, int position)
{
    tally d = (tally)t->d_model, kv = (tally)kv_cols(t), keys = (tally)position + 1;
    return 2 * d * d + 2 * d * kv + 2 * (tally)t->heads * keys * (tally)t->d_k;
}

tally decode_prefix_multiplications(const trace *t, int position)
{
    tally total = 0;
    for (int p = 0; p <= position; p++)
        total += decode_token_multiplications(t, p);
    return total;
}
