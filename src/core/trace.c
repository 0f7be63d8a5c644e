/* The attention core's forward pass: every stage of multi-head scaled dot-product attention,
 * computed in double precision and kept in a trace. No I/O, no globals. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stage_functions.h"

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

/* A trace of in's sizes and no memory (trace.h). */
trace trace_shape(const attention_input *in)
{
    int heads = in->heads > 0 ? in->heads : 1;
    return (trace){ .in = in, .n = in->n_tokens, .m = source_count(in), .d_model = in->d_model,
                    .heads = in->heads, .d_k = in->d_model / heads,
                    .kv_heads = in->kv_heads > 0 ? in->kv_heads : in->heads };
}

int trace_axis_length(const trace *t, stage_axis axis)
{
    switch (axis) {
    case AXIS_TOKENS: return t->n;
    case AXIS_SOURCE: return t->m;
    case AXIS_MODEL_DIMS: return t->d_model;
    case AXIS_KV_DIMS: return t->kv_heads * t->d_k;
    case AXIS_HEAD_DIMS: return t->d_k;
    case AXIS_TILES: return trace_tile_count(t);
    case AXIS_ONE: return 1;
    }
    return 0;
}

static int heads_of(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? t->heads : 1;
}

int trace_input_axis_length(const attention_input *in, stage_axis axis)
{
    trace shape = trace_shape(in);
    return trace_axis_length(&shape, axis);
}

/* Multiplies *total by factor, or returns false when it would overflow size_t. */
static bool multiply(size_t *total, size_t factor)
{
    if (factor != 0 && *total > SIZE_MAX / factor)
        return false;
    *total *= factor;
    return true;
}

/* Doubles a stage's block holds (0 for a derived stage or one the trace lacks); false when the
 * count overflows size_t. */
static bool stage_doubles(const trace *t, stage_id stage, size_t *doubles)
{
    *doubles = 0;
    if (!trace_has_stage(t, stage) || stage_get(stage)->storage != STAGE_STORED)
        return true;
    *doubles = (size_t)heads_of(t, stage);
    return multiply(doubles, (size_t)trace_rows(t, stage))
        && multiply(doubles, (size_t)trace_cols(t, stage));
}

/* Rows of the positional table: one per position of the longer sequence (0 without it). */
static size_t positional_rows(const trace *t)
{
    return t->in->positional ? (size_t)(t->n > t->m ? t->n : t->m) : 0;
}

size_t trace_positional_bytes(const trace *t)
{
    return positional_rows(t) * (size_t)t->d_model * sizeof(double);
}

/* The stage a node input reads in this trace: its `instead` when the trace has it, else its
 * `otherwise` when the trace has that. */
static stage_id node_read(const trace *t, const stage_input *in)
{
    if (in->instead >= 0 && trace_has_stage(t, (stage_id)in->instead))
        return (stage_id)in->instead;
    if (in->otherwise > 0 && trace_has_stage(t, (stage_id)in->otherwise))
        return (stage_id)in->otherwise;
    return (stage_id)in->id;
}

stage_id trace_stage_node_input(const trace *t, stage_id stage, int index)
{
    const stage_input *in = stage_get(stage)->inputs;
    for (int i = 0; i < STAGE_MAX_INPUTS && in[i].kind != READ_NONE; i++)
        if ((in[i].kind == READ_NODE || in[i].kind == READ_EVERY_HEAD) && index-- == 0)
            return node_read(t, &in[i]);
    return STAGE_COUNT;
}

const double *trace_param(const trace *t, param_id param)
{
    assert(param < PARAM_COUNT);
    return t->in->params[param];
}

/* The name of one input as this trace reads it, or NULL for a parameter or node it lacks
 * (d_input is made from d_residual only with a residual). */
static const char *input_name(const trace *t, const stage_input *in)
{
    switch (in->kind) {
    case READ_NODE:
    case READ_EVERY_HEAD:
        return trace_has_stage(t, node_read(t, in)) ? stage_get(node_read(t, in))->name : NULL;
    case READ_PARAM:
        return trace_param(t, (param_id)in->id) ? param_get((param_id)in->id)->name : NULL;
    case READ_DATA: return stage_data_name((data_id)in->id);
    case READ_NONE: break;
    }
    return NULL;
}

