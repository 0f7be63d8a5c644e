/* Attention as 2026 models run it (issue 13): RoPE, ALiBi and the sliding window, against
 * computations written here from the papers' formulas, their properties, their explanations,
 * costs and refusals, and the loader's keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "stage_functions.h"
#include "lesson.h"

/* Inputs of n tokens (and m source tokens in cross-attention) with numbers from support_fill;
 * the caller sets what the test is about. */
typedef struct {
    double x[8 * 4], source[8 * 4], w[4][4 * 4];
    attention_input in;
} fixture;

static void make_fixture(fixture *f, int n, int m, int heads, unsigned seed)
{
    support_fill(f->x, sizeof f->x / sizeof f->x[0], seed);
    support_fill(f->source, sizeof f->source / sizeof f->source[0], seed + 1);
    for (int i = 0; i < 4; i++)
        support_fill(f->w[i], 16, seed + 2 + (unsigned)i);
    f->in = (attention_input){ .n_tokens = n, .tokens = fixture_labels, .n_source = n, .d_model = 4,
                               .heads = heads, .embeddings = f->x, .W_Q = f->w[0],
                               .W_K = f->w[1], .W_V = f->w[2], .W_O = f->w[3],
                               .mask = MASK_NONE, .scale = true, .rope_base = 10000.0 };
    if (m > 0) {
        f->in.n_source = m;
        f->in.source = fixture_labels + 2;
        f->in.source_embeddings = f->source;
    }
}

/* ---- ALiBi's slopes ---- */

/* The paper's numbers: 2^(−8h/H) for a power of two; for 6 heads those of 4, then 2^-1, 2^-3;
 * for 3 heads those of 2, then 2^-2; for 12 those of 8, then four of 16's odd ones. */
static void test_alibi_slopes(void **state)
{
    (void)state;
    for (int h = 1; h <= 8; h++)
        assert_true(trace_alibi_slope(h, 8) == ldexp(1.0, -h));
    double six[] = { 0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125 };
    for (int h = 1; h <= 6; h++)
        assert_true(trace_alibi_slope(h, 6) == six[h - 1]);
    double three[] = { 0.0625, 0.00390625, 0.25 };
    for (int h = 1; h <= 3; h++)
        assert_true(trace_alibi_slope(h, 3) == three[h - 1]);
    assert_true(trace_alibi_slope(1, 1) == ldexp(1.0, -8));
    for (int h = 1; h <= 12; h++)  /* 8's slopes, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 of 16's */
        assert_true(trace_alibi_slope(h, 12) == (h <= 8 ? ldexp(1.0, -h) : pow(2.0, 8.5 - h)));
}

/* ---- RoPE ---- */

/* Row pos of a (rows × 4) matrix turned as RoFormer writes it, with heads of d_k columns: the
 * pair (x, y) at columns (c, c+1), c = 2p within its head, becomes (x·cos a − y·sin a,
 * x·sin a + y·cos a) with a = pos · base^(−2p/d_k). */
static void rotate_direct(const double *from, double *to, int rows, int d_k, double base)
{
    for (int pos = 0; pos < rows; pos++)
        for (int c = 0; c < 4; c += 2) {
            int p = (c % d_k) / 2;
            double a = pos / pow(base, 2.0 * p / d_k), x = from[pos * 4 + c],
                   y = from[pos * 4 + c + 1];
            to[pos * 4 + c] = x * cos(a) - y * sin(a);
            to[pos * 4 + c + 1] = x * sin(a) + y * cos(a);
        }
}

/* Q_rotated and K_rotated against the formula, for one head and two, and in cross-attention
 * (keys by their index in the source); the scores read the rotated rows. */
