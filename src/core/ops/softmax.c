/* The softmax family: weights = softmax(masked) row by row, by the kernels' stable softmax, or
 * under `softmax: online` by FlashAttention's recurrence over tiles of keys (online.c), whose
 * running_max and running_sum are stages of their own. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include "online.h"
#include <stdio.h>
#include "ops.h"

/* The block the softmax reads and how: the stage behind what weights read (masked); when that
 * is derived (scaled), its own input (scores) with the scaling rule in the kernel, else
 * (ALiBi's biased, already scaled) as stored. The rule carries the core's mask, so `masked` as shown is exactly
 * what the softmax read. */
static const double *softmax_input(const trace *t, int head, kernels_softmax_rule *rule)
{
    stage_id read = trace_stage_node_input(t, trace_stage_node_input(t, STAGE_WEIGHTS, 0), 0);
    bool derived = stage_get(read)->storage == STAGE_DERIVED;
    *rule = (kernels_softmax_rule){
        .scale = derived && t->in->scale, .divisor = trace_score_divisor(t),
        .causal = t->in->mask == MASK_CAUSAL,
        .allowed = t->in->mask == MASK_EXPLICIT ? t->in->mask_cells : t->visible,
    };
    return trace_block(t, derived ? trace_stage_node_input(t, read, 0) : read, head);
}

/* Rows [first, end) of head's weights by the ordinary softmax: in one call over every row for
 * a whole pass, else row by row over the keys each row knows (decoding: the cache's). */
static void ordinary_weights(const trace *t, int head, double *out, const trace_span *span,
                             const kernels_config *config)
{
    kernels_softmax_rule rule;
    const double *in = softmax_input(t, head, &rule);
    if (trace_span_is_whole(t, span)) {
        kernels_softmax(out, in, t->n, t->m, &rule, config);
        return;
    }
    for (int i = span->first; i < span->end; i++) {
        size_t row = (size_t)i * (size_t)t->m;
        kernels_softmax_rule one = rule;
        one.causal = false;  /* the keys after i are left out instead */
        one.allowed = rule.allowed ? rule.allowed + row : NULL;
        int keys = rule.causal && i + 1 < span->keys ? i + 1 : span->keys;
        kernels_softmax(out + row, in + row, 1, keys, &one, config);
    }
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

/* Row i of head's masked scores, over the keys known, as online.c reads a row. */
static online_row online_row_of(const trace *t, const masked_row *at, int keys)
{
    stage_id v = trace_stage_node_input(t, STAGE_CONTEXT, 1);
    return (online_row){ read_masked, at, keys, t->in->tile,
                         trace_block(t, v, 1) + ops_group_offset(t, at->head),
                         (size_t)trace_cols(t, v), t->d_k };
}

static const double *running_max_of(const trace *t, int head, int row)
{
    return trace_block(t, STAGE_RUNNING_MAX, head) + (size_t)row * (size_t)trace_tile_count(t);
}

/* m_t = max(m_{t−1}, the largest visible score of tile t); −∞ while only hidden keys were seen. */
void forward_running_max(const trace *t, stage_id stage, int head, double *out,
                         const trace_span *span, const kernels_config *config)
{
    (void)stage, (void)config;
    for (int i = span->first; i < span->end; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at, span->keys);
        online_running_max(&r, out + (size_t)i * (size_t)trace_tile_count(t));
    }
}

/* l_t = l_{t−1}·exp(m_{t−1} − m_t) + Σ exp(s_j − m_t) over the tile's visible keys. */
void forward_running_sum(const trace *t, stage_id stage, int head, double *out,
                         const trace_span *span, const kernels_config *config)
{
    (void)stage;
    int tiles = trace_tile_count(t);
    for (int i = span->first; i < span->end; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at, span->keys);
        double sum = 0.0;
        for (int b = 0; b < online_tiles(&r); b++) {
            online_tile(&r, running_max_of(t, head, i), b, &sum, NULL, config);
            out[(size_t)i * (size_t)tiles + (size_t)b] = sum;
        }
    }
}

/* The m and l of the last tile of the keys known: the row's maximum and its softmax
 * denominator (the tiles after it hold only hidden keys and change neither). */
