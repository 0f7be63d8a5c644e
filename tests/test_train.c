/* Training in the core (train.h): one step is W ← W − η · d_W of a fresh trace, bit for bit;
 * the loss falls with a small rate; only the named parameters move; and the run after k steps
 * is the same whichever count of steps the lesson allows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "trace.h"
#include "train.h"
#include "walk.h"
#include "fixtures.h"
#include "lesson.h"

enum { N = 3, D = 4, CELLS = D * D };

static const char *const tokens[] = { "a", "b", "c" };

typedef struct {
    double x[N * D], params[PARAM_COUNT][CELLS], target[N * D];
    attention_input in;
} numbers;

static void fill(numbers *l, bool biases)
{
    memset(l, 0, sizeof *l);
    support_fill(l->x, N * D, 1);
    support_fill(l->target, N * D, 2);
    l->in = (attention_input){ .n_tokens = N, .tokens = tokens, .n_source = N, .d_model = D,
                               .heads = 2, .scale = true, .mask = MASK_CAUSAL,
                               .embeddings = l->x, .target = l->target };
    for (int p = 0; p < PARAM_COUNT; p++) {
        support_fill(l->params[p], CELLS, 3 + (unsigned)p);
        if (!param_get((param_id)p)->optional || biases)
            l->in.params[p] = l->params[p];
    }
}

static train_config every_param(int steps, double rate)
{
    train_config config = { .steps = steps, .learning_rate = rate };
    for (int p = 0; p < PARAM_COUNT; p++)
        config.trains[p] = true;
    return config;
}

static void test_one_step_is_descent_on_a_fresh_trace(void **state)
{
    (void)state;
    numbers l;
    fill(&l, true);
    train_config config = every_param(1, 0.1);
    trace t;
    assert_int_equal(trace_compute(&l.in, NULL, &t, NULL), TRACE_OK);
    numbers by_hand = l;
    by_hand.in.embeddings = by_hand.x, by_hand.in.target = by_hand.target;
    for (int p = 0; p < PARAM_COUNT; p++) {
        by_hand.in.params[p] = by_hand.params[p];
        const double *g = trace_block(&t, stage_gradient(READ_PARAM, p), 1);
        for (int i = 0; i < CELLS; i++)
            by_hand.params[p][i] -= 0.1 * g[i];
    }
    double before = trace_loss(&t);
    trace_free(&t);
    assert_int_equal(trace_compute(&by_hand.in, NULL, &t, NULL), TRACE_OK);
    double after = trace_loss(&t);
    trace_free(&t);

    train_run run;
    assert_int_equal(train_compute(&l.in, &config, 1, NULL, &run, NULL), TRACE_OK);
    assert_int_equal(run.steps, 1);
    assert_true(run.loss[0] == before);
    assert_true(run.loss[1] == after);   /* the recomputation from the first reader is a fresh trace */
    for (int p = 0; p < PARAM_COUNT; p++) {
        size_t cells = param_get((param_id)p)->optional ? D : CELLS;
        assert_memory_equal(run.params[p], by_hand.params[p], cells * sizeof(double));
    }
    assert_true(after < before);
    train_free(&run);
}

static void test_the_loss_falls_with_a_small_rate(void **state)
{
    (void)state;
    numbers l;
    fill(&l, false);
    train_config config = every_param(30, 0.05);
    train_run run;
    assert_int_equal(train_compute(&l.in, &config, 30, NULL, &run, NULL), TRACE_OK);
    for (int k = 1; k <= 30; k++)
        if (!(run.loss[k] < run.loss[k - 1]))
            fail_msg("the loss rose at step %d: %.17g after %.17g", k, run.loss[k],
                     run.loss[k - 1]);
    assert_true(run.loss[30] < 0.9 * run.loss[0]);
    train_free(&run);
}