static void test_rope_matches_the_formula(void **state)
{
    (void)state;
    int shapes[][3] = { { 5, 0, 1 }, { 5, 0, 2 }, { 3, 6, 2 } };  /* n, m (0: self), heads */
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        fixture f;
        make_fixture(&f, shapes[k][0], shapes[k][1], shapes[k][2], 7);
        f.in.rope = true;
        f.in.rope_base = k == 1 ? 100.0 : 10000.0;
        trace t;
        fixture_compute(&f.in, &t);
        double q[8 * 4], keys[8 * 4];
        rotate_direct(trace_block(&t, STAGE_Q, 1), q, t.n, t.d_k, f.in.rope_base);
        rotate_direct(trace_block(&t, STAGE_K, 1), keys, t.m, t.d_k, f.in.rope_base);
        support_assert_close("Q_rotated", q, trace_block(&t, STAGE_Q_ROTATED, 1),
                             (size_t)t.n * 4, 1e-15);
        support_assert_close("K_rotated", keys, trace_block(&t, STAGE_K_ROTATED, 1),
                             (size_t)t.m * 4, 1e-15);
        for (int h = 1; h <= t.heads; h++)
            for (int i = 0; i < t.n; i++)
                for (int j = 0; j < t.m; j++) {
                    double score = 0;
                    for (int c = (h - 1) * t.d_k; c < h * t.d_k; c++)
                        score += q[i * 4 + c] * keys[j * 4 + c];
                    assert_true(fabs(score - trace_value(&t, STAGE_SCORES, h, i, j)) < 1e-14);
                }
        trace_free(&t);
    }
}

/* The lesson's point: with the same two words at positions (1, 3) and (4, 6), the scores agree;
 * at another distance they do not. */
static void test_rope_scores_depend_only_on_distance(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 7, 0, 2, 11);
    memcpy(f.x + 4 * 4, f.x + 1 * 4, 4 * sizeof(double));  /* token 4 = token 1 */
    memcpy(f.x + 6 * 4, f.x + 3 * 4, 4 * sizeof(double));  /* token 6 = token 3 */
    f.in.rope = true;
    trace t;
    fixture_compute(&f.in, &t);
    for (int h = 1; h <= 2; h++) {
        double near = trace_value(&t, STAGE_SCORES, h, 1, 3);
        assert_true(fabs(near - trace_value(&t, STAGE_SCORES, h, 4, 6)) < 1e-14);
        assert_true(fabs(near - trace_value(&t, STAGE_SCORES, h, 1, 6)) > 1e-3);
    }
    trace_free(&t);
}

/* ---- ALiBi and the sliding window ---- */

/* biased = scaled − m_h·|i − j|, and the weights are the softmax of its visible cells. */
static void test_alibi_biases_the_softmax(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 5, 0, 4, 3);
    f.in.alibi = true;
    f.in.mask = MASK_CAUSAL;
    trace t;
    fixture_compute(&f.in, &t);
    for (int h = 1; h <= 4; h++)
        for (int i = 0; i < 5; i++) {
            double e[5], sum = 0;
            for (int j = 0; j < 5; j++) {
                double biased = trace_value(&t, STAGE_SCALED, h, i, j) - ldexp(1.0, -2 * h) * abs(i - j);
                assert_true(trace_value(&t, STAGE_BIASED, h, i, j) == biased);
                e[j] = j > i ? 0 : exp(biased);
                sum += e[j];
            }
            for (int j = 0; j < 5; j++) {
                assert_true(fabs(e[j] / sum - trace_value(&t, STAGE_WEIGHTS, h, i, j)) < 1e-15);
                double masked = trace_value(&t, STAGE_MASKED, h, i, j);
                assert_true(j > i ? masked == -INFINITY
                                  : masked == trace_value(&t, STAGE_BIASED, h, i, j));
            }
        }
    trace_free(&t);
}

/* A window of W shows keys i − W < j ≤ i; a window as long as the sequence is the causal mask,
 * bit for bit. */
static void test_window_mask(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 6, 0, 2, 5);
    f.in.mask = MASK_WINDOW;
    f.in.window = 2;
    trace t;
    fixture_compute(&f.in, &t);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            bool visible = j <= i && j > i - 2;
            assert_true(trace_is_hidden(&t, i, j) == !visible);
            assert_true((trace_value(&t, STAGE_WEIGHTS, 2, i, j) == 0.0) == !visible);
        }
    trace_free(&t);

    f.in.window = 6;
    fixture_compute(&f.in, &t);
    fixture causal = f;
    causal.in.mask = MASK_CAUSAL;
    trace c;
    fixture_compute(&causal.in, &c);
    assert_memory_equal(trace_block(&t, STAGE_WEIGHTS, 1), trace_block(&c, STAGE_WEIGHTS, 1),
                        2 * 6 * 6 * sizeof(double));
    assert_memory_equal(trace_block(&t, STAGE_OUTPUT, 1), trace_block(&c, STAGE_OUTPUT, 1),
                        6 * 4 * sizeof(double));
    trace_free(&t);
    trace_free(&c);
}

