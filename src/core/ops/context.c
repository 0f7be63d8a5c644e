/* The context family: context = weights · V_g in each head (or the online softmax's
 * recurrence), and concat, the heads' contexts side by side. */
#include <string.h>
#include <stdio.h>
#include "ops.h"

void ops_weighted_values(const trace *t, int head, const double *weights, double *out,
                           const trace_span *span, const kernels_config *config)
{
    stage_id v = trace_stage_node_input(t, STAGE_CONTEXT, 1);
    int ld = trace_cols(t, v), offset = (int)ops_group_offset(t, head);
    if (trace_span_is_whole(t, span)) {
        kernels_context(out, weights, trace_block(t, v, 1), t->n, t->m, t->d_k, ld, offset,
                        config);
        return;
    }
    for (int i = span->first; i < span->end; i++)  /* decoding: the keys the cache holds */
        kernels_context(out + (size_t)i * (size_t)t->d_k, weights + (size_t)i * (size_t)t->m,
                        trace_block(t, v, 1), 1, span->keys, t->d_k, ld, offset, config);
}

void forward_context(const trace *t, stage_id stage, int head, double *out,
                     const trace_span *span, const kernels_config *config)
{
    if (t->in->online_softmax)
        ops_online_context(t, head, out, span, config);
    else
        ops_weighted_values(t, head, trace_block(t, trace_stage_node_input(t, stage, 0), head),
                              out, span, config);
}

/* Rows [first, end) of each head's context, in the head's d_k columns. */
void forward_concat(const trace *t, stage_id stage, int head, double *out,
                    const trace_span *span, const kernels_config *config)
{
    (void)head, (void)config;
    size_t d = (size_t)t->d_model, d_k = (size_t)t->d_k;
    stage_id from = trace_stage_node_input(t, stage, 0);
    for (int h = 1; h <= t->heads; h++) {
        const double *context = trace_block(t, from, h);
        for (size_t i = (size_t)span->first; i < (size_t)span->end; i++)
            memcpy(out + i * d + ops_head_offset(t, h), context + i * d_k, d_k * sizeof(double));
    }
}

/* context_h = weights_h · V_g, with d_C_h each head's gradient: d_weights_h = d_C_h · V_gᵀ
 * (every key, hidden ones too: what the context would gain), and d_V_g += weights_hᵀ · d_C_h
 * over the heads that share group g. */
void backward_context(const trace *t, stage_id stage, int input, int head, double *out,
                      const kernels_config *config)
{
    stage_id v = trace_stage_node_input(t, stage, 1);
    size_t ld = (size_t)trace_cols(t, v), d_k = (size_t)t->d_k, m = (size_t)t->m;
    if (input == 0) {
        ops_add_product(out, m, t->n, t->m, t->d_k, trace_gradient_of(t, stage, head), d_k, 1,
                        trace_block(t, v, 1) + ops_group_offset(t, head), 1, ld, config);
        return;
    }
    for (int h = 1; h <= t->heads; h++)
        ops_add_product(out + ops_group_offset(t, h), ld, t->m, t->d_k, t->n,
                        trace_block(t, trace_stage_node_input(t, stage, 0), h), 1, m,
                        trace_gradient_of(t, stage, h), d_k, 1, config);
}

/* concat = the heads' contexts side by side: head h's gradient is its d_k columns of
 * d_concat. */
void backward_concat(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)input, (void)config;
    const double *d = trace_gradient_of(t, stage, 1);
    size_t d_model = (size_t)t->d_model, d_k = (size_t)t->d_k;
    for (size_t i = 0; i < (size_t)t->n; i++)
        for (size_t c = 0; c < d_k; c++)
            out[i * d_k + c] += d[i * d_model + ops_head_offset(t, head) + c];
}

/* d_weights_h: n × m of d_k terms; d_V_g: per head, m × d_k of n terms. */
void count_backward_context(const trace *t, stage_id stage, int input, int head,
                            cost_counts *counts)
{
    (void)stage, (void)head;
    if (input == 0) {
        ops_count_product((tally)t->n, (tally)t->m, (tally)t->d_k, counts);
        return;
    }
    for (int h = 1; h <= t->heads; h++)
        ops_count_product((tally)t->m, (tally)t->d_k, (tally)t->n, counts);
}

/* An addition a cell of the head's d_k columns. */
void count_backward_concat(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    counts->additions += (tally)t->n * (tally)t->d_k;
}

/* ---- explained, counted and written as a formula ---- */

bool explain_context(explain_text *out, const trace *t, const trace_cell *cell)
{
    size_t offset = ops_group_offset(t, cell->head) + (size_t)cell->col;
    stage_id weights = trace_stage_node_input(t, cell->stage, 0),
             v = trace_stage_node_input(t, cell->stage, 1);
    products p = { trace_block(t, weights, cell->head) + (size_t)cell->row * (size_t)t->m,
                   trace_block(t, v, 1) + offset, 1, (size_t)trace_cols(t, v) };
    explain_put(out, " = Σ_j %s[%s,j] × v_j[%zu]", stage_get(weights)->name,
                explain_row_label(out, t, cell), offset);
    explain_put_group(out, t, cell->head);
    explain_put(out, " = ");
    explain_put_product_terms(out, &p, t->m, t);
    return true;
}

