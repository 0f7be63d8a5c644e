/* The arithmetic behind any cell of a trace, written out with the real numbers, and the
 * parsing of cell names such as "weights[bank,river]". Pure: text goes into caller buffers. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "number.h"
#include "spelling.h"
#include "stage_functions.h"

/* A sum of more than SUM_TERMS_SHOWN terms shows only its SUM_TERMS_KEPT terms of largest
 * magnitude (in their order) and says what it left out, unless every term is asked for. */
enum { SUM_TERMS_SHOWN = 6, SUM_TERMS_KEPT = 4 };

static void put(explain_text *out, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    size_t room = out->length < out->size ? out->size - out->length : 0;
    int wrote = vsnprintf(room ? out->buffer + out->length : NULL, room, format, args);
    va_end(args);
    if (wrote > 0)
        out->length += (size_t)wrote;
}

static void put_number_at(explain_text *out, double x, int precision)
{
    char number[NUMBER_MAX];
    number_write(x, &(number_format){ NUMBER_SHORT, precision, 0, false }, number,
                 sizeof number);
    put(out, "%s", number);
}

static void put_number(explain_text *out, double x)
{
    put_number_at(out, x, out->precision);
}

/* What a product-sum reads: term i is left(i) × right(i). The total the explanation ends with is
 * the trace's own cell: these terms summed as the kernels sum them, in this order, each step one
 * fused multiply-add (total = fma(left(i), right(i), total)), so the sum shown is the sum the
 * trace holds to the bit (tests/test_kernels.c and tests/reference_attention.py hold the kernels
 * to that definition). */
typedef struct {
    const double *left, *right;
    size_t left_stride, right_stride;
} products;

/* The terms of a sum: how many, which are left out of it (masked), the value of each and how
 * it is written. */
typedef struct sum_terms sum_terms;
struct sum_terms {
    int count;
    bool (*absent)(const sum_terms *s, int i);   /* NULL: every term is in the sum */
    double (*value)(const sum_terms *s, int i);
    void (*put_term)(explain_text *out, const sum_terms *s, int i);
    const trace *t;
    const trace_cell *cell;
    products p;
    double shift;                                /* the softmax's row max */
    int first;                                   /* the key of term 0 (a tile's first) */
};

static bool term_present(const sum_terms *s, int i)
{
    return !s->absent || !s->absent(s, i);
}

/* Whether term i is one of the kept ones. */
static bool is_kept(const int *kept, int count, int i)
{
    for (int k = 0; k < count; k++)
        if (kept[k] == i)
            return true;
    return false;
}

/* Fills kept[] with the SUM_TERMS_KEPT present terms of largest magnitude (the first of equal
 * ones); returns the largest magnitude of the present terms not kept. */
static double choose_terms(const sum_terms *s, int kept[SUM_TERMS_KEPT])
{
    for (int k = 0; k < SUM_TERMS_KEPT; k++) {
        kept[k] = -1;
        for (int i = 0; i < s->count; i++)
            if (term_present(s, i) && !is_kept(kept, k, i)
                && (kept[k] < 0 || fabs(s->value(s, i)) > fabs(s->value(s, kept[k]))))
                kept[k] = i;
    }
    double left_out = 0.0;
    for (int i = 0; i < s->count; i++)
        if (term_present(s, i) && !is_kept(kept, SUM_TERMS_KEPT, i)
            && fabs(s->value(s, i)) > left_out)
            left_out = fabs(s->value(s, i));
    return left_out;
}

/* How small the terms left out are, at the explanation's precision p: "each 0", "each |term| <
 * 0.00005" (half a unit of the last decimal: each would be written 0.0), or "each |term| ≤
 * 0.0592" (the largest of them rounded up to p decimals, so the bound holds). */
