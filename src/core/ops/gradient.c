/* The gradient rows' own operations: what every ∂loss/∂X row shares (its formula, its count
 * and the explanation of a cell that no family writes more of). The backward pass itself is
 * forward_gradient (trace.c) over the `backward` operations beside each family's forward. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include "number.h"
#include "ops.h"

/* The name of what a gradient row is the gradient of: a stage's or a parameter's. */
static const char *of_name(stage_id stage)
{
    const stage_input *of = &stage_get(stage)->of;
    return of->kind == READ_PARAM ? param_get((param_id)of->id)->name : stage_get((stage_id)of->id)->name;
}

/* " = ∂loss/∂Q[cat,1]": the cell's meaning, before its value. */
bool explain_gradient(explain_text *out, const trace *t, const trace_cell *cell)
{
    char row[64], col[64];
    const stage_info *info = stage_get(cell->stage);
    explain_put(out, " = ∂%s/∂%s[%s,%s]", OPS_NAME(LOSS), of_name(cell->stage),
                trace_axis_name(t, info->rows, cell->row, row, sizeof row),
                trace_axis_name(t, info->cols, cell->col, col, sizeof col));
    return true;
}

/* The largest |cell| and the Frobenius norm of a gradient stage over all its heads: how large
 * the gradient is, so that "vanishing" is a number on screen. */
static void gradient_size(const trace *t, stage_id stage, double *largest, double *norm)
{
    size_t cells = trace_stage_bytes(t, stage) / sizeof(double);
    const double *g = trace_block(t, stage, 1);
    double squares = 0.0;
    *largest = 0.0;
    for (size_t i = 0; i < cells; i++) {
        *largest = fmax(*largest, fabs(g[i]));
        squares = fma(g[i], g[i], squares);
    }
    *norm = sqrt(squares);
}

/* "d_Q = ∂loss/∂Q, from d_scores, K (largest |cell| 0.1234, norm 0.5678)": what it means, what
 * it is made from in this trace, and its size over every head. */
int formula_gradient(const trace *t, stage_id stage, char *buffer, size_t size)
{
    char inputs[160], largest_text[NUMBER_MAX], norm_text[NUMBER_MAX];
    double largest, norm;
    trace_stage_inputs(t, stage, inputs, sizeof inputs);
    gradient_size(t, stage, &largest, &norm);
    number_format format = { NUMBER_SHORT, 4, 0, false };
    number_write(largest, &format, largest_text, sizeof largest_text);
    number_write(norm, &format, norm_text, sizeof norm_text);
    return snprintf(buffer, size, "%s = ∂%s/∂%s, from %s (largest |cell| %s, norm %s%s)",
                    stage_get(stage)->name, OPS_NAME(LOSS), of_name(stage), inputs, largest_text,
                    norm_text, stage_get(stage)->per_head && t->heads > 1 ? ", all heads" : "");
}

/* Each backward operation and its count (beside it in its family's file). */
static const struct {
    stage_backward_fn *backward;
    backward_count_fn *count;
} counters[] = {
    { backward_projection, count_backward_projection }, { backward_rotated, count_backward_rotated },
    { backward_scores, count_backward_scores }, { backward_scaled, count_backward_scaled },
    { backward_biased, count_backward_biased }, { backward_masked, count_backward_masked },
    { backward_weights, count_backward_weights }, { backward_context, count_backward_context },
    { backward_concat, count_backward_concat }, { backward_loss, count_backward_loss },
    { backward_normed, count_backward_normed }, { backward_residual, count_backward_residual },
    { backward_dropped, count_backward_dropped },
};

/* Adds the count of reader's backward to its input `input` at head. */
static void count_backward(const trace *t, stage_id reader, int input, int head,
                           cost_counts *counts)
{
    stage_backward_fn *backward = stage_functions_get(reader)->backward;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        if (counters[i].backward == backward) {
            counters[i].count(t, reader, input, head, counts);
            return;
        }
    assert(backward == backward_nothing);   /* a backward that does something is counted */
}

/* What forward_gradient computes, counted as it runs: for each head of the gradient's block,
 * every forward row that reads its node or parameter, by that row's backward count. */
void cost_gradient(const trace *t, stage_id stage, cost_counts *counts)
{
    trace_gradient_reader readers[STAGE_COUNT * STAGE_MAX_INPUTS];
    int count = trace_gradient_readers(t, stage, readers);
    for (tally h = 1; h <= ops_cost_heads(t, stage); h++)
        for (int r = 0; r < count; r++)
            count_backward(t, readers[r].reader, readers[r].input, (int)h, counts);
}