static void online_final(const trace *t, int head, int row, int keys, double *max, double *sum)
{
    size_t last = (size_t)row * (size_t)trace_tile_count(t) + (size_t)((keys - 1) / t->in->tile);
    *max = trace_block(t, STAGE_RUNNING_MAX, head)[last];
    *sum = trace_block(t, STAGE_RUNNING_SUM, head)[last];
}

/* weights from the recurrence: exp(s_j − m_T) / l_T with the last tile's m and l. */
static void online_weights(const trace *t, int head, double *out, const trace_span *span,
                           const kernels_config *config)
{
    for (int i = span->first; i < span->end; i++) {
        double max, sum;
        online_final(t, head, i, span->keys, &max, &sum);
        for (int j = 0; j < span->keys; j++)
            out[(size_t)i * (size_t)t->m + (size_t)j] =
                online_weight(trace_value(t, STAGE_MASKED, head, i, j), max, sum, config);
    }
}

void forward_weights(const trace *t, stage_id stage, int head, double *out,
                     const trace_span *span, const kernels_config *config)
{
    (void)stage;
    if (t->in->online_softmax)
        online_weights(t, head, out, span, config);
    else
        ordinary_weights(t, head, out, span, config);
}

/* context from the recurrence, as FlashAttention makes it: the unnormalised sum of
 * exp(s_j − m_t)·v_j rescaled tile by tile with l, divided by l_T once at the end. */
void ops_online_context(const trace *t, int head, double *out, const trace_span *span,
                          const kernels_config *config)
{
    for (int i = span->first; i < span->end; i++) {
        masked_row at = { t, head, i };
        online_row r = online_row_of(t, &at, span->keys);
        double max, last, *row = out + (size_t)i * (size_t)t->d_k;
        double sum = online_context(&r, running_max_of(t, head, i), row, config);
        online_final(t, head, i, span->keys, &max, &last);
        assert(sum == last);  /* the same recurrence as running_sum, step for step */
        (void)sum, (void)last;
    }
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
    trace_span whole = trace_span_whole(t);
    for (int h = 1; h <= t->heads; h++) {
        ordinary_weights(t, h, weights, &whole, &config);
        ops_weighted_values(t, h, weights, context, &whole, &config);
        difference = largest_difference(weights, trace_block(t, STAGE_WEIGHTS, h), cells,
                                        difference);
        difference = largest_difference(context, trace_block(t, STAGE_CONTEXT, h),
                                        context_cells, difference);
    }
    free(weights);
    return difference;
}

/* Σ_k w_ik · d_w_ik over row i: what the softmax's backward subtracts from each d_w_ij. */
double ops_softmax_backward_dot(const trace *t, int head, int row)
{
    const double *w = trace_block(t, STAGE_WEIGHTS, head) + (size_t)row * (size_t)t->m,
                 *d = trace_gradient_of(t, STAGE_WEIGHTS, head) + (size_t)row * (size_t)t->m;
    double total = 0.0;
    for (int k = 0; k < t->m; k++)
        total = fma(w[k], d[k], total);
    return total;
}

/* weights = softmax(masked) by rows: d_masked_ij = w_ij · (d_w_ij − Σ_k w_ik · d_w_ik). A
 * hidden key's weight is 0, and its gradient is left exactly 0 (not −0). */
void backward_weights(const trace *t, stage_id stage, int input, int head, double *out,
                      const kernels_config *config)
{
    (void)input, (void)config;
    const double *w = trace_block(t, stage, head), *d = trace_gradient_of(t, stage, head);
    for (int i = 0; i < t->n; i++) {
        double dot = ops_softmax_backward_dot(t, head, i);
        for (int j = 0; j < t->m; j++) {
            size_t at = (size_t)i * (size_t)t->m + (size_t)j;
            if (!trace_is_hidden(t, i, j))
                out[at] += w[at] * (d[at] - dot);
        }
    }
}

/* Each row: its dot Σ_k w·d_w (m multiplications and additions), then each visible cell a
 * difference, a multiplication and an addition into the block. */