static void put_bound(explain_text *out, double largest)
{
    double unit = pow(10.0, -out->precision);
    if (largest == 0.0)
        put(out, "each 0");
    else if (largest < unit / 2) {
        put(out, "each |term| < ");
        put_number_at(out, unit / 2, out->precision < 17 ? out->precision + 1 : 17);
    } else {
        put(out, "each |term| ≤ ");
        put_number(out, ceil(largest / unit) * unit);
    }
}

/* Writes the sum's present terms joined by " + ": all of them when they fit or when out->full,
 * else the largest with a note of how many were left out and how small they are. */
static void put_sum(explain_text *out, const sum_terms *s)
{
    int present = 0;
    for (int i = 0; i < s->count; i++)
        present += term_present(s, i);
    bool shorten = !out->full && present > SUM_TERMS_SHOWN;
    int kept[SUM_TERMS_KEPT];
    double left_out = shorten ? choose_terms(s, kept) : 0.0;
    for (int i = 0, shown = 0; i < s->count; i++) {
        if (!term_present(s, i) || (shorten && !is_kept(kept, SUM_TERMS_KEPT, i)))
            continue;
        put(out, shown++ ? " + " : "");
        s->put_term(out, s, i);
    }
    if (shorten) {
        put(out, " + … %d more terms, ", present - SUM_TERMS_KEPT);
        put_bound(out, left_out);
        put(out, " …");
    }
}

static double product_value(const sum_terms *s, int i)
{
    return s->p.left[(size_t)i * s->p.left_stride] * s->p.right[(size_t)i * s->p.right_stride];
}

static void put_product(explain_text *out, const sum_terms *s, int i)
{
    put(out, "(");
    put_number(out, s->p.left[(size_t)i * s->p.left_stride]);
    put(out, " × ");
    put_number(out, s->p.right[(size_t)i * s->p.right_stride]);
    put(out, ")");
}

static void put_product_terms(explain_text *out, const products *p, int count)
{
    sum_terms s = { .count = count, .value = product_value, .put_term = put_product, .p = *p };
    put_sum(out, &s);
}

static const char *row_label(const trace *t, const trace_cell *cell)
{
    return trace_axis_label(t, stage_get(cell->stage)->rows, cell->row, NULL, 0);
}

static const char *source_label(const trace *t, int i)
{
    return trace_axis_label(t, AXIS_SOURCE, i, NULL, 0);
}

static void put_cell_name(explain_text *out, const trace *t, const trace_cell *cell)
{
    const stage_info *info = stage_get(cell->stage);
    char buffer[32];
    put(out, "%s[%s,%s]", info->name, row_label(t, cell),
        trace_axis_label(t, info->cols, cell->col, buffer, sizeof buffer));
    if (info->per_head && t->heads > 1)
        put(out, " (head %d)", cell->head);
}

static void put_positional(explain_text *out, const trace *t, int pos, int col)
{
    int even = col - col % 2;
    put(out, "%s(%d / 10000^(%d/%d))", col % 2 ? "cos" : "sin", pos, even, t->d_model);
}

/* input and source_input: the token's embedding, plus its positional encoding. */
bool explain_input(explain_text *out, const trace *t, const trace_cell *cell)
{
    const double *embeddings = cell->stage == STAGE_SOURCE_INPUT ? t->in->source_embeddings
                                                                 : t->in->embeddings;
    size_t at = (size_t)cell->row * (size_t)t->d_model + (size_t)cell->col;
    put(out, " = embedding(%s)[%d]", row_label(t, cell), cell->col);
    if (t->positional) {
        put(out, " + PE[%d,%d] = ", cell->row, cell->col);
        put_number(out, embeddings[at]);
        put(out, " + ");
        put_positional(out, t, cell->row, cell->col);
        put(out, " = ");
        put_number(out, embeddings[at]);
        put(out, " + ");
        put_number(out, t->positional[at]);
    }
    return true;
}

