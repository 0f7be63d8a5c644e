/* The attention core against numbers checked independently: the hand-worked cat/sat example,
 * a direct textbook computation written separately here, and properties of attention. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "stage_functions.h"
#include "number.h"
#include "walk.h"
#include "stats.h"
#include "decode.h"

/* --- the hand-worked example of the reference tutorial --- */

static void test_cat_sat_matches_hand_worked_example(void **state)
{
    (void)state;
    attention_input in = fixture_cat_sat();
    trace t;
    fixture_compute(&in, &t);
    double scores[] = { 1.25, 0.5, 0.5, 1.0 };
    support_assert_close("scores", scores, trace_block(&t, STAGE_SCORES, 1), 4, 1e-15);
    double cat_weights[] = { 0.6296, 0.3704 }, cat_output[] = { 0.6296, 0.6852 };
    const double *weights = trace_block(&t, STAGE_WEIGHTS, 1);
    support_assert_close("weights of cat", cat_weights, weights, 2, 5e-5);
    support_assert_close("output of cat", cat_output, trace_block(&t, STAGE_OUTPUT, 1), 2, 5e-5);
    /* exactly: softmax of two numbers is a logistic of their difference, (1.25-0.5)/√2 */
    double exact = 1.0 / (1.0 + exp(-0.75 / sqrt(2.0)));
    double cat_exact[] = { exact, 1.0 - exact };
    support_assert_close("weights of cat, exact", cat_exact, weights, 2, 1e-15);
    trace_free(&t);
}

/* --- a direct computation, written independently of the core's loops --- */

typedef struct {
    int n, m, d, heads;
    double *x, *source, *wq, *wk, *wv, *wo;
    unsigned char *mask;
    const char **tokens, **source_tokens;
    attention_input in;
} fixture;

static fixture make_fixture(int n, int m, int d, int heads, bool cross, unsigned seed)
{
    fixture f = { n, m, d, heads, 0, 0, 0, 0, 0, 0, 0, 0, 0, { 0 } };
    size_t dd = (size_t)d * (size_t)d;
    f.x = malloc(sizeof(double) * (size_t)(n * d));
    f.wq = malloc(sizeof(double) * dd);
    f.wk = malloc(sizeof(double) * dd);
    f.wv = malloc(sizeof(double) * dd);
    f.wo = malloc(sizeof(double) * dd);
    support_fill(f.x, (size_t)(n * d), seed);
    support_fill(f.wq, dd, seed + 1);
    support_fill(f.wk, dd, seed + 2);
    support_fill(f.wv, dd, seed + 3);
    support_fill(f.wo, dd, seed + 4);
    f.tokens = (const char **)fixture_labels;
    f.in = (attention_input){ .n_tokens = n, .tokens = f.tokens, .n_source = n, .d_model = d,
                              .heads = heads, .embeddings = f.x, .W_Q = f.wq, .W_K = f.wk,
                              .W_V = f.wv, .W_O = f.wo, .mask = MASK_NONE, .scale = true };
    if (cross) {
        f.source = malloc(sizeof(double) * (size_t)(m * d));
        support_fill(f.source, (size_t)(m * d), seed + 5);
        f.source_tokens = (const char **)fixture_labels + 1;
        f.in.n_source = m;
        f.in.source = f.source_tokens;
        f.in.source_embeddings = f.source;
    }
    return f;
}

static void free_fixture(fixture *f)
{
    free(f->x); free(f->source); free(f->wq); free(f->wk); free(f->wv); free(f->wo);
    free(f->mask);
}

/* Textbook attention straight from the formulas, one output element at a time. Writes
 * weights (heads, n, m) and output (n, d). Hidden cells are left out of the softmax sum. */
static void direct_attention(const fixture *f, double *weights, double *output)
{
    const attention_input *in = &f->in;
    int n = in->n_tokens, m = in->source ? in->n_source : n, d = in->d_model;
    int d_k = d / in->heads;
    const double *keys_in = in->source ? in->source_embeddings : in->embeddings;
    double *concat = calloc((size_t)(n * d), sizeof(double));
    for (int h = 0; h < in->heads; h++)
        for (int i = 0; i < n; i++) {
            double *row = weights + ((size_t)h * (size_t)n + (size_t)i) * (size_t)m, sum = 0;
            for (int j = 0; j < m; j++) {
                bool hidden = (in->mask == MASK_CAUSAL && j > i)
                    || (in->mask == MASK_EXPLICIT && !in->mask_cells[i * m + j]);
                double score = 0;
                for (int c = h * d_k; c < (h + 1) * d_k; c++) {
                    double q = 0, k = 0;
                    for (int e = 0; e < d; e++) {
                        q += in->embeddings[i * d + e] * in->W_Q[e * d + c];
                        k += keys_in[j * d + e] * in->W_K[e * d + c];
                    }
                    score += q * k;
                }
                row[j] = hidden ? 0 : exp(in->scale ? score / sqrt(d_k) : score);
                sum += row[j];
            }
            for (int j = 0; j < m; j++)
                row[j] /= sum;
            for (int c = h * d_k; c < (h + 1) * d_k; c++)
                for (int j = 0; j < m; j++) {
                    double v = 0;
                    for (int e = 0; e < d; e++)
                        v += keys_in[j * d + e] * in->W_V[e * d + c];
                    concat[i * d + c] += row[j] * v;
                }
        }
    for (int i = 0; i < n; i++)
        for (int c = 0; c < d; c++) {
            output[i * d + c] = 0;
            for (int e = 0; e < d; e++)
                output[i * d + c] += concat[i * d + e] * in->W_O[e * d + c];
        }
    free(concat);
}

static void assert_matches_direct(fixture *f)
{
    trace t;
    fixture_compute(&f->in, &t);
    size_t square = (size_t)(f->heads * f->n * t.m), out = (size_t)(f->n * f->d);
    double *weights = malloc(sizeof(double) * square), *output = malloc(sizeof(double) * out);
    direct_attention(f, weights, output);
    support_assert_close("weights vs direct", weights, trace_block(&t, STAGE_WEIGHTS, 1), square,
                         1e-12);
    support_assert_close("output vs direct", output, trace_block(&t, STAGE_OUTPUT, 1), out, 1e-12);
    free(weights);
    free(output);
    trace_free(&t);
}

static void test_multi_head_matches_direct_computation(void **state)
{
    (void)state;
    fixture f = make_fixture(5, 5, 6, 3, false, 7);
    assert_matches_direct(&f);
    free_fixture(&f);
}

static void test_concat_places_each_head_in_its_columns(void **state)
{
    (void)state;
    fixture f = make_fixture(4, 4, 8, 4, false, 11);
    trace t;
    fixture_compute(&f.in, &t);
    for (int h = 1; h <= 4; h++)
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 2; c++)
                assert_true(trace_value(&t, STAGE_CONCAT, 1, i, (h - 1) * 2 + c)
                            == trace_value(&t, STAGE_CONTEXT, h, i, c));
    trace_free(&t);
    free_fixture(&f);
}