/* Whether an input before number i reads the same name: under RoPE d_Q is made from
 * d_Q_rotated alone, which both of its inputs then name (NODE_OR(K, D_Q_ROTATED): K is read
 * only without RoPE), and it is listed once. */
static bool named_before(const trace *t, const stage_input *in, int i, const char *name)
{
    for (int j = 0; j < i; j++) {
        const char *earlier = input_name(t, &in[j]);
        if (earlier && strcmp(earlier, name) == 0)
            return true;
    }
    return false;
}

/* Whether input i of stage is the target of a gradient row that another gradient makes: the
 * loss reads the last node only, so d_output under a residual is made from d_residual alone. */
static bool target_passed_by(const trace *t, stage_id stage, const stage_input *in)
{
    return in->kind == READ_DATA && in->id == DATA_TARGET
        && stage_get(stage)->flags & STAGE_GRADIENT
        && stage_get(trace_stage_node_input(t, stage, 0))->flags & STAGE_GRADIENT;
}

int trace_stage_inputs(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const stage_input *in = stage_get(stage)->inputs;
    int wanted = 0;
    for (int i = 0; i < STAGE_MAX_INPUTS && in[i].kind != READ_NONE; i++) {
        const char *name = input_name(t, &in[i]);
        if (!name || named_before(t, in, i, name) || target_passed_by(t, stage, &in[i]))
            continue;
        size_t used = (size_t)wanted < size ? (size_t)wanted : size;
        wanted += snprintf(buffer ? buffer + used : NULL, buffer ? size - used : 0, "%s%s%s",
                           wanted ? ", " : "", name,
                           in[i].kind == READ_EVERY_HEAD ? " of every head" : "");
    }
    if (buffer && size > 0 && wanted == 0)
        buffer[0] = '\0';
    return wanted;
}

size_t trace_mask_bytes(const trace *t)
{
    size_t cells = t->in->mask == MASK_WINDOW ? (size_t)t->n : 0;
    return multiply(&cells, (size_t)t->m) ? cells : SIZE_MAX;
}

/* Doubles of the whole trace (positional table and every block), or SIZE_MAX on overflow. */
static size_t trace_doubles(const trace *t)
{
    size_t total = positional_rows(t);
    if (!multiply(&total, (size_t)t->d_model))
        return SIZE_MAX;
    for (int s = 0; s < STAGE_COUNT; s++) {
        size_t doubles;
        if (!stage_doubles(t, (stage_id)s, &doubles) || total > SIZE_MAX - doubles)
            return SIZE_MAX;
        total += doubles;
    }
    return total;
}

size_t trace_bytes_needed(const attention_input *in)
{
    trace shape = trace_shape(in);
    size_t doubles = trace_doubles(&shape), mask = trace_mask_bytes(&shape);
    if (doubles == SIZE_MAX || doubles > SIZE_MAX / sizeof(double)
        || mask > SIZE_MAX - doubles * sizeof(double))
        return SIZE_MAX;
    return doubles * sizeof(double) + mask;  /* the blocks' one allocation, and the window's */
}

size_t trace_stage_bytes(const trace *t, stage_id stage)
{
    size_t doubles;
    bool fits = stage_doubles(t, stage, &doubles);
    assert(fits);  /* a computed trace fitted in memory */
    (void)fits;
    return doubles * sizeof(double);
}

/* The checks of an input, one concern each (each true when the input makes sense). */
static bool sizes_fit(const attention_input *in)
{
    return in->n_tokens >= 1 && source_count(in) >= 1 && in->d_model >= 1 && in->heads >= 1
        && in->d_model % in->heads == 0 && in->kv_heads >= 0
        && (in->kv_heads == 0 || in->heads % in->kv_heads == 0);
}

static bool data_given(const attention_input *in)
{
    for (int p = 0; p < PARAM_COUNT; p++)
        if (!in->params[p] && !param_get((param_id)p)->optional)
            return false;
    return in->embeddings && (!in->source || in->source_embeddings);
}