/* Q, K, V and output: a row of stage `from` times a column of the weight matrix, which has as
 * many columns as the stage (d_model, or kv_heads · d_k for K and V), then the bias of that
 * column, when the lesson gives one, as its own last term with its number:
 *   Q[cat,1] = input_cat · W_Q[:,1] + b_Q[1] = (1 × 0.5) + (0.5 × 2) + b_Q[1] (0.1) = 1.6
 * (the sum of the products first, then the bias: the order trace_project adds them in). */
static bool explain_projection(explain_text *out, const trace *t, const trace_cell *cell,
                               stage_id from, const char *matrix, const double *weights)
{
    size_t d = (size_t)t->d_model, cols = (size_t)trace_cols(t, cell->stage);
    products p = { trace_block(t, from, 1) + (size_t)cell->row * d, weights + (size_t)cell->col,
                   1, cols };
    const double *bias = trace_stage_bias(t, cell->stage);
    const char *letter = matrix + 2;  /* "Q" of "W_Q": the bias is b_Q */
    put(out, " = %s_%s · %s[:,%d]", stage_get(from)->name, row_label(t, cell), matrix,
        cell->col);
    if (bias)
        put(out, " + b_%s[%d]", letter, cell->col);
    put(out, " = ");
    put_product_terms(out, &p, t->d_model);
    if (bias) {
        put(out, " + b_%s[%d] (", letter, cell->col);
        put_number(out, bias[cell->col]);
        put(out, ")");
    }
    return true;
}

bool explain_q(explain_text *out, const trace *t, const trace_cell *cell)
{
    return explain_projection(out, t, cell, STAGE_INPUT, "W_Q", t->in->W_Q);
}

bool explain_k(explain_text *out, const trace *t, const trace_cell *cell)
{
    return explain_projection(out, t, cell, trace_source_stage(t), "W_K", t->in->W_K);
}

bool explain_v(explain_text *out, const trace *t, const trace_cell *cell)
{
    return explain_projection(out, t, cell, trace_source_stage(t), "W_V", t->in->W_V);
}

bool explain_output(explain_text *out, const trace *t, const trace_cell *cell)
{
    return explain_projection(out, t, cell, STAGE_CONCAT, "W_O", t->in->W_O);
}

static size_t head_offset(const trace *t, int head)
{
    return (size_t)(head - 1) * (size_t)t->d_k;
}

/* The first column of the key/value group that head reads, in K and V. */
static size_t group_offset(const trace *t, int head)
{
    return (size_t)(trace_kv_group(t, head) - 1) * (size_t)t->d_k;
}

/* " of group 2" after a key or value that grouped-query attention shares; nothing otherwise. */
static void put_group(explain_text *out, const trace *t, int head)
{
    if (t->kv_heads < t->heads)
        put(out, " of group %d", trace_kv_group(t, head));
}

bool explain_scores(explain_text *out, const trace *t, const trace_cell *cell)
{
    size_t d = (size_t)t->d_model, offset = head_offset(t, cell->head);
    size_t kv = (size_t)trace_cols(t, STAGE_K);
    products p = { trace_block(t, trace_query_stage(t), 1) + (size_t)cell->row * d + offset,
                   trace_block(t, trace_key_stage(t), 1) + (size_t)cell->col * kv
                   + group_offset(t, cell->head), 1, 1 };
    put(out, t->in->rope ? " = rotated q_%s · rotated k_%s" : " = q_%s · k_%s", row_label(t, cell),
        source_label(t, cell->col));
    if (t->heads > 1)
        put(out, " over dims %zu…%zu", offset, offset + (size_t)t->d_k - 1);
    if (t->kv_heads < t->heads)
        put(out, " of Q, %zu…%zu of K (group %d)", group_offset(t, cell->head),
            group_offset(t, cell->head) + (size_t)t->d_k - 1, trace_kv_group(t, cell->head));
    put(out, " = ");
    put_product_terms(out, &p, t->d_k);
    return true;
}

