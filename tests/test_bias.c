/* Biases b_Q, b_K, b_V and b_O: the projections against a textbook loop written here (the fused
 * dot product in k order, then + b, to the bit), what each bias does to attention, and their
 * explanation, formula, cost and loading. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "stage_functions.h"
#include "lesson.h"

enum { N = 5, M = 3, D = 4, HEADS = 2 };

static const char *const labels[] = { "a", "b", "c", "d", "e" };

typedef struct {
    double x[N * D], source[M * D], w[4][D * D], b[4][D];
    attention_input in;
} fixture;

/* n = N tokens, d_model = D, two heads; biases given when `biased`; cross-attention from M
 * source tokens when `cross`; one key/value head (b_K and b_V of d_k numbers) when `shared`. */
static void make_fixture(fixture *f, bool biased, bool cross, bool shared, unsigned seed)
{
    support_fill(f->x, N * D, seed);
    support_fill(f->source, M * D, seed + 1);
    for (int i = 0; i < 4; i++) {
        support_fill(f->w[i], D * D, seed + 2 + (unsigned)i);
        support_fill(f->b[i], D, seed + 6 + (unsigned)i);
    }
    f->in = (attention_input){ .n_tokens = N, .tokens = labels, .n_source = N, .d_model = D,
                               .heads = HEADS, .embeddings = f->x, .W_Q = f->w[0],
                               .W_K = f->w[1], .W_V = f->w[2], .W_O = f->w[3],
                               .mask = MASK_NONE, .scale = true, .kv_heads = shared ? 1 : 0 };
    if (cross) {
        f->in.n_source = M;
        f->in.source = labels;
        f->in.source_embeddings = f->source;
    }
    if (biased) {
        f->in.b_Q = f->b[0];
        f->in.b_K = f->b[1];
        f->in.b_V = f->b[2];
        f->in.b_O = f->b[3];
    }
}

static void compute_ok(const attention_input *in, const trace_options *options, trace *t)
{
    assert_int_equal(trace_compute(in, options, t, NULL), TRACE_OK);
}

static void assert_same_bits(const char *what, double expected, double actual)
{
    if (memcmp(&expected, &actual, sizeof expected) != 0) {
        fprintf(stderr, "%s: expected %.17g, computed %.17g\n", what, expected, actual);
        fail();
    }
}

/* The textbook projection of one cell: sum = fma(x[k], W[k, col], sum) for k = 0 … d_model − 1,
 * then sum + bias[col] (one rounded addition), or the sum alone without a bias. */
static double textbook_cell(const double *x, const double *W, const double *bias, int d,
                            int cols, int col)
{
    double sum = 0.0;
    for (int k = 0; k < d; k++)
        sum = fma(x[k], W[(size_t)k * (size_t)cols + (size_t)col], sum);
    return bias ? sum + bias[col] : sum;
}

/* Every cell of Q, K, V and output against the textbook, reading the rows each is made from
 * (input, source_input or concat) out of the trace itself. */
static void assert_projections(const trace *t)
{
    static const stage_id stages[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_OUTPUT };
    const attention_input *in = t->in;
    const double *weights[] = { in->W_Q, in->W_K, in->W_V, in->W_O };
    const double *biases[] = { in->b_Q, in->b_K, in->b_V, in->b_O };
    stage_id source = in->source ? STAGE_SOURCE_INPUT : STAGE_INPUT;
    stage_id from[] = { STAGE_INPUT, source, source, STAGE_CONCAT };
    for (int s = 0; s < 4; s++) {
        int cols = trace_cols(t, stages[s]);
        for (int i = 0; i < trace_rows(t, stages[s]); i++)
            for (int c = 0; c < cols; c++)
                assert_same_bits(stage_get(stages[s])->name,
                                 textbook_cell(trace_block(t, from[s], 1)
                                               + (size_t)i * (size_t)t->d_model,
                                               weights[s], biases[s], t->d_model, cols, c),
                                 trace_value(t, stages[s], 1, i, c));
    }
}

/* With and without biases, in self- and cross-attention, with and without shared key/value
 * heads, on the vector and the portable code. */