void count_backward_weights(const trace *t, stage_id stage, int input, int head,
                            cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    for (int i = 0; i < t->n; i++) {
        counts->multiplications += (tally)t->m;
        counts->additions += (tally)t->m;
        for (int j = 0; j < t->m; j++) {
            tally visible = !trace_is_hidden(t, i, j);
            counts->multiplications += visible;
            counts->additions += 2 * visible;
        }
    }
}

/* ---- explained, counted and written as a formula ---- */

/* The softmax's backward with its numbers and tokens:
 *   d_masked[bank,river] = weights[bank,river] · (d_weights[bank,river] − Σ_k weights[bank,k] ·
 *   d_weights[bank,k]) = 0.6 × (0.3 − 0.12); a hidden key's is 0, its weight being 0. */
bool explain_d_masked(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (trace_is_hidden(t, cell->row, cell->col)) {
        explain_put(out, " = 0 (hidden by the %s: its weight is 0)", trace_mask_name(t->in->mask));
        return false;
    }
    const char *w = OPS_NAME(WEIGHTS), *dw = stage_get(stage_gradient(READ_NODE,
                                                                     STAGE_WEIGHTS))->name;
    const char *row = explain_row_label(out, t, cell);
    size_t at = (size_t)cell->row * (size_t)t->m;
    products p = { trace_block(t, STAGE_WEIGHTS, cell->head) + at,
                   trace_gradient_of(t, STAGE_WEIGHTS, cell->head) + at, 1, 1 };
    explain_put(out, " = ");
    explain_put_source_cell(out, t, w, cell);
    explain_put(out, " · (");
    explain_put_source_cell(out, t, dw, cell);
    explain_put(out, " − Σ_k %s[%s,k] · %s[%s,k]), where Σ_k = ", w, row, dw, row);
    explain_put_product_terms(out, &p, t->m, t);
    explain_put(out, " = ");
    explain_put_number(out, ops_softmax_backward_dot(t, cell->head, cell->row));
    explain_put(out, "; so ");
    explain_put_number(out, p.left[cell->col]);
    explain_put(out, " × (");
    explain_put_number(out, p.right[cell->col]);
    explain_put(out, " − ");
    explain_put_number(out, ops_softmax_backward_dot(t, cell->head, cell->row));
    explain_put(out, ")");
    return true;
}

/* The max of a masked row: the shift the stable softmax subtracts. */
static double masked_row_max(const trace *t, int head, int row)
{
    double max = -INFINITY;
    for (int j = 0; j < t->m; j++) {
        double x = trace_value(t, STAGE_MASKED, head, row, j);
        if (x > max)
            max = x;
    }
    return max;
}

static void put_shifted_exp(explain_text *out, const trace *t, const trace_cell *cell, int col,
                            double max)
{
    explain_put(out, "exp(");
    explain_put_number(out, trace_value(t, STAGE_MASKED, cell->head, cell->row, col));
    explain_put(out, " − ");
    explain_put_number(out, max);
    explain_put(out, ")");
}

static bool softmax_absent(const sum_terms *s, int j)
{
    return trace_is_hidden(s->t, s->cell->row, j);
}

static double softmax_value(const sum_terms *s, int j)
{
    return exp(trace_value(s->t, STAGE_MASKED, s->cell->head, s->cell->row, j) - s->shift);
}

static void put_softmax_term(explain_text *out, const sum_terms *s, int j)
{
    put_shifted_exp(out, s->t, s->cell, j, s->shift);
}

/* A weight of the online softmax: its score against the last tile's running max, over the last
 * running sum; the whole row of scores is never needed at once. */
static bool explain_online_weight(explain_text *out, const trace *t, const trace_cell *cell)
{
    int last = trace_tile_count(t) - 1;
    double max = trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, last);
    const char *row = explain_row_label(out, t, cell);
    explain_put(out, " = exp(%s[%s,%s] − %s[%s,%d]) / %s[%s,%d] = ", OPS_NAME(MASKED), row,
                explain_source_label(out, t, cell->col), OPS_NAME(RUNNING_MAX), row, last,
                OPS_NAME(RUNNING_SUM), row, last);
    put_shifted_exp(out, t, cell, cell->col, max);
    explain_put(out, " / ");
    explain_put_number(out, trace_value(t, STAGE_RUNNING_SUM, cell->head, cell->row, last));
    return true;
}