static void put_source_cell(explain_text *out, const trace *t, const char *stage,
                            const trace_cell *cell)
{
    put(out, "%s[%s,%s]", stage, row_label(t, cell), source_label(t, cell->col));
}

bool explain_scaled(explain_text *out, const trace *t, const trace_cell *cell)
{
    put(out, " = ");
    put_source_cell(out, t, "scores", cell);
    double score = trace_value(t, STAGE_SCORES, cell->head, cell->row, cell->col);
    if (!t->in->scale) {
        put(out, " (scale: false) = ");
        put_number(out, score);
        return true;
    }
    put(out, " / √d_k = ");
    put_number(out, score);
    put(out, " / √%d", t->d_k);
    return true;
}

bool explain_masked(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (trace_is_hidden(t, cell->row, cell->col)) {
        put(out, " = −∞ (hidden by the %s)", trace_mask_name(t->in->mask));
        return false;
    }
    put(out, " = ");
    put_source_cell(out, t, stage_get(trace_unmasked_stage(t))->name, cell);
    put(out, " (%s)", t->in->mask == MASK_NONE ? "no mask" : "may attend");
    return true;
}

/* Q_rotated and K_rotated: the pair the cell belongs to, turned by its angle, with numbers:
 *   Q_rotated[cat,2] = Q[cat,2]·cos θ − Q[cat,3]·sin θ, θ = 1 × 10000^(−2/4) = 0.01 (pair 1 of
 *   head 1) = (0.5 × 0.99995) − (1 × 0.0099998) */
bool explain_rotated(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = cell->stage == STAGE_Q_ROTATED ? STAGE_Q : STAGE_K;
    const char *name = stage_get(from)->name;
    int in_head = cell->col % t->d_k, pair = in_head / 2, first = cell->col - in_head % 2;
    bool second = in_head % 2 == 1;
    double angle = trace_rope_angle(t, cell->row, pair);
    double x = trace_value(t, from, 1, cell->row, first);
    double y = trace_value(t, from, 1, cell->row, first + 1);
    const char *row = row_label(t, cell);
    if (second)
        put(out, " = %s[%s,%d]·sin θ + %s[%s,%d]·cos θ", name, row, first, name, row, first + 1);
    else
        put(out, " = %s[%s,%d]·cos θ − %s[%s,%d]·sin θ", name, row, first, name, row, first + 1);
    put(out, ", θ = %d × ", cell->row);
    put_number(out, t->in->rope_base);
    put(out, "^(−%d/%d) = ", 2 * pair, t->d_k);
    put_number(out, angle);
    bool grouped = cell->stage == STAGE_K_ROTATED && t->kv_heads < t->heads;
    put(out, " (pair %d of %s %d) = (", pair, grouped ? "group" : "head", cell->col / t->d_k + 1);
    put_number(out, x);
    put(out, " × ");
    put_number(out, second ? sin(angle) : cos(angle));
    put(out, second ? ") + (" : ") − (");
    put_number(out, y);
    put(out, " × ");
    put_number(out, second ? cos(angle) : sin(angle));
    put(out, ")");
    return true;
}

/* biased: scaled minus the head's slope times the distance, with numbers. */
bool explain_biased(explain_text *out, const trace *t, const trace_cell *cell)
{
    put(out, " = ");
    put_source_cell(out, t, "scaled", cell);
    put(out, " − m_%d·|%d − %d| = ", cell->head, cell->row, cell->col);
    put_number(out, trace_value(t, STAGE_SCALED, cell->head, cell->row, cell->col));
    put(out, " − ");
    put_number(out, trace_alibi_slope(cell->head, t->heads));
    put(out, " × %d", abs(cell->row - cell->col));
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
    put(out, "exp(");
    put_number(out, trace_value(t, STAGE_MASKED, cell->head, cell->row, col));
    put(out, " − ");
    put_number(out, max);
    put(out, ")");
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
    put(out, " = exp(masked[%s,%s] − running_max[%s,%d]) / running_sum[%s,%d] = ",
        row_label(t, cell), source_label(t, cell->col), row_label(t, cell), last,
        row_label(t, cell), last);
    put_shifted_exp(out, t, cell, cell->col, max);
    put(out, " / ");
    put_number(out, trace_value(t, STAGE_RUNNING_SUM, cell->head, cell->row, last));
    return true;
}