static void test_projections_are_the_fused_sum_then_the_bias(void **state)
{
    (void)state;
    static const trace_options ways[] = { { 1, false }, { 2, false }, { 1, true } };
    for (int variant = 0; variant < 8; variant++)
        for (size_t way = 0; way < sizeof ways / sizeof ways[0]; way++) {
            fixture f;
            make_fixture(&f, variant % 2, variant / 2 % 2, variant / 4 % 2, 11 + (unsigned)variant);
            trace t;
            compute_ok(&f.in, &ways[way], &t);
            assert_projections(&t);
            trace_free(&t);
        }
}

/* What each bias does, which a lesson can claim: b_K adds q·b_K to every score of a row, which
 * the softmax does not see, so the weights stay; b_V adds b_V to every context row, since each
 * row of weights sums to 1. */
static void test_key_bias_keeps_weights_and_value_bias_shifts_context(void **state)
{
    (void)state;
    fixture plain, with_key, with_value;
    make_fixture(&plain, false, false, false, 5);
    make_fixture(&with_key, false, false, false, 5);
    make_fixture(&with_value, false, false, false, 5);
    with_key.in.b_K = with_key.b[1];
    with_value.in.b_V = with_value.b[2];
    trace a, k, v;
    compute_ok(&plain.in, NULL, &a);
    compute_ok(&with_key.in, NULL, &k);
    compute_ok(&with_value.in, NULL, &v);
    for (int h = 1; h <= HEADS; h++) {
        size_t cells = (size_t)N * (size_t)N;
        support_assert_close("weights with b_K", trace_block(&a, STAGE_WEIGHTS, h),
                             trace_block(&k, STAGE_WEIGHTS, h), cells, 1e-12);
        assert_true(fabs(trace_value(&a, STAGE_SCORES, h, 0, 0)
                         - trace_value(&k, STAGE_SCORES, h, 0, 0)) > 1e-3);
        for (int i = 0; i < N; i++)
            for (int c = 0; c < D / HEADS; c++)
                assert_true(fabs(trace_value(&a, STAGE_CONTEXT, h, i, c)
                                 + with_value.b[2][(h - 1) * (D / HEADS) + c]
                                 - trace_value(&v, STAGE_CONTEXT, h, i, c)) < 1e-12);
    }
    trace_free(&a);
    trace_free(&k);
    trace_free(&v);
}

static void assert_text(const char *got, int length, const char *expected)
{
    assert_string_equal(got, expected);
    assert_int_equal(length, (int)strlen(expected));
}

/* The bias is its own term with its number, after the products; the formula says "+ b_Q";
 * the cost counts one addition a cell. */
static void test_explanation_formula_and_cost(void **state)
{
    (void)state;
    static const double x[] = { 1.0, 0.5, 0.0, 1.0 }, identity[] = { 1, 0, 0, 1 };
    static const double b_Q[] = { 0.1, -0.25 }, b_O[] = { 2, 0 };
    attention_input in = { .n_tokens = 2, .tokens = labels, .n_source = 2, .d_model = 2,
                           .heads = 1, .embeddings = x, .W_Q = identity, .W_K = identity,
                           .W_V = identity, .W_O = identity, .scale = true };
    trace t;
    compute_ok(&in, NULL, &t);
    cost_counts plain[4];
    static const stage_id stages[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_OUTPUT };
    for (int s = 0; s < 4; s++)
        cost_stage(&t, stages[s], &plain[s]);
    trace_free(&t);
    in.b_Q = b_Q;
    in.b_O = b_O;
    compute_ok(&in, NULL, &t);
    char text[512];
    trace_cell cell = { STAGE_Q, 1, 1, 1 };
    assert_text(text, trace_cell_explain(&t, &cell, 4, text, sizeof text),
                "Q[b,1] = input_b · W_Q[:,1] + b_Q[1] = (0.0 × 0.0) + (1.0 × 1.0) + "
                "b_Q[1] (-0.25) = 0.75");
    cell = (trace_cell){ STAGE_K, 1, 1, 1 };
    assert_text(text, trace_cell_explain(&t, &cell, 4, text, sizeof text),
                "K[b,1] = input_b · W_K[:,1] = (0.0 × 0.0) + (1.0 × 1.0) = 1.0");
    assert_text(text, trace_stage_formula(&t, STAGE_Q, text, sizeof text),
                "Q = input · W_Q + b_Q");
    assert_text(text, trace_stage_formula(&t, STAGE_K, text, sizeof text), "K = input · W_K");
    assert_text(text, trace_stage_formula(&t, STAGE_OUTPUT, text, sizeof text),
                "output = concat · W_O + b_O");
    for (int s = 0; s < 4; s++) {
        cost_counts counts;
        cost_stage(&t, stages[s], &counts);
        bool biased = stages[s] == STAGE_Q || stages[s] == STAGE_OUTPUT;
        assert_int_equal(counts.multiplications, plain[s].multiplications);
        assert_int_equal(counts.additions, plain[s].additions + (biased ? 2 * 2 : 0));
    }
    trace_free(&t);
}

