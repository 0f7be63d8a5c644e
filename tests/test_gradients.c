/* Every gradient of a parameter and of the embeddings against central finite differences of the
 * loss, computed through the core itself (trace_compute of the nudged input): one lesson shape
 * per path of the forward pass (heads, masks, cross-attention, RoPE, ALiBi, kv_heads, biases,
 * scale on and off, the online softmax, layer and RMS norm before attention and after the
 * residual, the residual alone). A difference beyond 1e-6 relative fails with the
 * first cell that differs. Also: masked cells of d_scores, d_scaled and d_masked are exactly 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "trace.h"
#include "lesson.h"

enum { N = 4, M = 3, D = 4, CELLS = D * D };
#define STEP 1e-5
#define TOLERANCE 1e-6

static const char *const tokens[] = { "a", "b", "c", "d" };
static const char *const source_tokens[] = { "x", "y", "z" };
static const unsigned char some_hidden[N * N] = { 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1 };

/* The numbers a shape is computed from: every parameter and bias given (the shape says which
 * biases it reads), embeddings of the queries and the source, and the target. */
typedef struct {
    double x[N * D], source[M * D], params[PARAM_COUNT][CELLS], target[N * D];
    attention_input in;
} lesson_numbers;

static void fill(lesson_numbers *l, const attention_input *shape, bool biases, unsigned seed)
{
    memset(l, 0, sizeof *l);
    support_fill(l->x, N * D, seed);
    support_fill(l->source, M * D, seed + 1);
    support_fill(l->target, N * D, seed + 2);
    l->in = *shape;
    l->in.tokens = tokens, l->in.n_tokens = N, l->in.d_model = D, l->in.embeddings = l->x;
    l->in.n_source = shape->source ? M : N;
    if (shape->source)
        l->in.source = source_tokens, l->in.source_embeddings = l->source;
    for (int p = 0; p < PARAM_COUNT; p++) {
        support_fill(l->params[p], CELLS, seed + 3 + (unsigned)p);
        bool norm_param = p == PARAM_GAIN || p == PARAM_NORM_BIAS;
        if (norm_param ? shape->norm != NORM_NONE && (p == PARAM_GAIN || shape->norm == NORM_LAYER)
                       : !param_get((param_id)p)->optional || biases)
            l->in.params[p] = l->params[p];
    }
    l->in.target = l->target;
}

static double loss_of(const attention_input *in)
{
    trace t;
    assert_int_equal(trace_compute(in, NULL, &t, NULL), TRACE_OK);
    double loss = trace_loss(&t);
    trace_free(&t);
    return loss;
}

/* (loss(x + h) − loss(x − h)) / 2h for one number x of the input. */
static double central_difference(const attention_input *in, double *x)
{
    double kept = *x;
    *x = kept + STEP;
    double up = loss_of(in);
    *x = kept - STEP;
    double down = loss_of(in);
    *x = kept;
    return (up - down) / (2 * STEP);
}

/* Each cell of gradient stage `gradient` (count cells) against the difference of values[i]. */
static int check_cells(const char *label, const trace *t, stage_id gradient, double *values,
                       int count)
{
    const double *g = trace_block(t, gradient, 1);
    for (int i = 0; i < count; i++) {
        double difference = central_difference(t->in, &values[i]);
        if (fabs(difference - g[i]) > TOLERANCE * fmax(1.0, fabs(g[i])))
            fail_msg("%s: %s cell %d is %.17g, the finite difference %.17g", label,
                     stage_get(gradient)->name, i, g[i], difference);
    }
    return count;
}

