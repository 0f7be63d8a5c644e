/* A trace's numbers do not depend on the processor: every stored stage of every lesson (and of
 * larger random inputs, every mask) is the same to the bit on the vector and the portable code
 * and with one or two threads, so --json writes the same numbers everywhere; and every product
 * cell is the fused sum of the terms its explanation shows. Run from the repository root
 * (tests/run.sh does). */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "kernels.h"
#include "lesson.h"
#include "random.h"
#include "trace.h"

/* The ways a trace is computed: the fastest code (one and two threads), then the portable code
 * (one and two threads). The first is the one the others must equal. */
static const trace_options ways[] = {
    { .threads = 1 }, { .threads = 2 }, { .threads = 1, .portable = true },
    { .threads = 2, .portable = true },
};
#define WAY_COUNT (int)(sizeof ways / sizeof ways[0])

/* Computes in every way and requires every stored stage to equal the first way's bit for bit;
 * returns how many stages differed (printing each, named by what). */
static int compare_ways(const attention_input *in, const char *what)
{
    trace t[WAY_COUNT];
    for (int w = 0; w < WAY_COUNT; w++) {
        trace_failure failure;
        trace_status status = trace_compute(in, &ways[w], &t[w], &failure);
        if (status != TRACE_OK) {
            print_error("%s: trace_compute failed: %s\n", what, trace_status_message(status));
            fail();
        }
    }
    int differences = 0;
    for (int w = 1; w < WAY_COUNT; w++)
        for (int s = 0; s < STAGE_COUNT; s++) {
            size_t bytes = trace_stage_bytes(&t[0], (stage_id)s);
            if (bytes == 0)
                continue;
            if (memcmp(trace_block(&t[0], (stage_id)s, 1), trace_block(&t[w], (stage_id)s, 1),
                       bytes) != 0) {
                print_error("%s: stage %s differs between %s (%d threads) and %s (%d threads)\n",
                            what, stage_get((stage_id)s)->name, "the fastest code", 1,
                            ways[w].portable ? "the portable code" : "the fastest code",
                            ways[w].threads);
                differences++;
            }
        }
    for (int w = 0; w < WAY_COUNT; w++)
        trace_free(&t[w]);
    return differences;
}

/* Every lesson of a folder, globbed so that a new one is covered; returns how many it found. */
static int compare_lessons(const char *pattern)
{
    glob_t found;
    if (glob(pattern, 0, NULL, &found) != 0 || found.gl_pathc == 0) {
        print_error("no lessons match %s (run the tests from the repository root)\n", pattern);
        fail();
    }
    int differences = 0;
    for (size_t f = 0; f < found.gl_pathc; f++) {
        lesson l;
        lesson_diagnostics diagnostics;
        if (lesson_load(found.gl_pathv[f], &l, &diagnostics) != LESSON_OK) {
            print_error("%s: does not load\n", found.gl_pathv[f]);
            lesson_diagnostics_print(&diagnostics, stderr);
            lesson_diagnostics_free(&diagnostics);
            fail();
        }
        lesson_diagnostics_free(&diagnostics);
        differences += compare_ways(&l.input, found.gl_pathv[f]);
        lesson_free(&l);
    }
    int count = (int)found.gl_pathc;
    globfree(&found);
    assert_int_equal(differences, 0);
    return count;
}

static void test_every_lesson_is_the_same_on_every_path(void **state)
{
    (void)state;
    assert_true(compare_lessons("lessons/*.yaml") >= 4);
}

static void test_every_reference_lesson_is_the_same_on_every_path(void **state)
{
    (void)state;
    assert_true(compare_lessons("tests/reference/*.yaml") >= 4);
}

/* Inputs large enough for the vector tiles, the threads and long softmax rows: n = 203 tokens
 * (not a multiple of any tile), d_model = 96 over 3 heads, with positional encoding, scores
 * spread wide so the exponential sees its whole range; the mask is the caller's. */
enum { LARGE_N = 203, LARGE_D = 96 };
typedef struct {
    double embeddings[LARGE_N * LARGE_D], w[4 * LARGE_D * LARGE_D];
    unsigned char cells[LARGE_N * LARGE_N];
    const char *tokens[LARGE_N];
    attention_input in;
} large_input;

static large_input *large_input_new(mask_kind mask)
{
    large_input *x = malloc(sizeof *x);
    assert_non_null(x);
    random_state rng;
    random_seed(&rng, 16);
    random_fill(&rng, RANDOM_NORMAL, 0, 3.0, x->embeddings, LARGE_N * LARGE_D);
    random_fill(&rng, RANDOM_XAVIER, 2 * LARGE_D, 2.0, x->w, 4 * LARGE_D * LARGE_D);
    for (int i = 0; i < LARGE_N; i++) {
        x->tokens[i] = "t";
        for (int j = 0; j < LARGE_N; j++) /* every row keeps its own column */
            x->cells[i * LARGE_N + j] = (i * 7 + j * 3) % 5 != 0 || i == j;
    }
    const double *w = x->w;
    int dd = LARGE_D * LARGE_D;
    x->in = (attention_input){
        .n_tokens = LARGE_N, .tokens = x->tokens, .d_model = LARGE_D, .heads = 3,
        .embeddings = x->embeddings, .W_Q = w, .W_K = w + dd, .W_V = w + 2 * dd,
        .W_O = w + 3 * dd, .mask = mask, .mask_cells = mask == MASK_EXPLICIT ? x->cells : NULL,
        .positional = true, .scale = mask != MASK_CAUSAL,
    };
    return x;
}

