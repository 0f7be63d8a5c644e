/* Dropout and what each head adds (issue 28, items 3 and 4): the keep mask reproduces from its
 * seed by the documented generator, kept cells are weights / (1 − p) exactly, the fraction
 * dropped over a large lesson is within 3σ of p, p 0 and no dropout change no number, the
 * gradient passes through the mask; Σ_h head_output + b_O is output within 1e-12 and
 * weighted_norms is its definition; decoding draws the same mask; and the explanations and
 * formulas word for word. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "cost.h"
#include "decode.h"
#include "random.h"
#include "trace.h"
#include "lesson.h"

/* Three tokens of d_model 4, two heads, random weights and a bias on the output. */
#define LESSON \
    "title: dropout\n" \
    "tokens: [the, cat, sat]\n" \
    "heads: 2\n" \
    "embeddings:\n" \
    "  the: [1, 0.5, -1, 2]\n" \
    "  cat: [0.2, 1.5, 0.3, -0.7]\n" \
    "  sat: [-1.2, 0.4, 0.9, 0.1]\n" \
    "W_Q: {random: xavier, seed: 1}\n" \
    "W_K: {random: xavier, seed: 2}\n" \
    "W_V: {random: xavier, seed: 3}\n" \
    "W_O: {random: xavier, seed: 4}\n" \
    "b_O: [0.1, -0.2, 0.3, 0.05]\n"

/* The generator as lessons/README.md documents it, written again here from the words: row i of
 * head h draws its keys in order from xoshiro256** seeded with S + 2^32 · ((h − 1) · n + i), a
 * cell kept when its draw is ≥ p. */
static void expected_keep(uint64_t seed, double p, int heads, int n, int m, bool *keep)
{
    for (int r = 0; r < heads * n; r++) {
        random_state state;
        random_seed(&state, seed + ((uint64_t)r << 32));
        for (int j = 0; j < m; j++)
            keep[r * m + j] = random_uniform(&state) >= p;
    }
}

static void test_mask_reproduces_from_its_seed(void **state)
{
    (void)state;
    lesson l, again;
    trace t, u;
    fixture_load_traced(LESSON "dropout: {p: 0.4, seed: 9}\n", &l, &t);
    fixture_load_traced(LESSON "dropout: {p: 0.4, seed: 9}\n", &again, &u);
    bool keep[2 * 3 * 3];
    expected_keep(9, 0.4, 2, 3, 3, keep);
    int kept = 0;
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                bool k = keep[((h - 1) * 3 + i) * 3 + j];
                double w = trace_value(&t, STAGE_WEIGHTS, h, i, j),
                       d = trace_value(&t, STAGE_DROPPED, h, i, j);
                assert_true(trace_dropout_keeps(&t, h, i, j) == k);
                if (k) assert_true(d == w / (1 - 0.4));   /* exactly, not nearly */
                else assert_true(d == 0.0);
                double d_again = trace_value(&u, STAGE_DROPPED, h, i, j);
                assert_memory_equal(&d, &d_again, sizeof d);
                kept += k;
            }
    assert_true(kept > 0 && kept < 18);   /* a mask that keeps some and drops some */
    /* context reads dropped: its cell is Σ_j dropped · v, not Σ_j weights · v */
    assert_true(trace_stage_node_input(&t, STAGE_CONTEXT, 0) == STAGE_DROPPED);
    trace_free(&u);
    lesson_free(&again);
    fixture_load_traced(LESSON "dropout: {p: 0.4, seed: 10}\n", &again, &u);
    bool differs = false;   /* another seed, another mask */
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                differs |= trace_dropout_keeps(&t, h, i, j) != trace_dropout_keeps(&u, h, i, j);
    assert_true(differs);
    trace_free(&u);
    lesson_free(&again);
    trace_free(&t);
    lesson_free(&l);
}