static void test_causal_mask_hides_the_future(void **state)
{
    (void)state;
    fixture f = make_fixture(4, 4, 4, 2, false, 3);
    f.in.mask = MASK_CAUSAL;
    assert_matches_direct(&f);
    trace t;
    fixture_compute(&f.in, &t);
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                assert_true(trace_value(&t, STAGE_WEIGHTS, h, i, j) == 0.0);
                assert_true(trace_value(&t, STAGE_MASKED, h, i, j) == -INFINITY);
            }
    assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 0, 0) == 1.0);
    trace_free(&t);
    free_fixture(&f);
}

static void test_explicit_mask(void **state)
{
    (void)state;
    fixture f = make_fixture(3, 3, 2, 1, false, 5);
    static const unsigned char cells[] = { 1, 0, 1, 0, 1, 0, 1, 1, 1 };
    f.in.mask = MASK_EXPLICIT;
    f.in.mask_cells = cells;
    assert_matches_direct(&f);
    trace t;
    fixture_compute(&f.in, &t);
    assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 0, 1) == 0.0);
    assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 1, 1) == 1.0);
    assert_true(trace_value(&t, STAGE_MASKED, 1, 1, 0) == -INFINITY);
    assert_true(trace_value(&t, STAGE_MASKED, 1, 2, 0) == trace_value(&t, STAGE_SCALED, 1, 2, 0));
    trace_free(&t);
    free_fixture(&f);
}

static void test_mask_row_hiding_every_key_is_refused(void **state)
{
    (void)state;
    fixture f = make_fixture(2, 2, 2, 1, false, 5);
    static const unsigned char cells[] = { 1, 1, 0, 0 };
    f.in.mask = MASK_EXPLICIT;
    f.in.mask_cells = cells;
    trace t;
    trace_failure failure;
    assert_int_equal(trace_compute(&f.in, NULL, &t, &failure), TRACE_ERROR_MASK_ROW);
    assert_int_equal(failure.row, 1);
    free_fixture(&f);
}

static void test_positional_encoding_values(void **state)
{
    (void)state;
    static const double zeros[15] = { 0 };
    static const double identity5[25] = { 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0,
                                           0, 0, 0, 1, 0, 0, 0, 0, 0, 1 };
    attention_input in = { .n_tokens = 3, .tokens = fixture_labels, .d_model = 5,
                           .heads = 1, .embeddings = zeros, .W_Q = identity5,
                           .W_K = identity5, .W_V = identity5, .W_O = identity5,
                           .positional = true, .scale = true };
    trace t;
    fixture_compute(&in, &t);
    /* pos 0 is sin 0, cos 0, …; d_model 5 is odd, so column 4 is a sine */
    double expected[15] = { 0, 1, 0, 1, 0,
                            sin(1), cos(1), sin(1 / pow(1e4, 0.4)), cos(1 / pow(1e4, 0.4)),
                            sin(1 / pow(1e4, 0.8)),
                            sin(2), cos(2), sin(2 / pow(1e4, 0.4)), cos(2 / pow(1e4, 0.4)),
                            sin(2 / pow(1e4, 0.8)) };
    support_assert_close("PE", expected, trace_block(&t, STAGE_INPUT, 1), 15, 1e-15);
    assert_true(fabs(trace_block(&t, STAGE_INPUT, 1)[5] - 0.8414709848078965) < 1e-15);
    trace_free(&t);
}

/* A shortened sum names and counts only the terms it has: under the causal mask row g (the 7th
 * of 8 tokens) of the softmax sums 7 visible keys, so 4 shown leave "3 more terms" and h, the
 * hidden key, is neither shown nor counted; row h sums all 8 ("4 more terms"). A count taken
 * over the whole row, hidden keys and all, would say 4 for g. */
static void test_elided_terms_leave_out_hidden_keys(void **state)
{
    (void)state;
    double embeddings[8 * 2], identity[4] = { 1, 0, 0, 1 };
    for (int i = 0; i < 8; i++) {
        embeddings[2 * i] = 0.1 * i;
        embeddings[2 * i + 1] = 0.05 * (7 - i);
    }
    attention_input in = { .n_tokens = 8, .tokens = fixture_labels, .d_model = 2, .heads = 1,
                           .embeddings = embeddings, .W_Q = identity, .W_K = identity,
                           .W_V = identity, .W_O = identity, .mask = MASK_CAUSAL,
                           .scale = true };
    trace t;
    fixture_compute(&in, &t);
    static const struct { int row; const char *more; } rows[] = {
        { 6, "+ 3 more terms (" }, { 7, "+ 4 more terms (" },
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        trace_cell cell = { STAGE_WEIGHTS, 1, rows[r].row, rows[r].row };
        char text[1024];
        trace_cell_explain(&t, &cell, 4, text, sizeof text);
        const char *more = strstr(text, rows[r].more);
        if (!more) {
            print_error("weights[%s,%s]: no \"%s\" in: %s\n", fixture_labels[rows[r].row],
                        fixture_labels[rows[r].row], rows[r].more, text);
            fail();
        }
        if (rows[r].row == 6 && (strstr(text, "[h]") || strstr(more, "h)") || strstr(more, " h,"))) {
            print_error("the hidden key h is in: %s\n", text);
            fail();
        }
    }
    trace_free(&t);
}

static void test_scale_false_leaves_scores_unscaled(void **state)
{
    (void)state;
    fixture f = make_fixture(3, 3, 4, 1, false, 9);
    f.in.scale = false;
    assert_matches_direct(&f);
    trace t;
    fixture_compute(&f.in, &t);
    for (int i = 0; i < 9; i++)
        assert_true(trace_value(&t, STAGE_SCALED, 1, i / 3, i % 3)
                    == trace_block(&t, STAGE_SCORES, 1)[i]);
    trace_free(&t);
    free_fixture(&f);
}

static void test_cross_attention(void **state)
{
    (void)state;
    fixture f = make_fixture(3, 2, 4, 2, true, 13);
    assert_matches_direct(&f);
    trace t;
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_rows(&t, STAGE_K), 2);
    assert_int_equal(trace_cols(&t, STAGE_WEIGHTS), 2);
    assert_int_equal(trace_rows(&t, STAGE_WEIGHTS), 3);
    assert_true(trace_has_stage(&t, STAGE_SOURCE_INPUT));
    char buffer[8];
    assert_string_equal(trace_axis_label(&t, AXIS_SOURCE, 0, buffer, sizeof buffer), "b");
    trace_free(&t);
    free_fixture(&f);
}

/* --- properties --- */

static void test_every_weights_row_sums_to_one(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed < 20; seed++) {
        fixture f = make_fixture(8, 8, 8, 1 << (seed % 4), false, seed);
        f.in.mask = seed % 2 ? MASK_CAUSAL : MASK_NONE;
        trace t;
        fixture_compute(&f.in, &t);
        for (int h = 1; h <= t.heads; h++)
            for (int i = 0; i < 8; i++) {
                double sum = 0;
                for (int j = 0; j < 8; j++)
                    sum += trace_value(&t, STAGE_WEIGHTS, h, i, j);
                if (fabs(sum - 1.0) > 1e-12) {
                    print_error("seed %u head %d row %d sums to %.17g\n", seed, h, i, sum);
                    fail();
                }
            }
        trace_free(&t);
        free_fixture(&f);
    }
}