bool explain_weights(explain_text *out, const trace *t, const trace_cell *cell)
{
    if (trace_is_hidden(t, cell->row, cell->col)) {
        put(out, " = exp(−∞) / (…) = 0 (hidden by the mask)");
        return false;
    }
    if (t->in->online_softmax)
        return explain_online_weight(out, t, cell);
    double max = masked_row_max(t, cell->head, cell->row);
    put(out, " = ");
    put_shifted_exp(out, t, cell, cell->col, max);
    put(out, " / (");
    sum_terms s = { .count = t->m, .absent = softmax_absent, .value = softmax_value,
                    .put_term = put_softmax_term, .t = t, .cell = cell, .shift = max };
    put_sum(out, &s);
    put(out, ")");
    return true;
}

/* ---- the online softmax: running_max and running_sum, tile by tile ---- */

static void put_tile_keys(explain_text *out, const trace *t, const trace_cell *cell,
                          const char *stage)
{
    int first, end;
    trace_tile_keys(t, cell->col, &first, &end);
    put(out, "%s[%s,%s", stage, row_label(t, cell), source_label(t, first));
    if (end - first > 1)
        put(out, "…%s", source_label(t, end - 1));
    put(out, "]");
}

/* running_max[row,b − 1]: the running cell before this one, by name. */
static void put_previous(explain_text *out, const trace *t, const trace_cell *cell,
                         const char *stage)
{
    put(out, "%s[%s,%d]", stage, row_label(t, cell), cell->col - 1);
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
    put(out, " = max(");
    if (cell->col > 0) {
        put_previous(out, t, cell, "running_max");
        put(out, ", ");
    }
    put_tile_keys(out, t, cell, "masked");
    put(out, ") = max(");
    if (cell->col > 0) {
        put_number(out, trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, cell->col - 1));
        put(out, ", ");
    }
    if (at < 0) {
        put(out, "−∞: every key of the tile is hidden)");
    } else {
        put_number(out, trace_value(t, STAGE_MASKED, cell->head, cell->row, at));
        put(out, " at masked[%s,%s])", row_label(t, cell), source_label(t, at));
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
        put(out, " = 0 (every key so far is hidden: running_max is −∞ and nothing is summed)");
        return false;
    }
    int first, end;
    trace_tile_keys(t, cell->col, &first, &end);
    put(out, " = ");
    if (cell->col > 0) {
        put_previous(out, t, cell, "running_sum");
        put(out, " × exp(");
        put_previous(out, t, cell, "running_max");
        put(out, " − running_max[%s,%d]) + ", row_label(t, cell), cell->col);
    }
    put(out, "Σ exp(masked − running_max[%s,%d]) over ", row_label(t, cell), cell->col);
    put_tile_keys(out, t, cell, "masked");
    put(out, " = ");
    if (cell->col > 0) {
        double previous = trace_value(t, STAGE_RUNNING_MAX, cell->head, cell->row, cell->col - 1);
        put_number(out, trace_value(t, STAGE_RUNNING_SUM, cell->head, cell->row, cell->col - 1));
        put(out, " × ");
        put_number(out, exp(previous - max));
        put(out, " (the rescale factor exp(");
        put_number(out, previous);
        put(out, " − ");
        put_number(out, max);
        put(out, ")) + ");
    }
    sum_terms s = { .count = end - first, .absent = tile_absent, .value = tile_value,
                    .put_term = put_tile_term, .t = t, .cell = cell, .shift = max,
                    .first = first };
    int present = 0;
    for (int i = 0; i < s.count; i++)
        present += term_present(&s, i);
    if (present)
        put_sum(out, &s);
    else
        put(out, "0 (every key of the tile is hidden)");
    return true;
}

