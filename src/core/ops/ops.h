/* What the operation files of src/core/ops/ share: each holds the forward, explain, cost and
 * formula operations of one family of the node table (stages.h), so that each rule of the
 * computation is written once, beside its explanation and its count. */
#ifndef ATTNSTEP_OPS_H
#define ATTNSTEP_OPS_H

#include "stage_functions.h"

/* The first column of head's d_k columns in Q, concat (and K and V without shared heads). */
size_t ops_head_offset(const trace *t, int head);

/* The first column of the key/value group that head reads, in K and V. */
size_t ops_group_offset(const trace *t, int head);

/* Rows of span of head's context = weights · V_g, the kernels' product (ops/context.c); also
 * the ordinary softmax's context the online one is compared with. */
void ops_weighted_values(const trace *t, int head, const double *weights, double *out,
                         const trace_span *span, const kernels_config *config);

/* Rows of span of head's context by the online softmax's recurrence (ops/softmax.c). */
void ops_online_context(const trace *t, int head, double *out, const trace_span *span,
                        const kernels_config *config);

/* out[r][c] += Σ_k a[r·a_row + k·a_k] · b[k·b_k + c·b_col] over k < count, for r < rows and
 * c < cols (out's rows ld_out apart): each cell the fused dot product in k order, then added
 * once, on config's path and threads (the forward's). The backward operations' one product
 * (ops/projection.c). */
void ops_add_product(double *out, size_t ld_out, int rows, int cols, int count,
                     const double *a, size_t a_row, size_t a_k,
                     const double *b, size_t b_k, size_t b_col, const kernels_config *config);

/* Σ_k weights[row,k] · d_weights[row,k] of head: the term the softmax's backward subtracts
 * (ops/softmax.c). */
double ops_softmax_backward_dot(const trace *t, int head, int row);

/* A stage's name in an explanation or a formula, from the node table (never written out). */
#define OPS_NAME(id) (stage_get(STAGE_##id)->name)

/* ---- writing explanations (explain.c) ---- */

/* What a product-sum reads: term i is left(i) × right(i). The total the explanation ends with is
 * the trace's own cell: these terms summed as the kernels sum them, in this order, each step one
 * fused multiply-add (total = fma(left(i), right(i), total)), so the sum shown is the sum the
 * trace holds to the bit (tests/test_kernels.c and tests/reference_attention.py hold the kernels
 * to that definition). */
typedef struct {
    const double *left, *right;
    size_t left_stride, right_stride;
} products;

/* The terms of a sum: how many, which are left out of it (masked), the value of each and how
 * it is written. */
typedef struct sum_terms sum_terms;
struct sum_terms {
    int count;
    bool (*absent)(const sum_terms *s, int i);   /* NULL: every term is in the sum */
    double (*value)(const sum_terms *s, int i);
    void (*put_term)(explain_text *out, const sum_terms *s, int i);
    const trace *t;
    const trace_cell *cell;
    products p;
    double shift;                                /* the softmax's row max */
    int first;                                   /* the key of term 0 (a tile's first) */
    bool keyed;                                  /* term i is key first + i: each is named by
                                                    its token (t needed) */
};

/* Appends to out as printf does; a number at out's precision (or `precision`), by the one
 * formatter. */
void explain_put(explain_text *out, const char *format, ...);
void explain_put_number_at(explain_text *out, double x, int precision);
void explain_put_number(explain_text *out, double x);

/* Whether term i is in the sum (not left out, e.g. hidden by the mask). */
bool explain_term_present(const sum_terms *s, int i);

/* The sum's present terms joined by " + ": all of them when they fit or when out->full, else
 * the largest with a note of how many were left out and how small they are. */
void explain_put_sum(explain_text *out, const sum_terms *s);

/* count products of p as a sum; keyed (not NULL) when term i is key i of that trace, each then
 * named by its token. */
void explain_put_product_terms(explain_text *out, const products *p, int count,
                               const trace *keyed);

/* One query head's products of a gradient cell (p's left and right, t->n terms). */
typedef products (*head_products)(const trace *t, const trace_cell *cell, int head);

