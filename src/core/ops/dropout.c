/* The dropout family: in training mode dropped = weights · keep / (1 − p), keep a 0/1 mask drawn
 * from the lesson's seed (trace_dropout_draw), which context then reads; and its backward. */
#include <stdio.h>
#include "number.h"
#include "ops.h"
#include "random.h"

/* The generator of row `row` of head `head`: seeded with S + 2^32 · r, r = (head − 1) · n + row
 * the row's number counted head after head (modulo 2^64), so that any row's draws are at hand
 * without drawing the rows before it (decoding draws one row at a time), and the seeds S and
 * S + 1 share no row (they would with S + r). */
static random_state stream_at(const trace *t, int head, int row)
{
    uint64_t r = (uint64_t)(head - 1) * (uint64_t)t->n + (uint64_t)row;
    random_state state;
    random_seed(&state, t->in->dropout_seed + (r << 32));
    return state;
}

double trace_dropout_draw(const trace *t, int head, int row, int col)
{
    random_state state = stream_at(t, head, row);
    for (int j = 0; j < col; j++)
        random_next(&state);
    return random_uniform(&state);
}

bool trace_dropout_keeps(const trace *t, int head, int row, int col)
{
    return trace_dropout_draw(t, head, row, col) >= t->in->dropout_p;
}

/* 1 − p, what a kept weight is divided by (so that each weight keeps its mean over masks). */
static double kept_share(const trace *t)
{
    return 1.0 - t->in->dropout_p;
}

/* Rows [first, end) of head's dropped: weights × keep / (1 − p), each row's keeps drawn key by
 * key from its own stream (the keys decoding knows are the row's first ones). */
void forward_dropped(const trace *t, stage_id stage, int head, double *out,
                     const trace_span *span, const kernels_config *config)
{
    (void)config;
    const double *w = trace_block(t, trace_stage_node_input(t, stage, 0), head);
    double share = kept_share(t);
    for (int i = span->first; i < span->end; i++) {
        random_state state = stream_at(t, head, i);
        for (int j = 0; j < span->keys; j++) {
            double keep = random_uniform(&state) >= t->in->dropout_p ? 1.0 : 0.0;
            size_t at = (size_t)i * (size_t)t->m + (size_t)j;
            out[at] = w[at] * keep / share;
        }
    }
}

/* d_weights[i,j] = d_dropped[i,j] × keep / (1 − p): a dropped weight gets no gradient. */
void backward_dropped(const trace *t, stage_id stage, int input, int head, double *out,
                      const kernels_config *config)
{
    (void)input, (void)config;
    const double *d = trace_gradient_of(t, stage, head);
    double share = kept_share(t);
    for (int i = 0; i < t->n; i++) {
        random_state state = stream_at(t, head, i);
        for (size_t at = (size_t)i * (size_t)t->m; at < (size_t)(i + 1) * (size_t)t->m; at++) {
            double keep = random_uniform(&state) >= t->in->dropout_p ? 1.0 : 0.0;
            out[at] += d[at] * keep / share;
        }
    }
}

/* Each cell: a multiplication, a division and the addition into the block. */
void count_backward_dropped(const trace *t, stage_id stage, int input, int head,
                            cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    tally cells = (tally)t->n * (tally)t->m;
    counts->multiplications += cells;
    counts->divisions += cells;
    counts->additions += cells;
}

/* ---- explained, counted and written as a formula ---- */

/* row_sums[i] = Σ_j dropped[i,j], in key order: 1 for every row of weights, not for dropped. */
double trace_read_row_sums(const trace *t, stage_id stage, int head, int row, int col)
{
    (void)col;
    const double *d = trace_block(t, trace_stage_node_input(t, stage, 0), head)
                      + (size_t)row * (size_t)t->m;
    double sum = 0.0;
    for (int j = 0; j < t->m; j++)
        sum += d[j];
    return sum;
}

/* How many of row `row`'s visible keys head keeps, and how many it has: the row's draws in one
 * pass along its stream (a draw a key, hidden ones too). */
static int kept_keys(const trace *t, int head, int row, int *visible)
{
    random_state state = stream_at(t, head, row);
    int kept = 0;
    *visible = 0;
    for (int j = 0; j < t->m; j++) {
        bool keep = random_uniform(&state) >= t->in->dropout_p;
        if (trace_is_hidden(t, row, j)) continue;
        ++*visible;
        kept += keep;
    }
    return kept;
}

/* Why the row does not sum to 1 (with p 0 it does): ", not 1: 4 of its 5 weights kept, each ×
 * 1/(1 − p) = 1.1111, the dropped one's share lost (1 only on average over masks)". */
static void put_why_not_one(explain_text *out, const trace *t, const trace_cell *cell)
{
    int visible, kept = kept_keys(t, cell->head, cell->row, &visible);
    if (t->in->dropout_p == 0.0) {   /* nothing dropped, nothing scaled */
        explain_put(out, ", 1 as the weights' (p 0 keeps every weight as it is)");
        return;
    }
    if (kept == 0) {
        explain_put(out, ", not 1: %s dropped, so %s takes nothing from any key",
                    visible == 1 ? "its only weight" : "every one of its weights",
                    explain_row_label(out, t, cell));
        return;
    }
    if (kept == visible)
        explain_put(out, ", not 1: all %d of its weights kept, each × 1/(1 − p) = ", visible);
    else
        explain_put(out, ", not 1: %d of its %d weights kept, each × 1/(1 − p) = ", kept, visible);
    explain_put_number(out, 1.0 / kept_share(t));
    explain_put(out, "%s (1 only on average over masks)", kept == visible ? ""
                : kept == visible - 1 ? ", the dropped one's share lost"
                                      : ", the dropped ones' shares lost");
}

