/* The formula line of every stage, written from the lesson's configuration (cross-attention,
 * positional encoding, scaling, mask) by the function its stage-table row names. */
#include <assert.h>
#include <stdio.h>
#include "stage_functions.h"

int trace_stage_formula(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return stage_functions_get(stage)->formula(t, buffer, size);
}

static const char *plus_positional(const trace *t)
{
    return t->in->positional ? " + PE" : "";
}

int formula_source_input(const trace *t, char *buffer, size_t size)
{
    return snprintf(buffer, size, "source_input = embeddings(source)%s", plus_positional(t));
}

int formula_input(const trace *t, char *buffer, size_t size)
{
    return snprintf(buffer, size, "input = embeddings%s", plus_positional(t));
}

/* "Q = input · W_Q": the stage, the stage its rows come from, the weight matrix. */
static int projection(stage_id stage, stage_id from, const char *matrix, char *buffer,
                      size_t size)
{
    return snprintf(buffer, size, "%s = %s · %s", stage_get(stage)->name, stage_get(from)->name,
                    matrix);
}

int formula_q(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return projection(STAGE_Q, STAGE_INPUT, "W_Q", buffer, size);
}

int formula_k(const trace *t, char *buffer, size_t size)
{
    return projection(STAGE_K, trace_source_stage(t), "W_K", buffer, size);
}

int formula_v(const trace *t, char *buffer, size_t size)
{
    return projection(STAGE_V, trace_source_stage(t), "W_V", buffer, size);
}

int formula_output(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return projection(STAGE_OUTPUT, STAGE_CONCAT, "W_O", buffer, size);
}

int formula_scores(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "scores = Q_h · K_hᵀ");
}

int formula_scaled(const trace *t, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s", t->in->scale ? "scaled = scores / √d_k"
                    : "scaled = scores (scale: false: not divided by √d_k)");
}

int formula_masked(const trace *t, char *buffer, size_t size)
{
    static const char *const formulas[] = {
        [MASK_NONE] = "masked = scaled (no mask: nothing hidden)",
        [MASK_CAUSAL] = "masked = scaled, later tokens −∞ (causal mask)",
        [MASK_EXPLICIT] = "masked = scaled, cells the lesson's mask hides −∞",
    };
    assert((size_t)t->in->mask < sizeof formulas / sizeof formulas[0]);
    return snprintf(buffer, size, "%s", formulas[t->in->mask]);
}

int formula_weights(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "weights = softmax(masked)");
}

int formula_context(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "context = weights · V_h");
}

int formula_concat(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "concat = [context_1 … context_h]");
}
