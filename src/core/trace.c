/* The attention core's forward pass: every stage of multi-head scaled dot-product attention,
 * computed in double precision and kept in a trace. No I/O, no globals. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"
#include "kernels.h"

static const char *const status_messages[] = {
    [TRACE_OK] = "ok",
    [TRACE_ERROR_SHAPE] = "the lesson's sizes do not fit together",
    [TRACE_ERROR_MASK_ROW] = "the mask hides every key from a query",
    [TRACE_ERROR_TOO_LARGE] = "the trace would need more memory than the 1 GiB limit",
    [TRACE_ERROR_NO_MEMORY] = "out of memory",
    [TRACE_ERROR_OVERFLOW] = "a number grew too large to represent (overflow)",
};

const char *trace_status_message(trace_status status)
{
    return status_messages[status];
}

static int source_count(const attention_input *in)
{
    return in->source ? in->n_source : in->n_tokens;
}

/* Adds a*b to *total, or returns false when it would overflow size_t. */
static bool add_product(size_t *total, size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    if (*total > SIZE_MAX - a * b)
        return false;
    *total += a * b;
    return true;
}

size_t trace_bytes_needed(const attention_input *in)
{
    size_t n = (size_t)in->n_tokens, m = (size_t)source_count(in);
    size_t d = (size_t)in->d_model, heads = (size_t)in->heads;
    size_t longest = n > m ? n : m;
    size_t doubles = 0;
    bool ok = add_product(&doubles, 5 * n, d)               /* input, Q, context, concat, output */
           && add_product(&doubles, 2 * m, d)               /* K, V */
           && (!in->source || add_product(&doubles, m, d))  /* source_input */
           && (!in->positional || add_product(&doubles, longest, d))
           && add_product(&doubles, 2 * heads * n, m);      /* scores, weights */
    if (!ok || doubles > SIZE_MAX / sizeof(double))
        return SIZE_MAX;
    return doubles * sizeof(double);
}

static trace_status check_shape(const attention_input *in, trace_failure *failure)
{
    (void)failure;
    if (in->n_tokens < 1 || source_count(in) < 1 || in->d_model < 1 || in->heads < 1
        || in->d_model % in->heads != 0 || !in->embeddings || !in->W_Q || !in->W_K
        || !in->W_V || !in->W_O || (in->source && !in->source_embeddings)
        || (in->mask == MASK_EXPLICIT && !in->mask_cells)
        || (in->mask == MASK_CAUSAL && in->source))
        return TRACE_ERROR_SHAPE;
    return TRACE_OK;
}

bool trace_is_hidden(const trace *t, int row, int col)
{
    switch (t->in->mask) {
    case MASK_CAUSAL:
        return col > row;
    case MASK_EXPLICIT:
        return t->in->mask_cells[(size_t)row * (size_t)t->m + (size_t)col] == 0;
    case MASK_NONE:
        break;
    }
    return false;
}

/* PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(the same angle). */
static void fill_positional(double *pe, int positions, int d_model)
{
    for (int pos = 0; pos < positions; pos++)
        for (int j = 0; j < d_model; j++) {
            double angle = pos / pow(10000.0, (double)(j - j % 2) / d_model);
            pe[(size_t)pos * (size_t)d_model + (size_t)j] = j % 2 == 0 ? sin(angle) : cos(angle);
        }
}

static void add_embeddings(double *out, const double *embeddings, const double *pe,
                           int rows, int d_model)
{
    size_t count = (size_t)rows * (size_t)d_model;
    for (size_t i = 0; i < count; i++)
        out[i] = embeddings[i] + (pe ? pe[i] : 0.0);
}

/* C (rows×cols) = A (rows×inner) · B (inner×cols), by the cache-blocked kernel, which sums each
 * cell in the same k order as the textbook loop and so gives the same bits. */
static void matmul(double *C, const double *A, const double *B, int rows, int inner, int cols)
{
    kernels_matmul(C, A, B, rows, inner, cols);
}

/* The one definition of the scaling step, shared by the softmax and trace_value so that the
 * shown `scaled` stage is bit-for-bit what the softmax read. */
static double scale_score(const trace *t, double score)
{
    return t->in->scale ? score / sqrt((double)t->d_k) : score;
}

static double masked_value(const trace *t, double score, int row, int col)
{
    return trace_is_hidden(t, row, col) ? -INFINITY : scale_score(t, score);
}

/* One head: scores, softmax and context, by the fast kernels (tests/test_kernels.c holds them to
 * the textbook loops). The softmax rule carries the core's scaling and mask, so the `scaled` and
 * `masked` that trace_value derives are exactly what the softmax read. */