/* Masked cells are exactly +0 in every per-head gradient of the score family. */
static void check_hidden_zero(const char *label, const trace *t)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        const stage_info *info = stage_get((stage_id)s);
        if (!(info->flags & STAGE_GRADIENT) || info->cols != AXIS_SOURCE || !info->per_head
            || info->family == FAMILY_SOFTMAX || !trace_has_stage(t, (stage_id)s))
            continue;   /* d_weights is what the context would gain: not 0 where hidden */
        for (int h = 1; h <= t->heads; h++)
            for (int i = 0; i < t->n; i++)
                for (int j = 0; j < t->m; j++) {
                    double x = trace_value(t, (stage_id)s, h, i, j);
                    if (trace_is_hidden(t, i, j) && (x != 0.0 || signbit(x)))
                        fail_msg("%s: %s[%d,%d] of head %d is hidden but %g", label,
                                 info->name, i, j, h, x);
                }
    }
}

/* Every parameter's gradient and the embeddings' (d_input, d_source_input: the positional
 * encoding is a constant added) against finite differences. */
static void check_shape(const char *label, const attention_input *shape, bool biases)
{
    lesson_numbers *l = malloc(sizeof *l);
    fill(l, shape, biases, 11);
    trace t;
    assert_int_equal(trace_compute(&l->in, NULL, &t, NULL), TRACE_OK);
    int checked = 0;
    for (int p = 0; p < PARAM_COUNT; p++) {
        if (!l->in.params[p])
            continue;
        const param_info *info = param_get((param_id)p);
        int cells = trace_axis_length(&t, info->rows) * trace_axis_length(&t, info->cols);
        checked += check_cells(label, &t, stage_gradient(READ_PARAM, p), l->params[p], cells);
    }
    checked += check_cells(label, &t, STAGE_D_INPUT, l->x, N * D);
    if (shape->source)
        checked += check_cells(label, &t, STAGE_D_SOURCE_INPUT, l->source, M * D);
    check_hidden_zero(label, &t);
    assert_true(checked > 0);
    trace_free(&t);
    free(l);
}

static void test_one_head(void **state)
{
    (void)state;
    check_shape("one head", &(attention_input){ .heads = 1, .scale = true }, false);
}

static void test_two_heads_causal_positional(void **state)
{
    (void)state;
    check_shape("causal", &(attention_input){ .heads = 2, .scale = true, .mask = MASK_CAUSAL,
                                              .positional = true }, false);
}

static void test_window_without_scaling(void **state)
{
    (void)state;
    check_shape("window", &(attention_input){ .heads = 2, .mask = MASK_WINDOW, .window = 2 },
                false);
}

static void test_explicit_mask_and_biases(void **state)
{
    (void)state;
    check_shape("explicit", &(attention_input){ .heads = 2, .scale = true,
                                                .mask = MASK_EXPLICIT,
                                                .mask_cells = some_hidden }, true);
}

static void test_cross_attention(void **state)
{
    (void)state;
    check_shape("cross", &(attention_input){ .heads = 2, .scale = true,
                                             .source = source_tokens }, true);
}

static void test_rope_alibi_and_shared_keys(void **state)
{
    (void)state;
    check_shape("modern", &(attention_input){ .heads = 2, .scale = true, .rope = true,
                                              .rope_base = 100.0, .alibi = true,
                                              .mask = MASK_CAUSAL, .kv_heads = 1 }, true);
}

static void test_online_softmax(void **state)
{
    (void)state;
    check_shape("online", &(attention_input){ .heads = 2, .scale = true, .mask = MASK_CAUSAL,
                                              .online_softmax = true, .tile = 2 }, false);
}

static void test_residual(void **state)
{
    (void)state;
    check_shape("residual", &(attention_input){ .heads = 2, .scale = true, .mask = MASK_CAUSAL,
                                                .residual = true }, true);
}

static void test_pre_layer_norm(void **state)
{
    (void)state;
    check_shape("pre layer norm", &(attention_input){ .heads = 2, .scale = true,
                                                      .norm = NORM_LAYER, .norm_eps = 1e-5,
                                                      .residual = true, .rope = true,
                                                      .rope_base = 100.0,
                                                      .mask = MASK_CAUSAL }, true);
}

