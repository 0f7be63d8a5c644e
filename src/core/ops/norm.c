/* The norm family: normed (layer norm or RMS norm of each row, times the gain, plus the bias)
 * and residual = input + output, with their backward operations and their explanations. */
#include <math.h>
#include <stdio.h>
#include "ops.h"

/* What a row's normalisation divides by and subtracts: the mean (0 for an RMS norm, which
 * subtracts nothing), the spread (the biased variance, or the mean of squares) and
 * root = √(spread + eps). */
typedef struct {
    double mean, spread, root;
} norm_row;

/* The row a normed stage normalises: row i of its node input (input, or residual). */
static const double *norm_from(const trace *t, stage_id stage, int row)
{
    return trace_block(t, trace_stage_node_input(t, stage, 0), 1)
         + (size_t)row * (size_t)t->d_model;
}

static bool is_layer(const trace *t)
{
    return t->in->norm == NORM_LAYER;
}

/* The statistics of one row x: sums in column order, squares by fused multiply-add. */
static norm_row row_stats(const trace *t, const double *x)
{
    int d = t->d_model;
    norm_row r = { 0.0, 0.0, 0.0 };
    if (is_layer(t)) {
        for (int c = 0; c < d; c++)
            r.mean += x[c];
        r.mean /= d;
    }
    for (int c = 0; c < d; c++) {
        double centred = is_layer(t) ? x[c] - r.mean : x[c];
        r.spread = fma(centred, centred, r.spread);
    }
    r.spread /= d;
    r.root = sqrt(r.spread + t->in->norm_eps);
    return r;
}

/* x̂ = (x − mean) / root (x / root for an RMS norm). */
static double normalised(const trace *t, const norm_row *r, double x)
{
    return (is_layer(t) ? x - r->mean : x) / r->root;
}

/* rows [first, end): x̂ · gain, + bias when the norm has one (an RMS norm has none). */
void forward_normed(const trace *t, stage_id stage, int head, double *out,
                    const trace_span *span, const kernels_config *config)
{
    (void)head, (void)config;
    int first, end;
    size_t d = (size_t)t->d_model;
    trace_span_rows(t, stage, span, &first, &end);
    const double *gain = trace_param(t, trace_stage_param_input(stage, 0)),
                 *bias = trace_param(t, trace_stage_param_input(stage, 1));
    for (int i = first; i < end; i++) {
        const double *x = norm_from(t, stage, i);
        norm_row r = row_stats(t, x);
        for (size_t c = 0; c < d; c++) {
            double y = normalised(t, &r, x[c]) * gain[c];
            out[(size_t)i * d + c] = bias ? y + bias[c] : y;
        }
    }
}

/* ∂loss/∂x[col] of one row, from g = d_normed · gain:
 *   layer: (g[col] − mean(g) − x̂[col] · mean(g · x̂)) / root
 *   RMS:   (g[col] − x̂[col] · mean(g · x̂)) / root
 * (the mean's and the spread's own dependence on x is what the two means carry). */
typedef struct {
    double mean_g, mean_gx;
} norm_back;

static norm_back row_back(const trace *t, const norm_row *r, const double *x, const double *dy,
                          const double *gain)
{
    norm_back b = { 0.0, 0.0 };
    int d = t->d_model;
    for (int c = 0; c < d; c++) {
        double g = dy[c] * gain[c];
        b.mean_g += g;
        b.mean_gx = fma(g, normalised(t, r, x[c]), b.mean_gx);
    }
    b.mean_g /= d;
    b.mean_gx /= d;
    return b;
}

static double input_gradient(const trace *t, const norm_row *r, const norm_back *b, double x,
                             double dy, double gain)
{
    double g = dy * gain, xhat = normalised(t, r, x);
    double centred = is_layer(t) ? g - b->mean_g : g;
    return (centred - xhat * b->mean_gx) / r->root;
}

/* normed = x̂ · gain + bias: d_x as above, d_gain[c] = Σ_i d_normed[i,c] · x̂[i,c],
 * d_bias[c] = Σ_i d_normed[i,c]. */