static void test_permuting_tokens_permutes_outputs(void **state)
{
    (void)state;
    enum { N = 6, D = 4 };
    static const int order[N] = { 3, 0, 5, 1, 4, 2 };
    fixture f = make_fixture(N, N, D, 2, false, 21);
    double permuted[N * D];
    for (int i = 0; i < N; i++)
        memcpy(permuted + i * D, f.x + order[i] * D, sizeof(double) * D);
    attention_input shuffled = f.in;
    shuffled.embeddings = permuted;
    trace a, b;
    fixture_compute(&f.in, &a);
    fixture_compute(&shuffled, &b);
    for (int i = 0; i < N; i++) {
        support_assert_close("permuted output row", trace_block(&a, STAGE_OUTPUT, 1) + order[i] * D,
                             trace_block(&b, STAGE_OUTPUT, 1) + i * D,
                             D, 1e-12);
        for (int h = 1; h <= 2; h++)
            for (int j = 0; j < N; j++)
                assert_true(fabs(trace_value(&a, STAGE_WEIGHTS, h, order[i], order[j])
                                 - trace_value(&b, STAGE_WEIGHTS, h, i, j)) <= 1e-12);
    }
    trace_free(&a);
    trace_free(&b);
    free_fixture(&f);
}

/* Scores of 1131 and more, unmasked, where exp alone overflows: exact on the fast and on the
 * portable softmax (ATTNSTEP_PORTABLE), one thread and two. */
static void test_softmax_is_exact_for_large_scores(void **state)
{
    (void)state;
    static const double embeddings[] = { 40, 0, 0, 40 };  /* scores 1600 / √2 apart */
    static const trace_options ways[] = { { 1, false }, { 2, false }, { 1, true }, { 2, true } };
    attention_input in = fixture_cat_sat();
    in.embeddings = embeddings;
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        trace t;
        trace_failure failure;
        assert_int_equal(trace_compute(&in, &ways[w], &t, &failure), TRACE_OK);
        assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 0, 0) == 1.0);
        assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 0, 1) == 0.0);
        assert_true(trace_value(&t, STAGE_WEIGHTS, 1, 1, 1) == 1.0);
        assert_true(isfinite(trace_block(&t, STAGE_OUTPUT, 1)[0]));
        trace_free(&t);
    }
}

/* cat_sat with other embeddings and mask must fail with an overflow in scores (head 1) at
 * (row, col). */
static void assert_scores_overflow(const double embeddings[4], mask_kind mask, int row, int col)
{
    attention_input in = fixture_cat_sat();
    in.embeddings = embeddings;
    in.mask = mask;
    trace t;
    trace_failure failure;
    assert_int_equal(trace_compute(&in, NULL, &t, &failure), TRACE_ERROR_OVERFLOW);
    assert_int_equal(failure.stage, STAGE_SCORES);
    assert_int_equal(failure.head, 1);
    assert_int_equal(failure.row, row);
    assert_int_equal(failure.col, col);
}

static void test_overflow_is_reported_with_its_stage_and_cell(void **state)
{
    (void)state;
    static const double embeddings[] = { 1e200, 1, 0, 1 };
    assert_scores_overflow(embeddings, MASK_NONE, 0, 0);
}

/* A −∞ that overflow writes into a cell the mask hides is still an overflow (only masked's own
 * −∞ are by design): reported where it happened, scores[0,1]. */
static void test_overflow_in_a_hidden_cell_is_reported(void **state)
{
    (void)state;
    static const double embeddings[] = { 1e150, 0, -1e160, 0 };  /* q0·k1 = −1e310 */
    assert_scores_overflow(embeddings, MASK_CAUSAL, 0, 1);
}

static void test_too_large_a_trace_is_refused_with_its_size(void **state)
{
    (void)state;
    attention_input in = fixture_cat_sat();
    in.n_tokens = 2048;
    in.d_model = 2048;
    in.heads = 64;
    trace t;
    trace_failure failure;
    assert_int_equal(trace_compute(&in, NULL, &t, &failure), TRACE_ERROR_TOO_LARGE);
    /* scores and weights alone: 2 × 64 × 2048² doubles */
    assert_true(failure.bytes > (size_t)2 * 64 * 2048 * 2048 * 8);
    assert_true(trace_bytes_needed(&in) == failure.bytes);
}

/* --- explanations, cell names, number formatting, the step list --- */

static void test_explanations_of_cat_sat(void **state)
{
    (void)state;
    attention_input in = fixture_cat_sat();
    trace t;
    fixture_compute(&in, &t);
    fixture_explains(&t, "scores[cat,sat]", 1,
                     "scores[cat,sat] = q_cat · k_sat = (1.0 × 0.0) + (0.5 × 1.0) = 0.5");
    fixture_explains(&t, "scaled[cat,cat]", 1,
                     "scaled[cat,cat] = scores[cat,cat] / √d_k = 1.25 / √2 = 0.8839");
    fixture_explains(&t, "weights[cat,cat]", 1,
                     "weights[cat,cat] = exp(0.8839 − 0.8839) / (exp(0.8839 − 0.8839) [cat] + "
                     "exp(0.3536 − 0.8839) [sat]) = 0.6296");
    fixture_explains(&t, "context[0,1]", 1,
                     "context[cat,1] = Σ_j weights[cat,j] × v_j[1] = (0.6296 × 0.5) [cat] + "
                     "(0.3704 × 1.0) [sat] = 0.6852");
    fixture_explains(&t, "Q[sat,1]", 1, "Q[sat,1] = input_sat · W_Q[:,1] = (0.0 × 0.0) + "
                     "(1.0 × 1.0) = 1.0");
    fixture_explains(&t, "input[cat,1]", 1, "input[cat,1] = embedding(cat)[1] = 0.5");
    fixture_explains(&t, "masked[sat,cat]", 1,
                     "masked[sat,cat] = scaled[sat,cat] (no mask) = 0.3536");
    fixture_explains(&t, "concat[cat,0]", 1, "concat[cat,0] = context[cat,0] of head 1 = 0.6296");
    trace_free(&t);
}

static void test_explanations_of_hidden_cells_and_long_sums(void **state)
{
    (void)state;
    fixture f = make_fixture(8, 8, 8, 1, false, 4);
    f.in.mask = MASK_CAUSAL;
    trace t;
    fixture_compute(&f.in, &t);
    fixture_explains(&t, "masked[a,b]", 1, "masked[a,b] = −∞ (hidden by the causal mask)");
    fixture_explains(&t, "weights[a,b]", 1,
                     "weights[a,b] = exp(−∞) / (…) = 0 (hidden by the mask)");
    trace_cell cell = { STAGE_SCORES, 1, 7, 7 };
    char text[2048];
    trace_cell_explain(&t, &cell, 2, text, sizeof text);
    assert_non_null(strstr(text, " + … 4 more terms, each |term| ≤ "));
    cell.stage = STAGE_WEIGHTS;   /* terms along keys: named, and so are those left out */
    trace_cell_explain(&t, &cell, 2, text, sizeof text);
    assert_non_null(strstr(text, " + 4 more terms ("));
    assert_non_null(strstr(text, "), each |term| ≤ "));
    /* a short buffer is cut, and the length wanted is still reported */
    char tiny[8];
    int wanted = trace_cell_explain(&t, &cell, 2, tiny, sizeof tiny);
    assert_int_equal(wanted, (int)strlen(text));
    assert_int_equal(strlen(tiny), 7);
    trace_free(&t);
    free_fixture(&f);
}

