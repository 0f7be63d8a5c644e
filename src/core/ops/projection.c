/* The projection family: Q, K, V and output, each the rows of the stage it reads times a
 * weight matrix, plus its bias when the lesson gives one. */
#include <math.h>
#include <stdio.h>
#include "ops.h"

void trace_project(double *out, const double *from, int rows, int d_model,
                   const double *weights, const double *bias, int cols,
                   const kernels_config *config)
{
    kernels_matmul(out, from, weights, rows, d_model, cols, config);
    if (!bias)
        return;
    for (size_t i = 0; i < (size_t)rows; i++)
        for (size_t c = 0; c < (size_t)cols; c++)
            out[i * (size_t)cols + c] += bias[c];
}

/* rows [first, end) of the stage = those rows of its node input (d_model columns) · its
 * weight (d_model × cols) + its bias, as the row names them. */
void forward_projection(const trace *t, stage_id stage, int head, double *out,
                        const trace_span *span, const kernels_config *config)
{
    (void)head;
    int first, end, cols = trace_cols(t, stage);
    trace_span_rows(t, stage, span, &first, &end);
    const double *from = trace_block(t, trace_stage_node_input(t, stage, 0), 1);
    trace_project(out + (size_t)first * (size_t)cols, from + (size_t)first * (size_t)t->d_model,
                  end - first, t->d_model, trace_param(t, trace_stage_param_input(stage, 0)),
                  trace_param(t, trace_stage_param_input(stage, 1)), cols, config);
}

/* out[r][c] += Σ_k a(r, k) · b(k, c) over k < count: a product of two strided matrices, each
 * cell the fused dot product in k order. The backward pass's one product: each gradient is one
 * such product of a stored matrix (or its transpose) and a gradient, run by the forward's
 * kernels (kernels_add_product). The backward operations are not handed the trace's options,
 * so these run on the kernels' defaults: the fastest code, every processor; the bits are the
 * same on any. */
void ops_add_product(double *out, size_t ld_out, int rows, int cols, int count,
                     const double *a, size_t a_row, size_t a_k,
                     const double *b, size_t b_k, size_t b_col, const kernels_config *config)
{
    kernels_add_product(out, ld_out, rows, cols, count, a, a_row, a_k, b, b_k, b_col, config);
}

/* P = from · W + b, with d_P the gradient of P (rows × cols):
 *   d_from = d_P · Wᵀ, d_W = fromᵀ · d_P, d_b = the column sums of d_P. */
void backward_projection(const trace *t, stage_id stage, int input, int head, double *out,
                         const kernels_config *config)
{
    (void)head;
    const stage_input *in = &stage_get(stage)->inputs[input];
    const double *d = trace_gradient_of(t, stage, 1);
    size_t rows = (size_t)trace_rows(t, stage), cols = (size_t)trace_cols(t, stage),
           dm = (size_t)t->d_model;
    const double *from = trace_block(t, trace_stage_node_input(t, stage, 0), 1),
                 *weights = trace_param(t, trace_stage_param_input(stage, 0));
    if (in->kind == READ_NODE)
        ops_add_product(out, dm, (int)rows, (int)dm, (int)cols, d, cols, 1, weights, 1, cols,
                        config);
    else if (in->id == (int)trace_stage_param_input(stage, 0))
        ops_add_product(out, cols, (int)dm, (int)cols, (int)rows, from, 1, dm, d, cols, 1, config);
    else
        for (size_t i = 0; i < rows; i++)
            for (size_t c = 0; c < cols; c++)
                out[c] += d[i * cols + c];
}

void ops_count_product(tally rows, tally cols, tally count, cost_counts *counts)
{
    counts->multiplications += rows * cols * count;
    counts->additions += rows * cols * count;
}

/* d_from: rows × d_model of cols terms; d_W: d_model × cols of rows terms; d_b: one addition a
 * cell of d_P. */