void backward_normed(const trace *t, stage_id stage, int input, int head, double *out,
                     const kernels_config *config)
{
    (void)head, (void)config;
    const stage_input *in = &stage_get(stage)->inputs[input];
    const double *dy_all = trace_gradient_of(t, stage, 1),
                 *gain = trace_param(t, trace_stage_param_input(stage, 0));
    size_t d = (size_t)t->d_model;
    for (int i = 0; i < t->n; i++) {
        const double *x = norm_from(t, stage, i), *dy = dy_all + (size_t)i * d;
        if (in->kind == READ_PARAM && in->id == PARAM_NORM_BIAS) {
            for (size_t c = 0; c < d; c++)
                out[c] += dy[c];
            continue;
        }
        norm_row r = row_stats(t, x);
        if (in->kind == READ_NODE) {
            norm_back b = row_back(t, &r, x, dy, gain);
            for (size_t c = 0; c < d; c++)
                out[(size_t)i * d + c] += input_gradient(t, &r, &b, x[c], dy[c], gain[c]);
        } else {
            for (size_t c = 0; c < d; c++)
                out[c] += dy[c] * normalised(t, &r, x[c]);
        }
    }
}

/* A row's statistics: the mean's d additions and a division (layer norm only), the spread's
 * d subtractions (layer norm), d fused multiply-adds and a division, eps's addition (the square
 * root is not counted: no column of the counts is one). */
static void count_row_stats(const trace *t, cost_counts *counts)
{
    tally d = (tally)t->d_model, layer = is_layer(t);
    counts->additions += layer * (d + d) + d + 1;
    counts->multiplications += d;
    counts->divisions += layer + 1;
}

/* Per row its statistics; per cell what the backward to that input computes. */
void count_backward_normed(const trace *t, stage_id stage, int input, int head,
                           cost_counts *counts)
{
    (void)head;
    const stage_input *in = &stage_get(stage)->inputs[input];
    tally n = (tally)t->n, d = (tally)t->d_model, layer = is_layer(t);
    if (in->kind == READ_PARAM && in->id == PARAM_NORM_BIAS) {   /* the column sums alone */
        counts->additions += n * d;
        return;
    }
    for (tally i = 0; i < n; i++)
        count_row_stats(t, counts);
    if (in->kind == READ_NODE) {
        /* row_back: per cell g, Σg, x̂ (a subtraction for layer norm, a division), Σ g·x̂ (a
         * fused multiply-add); two divisions a row. input_gradient: g again, x̂ again, the
         * centring (layer norm), x̂ · mean, a subtraction, the division; the addition into out */
        counts->multiplications += n * d * 4;
        counts->additions += n * d * (4 + 3 * layer);
        counts->divisions += n * d * 3 + n * 2;
    } else {   /* the gain: x̂ (centring, division), times d_normed, added */
        counts->multiplications += n * d;
        counts->additions += n * d * (1 + layer);
        counts->divisions += n * d;
    }
}

/* residual = input + output, rows [first, end). */
void forward_residual(const trace *t, stage_id stage, int head, double *out,
                      const trace_span *span, const kernels_config *config)
{
    (void)head, (void)config;
    int first, end;
    trace_span_rows(t, stage, span, &first, &end);
    const double *a = trace_block(t, trace_stage_node_input(t, stage, 0), 1),
                 *b = trace_block(t, trace_stage_node_input(t, stage, 1), 1);
    size_t d = (size_t)t->d_model;
    for (size_t i = (size_t)first * d; i < (size_t)end * d; i++)
        out[i] = a[i] + b[i];
}

/* A sum passes its gradient to both of its terms unchanged. */
void backward_residual(const trace *t, stage_id stage, int input, int head, double *out,
                       const kernels_config *config)
{
    (void)input, (void)head, (void)config;
    const double *d_residual = trace_gradient_of(t, stage, 1);
    size_t cells = (size_t)t->n * (size_t)t->d_model;
    for (size_t i = 0; i < cells; i++)
        out[i] += d_residual[i];
}

