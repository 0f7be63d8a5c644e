/* The loss family: loss = ½ Σᵢⱼ (output[i,j] − target[i,j])², the number training lowers, and
 * its gradient d_output = output − target, where the backward pass begins. */
#include <math.h>
#include <stdio.h>
#include "ops.h"

/* output[i,j] − target[i,j], read the one way the loss, its gradient and their explanations
 * read it. */
static double residual(const trace *t, int row, int col)
{
    stage_id from = trace_stage_node_input(t, STAGE_LOSS, 0);
    size_t at = (size_t)row * (size_t)t->d_model + (size_t)col;
    return trace_block(t, from, 1)[at] - t->in->target[at];
}

/* The sum of squares in row-major order, each step one fused multiply-add, then halved. */
void forward_loss(const trace *t, stage_id stage, int head, double *out,
                  const trace_span *span, const kernels_config *config)
{
    (void)stage, (void)head, (void)span, (void)config;
    double total = 0.0;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->d_model; j++) {
            double r = residual(t, i, j);
            total = fma(r, r, total);
        }
    out[0] = 0.5 * total;
}

double trace_loss(const trace *t)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (stage_get((stage_id)s)->family == FAMILY_LOSS && !(stage_get((stage_id)s)->flags
                                                               & STAGE_GRADIENT)
            && trace_has_stage(t, (stage_id)s))
            return trace_block(t, (stage_id)s, 1)[0];
    return NAN;
}

/* ∂loss/∂output[i,j] = output[i,j] − target[i,j]. */
void backward_loss(const trace *t, stage_id stage, int input, int head, double *out,
                   const kernels_config *config)
{
    (void)stage, (void)input, (void)head, (void)config;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->d_model; j++)
            out[(size_t)i * (size_t)t->d_model + (size_t)j] += residual(t, i, j);
}

/* A difference and an addition into the block a cell of output. */
void count_backward_loss(const trace *t, stage_id stage, int input, int head,
                         cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    counts->additions += 2 * (tally)t->n * (tally)t->d_model;
}

/* ---- explained, counted and written as a formula ---- */

static double squared_residual(const sum_terms *s, int i)
{
    double r = residual(s->t, i / s->t->d_model, i % s->t->d_model);
    return r * r;
}

static void put_squared_residual(explain_text *out, const sum_terms *s, int i)
{
    explain_put(out, "(");
    explain_put_number(out, residual(s->t, i / s->t->d_model, i % s->t->d_model));
    explain_put(out, ")²");
}

/* loss = ½ × ((0.3)² + (−0.1)² + …): every cell's residual, squared. */
bool explain_loss(explain_text *out, const trace *t, const trace_cell *cell)
{
    sum_terms s = { .count = t->n * t->d_model, .value = squared_residual,
                    .put_term = put_squared_residual, .t = t, .cell = cell };
    explain_put(out, " = ½ Σ (%s − target)² = ½ × (",
                stage_get(trace_stage_node_input(t, cell->stage, 0))->name);
    explain_put_sum(out, &s);
    explain_put(out, ")");
    return true;
}

/* d_output[i,j] = output[i,j] − target[i,j] = 0.8 − 1.0, for the node the loss reads (output,
 * residual or normed); a node read by the norm family instead (output by residual, residual by
 * a post-norm) gets what that reader sends back (ops/norm.c). */
bool explain_d_output(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id first = trace_stage_node_input(t, cell->stage, 0);
    if (stage_get(first)->flags & STAGE_GRADIENT)
        return ops_explain_through_norm(out, t, (stage_id)stage_get(first)->of.id, cell);
    size_t at = (size_t)cell->row * (size_t)t->d_model + (size_t)cell->col;
    const char *row = explain_row_label(out, t, cell),
               *from = stage_get(trace_stage_node_input(t, cell->stage, 0))->name;
    explain_put(out, " = %s[%s,%d] − target[%s,%d] = ", from, row, cell->col, row, cell->col);
    explain_put_number(out, trace_block(t, trace_stage_node_input(t, cell->stage, 0), 1)[at]);
    explain_put(out, " − ");
    explain_put_number(out, t->in->target[at]);
    return true;
}

int formula_loss(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = ½ Σᵢⱼ (%s[i,j] − target[i,j])²", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name);
}

/* Per cell a subtraction and a fused multiply-add; one halving. */
void cost_loss(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)stage;
    tally cells = (tally)t->n * (tally)t->d_model;
    counts->multiplications += cells + 1;
    counts->additions += 2 * cells;
}