void count_backward_projection(const trace *t, stage_id stage, int input, int head,
                               cost_counts *counts)
{
    (void)head;
    const stage_input *in = &stage_get(stage)->inputs[input];
    tally rows = (tally)trace_rows(t, stage), cols = (tally)trace_cols(t, stage),
          dm = (tally)t->d_model;
    if (in->kind == READ_NODE)
        ops_count_product(rows, dm, cols, counts);
    else if (in->id == (int)trace_stage_param_input(stage, 0))
        ops_count_product(dm, cols, rows, counts);
    else
        counts->additions += rows * cols;
}

/* ---- explained, counted and written as a formula ---- */

/* Q, K, V and output: a row of stage `from` times a column of the weight matrix, which has as
 * many columns as the stage (d_model, or kv_heads · d_k for K and V), then the bias of that
 * column, when the lesson gives one, as its own last term with its number:
 *   Q[cat,1] = input_cat · W_Q[:,1] + b_Q[1] = (1 × 0.5) + (0.5 × 2) + b_Q[1] (0.1) = 1.6
 * (the sum of the products first, then the bias: the order trace_project adds them in). */
bool explain_projection(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    param_id weight = trace_stage_param_input(cell->stage, 0), bias_id = trace_stage_param_input(cell->stage, 1);
    const double *weights = trace_param(t, weight), *bias = trace_param(t, bias_id);
    const char *matrix = param_get(weight)->name;
    size_t d = (size_t)t->d_model, cols = (size_t)trace_cols(t, cell->stage);
    products p = { trace_block(t, from, 1) + (size_t)cell->row * d, weights + (size_t)cell->col,
                   1, cols };
    explain_put(out, " = %s_%s · %s[:,%d]", stage_get(from)->name, explain_row_label(out, t, cell),
                matrix, cell->col);
    if (bias)
        explain_put(out, " + %s[%d]", param_get(bias_id)->name, cell->col);
    explain_put(out, " = ");
    explain_put_product_terms(out, &p, t->d_model, NULL);
    if (bias) {
        explain_put(out, " + %s[%d] (", param_get(bias_id)->name, cell->col);
        explain_put_number(out, bias[cell->col]);
        explain_put(out, ")");
    }
    return true;
}

/* A weight's gradient, d_W_Q[a,b] = Σ_i input[i,a] · d_Q[i,b], each term named by its token:
 * how much each token's input, times how the loss wants its Q to move, moves W_Q[a,b]. */
bool explain_d_weight(explain_text *out, const trace *t, const trace_cell *cell)
{
    const stage_input *of = &stage_get(cell->stage)->of;
    stage_id reader = stage_param_reader((param_id)of->id), from = trace_stage_node_input(t, reader, 0);
    stage_id gradient = stage_gradient(READ_NODE, (int)reader);
    size_t cols = (size_t)trace_cols(t, reader);
    products p = { trace_block(t, from, 1) + cell->row, trace_gradient_of(t, reader, 1) + cell->col,
                   (size_t)t->d_model, cols };
    explain_put(out, " = Σ_i %s[i,%d] · %s[i,%d] = ", stage_get(from)->name, cell->row,
                stage_get(gradient)->name, cell->col);
    bool keyed = stage_get(from)->rows == AXIS_SOURCE || !t->in->source;
    explain_put_product_terms(out, &p, trace_rows(t, from), keyed ? t : NULL);
    return true;
}

/* "Q = input · W_Q": the stage, the stage its rows come from, the weight matrix, and
 * " + b_Q" when the lesson gives the stage a bias. */
int formula_projection(const trace *t, stage_id stage, char *buffer, size_t size)
{
    param_id bias = trace_stage_param_input(stage, 1);
    bool biased = trace_param(t, bias) != NULL;
    return snprintf(buffer, size, "%s = %s · %s%s%s", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name,
                    param_get(trace_stage_param_input(stage, 0))->name, biased ? " + " : "",
                    biased ? param_get(bias)->name : "");
}

/* Q, K, V and output: (rows × d_model) · (d_model × cols), and with a bias one more addition
 * per cell (rows × cols of them). */