static void test_cell_names(void **state)
{
    (void)state;
    fixture f = make_fixture(3, 3, 4, 2, false, 4);
    trace t;
    fixture_compute(&f.in, &t);
    trace_cell cell;
    char error[256];
    assert_true(trace_cell_parse(&t, "weights[c,1]", 2, &cell, error, sizeof error));
    assert_int_equal(cell.stage, STAGE_WEIGHTS);
    assert_int_equal(cell.head, 2);
    assert_int_equal(cell.row, 2);
    assert_int_equal(cell.col, 1);
    assert_true(trace_cell_parse(&t, "output[b,3]", 2, &cell, error, sizeof error));
    assert_int_equal(cell.head, 1);
    assert_false(trace_cell_parse(&t, "weights[a,b]", 3, &cell, error, sizeof error));
    assert_string_equal(error, "head 3 does not exist: this lesson has 2 heads");
    assert_false(trace_cell_parse(&t, "context[a,2]", 1, &cell, error, sizeof error));
    assert_false(trace_cell_parse(&t, "weight[a,b]", 1, &cell, error, sizeof error));
    assert_string_equal(error, "unknown stage 'weight'; did you mean 'weights'? (stages: input Q "
                        "K V scores scaled masked weights context concat output)");
    assert_false(trace_cell_parse(&t, "weights[a,z]", 1, &cell, error, sizeof error));
    assert_string_equal(error, "no such cell 'weights[a,z]': name the row and column by token or "
                        "by 0-based index");
    assert_false(trace_cell_parse(&t, "weights", 1, &cell, error, sizeof error));
    trace_free(&t);
    free_fixture(&f);
}

static void assert_formats(double x, int precision, const char *expected)
{
    char text[NUMBER_MAX];
    number_write(x, &(number_format){ NUMBER_SHORT, precision, 0, false }, text, sizeof text);
    assert_string_equal(text, expected);
}

static void test_explanation_numbers(void **state)
{
    (void)state;
    assert_formats(1.0, 4, "1.0");
    assert_formats(0.5, 4, "0.5");
    assert_formats(0.62963, 4, "0.6296");
    /* explanations write NUMBER_SHORT: exponent forms trimmed like decimals */
    assert_formats(-0.00001, 4, "-1.0e-05");
    assert_formats(-0.00004, 2, "-4.0e-05");
    assert_formats(-INFINITY, 4, "−∞");
    assert_formats(2.5e12, 3, "2.5e+12");
    assert_formats(0.0, 4, "0.0");
}

static void test_step_list(void **state)
{
    (void)state;
    fixture f = make_fixture(3, 2, 4, 2, true, 4);
    trace t;
    fixture_compute(&f.in, &t);
    /* source_input, input, Q, K, V, concat, output + 5 per-head stages × 2 heads */
    walk w;
    assert_true(walk_build(&w, &t, NULL, 0));
    assert_int_equal(w.count, 17);
    assert_int_equal(w.steps[0].stage, STAGE_SOURCE_INPUT);
    assert_int_equal(w.steps[6].stage, STAGE_SCORES);
    assert_int_equal(w.steps[6].head, 2);
    assert_int_equal(w.steps[16].stage, STAGE_OUTPUT);
    assert_int_equal(walk_find(&w, STAGE_WEIGHTS, 2), 12);
    assert_int_equal(walk_find(&w, STAGE_Q, 2), 2);   /* one Q for every head */
    for (int k = 0; k < w.count; k++)
        assert_int_equal(w.steps[k].narration, -1);
    walk_free(&w);
    assert_true(walk_build_pipeline(&w, &t));   /* the same, said outright */
    assert_int_equal(w.count, 17);
    assert_int_equal(walk_find(&w, STAGE_WEIGHTS, 2), 12);
    walk_free(&w);
    /* a script: one step per mark in the author's order (weights before scores, a revisit of
     * scores head 2, a mark with no head on head 1), nothing else */
    walk_mark marks[] = { { STAGE_SCORES, 2, 0, 0 }, { STAGE_SCORES, 2, 0, 0 }, { STAGE_WEIGHTS, 0, 0, 0 },
                          { STAGE_Q, 0, 0, 0 }, { STAGE_SCORES, 2, 0, 0 } };
    assert_true(walk_build(&w, &t, marks, 5));
    assert_int_equal(w.count, 5);
    for (int k = 0; k < w.count; k++)
        assert_int_equal(w.steps[k].narration, k);
    assert_int_equal(w.steps[0].stage, STAGE_SCORES);
    assert_int_equal(w.steps[0].head, 2);
    assert_int_equal(w.steps[2].stage, STAGE_WEIGHTS);
    assert_int_equal(w.steps[2].head, 1);
    assert_int_equal(w.steps[3].stage, STAGE_Q);
    assert_int_equal(w.steps[4].stage, STAGE_SCORES);
    assert_true(walk_repeats_matrix(&w, 1));    /* the same matrix twice running */
    assert_false(walk_repeats_matrix(&w, 4));   /* a revisit after others shows it again */
    assert_int_equal(walk_find(&w, STAGE_SCORES, 2), 0);
    assert_int_equal(walk_find(&w, STAGE_SCORES, 1), -1);   /* not in the script */
    assert_int_equal(walk_find(&w, STAGE_Q, 2), 3);         /* one Q for every head */
    walk_free(&w);
    /* a mark the trace cannot show (no head 3; no cross-attention source here) is left out */
    walk_mark odd[] = { { STAGE_WEIGHTS, 3, 0, 0 }, { STAGE_OUTPUT, 0, 0, 0 } };
    assert_true(walk_build(&w, &t, odd, 2));
    assert_int_equal(w.count, 1);
    assert_int_equal(w.steps[0].stage, STAGE_OUTPUT);
    assert_int_equal(w.steps[0].narration, 1);
    walk_free(&w);
    trace_free(&t);
    free_fixture(&f);
}

/* --- the stage table: every row complete, and its functions agreeing with each other --- */

/* Every row names all its functions, and a stage is stored exactly when its row reads it from
 * its block. */
static void test_every_stage_row_is_complete(void **state)
{
    (void)state;
    for (int s = 0; s < STAGE_COUNT; s++) {
        const stage_info *info = stage_get((stage_id)s);
        const stage_functions *f = stage_functions_get((stage_id)s);
        assert_non_null(info->name);
        assert_true(info->name[0] != '\0');
        /* a name is one row's, or one node's in two places no trace has both of (normed
         * before Q or after the residual): test_every_view_lists_every_node holds that */
        assert_true(stage_find(info->name) <= (stage_id)s);
        /* a second alternative is a later row or none (-1), never 0 as an initializer that
         * leaves it out would make it: it would read source_input */
        for (int i = 0; i < STAGE_MAX_INPUTS && info->inputs[i].kind != READ_NONE; i++)
            assert_true(info->inputs[i].otherwise == -1 || info->inputs[i].otherwise > 0);
        assert_non_null(f->read);
        assert_non_null(f->forward);
        assert_non_null(f->explain);
        assert_non_null(f->cost);
        assert_non_null(f->formula);
        assert_int_equal(info->storage == STAGE_STORED, f->read == trace_read_stored);
    }
}