bool explain_concat(explain_text *out, const trace *t, const trace_cell *cell)
{
    int head = cell->col / t->d_k + 1;
    explain_put(out, " = %s[%s,%d] of head %d",
                stage_get(trace_stage_node_input(t, cell->stage, 0))->name,
                explain_row_label(out, t, cell), cell->col % t->d_k, head);
    return true;
}

int formula_context(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const char *name = stage_get(stage)->name;
    stage_id v = trace_stage_node_input(t, stage, 1);
    if (t->in->online_softmax)
        return snprintf(buffer, size, "%s = Σ exp(%s − m_t)·%s_%s rescaled tile by tile, / l_T",
                        name, OPS_NAME(MASKED), stage_get(v)->name, ops_key_index(t));
    return snprintf(buffer, size, "%s = %s · %s_%s", name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name, stage_get(v)->name,
                    ops_key_index(t));
}

int formula_concat(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const char *from = stage_get(trace_stage_node_input(t, stage, 0))->name;
    return snprintf(buffer, size, "%s = [%s_1 … %s_h]", stage_get(stage)->name, from, from);
}

/* Per head (n × m) · (m × d_k). The online softmax instead adds exp(s_j − m_t)·v_j by fused
 * multiply-add over the visible keys only (its exponentials are running_sum's), rescales each
 * row's d_k sums once per tile by running_sum's factor, and divides them by l_T once. */
void cost_context(const trace *t, stage_id stage, cost_counts *counts)
{
    if (!t->in->online_softmax) {
        ops_dot_products(t, stage, (tally)t->m, counts);
        return;
    }
    tally d_k = (tally)t->d_k, visible = ops_visible_cells(t, stage),
          rows = ops_cost_heads(t, stage) * (tally)t->n;
    counts->multiplications += visible * d_k + rows * (tally)trace_tile_count(t) * d_k;
    counts->additions += visible * d_k;
    counts->divisions += rows * d_k;
}

/* ---- the gradients this family's backward makes ---- */

/* Whether every key/value group is read by one head only (no GQA sharing): a gradient of K or V
 * is then one head's sum, which an explanation can write out. */
bool ops_one_head_per_group(const trace *t)
{
    return t->kv_heads == t->heads;
}

/* d_weights[i,j] = Σ_c d_context[i,c] · V[j,c] (head h's columns of its group). */
bool explain_d_weights(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id d_context = trace_stage_node_input(t, cell->stage, 0);
    if (stage_get(d_context)->family == FAMILY_DROPOUT)   /* from d_dropped and its mask */
        return ops_explain_d_through_dropout(out, t, cell);
    stage_id v = trace_stage_node_input(t, cell->stage, 1);
    size_t ld = (size_t)trace_cols(t, v), d_k = (size_t)t->d_k;
    products p = { trace_block(t, d_context, cell->head) + (size_t)cell->row * d_k,
                   trace_block(t, v, 1) + (size_t)cell->col * ld
                       + ops_group_offset(t, cell->head), 1, 1 };
    explain_put(out, " = Σ_c %s[%s,c] · %s[%s,c] = ", stage_get(d_context)->name,
                explain_row_label(out, t, cell), stage_get(v)->name, explain_source_label(out, t, cell->col));
    explain_put_product_terms(out, &p, t->d_k, NULL);
    return true;
}

/* Head `head`'s products of d_V[j,c]: weights[i,j] · d_context[i, c % d_k] of that head. */
static products value_products(const trace *t, const trace_cell *cell, int head)
{
    stage_id context = trace_stage_node_input(t, cell->stage, 1);  /* d_context */
    stage_id weights = trace_stage_node_input(t, cell->stage, 0);
    return (products){ trace_block(t, weights, head) + (size_t)cell->row,
                       trace_block(t, context, head) + (size_t)(cell->col % t->d_k),
                       (size_t)t->m, (size_t)t->d_k };
}

/* d_V[j,c] = Σ_i weights[i,j] · d_context[i,c] of the head that reads group c / d_k; under
 * GQA the sum over the query heads of that group, each head's sum with its terms. */
bool explain_d_values(explain_text *out, const trace *t, const trace_cell *cell)
{
    int group = cell->col / t->d_k + 1, c = cell->col % t->d_k;
    const char *weights = stage_get(trace_stage_node_input(t, cell->stage, 0))->name,
               *context = stage_get(trace_stage_node_input(t, cell->stage, 1))->name;
    const trace *keyed = t->in->source ? NULL : t;
    if (ops_one_head_per_group(t)) {
        products p = value_products(t, cell, group);
        explain_put(out, " = Σ_i %s[i,%s] · %s[i,%d] (head %d) = ", weights,
                    explain_source_label(out, t, cell->row), context, c, group);
        explain_put_product_terms(out, &p, t->n, keyed);
        return true;
    }
    explain_put(out, " = Σ over group %d's heads of Σ_i %s[i,%s] · the head's %s[i,%d] = ",
                group, weights, explain_source_label(out, t, cell->row), context, c);
    explain_put_group_parts(out, t, cell, group, context, c, false, value_products, keyed);
    return true;
}

/* d_context[i,c] of head h is d_concat[i, h's offset + c]: concat only places the heads. */
bool explain_d_context(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id concat = trace_stage_node_input(t, cell->stage, 0);
    explain_put(out, " = %s[%s,%zu], a column of head %d's in it", stage_get(concat)->name,
                explain_row_label(out, t, cell), ops_head_offset(t, cell->head) + (size_t)cell->col,
                cell->head);
    return true;
}
