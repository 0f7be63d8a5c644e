/* The compute function of every stage the stage table names (stages.h): each writes one head's
 * matrix from the trace's earlier blocks, by the fast kernels (tests/test_kernels.c holds them
 * to the textbook loops). trace_compute runs them into the trace; --stats into scratch. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "online.h"
#include "stage_functions.h"

/* input and source_input: embeddings + PE, row by row (a copy without positional encoding). */
static void add_embeddings(double *out, const double *embeddings, const double *pe, int rows,
                           int d_model)
{
    size_t count = (size_t)rows * (size_t)d_model;
    for (size_t i = 0; i < count; i++)
        out[i] = embeddings[i] + (pe ? pe[i] : 0.0);
}

void compute_source_input(const trace *t, stage_id stage, int head, double *out,
                          const kernels_config *config)
{
    (void)stage, (void)head, (void)config;
    add_embeddings(out, t->in->source_embeddings, t->positional, t->m, t->d_model);
}

void compute_input(const trace *t, stage_id stage, int head, double *out,
                   const kernels_config *config)
{
    (void)stage, (void)head, (void)config;
    add_embeddings(out, t->in->embeddings, t->positional, t->n, t->d_model);
}

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

/* A projection stage: the rows of stage `from` times a d_model × cols weight matrix (cols:
 * d_model, or kv_heads · d_k for W_K and W_V), plus the stage's bias if it has one. */
static void project(const trace *t, stage_id stage, stage_id from, const double *weights,
                    double *out, const kernels_config *config)
{
    trace_project(out, trace_block(t, from, 1), trace_rows(t, from), t->d_model, weights,
                  trace_stage_bias(t, stage), trace_cols(t, stage), config);
}

void compute_q(const trace *t, stage_id stage, int head, double *out,
               const kernels_config *config)
{
    (void)head;
    project(t, stage, STAGE_INPUT, t->in->W_Q, out, config);
}

void compute_k(const trace *t, stage_id stage, int head, double *out,
               const kernels_config *config)
{
    (void)head;
    project(t, stage, trace_source_stage(t), t->in->W_K, out, config);
}

void compute_v(const trace *t, stage_id stage, int head, double *out,
               const kernels_config *config)
{
    (void)head;
    project(t, stage, trace_source_stage(t), t->in->W_V, out, config);
}

void compute_output(const trace *t, stage_id stage, int head, double *out,
                    const kernels_config *config)
{
    (void)head;
    project(t, stage, STAGE_CONCAT, t->in->W_O, out, config);
}

/* The first column of head's d_k columns in Q, K, V and concat. */
static int head_offset(const trace *t, int head)
{
    return (head - 1) * t->d_k;
}

/* The first column of the key/value group that head reads, in K and V. */
static int group_offset(const trace *t, int head)
{
    return (trace_kv_group(t, head) - 1) * t->d_k;
}

void compute_scores(const trace *t, stage_id stage, int head, double *out,
                    const kernels_config *config)
{
    (void)stage;
    /* Q_h · K_gᵀ: the head's columns of Q against its group's columns of K (the same columns
     * in multi-head attention) */
    kernels_gemm(t->n, t->m, t->d_k, trace_block(t, trace_query_stage(t), 1) + head_offset(t, head),
                 (size_t)t->d_model, trace_block(t, trace_key_stage(t), 1) + group_offset(t, head),
                 (size_t)trace_cols(t, STAGE_K), true, out, (size_t)t->m, config);
}

/* Q_rotated and K_rotated (RoPE): within each head's d_k columns of Q or K, the pair
 * (2p, 2p+1) of row pos turned by the angle pos · base^(−2p/d_k), as RoFormer and llama2.c do.
 * Keys in cross-attention take their index in the source. */
