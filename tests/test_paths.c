/* A trace's numbers do not depend on the processor: every stored stage of every lesson (and of
 * larger random inputs, every mask) is the same to the bit on the vector and the portable code
 * and with one or two threads, so --json writes the same numbers everywhere. Run from the
 * repository root (tests/run.sh does). */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
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
 * (not a multiple of any tile), d_model = 96 over 3 heads, each mask, with positional encoding,
 * scores spread wide so the exponential sees its whole range. */
static void test_large_inputs_are_the_same_on_every_path(void **state)
{
    (void)state;
    enum { N = 203, D = 96 };
    double *embeddings = malloc((size_t)N * D * sizeof *embeddings);
    double *w = malloc(4 * (size_t)D * D * sizeof *w);
    unsigned char *cells = malloc((size_t)N * N);
    const char **tokens = malloc(N * sizeof *tokens);
    assert_true(embeddings && w && cells && tokens);
    random_state rng;
    random_seed(&rng, 16);
    random_fill(&rng, RANDOM_NORMAL, 0, 3.0, embeddings, (size_t)N * D);
    random_fill(&rng, RANDOM_XAVIER, 2 * D, 2.0, w, 4 * (size_t)D * D);
    for (int i = 0; i < N; i++) {
        tokens[i] = "t";
        for (int j = 0; j < N; j++) /* every row keeps its own column */
            cells[(size_t)i * N + (size_t)j] = (i * 7 + j * 3) % 5 != 0 || i == j;
    }
    static const mask_kind masks[] = { MASK_NONE, MASK_CAUSAL, MASK_EXPLICIT };
    int differences = 0;
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        attention_input in = {
            .n_tokens = N, .tokens = tokens, .d_model = D, .heads = 3, .embeddings = embeddings,
            .W_Q = w, .W_K = w + D * D, .W_V = w + 2 * D * D, .W_O = w + 3 * D * D,
            .mask = masks[k], .mask_cells = masks[k] == MASK_EXPLICIT ? cells : NULL,
            .positional = true, .scale = k != 1,
        };
        char what[48];
        snprintf(what, sizeof what, "random input, %s", trace_mask_name(masks[k]));
        differences += compare_ways(&in, what);
    }
    assert_int_equal(differences, 0);
    free(embeddings);
    free(w);
    free(cells);
    free(tokens);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson_is_the_same_on_every_path),
        cmocka_unit_test(test_every_reference_lesson_is_the_same_on_every_path),
        cmocka_unit_test(test_large_inputs_are_the_same_on_every_path),
    };
    printf("products on this processor: %s code\n", kernels_path_name(NULL));
    return cmocka_run_group_tests_name("the same bits on every path", tests, NULL, NULL);
}