/* What the core cannot compute is refused, never computed wrong. */
static void test_refused_combinations(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 3, 0, 1, 1);
    attention_input bad[7];
    for (int k = 0; k < 7; k++)
        bad[k] = f.in;
    bad[0].rope = bad[0].positional = true;  /* two position schemes */
    bad[1].rope = true, bad[1].heads = 4;      /* d_k = 1 is odd */
    bad[2].rope = true, bad[2].rope_base = 0;
    bad[3].rope = true, bad[3].rope_base = NAN;
    bad[4].mask = MASK_WINDOW, bad[4].window = 0;
    fixture cross;
    make_fixture(&cross, 3, 4, 1, 1);
    bad[5] = cross.in, bad[5].alibi = true;
    bad[6] = cross.in, bad[6].mask = MASK_WINDOW, bad[6].window = 2;
    for (int k = 0; k < 7; k++) {
        trace t;
        trace_failure failure;
        assert_int_equal(trace_compute(&bad[k], NULL, &t, &failure), TRACE_ERROR_SHAPE);
        assert_int_equal(failure.status, TRACE_ERROR_SHAPE);
    }
}

/* ---- grouped-query attention ---- */

/* Query head h reads group ⌈h·G/H⌉: consecutive heads share one. */
static void test_kv_groups(void **state)
{
    (void)state;
    trace t = { .heads = 8, .kv_heads = 2 };
    int two[] = { 1, 1, 1, 1, 2, 2, 2, 2 };
    for (int h = 1; h <= 8; h++) {
        assert_int_equal(trace_kv_group(&t, h), two[h - 1]);
        assert_int_equal(trace_kv_group(&t, h), (h * 2 + 7) / 8);
    }
    t.kv_heads = 1;
    for (int h = 1; h <= 8; h++)
        assert_int_equal(trace_kv_group(&t, h), 1);
    t.kv_heads = 8;
    for (int h = 1; h <= 8; h++)
        assert_int_equal(trace_kv_group(&t, h), h);
}

/* K's and V's columns are labelled by key group and the heads that share it, Q's by head; a
 * stage of one group shared by every head still says so; without GQA they are heads. */
static void test_column_groups_name_their_heads(void **state)
{
    (void)state;
    trace t = { .heads = 6, .kv_heads = 2, .d_k = 2 };
    char label[64];
    assert_int_equal(trace_column_group_width(&t, STAGE_V), 2);
    assert_int_equal(trace_column_group_width(&t, STAGE_Q), 2);
    assert_int_equal(trace_column_group_width(&t, STAGE_WEIGHTS), 0);
    assert_string_equal(trace_column_group_label(&t, STAGE_K, 1, false, label, sizeof label),
                        "group 2 (heads 4\xe2\x80\x93" "6)");
    assert_string_equal(trace_column_group_label(&t, STAGE_K, 0, true, label, sizeof label),
                        "heads 1\xe2\x80\x93" "3");
    assert_string_equal(trace_column_group_label(&t, STAGE_Q, 4, false, label, sizeof label),
                        "head 5");
    t.kv_heads = 1;   /* multi-query: one group, still named */
    assert_int_equal(trace_column_group_width(&t, STAGE_K), 2);
    assert_string_equal(trace_column_group_label(&t, STAGE_K, 0, false, label, sizeof label),
                        "group 1 (heads 1\xe2\x80\x93" "6)");
    t.kv_heads = 6;   /* multi-head: K's columns are the heads' */
    assert_string_equal(trace_column_group_label(&t, STAGE_K, 2, false, label, sizeof label),
                        "head 3");
    t.heads = t.kv_heads = 1;
    assert_int_equal(trace_column_group_width(&t, STAGE_K), 0);
    assert_int_equal(trace_column_group_width(&t, STAGE_Q), 0);
}

/* Multi-query attention with RoPE: 2 query heads of d_k 2 read one key/value head, so K and V
 * have 2 columns (W_K, W_V are 4 × 2); head h's scores are Q_rotated_h · K_rotatedᵀ and its
 * context weights · V, for both heads. */