void compute_rotated(const trace *t, stage_id stage, int head, double *out,
                     const kernels_config *config)
{
    (void)head, (void)config;
    const double *from = trace_block(t, stage == STAGE_Q_ROTATED ? STAGE_Q : STAGE_K, 1);
    int cols = trace_cols(t, stage);  /* heads (or key groups) of d_k columns each */
    for (int pos = 0; pos < trace_rows(t, stage); pos++)
        trace_rope_rotate(t, pos, from + (size_t)pos * (size_t)cols,
                          out + (size_t)pos * (size_t)cols, cols);
}

/* biased (ALiBi) = scaled − m_h·|i − j|: a penalty growing with distance, steeper in heads with
 * a larger slope. */
void compute_biased(const trace *t, stage_id stage, int head, double *out,
                    const kernels_config *config)
{
    (void)stage, (void)config;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            out[(size_t)i * (size_t)t->m + (size_t)j] =
                trace_value(t, STAGE_SCALED, head, i, j) - trace_alibi_bias(t, head, i, j);
}

/* The softmax rule carries the core's scaling and mask, so the `scaled` and `masked` that
 * trace_value derives are exactly what the softmax read. */
static void ordinary_weights(const trace *t, int head, double *out, const kernels_config *config)
{
    bool alibi = t->in->alibi;  /* then the softmax reads biased, already scaled */
    kernels_softmax_rule rule = {
        .scale = t->in->scale && !alibi, .d_k = t->d_k, .causal = t->in->mask == MASK_CAUSAL,
        .allowed = t->in->mask == MASK_EXPLICIT ? t->in->mask_cells : t->visible,
    };
    kernels_softmax(out, trace_block(t, alibi ? STAGE_BIASED : STAGE_SCORES, head), t->n, t->m,
                    &rule, config);
}

static void ordinary_context(const trace *t, int head, const double *weights, double *out,
                             const kernels_config *config)
{
    kernels_context(out, weights, trace_block(t, STAGE_V, 1), t->n, t->m, t->d_k,
                    trace_cols(t, STAGE_V), group_offset(t, head), config);
}

/* ---- the online softmax (FlashAttention's recurrence), tile by tile (online.c) ---- */

typedef struct {
    const trace *t;
    int head, row;
} masked_row;

static double read_masked(const void *row, int key)
{
    const masked_row *r = row;
    return trace_value(r->t, STAGE_MASKED, r->head, r->row, key);
}

/* Row i of head's masked scores, over all m keys, as online.c reads a row. */
static online_row online_row_of(const trace *t, const masked_row *at)
{
    return (online_row){ read_masked, at, t->m, t->in->tile,
                         trace_block(t, STAGE_V, 1) + group_offset(t, at->head),
                         (size_t)trace_cols(t, STAGE_V), t->d_k };
}

static const double *running_max_of(const trace *t, int head, int row)
{
    return trace_block(t, STAGE_RUNNING_MAX, head) + (size_t)row * (size_t)trace_tile_count(t);
}

/* m_t = max(m_{t−1}, the largest visible score of tile t); −∞ while only hidden keys were seen. */
void compute_running_max(const trace *t, stage_id stage, int head, double *out,
                         const kernels_config *config)
{
    (void)stage, (void)config;
    for (int i = 0; i < t->n; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at);
        online_running_max(&r, out + (size_t)i * (size_t)trace_tile_count(t));
    }
}

/* l_t = l_{t−1}·exp(m_{t−1} − m_t) + Σ exp(s_j − m_t) over the tile's visible keys. */
void compute_running_sum(const trace *t, stage_id stage, int head, double *out,
                         const kernels_config *config)
{
    (void)stage;
    int tiles = trace_tile_count(t);
    for (int i = 0; i < t->n; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at);
        double sum = 0.0;
        for (int b = 0; b < tiles; b++) {
            online_tile(&r, running_max_of(t, head, i), b, &sum, NULL, config);
            out[(size_t)i * (size_t)tiles + (size_t)b] = sum;
        }
    }
}

/* The last tile's m and l: the row's maximum and its softmax denominator. */
static void online_final(const trace *t, int head, int row, double *max, double *sum)
{
    size_t last = (size_t)row * (size_t)trace_tile_count(t) + (size_t)trace_tile_count(t) - 1;
    *max = trace_block(t, STAGE_RUNNING_MAX, head)[last];
    *sum = trace_block(t, STAGE_RUNNING_SUM, head)[last];
}

