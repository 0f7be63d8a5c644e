/* The norm family (issue 28): normed by layer norm and RMS norm against numbers worked out by
 * hand, where it sits (Q reads it before attention; after the residual it is the last stage),
 * residual = input + output, the loader's good forms and defaults, the core's refusals, and
 * the explanations and formulas of the new rows and gradients, word for word. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "trace.h"
#include "lesson.h"

/* Two tokens of d_model 4, one head, identity weights: Q is then what Q reads. */
#define LESSON \
    "title: norm\n" \
    "tokens: [cat, sat]\n" \
    "embeddings:\n" \
    "  cat: [1, 2, 3, 4]\n" \
    "  sat: [2, 2, 2, 2]\n"

static void test_layer_norm_by_hand(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "norm: {kind: layer}\n", &l, &t);
    /* cat: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25 */
    double root = sqrt(1.25 + 1e-5);
    assert_true(fabs(trace_value(&t, STAGE_NORMED, 1, 0, 0) - (1 - 2.5) / root) < 1e-15);
    assert_true(fabs(trace_value(&t, STAGE_NORMED, 1, 0, 3) - (4 - 2.5) / root) < 1e-15);
    /* sat is constant: variance 0, and eps keeps the division finite: x − mean = 0 exactly */
    for (int c = 0; c < 4; c++)
        assert_true(trace_value(&t, STAGE_NORMED, 1, 1, c) == 0.0);
    /* identity W_Q: Q is normed, which it reads before attention */
    for (int c = 0; c < 4; c++)
        assert_true(trace_value(&t, STAGE_Q, 1, 0, c) == trace_value(&t, STAGE_NORMED, 1, 0, c));
    assert_false(trace_has_stage(&t, STAGE_RESIDUAL));
    assert_false(trace_has_stage(&t, STAGE_NORMED_POST));
    trace_free(&t);
    lesson_free(&l);
}

static void test_rms_norm_by_hand(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "norm: {kind: rms, eps: 0.01, gain: [1, 2, 0.5, -1]}\n", &l, &t);
    /* cat: mean of squares (1 + 4 + 9 + 16) / 4 = 7.5; nothing subtracted, no bias */
    double root = sqrt(7.5 + 0.01);
    assert_true(fabs(trace_value(&t, STAGE_NORMED, 1, 0, 1) - 2 / root * 2) < 1e-15);
    assert_true(fabs(trace_value(&t, STAGE_NORMED, 1, 0, 3) - 4 / root * -1) < 1e-15);
    assert_true(fabs(trace_value(&t, STAGE_NORMED, 1, 1, 0) - 2 / sqrt(4.01)) < 1e-15);
    assert_null(l.input.norm_bias);
    trace_free(&t);
    lesson_free(&l);
}

/* After the residual: residual = input + output bit for bit, and normed, its norm, is last. */
static void test_post_norm_follows_the_residual(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "norm: {kind: layer, place: post, bias: [0.5, 0, 0, 0]}\n"
                        "residual: true\n", &l, &t);
    assert_false(trace_has_stage(&t, STAGE_NORMED));
    assert_true(trace_has_stage(&t, STAGE_NORMED_POST));
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 4; c++)
            assert_true(trace_value(&t, STAGE_RESIDUAL, 1, i, c)
                        == trace_value(&t, STAGE_INPUT, 1, i, c)
                           + trace_value(&t, STAGE_OUTPUT, 1, i, c));
    /* each normalised row has mean 0 before the bias: its columns sum to the bias's 0.5 */
    double sum = 0.0;
    for (int c = 0; c < 4; c++)
        sum += trace_value(&t, STAGE_NORMED_POST, 1, 0, c);
    assert_true(fabs(sum - 0.5) < 1e-12);
    /* Q reads input (no norm before attention); the name finds the one normed there is */
    assert_int_equal(trace_stage_node_input(&t, STAGE_Q, 0), STAGE_INPUT);
    assert_int_equal(trace_find_stage(t.in, "normed"), STAGE_NORMED_POST);
    char error[256];
    trace_cell cell;
    assert_true(trace_cell_parse(&t, "normed[cat,0]", 1, &cell, error, sizeof error));
    assert_int_equal(cell.stage, STAGE_NORMED_POST);
    trace_free(&t);
    lesson_free(&l);
}