/* The fixtures that between them have every stage, all with two heads: a causal self-attention
 * one and a cross-attention one with an explicit mask, both with positional encoding; and a
 * self-attention one with RoPE, ALiBi, a sliding window, one key/value head and the online
 * softmax in tiles of 2. The last two have a loss (so every gradient row), the modern one with
 * every bias. Two more with a loss and the residual: a causal pre-norm (layer norm) and a
 * post-norm (RMS norm). */
enum { FIXTURE_CAUSAL, FIXTURE_CROSS, FIXTURE_MODERN, FIXTURE_PRE_NORM, FIXTURE_POST_NORM,
       FIXTURE_KINDS };

static const double fixture_target[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.5 };
static const double fixture_bias_q[4] = { 0.1, -0.2, 0.3, 0.05 }, fixture_bias_kv[2] = { 0.2, -0.1 },
                    fixture_bias_o[4] = { -0.3, 0.1, 0.0, 0.2 };
static const double fixture_gain[4] = { 1.0, 0.5, 2.0, 1.5 },
                    fixture_norm_bias[4] = { 0.1, 0.0, -0.2, 0.3 };

static fixture table_fixture(int kind)
{
    bool cross = kind == FIXTURE_CROSS;
    fixture f = make_fixture(3, cross ? 4 : 3, 4, 2, cross, 31);
    f.in.positional = kind != FIXTURE_MODERN;
    if (kind == FIXTURE_MODERN) {
        f.in.rope = f.in.alibi = true;
        f.in.rope_base = 10000.0;
        f.in.mask = MASK_WINDOW;
        f.in.window = 2;
        f.in.kv_heads = 1;  /* W_K, W_V read as 4 × 2 */
        f.in.online_softmax = true;
        f.in.tile = 2;      /* two tiles over 3 keys, the second of one key */
        f.in.b_Q = fixture_bias_q, f.in.b_K = f.in.b_V = fixture_bias_kv, f.in.b_O = fixture_bias_o;
    } else if (cross) {
        f.mask = malloc(12);
        for (int i = 0; i < 12; i++)
            f.mask[i] = i % 3 != 1;
        f.in.mask = MASK_EXPLICIT;
        f.in.mask_cells = f.mask;
    } else {
        f.in.mask = MASK_CAUSAL;
    }
    if (kind == FIXTURE_PRE_NORM || kind == FIXTURE_POST_NORM) {
        f.in.residual = true;
        f.in.norm = kind == FIXTURE_PRE_NORM ? NORM_LAYER : NORM_RMS;
        f.in.norm_post = kind == FIXTURE_POST_NORM;
        f.in.norm_eps = 1e-5;
        f.in.gain = fixture_gain;
        f.in.norm_bias = kind == FIXTURE_PRE_NORM ? fixture_norm_bias : NULL;
        f.in.contributions = true;   /* head_output and weighted_norms, with and without dropout */
    }
    if (kind == FIXTURE_PRE_NORM) {   /* dropout, and its gradient */
        f.in.dropout = true;
        f.in.dropout_p = 0.25;
        f.in.dropout_seed = 5;
    }
    if (kind != FIXTURE_CAUSAL)
        f.in.target = fixture_target;
    return f;
}

/* Each row's forward operation, run into scratch as --stats does, writes bit for bit what the
 * trace holds (and, for a derived stage, what trace_value reads), with the kernels the trace
 * was computed with (the portable softmax's libm exp may differ from the AVX2 one in the last
 * bit), whatever the threads. */
static void check_stage_compute(const attention_input *in, const trace_options *computed,
                                const trace_options *run)
{
    trace t;
    assert_int_equal(trace_compute(in, computed, &t, NULL), TRACE_OK);
    double *scratch = malloc(cost_scratch_doubles(&t) * sizeof(double));
    kernels_config config = trace_kernels_config(run);
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        int heads = stage_get(stage)->per_head ? t.heads : 1, cols = trace_cols(&t, stage);
        size_t cells = (size_t)trace_rows(&t, stage) * (size_t)cols;
        assert_true(cells <= cost_scratch_doubles(&t) || !trace_has_stage(&t, stage));
        trace_span whole = trace_span_whole(&t);
        for (int h = 1; h <= heads && trace_has_stage(&t, stage); h++) {
            stage_functions_get(stage)->forward(&t, stage, h, scratch, &whole, &config);
            for (size_t c = 0; c < cells; c++) {
                double x = trace_value(&t, stage, h, (int)c / cols, (int)c % cols);
                assert_memory_equal(&x, &scratch[c], sizeof x);
            }
            const double *block = trace_block(&t, stage, h);
            assert_true((block != NULL) == (stage_get(stage)->storage == STAGE_STORED));
            if (block)
                assert_memory_equal(block, scratch, cells * sizeof(double));
        }
    }
    free(scratch);
    trace_free(&t);
}

static void test_stage_compute_matches_the_trace(void **state)
{
    (void)state;
    static const trace_options fast = { 1, false }, two = { 2, false }, portable = { 1, true };
    for (int kind = 0; kind < FIXTURE_KINDS; kind++) {
        fixture f = table_fixture(kind);
        check_stage_compute(&f.in, NULL, &fast);
        check_stage_compute(&f.in, &fast, &two);
        check_stage_compute(&f.in, &portable, &portable);
        free_fixture(&f);
    }
}

/* Whether every cell of every stage the two traces have is the same, bit for bit; the first
 * difference is named in `difference`. */
static bool same_trace(const trace *a, const trace *b, char *difference, size_t size)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        int heads = stage_get(stage)->per_head ? a->heads : 1;
        for (int h = 1; h <= heads && trace_has_stage(a, stage); h++)
            for (int i = 0; i < trace_rows(a, stage); i++)
                for (int j = 0; j < trace_cols(a, stage); j++) {
                    double x = trace_value(a, stage, h, i, j), y = trace_value(b, stage, h, i, j);
                    if (memcmp(&x, &y, sizeof x) == 0)
                        continue;
                    snprintf(difference, size, "%s[%d,%d] head %d: %.17g, afresh %.17g",
                             stage_get(stage)->name, i, j, h, x, y);
                    return false;
                }
    }
    return true;
}

/* The first stage after `from` that has a block: where a runner that skipped `from` starts. */
static stage_id next_stored(const trace *t, stage_id from)
{
    int s = from + 1;
    while (s < STAGE_COUNT && !trace_block(t, (stage_id)s, 1))
        s++;
    return (stage_id)s;
}

/* A changed number, recomputed from the first stage that reads it (what a live edit does),
 * gives the trace that computing the changed input afresh gives, bit for bit; starting one
 * stored stage later does not (so the first reader is the stage the change needs). */