void count_backward_residual(const trace *t, stage_id stage, int input, int head,
                             cost_counts *counts)
{
    (void)stage, (void)input, (void)head;
    counts->additions += (tally)t->n * (tally)t->d_model;
}

/* ---- explained, counted and written as a formula ---- */

static double row_value(const sum_terms *s, int i)
{
    return s->p.left[i];
}

static void put_row_value(explain_text *out, const sum_terms *s, int i)
{
    explain_put_number(out, row_value(s, i));
}

/* The squared deviation of term i: its p.left is the row, shift the mean. */
static double deviation_value(const sum_terms *s, int i)
{
    double centred = s->p.left[i] - s->shift;
    return centred * centred;
}

static void put_deviation(explain_text *out, const sum_terms *s, int i)
{
    explain_put(out, "(");
    explain_put_number(out, s->p.left[i] - s->shift);
    explain_put(out, ")²");
}

/* "mean = (0.5 + 1.0 + …) / 4 = 0.625, var = ((−0.125)² + …) / 4 = 0.2: ": the row's
 * statistics with their terms. */
static void put_row_stats(explain_text *out, const trace *t, const double *x, const norm_row *r,
                          const char *from, const char *row)
{
    sum_terms s = { .count = t->d_model, .value = row_value, .put_term = put_row_value, .t = t,
                    .p = { x, NULL, 1, 0 } };
    if (is_layer(t)) {
        explain_put(out, "mean = Σ_c %s[%s,c] / %d = (", from, row, t->d_model);
        explain_put_sum(out, &s);
        explain_put(out, ") / %d = ", t->d_model);
        explain_put_number(out, r->mean);
        explain_put(out, out->full ? ",\n" : ", ");
    }
    s.value = deviation_value, s.put_term = put_deviation, s.shift = r->mean;
    explain_put(out, "%s = Σ_c %s%s[%s,c]%s² / %d = (", is_layer(t) ? "var" : "ms",
                is_layer(t) ? "(" : "", from, row, is_layer(t) ? " − mean)" : "", t->d_model);
    explain_put_sum(out, &s);
    explain_put(out, ") / %d = ", t->d_model);
    explain_put_number(out, r->spread);
}

/* normed[cat,1] = (input[cat,1] − mean) / √(var + eps) × gain[1] + bias[1], with
 * mean = …, var = …: (0.5 − 0.625) / √(0.2 + 1.0e-05) × 1.0 + 0.0 */
bool explain_normed(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id from = trace_stage_node_input(t, cell->stage, 0);
    param_id gain_id = trace_stage_param_input(cell->stage, 0),
             bias_id = trace_stage_param_input(cell->stage, 1);
    const double *x = norm_from(t, cell->stage, cell->row), *gain = trace_param(t, gain_id),
                 *bias = trace_param(t, bias_id);
    const char *name = stage_get(from)->name, *row = explain_row_label(out, t, cell);
    norm_row r = row_stats(t, x);
    int c = cell->col;
    explain_put(out, is_layer(t) ? " = (%s[%s,%d] − mean) / √(var + eps) × %s[%d]"
                                 : " = %s[%s,%d] / √(ms + eps) × %s[%d]",
                name, row, c, param_get(gain_id)->name, c);
    if (bias)
        explain_put(out, " + %s[%d]", param_get(bias_id)->name, c);
    /* every term written out (the sum pane, a line at each " + " or newline): a line each */
    explain_put(out, out->full ? ", with\n" : ", with ");
    put_row_stats(out, t, x, &r, name, row);
    explain_put(out, " and eps = ");
    explain_put_number_at(out, t->in->norm_eps, out->precision);
    explain_put(out, out->full ? ":\n" : ": ");
    explain_put(out, is_layer(t) ? "(" : "");
    explain_put_number(out, x[c]);
    if (is_layer(t)) {
        explain_put(out, " − ");
        explain_put_number(out, r.mean);
        explain_put(out, ")");
    }
    explain_put(out, " / √(");
    explain_put_number(out, r.spread);
    explain_put(out, " + ");
    explain_put_number(out, t->in->norm_eps);
    explain_put(out, ") × ");
    explain_put_number(out, gain[c]);
    if (bias) {
        explain_put(out, " + ");
        explain_put_number(out, bias[c]);
    }
    return true;
}