bool explain_context(explain_text *out, const trace *t, const trace_cell *cell)
{
    size_t offset = group_offset(t, cell->head) + (size_t)cell->col;
    products p = { trace_block(t, STAGE_WEIGHTS, cell->head) + (size_t)cell->row * (size_t)t->m,
                   trace_block(t, STAGE_V, 1) + offset, 1, (size_t)trace_cols(t, STAGE_V) };
    put(out, " = Σ_j weights[%s,j] × v_j[%zu]", row_label(t, cell), offset);
    put_group(out, t, cell->head);
    put(out, " = ");
    put_product_terms(out, &p, t->m);
    return true;
}

bool explain_concat(explain_text *out, const trace *t, const trace_cell *cell)
{
    int head = cell->col / t->d_k + 1;
    put(out, " = context[%s,%d] of head %d", row_label(t, cell), cell->col % t->d_k, head);
    return true;
}

static int explain_cell(const trace *t, const trace_cell *cell, int precision, bool full,
                        char *buffer, size_t size)
{
    explain_text out = { buffer, size, 0, precision, full };
    if (size)
        buffer[0] = '\0';
    put_cell_name(&out, t, cell);
    if (stage_functions_get(cell->stage)->explain(&out, t, cell)) {
        put(&out, " = ");
        put_number(&out, trace_value(t, cell->stage, cell->head, cell->row, cell->col));
    }
    return out.length > (size_t)INT_MAX ? -1 : (int)out.length;
}

int trace_cell_explain(const trace *t, const trace_cell *cell, int precision,
                       char *buffer, size_t size)
{
    return explain_cell(t, cell, precision, false, buffer, size);
}

int trace_cell_explain_full(const trace *t, const trace_cell *cell, int precision,
                            char *buffer, size_t size)
{
    return explain_cell(t, cell, precision, true, buffer, size);
}

/* Index of the label along an axis: the first token so written, or a 0-based index. */
static int find_index(const trace *t, stage_axis axis, const char *label, size_t length)
{
    int count = axis == AXIS_TOKENS ? t->n : axis == AXIS_SOURCE ? t->m
              : axis == AXIS_MODEL_DIMS ? t->d_model
              : axis == AXIS_KV_DIMS ? t->kv_heads * t->d_k
              : axis == AXIS_HEAD_DIMS ? t->d_k : trace_tile_count(t);
    char buffer[32];
    for (int i = 0; i < count && axis <= AXIS_SOURCE; i++) {
        const char *name = trace_axis_label(t, axis, i, buffer, sizeof buffer);
        if (strlen(name) == length && strncmp(name, label, length) == 0)
            return i;
    }
    if (length == 0 || length > 9 || strspn(label, "0123456789") < length)
        return -1;
    int index = atoi(label);
    return index < count ? index : -1;
}

static bool parse_failed(char *error, size_t error_size, const char *format, const char *what)
{
    snprintf(error, error_size, format, what);
    return false;
}

/* The token of a row or column axis nearest to a label that names none, or NULL. */
static const char *nearest_label(const trace *t, stage_axis axis, const char *label,
                                 size_t length)
{
    int count = axis == AXIS_TOKENS ? t->n : axis == AXIS_SOURCE ? t->m : 0;
    const char **words = count > 0 ? malloc((size_t)count * sizeof *words) : NULL;
    char *word = malloc(length + 1);
    const char *nearest = NULL;
    if (words && word) {
        char buffer[32];
        for (int i = 0; i < count; i++)
            words[i] = trace_axis_label(t, axis, i, buffer, sizeof buffer);
        memcpy(word, label, length);
        word[length] = '\0';
        nearest = spelling_nearest(word, words, count);
    }
    free(words);
    free(word);
    return nearest;
}