/* 300 tokens, 2 heads: 180 000 draws; the fraction dropped is within 3σ = 3 √(p(1 − p)/N) of p,
 * and so is each head's (90 000 draws); every kept cell is exactly weights / (1 − p). */
static void test_dropped_fraction_is_within_three_sigma(void **state)
{
    (void)state;
    enum { N = 300 };
    size_t size = 64 + (size_t)N * 8 + 256;
    char *text = malloc(size);
    int at = snprintf(text, size, "title: many\nd_model: 4\nheads: 2\ntokens: [");
    for (int i = 0; i < N; i++) at += snprintf(text + at, size - (size_t)at, "%st%d", i ? ", " : "", i);
    snprintf(text + at, size - (size_t)at, "]\nembeddings: {random: normal, seed: 5}\n"
             "dropout: {p: 0.3, seed: 77}\n");
    lesson l;
    trace t;
    fixture_load_traced(text, &l, &t);
    long dropped = 0;
    for (int h = 1; h <= 2; h++) {
        long head_dropped = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double d = trace_value(&t, STAGE_DROPPED, h, i, j);
                head_dropped += d == 0.0;
                /* every kept one is weights / (1 − p) to the bit, not weights × 1/(1 − p) */
                assert_true(d == 0.0 || d == trace_value(&t, STAGE_WEIGHTS, h, i, j) / (1 - 0.3));
            }
        double cells = (double)N * N, fraction = (double)head_dropped / cells;
        assert_true(fabs(fraction - 0.3) <= 3 * sqrt(0.3 * 0.7 / cells));
        dropped += head_dropped;
    }
    double cells = 2.0 * N * N, fraction = (double)dropped / cells;
    assert_true(fabs(fraction - 0.3) <= 3 * sqrt(0.3 * 0.7 / cells));
    trace_free(&t);
    lesson_free(&l);
    free(text);
}

/* p 0 keeps every weight as it is: dropped is weights and context, output are the lesson's
 * without dropout, bit for bit; without the key there is no node. */
static void test_p_zero_and_no_dropout_change_nothing(void **state)
{
    (void)state;
    lesson l, plain;
    trace t, u;
    fixture_load_traced(LESSON "dropout: {p: 0, seed: 3}\n", &l, &t);
    fixture_load_traced(LESSON, &plain, &u);
    assert_false(trace_has_stage(&u, STAGE_DROPPED));
    assert_false(trace_has_stage(&u, STAGE_HEAD_OUTPUT));
    assert_false(trace_has_stage(&u, STAGE_WEIGHTED_NORMS));
    assert_true(trace_stage_node_input(&u, STAGE_CONTEXT, 0) == STAGE_WEIGHTS);
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 4; c++) {
            double a = trace_value(&t, STAGE_OUTPUT, 1, i, c), b = trace_value(&u, STAGE_OUTPUT, 1, i, c);
            assert_memory_equal(&a, &b, sizeof a);
        }
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                assert_true(trace_value(&t, STAGE_DROPPED, h, i, j)
                            == trace_value(&t, STAGE_WEIGHTS, h, i, j));
    assert_true(fabs(trace_value(&t, STAGE_ROW_SUMS, 1, 1, 0) - 1.0) < 1e-15);
    fixture_explains(&t, "row_sums[cat,0]", 1, "row_sums[cat,0] (head 1) = Σ_j dropped[cat,j], 1 "
                     "as the weights' (p 0 keeps every weight as it is) = 0.0863 / 1.0 [the] + "
                     "0.5668 / 1.0 [cat] + 0.3469 / 1.0 [sat] = 1.0");
    trace_free(&u);
    trace_free(&t);
    lesson_free(&plain);
    lesson_free(&l);
}

/* d_weights = d_dropped × keep / (1 − p): a dropped weight's gradient is 0, a kept one's is
 * d_dropped / (1 − p); d_dropped is d_context · Vᵀ, what d_weights is without dropout. */
