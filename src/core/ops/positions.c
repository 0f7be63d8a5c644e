/* The positions family: RoPE's Q_rotated and K_rotated (RoFormer), each row of Q or K turned
 * pair by pair by an angle that grows with the token's position. */
#include <math.h>
#include <stdio.h>
#include "ops.h"

double trace_rope_angle(const trace *t, int pos, int pair)
{
    return pos * pow(t->in->rope_base, -2.0 * pair / t->d_k);
}

void trace_rope_rotate(const trace *t, int pos, const double *from, double *out, int cols)
{
    for (int col = 0; col < cols; col += 2) {
        double angle = trace_rope_angle(t, pos, col % t->d_k / 2), c = cos(angle),
               s = sin(angle);
        out[col] = from[col] * c - from[col + 1] * s;
        out[col + 1] = from[col] * s + from[col + 1] * c;
    }
}

/* Within each head's d_k columns of the stage read (Q or K), the pair (2p, 2p+1) of row pos
 * turned by the angle pos · base^(−2p/d_k), as RoFormer and llama2.c do. Keys in
 * cross-attention take their index in the source. */
void forward_rotated(const trace *t, stage_id stage, int head, double *out,
                     const trace_span *span, const kernels_config *config)
{
    (void)head, (void)config;
    const double *from = trace_block(t, trace_stage_node_input(t, stage, 0), 1);
    int cols = trace_cols(t, stage), first, end;  /* heads (or key groups) of d_k columns */
    trace_span_rows(t, stage, span, &first, &end);
    for (int pos = first; pos < end; pos++)
        trace_rope_rotate(t, pos, from + (size_t)pos * (size_t)cols,
                          out + (size_t)pos * (size_t)cols, cols);
}

/* Each pair turned by θ: its gradient turned back by −θ,
 *   d_x = d_x'·cos θ + d_y'·sin θ,  d_y = −d_x'·sin θ + d_y'·cos θ. */
void backward_rotated(const trace *t, stage_id stage, int input, int head, double *out,
                      const kernels_config *config)
{
    (void)input, (void)head, (void)config;
    const double *d = trace_gradient_of(t, stage, 1);
    int cols = trace_cols(t, stage);
    for (int pos = 0; pos < trace_rows(t, stage); pos++)
        for (int col = 0; col < cols; col += 2) {
            double angle = trace_rope_angle(t, pos, col % t->d_k / 2), c = cos(angle),
                   s = sin(angle);
            size_t at = (size_t)pos * (size_t)cols + (size_t)col;
            out[at] += d[at] * c + d[at + 1] * s;
            out[at + 1] += d[at + 1] * c - d[at] * s;
        }
}

/* Each pair: four multiplications, a sum, a difference and two additions into the block (the
 * angle's sine and cosine are not counted, as the forward does not count them). */
void count_backward_rotated(const trace *t, stage_id stage, int input, int head,
                            cost_counts *counts)
{
    (void)input, (void)head;
    tally pairs = (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage) / 2;
    counts->multiplications += 4 * pairs;
    counts->additions += 4 * pairs;
}

/* ---- explained, counted and written as a formula ---- */

/* Q_rotated and K_rotated: the pair the cell belongs to, turned by its angle, with numbers:
 *   Q_rotated[cat,2] = Q[cat,2]·cos θ − Q[cat,3]·sin θ, θ = 1 × 10000^(−2/4) = 0.01 (pair 1 of
 *   head 1) = (0.5 × 0.99995) − (1 × 0.0099998) */
bool explain_rotated(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    const char *name = stage_get(from)->name;
    int in_head = cell->col % t->d_k, pair = in_head / 2, first = cell->col - in_head % 2;
    bool second = in_head % 2 == 1;
    double angle = trace_rope_angle(t, cell->row, pair);
    double x = trace_value(t, from, 1, cell->row, first);
    double y = trace_value(t, from, 1, cell->row, first + 1);
    const char *row = explain_row_label(out, t, cell);
    if (second)
        explain_put(out, " = %s[%s,%d]·sin θ + %s[%s,%d]·cos θ", name, row, first, name, row, first + 1);
    else
        explain_put(out, " = %s[%s,%d]·cos θ − %s[%s,%d]·sin θ", name, row, first, name, row, first + 1);
    explain_put(out, ", θ = %d × ", cell->row);
    explain_put_number(out, t->in->rope_base);
    explain_put(out, "^(−%d/%d) = ", 2 * pair, t->d_k);
    explain_put_number(out, angle);
    bool grouped = stage_get(cell->stage)->cols == AXIS_KV_DIMS && t->kv_heads < t->heads;
    explain_put(out, " (pair %d of %s %d) = (", pair, grouped ? "group" : "head", cell->col / t->d_k + 1);
    explain_put_number(out, x);
    explain_put(out, " × ");
    explain_put_number(out, second ? sin(angle) : cos(angle));
    explain_put(out, second ? ") + (" : ") − (");
    explain_put_number(out, y);
    explain_put(out, " × ");
    explain_put_number(out, second ? cos(angle) : sin(angle));
    explain_put(out, ")");
    return true;
}

/* "Q_rotated = Q with …": what RoPE does to the rows of the stage read. */
int formula_rotated(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s with pair p turned by pos · base^(−2p/d_k)",
                    stage_get(stage)->name, stage_get(trace_stage_node_input(t, stage, 0))->name);
}

/* RoPE: each cell is one side of a 2×2 rotation, two multiplications and one addition (the
 * angles' sines and cosines are counted as neither). */
void cost_rotated(const trace *t, stage_id stage, cost_counts *counts)
{
    tally cells = (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
    counts->multiplications += 2 * cells;
    counts->additions += cells;
}

/* ---- the gradient through the rotation ---- */

/* d_Q[i,2p] = d_Q_rotated[i,2p]·cos θ + d_Q_rotated[i,2p+1]·sin θ and d_Q[i,2p+1] =
 * d_Q_rotated[i,2p+1]·cos θ − d_Q_rotated[i,2p]·sin θ: the pair's gradient turned back by −θ
 * (backward_rotated), with its numbers. */
bool explain_d_unrotated(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);   /* d_Q_rotated, d_K_rotated */
    const char *name = stage_get(from)->name, *row = explain_row_label(out, t, cell);
    int in_head = cell->col % t->d_k, pair = in_head / 2, first = cell->col - in_head % 2;
    bool second = in_head % 2 == 1;
    double angle = trace_rope_angle(t, cell->row, pair);
    double x = trace_value(t, from, 1, cell->row, first), y = trace_value(t, from, 1, cell->row,
                                                                           first + 1);
    if (second)
        explain_put(out, " = %s[%s,%d]·cos θ − %s[%s,%d]·sin θ", name, row, first + 1, name, row,
                    first);
    else
        explain_put(out, " = %s[%s,%d]·cos θ + %s[%s,%d]·sin θ", name, row, first, name, row,
                    first + 1);
    explain_put(out, ", turned back by θ = ");
    explain_put_number(out, angle);
    explain_put(out, " (pair %d) = (", pair);
    explain_put_number(out, second ? y : x);
    explain_put(out, " × ");
    explain_put_number(out, cos(angle));
    explain_put(out, second ? ") − (" : ") + (");
    explain_put_number(out, second ? x : y);
    explain_put(out, " × ");
    explain_put_number(out, sin(angle));
    explain_put(out, ")");
    return true;
}
