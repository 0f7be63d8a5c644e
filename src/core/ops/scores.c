/* The scores family: scores = Q_h · K_gᵀ, the scaling by √d_k (the one place it is written),
 * and ALiBi's biased = scaled − m_h·|i − j|. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ops.h"

size_t ops_head_offset(const trace *t, int head)
{
    return (size_t)(head - 1) * (size_t)t->d_k;
}

size_t ops_group_offset(const trace *t, int head)
{
    return (size_t)(trace_kv_group(t, head) - 1) * (size_t)t->d_k;
}

/* Rows [first, end) of head's scores against the keys known: the head's columns of Q (or
 * Q_rotated) against its group's columns of K (the same columns in multi-head attention). */
void forward_scores(const trace *t, stage_id stage, int head, double *out,
                    const trace_span *span, const kernels_config *config)
{
    stage_id query = trace_stage_node_input(t, stage, 0), key = trace_stage_node_input(t, stage, 1);
    const double *q = trace_block(t, query, 1) + (size_t)span->first * (size_t)trace_cols(t, query);
    kernels_gemm(span->end - span->first, span->keys, t->d_k, q + ops_head_offset(t, head),
                 (size_t)trace_cols(t, query), trace_block(t, key, 1) + ops_group_offset(t, head),
                 (size_t)trace_cols(t, key), true, out + (size_t)span->first * (size_t)t->m,
                 (size_t)t->m, config);
}

/* The one scaling rule: scaled = score / √d_k, or the score itself with `scale: false`. The
 * softmax's kernel rule divides by the same divisor (ops/softmax.c), so the `scaled` shown is
 * bit for bit what the softmax read. */
double trace_score_divisor(const trace *t)
{
    return t->in->scale ? sqrt((double)t->d_k) : 1.0;
}

double trace_scale_score(const trace *t, double score)
{
    return t->in->scale ? score / trace_score_divisor(t) : score;
}

double trace_alibi_bias(const trace *t, int head, int row, int col)
{
    return trace_alibi_slope(head, t->heads) * (double)abs(row - col);
}

/* biased = scaled − m_h·|i − j|: a penalty growing with distance, steeper in heads with a
 * larger slope. */
void forward_biased(const trace *t, stage_id stage, int head, double *out,
                    const trace_span *span, const kernels_config *config)
{
    (void)config;
    stage_id from = trace_stage_node_input(t, stage, 0);
    for (int i = span->first; i < span->end; i++)
        for (int j = 0; j < span->keys; j++)
            out[(size_t)i * (size_t)t->m + (size_t)j] =
                trace_value(t, from, head, i, j) - trace_alibi_bias(t, head, i, j);
}

/* scores_h = Q_h · K_gᵀ, with d_S_h each head's gradient: d_Q_h += d_S_h · K_g, and
 * d_K_g += d_S_hᵀ · Q_h over the heads h that share group g (their sum, as repeat_kv's
 * backward sums them). Hidden cells of d_S are 0, so a hidden key sends nothing. */
void backward_scores(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)head;
    stage_id query = trace_stage_node_input(t, stage, 0), key = trace_stage_node_input(t, stage, 1);
    size_t q_cols = (size_t)trace_cols(t, query), k_cols = (size_t)trace_cols(t, key),
           m = (size_t)t->m;
    for (int h = 1; h <= t->heads; h++) {
        const double *d = trace_gradient_of(t, stage, h);
        size_t q_at = ops_head_offset(t, h), k_at = ops_group_offset(t, h);
        if (input == 0)
            ops_add_product(out + q_at, q_cols, t->n, t->d_k, t->m, d, m, 1,
                            trace_block(t, key, 1) + k_at, k_cols, 1, config);
        else
            ops_add_product(out + k_at, k_cols, t->m, t->d_k, t->n, d, 1, m,
                            trace_block(t, query, 1) + q_at, q_cols, 1, config);
    }
}

/* scaled = scores / √d_k (trace_score_divisor): d_scores = d_scaled / √d_k, a plain copy with
 * scale: false. */
void backward_scaled(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)input, (void)config;
    const double *d = trace_gradient_of(t, stage, head);
    for (size_t i = 0; i < (size_t)t->n * (size_t)t->m; i++)
        out[i] += t->in->scale ? d[i] / trace_score_divisor(t) : d[i];
}

/* biased = scaled − a constant: the gradient passes through unchanged. */
void backward_biased(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)input, (void)config;
    const double *d = trace_gradient_of(t, stage, head);
    for (size_t i = 0; i < (size_t)t->n * (size_t)t->m; i++)
        out[i] += d[i];
}