/* The loader's defaults: kind layer, place pre, eps 1e-5, gain ones, bias zeros (as
 * torch.nn.LayerNorm starts); without norm: no gain, no bias, no stage. */
static void test_loader_defaults(void **state)
{
    (void)state;
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(LESSON "norm: {}\n", &l, message, sizeof message),
                     LESSON_OK);
    assert_int_equal(l.input.norm, NORM_LAYER);
    assert_false(l.input.norm_post);
    assert_true(l.input.norm_eps == 1e-5);
    assert_false(l.input.residual);
    for (int c = 0; c < 4; c++)
        assert_true(l.input.gain[c] == 1.0 && l.input.norm_bias[c] == 0.0);
    lesson_free(&l);
    assert_int_equal(fixture_load_status(LESSON, &l, message, sizeof message), LESSON_OK);
    assert_int_equal(l.input.norm, NORM_NONE);
    assert_null(l.input.gain);
    assert_null(l.input.norm_bias);
    lesson_free(&l);
    /* a gain in any form a bias takes */
    assert_int_equal(fixture_load_status(LESSON "norm: {gain: {random: normal, seed: 3}}\n",
                                         &l, message, sizeof message), LESSON_OK);
    assert_true(l.input.gain[0] != 1.0);
    lesson_free(&l);
    fixture_refused(LESSON "norm: {kind: rms, bias: [0, 0, 0, 0]}\n", "an RMS norm has no bias");
    fixture_refused(LESSON "norm: {place: post}\n", "needs 'residual: true' beside it");
    fixture_refused(LESSON "norm: {eps: 0}\n", "norm: eps must be a number greater than 0");
    fixture_refused(LESSON "norm: {gain: [1, 2]}\n", "gain: expected 4 numbers, found 2");
    fixture_refused(LESSON "residual: 2\n", "residual must be true or false");
}

