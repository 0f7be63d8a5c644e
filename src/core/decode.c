/* Decoding with a KV cache (decode.h): one token at a time, through the forward runner over
 * that token's row, so that every decoded row is the causal trace's row to the bit. */
#include <assert.h>
#include <string.h>
#include "decode.h"

typedef unsigned long long tally;

bool decode_supported(const trace *t)
{
    return !t->in->source && (t->in->mask == MASK_CAUSAL || t->in->mask == MASK_WINDOW);
}

bool decode_begin(decode_state *d, const trace *t)
{
    assert(decode_supported(t));
    *d = (decode_state){ .t = t };
    return trace_prepare(t->in, &d->cache, NULL) == TRACE_OK;
}

void decode_free(decode_state *d)
{
    trace_free(&d->cache);
    memset(d, 0, sizeof *d);
}

void decode_token(decode_state *d, const trace_options *options)
{
    assert(d->length < d->t->n);
    trace_forward(&d->cache, (stage_id)0, d->length, d->length + 1, options);
    d->length++;
}

double decode_value(const decode_state *d, stage_id stage, int head, int row, int col)
{
    assert(row < d->length);
    return trace_value(&d->cache, stage, head, row, col);
}

static tally kv_cols(const trace *t)
{
    return (tally)t->kv_heads * (tally)t->d_k;
}

tally decode_token_multiplications(const trace *t, int position)
{
    tally d = (tally)t->d_model, kv = kv_cols(t), keys = (tally)position + 1;
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