/* Per head, d_Q_h: n × d_k of m terms; d_K_g: m × d_k of n terms. */
void count_backward_scores(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)stage, (void)head;
    for (int h = 1; h <= t->heads; h++)
        ops_count_product((tally)(input == 0 ? t->n : t->m), (tally)t->d_k,
                          (tally)(input == 0 ? t->m : t->n), counts);
}

/* A division by √d_k (none unscaled) and an addition a cell. */
void count_backward_scaled(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    tally cells = (tally)t->n * (tally)t->m;
    counts->additions += cells;
    counts->divisions += t->in->scale ? cells : 0;
}

/* An addition a cell. */
void count_backward_biased(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    counts->additions += (tally)t->n * (tally)t->m;
}

/* ---- explained, counted and written as a formula ---- */

bool explain_scores(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id query = trace_stage_node_input(t, cell->stage, 0),
             key = trace_stage_node_input(t, cell->stage, 1);
    size_t offset = ops_head_offset(t, cell->head);
    size_t d = (size_t)trace_cols(t, query), kv = (size_t)trace_cols(t, key);
    products p = { trace_block(t, query, 1) + (size_t)cell->row * d + offset,
                   trace_block(t, key, 1) + (size_t)cell->col * kv
                   + ops_group_offset(t, cell->head), 1, 1 };
    bool rotated = stage_get(query)->family == FAMILY_POSITIONS;
    explain_put(out, rotated ? " = rotated q_%s · rotated k_%s" : " = q_%s · k_%s",
                explain_row_label(out, t, cell), explain_source_label(out, t, cell->col));
    if (t->heads > 1)
        explain_put(out, " over dims %zu…%zu", offset, offset + (size_t)t->d_k - 1);
    if (t->kv_heads < t->heads)
        explain_put(out, " of Q, %zu…%zu of K (group %d)", ops_group_offset(t, cell->head),
            ops_group_offset(t, cell->head) + (size_t)t->d_k - 1, trace_kv_group(t, cell->head));
    explain_put(out, " = ");
    explain_put_product_terms(out, &p, t->d_k, NULL);
    return true;
}

bool explain_scaled(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(from)->name, cell);
    double score = trace_value(t, from, cell->head, cell->row, cell->col);
    if (!t->in->scale) {   /* the score is the value: said once, not "= 4.5 = 4.5" */
        explain_put(out, " (scale: false) = ");
        explain_put_number(out, score);
        return false;
    }
    explain_put(out, " / √d_k = ");
    explain_put_number(out, score);
    explain_put(out, " / √%d", t->d_k);
    return true;
}

/* biased: scaled minus the head's slope times the distance, with numbers. */
bool explain_biased(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(from)->name, cell);
    explain_put(out, " − m_%d·|%d − %d| = ", cell->head, cell->row, cell->col);
    explain_put_number(out, trace_value(t, from, cell->head, cell->row, cell->col));
    explain_put(out, " − ");
    explain_put_number(out, trace_alibi_slope(cell->head, t->heads));
    explain_put(out, " × %d", abs(cell->row - cell->col));
    return true;
}

/* d_scores = d_scaled / √d_k: the divisor of the forward pass divides the gradient too
 * (trace_score_divisor), so without it a large score's gradient is √d_k times larger. */
bool explain_d_scores(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(from)->name, cell);
    double d = trace_value(t, from, cell->head, cell->row, cell->col);
    if (!t->in->scale) {
        explain_put(out, " (scale: false: nothing divides it) = ");
        explain_put_number(out, d);
        return false;
    }
    explain_put(out, " / √d_k = ");
    explain_put_number(out, d);
    explain_put(out, " / √%d = ", t->d_k);
    explain_put_number(out, d);
    explain_put(out, " / ");
    explain_put_number(out, trace_score_divisor(t));
    return true;
}

int formula_scores(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s_h · %s_%sᵀ", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name,
                    stage_get(trace_stage_node_input(t, stage, 1))->name, ops_key_index(t));
}

int formula_scaled(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const char *name = stage_get(stage)->name,
               *from = stage_get(trace_stage_node_input(t, stage, 0))->name;
    return t->in->scale ? snprintf(buffer, size, "%s = %s / √d_k", name, from)
         : snprintf(buffer, size, "%s = %s (scale: false: not divided by √d_k)", name, from);
}

const char *trace_scaling_words(const trace *t)
{
    return t->in->scale ? "scores scaled by 1/√d_k" : "scores not scaled (scale: false)";
}