static void test_gqa_matches_direct_computation(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 5, 0, 2, 21);  /* W_K, W_V read as 4 × 2 from their first 8 numbers */
    f.in.kv_heads = 1;
    f.in.rope = true;
    trace t;
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_cols(&t, STAGE_K), 2);
    assert_int_equal(trace_cols(&t, STAGE_V), 2);
    assert_int_equal(trace_cols(&t, STAGE_K_ROTATED), 2);
    double k[5 * 2];
    for (int i = 0; i < 5; i++)
        for (int c = 0; c < 2; c++) {
            k[i * 2 + c] = 0;
            for (int e = 0; e < 4; e++)
                k[i * 2 + c] += f.x[i * 4 + e] * f.w[1][e * 2 + c];
            assert_true(fabs(k[i * 2 + c] - trace_value(&t, STAGE_K, 1, i, c)) < 1e-15);
        }
    for (int i = 0; i < 5; i++) {  /* the one pair of the key head, turned by i radians */
        double x = k[i * 2], y = k[i * 2 + 1];
        k[i * 2] = x * cos(i) - y * sin(i);
        k[i * 2 + 1] = x * sin(i) + y * cos(i);
    }
    support_assert_close("K_rotated", k, trace_block(&t, STAGE_K_ROTATED, 1), 10, 1e-15);
    const double *q = trace_block(&t, STAGE_Q_ROTATED, 1), *v = trace_block(&t, STAGE_V, 1);
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 5; j++) {
                double score = q[i * 4 + 2 * (h - 1)] * k[j * 2]
                             + q[i * 4 + 2 * (h - 1) + 1] * k[j * 2 + 1];
                assert_true(fabs(score - trace_value(&t, STAGE_SCORES, h, i, j)) < 1e-14);
            }
            for (int c = 0; c < 2; c++) {
                double context = 0;
                for (int j = 0; j < 5; j++)
                    context += trace_value(&t, STAGE_WEIGHTS, h, i, j) * v[j * 2 + c];
                assert_true(fabs(context - trace_value(&t, STAGE_CONTEXT, h, i, c)) < 1e-15);
            }
        }
    trace_free(&t);
}

/* kv_heads = heads is multi-head attention, bit for bit; kv_heads not dividing heads is
 * refused. */
static void test_gqa_with_every_head_is_multi_head(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 4, 0, 2, 33);
    trace plain, grouped;
    fixture_compute(&f.in, &plain);
    f.in.kv_heads = 2;
    fixture_compute(&f.in, &grouped);
    for (int s = 0; s < STAGE_COUNT; s++)
        if (plain.block[s])
            assert_memory_equal(plain.block[s], grouped.block[s],
                                trace_stage_bytes(&plain, (stage_id)s));
    trace_free(&plain);
    trace_free(&grouped);
    f.in.kv_heads = 3;
    assert_int_equal(trace_compute(&f.in, NULL, &plain, NULL), TRACE_ERROR_SHAPE);
}

/* ---- explanations and costs ---- */

/* Two tokens with the pair (1, 0) in each of two pairs; identity weights: the rotation of a
 * cell, the bias and the mask can be checked by hand. */
static void test_explanations(void **state)
{
    (void)state;
    static const double e[] = { 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0 };
    static const double identity[] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
    attention_input in = { .n_tokens = 3, .tokens = fixture_labels, .n_source = 3, .d_model = 4,
                           .heads = 2, .embeddings = e, .W_Q = identity, .W_K = identity,
                           .W_V = identity, .W_O = identity, .mask = MASK_WINDOW, .window = 1,
                           .scale = true, .rope = true, .rope_base = 100.0, .alibi = true };
    trace t;
    fixture_compute(&in, &t);
    fixture_explains(&t, "Q_rotated[b,1]", 1,
                     "Q_rotated[b,1] = Q[b,0]·sin θ + Q[b,1]·cos θ, θ = 1 × 100.0^(−0/2) = 1.0 "
                     "(pair 0 of head 1) = (1.0 × 0.8415) + (0.0 × 0.5403) = 0.8415");
    fixture_explains(&t, "K_rotated[c,2]", 1,
                     "K_rotated[c,2] = K[c,2]·cos θ − K[c,3]·sin θ, θ = 2 × 100.0^(−0/2) = 2.0 "
                     "(pair 0 of head 2) = (1.0 × -0.4161) − (0.0 × 0.9093) = -0.4161");
    fixture_explains(&t, "biased[c,a]", 2,
                     "biased[c,a] (head 2) = scaled[c,a] − m_2·|2 − 0| = -0.2943 − 0.0039 × 2 "
                     "= -0.3021");
    fixture_explains(&t, "masked[c,c]", 1,
                     "masked[c,c] (head 1) = biased[c,c] (may attend) = 0.7071");
    fixture_explains(&t, "masked[c,b]", 1,
                     "masked[c,b] (head 1) = −∞ (hidden by the sliding window)");
    fixture_explains(&t, "scores[a,a]", 1,
                     "scores[a,a] (head 1) = rotated q_a · rotated k_a over dims 0…1 = "
                     "(1.0 × 1.0) + (0.0 × 0.0) = 1.0");
    trace_free(&t);
}

