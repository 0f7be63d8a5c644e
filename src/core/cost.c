/* What --stats and the lessons' counts ask of the node table's cost operations (which live with
 * their families in ops/): a stage's counts and bytes (cost_stage), the same over another length
 * of sentence (cost_stage_at), the parameters' numbers, one run of a stage's forward (cost_run);
 * and the counting helpers those operations share. */
#include <assert.h>
#include "ops/ops.h"

tally ops_cost_heads(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? (tally)t->heads : 1;
}

/* Each cell of every head is a dot product of `terms` terms. */
void ops_dot_products(const trace *t, stage_id stage, tally terms, cost_counts *counts)
{
    tally cells = ops_cost_heads(t, stage) * (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
    counts->multiplications += cells * terms;
    counts->additions += cells * (terms - 1);
}

/* Visible keys of every row, over the heads of stage: the cells the online softmax reads. */
tally ops_visible_cells(const trace *t, stage_id stage)
{
    tally visible = 0;
    for (int i = 0; i < t->n; i++)
        visible += (tally)trace_visible_keys(t, i);
    return ops_cost_heads(t, stage) * visible;
}

/* Comparisons (masked) or copies (concat): no arithmetic. */
void cost_nothing(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)t, (void)stage, (void)counts;
}

/* The first stage the trace has: the one that adds the positional encoding. */
static stage_id first_stage(const trace *t)
{
    int s = 0;
    while (!trace_has_stage(t, (stage_id)s))
        s++;
    return (stage_id)s;
}

void cost_stage(const trace *t, stage_id stage, cost_counts *counts)
{
    assert(trace_has_stage(t, stage));
    *counts = (cost_counts){ .bytes = trace_stage_bytes(t, stage) };
    stage_functions_get(stage)->cost(t, stage, counts);
    if (stage == first_stage(t))
        counts->bytes += trace_positional_bytes(t);
    if (stage_get(stage)->flags & STAGE_HIDES)  /* what the mask hides by: the window's cells */
        counts->bytes += trace_mask_bytes(t);
}

cost_at_verdict cost_at_check(const trace *t, int n)
{
    if (n < 1 || n > COST_LONGEST)
        return COST_AT_OUT_OF_RANGE;
    if (n != t->n && t->in->source)
        return COST_AT_SOURCE;
    if (n != t->n && t->in->mask == MASK_EXPLICIT)
        return COST_AT_OWN_MASK;
    return COST_AT_OK;
}

void cost_stage_at(const trace *t, int n, stage_id stage, cost_counts *counts)
{
    assert(cost_at_check(t, n) == COST_AT_OK);
    attention_input longer = *t->in;
    longer.n_tokens = n;
    trace shape = trace_shape(&longer);  /* reads longer, which lives until the counts are in */
    cost_stage(&shape, stage, counts);
}

unsigned long long cost_parameter_count(const trace *t, param_id p)
{
    const param_info *info = param_get(p);
    if (!trace_param(t, p))
        return 0;
    return (unsigned long long)trace_axis_length(t, info->rows)
         * (unsigned long long)trace_axis_length(t, info->cols);
}

size_t cost_scratch_doubles(const trace *t)
{
    size_t largest = 1;
    for (int s = 0; s < STAGE_COUNT; s++) {
        size_t cells = (size_t)trace_rows(t, (stage_id)s) * (size_t)trace_cols(t, (stage_id)s);
        if (trace_has_stage(t, (stage_id)s) && cells > largest)
            largest = cells;
    }
    return largest;
}

void cost_run(const trace *t, const trace_options *options, stage_id stage, double *scratch)
{
    kernels_config config = trace_kernels_config(options);
    trace_span whole = trace_span_whole(t);
    for (int h = 1; h <= (int)ops_cost_heads(t, stage); h++)
        stage_functions_get(stage)->forward(t, stage, h, scratch, &whole, &config);
}