static void check_recompute(fixture *f, double *number, read_kind kind, int id, stage_id expected)
{
    trace t, fresh;
    char difference[160] = "";
    fixture_compute(&f->in, &t);
    *number += 0.375;
    fixture_compute(&f->in, &fresh);
    stage_id from = trace_first_reader(&t, kind, id);
    assert_int_equal(from, expected);
    assert_int_equal(trace_recompute(&t, next_stored(&t, from), NULL, NULL), TRACE_OK);
    assert_false(same_trace(&t, &fresh, difference, sizeof difference));
    assert_int_equal(trace_recompute(&t, from, NULL, NULL), TRACE_OK);
    if (!same_trace(&t, &fresh, difference, sizeof difference))
        fail_msg("recomputed from %s: %s", stage_get(from)->name, difference);
    trace_free(&fresh);
    trace_free(&t);
}

static void test_recompute_after_a_change_is_a_fresh_trace(void **state)
{
    (void)state;
    for (int kind = 0; kind < FIXTURE_KINDS; kind++) {
        bool cross = kind == FIXTURE_CROSS;
        fixture f = table_fixture(kind);
        /* an embedding: from the stage that adds the embeddings */
        check_recompute(&f, &f.x[5], READ_DATA, DATA_EMBEDDINGS, STAGE_INPUT);
        if (cross)
            check_recompute(&f, &f.source[2], READ_DATA, DATA_SOURCE_EMBEDDINGS,
                            STAGE_SOURCE_INPUT);
        /* a weight read late: everything before V stays */
        check_recompute(&f, &f.wv[3], READ_PARAM, PARAM_W_V, STAGE_V);
        check_recompute(&f, &f.wo[7], READ_PARAM, PARAM_W_O,   /* what each head adds reads it */
                        f.in.contributions ? STAGE_WEIGHTED_NORMS : STAGE_OUTPUT);
        free_fixture(&f);
    }
}

/* ---- recomputing only the heads a change reaches (trace_recompute_changes) ---- */

static const double sentinel = 1234.5;   /* finite: the overflow check lets it stand */

/* Parameter p's matrix in f as the test may change it: the fixture's weights, or one of the
 * optional parameters (every row of the table after W_O: the biases, the norm's gain and
 * bias), NULL where the fixture has none. */
static double *param_numbers(fixture *f, param_id p, double *optional[PARAM_COUNT - PARAM_B_Q])
{
    double *weights[PARAM_B_Q] = { f->wq, f->wk, f->wv, f->wo };
    return p < PARAM_B_Q ? weights[p] : optional[p - PARAM_B_Q];
}

/* One number of matrix (kind, id) at column col raised, recomputed by the changes' runner: the
 * trace computed afresh, bit for bit. When poisoned > 0, that head's scores are overwritten
 * with a sentinel first, which must stay (the change does not reach it: it was not
 * recomputed) while every other number is the fresh trace's. */
static void check_change(fixture *f, double *number, read_kind kind, int id, int col,
                         int poisoned)
{
    trace t, fresh;
    char difference[160] = "";
    fixture_compute(&f->in, &t);
    *number += 0.375;
    fixture_compute(&f->in, &fresh);
    size_t cells = (size_t)t.n * (size_t)t.m;
    double *scores = poisoned > 0 ? (double *)trace_block(&t, STAGE_SCORES, poisoned) : NULL;
    double *kept = scores ? malloc(cells * sizeof *kept) : NULL;
    for (size_t c = 0; scores && c < cells; c++)
        scores[c] = sentinel;
    trace_change change = { kind, id, col };
    assert_int_equal(trace_recompute_changes(&t, &change, 1, NULL, NULL), TRACE_OK);
    if (scores) {   /* the poison stood: then the fresh numbers back, for the comparison */
        for (size_t c = 0; c < cells; c++)
            assert_true(scores[c] == sentinel);
        memcpy(kept, trace_block(&fresh, STAGE_SCORES, poisoned), cells * sizeof *kept);
        memcpy(scores, kept, cells * sizeof *kept);
    }
    if (!same_trace(&t, &fresh, difference, sizeof difference))
        fail_msg("%s %d column %d: %s", kind == READ_PARAM ? param_get((param_id)id)->name
                 : "data", id, col, difference);
    free(kept);
    trace_free(&fresh);
    trace_free(&t);
}

/* Every column of every parameter, the embeddings and the target, in the three table fixtures
 * and a grouped-query one (4 heads of d_k 2 over 2 key/value heads, causal, every bias, a
 * loss), that one also with a layer norm before attention and each head's contributions, and
 * with an RMS norm after the residual and dropout (so the gain's and the norm's bias's columns
 * are changed too, and the nodes after weights are reached through dropped): a change recomputed
 * by trace_recompute_changes is a fresh trace; and a change of W_Q's, b_Q's, W_K's or W_V's
 * column leaves the scores of a head it does not reach alone (the runner did less than
 * everything). */
static void test_a_change_recomputes_only_the_heads_it_reaches(void **state)
{
    (void)state;
    static double target[24], b_q[8], b_k[4], b_v[4], b_o[8], gain[8], norm_bias[8];
    support_fill(target, 24, 91);
    support_fill(b_q, 8, 92);
    support_fill(b_k, 4, 93);
    support_fill(b_v, 4, 94);
    support_fill(b_o, 8, 95);
    support_fill(gain, 8, 96);
    support_fill(norm_bias, 8, 97);
    for (int kind = 0; kind < FIXTURE_KINDS + 3; kind++) {
        bool grouped = kind >= FIXTURE_KINDS;
        fixture f = grouped ? make_fixture(3, 3, 8, 4, false, 17) : table_fixture(kind);
        double *biases[PARAM_COUNT - PARAM_B_Q] = { NULL };
        if (f.in.b_Q) {   /* the modern fixture's biases are read-only: changed on copies */
            memcpy(b_q, f.in.b_Q, 4 * sizeof *b_q), memcpy(b_o, f.in.b_O, 4 * sizeof *b_o);
            memcpy(b_k, f.in.b_K, 2 * sizeof *b_k), memcpy(b_v, f.in.b_V, 2 * sizeof *b_v);
            f.in.b_Q = biases[0] = b_q, f.in.b_K = biases[1] = b_k;
            f.in.b_V = biases[2] = b_v, f.in.b_O = biases[3] = b_o;
        }
        if (grouped) {
            f.in.kv_heads = 2;
            f.in.mask = MASK_CAUSAL;
            f.in.target = target;
            f.in.b_Q = biases[0] = b_q, f.in.b_K = biases[1] = b_k;
            f.in.b_V = biases[2] = b_v, f.in.b_O = biases[3] = b_o;
        }
        if (kind == FIXTURE_KINDS + 1) {   /* Pre-LN: Q, K and V read the normed input */
            f.in.norm = NORM_LAYER, f.in.norm_eps = 1e-5, f.in.contributions = true;
            f.in.gain = biases[PARAM_GAIN - PARAM_B_Q] = gain;
            f.in.norm_bias = biases[PARAM_NORM_BIAS - PARAM_B_Q] = norm_bias;
        }
        if (kind == FIXTURE_KINDS + 2) {   /* Post-LN: the RMS norm of the residual, last */
            f.in.norm = NORM_RMS, f.in.norm_post = f.in.residual = true, f.in.norm_eps = 1e-5;
            f.in.dropout = true, f.in.dropout_p = 0.25, f.in.dropout_seed = 7;
            f.in.gain = biases[PARAM_GAIN - PARAM_B_Q] = gain;
        }
        for (int p = 0; p < PARAM_COUNT; p++) {
            double *numbers = param_numbers(&f, (param_id)p, biases);
            const param_info *info = param_get((param_id)p);
            int rows = trace_input_axis_length(&f.in, info->rows);
            int cols = trace_input_axis_length(&f.in, info->cols);
            for (int c = 0; numbers && c < cols; c++)
                check_change(&f, &numbers[(size_t)((c * 3) % rows) * (size_t)cols + (size_t)c],
                             READ_PARAM, p, c, 0);
        }
        check_change(&f, &f.x[4], READ_DATA, DATA_EMBEDDINGS, -1, 0);
        if (f.in.target) {   /* on a copy too (n · d_model numbers, at most 24) */
            double *copy = malloc((size_t)(f.n * f.d) * sizeof *copy);
            memcpy(copy, f.in.target, (size_t)(f.n * f.d) * sizeof *copy);
            f.in.target = copy;
            check_change(&f, &copy[5], READ_DATA, DATA_TARGET, -1, 0);
            free(copy);
            f.in.target = target;
        }
        if (grouped) {   /* an overflow in a head reached alone is found and named */
            trace t;
            fixture_compute(&f.in, &t);
            double q = f.wq[0 * 8 + 4], k = f.wk[0 * 4 + 2];
            f.wq[0 * 8 + 4] = f.wk[0 * 4 + 2] = 1e300;   /* head 3's query, group 2's key */
            trace_change both[2] = { { READ_PARAM, PARAM_W_Q, 4 }, { READ_PARAM, PARAM_W_K, 2 } };
            trace_failure failure;
            assert_int_equal(trace_recompute_changes(&t, both, 2, NULL, &failure),
                             TRACE_ERROR_OVERFLOW);
            assert_int_equal(failure.stage, STAGE_SCORES);
            assert_int_equal(failure.head, 3);
            f.wq[0 * 8 + 4] = q, f.wk[0 * 4 + 2] = k;
            trace_free(&t);
        }
        if (grouped) {
            check_change(&f, &f.wq[1 * 8 + 5], READ_PARAM, PARAM_W_Q, 5, 1);   /* head 3 */
            check_change(&f, &b_q[0], READ_PARAM, PARAM_B_Q, 0, 4);            /* head 1 */
            check_change(&f, &f.wk[2 * 4 + 1], READ_PARAM, PARAM_W_K, 1, 3);   /* group 1 */
            check_change(&f, &f.wv[0 * 4 + 3], READ_PARAM, PARAM_W_V, 3, 2);   /* group 2 */
        }
        free_fixture(&f);
    }
}