static void test_large_inputs_are_the_same_on_every_path(void **state)
{
    (void)state;
    static const mask_kind masks[] = { MASK_NONE, MASK_CAUSAL, MASK_EXPLICIT };
    int differences = 0;
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        large_input *x = large_input_new(masks[k]);
        char what[48];
        snprintf(what, sizeof what, "random input, %s", trace_mask_name(masks[k]));
        differences += compare_ways(&x->in, what);
        free(x);
    }
    assert_int_equal(differences, 0);
}

/* The fused sum of count terms left[i·ls] × right[i·rs], in order. */
static double fused_sum(const double *left, size_t ls, const double *right, size_t rs, int count)
{
    double total = 0.0;
    for (int i = 0; i < count; i++)
        total = fma(left[(size_t)i * ls], right[(size_t)i * rs], total);
    return total;
}

/* Whether a stage's every cell (row, col) of head equals its fused sum; counts those that do not. */
static int check_cells(const trace *t, stage_id stage, int head, const double *left, size_t lrow,
                       size_t ls, const double *right, size_t rcol, size_t rs, int count)
{
    int wrong = 0;
    for (int i = 0; i < trace_rows(t, stage); i++)
        for (int j = 0; j < trace_cols(t, stage); j++)
            wrong += trace_value(t, stage, head, i, j)
                     != fused_sum(left + (size_t)i * lrow, ls, right + (size_t)j * rcol, rs, count);
    return wrong;
}

/* What an explanation shows (trace_cell_explain: the terms of each product, then the cell's
 * value as the total) adds up under the one definition: each cell of Q, K, V, output, scores and
 * context is the fused sum, in order, of the very terms the explanation lists. */
/* Counts the product cells of in's trace that are not the fused sums of their terms. */
static int count_wrong_totals(const attention_input *in)
{
    trace t;
    fixture_compute(in, &t);
    size_t d = (size_t)t.d_model, m = (size_t)t.m;
    const double *input = trace_block(&t, STAGE_INPUT, 1);
    const double *concat = trace_block(&t, STAGE_CONCAT, 1);
    const double *source = trace_has_stage(&t, STAGE_SOURCE_INPUT)
                           ? trace_block(&t, STAGE_SOURCE_INPUT, 1) : input;
    const double *Q = trace_block(&t, STAGE_Q, 1), *K = trace_block(&t, STAGE_K, 1);
    const double *V = trace_block(&t, STAGE_V, 1);
    int wrong = check_cells(&t, STAGE_Q, 1, input, d, 1, in->W_Q, 1, d, t.d_model)
              + check_cells(&t, STAGE_K, 1, source, d, 1, in->W_K, 1, d, t.d_model)
              + check_cells(&t, STAGE_V, 1, source, d, 1, in->W_V, 1, d, t.d_model)
              + check_cells(&t, STAGE_OUTPUT, 1, concat, d, 1, in->W_O, 1, d, t.d_model);
    for (int h = 1; h <= t.heads; h++) {
        size_t offset = (size_t)(h - 1) * (size_t)t.d_k;
        wrong += check_cells(&t, STAGE_SCORES, h, Q + offset, d, 1, K + offset, d, 1, t.d_k)
               + check_cells(&t, STAGE_CONTEXT, h, trace_block(&t, STAGE_WEIGHTS, h), m, 1,
                             V + offset, 1, d, t.m);
    }
    trace_free(&t);
    return wrong;
}

static void test_every_total_is_the_fused_sum_of_its_terms(void **state)
{
    (void)state;
    static const char *const paths[] = { "lessons/four_heads.yaml", "lessons/cross.yaml" };
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        lesson l;
        lesson_diagnostics diagnostics;
        assert_int_equal(lesson_load(paths[p], &l, &diagnostics), LESSON_OK);
        lesson_diagnostics_free(&diagnostics);
        int wrong = count_wrong_totals(&l.input);
        if (wrong) {
            print_error("%s: %d cells are not the fused sums of their terms\n", paths[p], wrong);
            fail();
        }
        lesson_free(&l);
    }
    /* the lessons' few, round numbers sum alike fused or not: these do not */
    large_input *x = large_input_new(MASK_EXPLICIT);
    assert_int_equal(count_wrong_totals(&x->in), 0);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson_is_the_same_on_every_path),
        cmocka_unit_test(test_every_reference_lesson_is_the_same_on_every_path),
        cmocka_unit_test(test_large_inputs_are_the_same_on_every_path),
        cmocka_unit_test(test_every_total_is_the_fused_sum_of_its_terms),
    };
    printf("products on this processor: %s code\n", kernels_path_name(NULL));
    return cmocka_run_group_tests_name("the same bits on every path", tests, NULL, NULL);
}