/* weights from the recurrence: exp(s_j − m_T) / l_T with the last tile's m and l. */
static void online_weights(const trace *t, int head, double *out, const kernels_config *config)
{
    for (int i = 0; i < t->n; i++) {
        double max, sum;
        online_final(t, head, i, &max, &sum);
        for (int j = 0; j < t->m; j++)
            out[(size_t)i * (size_t)t->m + (size_t)j] =
                online_weight(trace_value(t, STAGE_MASKED, head, i, j), max, sum, config);
    }
}

/* context from the recurrence, as FlashAttention makes it: the unnormalised sum of
 * exp(s_j − m_t)·v_j rescaled tile by tile with l, divided by l_T once at the end. */
static void online_contexts(const trace *t, int head, double *out, const kernels_config *config)
{
    for (int i = 0; i < t->n; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at);
        double max, last, *row = out + (size_t)i * (size_t)t->d_k;
        double sum = online_context(&r, running_max_of(t, head, i), row, config);
        online_final(t, head, i, &max, &last);
        assert(sum == last);  /* the same recurrence as running_sum, step for step */
        (void)sum, (void)last;
    }
}

void compute_weights(const trace *t, stage_id stage, int head, double *out,
                     const kernels_config *config)
{
    (void)stage;
    if (t->in->online_softmax)
        online_weights(t, head, out, config);
    else
        ordinary_weights(t, head, out, config);
}

void compute_context(const trace *t, stage_id stage, int head, double *out,
                     const kernels_config *config)
{
    (void)stage;
    if (t->in->online_softmax)
        online_contexts(t, head, out, config);
    else
        ordinary_context(t, head, trace_block(t, STAGE_WEIGHTS, head), out, config);
}

/* The largest |a[i] − b[i]| over count numbers, or at least `so_far`. */
static double largest_difference(const double *a, const double *b, size_t count, double so_far)
{
    for (size_t i = 0; i < count; i++)
        so_far = fmax(so_far, fabs(a[i] - b[i]));
    return so_far;
}

double trace_online_difference(const trace *t)
{
    if (!t->in->online_softmax)
        return 0.0;
    size_t cells = (size_t)t->n * (size_t)t->m, context_cells = (size_t)t->n * (size_t)t->d_k;
    double *weights = malloc((cells + context_cells) * sizeof *weights), difference = 0.0;
    if (!weights)
        return -1.0;
    double *context = weights + cells;
    kernels_config config = trace_kernels_config(NULL);
    for (int h = 1; h <= t->heads; h++) {
        ordinary_weights(t, h, weights, &config);
        ordinary_context(t, h, weights, context, &config);
        difference = largest_difference(weights, trace_block(t, STAGE_WEIGHTS, h), cells,
                                        difference);
        difference = largest_difference(context, trace_block(t, STAGE_CONTEXT, h),
                                        context_cells, difference);
    }
    free(weights);
    return difference;
}

void compute_concat(const trace *t, stage_id stage, int head, double *out,
                    const kernels_config *config)
{
    (void)stage, (void)head, (void)config;
    size_t d = (size_t)t->d_model, d_k = (size_t)t->d_k;
    for (int h = 1; h <= t->heads; h++) {
        const double *context = trace_block(t, STAGE_CONTEXT, h);
        for (size_t i = 0; i < (size_t)t->n; i++)
            memcpy(out + i * d + (size_t)head_offset(t, h), context + i * d_k,
                   d_k * sizeof(double));
    }
}

/* A derived stage has no block: computing it is reading every cell, which is what showing it
 * costs (and what --stats times). */
void compute_derived(const trace *t, stage_id stage, int head, double *out,
                     const kernels_config *config)
{
    (void)config;
    assert(stage_get(stage)->storage == STAGE_DERIVED);
    int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            out[(size_t)i * (size_t)cols + (size_t)j] = trace_value(t, stage, head, i, j);
}