/* How many steps of w show stage at head (any position). */
static int steps_showing(const walk *w, stage_id stage, int head, int position)
{
    int found = 0;
    for (int k = 0; k < w->count; k++)
        found += w->steps[k].stage == stage && w->steps[k].head == head
                 && (position == WALK_WHOLE || w->steps[k].position == position);
    return found;
}

/* Every view that lists stages lists every stage the trace has, from the node table alone: the
 * pipeline walk (the walk of --json, --csv, unscripted --plain and the UI's step list) each
 * head of each once; the decoding walk every stage its row marks as decoded, at every token
 * and head; --stats one row each. A row added to the table that a view leaves out fails here
 * (docs/DESIGN.md's recipes). The man page's list and the loader's names are written from the
 * table itself, so they cannot leave one out. */
static void test_every_view_lists_every_node(void **state)
{
    (void)state;
    bool seen[STAGE_COUNT] = { false };
    for (int kind = 0; kind < FIXTURE_KINDS; kind++) {
        fixture f = table_fixture(kind);
        trace t;
        fixture_compute(&f.in, &t);
        walk pipeline, decoding = { NULL, 0 };
        stats_table table;
        assert_true(walk_build_pipeline(&pipeline, &t));
        assert_true(!decode_supported(&t) || walk_build_decode(&decoding, &t));
        assert_true(stats_count(&t, &table));
        int present = 0;
        for (int s = 0; s < STAGE_COUNT; s++) {
            stage_id stage = (stage_id)s;
            const stage_info *info = stage_get(stage);
            if (!trace_has_stage(&t, stage))
                continue;
            seen[s] = true;
            if (trace_find_stage(&f.in, info->name) != stage)
                fail_msg("two stages called %s in one trace", info->name);
            int rows = 0;
            for (int r = 0; r < table.count; r++)
                rows += table.stages[r].stage == stage;
            if (rows != 1)
                fail_msg("--stats lists %s %d times", info->name, rows);
            present++;
            for (int h = 1; h <= (info->per_head ? t.heads : 1); h++) {
                if (steps_showing(&pipeline, stage, h, WALK_WHOLE) != 1)
                    fail_msg("the pipeline walk shows %s head %d %d times", info->name, h,
                             steps_showing(&pipeline, stage, h, WALK_WHOLE));
                for (int p = 0; decoding.count > 0 && p < t.n; p++)
                    if (steps_showing(&decoding, stage, h, p) != !!(info->flags & STAGE_DECODED))
                        fail_msg("the decoding walk shows %s head %d at token %d %d times",
                                 info->name, h, p, steps_showing(&decoding, stage, h, p));
            }
        }
        assert_int_equal(table.count, present);
        walk_free(&pipeline);
        walk_free(&decoding);
        trace_free(&t);
        free_fixture(&f);
    }
    for (int s = 0; s < STAGE_COUNT; s++)   /* the fixtures between them have every stage */
        if (!seen[s])
            fail_msg("no fixture has the stage %s: add one", stage_get((stage_id)s)->name);
}

/* The blocks of one allocation: each stored stage's bytes from its row's shape, adding up with
 * the positional table to trace_bytes_needed; every explanation starts with the cell's name. */
static void test_blocks_and_explanations_of_every_stage(void **state)
{
    (void)state;
    bool seen[STAGE_COUNT] = { false };
    for (int kind = 0; kind < FIXTURE_KINDS; kind++) {
        fixture f = table_fixture(kind);
        trace t;
        fixture_compute(&f.in, &t);
        size_t bytes = !f.in.positional ? 0   /* the positional table */
                     : (size_t)(kind == FIXTURE_CROSS ? 4 : 3) * 4 * sizeof(double);
        for (int s = 0; s < STAGE_COUNT; s++) {
            stage_id stage = (stage_id)s;
            int heads = stage_get(stage)->per_head ? t.heads : 1;
            size_t expected = !trace_has_stage(&t, stage)
                || stage_get(stage)->storage == STAGE_DERIVED ? 0
                : (size_t)heads * (size_t)trace_rows(&t, stage) * (size_t)trace_cols(&t, stage)
                  * sizeof(double);
            assert_int_equal(trace_stage_bytes(&t, stage), expected);
            bytes += expected;
            if (!trace_has_stage(&t, stage))
                continue;
            seen[s] = true;
            char text[1024];
            trace_cell cell = { stage, heads, trace_rows(&t, stage) > 1, 0 };
            assert_true(trace_cell_explain(&t, &cell, 4, text, sizeof text) > 0);
            assert_int_equal(strncmp(text, stage_get(stage)->name,
                                     strlen(stage_get(stage)->name)), 0);
            assert_true(strstr(text, " = ") != NULL);
        }
        bytes += trace_mask_bytes(&t);   /* a window's visible cells, allocated beside */
        assert_int_equal(bytes, trace_bytes_needed(&f.in));
        trace_free(&t);
        free_fixture(&f);
    }
    for (int s = 0; s < STAGE_COUNT; s++)
        assert_true(seen[s]);
}