static void test_costs(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, 3, 5, 2, 9);
    f.in.rope = true;
    trace t;
    fixture_compute(&f.in, &t);
    cost_counts counts;
    cost_stage(&t, STAGE_K_ROTATED, &counts);  /* 5 keys × 4 columns */
    assert_int_equal(counts.multiplications, 40);
    assert_int_equal(counts.additions, 20);
    assert_int_equal(counts.bytes, 5 * 4 * sizeof(double));
    trace_free(&t);

    make_fixture(&f, 3, 0, 2, 9);
    f.in.alibi = true;
    fixture_compute(&f.in, &t);
    cost_stage(&t, STAGE_BIASED, &counts);  /* 2 heads × 3 × 3 */
    assert_int_equal(counts.multiplications, 18);
    assert_int_equal(counts.additions, 18);
    assert_int_equal(counts.bytes, 18 * sizeof(double));
    trace_free(&t);
}

/* ---- the loader's keys ---- */

#define TWO_TOKENS \
    "title: t\n" \
    "tokens: [a, b, a]\n" \
    "embeddings:\n" \
    "  a: [1, 0, 0, 1]\n" \
    "  b: [0, 1, 1, 0]\n"

static void test_lesson_keys(void **state)
{
    (void)state;
    lesson l;
    fixture_load(TWO_TOKENS "positional: rope\n", &l);
    assert_true(l.input.rope && !l.input.positional && !l.input.alibi);
    assert_true(l.input.rope_base == 10000.0);
    lesson_free(&l);
    fixture_load(TWO_TOKENS "positional: rope\nrope_base: 500\nbias: alibi\n", &l);
    assert_true(l.input.rope && l.input.alibi && l.input.rope_base == 500.0);
    lesson_free(&l);
    fixture_load(TWO_TOKENS "mask: {window: 2}\n", &l);
    assert_int_equal(l.input.mask, MASK_WINDOW);
    assert_int_equal(l.input.window, 2);
    static const unsigned char cells[] = { 1, 0, 0, 1, 1, 0, 0, 1, 1 };
    assert_memory_equal(l.mask_cells, cells, sizeof cells);
    lesson_free(&l);
    fixture_load(TWO_TOKENS "heads: 2\nkv_heads: 1\nW_K: [[1, 0], [0, 1], [1, 1], [0, 0]]\n"
            "W_V: {random: normal, seed: 3}\n", &l);
    assert_int_equal(l.input.kv_heads, 1);
    static const double w_k[] = { 1, 0, 0, 1, 1, 1, 0, 0 };
    assert_memory_equal(l.params[PARAM_W_K], w_k, sizeof w_k);
    trace t;
    fixture_compute(&l.input, &t);
    assert_int_equal(trace_cols(&t, STAGE_V), 2);
    trace_free(&t);
    lesson_free(&l);
    fixture_load(TWO_TOKENS "positional: sinusoidal\nbias: none\n", &l);
    assert_true(l.input.positional && !l.input.rope && !l.input.alibi);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alibi_slopes),
        cmocka_unit_test(test_rope_matches_the_formula),
        cmocka_unit_test(test_rope_scores_depend_only_on_distance),
        cmocka_unit_test(test_alibi_biases_the_softmax),
        cmocka_unit_test(test_window_mask),
        cmocka_unit_test(test_refused_combinations),
        cmocka_unit_test(test_kv_groups),
        cmocka_unit_test(test_column_groups_name_their_heads),
        cmocka_unit_test(test_gqa_matches_direct_computation),
        cmocka_unit_test(test_gqa_with_every_head_is_multi_head),
        cmocka_unit_test(test_explanations),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_lesson_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