/* A gradient cell that the query heads of key/value group `group` share (GQA): for each head of
 * the group, " + " before any but the first, then "[head H, NAME[i,COL]: terms = subtotal]",
 * COL being column c of the head (of the whole matrix, past the head's offset, when offset),
 * the subtotal the fused sum of of_head's products in k order, as the backward adds each head's;
 * keyed as for explain_put_product_terms. */
void explain_put_group_parts(explain_text *out, const trace *t, const trace_cell *cell, int group,
                             const char *name, int c, bool offset, head_products of_head,
                             const trace *keyed);

/* The label of the cell's row along its stage's rows, and of key i, as cells name them
 * ("dog@6" for a repeated token): in one of out's name buffers (stage_functions.h), alive until
 * EXPLAIN_NAMES_KEPT more are taken. */
const char *explain_row_label(explain_text *out, const trace *t, const trace_cell *cell);
const char *explain_source_label(explain_text *out, const trace *t, int i);

/* " of group 2" after a key or value that grouped-query attention shares; nothing otherwise. */
void explain_put_group(explain_text *out, const trace *t, int head);

/* "stage[row,key]" with the cell's labels. */
void explain_put_source_cell(explain_text *out, const trace *t, const char *stage,
                             const trace_cell *cell);

/* A gradient through RoPE's rotation, turned back, with its numbers (ops/positions.c). */
bool explain_d_unrotated(explain_text *out, const trace *t, const trace_cell *cell);

/* What reader (residual or normed, ops/norm.c) sends back to cell (row, col) of the node it
 * reads: a term of that node's gradient; its name in an explanation ("d_residual[cat,1]",
 * "(d_normed[cat,·] back through normed)"); and a gradient made by that reader alone,
 * explained with its numbers (d_output from d_residual, d_residual from d_normed). */
double ops_through_norm(const trace *t, stage_id reader, int row, int col);
void ops_put_through_norm(explain_text *out, const trace *t, stage_id reader,
                          const trace_cell *cell);
bool ops_explain_through_norm(explain_text *out, const trace *t, stage_id reader,
                              const trace_cell *cell);

/* d_weights through dropout, d_dropped × keep / (1 − p), with its numbers (ops/dropout.c). */
bool ops_explain_d_through_dropout(explain_text *out, const trace *t, const trace_cell *cell);

/* Whether each key/value group is read by one head only (ops/context.c). */
bool ops_one_head_per_group(const trace *t);

/* ---- counting (cost.c) ---- */

typedef unsigned long long tally;

/* The heads of stage (1 for a stage that is not per head). */
tally ops_cost_heads(const trace *t, stage_id stage);

/* Each cell of every head of stage is a dot product of `terms` terms. */
void ops_dot_products(const trace *t, stage_id stage, tally terms, cost_counts *counts);

/* The count of one `backward` call (stage_backward_fn's arguments), each beside its operation
 * in the family's file: what it adds into the gradient block, counted as the code computes it
 * (a product's cell of k terms: k multiplications and k additions, its fused sum and the add
 * into the block). gradient.c's cost_gradient sums them as forward_gradient calls them. */
typedef void backward_count_fn(const trace *t, stage_id stage, int input, int head,
                               cost_counts *counts);
backward_count_fn count_backward_projection, count_backward_rotated, count_backward_scores,
    count_backward_scaled, count_backward_biased, count_backward_masked, count_backward_weights,
    count_backward_context, count_backward_concat, count_backward_loss, count_backward_normed,
    count_backward_residual, count_backward_dropped;

/* A backward product of rows × cols cells of count terms each (ops_add_product). */
void ops_count_product(tally rows, tally cols, tally count, cost_counts *counts);

/* Visible keys of every row, over the heads of stage: the cells the online softmax reads. */
tally ops_visible_cells(const trace *t, stage_id stage);

/* ---- formulas (formula.c) ---- */

/* "h" in multi-head attention; "g" (the head's key/value group) when heads share keys (GQA). */
const char *ops_key_index(const trace *t);

#endif