static void assert_formula(const trace *t, stage_id stage, const char *expected)
{
    char text[128];
    int length = trace_stage_formula(t, stage, text, sizeof text);
    assert_string_equal(text, expected);
    assert_int_equal(length, strlen(expected));
}

/* Formulas are written from the lesson's configuration. */
static void test_formulas_follow_the_configuration(void **state)
{
    (void)state;
    fixture f = table_fixture(FIXTURE_CROSS);  /* cross, explicit mask, positional, scaled */
    trace t;
    fixture_compute(&f.in, &t);
    assert_formula(&t, STAGE_SOURCE_INPUT, "source_input = embeddings(source) + PE");
    assert_formula(&t, STAGE_INPUT, "input = embeddings + PE");
    assert_formula(&t, STAGE_Q, "Q = input · W_Q");
    assert_formula(&t, STAGE_K, "K = source_input · W_K");
    assert_formula(&t, STAGE_V, "V = source_input · W_V");
    assert_formula(&t, STAGE_SCORES, "scores = Q_h · K_hᵀ");
    assert_formula(&t, STAGE_SCALED, "scaled = scores / √d_k");
    assert_formula(&t, STAGE_MASKED, "masked = scaled, cells the lesson's mask hides −∞");
    assert_formula(&t, STAGE_WEIGHTS, "weights = softmax(masked)");
    assert_formula(&t, STAGE_CONTEXT, "context = weights · V_h");
    assert_formula(&t, STAGE_CONCAT, "concat = [context_1 … context_h]");
    assert_formula(&t, STAGE_OUTPUT, "output = concat · W_O");
    trace_free(&t);
    free_fixture(&f);

    f = table_fixture(FIXTURE_CAUSAL);  /* self-attention, causal */
    f.in.positional = false;
    f.in.scale = false;
    fixture_compute(&f.in, &t);
    assert_formula(&t, STAGE_INPUT, "input = embeddings");
    assert_formula(&t, STAGE_K, "K = input · W_K");
    assert_formula(&t, STAGE_V, "V = input · W_V");
    assert_formula(&t, STAGE_SCALED, "scaled = scores (scale: false: not divided by √d_k)");
    assert_formula(&t, STAGE_MASKED, "masked = scaled, later tokens −∞ (causal mask)");
    trace_free(&t);
    f.in.mask = MASK_NONE;
    fixture_compute(&f.in, &t);
    assert_formula(&t, STAGE_MASKED, "masked = scaled (no mask: nothing hidden)");
    char small[8];
    assert_int_equal(trace_stage_formula(&t, STAGE_OUTPUT, small, sizeof small),
                     strlen("output = concat · W_O"));
    assert_string_equal(small, "output ");
    trace_free(&t);
    free_fixture(&f);

    fixture cross = table_fixture(FIXTURE_CROSS);
    cross.in.positional = false;
    fixture_compute(&cross.in, &t);
    assert_formula(&t, STAGE_SOURCE_INPUT, "source_input = embeddings(source)");
    trace_free(&t);
    free_fixture(&cross);

    fixture modern = table_fixture(FIXTURE_MODERN);  /* RoPE, ALiBi, a window of 2, MQA, online */
    fixture_compute(&modern.in, &t);
    assert_formula(&t, STAGE_INPUT, "input = embeddings");
    assert_formula(&t, STAGE_Q_ROTATED, "Q_rotated = Q with pair p turned by pos · base^(−2p/d_k)");
    assert_formula(&t, STAGE_K_ROTATED, "K_rotated = K with pair p turned by pos · base^(−2p/d_k)");
    assert_formula(&t, STAGE_SCORES, "scores = Q_rotated_h · K_rotated_gᵀ");
    assert_formula(&t, STAGE_BIASED, "biased = scaled − m_h·|i − j| (ALiBi)");
    assert_formula(&t, STAGE_MASKED, "masked = biased, −∞ where j ≤ i − 2 or j > i (sliding window)");
    assert_formula(&t, STAGE_RUNNING_MAX,
                   "running_max: m_t = max(m_t−1, max of masked over tile t of 2 keys)");
    assert_formula(&t, STAGE_RUNNING_SUM,
                   "running_sum: l_t = l_t−1 · exp(m_t−1 − m_t) + Σ_tile exp(masked − m_t)");
    assert_formula(&t, STAGE_WEIGHTS, "weights = exp(masked − m_T) / l_T (the last tile's "
                   "running_max and running_sum)");
    assert_formula(&t, STAGE_CONTEXT, "context = Σ exp(masked − m_t)·V_g rescaled tile by tile, "
                   "/ l_T");
    trace_free(&t);
    modern.in.online_softmax = false;
    fixture_compute(&modern.in, &t);
    assert_formula(&t, STAGE_CONTEXT, "context = weights · V_g");
    trace_free(&t);
    free_fixture(&modern);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cat_sat_matches_hand_worked_example),
        cmocka_unit_test(test_elided_terms_leave_out_hidden_keys),
        cmocka_unit_test(test_multi_head_matches_direct_computation),
        cmocka_unit_test(test_concat_places_each_head_in_its_columns),
        cmocka_unit_test(test_causal_mask_hides_the_future),
        cmocka_unit_test(test_explicit_mask),
        cmocka_unit_test(test_mask_row_hiding_every_key_is_refused),
        cmocka_unit_test(test_positional_encoding_values),
        cmocka_unit_test(test_scale_false_leaves_scores_unscaled),
        cmocka_unit_test(test_cross_attention),
        cmocka_unit_test(test_every_weights_row_sums_to_one),
        cmocka_unit_test(test_permuting_tokens_permutes_outputs),
        cmocka_unit_test(test_softmax_is_exact_for_large_scores),
        cmocka_unit_test(test_overflow_is_reported_with_its_stage_and_cell),
        cmocka_unit_test(test_overflow_in_a_hidden_cell_is_reported),
        cmocka_unit_test(test_too_large_a_trace_is_refused_with_its_size),
        cmocka_unit_test(test_explanations_of_cat_sat),
        cmocka_unit_test(test_explanations_of_hidden_cells_and_long_sums),
        cmocka_unit_test(test_cell_names),
        cmocka_unit_test(test_explanation_numbers),
        cmocka_unit_test(test_step_list),
        cmocka_unit_test(test_every_stage_row_is_complete),
        cmocka_unit_test(test_stage_compute_matches_the_trace),
        cmocka_unit_test(test_recompute_after_a_change_is_a_fresh_trace),
        cmocka_unit_test(test_a_change_recomputes_only_the_heads_it_reaches),
        cmocka_unit_test(test_every_view_lists_every_node),
        cmocka_unit_test(test_blocks_and_explanations_of_every_stage),
        cmocka_unit_test(test_formulas_follow_the_configuration),
    };
    return cmocka_run_group_tests_name("attention core", tests, NULL, NULL);
}