static void test_gradient_passes_through_the_mask(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "dropout: {p: 0.5, seed: 21}\nmask: causal\n"
                        "loss: {target: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}\n", &l, &t);
    int zero = 0, passed = 0;
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double d = trace_value(&t, STAGE_D_DROPPED, h, i, j);
                double keep = trace_dropout_keeps(&t, h, i, j) ? 1.0 : 0.0;
                assert_true(trace_value(&t, STAGE_D_WEIGHTS, h, i, j) == d * keep / 0.5);
                zero += keep == 0.0 && d != 0.0;
                passed += keep == 1.0 && d != 0.0;
            }
    assert_true(zero > 0 && passed > 0);   /* the lesson shows both */
    trace_free(&t);
    lesson_free(&l);
}

/* Σ_h head_output + b_O = output within 1e-12, with and without dropout and under GQA. */
static void check_heads_sum_to_output(const char *text)
{
    lesson l;
    trace t;
    fixture_load_traced(text, &l, &t);
    for (int i = 0; i < t.n; i++)
        for (int c = 0; c < t.d_model; c++) {
            double sum = l.input.b_O ? l.input.b_O[c] : 0.0;
            for (int h = 1; h <= t.heads; h++)
                sum += trace_value(&t, STAGE_HEAD_OUTPUT, h, i, c);
            assert_true(fabs(sum - trace_value(&t, STAGE_OUTPUT, 1, i, c)) < 1e-12);
        }
    trace_free(&t);
    lesson_free(&l);
}

static void test_head_outputs_sum_to_output(void **state)
{
    (void)state;
    check_heads_sum_to_output(LESSON "contributions: true\n");
    check_heads_sum_to_output(LESSON "contributions: true\ndropout: {p: 0.25, seed: 4}\n");
    check_heads_sum_to_output(LESSON "contributions: true\nkv_heads: 1\nmask: causal\n");
}

/* weighted_norms[i,j] = weights[i,j] · ‖V_h[j] · W_O^h‖, by plain loops here. */
static void test_weighted_norms_by_definition(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "contributions: true\nb_V: [0.5, -0.5, 0.25, 1]\n", &l, &t);
    assert_true(stage_pair(STAGE_WEIGHTS) == STAGE_WEIGHTED_NORMS);
    assert_true(stage_pair(STAGE_WEIGHTED_NORMS) == STAGE_WEIGHTS);
    assert_true(stage_pair(STAGE_SCORES) == STAGE_COUNT);
    const double *w_o = l.input.W_O;
    for (int h = 1; h <= 2; h++)
        for (int j = 0; j < 3; j++) {
            double squares = 0.0;
            for (int c = 0; c < 4; c++) {
                double x = 0.0;
                for (int k = 0; k < 2; k++)
                    x += trace_value(&t, STAGE_V, 1, j, (h - 1) * 2 + k)
                         * w_o[((h - 1) * 2 + k) * 4 + c];
                squares += x * x;
            }
            for (int i = 0; i < 3; i++) {
                double expected = trace_value(&t, STAGE_WEIGHTS, h, i, j) * sqrt(squares);
                assert_true(fabs(trace_value(&t, STAGE_WEIGHTED_NORMS, h, i, j) - expected)
                            < 1e-12);
            }
        }
    trace_free(&t);
    lesson_free(&l);
}

/* Decoding one token at a time draws each row's keep from its place in the stream: the cache's
 * dropped is the whole pass's, bit for bit. */
static void test_decoding_draws_the_same_mask(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "mask: causal\ndecode: true\ncontributions: true\n"
                        "dropout: {p: 0.3, seed: 12}\n", &l, &t);
    decode_state d;
    assert_true(decode_begin(&d, &t));
    for (int p = 0; p < t.n; p++)
        decode_token(&d, NULL);
    for (int h = 1; h <= 2; h++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j <= i; j++) {
                double whole = trace_value(&t, STAGE_DROPPED, h, i, j),
                       decoded = decode_value(&d, STAGE_DROPPED, h, i, j);
                assert_memory_equal(&whole, &decoded, sizeof whole);
                whole = trace_value(&t, STAGE_WEIGHTED_NORMS, h, i, j);
                decoded = decode_value(&d, STAGE_WEIGHTED_NORMS, h, i, j);
                assert_memory_equal(&whole, &decoded, sizeof whole);
            }
    decode_free(&d);
    trace_free(&t);
    lesson_free(&l);
}