/* ---- the loader ---- */

#define LESSON \
    "title: t\n" \
    "tokens: [a, b]\n" \
    "d_model: 4\n" \
    "heads: 2\n" \
    "kv_heads: 1\n" \
    "embeddings: {random: normal, seed: 1}\n" \
    "W_K: {random: normal, seed: 2}\n" \
    "W_V: {random: normal, seed: 3}\n"

static void test_lesson_biases(void **state)
{
    (void)state;
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(LESSON, &l, message, sizeof message), LESSON_OK);
    assert_null(l.input.b_Q);
    assert_null(l.input.b_K);
    assert_null(l.input.b_V);
    assert_null(l.input.b_O);
    lesson_free(&l);
    /* b_K and b_V have kv_heads · d_k = 2 numbers; numpy's draws continue one stream after the
     * matrices: randn(4) for b_Q, then randn(2) for b_V (numpy seed 0: 1.764…, 0.400…, …) */
    assert_int_equal(fixture_load_status(LESSON "b_Q: {random: numpy, seed: 0}\nb_K: [0.5, -1]\n"
                          "b_V: {random: numpy, seed: 0}\nb_O: {random: normal, seed: 4}\n",
                          &l, message, sizeof message), LESSON_OK);
    assert_true(fabs(l.input.b_Q[0] - 1.764052345967664) < 1e-15);
    assert_true(fabs(l.input.b_V[0] - 1.8675579901499675) < 1e-15);  /* the fifth draw */
    assert_true(l.input.b_K[0] == 0.5 && l.input.b_K[1] == -1.0);
    assert_non_null(l.input.b_O);
    lesson_free(&l);
    /* draw_order may put a bias first */
    assert_int_equal(fixture_load_status(LESSON "b_V: {random: numpy, seed: 0}\n"
                                         "b_Q: {random: numpy, seed: 0}\n"
                                         "draw_order: [b_V, b_Q]\n", &l, message, sizeof message),
                     LESSON_OK);
    assert_true(fabs(l.input.b_V[0] - 1.764052345967664) < 1e-15);
    lesson_free(&l);
    fixture_refused(LESSON "b_K: [1, 2, 3, 4]\n", "b_K: expected 2 numbers, found 4");
    fixture_refused(LESSON "b_Q: [1, 2]\n", "b_Q: expected 4 numbers, found 2");
    fixture_refused(LESSON "b_O: identity\n", "b_O must be a list of numbers (one per column)");
    fixture_refused(LESSON "b_O: [[1, 2, 3, 4]]\n", "not a list of rows");
    fixture_refused(LESSON "b_Q: [1, x, 3, 4]\n", "b_Q: 'x' is not a number");
    fixture_refused(LESSON "b_Q: {random: numpy, seed: 0}\ndraw_order: [b_Q, b_K]\n",
                    "'b_K' is not drawn with 'random: numpy'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projections_are_the_fused_sum_then_the_bias),
        cmocka_unit_test(test_key_bias_keeps_weights_and_value_bias_shifts_context),
        cmocka_unit_test(test_explanation_formula_and_cost),
        cmocka_unit_test(test_lesson_biases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