static void test_only_the_named_parameters_move(void **state)
{
    (void)state;
    numbers l;
    fill(&l, false);
    train_config config = { .steps = 5, .learning_rate = 0.1 };
    config.trains[PARAM_W_Q] = config.trains[PARAM_W_K] = config.trains[PARAM_B_Q] = true;
    assert_true(train_active(&l.in, &config));
    train_run run;
    assert_int_equal(train_compute(&l.in, &config, 5, NULL, &run, NULL), TRACE_OK);
    assert_ptr_equal(run.input.params[PARAM_W_V], l.in.params[PARAM_W_V]);
    assert_ptr_equal(run.input.params[PARAM_W_O], l.in.params[PARAM_W_O]);
    assert_null(run.params[PARAM_B_Q]);          /* the lesson has no b_Q: nothing to train */
    assert_null(run.input.params[PARAM_B_Q]);
    assert_ptr_equal(run.input.embeddings, l.in.embeddings);
    assert_memory_not_equal(run.params[PARAM_W_Q], l.params[PARAM_W_Q], sizeof l.params[0]);
    assert_memory_not_equal(run.params[PARAM_W_K], l.params[PARAM_W_K], sizeof l.params[0]);
    train_free(&run);
    config.trains[PARAM_W_Q] = config.trains[PARAM_W_K] = false;
    assert_false(train_active(&l.in, &config));  /* only b_Q named, and the lesson lacks it */
}

static void test_a_run_to_step_k_is_the_longer_runs_step_k(void **state)
{
    (void)state;
    numbers l;
    fill(&l, true);
    train_config config = every_param(12, 0.05);
    train_run whole, part;
    assert_int_equal(train_compute(&l.in, &config, 12, NULL, &whole, NULL), TRACE_OK);
    assert_int_equal(train_compute(&l.in, &config, 7, NULL, &part, NULL), TRACE_OK);
    assert_int_equal(part.steps, 7);
    assert_memory_equal(part.loss, whole.loss, 8 * sizeof *part.loss);
    train_free(&whole);
    train_free(&part);
    assert_int_equal(train_compute(&l.in, &config, 0, NULL, &part, NULL), TRACE_OK);
    assert_int_equal(part.steps, 0);
    assert_true(part.loss[0] == part.loss[0]);
    train_free(&part);
}

static void test_an_overflowing_rate_says_where(void **state)
{
    (void)state;
    numbers l;
    fill(&l, false);
    train_config config = every_param(40, 1e150);
    train_run run;
    trace_failure failure;
    assert_int_equal(train_compute(&l.in, &config, 40, NULL, &run, &failure),
                     TRACE_ERROR_OVERFLOW);
    assert_int_equal(failure.status, TRACE_ERROR_OVERFLOW);
    assert_true(failure.stage < STAGE_COUNT);
    assert_null(run.loss);
}

/* Without a script, the walk is the pipeline at step 0, then the loss after each update; a
 * script's step keeps its train_step, and one past the lesson's steps is not placed. */
static void test_the_walk_gains_a_training_axis(void **state)
{
    (void)state;
    numbers l;
    fill(&l, false);
    trace t;
    assert_int_equal(trace_compute(&l.in, NULL, &t, NULL), TRACE_OK);
    walk pipeline, trained;
    assert_true(walk_build_pipeline(&pipeline, &t));
    assert_true(walk_build_trained(&trained, &t, NULL, 0, 4));
    assert_int_equal(trained.count, pipeline.count + 4);
    for (int k = 0; k < pipeline.count; k++)
        assert_int_equal(trained.steps[k].train_step, 0);
    for (int k = 1; k <= 4; k++) {
        const walk_step *step = &trained.steps[pipeline.count + k - 1];
        assert_int_equal(step->train_step, k);
        assert_int_equal(stage_get(step->stage)->family, FAMILY_LOSS);
        assert_false(stage_get(step->stage)->flags & STAGE_GRADIENT);
    }
    walk_free(&trained);
    walk_mark marks[] = { { STAGE_WEIGHTS, 2, 0, 3 }, { STAGE_WEIGHTS, 1, 0, 5 },
                          { STAGE_OUTPUT, 0, 0, 0 } };
    assert_true(walk_build_trained(&trained, &t, marks, 3, 4));
    assert_int_equal(trained.count, 2);
    assert_int_equal(trained.steps[0].train_step, 3);
    assert_int_equal(trained.steps[1].narration, 2);
    assert_int_equal(trained.steps[1].train_step, 0);
    walk_free(&trained);
    walk_free(&pipeline);

    /* the trace at a step is the run's: its loss is the run's loss at that step */
    train_config config = every_param(4, 0.05);
    train_run run;
    train_cache cache = { 0 };
    assert_int_equal(train_compute(&l.in, &config, 4, NULL, &run, NULL), TRACE_OK);
    assert_ptr_equal(train_cache_at(&cache, &t, &config, 0, NULL, NULL), &t);
    for (int k = 1; k <= 4; k++)
        assert_true(trace_loss(train_cache_at(&cache, &t, &config, k, NULL, NULL)) == run.loss[k]);
    train_cache_free(&cache);
    train_free(&run);
    trace_free(&t);
}

