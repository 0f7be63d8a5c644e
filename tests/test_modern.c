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
    double x[8 * 8], source[8 * 8], w[4][8 * 8];
    attention_input in;
} fixture;

/* n tokens of d_model numbers (at most 8 of each) and heads heads. */
static void make_fixture_sized(fixture *f, int n, int m, int d_model, int heads, unsigned seed)
{
    support_fill(f->x, sizeof f->x / sizeof f->x[0], seed);
    support_fill(f->source, sizeof f->source / sizeof f->source[0], seed + 1);
    for (int i = 0; i < 4; i++)
        support_fill(f->w[i], (size_t)d_model * (size_t)d_model, seed + 2 + (unsigned)i);
    f->in = (attention_input){ .n_tokens = n, .tokens = fixture_labels, .n_source = n,
                               .d_model = d_model, .heads = heads, .embeddings = f->x,
                               .W_Q = f->w[0], .W_K = f->w[1], .W_V = f->w[2], .W_O = f->w[3],
                               .mask = MASK_NONE, .scale = true, .rope_base = 10000.0 };
    if (m > 0) {
        f->in.n_source = m;
        f->in.source = fixture_labels + 2;
        f->in.source_embeddings = f->source;
    }
}

static void make_fixture(fixture *f, int n, int m, int heads, unsigned seed)
{
    make_fixture_sized(f, n, m, 4, heads, seed);
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

/* Each row of a (rows × width) matrix turned as RoFormer writes it, with heads of d_k columns:
 * the pair (x, y) at columns (c, c+1), c = 2p within its head, becomes (x·cos a − y·sin a,
 * x·sin a + y·cos a) with a = pos · base^(−2p/d_k). */
static void rotate_direct(const double *from, double *to, int rows, int width, int d_k,
                          double base)
{
    for (int pos = 0; pos < rows; pos++)
        for (int c = 0; c < width; c += 2) {
            int p = (c % d_k) / 2;
            double a = pos / pow(base, 2.0 * p / d_k), x = from[pos * width + c],
                   y = from[pos * width + c + 1];
            to[pos * width + c] = x * cos(a) - y * sin(a);
            to[pos * width + c + 1] = x * sin(a) + y * cos(a);
        }
}

/* Q_rotated and K_rotated against the formula, for one head and two, and in cross-attention
 * (keys by their index in the source); the scores read the rotated rows. d_k comes from the
 * shape here, not from the trace. The last shape has two heads of two pairs each (d_model 8):
 * the only one where the angle's divisor d_k is neither d_model nor irrelevant (one pair has
 * p = 0 only), so an angle computed over d_model, or from the column's index across heads
 * instead of within its head, fails there alone. */
static void test_rope_matches_the_formula(void **state)
{
    (void)state;
    /* n, m (0: self), heads, d_model */
    int shapes[][4] = { { 5, 0, 1, 4 }, { 5, 0, 2, 4 }, { 3, 6, 2, 4 }, { 5, 0, 2, 8 } };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        fixture f;
        int heads = shapes[k][2], d = shapes[k][3], d_k = d / heads;
        make_fixture_sized(&f, shapes[k][0], shapes[k][1], d, heads, 7);
        f.in.rope = true;
        f.in.rope_base = k == 1 ? 100.0 : 10000.0;
        trace t;
        fixture_compute(&f.in, &t);
        double q[8 * 8], keys[8 * 8];
        rotate_direct(trace_block(&t, STAGE_Q, 1), q, t.n, d, d_k, f.in.rope_base);
        rotate_direct(trace_block(&t, STAGE_K, 1), keys, t.m, d, d_k, f.in.rope_base);
        support_assert_close("Q_rotated", q, trace_block(&t, STAGE_Q_ROTATED, 1),
                             (size_t)t.n * (size_t)d, 1e-15);
        support_assert_close("K_rotated", keys, trace_block(&t, STAGE_K_ROTATED, 1),
                             (size_t)t.m * (size_t)d, 1e-15);
        for (int h = 1; h <= heads; h++)
            for (int i = 0; i < t.n; i++)
                for (int j = 0; j < t.m; j++) {
                    double score = 0;
                    for (int c = (h - 1) * d_k; c < h * d_k; c++)
                        score += q[i * d + c] * keys[j * d + c];
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

/* biased = scores/√d_k − m_h·|i − j|, and the weights are the softmax of its visible cells;
 * scaled is checked against the scores divided here. Two heads of d_k 4 (d_model 8): with
 * d_k = 1 a scaling applied twice, or not at all, would change nothing. */
static void test_alibi_biases_the_softmax(void **state)
{
    (void)state;
    fixture f;
    enum { N = 5, HEADS = 2, D_MODEL = 8 };
    make_fixture_sized(&f, N, 0, D_MODEL, HEADS, 3);
    f.in.alibi = true;
    f.in.mask = MASK_CAUSAL;
    trace t;
    fixture_compute(&f.in, &t);
    double root_d_k = sqrt(D_MODEL / HEADS);
    for (int h = 1; h <= HEADS; h++)
        for (int i = 0; i < N; i++) {
            double e[N], sum = 0;
            for (int j = 0; j < N; j++) {
                double scaled = trace_value(&t, STAGE_SCORES, h, i, j) / root_d_k;
                assert_true(trace_value(&t, STAGE_SCALED, h, i, j) == scaled);
                /* the paper's slopes 2^(−8h/H): 2^-4 and 2^-8 for two heads */
                double biased = scaled - ldexp(1.0, -8 * h / HEADS) * abs(i - j);
                assert_true(trace_value(&t, STAGE_BIASED, h, i, j) == biased);
                e[j] = j > i ? 0 : exp(biased);
                sum += e[j];
            }
            for (int j = 0; j < N; j++) {
                assert_true(fabs(e[j] / sum - trace_value(&t, STAGE_WEIGHTS, h, i, j)) < 1e-15);
                double masked = trace_value(&t, STAGE_MASKED, h, i, j);
                assert_true(j > i ? masked == -INFINITY
                                  : masked == trace_value(&t, STAGE_BIASED, h, i, j));
            }
        }
    trace_free(&t);
}

/* A window of W shows keys i − W < j ≤ i; a window as long as the sequence, or longer, is the
 * causal mask, bit for bit. The window of 2 is shorter than the sentence (6), so a bound off by
 * one either way hides or shows a cell of every row from the third on. */
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

    fixture causal = f;
    causal.in.mask = MASK_CAUSAL;
    trace c;
    fixture_compute(&causal.in, &c);
    static const int as_long_or_longer[] = { 6, 9 };
    for (size_t w = 0; w < sizeof as_long_or_longer / sizeof as_long_or_longer[0]; w++) {
        f.in.window = as_long_or_longer[w];
        fixture_compute(&f.in, &t);
        assert_memory_equal(trace_block(&t, STAGE_WEIGHTS, 1), trace_block(&c, STAGE_WEIGHTS, 1),
                            2 * 6 * 6 * sizeof(double));
        assert_memory_equal(trace_block(&t, STAGE_OUTPUT, 1), trace_block(&c, STAGE_OUTPUT, 1),
                            6 * 4 * sizeof(double));
        trace_free(&t);
    }
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

/* Grouped-query attention with RoPE against a direct computation: K and V have kv_heads · d_k
 * columns (W_K, W_V are d_model × kv_heads·d_k, read from the first numbers of their arrays);
 * query head h reads group g = (h − 1) / (heads / kv_heads); its scores are Q_rotated_h ·
 * K_rotated_gᵀ and its context weights · V_g. Multi-query (2 heads, one group) and 4 heads in 2
 * groups: only the second can tell which group a head reads (with one group every head reads
 * it), and a group taken as h / kv_heads or (h − 1) % kv_heads fails there. d_k is 2: one pair,
 * turned by pos radians. */
static void check_grouped(int heads, int kv_heads, int d_model, unsigned seed)
{
    fixture f;
    make_fixture_sized(&f, 5, 0, d_model, heads, seed);
    f.in.kv_heads = kv_heads;
    f.in.rope = true;
    trace t;
    fixture_compute(&f.in, &t);
    int d_k = d_model / heads, width = kv_heads * d_k, per_group = heads / kv_heads;
    assert_int_equal(d_k, 2);
    assert_int_equal(trace_cols(&t, STAGE_K), width);
    assert_int_equal(trace_cols(&t, STAGE_V), width);
    assert_int_equal(trace_cols(&t, STAGE_K_ROTATED), width);
    double k[5 * 8];
    for (int i = 0; i < 5; i++)
        for (int c = 0; c < width; c++) {
            k[i * width + c] = 0;
            for (int e = 0; e < d_model; e++)
                k[i * width + c] += f.x[i * d_model + e] * f.w[1][e * width + c];
            assert_true(fabs(k[i * width + c] - trace_value(&t, STAGE_K, 1, i, c)) < 1e-15);
        }
    for (int i = 0; i < 5; i++)
        for (int c = 0; c < width; c += 2) {  /* each group's one pair, turned by i radians */
            double x = k[i * width + c], y = k[i * width + c + 1];
            k[i * width + c] = x * cos(i) - y * sin(i);
            k[i * width + c + 1] = x * sin(i) + y * cos(i);
        }
    support_assert_close("K_rotated", k, trace_block(&t, STAGE_K_ROTATED, 1), (size_t)(5 * width),
                         1e-15);
    const double *q = trace_block(&t, STAGE_Q_ROTATED, 1), *v = trace_block(&t, STAGE_V, 1);
    for (int h = 1; h <= heads; h++) {
        int g = (h - 1) / per_group, qc = (h - 1) * d_k, kc = g * d_k;
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 5; j++) {
                double score = q[i * d_model + qc] * k[j * width + kc]
                             + q[i * d_model + qc + 1] * k[j * width + kc + 1];
                assert_true(fabs(score - trace_value(&t, STAGE_SCORES, h, i, j)) < 1e-14);
            }
            for (int c = 0; c < d_k; c++) {
                double context = 0;
                for (int j = 0; j < 5; j++)
                    context += trace_value(&t, STAGE_WEIGHTS, h, i, j) * v[j * width + kc + c];
                assert_true(fabs(context - trace_value(&t, STAGE_CONTEXT, h, i, c)) < 1e-15);
            }
        }
    }
    trace_free(&t);
}

static void test_gqa_matches_direct_computation(void **state)
{
    (void)state;
    check_grouped(2, 1, 4, 21);
    check_grouped(4, 2, 8, 22);
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
