/* The input family: input and source_input, the embeddings plus the sinusoidal positional
 * encoding when the lesson asks for it. */
#include <stdio.h>
#include "ops.h"

/* Whether stage's rows are the source's tokens (source_input in cross-attention). */
static bool of_source(const trace *t, stage_id stage)
{
    return stage_get(stage)->rows == AXIS_SOURCE && t->in->source;
}

/* The embeddings a stage of this family adds to: the query tokens', or the source's. */
static const double *embeddings_of(const trace *t, stage_id stage)
{
    return of_source(t, stage) ? t->in->source_embeddings : t->in->embeddings;
}

/* embeddings + PE, rows [first, end) (a copy without positional encoding). */
void forward_input(const trace *t, stage_id stage, int head, double *out,
                   const trace_span *span, const kernels_config *config)
{
    (void)head, (void)config;
    const double *embeddings = embeddings_of(t, stage);
    int first, end;
    trace_span_rows(t, stage, span, &first, &end);
    size_t from = (size_t)first * (size_t)t->d_model, to = (size_t)end * (size_t)t->d_model;
    for (size_t i = from; i < to; i++)
        out[i] = embeddings[i] + (t->positional ? t->positional[i] : 0.0);
}

/* ---- explained, counted and written as a formula ---- */

static void put_positional(explain_text *out, const trace *t, int pos, int col)
{
    int even = col - col % 2;
    explain_put(out, "%s(%d / 10000^(%d/%d))", col % 2 ? "cos" : "sin", pos, even, t->d_model);
}

/* input and source_input: the token's embedding, plus its positional encoding. */
bool explain_input(explain_text *out, const trace *t, const trace_cell *cell)
{
    const double *embeddings = embeddings_of(t, cell->stage);
    size_t at = (size_t)cell->row * (size_t)t->d_model + (size_t)cell->col;
    explain_put(out, " = embedding(%s)[%d]", explain_row_label(out, t, cell), cell->col);
    if (t->positional) {
        explain_put(out, " + PE[%d,%d] = ", cell->row, cell->col);
        explain_put_number(out, embeddings[at]);
        explain_put(out, " + ");
        put_positional(out, t, cell->row, cell->col);
        explain_put(out, " = ");
        explain_put_number(out, embeddings[at]);
        explain_put(out, " + ");
        explain_put_number(out, t->positional[at]);
    }
    return true;
}

/* "input = embeddings + PE", "source_input = embeddings(source)". */
int formula_input(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = embeddings%s%s", stage_get(stage)->name,
                    of_source(t, stage) ? "(source)" : "", t->in->positional ? " + PE" : "");
}

/* embeddings + PE: one addition per cell; a copy without positional encoding. */
void cost_input(const trace *t, stage_id stage, cost_counts *counts)
{
    if (t->in->positional)
        counts->additions += (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
}
