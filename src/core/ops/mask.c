/* The mask family: masked = the scores the softmax reads, with −∞ where the mask hides a key
 * (none, causal, the lesson's own cells, or a sliding window). */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include "ops.h"

const char *trace_mask_name(mask_kind mask)
{
    static const char *const names[] = {
        [MASK_NONE] = "no mask", [MASK_CAUSAL] = "causal mask", [MASK_EXPLICIT] = "lesson's mask",
        [MASK_WINDOW] = "sliding window",
    };
    assert((size_t)mask < sizeof names / sizeof names[0]);
    return names[mask];
}

bool trace_is_hidden(const trace *t, int row, int col)
{
    switch (t->in->mask) {
    case MASK_CAUSAL:
        return col > row;
    case MASK_EXPLICIT:
        return t->in->mask_cells[(size_t)row * (size_t)t->m + (size_t)col] == 0;
    case MASK_WINDOW:
        return col > row || col <= row - t->in->window;
    case MASK_NONE:
        break;
    }
    return false;
}

int trace_visible_keys(const trace *t, int row)
{
    int seen = 0;
    switch (t->in->mask) {
    case MASK_NONE:
        return t->m;
    case MASK_CAUSAL:   /* keys 0 … row */
        return row + 1 < t->m ? row + 1 : t->m;
    case MASK_WINDOW:   /* keys row − window + 1 … row, from 0 */
        return row + 1 < t->in->window ? row + 1 : t->in->window;
    case MASK_EXPLICIT:
        for (int col = 0; col < t->m; col++)
            seen += !trace_is_hidden(t, row, col);
        break;
    }
    return seen;
}

double trace_read_masked(const trace *t, stage_id stage, int head, int row, int col)
{
    return trace_is_hidden(t, row, col)
           ? -INFINITY : trace_value(t, trace_stage_node_input(t, stage, 0), head, row, col);
}

/* masked = its input where a key may be attended, −∞ (a constant) where hidden: the gradient
 * passes through where visible, and a hidden cell's stays exactly 0. */
void backward_masked(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)input, (void)config;
    const double *d = trace_gradient_of(t, stage, head);
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            if (!trace_is_hidden(t, i, j))
                out[(size_t)i * (size_t)t->m + (size_t)j] += d[(size_t)i * (size_t)t->m + (size_t)j];
}

/* An addition a visible cell. */
void count_backward_masked(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            counts->additions += !trace_is_hidden(t, i, j);
}

/* ---- explained, counted and written as a formula ---- */

bool explain_masked(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (trace_is_hidden(t, cell->row, cell->col)) {
        explain_put(out, " = −∞ (hidden by the %s)", trace_mask_name(t->in->mask));
        return false;
    }
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(trace_stage_node_input(t, cell->stage, 0))->name,
                            cell);
    explain_put(out, " (%s)", t->in->mask == MASK_NONE ? "no mask" : "may attend");
    return true;
}

int formula_masked(const trace *t, stage_id stage, char *buffer, size_t size)
{
    static const char *const hidden[] = {
        [MASK_NONE] = " (no mask: nothing hidden)",
        [MASK_CAUSAL] = ", later tokens −∞ (causal mask)",
        [MASK_EXPLICIT] = ", cells the lesson's mask hides −∞",
    };
    const char *name = stage_get(stage)->name,
               *from = stage_get(trace_stage_node_input(t, stage, 0))->name;
    if (t->in->mask == MASK_WINDOW)
        return snprintf(buffer, size, "%s = %s, −∞ where j ≤ i − %d or j > i (sliding window)",
                        name, from, t->in->window);
    assert((size_t)t->in->mask < sizeof hidden / sizeof hidden[0]);
    return snprintf(buffer, size, "%s = %s%s", name, from, hidden[t->in->mask]);
}
