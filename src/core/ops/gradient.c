/* The gradient rows' own operations: what every ∂loss/∂X row shares (its formula, its count
 * and the explanation of a cell that no family writes more of). The backward pass itself is
 * forward_gradient (trace.c) over the `backward` operations beside each family's forward. */
#include <stdio.h>
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

/* "d_Q = ∂loss/∂Q, from d_scores, K": what it means and what it is made from in this trace. */
int formula_gradient(const trace *t, stage_id stage, char *buffer, size_t size)
{
    char inputs[160];
    trace_stage_inputs(t, stage, inputs, sizeof inputs);
    return snprintf(buffer, size, "%s = ∂%s/∂%s, from %s", stage_get(stage)->name,
                    OPS_NAME(LOSS), of_name(stage), inputs);
}

/* Each cell of the gradient is the sum of what its readers send: one addition per cell per
 * reader after the first, beside the products each reader's backward counts. */
void cost_gradient(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)t, (void)stage, (void)counts;
}