int formula_biased(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s − m_h·|i − j| (ALiBi)", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name);
}

/* Per head (n × d_k) · (d_k × m). */
void cost_scores(const trace *t, stage_id stage, cost_counts *counts)
{
    ops_dot_products(t, stage, (tally)t->d_k, counts);
}

/* One division per cell when scaling. */
void cost_scaled(const trace *t, stage_id stage, cost_counts *counts)
{
    if (t->in->scale)
        counts->divisions += ops_cost_heads(t, stage) * (tally)t->n * (tally)t->m;
}

/* ALiBi: per cell one multiplication (slope × distance) and one subtraction. */
void cost_biased(const trace *t, stage_id stage, cost_counts *counts)
{
    tally cells = ops_cost_heads(t, stage) * (tally)t->n * (tally)t->m;
    counts->multiplications += cells;
    counts->additions += cells;
}

/* ---- the gradients this family's backward makes ---- */

/* Whether a gradient row is made from d_scores (d_Q, d_K without RoPE; d_Q_rotated,
 * d_K_rotated), not from a rotated gradient. */
static bool reads_d_scores(const trace *t, stage_id stage)
{
    return trace_stage_node_input(t, stage, 0) == stage_gradient(READ_NODE, STAGE_SCORES);
}

/* d_Q[i,c] = Σ_j d_scores[i,j] · K[j,c] of the head of column c (d_Q_rotated likewise with
 * K_rotated; under RoPE d_Q is d_Q_rotated turned back, explain_d_unrotated). */
bool explain_d_query(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (!reads_d_scores(t, cell->stage))   /* d_Q under RoPE: d_Q_rotated turned back */
        return explain_d_unrotated(out, t, cell);
    int head = cell->col / t->d_k + 1;
    stage_id scores = trace_stage_node_input(t, cell->stage, 0);   /* d_scores */
    stage_id key = trace_stage_node_input(t, cell->stage, 1);
    size_t m = (size_t)t->m, ld = (size_t)trace_cols(t, key);
    products p = { trace_block(t, scores, head) + (size_t)cell->row * m,
                   trace_block(t, key, 1) + ops_group_offset(t, head)
                       + (size_t)(cell->col % t->d_k), 1, ld };
    explain_put(out, " = Σ_j %s[%s,j] · %s[j,%d] (head %d) = ", stage_get(scores)->name,
                explain_row_label(out, t, cell), stage_get(key)->name,
                (int)ops_group_offset(t, head) + cell->col % t->d_k, head);
    explain_put_product_terms(out, &p, t->m, t);
    return true;
}

/* Head `head`'s products of d_K[j,c]: d_scores[i,j] · Q[i, its column c % d_k]. */
static products key_products(const trace *t, const trace_cell *cell, int head)
{
    stage_id scores = trace_stage_node_input(t, cell->stage, 0);
    stage_id query = trace_stage_node_input(t, cell->stage, 1);
    return (products){ trace_block(t, scores, head) + (size_t)cell->row,
                       trace_block(t, query, 1) + ops_head_offset(t, head)
                           + (size_t)(cell->col % t->d_k), (size_t)t->m,
                       (size_t)trace_cols(t, query) };
}

/* d_K[j,c] = Σ_i d_scores[i,j] · Q[i,c] of the head that reads group c / d_k; under GQA the
 * sum over the query heads of that group, each head's sum with its terms (d_K_rotated
 * likewise; under RoPE d_K is d_K_rotated turned back). */
bool explain_d_key(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (!reads_d_scores(t, cell->stage))
        return explain_d_unrotated(out, t, cell);
    int group = cell->col / t->d_k + 1, c = cell->col % t->d_k;
    const char *scores = stage_get(trace_stage_node_input(t, cell->stage, 0))->name,
               *query = stage_get(trace_stage_node_input(t, cell->stage, 1))->name;
    const trace *keyed = t->in->source ? NULL : t;
    if (ops_one_head_per_group(t)) {
        products p = key_products(t, cell, group);
        explain_put(out, " = Σ_i %s[i,%s] · %s[i,%d] (head %d) = ", scores,
                    explain_source_label(out, t, cell->row), query,
                    (int)ops_head_offset(t, group) + c, group);
        explain_put_product_terms(out, &p, t->n, keyed);
        return true;
    }
    explain_put(out, " = Σ over group %d's heads of Σ_i %s[i,%s] · %s[i, the head's column %d] = ",
                group, scores, explain_source_label(out, t, cell->row), query, c);
    explain_put_group_parts(out, t, cell, group, query, c, true, key_products, keyed);
    return true;
}