/* What the core itself refuses, whatever the loader let through. */
static void test_core_refuses_a_bad_norm(void **state)
{
    (void)state;
    lesson l;
    fixture_load(LESSON "norm: {kind: layer}\nresidual: true\n", &l);
    attention_input in = l.input;
    trace t;
    in.norm_post = true, in.residual = false;         /* a post-norm without its residual */
    assert_int_equal(trace_compute(&in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
    in = l.input, in.norm = NORM_RMS;                 /* an RMS norm with a bias */
    assert_int_equal(trace_compute(&in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
    in = l.input, in.norm_eps = 0.0;
    assert_int_equal(trace_compute(&in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
    in = l.input, in.norm_eps = INFINITY;
    assert_int_equal(trace_compute(&in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
    in = l.input, in.gain = NULL;
    assert_int_equal(trace_compute(&in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
    lesson_free(&l);
}

static void assert_formula(const trace *t, stage_id stage, const char *expected)
{
    char text[256];
    trace_stage_formula(t, stage, text, sizeof text);
    assert_string_equal(text, expected);
}

/* The explanations name every term with its number and end in the cell's value; the formula
 * lines follow the kind and the place. */
static void test_explanations_and_formulas(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(LESSON "norm: {kind: layer, gain: [1, 2, 1, 1], bias: [0, 0.5, 0, 0]}\n"
                        "residual: true\n"
                        "loss:\n  target:\n    cat: [1, 0, 0, 0]\n    sat: [0, 1, 0, 0]\n",
                        &l, &t);
    fixture_explains(&t, "normed[cat,1]", 1, "normed[cat,1] = (input[cat,1] − mean) / √(var + "
                     "eps) × gain[1] + bias[1], with mean = Σ_c input[cat,c] / 4 = (1.0 + 2.0 + "
                     "3.0 + 4.0) / 4 = 2.5, var = Σ_c (input[cat,c] − mean)² / 4 = ((-1.5)² + "
                     "(-0.5)² + (0.5)² + (1.5)²) / 4 = 1.25 and eps = 1.0e-05: (2.0 − 2.5) / "
                     "√(1.25 + 1.0e-05) × 2.0 + 0.5 = -0.3944");
    /* sat's row is constant: normed is the bias [0, 0.5, 0, 0]; with identity weights sat gives
     * cat 0.4443 of its attention (its scores −0.0986 and 0.125), and 0.4443 × 0.4472 = 0.1987 */
    fixture_explains(&t, "residual[sat,2]", 1, "residual[sat,2] = input[sat,2] + output[sat,2] "
                     "= 2.0 + 0.1987 = 2.1987");
    fixture_explains(&t, "d_output[cat,0]", 1, "d_output[cat,0] = d_residual[cat,0] (a sum "
                     "passes its gradient to each term) = -1.1922");
    fixture_explains(&t, "d_bias[0,1]", 1, "d_bias[0,1] = Σ_i d_normed[i,1] = 1.5576 + 0.6949 "
                     "= 2.2525");
    assert_formula(&t, STAGE_NORMED, "normed = (input − mean) / √(var + eps) · gain + bias, each "
                   "row over its 4 numbers (layer norm)");
    assert_formula(&t, STAGE_RESIDUAL, "residual = input + output (E′ = E + ΔE: each token's "
                   "vector plus what attention adds)");
    assert_formula(&t, STAGE_Q, "Q = normed · W_Q");
    char inputs[128];
    trace_stage_inputs(&t, STAGE_D_INPUT, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_normed, d_residual");
    trace_stage_inputs(&t, STAGE_D_OUTPUT, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_residual");
    /* d_input: the norm's part and the residual's, named and then with their numbers */
    char text[1024];
    trace_cell cell;
    assert_true(trace_cell_parse(&t, "d_input[cat,0]", 1, &cell, text, sizeof text));
    trace_cell_explain(&t, &cell, 4, text, sizeof text);
    static const char d_input[] = "d_input[cat,0] = (d_normed[cat,·] back through normed) + "
                                  "d_residual[cat,0] = ";
    assert_memory_equal(text, d_input, strlen(d_input));
    trace_free(&t);
    lesson_free(&l);
    fixture_load_traced(LESSON "norm: {kind: rms, place: post}\nresidual: true\n"
                        "loss:\n  target:\n    cat: [1, 0, 0, 0]\n    sat: [0, 1, 0, 0]\n",
                        &l, &t);
    assert_formula(&t, STAGE_NORMED_POST, "normed = residual / √(mean(residual²) + eps) · gain, "
                   "each row over its 4 numbers (RMS norm)");
    assert_formula(&t, STAGE_LOSS, "loss = ½ Σᵢⱼ (normed[i,j] − target[i,j])²");
    assert_true(trace_cell_parse(&t, "d_residual[sat,1]", 1, &cell, text, sizeof text));
    trace_cell_explain(&t, &cell, 4, text, sizeof text);
    static const char d_residual[] = "d_residual[sat,1] = (g[1] − x̂[1] · mean(g·x̂)) / √(ms + "
                                     "eps), g = d_normed[sat,·] × gain, x̂ the row residual "
                                     "normalised: (";
    assert_memory_equal(text, d_residual, strlen(d_residual));
    trace_free(&t);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_norm_by_hand),
        cmocka_unit_test(test_rms_norm_by_hand),
        cmocka_unit_test(test_post_norm_follows_the_residual),
        cmocka_unit_test(test_loader_defaults),
        cmocka_unit_test(test_core_refuses_a_bad_norm),
        cmocka_unit_test(test_explanations_and_formulas),
    };
    return cmocka_run_group_tests_name("norm", tests, NULL, NULL);
}
