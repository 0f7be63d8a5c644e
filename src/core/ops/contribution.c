/* The contribution family: what each head adds to output (head_output = context_h · W_O's rows
 * of head h; Σ_h head_output + b_O = output), and what each key really sends each query through
 * a head, weighted_norms[i,j] = weights[i,j] · ‖V_h[j] · W_O^h‖ (Kobayashi et al. 2020): a
 * large weight on a short vector carries little. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ops.h"

/* W_O's d_k rows of head h: a d_k × d_model block. */
static const double *head_rows_of_w_o(const trace *t, int head)
{
    return t->in->W_O + ops_head_offset(t, head) * (size_t)t->d_model;
}

/* Rows [first, end) of head_output at head: context_h · W_O^h, each cell the fused dot product
 * of d_k terms in k order (trace_project, no bias: b_O is output's, once). */
void forward_head_output(const trace *t, stage_id stage, int head, double *out,
                         const trace_span *span, const kernels_config *config)
{
    const double *context = trace_block(t, trace_stage_node_input(t, stage, 0), head);
    size_t first = (size_t)span->first;
    trace_project(out + first * (size_t)t->d_model, context + first * (size_t)t->d_k,
                  span->end - span->first, t->d_k, head_rows_of_w_o(t, head), NULL, t->d_model,
                  config);
}

/* ‖V_h[j] · W_O^h‖ of key j: the length of what key j's value becomes in output through head h
 * (the square root of the fused sum of squares, in column order). */
static double sent_length(const trace *t, stage_id stage, int head, int j)
{
    stage_id v = trace_stage_node_input(t, stage, 1);
    const double *value = trace_block(t, v, 1) + (size_t)j * (size_t)trace_cols(t, v)
                          + ops_group_offset(t, head);
    const double *w_o = head_rows_of_w_o(t, head);
    double squares = 0.0;
    for (int c = 0; c < t->d_model; c++) {
        double x = 0.0;
        for (int k = 0; k < t->d_k; k++)
            x = fma(value[k], w_o[(size_t)k * (size_t)t->d_model + (size_t)c], x);
        squares = fma(x, x, squares);
    }
    return sqrt(squares);
}

/* Rows [first, end) of weighted_norms at head: each key's length once, times each row's weight
 * (what context reads: dropped under dropout). */
void forward_weighted_norms(const trace *t, stage_id stage, int head, double *out,
                            const trace_span *span, const kernels_config *config)
{
    (void)config;
    const double *w = trace_block(t, trace_stage_node_input(t, stage, 0), head);
    for (int j = 0; j < span->keys; j++) {
        double length = sent_length(t, stage, head, j);
        for (int i = span->first; i < span->end; i++) {
            size_t at = (size_t)i * (size_t)t->m + (size_t)j;
            out[at] = w[at] * length;
        }
    }
}

/* ---- explained, counted and written as a formula ---- */

/* head_output[cat,3] = Σ_c context[cat,c] × W_O[2 + c,3] (head 2's rows of W_O) = terms. */
bool explain_head_output(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id context = trace_stage_node_input(t, cell->stage, 0);
    size_t offset = ops_head_offset(t, cell->head), d = (size_t)t->d_model;
    products p = { trace_block(t, context, cell->head) + (size_t)cell->row * (size_t)t->d_k,
                   head_rows_of_w_o(t, cell->head) + (size_t)cell->col, 1, d };
    explain_put(out, " = Σ_c %s[%s,c] × W_O[%zu + c,%d] (head %d's rows of W_O; b_O is added "
                "once, in output) = ", stage_get(context)->name, explain_row_label(out, t, cell),
                offset, cell->col, cell->head);
    explain_put_product_terms(out, &p, t->d_k, NULL);
    return true;
}

/* weighted_norms[cat,sat] = weights[cat,sat] × ‖V[sat] · W_O^h‖ = 0.4 × 2.31: the share times
 * the length of what sat's value becomes. */
bool explain_weighted_norms(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id weights = trace_stage_node_input(t, cell->stage, 0);
    const char *key = explain_source_label(out, t, cell->col);
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(weights)->name, cell);
    explain_put(out, " × ‖%s[%s] · W_O (head %d's rows)‖, what %s sends %s through head %d = ",
                stage_get(trace_stage_node_input(t, cell->stage, 1))->name, key, cell->head, key,
                explain_row_label(out, t, cell), cell->head);
    explain_put_number(out, trace_value(t, weights, cell->head, cell->row, cell->col));
    explain_put(out, " × ");
    explain_put_number(out, sent_length(t, cell->stage, cell->head, cell->col));
    return true;
}

int formula_head_output(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s_h · W_O^h, what head h adds to %s (W_O^h: head h's "
                    "d_k rows of W_O; Σ_h %s + b_O = %s)", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name, OPS_NAME(OUTPUT),
                    stage_get(stage)->name, OPS_NAME(OUTPUT));
}

int formula_weighted_norms(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s_ij · ‖%s_j · W_O^h‖, what key j sends query i "
                    "through head h, not the weight alone (Kobayashi et al. 2020)",
                    stage_get(stage)->name, stage_get(trace_stage_node_input(t, stage, 0))->name,
                    stage_get(trace_stage_node_input(t, stage, 1))->name);
}

/* Per head: n × d_model dot products of d_k terms. */
void cost_head_output(const trace *t, stage_id stage, cost_counts *counts)
{
    ops_dot_products(t, stage, (tally)t->d_k, counts);
}

/* Per head and key: d_model dot products of d_k terms and their d_model squares summed (the
 * square root not counted, as the norm's are not); then a multiplication a cell. */
void cost_weighted_norms(const trace *t, stage_id stage, cost_counts *counts)
{
    tally keys = ops_cost_heads(t, stage) * (tally)t->m, d = (tally)t->d_model;
    counts->multiplications += keys * d * ((tally)t->d_k + 1) + keys * (tally)t->n;
    counts->additions += keys * d * ((tally)t->d_k + 1);
}