/* "normed = (input − mean) / √(var + eps) · gain + bias (layer norm over d_model = 4)". */
int formula_normed(const trace *t, stage_id stage, char *buffer, size_t size)
{
    const char *from = stage_get(trace_stage_node_input(t, stage, 0))->name;
    bool bias = trace_param(t, trace_stage_param_input(stage, 1)) != NULL;
    if (is_layer(t))
        return snprintf(buffer, size,
                        "%s = (%s − mean) / √(var + eps) · gain%s, each row over its %d numbers "
                        "(layer norm)", stage_get(stage)->name, from, bias ? " + bias" : "",
                        t->d_model);
    return snprintf(buffer, size, "%s = %s / √(mean(%s²) + eps) · gain, each row over its %d "
                    "numbers (RMS norm)", stage_get(stage)->name, from, from, t->d_model);
}

/* Per row its statistics; per cell the centring (layer norm), the division, the gain's
 * multiplication and the bias's addition (when it has one). */
void cost_normed(const trace *t, stage_id stage, cost_counts *counts)
{
    tally n = (tally)t->n, d = (tally)t->d_model;
    bool bias = trace_param(t, trace_stage_param_input(stage, 1)) != NULL;
    for (tally i = 0; i < n; i++)
        count_row_stats(t, counts);
    counts->additions += n * d * ((tally)is_layer(t) + (tally)bias);
    counts->divisions += n * d;
    counts->multiplications += n * d;
}

/* residual[cat,1] = input[cat,1] + output[cat,1] = 0.5 + 0.25: the token's own vector E plus
 * what attention adds to it, ΔE. */
bool explain_residual(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id a = trace_stage_node_input(t, cell->stage, 0), b = trace_stage_node_input(t, cell->stage, 1);
    const char *row = explain_row_label(out, t, cell);
    size_t at = (size_t)cell->row * (size_t)t->d_model + (size_t)cell->col;
    explain_put(out, " = %s[%s,%d] + %s[%s,%d] = ", stage_get(a)->name, row, cell->col,
                stage_get(b)->name, row, cell->col);
    explain_put_number(out, trace_block(t, a, 1)[at]);
    explain_put(out, " + ");
    explain_put_number(out, trace_block(t, b, 1)[at]);
    return true;
}

int formula_residual(const trace *t, stage_id stage, char *buffer, size_t size)
{
    return snprintf(buffer, size, "%s = %s + %s (E′ = E + ΔE: each token's vector plus what "
                    "attention adds)", stage_get(stage)->name,
                    stage_get(trace_stage_node_input(t, stage, 0))->name,
                    stage_get(trace_stage_node_input(t, stage, 1))->name);
}

void cost_residual(const trace *t, stage_id stage, cost_counts *counts)
{
    (void)stage;
    counts->additions += (tally)t->n * (tally)t->d_model;
}

/* ---- the gradients through the family ---- */

/* One row of a normed stage as its backward reads it: the row, its gradient, the gain, the
 * row's statistics and the two means of the backward. */
typedef struct {
    const double *x, *dy, *gain;
    norm_row r;
    norm_back b;
} norm_cell;

static norm_cell cell_back(const trace *t, stage_id reader, int row)
{
    norm_cell n = { norm_from(t, reader, row),
                    trace_gradient_of(t, reader, 1) + (size_t)row * (size_t)t->d_model,
                    trace_param(t, trace_stage_param_input(reader, 0)), { 0, 0, 0 },
                    { 0, 0 } };
    n.r = row_stats(t, n.x);
    n.b = row_back(t, &n.r, n.x, n.dy, n.gain);
    return n;
}

double ops_through_norm(const trace *t, stage_id reader, int row, int col)
{
    if (stage_functions_get(reader)->backward == backward_residual)
        return trace_gradient_of(t, reader, 1)[(size_t)row * (size_t)t->d_model + (size_t)col];
    norm_cell n = cell_back(t, reader, row);
    return input_gradient(t, &n.r, &n.b, n.x[col], n.dy[col], n.gain[col]);
}