/* Why no comma of spec splits it into a row and a column: the side that names nothing (taken
 * at the first comma whose other side does name one), with the nearest token to it. */
static bool cell_not_found(const trace *t, const stage_info *info, const char *spec,
                           const char *inside, const char *end, char *error, size_t error_size)
{
    const char *split = NULL;
    bool row_bad = true;
    for (const char *comma = inside; comma < end && !split; comma++) {
        if (*comma != ',')
            continue;
        if (find_index(t, info->rows, inside, (size_t)(comma - inside)) >= 0)
            split = comma, row_bad = false;
        else if (find_index(t, info->cols, comma + 1, (size_t)(end - comma - 1)) >= 0)
            split = comma;
    }
    const char *nearest = NULL, *label = NULL;
    size_t length = 0;
    if (split) {
        label = row_bad ? inside : split + 1;
        length = row_bad ? (size_t)(split - inside) : (size_t)(end - split - 1);
        nearest = nearest_label(t, row_bad ? info->rows : info->cols, label, length);
    }
    explain_text out = { error, error_size, 0, 0, false };
    if (error_size)
        error[0] = '\0';
    put(&out, "no such cell '%s': ", spec);
    if (nearest)
        put(&out, "'%.*s' is not a %s of %s; did you mean '%s'?", (int)length, label,
            row_bad ? "row" : "column", info->name, nearest);
    else
        put(&out, "name the row and column by token or by 0-based index");
    return false;
}

bool trace_cell_parse(const trace *t, const char *spec, int head, trace_cell *cell,
                      char *error, size_t error_size)
{
    const char *open = strchr(spec, '[');
    size_t length = strlen(spec);
    if (!open || length < 2 || spec[length - 1] != ']')
        return parse_failed(error, error_size, "'%s' is not of the form STAGE[ROW,COL]", spec);
    char name[32];
    size_t name_length = (size_t)(open - spec);
    if (name_length >= sizeof name)
        return parse_failed(error, error_size, "unknown stage in '%s'", spec);
    memcpy(name, spec, name_length);
    name[name_length] = '\0';
    stage_id stage = stage_find(name);
    if (stage == STAGE_COUNT || !trace_has_stage(t, stage)) {
        const char *names[STAGE_COUNT];
        int count = 0;
        for (int s = 0; s < STAGE_COUNT; s++)
            if (trace_has_stage(t, (stage_id)s))
                names[count++] = stage_get((stage_id)s)->name;
        const char *nearest = spelling_nearest(name, names, count);
        explain_text out = { error, error_size, 0, 0, false };
        put(&out, "unknown stage '%s'", name);
        if (nearest)
            put(&out, "; did you mean '%s'?", nearest);
        put(&out, " (stages:");
        for (int i = 0; i < count; i++)
            put(&out, " %s", names[i]);
        put(&out, ")");
        return false;
    }
    const stage_info *info = stage_get(stage);
    if (info->per_head && (head < 1 || head > t->heads)) {
        snprintf(error, error_size, "head %d does not exist: this lesson has %d head%s", head,
                 t->heads, t->heads == 1 ? "" : "s");
        return false;
    }
    /* Token names may hold commas: try every comma until both sides name a row and a column. */
    const char *inside = open + 1, *end = spec + length - 1;
    for (const char *comma = inside; comma < end; comma++) {
        if (*comma != ',')
            continue;
        int row = find_index(t, info->rows, inside, (size_t)(comma - inside));
        int col = find_index(t, info->cols, comma + 1, (size_t)(end - comma - 1));
        if (row >= 0 && col >= 0) {
            *cell = (trace_cell){ stage, info->per_head ? head : 1, row, col };
            return true;
        }
    }
    return cell_not_found(t, info, spec, inside, end, error, error_size);
}