/* --stats' counts of the new stages by hand (3 tokens, d_model 4, 2 heads of d_k 2), and the
 * backward through the mask: a multiplication, a division and an addition a cell. */
static void test_counts_by_hand(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "dropout: {p: 0.4, seed: 9}\ncontributions: true\n"
                        "loss: {target: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}\n", &l, &t);
    cost_counts c = { 0 };
    cost_stage(&t, STAGE_DROPPED, &c);   /* 2 heads × 9 cells: × keep, / (1 − p) */
    assert_int_equal(c.multiplications, 18);
    assert_int_equal(c.divisions, 18);
    assert_int_equal(c.additions, 0);
    c = (cost_counts){ 0 };
    cost_stage(&t, STAGE_ROW_SUMS, &c);   /* 2 heads × 3 rows × 2 additions */
    assert_int_equal(c.additions, 12);
    c = (cost_counts){ 0 };
    cost_stage(&t, STAGE_HEAD_OUTPUT, &c);   /* 2 heads × 3 × 4 cells of 2 terms */
    assert_int_equal(c.multiplications, 48);
    assert_int_equal(c.additions, 24);
    c = (cost_counts){ 0 };
    /* 2 heads × 3 keys: 4 dot products of 2 terms and 4 squares summed (12 multiplications and
     * 12 additions as the code's fused multiply-adds count them), then 3 × 3 weights a head */
    cost_stage(&t, STAGE_WEIGHTED_NORMS, &c);
    assert_int_equal(c.multiplications, 2 * 3 * 12 + 2 * 9);
    assert_int_equal(c.additions, 2 * 3 * 12);
    c = (cost_counts){ 0 };
    cost_stage(&t, STAGE_D_WEIGHTS, &c);   /* read by dropped only: 2 heads × 9 cells × 3 */
    assert_int_equal(c.multiplications, 18);
    assert_int_equal(c.divisions, 18);
    assert_int_equal(c.additions, 18);
    trace_free(&t);
    lesson_free(&l);
}