static void attend_head(trace *t, int head)
{
    int n = t->n, m = t->m, d_k = t->d_k, offset = (head - 1) * d_k;
    size_t square = (size_t)(head - 1) * (size_t)n * (size_t)m;
    kernels_softmax_rule rule = { t->in->scale, d_k, t->in->mask, t->in->mask_cells };
    kernels_scores(t->scores + square, t->Q, t->K, n, m, d_k, t->d_model, offset);
    kernels_softmax(t->weights + square, t->scores + square, n, m, &rule);
    kernels_context(t->context + (size_t)(head - 1) * (size_t)n * (size_t)d_k,
                    t->weights + square, t->V, n, m, d_k, t->d_model, offset);
}

static void concat_heads(trace *t)
{
    for (int h = 1; h <= t->heads; h++)
        for (int i = 0; i < t->n; i++)
            memcpy(t->concat + (size_t)i * (size_t)t->d_model + (size_t)(h - 1) * (size_t)t->d_k,
                   t->context + ((size_t)(h - 1) * (size_t)t->n + (size_t)i) * (size_t)t->d_k,
                   (size_t)t->d_k * sizeof(double));
}

static double *alloc_doubles(size_t a, size_t b, bool *ok)
{
    double *p = calloc(a * b > 0 ? a * b : 1, sizeof(double));
    if (!p)
        *ok = false;
    else
        kernels_prefer_huge_pages(p, a * b * sizeof(double));
    return p;
}

static bool allocate(trace *t)
{
    size_t n = (size_t)t->n, m = (size_t)t->m, d = (size_t)t->d_model;
    size_t heads = (size_t)t->heads;
    bool ok = true;
    if (t->in->positional)
        t->positional = alloc_doubles(n > m ? n : m, d, &ok);
    t->input = alloc_doubles(n, d, &ok);
    t->source_input = t->in->source ? alloc_doubles(m, d, &ok) : t->input;
    t->Q = alloc_doubles(n, d, &ok);
    t->K = alloc_doubles(m, d, &ok);
    t->V = alloc_doubles(m, d, &ok);
    t->scores = alloc_doubles(heads * n, m, &ok);
    t->weights = alloc_doubles(heads * n, m, &ok);
    t->context = alloc_doubles(heads * n, (size_t)t->d_k, &ok);
    t->concat = alloc_doubles(n, d, &ok);
    t->output = alloc_doubles(n, d, &ok);
    return ok;
}

/* Finds the first non-finite cell of a stage, for an overflow report. */
static bool find_non_finite(const trace *t, stage_id stage, trace_failure *failure)
{
    int heads = stage_get(stage)->per_head ? t->heads : 1;
    int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
    for (int h = 1; h <= heads; h++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                double x = trace_value(t, stage, h, r, c);
                if (isfinite(x) || (stage == STAGE_MASKED && trace_is_hidden(t, r, c)))
                    continue;
                if (failure)
                    *failure = (trace_failure){ TRACE_ERROR_OVERFLOW, stage,
                                                stage_get(stage)->per_head ? h : -1, r, c, 0 };
                return true;
            }
    return false;
}

/* Frees what was allocated; failures that have a place already wrote it into failure. */
static trace_status fail(trace *t, trace_status status, trace_failure *failure)
{
    trace_free(t);
    if (failure && (status == TRACE_ERROR_SHAPE || status == TRACE_ERROR_NO_MEMORY))
        *failure = (trace_failure){ status, STAGE_COUNT, -1, -1, -1, 0 };
    return status;
}

static trace_status check_mask_rows(const trace *t, trace_failure *failure)
{
    for (int i = 0; i < t->n; i++) {
        int visible = 0;
        for (int j = 0; j < t->m && !visible; j++)
            visible += !trace_is_hidden(t, i, j);
        if (!visible) {
            if (failure)
                *failure = (trace_failure){ TRACE_ERROR_MASK_ROW, STAGE_MASKED, -1, i, -1, 0 };
            return TRACE_ERROR_MASK_ROW;
        }
    }
    return TRACE_OK;
}

trace_status trace_compute(const attention_input *in, trace *out, trace_failure *failure)
{
    memset(out, 0, sizeof *out);
    trace_status status = check_shape(in, failure);
    if (status != TRACE_OK)
        return fail(out, status, failure);
    size_t bytes = trace_bytes_needed(in);
    if (bytes > TRACE_MAX_BYTES) {
        if (failure)
            *failure = (trace_failure){ TRACE_ERROR_TOO_LARGE, STAGE_COUNT, -1, -1, -1, bytes };
        return TRACE_ERROR_TOO_LARGE;
    }
    *out = (trace){ .in = in, .n = in->n_tokens, .m = source_count(in), .d_model = in->d_model,
                    .heads = in->heads, .d_k = in->d_model / in->heads };
    if ((status = check_mask_rows(out, failure)) != TRACE_OK)
        return fail(out, status, failure);
    if (!allocate(out))
        return fail(out, TRACE_ERROR_NO_MEMORY, failure);
    int n = out->n, m = out->m, d = out->d_model;

    if (out->positional)
        fill_positional(out->positional, n > m ? n : m, d);
    add_embeddings(out->input, in->embeddings, out->positional, n, d);
    if (in->source)
        add_embeddings(out->source_input, in->source_embeddings, out->positional, m, d);
    matmul(out->Q, out->input, in->W_Q, n, d, d);
    matmul(out->K, out->source_input, in->W_K, m, d, d);
    matmul(out->V, out->source_input, in->W_V, m, d, d);
    for (int h = 1; h <= out->heads; h++)
        attend_head(out, h);
    concat_heads(out);
    matmul(out->output, out->concat, in->W_O, n, d, d);

    /* Overflow anywhere shows up as a non-finite number in some stage; a fast scan says whether
     * there is one, and only then the walk cell by cell names the first. */
    bool finite = kernels_trace_finite(out);
    for (int s = 0; !finite && s < STAGE_COUNT; s++)
        if (trace_has_stage(out, (stage_id)s) && find_non_finite(out, (stage_id)s, failure))
            return fail(out, TRACE_ERROR_OVERFLOW, failure);
    return TRACE_OK;
}