/* causal, window and ALiBi compare a query's and a key's positions: self-attention only */
static bool mask_fits(const attention_input *in)
{
    bool by_position = in->mask == MASK_CAUSAL || in->mask == MASK_WINDOW;
    return (in->mask != MASK_EXPLICIT || in->mask_cells) && !(by_position && in->source)
        && (in->mask != MASK_WINDOW || in->window >= 1);
}

static bool positions_fit(const attention_input *in)
{
    if (in->alibi && in->source)
        return false;
    return !in->rope || (!in->positional && (in->d_model / in->heads) % 2 == 0
                         && in->rope_base > 0.0 && isfinite(in->rope_base));
}

static bool softmax_fits(const attention_input *in)
{
    return !in->online_softmax || in->tile >= 1;
}

/* Dropout drops weights with a probability 0 ≤ p < 1 from the ordinary softmax's weights (the
 * online softmax makes its context without them). */
static bool dropout_fits(const attention_input *in)
{
    return !in->dropout || (in->dropout_p >= 0.0 && in->dropout_p < 1.0 && !in->online_softmax);
}

static bool decoding_fits(const attention_input *in)
{
    return !in->decode || (!in->source && !in->target
                           && (in->mask == MASK_CAUSAL || in->mask == MASK_WINDOW));
}

/* A norm has its gain (and an RMS norm no bias), a positive eps, the residual a post-norm
 * normalises, and the query tokens only (a source would need a norm of its own). */
static bool norm_fits(const attention_input *in)
{
    if (in->norm == NORM_NONE)
        return true;
    return in->gain && (in->norm == NORM_LAYER || !in->norm_bias) && in->norm_eps > 0.0
        && isfinite(in->norm_eps) && !in->source && (!in->norm_post || in->residual);
}