bool explain_weights(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (trace_is_hidden(t, cell->row, cell->col)) {
        explain_put(out, " = exp(−∞) / (…) = 0 (hidden by the mask)");
        return false;
    }
    if (t->in->online_softmax)
        return explain_online_weight(out, t, cell);
    double max = masked_row_max(t, cell->head, cell->row);
    explain_put(out, " = ");
    put_shifted_exp(out, t, cell, cell->col, max);
    explain_put(out, " / (");
    sum_terms s = { .count = t->m, .absent = softmax_absent, .value = softmax_value,
                    .put_term = put_softmax_term, .t = t, .cell = cell, .shift = max,
                    .keyed = true };
    explain_put_sum(out, &s);
    explain_put(out, ")");
    if (out->full) {   /* the two numbers divided: "= 1.0 / 1.4138" (the cell follows) */
        double sum = 0.0;
        for (int j = 0; j < t->m; j++)
            sum += explain_term_present(&s, j) ? softmax_value(&s, j) : 0.0;
        explain_put(out, " = ");
        explain_put_number(out, softmax_value(&s, cell->col));
        explain_put(out, " / ");
        explain_put_number(out, sum);
    }
    return true;
}

static void put_tile_keys(explain_text *out, const trace *t, const trace_cell *cell,
                          const char *stage)
{
    int first, end;
    trace_tile_keys(t, cell->col, &first, &end);
    explain_put(out, "%s[%s,%s", stage, explain_row_label(out, t, cell),
                explain_source_label(out, t, first));
    if (end - first > 1)
        explain_put(out, "…%s", explain_source_label(out, t, end - 1));
    explain_put(out, "]");
}

/* running_max[row,b − 1]: the running cell before this one, by name. */
static void put_previous(explain_text *out, const trace *t, const trace_cell *cell,
                         const char *stage)
{
    explain_put(out, "%s[%s,%d]", stage, explain_row_label(out, t, cell), cell->col - 1);
}

/* m_b = max(m_{b−1}, the tile's visible scores), with the tile's largest named. */
bool explain_running_max(explain_text *out, const trace *t, const trace_cell *cell)
{
    int first, end, at = -1;
    trace_tile_keys(t, cell->col, &first, &end);
    for (int j = first; j < end; j++)
        if (!trace_is_hidden(t, cell->row, j)
            && (at < 0 || trace_value(t, STAGE_MASKED, cell->head, cell->row, j)
                          > trace_value(t, STAGE_MASKED, cell->head, cell->row, at)))
            at = j;
    explain_put(out, " = max(");
    if (cell->col > 0) {
        put_previous(out, t, cell, OPS_NAME(RUNNING_MAX));
        explain_put(out, ", ");
    }
    put_tile_keys(out, t, cell, OPS_NAME(MASKED));
    explain_put(out, ") = max(");
    if (cell->col > 0) {
        explain_put_number(out, trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, cell->col - 1));
        explain_put(out, ", ");
    }
    if (at < 0) {
        explain_put(out, "−∞: every key of the tile is hidden)");
    } else {
        explain_put_number(out, trace_value(t, STAGE_MASKED, cell->head, cell->row, at));
        explain_put(out, " at %s[%s,%s])", OPS_NAME(MASKED), explain_row_label(out, t, cell),
                    explain_source_label(out, t, at));
    }
    return true;
}

static bool tile_absent(const sum_terms *s, int i)
{
    return trace_is_hidden(s->t, s->cell->row, s->first + i);
}

static double tile_value(const sum_terms *s, int i)
{
    return exp(trace_value(s->t, STAGE_MASKED, s->cell->head, s->cell->row, s->first + i)
               - s->shift);
}

static void put_tile_term(explain_text *out, const sum_terms *s, int i)
{
    put_shifted_exp(out, s->t, s->cell, s->first + i, s->shift);
}

