/* The cost function of every stage the stage table names (stages.h), and what --stats asks of
 * them: a stage's counts and bytes (cost_stage) and one run of its computation (cost_run). */
#include <assert.h>
#include "stage_functions.h"

typedef unsigned long long tally;

static tally heads_of(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? (tally)t->heads : 1;
}

/* Each cell of every head is a dot product of `terms` terms. */
static void dot_products(const trace *t, stage_id stage, tally terms, cost_counts *counts)
{
    tally cells = heads_of(t, stage) * (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
    counts->multiplications += cells * terms;
    counts->additions += cells * (terms - 1);
}

/* embeddings + PE: one addition per cell; a copy without positional encoding. */
void cost_input(const trace *t, stage_id stage, cost_counts *counts)
{
    if (t->in->positional)
        counts->additions += (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
}

/* Q, K, V and output: (rows × d_model) · (d_model × cols), and with a bias one more addition
 * per cell (rows × cols of them). */
void cost_projection(const trace *t, stage_id stage, cost_counts *counts)
{
    dot_products(t, stage, (tally)t->d_model, counts);
    if (trace_stage_bias(t, stage))
        counts->additions += (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
}

/* Per head (n × d_k) · (d_k × m). */
void cost_scores(const trace *t, stage_id stage, cost_counts *counts)
{
    dot_products(t, stage, (tally)t->d_k, counts);
}

/* One division per cell when scaling. */
void cost_scaled(const trace *t, stage_id stage, cost_counts *counts)
{
    if (t->in->scale)
        counts->divisions += heads_of(t, stage) * (tally)t->n * (tally)t->m;
}

/* RoPE: each cell is one side of a 2×2 rotation, two multiplications and one addition (the
 * angles' sines and cosines are counted as neither). */
void cost_rotated(const trace *t, stage_id stage, cost_counts *counts)
{
    tally cells = (tally)trace_rows(t, stage) * (tally)trace_cols(t, stage);
    counts->multiplications += 2 * cells;
    counts->additions += cells;
}

/* ALiBi: per cell one multiplication (slope × distance) and one subtraction. */
void cost_biased(const trace *t, stage_id stage, cost_counts *counts)
{
    tally cells = heads_of(t, stage) * (tally)t->n * (tally)t->m;
    counts->multiplications += cells;
    counts->additions += cells;
}

/* Visible keys of every row, over the heads of stage: the cells the online softmax reads. */
static tally visible_cells(const trace *t, stage_id stage)
{
    tally visible = 0;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            visible += !trace_is_hidden(t, i, j);
    return heads_of(t, stage) * visible;
}

/* Per head (n × m) · (m × d_k). The online softmax instead adds exp(s_j − m_t)·v_j by fused
 * multiply-add over the visible keys only (its exponentials are running_sum's), rescales each
 * row's d_k sums once per tile by running_sum's factor, and divides them by l_T once. */
void cost_context(const trace *t, stage_id stage, cost_counts *counts)
{
    if (!t->in->online_softmax) {
        dot_products(t, stage, (tally)t->m, counts);
        return;
    }
    tally d_k = (tally)t->d_k, visible = visible_cells(t, stage),
          rows = heads_of(t, stage) * (tally)t->n;
    counts->multiplications += visible * d_k + rows * (tally)trace_tile_count(t) * d_k;
    counts->additions += visible * d_k;
    counts->divisions += rows * d_k;
}

/* running_max: comparisons only, no arithmetic. */
void cost_running_max(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)t, (void)stage, (void)counts;
}

/* running_sum: per visible key one subtraction, one exponential and one addition; per row and
 * tile the rescale: one subtraction, one exponential and one multiplication. */
void cost_running_sum(const trace *t, stage_id stage, cost_counts *counts)
{
    tally visible = visible_cells(t, stage);
    tally rescales = heads_of(t, stage) * (tally)t->n * (tally)trace_tile_count(t);
    counts->additions += 2 * visible + rescales;
    counts->exponentials += visible + rescales;
    counts->multiplications += rescales;
}

/* Comparisons (masked) or copies (concat): no arithmetic. */
void cost_nothing(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)t, (void)stage, (void)counts;
}

/* Per visible cell: − max and exp; per row: visible − 1 additions for the sum; every cell
 * divided by it. */
void cost_weights(const trace *t, stage_id stage, cost_counts *counts)
{
    tally visible = 0, heads = heads_of(t, stage);
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            visible += !trace_is_hidden(t, i, j);
    /* the online softmax took its sums in running_sum: only the shift is left here */
    counts->additions += heads * (t->in->online_softmax ? visible : 2 * visible - (tally)t->n);
    counts->exponentials += heads * visible;
    counts->divisions += heads * (tally)t->n * (tally)t->m;
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
    if (stage == STAGE_MASKED)  /* what the mask hides cells by: the window's visible cells */
        counts->bytes += trace_mask_bytes(t);
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
    for (int h = 1; h <= (int)heads_of(t, stage); h++)
        stage_functions_get(stage)->compute(t, stage, h, scratch, &config);
}