void trace_free(trace *t)
{
    if (t->source_input != t->input)
        free(t->source_input);
    free(t->positional);
    free(t->input);
    free(t->Q);
    free(t->K);
    free(t->V);
    free(t->scores);
    free(t->weights);
    free(t->context);
    free(t->concat);
    free(t->output);
    memset(t, 0, sizeof *t);
}

bool trace_has_stage(const trace *t, stage_id stage)
{
    return stage != STAGE_SOURCE_INPUT || t->in->source != NULL;
}

static int axis_length(const trace *t, stage_axis axis)
{
    switch (axis) {
    case AXIS_TOKENS: return t->n;
    case AXIS_SOURCE: return t->m;
    case AXIS_MODEL_DIMS: return t->d_model;
    case AXIS_HEAD_DIMS: return t->d_k;
    }
    return 0;
}

int trace_rows(const trace *t, stage_id stage)
{
    return axis_length(t, stage_get(stage)->rows);
}

int trace_cols(const trace *t, stage_id stage)
{
    return axis_length(t, stage_get(stage)->cols);
}

const double *trace_block(const trace *t, stage_id stage, int head)
{
    size_t square = (size_t)(head - 1) * (size_t)t->n * (size_t)t->m;
    switch (stage) {
    case STAGE_SOURCE_INPUT: return t->source_input;
    case STAGE_INPUT: return t->input;
    case STAGE_Q: return t->Q;
    case STAGE_K: return t->K;
    case STAGE_V: return t->V;
    case STAGE_SCORES: return t->scores + square;
    case STAGE_WEIGHTS: return t->weights + square;
    case STAGE_CONTEXT: return t->context + (size_t)(head - 1) * (size_t)t->n * (size_t)t->d_k;
    case STAGE_CONCAT: return t->concat;
    case STAGE_OUTPUT: return t->output;
    case STAGE_SCALED: case STAGE_MASKED: case STAGE_COUNT: break;
    }
    return NULL;
}

double trace_value(const trace *t, stage_id stage, int head, int row, int col)
{
    int h = stage_get(stage)->per_head ? head : 1;
    if (stage == STAGE_SCALED || stage == STAGE_MASKED) {
        double score = trace_block(t, STAGE_SCORES, h)[(size_t)row * (size_t)t->m + (size_t)col];
        return stage == STAGE_SCALED ? scale_score(t, score) : masked_value(t, score, row, col);
    }
    size_t cols = (size_t)trace_cols(t, stage);
    return trace_block(t, stage, h)[(size_t)row * cols + (size_t)col];
}

const char *trace_axis_label(const trace *t, stage_axis axis, int i, char *buffer, size_t size)
{
    switch (axis) {
    case AXIS_TOKENS:
        return t->in->tokens[i];
    case AXIS_SOURCE:
        return t->in->source ? t->in->source[i] : t->in->tokens[i];
    case AXIS_MODEL_DIMS:
    case AXIS_HEAD_DIMS:
        break;
    }
    snprintf(buffer, size, "%d", i);
    return buffer;
}

int trace_step_count(const trace *t)
{
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (trace_has_stage(t, (stage_id)s))
            count += stage_get((stage_id)s)->per_head ? t->heads : 1;
    return count;
}

void trace_step_at(const trace *t, int k, stage_id *stage, int *head)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (!trace_has_stage(t, (stage_id)s))
            continue;
        int heads = stage_get((stage_id)s)->per_head ? t->heads : 1;
        if (k < heads) {
            *stage = (stage_id)s;
            *head = k + 1;
            return;
        }
        k -= heads;
    }
    *stage = STAGE_OUTPUT;
    *head = 1;
}

int trace_stage_formula(const trace *t, stage_id stage, char *buffer, size_t size)
{
    (void)t;  /* placeholder until the stage table writes formulas from the configuration */
    return snprintf(buffer, size, "%s", stage_get(stage)->formula);
}