static trace_status check_shape(const attention_input *in)
{
    bool fits = sizes_fit(in) && data_given(in) && mask_fits(in) && positions_fit(in)
             && softmax_fits(in) && decoding_fits(in) && norm_fits(in)
             && dropout_fits(in);
    return fits ? TRACE_OK : TRACE_ERROR_SHAPE;
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

positional_kind trace_positional_kind(const attention_input *in)
{
    return in->rope ? POSITIONAL_ROPE
         : in->positional ? POSITIONAL_SINUSOIDAL : POSITIONAL_NONE;
}

const char *trace_positional_word(positional_kind kind)
{
    static const char *const words[] = {
        [POSITIONAL_NONE] = "none", [POSITIONAL_SINUSOIDAL] = "sinusoidal",
        [POSITIONAL_ROPE] = "rope",
    };
    assert((size_t)kind < sizeof words / sizeof words[0]);
    return words[kind];
}

/* Slope k (from 1) of a power-of-two count of heads: 2^(−8k/count). */
static double power_of_two_slope(int k, int count)
{
    return pow(2.0, -8.0 * k / count);
}

double trace_alibi_slope(int head, int heads)
{
    assert(head >= 1 && head <= heads);
    int below = 1;
    while (below * 2 <= heads)
        below *= 2;
    if (head <= below)
        return power_of_two_slope(head, below);
    /* every other slope of 2·below heads, from the first: k = 1, 3, 5, … */
    return power_of_two_slope(2 * (head - below) - 1, 2 * below);
}

int trace_tile_count(const trace *t)
{
    return t->in->online_softmax ? (t->m + t->in->tile - 1) / t->in->tile : 0;
}

void trace_tile_keys(const trace *t, int b, int *first, int *end)
{
    assert(b >= 0 && b < trace_tile_count(t));
    *first = b * t->in->tile;
    long long end_of_tile = (long long)*first + t->in->tile;  /* tile may be as large as int */
    *end = end_of_tile < t->m ? (int)end_of_tile : t->m;
}

int trace_kv_group(const trace *t, int head)
{
    assert(head >= 1 && head <= t->heads);
    return (head - 1) / (t->heads / t->kv_heads) + 1;
}

kernels_config trace_kernels_config(const trace_options *options)
{
    return options ? (kernels_config){ .threads = options->threads, .portable = options->portable }
                   : (kernels_config){ .threads = 0 };
}

/* The block layout, in one place: where cell (row, col) of head's matrix sits in its stage's
 * block (head after head, each row-major). */
static size_t cell_offset(const trace *t, stage_id stage, int head, int row, int col)
{
    const stage_info *info = stage_get(stage);
    size_t rows = (size_t)trace_axis_length(t, info->rows), cols = (size_t)trace_axis_length(t, info->cols);
    assert(head >= 1 && head <= (info->per_head ? t->heads : 1));
    assert(row >= 0 && row < (int)rows && col >= 0 && col < (int)cols);
    return ((size_t)(head - 1) * rows + (size_t)row) * cols + (size_t)col;
}

/* One cell of a stored stage: the hot path of every view's reads. */
double trace_read_stored(const trace *t, stage_id stage, int head, int row, int col)
{
    assert(t->block[stage]);
    return t->block[stage][cell_offset(t, stage, head, row, col)];
}

/* scaled, read from scores by the one scaling rule (trace_scale_score, ops/scores.c), which
 * the softmax's kernel rule also carries: the shown `scaled` is what the softmax read. */
double trace_read_scaled(const trace *t, stage_id stage, int head, int row, int col)
{
    return trace_scale_score(t, trace_read_stored(t, trace_stage_node_input(t, stage, 0), head,
                                                  row, col));
}

/* A derived stage has no block: its forward is reading every cell of the span's rows, which is
 * what showing it costs (and what --stats times). */
void forward_derived(const trace *t, stage_id stage, int head, double *out,
                     const trace_span *span, const kernels_config *config)
{
    (void)config;
    assert(stage_get(stage)->storage == STAGE_DERIVED);
    int first, end, cols = trace_cols(t, stage);
    trace_span_rows(t, stage, span, &first, &end);
    for (int i = first; i < end; i++)
        for (int j = 0; j < cols; j++)
            out[(size_t)i * (size_t)cols + (size_t)j] = trace_value(t, stage, head, i, j);
}

/* The one allocation: the positional table, then each stored stage's block in table order. */
static bool allocate(trace *t)
{
    size_t doubles = trace_doubles(t);
    t->memory = calloc(doubles > 0 ? doubles : 1, sizeof(double));
    if (!t->memory)
        return false;
    kernels_prefer_huge_pages(t->memory, doubles * sizeof(double));
    double *next = t->memory;
    if (t->in->positional) {
        t->positional = next;
        next += positional_rows(t) * (size_t)t->d_model;
    }
    for (int s = 0; s < STAGE_COUNT; s++) {
        size_t count;
        stage_doubles(t, (stage_id)s, &count);
        t->block[s] = count > 0 ? next : NULL;
        next += count;
    }
    assert(next == t->memory + doubles);
    return true;
}

/* Where a stage's matrix at head begins, or NULL for a stage without a block. */
static double *block_at(const trace *t, stage_id stage, int head)
{
    assert(stage < STAGE_COUNT);
    double *block = t->block[stage];
    return block ? block + cell_offset(t, stage, head, 0, 0) : NULL;
}

/* Finds the first non-finite cell of a stored stage, for an overflow report. Derived stages
 * need no walk: scaled divides scores by √d_k ≥ 1 and masked adds only the −∞ of hidden cells,
 * so they overflow only where scores, walked before them, did. */
static bool find_non_finite(const trace *t, stage_id stage, trace_failure *failure)
{
    int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
    assert(t->block[stage]);
    for (int h = 1; h <= heads_of(t, stage); h++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                if (isfinite(trace_value(t, stage, h, r, c)))
                    continue;
                if (failure)
                    *failure = (trace_failure){ TRACE_ERROR_OVERFLOW, stage,
                                                stage_get(stage)->per_head ? h : -1, r, c, 0 };
                return true;
            }
    return false;
}

/* Whether a stage's non-finite numbers mean overflow: not running_max's, whose −∞ is a row
 * that has seen only hidden keys (an overflow there reaches running_sum, which is checked). */
static bool checked_for_overflow(const trace *t, stage_id stage)
{
    return t->block[stage] && stage != STAGE_RUNNING_MAX;
}

/* Whether every stored block from stage `from` on holds only finite numbers. */
static bool blocks_finite(const trace *t, stage_id from, const kernels_config *config)
{
    for (int s = from; s < STAGE_COUNT; s++)
        if (checked_for_overflow(t, (stage_id)s)
            && !kernels_all_finite(t->block[s], trace_stage_bytes(t, (stage_id)s) / sizeof(double),
                                   config))
            return false;
    return true;
}

/* Frees what was allocated; failures that have a place already wrote it into failure. */
static trace_status fail(trace *t, trace_status status, trace_failure *failure)
{
    trace_free(t);
    if (failure && (status == TRACE_ERROR_SHAPE || status == TRACE_ERROR_NO_MEMORY))
        *failure = (trace_failure){ status, STAGE_COUNT, -1, -1, -1, 0 };
    return status;
}

/* The cells a window mask lets through, for the softmax's rule (which reads cells). */
static bool fill_visible(trace *t)
{
    if (t->in->mask != MASK_WINDOW)
        return true;
    t->visible = malloc(trace_mask_bytes(t));  /* what trace_bytes_needed counts */
    if (!t->visible)
        return false;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            t->visible[(size_t)i * (size_t)t->m + (size_t)j] = !trace_is_hidden(t, i, j);
    return true;
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

trace_status trace_prepare(const attention_input *in, trace *out, trace_failure *failure)
{
    memset(out, 0, sizeof *out);
    trace_status status = check_shape(in);
    if (status != TRACE_OK)
        return fail(out, status, failure);
    size_t bytes = trace_bytes_needed(in);
    if (bytes > TRACE_MAX_BYTES) {
        if (failure)
            *failure = (trace_failure){ TRACE_ERROR_TOO_LARGE, STAGE_COUNT, -1, -1, -1, bytes };
        return TRACE_ERROR_TOO_LARGE;
    }
    *out = trace_shape(in);
    assert(out->heads >= 1 && out->d_k * out->heads == out->d_model);
    if ((status = check_mask_rows(out, failure)) != TRACE_OK)
        return fail(out, status, failure);
    if (!allocate(out) || !fill_visible(out))
        return fail(out, TRACE_ERROR_NO_MEMORY, failure);
    if (out->positional)
        fill_positional(out->positional, (int)positional_rows(out), out->d_model);
    return TRACE_OK;
}

trace_span trace_span_whole(const trace *t)
{
    return (trace_span){ 0, t->n, t->m };
}

bool trace_span_is_whole(const trace *t, const trace_span *span)
{
    return span->first == 0 && span->end == t->n && span->keys == t->m;
}

void trace_span_rows(const trace *t, stage_id stage, const trace_span *span, int *first, int *end)
{
    bool whole = trace_span_is_whole(t, span);
    assert(whole || !t->in->source);  /* a partial span is decoding: self-attention */
    switch (stage_get(stage)->rows) {
    case AXIS_TOKENS:
        *first = span->first, *end = span->end;
        return;
    case AXIS_SOURCE:  /* the keys: every one in a whole pass, else the span's own tokens */
        *first = whole ? 0 : span->first, *end = whole ? t->m : span->end;
        return;
    default:
        *first = 0, *end = trace_rows(t, stage);
    }
}

void trace_forward(trace *t, stage_id from, int first, int end, const trace_options *options)
{
    assert(from <= STAGE_COUNT && first >= 0 && first < end && end <= t->n);
    kernels_config config = trace_kernels_config(options);
    /* the keys known to rows [first, end): every key in a whole pass; in self-attention
     * decoding, the tokens up to the last row's */
    trace_span span = first == 0 && end == t->n ? trace_span_whole(t)
                                               : (trace_span){ first, end, end };
    /* 1. each stored stage from `from` on, in table order (every stage after what it reads),
     *    each of its heads, by its row's forward operation; derived stages are read when shown */
    for (int s = from; s < STAGE_COUNT; s++)
        for (int h = 1; t->block[s] && h <= heads_of(t, (stage_id)s); h++)
            stage_functions_get((stage_id)s)->forward(t, (stage_id)s, h,
                                                      block_at(t, (stage_id)s, h), &span,
                                                      &config);
}

/* Overflow anywhere shows up as a non-finite number in some stage; a fast scan says whether
 * there is one, and only then the walk cell by cell names the first. Only the stages from
 * `from` on: those before were checked when computed and have not changed since. */
static trace_status check_finite(trace *t, stage_id from, const trace_options *options,
                                 trace_failure *failure)
{
    kernels_config config = trace_kernels_config(options);
    bool finite = blocks_finite(t, from, &config);
    for (int s = from; !finite && s < STAGE_COUNT; s++)
        if (checked_for_overflow(t, (stage_id)s) && find_non_finite(t, (stage_id)s, failure))
            return TRACE_ERROR_OVERFLOW;
    return TRACE_OK;
}

trace_status trace_compute(const attention_input *in, const trace_options *options, trace *out,
                           trace_failure *failure)
{
    trace_status status = trace_prepare(in, out, failure);
    if (status != TRACE_OK)
        return status;
    trace_forward(out, (stage_id)0, 0, out->n, options);
    if ((status = check_finite(out, (stage_id)0, options, failure)) != TRACE_OK)
        return fail(out, status, failure);
    return TRACE_OK;
}

trace_status trace_recompute(trace *t, stage_id from, const trace_options *options,
                             trace_failure *failure)
{
    trace_forward(t, from, 0, t->n, options);
    return check_finite(t, from, options, failure);
}

/* ---- recomputing only what a change reaches ---- */

/* Whether stage s's changes are the heads' own: per head, or columns side by side by head. */
static bool head_local(stage_id s)
{
    const stage_info *info = stage_get(s);
    return (info->per_head || (info->flags & STAGE_HEAD_COLUMNS)) && !(info->flags & STAGE_GRADIENT);
}

/* Marks in reached (t->heads flags) the heads a change of column col of parameter p reaches
 * in a head-local stage that reads it. */
static void heads_of_column(const trace *t, int p, int col, bool *reached)
{
    stage_axis axis = param_get((param_id)p)->cols;
    int group = col >= 0 ? col / t->d_k + 1 : 0;
    for (int h = 1; h <= t->heads; h++)
        reached[h - 1] |= col < 0 || (axis == AXIS_MODEL_DIMS && h == group)
                          || (axis == AXIS_KV_DIMS && trace_kv_group(t, h) == group)
                          || (axis != AXIS_MODEL_DIMS && axis != AXIS_KV_DIMS);
}

/* Whether input `in` of stage s is one of the changes (its heads marked in reached). */
static bool reads_change(const trace *t, const stage_input *in, const trace_change *changes,
                         int count, bool local, bool *reached)
{
    bool any = false;
    for (int c = 0; c < count; c++) {
        if (in->kind != changes[c].kind || in->id != changes[c].id) continue;
        any = true;
        if (local && in->kind == READ_PARAM) heads_of_column(t, in->id, changes[c].col, reached);
        else heads_of_column(t, in->id, -1, reached);
    }
    return any;
}

/* The heads of stage s that the changes reach, from what its inputs (already marked, in table
 * order) reached: reach is STAGE_COUNT rows of t->heads flags. */
static void mark_reach(const trace *t, stage_id s, const trace_change *changes, int count,
                       bool *reach)
{
    const stage_info *info = stage_get(s);
    size_t heads = (size_t)t->heads;
    bool *mine = reach + (size_t)s * heads, local = head_local(s), any = false;
    /* a parameter's columns are a head's only where they are the stage's own (a projection) */
    bool columns = local && (info->flags & STAGE_HEAD_COLUMNS);
    for (int i = 0; i < STAGE_MAX_INPUTS && info->inputs[i].kind != READ_NONE; i++) {
        const stage_input *in = &info->inputs[i];
        if (in->kind == READ_PARAM || in->kind == READ_DATA) {
            any |= reads_change(t, in, changes, count, columns, mine);
            continue;
        }
        stage_id node = node_read(t, in);
        const bool *theirs = reach + (size_t)node * heads;
        bool from_heads = local && head_local(node);
        bool theirs_any = false;
        for (size_t h = 0; h < heads; h++) {
            theirs_any |= theirs[h];
            if (theirs[h] && from_heads) mine[h] = true;
        }
        any |= theirs_any;
        if (theirs_any && !from_heads)   /* a whole matrix changed under it: every head */
            memset(mine, 1, heads * sizeof *mine);
    }
    bool whole = any && (!local || (info->flags & STAGE_GRADIENT));
    for (size_t h = 0; h < heads && whole; h++) mine[h] = true;
    for (int r = 0; r < (int)s && (info->flags & STAGE_GRADIENT); r++)   /* it sums its readers' */
        for (size_t h = 0; h < heads; h++)
            if (reach[(size_t)r * heads + h]) {
                memset(mine, 1, heads * sizeof *mine);
                return;
            }
}

trace_status trace_recompute_changes(trace *t, const trace_change *changes, int count,
                                     const trace_options *options, trace_failure *failure)
{
    stage_id from = STAGE_COUNT;
    for (int c = 0; c < count; c++) {
        stage_id first = trace_first_reader(t, changes[c].kind, changes[c].id);
        if (first < from) from = first;
    }
    if (from == STAGE_COUNT) return TRACE_OK;
    bool *reach = calloc((size_t)STAGE_COUNT * (size_t)t->heads, sizeof *reach);
    if (!reach) return trace_recompute(t, from, options, failure);
    kernels_config config = trace_kernels_config(options);
    trace_span span = trace_span_whole(t);
    bool finite = true;
    for (int s = from; s < STAGE_COUNT; s++) {
        if (!trace_has_stage(t, (stage_id)s)) continue;
        mark_reach(t, (stage_id)s, changes, count, reach);
        for (int h = 1; t->block[s] && h <= heads_of(t, (stage_id)s); h++) {
            const bool *mine = reach + (size_t)s * (size_t)t->heads;
            bool run = false;   /* a whole stage runs when any head reached it */
            for (int k = 0; k < t->heads; k++)
                run |= mine[k] && (!stage_get((stage_id)s)->per_head || k == h - 1);
            if (!run) continue;
            double *block = block_at(t, (stage_id)s, h);
            stage_functions_get((stage_id)s)->forward(t, (stage_id)s, h, block, &span, &config);
            /* only what ran can have overflowed: the rest was checked when it was computed */
            size_t doubles = (size_t)trace_rows(t, (stage_id)s) * (size_t)trace_cols(t, (stage_id)s);
            finite = finite && (!checked_for_overflow(t, (stage_id)s)
                                || kernels_all_finite(block, doubles, &config));
        }
    }
    free(reach);
    return finite ? TRACE_OK : check_finite(t, from, options, failure);   /* which cell */
}

void trace_free(trace *t)
{
    free(t->memory);
    free(t->visible);
    memset(t, 0, sizeof *t);
}

bool trace_presence_met(const attention_input *in, stage_presence presence)
{
    switch (presence) {
    case PRESENT_ALWAYS: return true;
    case PRESENT_WITH_SOURCE: return in->source != NULL;
    case PRESENT_WITH_ROPE: return in->rope;
    case PRESENT_WITH_ALIBI: return in->alibi;
    case PRESENT_WITH_ONLINE: return in->online_softmax;
    case PRESENT_WITH_LOSS: return in->target != NULL;
    case PRESENT_WITH_PRE_NORM: return in->norm != NORM_NONE && !in->norm_post;
    case PRESENT_WITH_POST_NORM: return in->norm != NORM_NONE && in->norm_post;
    case PRESENT_WITH_RESIDUAL: return in->residual;
    case PRESENT_WITH_DROPOUT: return in->dropout;
    case PRESENT_WITH_CONTRIBUTIONS: return in->contributions;
    }
    return false;
}

stage_id trace_find_stage(const attention_input *in, const char *name)
{
    trace shape = trace_shape(in);
    for (int s = 0; s < STAGE_COUNT; s++)
        if (strcmp(stage_get((stage_id)s)->name, name) == 0 && trace_has_stage(&shape, (stage_id)s))
            return (stage_id)s;
    return stage_find(name);
}

/* Whether what a gradient row is the gradient of exists (a forward row: true). */
static bool of_present(const trace *t, const stage_input *of)
{
    switch (of->kind) {
    case READ_NODE: return trace_has_stage(t, (stage_id)of->id);
    case READ_PARAM: return trace_param(t, (param_id)of->id) != NULL;
    default: return true;
    }
}

bool trace_has_stage(const trace *t, stage_id stage)
{
    const stage_info *info = stage_get(stage);
    return trace_presence_met(t->in, info->presence) && of_present(t, &info->of);
}

const double *trace_gradient_of(const trace *t, stage_id stage, int head)
{
    stage_id gradient = stage_gradient(READ_NODE, (int)stage);
    assert(gradient < STAGE_COUNT && t->block[gradient]);
    return trace_block(t, gradient, head);
}

bool trace_reads_gradient_of(const trace *t, const stage_input *in, const stage_input *of)
{
    bool node = in->kind == READ_NODE || in->kind == READ_EVERY_HEAD;
    if (node)
        return of->kind == READ_NODE && node_read(t, in) == (stage_id)of->id;
    return in->kind == READ_PARAM && of->kind == READ_PARAM && in->id == of->id;
}

int trace_gradient_readers(const trace *t, stage_id gradient, trace_gradient_reader *out)
{
    const stage_input *of = &stage_get(gradient)->of;
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        const stage_info *reader = stage_get((stage_id)s);
        if (reader->flags & STAGE_GRADIENT || !trace_has_stage(t, (stage_id)s))
            continue;
        for (int i = 0; i < STAGE_MAX_INPUTS && reader->inputs[i].kind != READ_NONE; i++)
            if (trace_reads_gradient_of(t, &reader->inputs[i], of))
                out[count++] = (trace_gradient_reader){ (stage_id)s, i };
    }
    return count;
}

/* The backward pass into one gradient block: zero, then what every forward row of t that reads
 * the row's node or parameter sends back to it (their `backward`), in table order. */
void forward_gradient(const trace *t, stage_id stage, int head, double *out,
                      const trace_span *span, const kernels_config *config)
{
    assert(trace_span_is_whole(t, span));
    (void)span;
    memset(out, 0, (size_t)trace_rows(t, stage) * (size_t)trace_cols(t, stage) * sizeof *out);
    trace_gradient_reader readers[STAGE_COUNT * STAGE_MAX_INPUTS];
    int count = trace_gradient_readers(t, stage, readers);
    for (int r = 0; r < count; r++)
        stage_functions_get(readers[r].reader)->backward(t, readers[r].reader, readers[r].input,
                                                        head, out, config);
}

/* What reads only data, or is not on the loss's path (the online softmax's running max and
 * sum: weights are the softmax of masked whichever way they were computed), sends nothing. */
void backward_nothing(const trace *t, stage_id stage, int input, int head, double *out,
                      const kernels_config *config)
{
    (void)t, (void)stage, (void)input, (void)head, (void)out, (void)config;
}

int trace_rows(const trace *t, stage_id stage)
{
    return trace_axis_length(t, stage_get(stage)->rows);
}

int trace_cols(const trace *t, stage_id stage)
{
    return trace_axis_length(t, stage_get(stage)->cols);
}

const double *trace_block(const trace *t, stage_id stage, int head)
{
    return block_at(t, stage, stage_get(stage)->per_head ? head : 1);
}

double trace_value(const trace *t, stage_id stage, int head, int row, int col)
{
    int h = stage_get(stage)->per_head ? head : 1;
    return stage_functions_get(stage)->read(t, stage, h, row, col);
}

const char *trace_axis_label(const trace *t, stage_axis axis, int i, char *buffer, size_t size)
{
    switch (axis) {
    case AXIS_TOKENS:
        return t->in->tokens[i];
    case AXIS_SOURCE:
        return t->in->source ? t->in->source[i] : t->in->tokens[i];
    case AXIS_MODEL_DIMS:
    case AXIS_KV_DIMS:
    case AXIS_HEAD_DIMS:
    case AXIS_TILES:
    case AXIS_ONE:
        break;
    }
    snprintf(buffer, size, "%d", i);
    return buffer;
}

stage_id trace_first_reader(const trace *t, read_kind kind, int id)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (trace_has_stage(t, (stage_id)s) && stage_reads((stage_id)s, kind, id))
            return (stage_id)s;
    return STAGE_COUNT;
}