/* How many of a lesson's diagnostics, checked with warnings, contain words. */
static int checked(const char *text, const char *words)
{
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(text, &l, message, sizeof message), LESSON_OK);
    trace t;
    fixture_compute(&l.input, &t);
    lesson_diagnostics d;
    lesson_check(&l, &t, true, &d);
    int count = 0;
    for (int i = 0; i < d.count; i++)
        count += strstr(d.items[i].message, words) != NULL;
    lesson_diagnostics_free(&d);
    trace_free(&t);
    lesson_free(&l);
    return count;
}

/* A question at a training step is answered by that step's numbers: an earlier step at another
 * training step shows other weights' matrix and tells nothing; one at the same step gives it
 * away. Its claims are proved at its step too. */
static void test_questions_and_claims_at_training_steps(void **state)
{
    (void)state;
    static const char head[] =
        "title: t\ntokens: [a, b]\nembeddings:\n  a: [1.0, 0.0]\n  b: [0.0, 1.0]\n"
        "W_Q: identity\nW_K: identity\nW_V: identity\nW_O: identity\n"
        "loss: {target: [[1, 0], [1, 0]]}\ntrain: {steps: 3, learning_rate: 0.5}\nsteps:\n"
        "  - stage: weights\n    train_step: %d\n    focus: [b, b]\n"
        "  - stage: weights\n    train_step: 3\n    focus: [b, b]\n"
        "    ask: Where does b look most?\n    choices: [a, b]\n    answer: b\n";
    char text[1024];
    snprintf(text, sizeof text, head, 0);
    assert_int_equal(checked(text, "already on screen"), 0);
    snprintf(text, sizeof text, head, 3);
    assert_int_equal(checked(text, "already on screen"), 1);
    /* weights[b,b] is 0.6698 at step 0 and 0.5849 at step 3: a claim is proved where it is */
    static const char claims[] =
        "title: t\ntokens: [a, b]\nembeddings:\n  a: [1.0, 0.0]\n  b: [0.0, 1.0]\n"
        "W_Q: identity\nW_K: identity\nW_V: identity\nW_O: identity\n"
        "loss: {target: [[1, 0], [1, 0]]}\ntrain: {steps: 3, learning_rate: 0.5}\nsteps:\n"
        "  - stage: weights\n    expect:\n      - weights[b,b] > 0.6\n"
        "  - stage: weights\n    train_step: 3\n    expect:\n      - weights[b,b] < 0.6\n";
    assert_int_equal(checked(claims, "is false"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_step_is_descent_on_a_fresh_trace),
        cmocka_unit_test(test_the_loss_falls_with_a_small_rate),
        cmocka_unit_test(test_only_the_named_parameters_move),
        cmocka_unit_test(test_a_run_to_step_k_is_the_longer_runs_step_k),
        cmocka_unit_test(test_an_overflowing_rate_says_where),
        cmocka_unit_test(test_the_walk_gains_a_training_axis),
        cmocka_unit_test(test_questions_and_claims_at_training_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