/* l_b = l_{b−1} × exp(m_{b−1} − m_b) + Σ exp(s_j − m_b) over the tile's visible keys, with the
 * rescale factor written out: what the earlier tiles' sum is worth under the new maximum. */
bool explain_running_sum(explain_text *out, const trace *t, const trace_cell *cell)
{
    double max = trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, cell->col);
    if (max == -INFINITY) {
        explain_put(out, " = 0 (every key so far is hidden: %s is −∞ and nothing is summed)",
                    OPS_NAME(RUNNING_MAX));
        return false;
    }
    int first, end;
    trace_tile_keys(t, cell->col, &first, &end);
    explain_put(out, " = ");
    if (cell->col > 0) {
        put_previous(out, t, cell, OPS_NAME(RUNNING_SUM));
        explain_put(out, " × exp(");
        put_previous(out, t, cell, OPS_NAME(RUNNING_MAX));
        explain_put(out, " − %s[%s,%d]) + ", OPS_NAME(RUNNING_MAX),
                    explain_row_label(out, t, cell), cell->col);
    }
    explain_put(out, "Σ exp(%s − %s[%s,%d]) over ", OPS_NAME(MASKED), OPS_NAME(RUNNING_MAX),
                explain_row_label(out, t, cell), cell->col);
    put_tile_keys(out, t, cell, OPS_NAME(MASKED));
    explain_put(out, " = ");
    if (cell->col > 0) {
        double previous = trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, cell->col - 1);
        explain_put_number(out, trace_value(t, STAGE_RUNNING_SUM, cell->head, cell->row, cell->col - 1));
        explain_put(out, " × ");
        explain_put_number(out, exp(previous - max));
        explain_put(out, " (the rescale factor exp(");
        explain_put_number(out, previous);
        explain_put(out, " − ");
        explain_put_number(out, max);
        explain_put(out, ")) + ");
    }
    sum_terms s = { .count = end - first, .absent = tile_absent, .value = tile_value,
                    .put_term = put_tile_term, .t = t, .cell = cell, .shift = max,
                    .first = first, .keyed = true };
    int present = 0;
    for (int i = 0; i < s.count; i++)
        present += explain_term_present(&s, i);
    if (present)
        explain_put_sum(out, &s);
    else
        explain_put(out, "0 (every key of the tile is hidden)");
    return true;
}

int formula_weights(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const char *name = stage_get(stage)->name, *from = OPS_NAME(MASKED);
    if (t->in->online_softmax)
        return snprintf(buffer, size, "%s = exp(%s − m_T) / l_T (the last tile's %s and %s)",
                        name, from, OPS_NAME(RUNNING_MAX), OPS_NAME(RUNNING_SUM));
    return snprintf(buffer, size, "%s = softmax(%s)", name, from);
}

int formula_running_max(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s: m_t = max(m_t−1, max of %s over tile t of %d keys)",
                    stage_get(stage)->name, OPS_NAME(MASKED), t->in->tile);
}

int formula_running_sum(const trace *t, stage_id stage, char *buffer, size_t size)
{
    (void)t;
    return snprintf(buffer, size, "%s: l_t = l_t−1 · exp(m_t−1 − m_t) + Σ_tile exp(%s − m_t)",
                    stage_get(stage)->name, OPS_NAME(MASKED));
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
    tally visible = ops_visible_cells(t, stage);
    tally rescales = ops_cost_heads(t, stage) * (tally)t->n * (tally)trace_tile_count(t);
    counts->additions += 2 * visible + rescales;
    counts->exponentials += visible + rescales;
    counts->multiplications += rescales;
}

/* Per visible cell: − max and exp; per row: visible − 1 additions for the sum; every cell
 * divided by it. */
void cost_weights(const trace *t, stage_id stage, cost_counts *counts)
{
    tally heads = ops_cost_heads(t, stage), visible = ops_visible_cells(t, stage);
    /* the online softmax took its sums in running_sum: only the shift is left here */
    counts->additions += t->in->online_softmax ? visible : 2 * visible - heads * (tally)t->n;
    counts->exponentials += visible;
    counts->divisions += heads * (tally)t->n * (tally)t->m;
}