static void test_pre_rms_norm(void **state)
{
    (void)state;
    check_shape("pre RMS norm", &(attention_input){ .heads = 2, .scale = true, .norm = NORM_RMS,
                                                    .norm_eps = 1e-3, .mask = MASK_EXPLICIT,
                                                    .mask_cells = some_hidden }, false);
}

static void test_post_layer_norm(void **state)
{
    (void)state;
    check_shape("post layer norm", &(attention_input){ .heads = 2, .scale = true,
                                                       .norm = NORM_LAYER, .norm_post = true,
                                                       .norm_eps = 1e-5, .residual = true,
                                                       .alibi = true, .kv_heads = 1,
                                                       .mask = MASK_CAUSAL }, true);
}

static void test_post_rms_norm(void **state)
{
    (void)state;
    check_shape("post RMS norm", &(attention_input){ .heads = 2, .norm = NORM_RMS,
                                                     .norm_post = true, .norm_eps = 1e-5,
                                                     .residual = true, .mask = MASK_WINDOW,
                                                     .window = 2 }, false);
}

/* What d_Q and d_K are made from, as their formula line says: under RoPE the rotated gradient
 * alone (turned back by −θ), never K_rotated; without it d_scores and the other side. */
static void test_made_from_follows_rope(void **state)
{
    (void)state;
    lesson_numbers rope, plain;
    fill(&rope, &(attention_input){ .heads = 2, .scale = true, .rope = true,
                                    .rope_base = 100.0 }, false, 11);
    fill(&plain, &(attention_input){ .heads = 2, .scale = true }, false, 11);
    trace t, u;
    assert_int_equal(trace_compute(&rope.in, NULL, &t, NULL), TRACE_OK);
    assert_int_equal(trace_compute(&plain.in, NULL, &u, NULL), TRACE_OK);
    char inputs[128];
    trace_stage_inputs(&t, STAGE_D_Q, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_Q_rotated");
    trace_stage_inputs(&t, STAGE_D_K, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_K_rotated");
    trace_stage_inputs(&u, STAGE_D_Q, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_scores, K");
    trace_stage_inputs(&u, STAGE_D_K, inputs, sizeof inputs);
    assert_string_equal(inputs, "d_scores, Q");
    /* and their explanations: the rotated gradient turned back, and the rotated one as a sum */
    char text[1024];
    trace_cell cell;
    static const char back[] = "d_Q[b,1] = d_Q_rotated[b,1]·cos θ − d_Q_rotated[b,0]·sin θ, "
                               "turned back by θ = 1.0 (pair 0) = (";
    static const char sum[] = "d_Q_rotated[b,1] = Σ_j d_scores[b,j] · K_rotated[j,1] (head 1) = ";
    assert_true(trace_cell_parse(&t, "d_Q[b,1]", 1, &cell, text, sizeof text));
    trace_cell_explain(&t, &cell, 4, text, sizeof text);
    assert_memory_equal(text, back, strlen(back));
    assert_true(trace_cell_parse(&t, "d_Q_rotated[b,1]", 1, &cell, text, sizeof text));
    trace_cell_explain(&t, &cell, 4, text, sizeof text);
    assert_memory_equal(text, sum, strlen(sum));
    trace_free(&t);
    trace_free(&u);
}

/* The remaining gradient rows explained with their numbers (tests/gradients/by_token.yaml:
 * causal, two heads of d_k 2): each is a sum of the products its backward adds, and ends in
 * its value. */
static const char by_token[] =
    "title: \"a target written one row per token, causal, two heads\"\n"
    "tokens: [a, b, c]\n"
    "embeddings:\n"
    "  a: [1.0, 0.0, 0.5, 0.2]\n"
    "  b: [0.0, 1.0, -0.3, 0.1]\n"
    "  c: [0.4, 0.2, 1.0, -1.0]\n"
    "heads: 2\n"
    "W_Q: {random: normal, seed: 1, scale: 0.5}\n"
    "W_K: {random: normal, seed: 2, scale: 0.5}\n"
    "W_V: {random: normal, seed: 3, scale: 0.5}\n"
    "W_O: {random: normal, seed: 4, scale: 0.5}\n"
    "mask: causal\n"
    "loss:\n"
    "  target:\n"
    "    a: [1, 0, 0, 0]\n"
    "    b: [0, 1, 0, 0]\n"
    "    c: [0, 0, 1, 0]\n"
;

static void test_gradient_cells_explained(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(by_token, &l, &t);
    fixture_explains(&t, "d_V[a,1]", 1, "d_V[a,1] = Σ_i weights[i,a] · d_context[i,1] (head 1) = "
                     "(1.0 × -0.2429) [a] + (0.5699 × -0.2932) [b] + (0.3884 × 0.0579) [c] = "
                     "-0.3875");
    fixture_explains(&t, "d_Q[c,3]", 1, "d_Q[c,3] = Σ_j d_scores[c,j] · K[j,3] (head 2) = "
                     "(0.1015 × -0.0007) [a] + (-0.0731 × 1.4093) [b] + (-0.0284 × 0.449) [c] = "
                     "-0.1158");
    fixture_explains(&t, "d_K[a,2]", 1, "d_K[a,2] = Σ_i d_scores[i,a] · Q[i,2] (head 2) = "
                     "(0.0 × 0.3661) [a] + (-0.0771 × -0.3153) [b] + (0.1015 × -1.3078) [c] = "
                     "-0.1084");
    fixture_explains(&t, "d_weights[b,a]", 2, "d_weights[b,a] (head 2) = Σ_c d_context[b,c] · "
                     "V[a,c] = (0.4611 × -0.8235) + (-0.034 × 0.2204) = -0.3872");
    fixture_explains(&t, "d_context[c,1]", 2, "d_context[c,1] (head 2) = d_concat[c,3], a column "
                     "of head 2's in it = -0.4098");
    fixture_explains(&t, "d_concat[b,2]", 1, "d_concat[b,2] = Σ_c d_output[b,c] · W_O[2,c] = "
                     "(-0.1633 × 0.2873) + (-0.7637 × -0.6498) + (0.2747 × 0.3956) + "
                     "(0.1638 × -0.5918) = 0.4611");
    fixture_explains(&t, "d_input[b,2]", 1, "d_input[b,2] = Σ_c d_Q[b,c] · W_Q[2,c] + Σ_c "
                     "d_K[b,c] · W_K[2,c] + Σ_c d_V[b,c] · W_V[2,c] = [(-0.0119 × -0.2045) + "
                     "(0.0127 × 0.141) + (0.0583 × -0.5576) + (0.1087 × -0.4029)] + [(0.0273 × "
                     "-0.1168) + (-0.073 × -0.3879) + (0.0713 × -0.1075) + (0.08 × -0.1672)] + "
                     "[(-0.1707 × 0.1858) + (-0.1056 × -0.2751) + (0.1488 × -0.6754) + (-0.0848 × "
                     "0.5691)] = -0.2194");
    trace_free(&t);
    lesson_free(&l);
}

/* Under grouped-query attention (two heads sharing one key/value head) a cell of d_K or d_V is
 * the sum over the group's query heads: each head's products with their tokens, its subtotal,
 * and the cell's value their sum, as the backward adds them. */
static const char shared_keys[] =
    "title: \"two heads, one key/value head\"\n"
    "tokens: [a, b, c]\n"
    "d_model: 4\n"
    "heads: 2\n"
    "kv_heads: 1\n"
    "embeddings:\n"
    "  a: [1, 0, 0.5, 0]\n"
    "  b: [0, 1, 0, 0.5]\n"
    "  c: [0.5, 0.5, 1, 0]\n"
    "W_Q: {random: normal, seed: 1, scale: 0.5}\n"
    "W_K: {random: normal, seed: 2, scale: 0.5}\n"
    "W_V: {random: normal, seed: 3, scale: 0.5}\n"
    "W_O: {random: normal, seed: 4, scale: 0.5}\n"
    "loss:\n"
    "  target:\n"
    "    - [1, 0, 0, 0]\n"
    "    - [0, 1, 0, 0]\n"
    "    - [0, 0, 1, 0]\n"
;

/* The sum over heads of Σ_i left_h[i, j] · right_h[i, c_h], fused in k order per head, then
 * the heads added in order: what the explanation's subtotals and total must be. */
static double group_sum(const trace *t, stage_id left, stage_id right, bool right_per_head,
                        int j, int c, double subtotal[2])
{
    double total = 0.0;
    for (int h = 1; h <= 2; h++) {
        double s = 0.0;
        int col = right_per_head ? c : (h - 1) * t->d_k + c;
        for (int i = 0; i < t->n; i++)
            s = fma(trace_value(t, left, h, i, j), trace_value(t, right, h, i, col), s);
        subtotal[h - 1] = s;
        total += s;
    }
    return total;
}

static void test_shared_key_gradients_explained(void **state)
{
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced(shared_keys, &l, &t);
    double sub[2];
    /* the numbers, proved from the trace: each head's sum, and the cell the heads' total */
    double k = group_sum(&t, STAGE_D_SCORES, STAGE_Q, false, 1, 1, sub);
    assert_true(k == trace_value(&t, STAGE_D_K, 1, 1, 1));
    assert_true(fabs(sub[0] - -0.0201) < 5e-5 && fabs(sub[1] - -0.0426) < 5e-5);
    fixture_explains(&t, "d_K[b,1]", 1, "d_K[b,1] = Σ over group 1's heads of Σ_i d_scores[i,b] "
                     "· Q[i, the head's column 1] = [head 1, Q[i,1]: (-0.0175 × -0.4363) [a] + "
                     "(-0.0251 × 1.2705) [b] + (0.0092 × 0.4473) [c] = -0.0201] + [head 2, "
                     "Q[i,3]: (0.0271 × -0.3424) [a] + (-0.1007 × 0.5502) [b] + (-0.1044 × "
                     "-0.2119) [c] = -0.0426] = -0.0627");
    double v = group_sum(&t, STAGE_WEIGHTS, STAGE_D_CONTEXT, true, 1, 1, sub);
    assert_true(v == trace_value(&t, STAGE_D_V, 1, 1, 1));
    assert_true(fabs(sub[0] - -0.1906) < 5e-5 && fabs(sub[1] - -0.5137) < 5e-5);
    fixture_explains(&t, "d_V[b,1]", 1, "d_V[b,1] = Σ over group 1's heads of Σ_i weights[i,b] "
                     "· the head's d_context[i,1] = [head 1, d_context[i,1]: (0.2085 × -0.2918) "
                     "[a] + (0.521 × -0.3319) [b] + (0.3415 × 0.1264) [c] = -0.1906] + [head 2, "
                     "d_context[i,1]: (0.2856 × 0.0475) [a] + (0.4302 × -0.5703) [b] + (0.2573 × "
                     "-1.0956) [c] = -0.5137] = -0.7043");
    trace_free(&t);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_head),
        cmocka_unit_test(test_two_heads_causal_positional),
        cmocka_unit_test(test_window_without_scaling),
        cmocka_unit_test(test_explicit_mask_and_biases),
        cmocka_unit_test(test_cross_attention),
        cmocka_unit_test(test_rope_alibi_and_shared_keys),
        cmocka_unit_test(test_online_softmax),
        cmocka_unit_test(test_residual),
        cmocka_unit_test(test_pre_layer_norm),
        cmocka_unit_test(test_pre_rms_norm),
        cmocka_unit_test(test_post_layer_norm),
        cmocka_unit_test(test_post_rms_norm),
        cmocka_unit_test(test_made_from_follows_rope),
        cmocka_unit_test(test_gradient_cells_explained),
        cmocka_unit_test(test_shared_key_gradients_explained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
