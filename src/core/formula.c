/* The formula line of every stage, written from the lesson's configuration (cross-attention,
 * positional encoding, scaling, mask) by the function its stage-table row names. */
#include <assert.h>
#include <stdio.h>
#include "ops/ops.h"

int trace_stage_formula(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return stage_functions_get(stage)->formula(t, stage, buffer, size);
}

/* "h" in multi-head attention; "g" (the head's key/value group) when heads share keys (GQA). */
const char *ops_key_index(const trace *t)
{
    return t->kv_heads < t->heads ? "g" : "h";
}