void ops_put_through_norm(explain_text *out, const trace *t, stage_id reader,
                          const trace_cell *cell)
{
    const char *row = explain_row_label(out, t, cell);
    const char *d = stage_get(stage_gradient(READ_NODE, (int)reader))->name;
    if (stage_functions_get(reader)->backward == backward_residual)
        explain_put(out, "%s[%s,%d]", d, row, cell->col);
    else
        explain_put(out, "(%s[%s,·] back through %s)", d, row, stage_get(reader)->name);
}

/* Through normed: (g − mean(g) − x̂ · mean(g·x̂)) / √(var + eps) with g = d_normed × gain, and
 * its numbers. */
static void explain_back_through_normed(explain_text *out, const trace *t, stage_id reader,
                                        const trace_cell *cell)
{
    norm_cell n = cell_back(t, reader, cell->row);
    int c = cell->col;
    const char *dname = stage_get(stage_gradient(READ_NODE, (int)reader))->name,
               *row = explain_row_label(out, t, cell);
    explain_put(out, is_layer(t) ? " = (g[%d] − mean(g) − x̂[%d] · mean(g·x̂)) / √(var + eps)"
                                 : " = (g[%d] − x̂[%d] · mean(g·x̂)) / √(ms + eps)", c, c);
    explain_put(out, ", g = %s[%s,·] × %s, x̂ the row %s normalised: (", dname, row,
                param_get(trace_stage_param_input(reader, 0))->name,
                stage_get(trace_stage_node_input(t, reader, 0))->name);
    explain_put_number(out, n.dy[c] * n.gain[c]);
    if (is_layer(t)) {
        explain_put(out, " − ");
        explain_put_number(out, n.b.mean_g);
    }
    explain_put(out, " − ");
    explain_put_number(out, normalised(t, &n.r, n.x[c]));
    explain_put(out, " × ");
    explain_put_number(out, n.b.mean_gx);
    explain_put(out, ") / ");
    explain_put_number(out, n.r.root);
}

bool ops_explain_through_norm(explain_text *out, const trace *t, stage_id reader,
                              const trace_cell *cell)
{
    if (stage_functions_get(reader)->backward == backward_residual) {
        explain_put(out, " = ");
        ops_put_through_norm(out, t, reader, cell);
        explain_put(out, " (a sum passes its gradient to each term)");
        return true;
    }
    explain_back_through_normed(out, t, reader, cell);
    return true;
}

/* Term i of d_gain[c]: row i's d_normed[i,c] and x̂[i,c] (s->first is the normed stage). */
static void gain_factors(const sum_terms *s, int i, double *dy, double *xhat)
{
    norm_cell n = cell_back(s->t, (stage_id)s->first, i);
    *dy = n.dy[s->cell->col];
    *xhat = normalised(s->t, &n.r, n.x[s->cell->col]);
}

static double gain_term(const sum_terms *s, int i)
{
    double dy, xhat;
    gain_factors(s, i, &dy, &xhat);
    return dy * xhat;
}

static void put_gain_term(explain_text *out, const sum_terms *s, int i)
{
    double dy, xhat;
    gain_factors(s, i, &dy, &xhat);
    explain_put(out, "(");
    explain_put_number(out, dy);
    explain_put(out, " × ");
    explain_put_number(out, xhat);
    explain_put(out, ")");
}

/* d_gain[c] = Σ_i d_normed[i,c] · x̂[i,c]: each row's gradient times its normalised number. */
bool explain_d_gain(explain_text *out, const trace *t, const trace_cell *cell)
{
    stage_id reader = trace_stage_node_input(t, cell->stage, 1);   /* the normed t has */
    sum_terms s = { .count = t->n, .value = gain_term, .put_term = put_gain_term, .t = t,
                    .cell = cell, .first = (int)reader };
    explain_put(out, " = Σ_i %s[i,%d] · x̂[i,%d] = ", stage_get(stage_gradient(READ_NODE,
                                                                          (int)reader))->name,
                cell->col, cell->col);
    explain_put_sum(out, &s);
    return true;
}