static void test_explanations_and_formulas(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "dropout: {p: 0.4, seed: 9}\ncontributions: true\n"
                        "loss: {target: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}\n", &l, &t);
    char text[512];
    trace_stage_formula(&t, STAGE_DROPPED, text, sizeof text);
    assert_string_equal(text, "dropped = weights × keep / (1 − p), p = 0.4, keep 0 or 1 drawn "
                              "from seed 9 (training mode; rows no longer sum to 1)");
    trace_stage_formula(&t, STAGE_ROW_SUMS, text, sizeof text);
    assert_string_equal(text, "row_sums = Σ_j dropped, each row's total over its keys (1 for "
                              "weights, not for dropped)");
    trace_stage_formula(&t, STAGE_HEAD_OUTPUT, text, sizeof text);
    assert_string_equal(text, "head_output = context_h · W_O^h, what head h adds to output (W_O^h: "
                              "head h's d_k rows of W_O; Σ_h head_output + b_O = output)");
    trace_stage_formula(&t, STAGE_WEIGHTED_NORMS, text, sizeof text);
    assert_string_equal(text, "weighted_norms = dropped_ij · ‖V_j · W_O^h‖, what key j sends "
                              "query i through head h, not the weight alone (Kobayashi et al. "
                              "2020)");
    fixture_explains(&t, "dropped[cat,the]", 1, "dropped[cat,the] (head 1) = weights[cat,the] × "
                     "keep / (1 − p), kept (its draw 0.5236 ≥ p 0.4; kept weights are × 1/(1 − p) "
                     "= 1.6667) = 0.0863 × 1 / 0.6 = 0.1439");
    fixture_explains(&t, "dropped[cat,cat]", 1, "dropped[cat,cat] (head 1) = weights[cat,cat] × "
                     "keep / (1 − p), dropped (its draw 0.0302 < p 0.4; a dropped weight is 0) = "
                     "0.5668 × 0 / 0.6 = 0.0");
    fixture_explains(&t, "row_sums[cat,0]", 1, "row_sums[cat,0] (head 1) = Σ_j dropped[cat,j], not "
                     "1: 2 of its 3 weights kept, each × 1/(1 − p) = 1.6667, the dropped one's "
                     "share lost (1 only on average over masks) = 0.0863 / 0.6 [the] + 0 "
                     "(dropped) [cat] + 0.3469 / 0.6 [sat] = 0.722");
    fixture_explains(&t, "row_sums[cat,0]", 2, "row_sums[cat,0] (head 2) = Σ_j dropped[cat,j], not "
                     "1: all 3 of its weights kept, each × 1/(1 − p) = 1.6667 (1 only on average "
                     "over masks) = 0.2935 / 0.6 [the] + 0.4693 / 0.6 [cat] + 0.2371 / 0.6 [sat] "
                     "= 1.6667");
    fixture_explains(&t, "row_sums[the,0]", 1, "row_sums[the,0] (head 1) = Σ_j dropped[the,j], not "
                     "1: every one of its weights dropped, so the takes nothing from any key = "
                     "0 (dropped) [the] + 0 (dropped) [cat] + 0 (dropped) [sat] = 0.0");
    fixture_explains(&t, "d_weights[cat,the]", 1, "d_weights[cat,the] (head 1) = "
                     "d_dropped[cat,the] × keep / (1 − p) = -1.0985 × 1 / 0.6 (kept: its gradient "
                     "passes, scaled as the weight was) = -1.8309");
    fixture_explains(&t, "d_weights[cat,cat]", 1, "d_weights[cat,cat] (head 1) = "
                     "d_dropped[cat,cat] × keep / (1 − p) = 0.5818 × 0 / 0.6 (dropped: no "
                     "gradient reaches the weight) = 0.0");
    fixture_explains(&t, "d_dropped[cat,the]", 1, "d_dropped[cat,the] (head 1) = Σ_c "
                     "d_context[cat,c] · V[the,c] = (-1.3962 × 0.0008) + (-0.7007 × 1.5662) = "
                     "-1.0985");
    fixture_explains(&t, "head_output[cat,1]", 1, "head_output[cat,1] (head 1) = Σ_c "
                     "context[cat,c] × W_O[0 + c,1] (head 1's rows of W_O; b_O is added once, in "
                     "output) = (0.1539 × 0.7128) + (-0.2332 × 0.1938) = 0.0645");
    fixture_explains(&t, "weighted_norms[cat,sat]", 1, "weighted_norms[cat,sat] (head 1) = "
                     "dropped[cat,sat] × ‖V[sat] · W_O (head 1's rows)‖, what sat sends cat "
                     "through head 1 = 0.5781 × 0.2839 = 0.1641");
    trace_free(&t);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_reproduces_from_its_seed),
        cmocka_unit_test(test_dropped_fraction_is_within_three_sigma),
        cmocka_unit_test(test_p_zero_and_no_dropout_change_nothing),
        cmocka_unit_test(test_gradient_passes_through_the_mask),
        cmocka_unit_test(test_head_outputs_sum_to_output),
        cmocka_unit_test(test_weighted_norms_by_definition),
        cmocka_unit_test(test_decoding_draws_the_same_mask),
        cmocka_unit_test(test_counts_by_hand),
        cmocka_unit_test(test_explanations_and_formulas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
