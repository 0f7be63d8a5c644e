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

/* "Q = input · W_Q": the stage, the stage its rows come from, the weight matrix, and
 * " + b_Q" when the lesson gives the stage a bias. */
static int projection(const trace *t, stage_id stage, stage_id from, const char *matrix,
                      char *buffer, size_t size)
{
    bool bias = trace_stage_bias(t, stage) != NULL;
    return snprintf(buffer, size, "%s = %s · %s%s%s", stage_get(stage)->name,
                    stage_get(from)->name, matrix, bias ? " + b_" : "", bias ? matrix + 2 : "");
}

int formula_q(const trace *t, char *buffer, size_t size)
{
    return projection(t, STAGE_Q, STAGE_INPUT, "W_Q", buffer, size);
}

int formula_k(const trace *t, char *buffer, size_t size)
{
    return projection(t, STAGE_K, trace_source_stage(t), "W_K", buffer, size);
}

int formula_v(const trace *t, char *buffer, size_t size)
{
    return projection(t, STAGE_V, trace_source_stage(t), "W_V", buffer, size);
}

int formula_output(const trace *t, char *buffer, size_t size)
{
    return projection(t, STAGE_OUTPUT, STAGE_CONCAT, "W_O", buffer, size);
}

/* "h" in multi-head attention; "g" (the head's key/value group) when heads share keys (GQA). */
static const char *key_index(const trace *t)
{
    return t->kv_heads < t->heads ? "g" : "h";
}

int formula_scores(const trace *t, char *buffer, size_t size)
{
    const char *rotated = t->in->rope ? "_rotated" : "";
    return snprintf(buffer, size, "scores = Q%s_h · K%s_%sᵀ", rotated, rotated, key_index(t));
}

/* "Q_rotated = Q, …": what RoPE does to the rows of `from`. */
static int rotated(stage_id stage, stage_id from, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s with pair p turned by pos · base^(−2p/d_k)",
                    stage_get(stage)->name, stage_get(from)->name);
}

int formula_q_rotated(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return rotated(STAGE_Q_ROTATED, STAGE_Q, buffer, size);
}

int formula_k_rotated(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return rotated(STAGE_K_ROTATED, STAGE_K, buffer, size);
}

int formula_biased(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "biased = scaled − m_h·|i − j| (ALiBi)");
}

int formula_scaled(const trace *t, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s", t->in->scale ? "scaled = scores / √d_k"
                    : "scaled = scores (scale: false: not divided by √d_k)");
}

int formula_masked(const trace *t, char *buffer, size_t size)
{
    static const char *const hidden[] = {
        [MASK_NONE] = " (no mask: nothing hidden)",
        [MASK_CAUSAL] = ", later tokens −∞ (causal mask)",
        [MASK_EXPLICIT] = ", cells the lesson's mask hides −∞",
    };
    const char *from = stage_get(trace_unmasked_stage(t))->name;
    if (t->in->mask == MASK_WINDOW)
        return snprintf(buffer, size, "masked = %s, keys j ≤ i − %d and j > i −∞ (sliding window)",
                        from, t->in->window);
    assert((size_t)t->in->mask < sizeof hidden / sizeof hidden[0]);
    return snprintf(buffer, size, "masked = %s%s", from, hidden[t->in->mask]);
}

int formula_weights(const trace *t, char *buffer, size_t size)
{
    if (t->in->online_softmax)
        return snprintf(buffer, size, "weights = exp(masked − m_T) / l_T (the last tile's "
                        "running_max and running_sum)");
    return snprintf(buffer, size, "weights = softmax(masked)");
}

int formula_running_max(const trace *t, char *buffer, size_t size)
{
    return snprintf(buffer, size, "running_max: m_t = max(m_t−1, max of masked over tile t "
                    "of %d keys)", t->in->tile);
}

int formula_running_sum(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "running_sum: l_t = l_t−1 · exp(m_t−1 − m_t) + Σ_tile "
                    "exp(masked − m_t)");
}

int formula_context(const trace *t, char *buffer, size_t size)
{
    if (t->in->online_softmax)
        return snprintf(buffer, size, "context = Σ exp(masked − m_t)·V_%s rescaled tile by tile, "
                        "/ l_T", key_index(t));
    return snprintf(buffer, size, "context = weights · V_%s", key_index(t));
}

int formula_concat(const trace *t, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "concat = [context_1 … context_h]");
}