static bool row_term_absent(const sum_terms *s, int j)
{
    return trace_is_hidden(s->t, s->cell->row, j);
}

static double row_term(const sum_terms *s, int j)
{
    stage_id dropped = trace_stage_node_input(s->t, s->cell->stage, 0);
    return trace_value(s->t, dropped, s->cell->head, s->cell->row, j);
}

/* A term as it was made: "0.0838 / 0.9" for a kept weight, "0 (dropped)" for a dropped one
 * (told apart by the cell itself, not by drawing again: a term is written in O(1)). */
static void put_row_term(explain_text *out, const sum_terms *s, int j)
{
    const trace *t = s->t;
    stage_id weights = trace_stage_node_input(t, trace_stage_node_input(t, s->cell->stage, 0), 0);
    double w = trace_value(t, weights, s->cell->head, s->cell->row, j);
    if (row_term(s, j) == 0.0 && w != 0.0) {
        explain_put(out, "0 (dropped)");
        return;
    }
    explain_put_number(out, w);
    explain_put(out, " / ");
    explain_put_number(out, kept_share(t));
}

/* row_sums[cat,0] = Σ_j dropped[cat,j], not 1: 2 of its 3 weights kept, … = 0.09 / 0.9 [the] +
 * 0 (dropped) [cat] + 0.81 / 0.9 [sat]. */
bool explain_row_sums(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id dropped = trace_stage_node_input(t, cell->stage, 0);
    explain_put(out, " = Σ_j %s[%s,j]", stage_get(dropped)->name, explain_row_label(out, t, cell));
    put_why_not_one(out, t, cell);
    explain_put(out, " = ");
    sum_terms s = { .count = t->m, .absent = row_term_absent, .value = row_term,
                    .put_term = put_row_term, .t = t, .cell = cell, .keyed = true };
    explain_put_sum(out, &s);
    return true;
}

int formula_row_sums(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = Σ_j %s, each row's total over its keys (1 for %s, not "
                    "for %s)",
                    stage_get(stage)->name, stage_get(trace_stage_node_input(t, stage, 0))->name,
                    OPS_NAME(WEIGHTS), stage_get(trace_stage_node_input(t, stage, 0))->name);
}

/* Each row of every head: m − 1 additions. */
void cost_row_sums(const trace *t, stage_id stage, cost_counts *counts)
{
    counts->additions += ops_cost_heads(t, stage) * (tally)t->n * (tally)(t->m - 1);
}

/* dropped[cat,sat] = weights[cat,sat] × keep / (1 − p), kept (its draw 0.734 ≥ p 0.1; kept
 * weights are × 1/(1 − p) = 1.1111) = 0.4 × 1 / 0.9; a dropped one ends with × 0 / 0.9. */
bool explain_dropped(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id weights = trace_stage_node_input(t, cell->stage, 0);
    double draw = trace_dropout_draw(t, cell->head, cell->row, cell->col);
    bool keep = draw >= t->in->dropout_p;
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(weights)->name, cell);
    explain_put(out, " × keep / (1 − p), %s (its draw ", keep ? "kept" : "dropped");
    explain_put_number(out, draw);
    explain_put(out, keep ? " ≥ p " : " < p ");
    explain_put_number(out, t->in->dropout_p);
    if (trace_is_hidden(t, cell->row, cell->col))
        explain_put(out, ", the weight hidden by the mask anyway");
    explain_put(out, keep ? "; kept weights are × 1/(1 − p) = " : "; a dropped weight is 0");
    if (keep) explain_put_number(out, 1.0 / kept_share(t));
    explain_put(out, ") = ");
    explain_put_number(out, trace_value(t, weights, cell->head, cell->row, cell->col));
    explain_put(out, " × %d / ", keep ? 1 : 0);
    explain_put_number(out, kept_share(t));
    return true;
}

/* d_weights[cat,sat] = d_dropped[cat,sat] × keep / (1 − p) = 0.3 × 1 / 0.9, kept. */
bool ops_explain_d_through_dropout(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id d_dropped = trace_stage_node_input(t, cell->stage, 0);
    bool keep = trace_dropout_keeps(t, cell->head, cell->row, cell->col);
    explain_put(out, " = ");
    explain_put_source_cell(out, t, stage_get(d_dropped)->name, cell);
    explain_put(out, " × keep / (1 − p) = ");
    explain_put_number(out, trace_value(t, d_dropped, cell->head, cell->row, cell->col));
    explain_put(out, " × %d / ", keep ? 1 : 0);
    explain_put_number(out, kept_share(t));
    explain_put(out, keep ? " (kept: its gradient passes, scaled as the weight was)"
                          : " (dropped: no gradient reaches the weight)");
    return true;
}

int formula_dropped(const trace *t, stage_id stage, char *buffer, size_t size)
{
    char p[NUMBER_MAX];
    number_format format = { NUMBER_SHORT, 4, 0, false };
    number_write(t->in->dropout_p, &format, p, sizeof p);
    return snprintf(buffer, size, "%s = %s × keep / (1 − p), p = %s, keep 0 or 1 drawn from "
                    "seed %llu (%s)", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name, p,
                    (unsigned long long)t->in->dropout_seed,
                    t->in->dropout_p == 0.0 ? "p 0: every keep 1, as in evaluation mode"
                                            : "training mode; rows no longer sum to 1");
}

/* Each cell of every head: a multiplication by keep and a division by 1 − p. */
void cost_dropped(const trace *t, stage_id stage, cost_counts *counts)
{
    tally cells = ops_cost_heads(t, stage) * (tally)t->n * (tally)t->m;
    counts->multiplications += cells;
    counts->divisions += cells;
}