void cost_projection(const trace *t, stage_id stage, cost_counts *counts)
{
    ops_dot_products(t, stage, (tally)t->d_model, counts);
    if (trace_param(t, trace_stage_param_input(stage, 1)))
        counts->additions += (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
}

/* ---- a bias's gradient ---- */

static double gradient_cell(const sum_terms *s, int i)
{
    stage_id d = trace_stage_node_input(s->t, s->cell->stage, 0);
    return trace_block(s->t, d, 1)[(size_t)i * (size_t)trace_cols(s->t, d) + (size_t)s->cell->col];
}

static void put_gradient_cell(explain_text *out, const sum_terms *s, int i)
{
    explain_put_number(out, gradient_cell(s, i));
}

/* d_b_Q[c] = Σ_i d_Q[i,c]: a bias is added to every row, so every row's gradient reaches it. */
bool explain_d_bias(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id d = trace_stage_node_input(t, cell->stage, 0);
    sum_terms s = { .count = trace_rows(t, d), .value = gradient_cell,
                    .put_term = put_gradient_cell, .t = t, .cell = cell };
    explain_put(out, " = Σ_i %s[i,%d] = ", stage_get(d)->name, cell->col);
    explain_put_sum(out, &s);
    return true;
}

/* ---- the gradient of what projections read ---- */

/* Whether forward row s is a projection that reads the node gradient row `of` is of. */
static bool projects(const trace *t, int s, const stage_input *of)
{
    const stage_info *reader = stage_get((stage_id)s);
    return !(reader->flags & STAGE_GRADIENT) && trace_has_stage(t, (stage_id)s)
        && stage_functions_get((stage_id)s)->backward == backward_projection
        && trace_reads_gradient_of(t, &reader->inputs[0], of);
}

/* Whether reader is of the norm family (residual, normed), which sends its own term. */
static bool through_norm(stage_id reader)
{
    return stage_get(reader)->family == FAMILY_NORM;
}

/* d_X[i,a] = Σ over the projections P that read X of Σ_c d_P[i,c] · W_P[a,c] (d_input from Q,
 * K and V; d_concat from output), plus what a residual or a norm reading X sends (ops/norm.c):
 * the sums and terms named, then each one with its numbers. */
bool explain_d_projected(explain_text *out, const trace *t, const trace_cell *cell)
{
    const stage_input *of = &stage_get(cell->stage)->of;
    trace_gradient_reader readers[STAGE_COUNT * STAGE_MAX_INPUTS];
    int count = trace_gradient_readers(t, cell->stage, readers), sums = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (projects(t, s, of))
            explain_put(out, "%s Σ_c %s[%s,c] · %s[%d,c]", sums++ ? " +" : " =",
                        stage_get(stage_gradient(READ_NODE, s))->name, explain_row_label(out, t, cell),
                        param_get(trace_stage_param_input((stage_id)s, 0))->name, cell->col);
    for (int r = 0; r < count; r++)
        if (through_norm(readers[r].reader)) {
            explain_put(out, "%s ", sums++ ? " +" : " =");
            ops_put_through_norm(out, t, readers[r].reader, cell);
        }
    explain_put(out, " =");
    int k = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (!projects(t, s, of))
            continue;
        size_t cols = (size_t)trace_cols(t, (stage_id)s);
        products p = { trace_gradient_of(t, (stage_id)s, 1) + (size_t)cell->row * cols,
                       trace_param(t, trace_stage_param_input((stage_id)s, 0))
                           + (size_t)cell->col * cols, 1, 1 };
        explain_put(out, "%s", k++ ? " + [" : sums > 1 ? " [" : " ");
        explain_put_product_terms(out, &p, (int)cols, NULL);
        explain_put(out, "%s", sums > 1 ? "]" : "");
    }
    for (int r = 0; r < count; r++)
        if (through_norm(readers[r].reader)) {
            explain_put(out, "%s", k++ ? " + " : " ");
            explain_put_number(out, ops_through_norm(t, readers[r].reader, cell->row, cell->col));
        }
    return true;
}
