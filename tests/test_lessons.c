/* The shipped lessons prove what their text says. Every lesson in lessons/ states its numbers
 * as `expect:` claims and live numbers, so loading it with the real loader, computing it with
 * the real core and running lesson_check (as `attnstep --check` does) proves them; this test
 * requires that of every lesson, with no warning either (no question gives its answer away).
 * What one lesson cannot state about itself is tested here: comparisons between lessons, and
 * each "try it" instruction followed as written. Run from the repository root (tests/run.sh
 * does). */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "trace.h"
#include "lesson.h"

/* A loaded lesson and its trace. */
typedef struct {
    const char *name;
    lesson l;
    trace t;
} loaded;

/* Loads (from text when not NULL, else from path), computes and checks a lesson, warnings
 * included. On any problem prints it, naming the lesson, and returns false with nothing left to
 * free. */
static bool try_load(const char *path, const char *text, const char *name, loaded *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    lesson_diagnostics diagnostics;
    lesson_status status = text ? lesson_load_buffer(path, text, strlen(text), &out->l,
                                                     &diagnostics)
                                : lesson_load(path, &out->l, &diagnostics);
    if (status != LESSON_OK) {
        print_error("%s: does not load\n", name);
        lesson_diagnostics_print(&diagnostics, stderr);
        lesson_diagnostics_free(&diagnostics);
        return false;
    }
    lesson_diagnostics_free(&diagnostics);
    trace_failure failure;
    trace_status ts = trace_compute(&out->l.input, NULL, &out->t, &failure);
    if (ts != TRACE_OK) {
        print_error("%s: trace_compute failed: %s\n", name, trace_status_message(ts));
        lesson_free(&out->l);
        return false;
    }
    status = lesson_check(&out->l, &out->t, true, &diagnostics);
    bool clean = status == LESSON_OK && diagnostics.count == 0;
    if (!clean) {
        print_error("%s: lesson_check found %d problems\n", name, diagnostics.count);
        lesson_diagnostics_print(&diagnostics, stderr);
        trace_free(&out->t);
        lesson_free(&out->l);
    }
    lesson_diagnostics_free(&diagnostics);
    return clean;
}

static void load(const char *name, loaded *out)
{
    char path[256];
    snprintf(path, sizeof path, "lessons/%s.yaml", name);
    if (!try_load(path, NULL, name, out)) fail();
}

static void unload(loaded *x)
{
    trace_free(&x->t);
    lesson_free(&x->l);
}

/* The text of lessons/NAME.yaml (free it). */
static char *lesson_text(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "lessons/%s.yaml", name);
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    char *text = calloc(1, 1 << 16);
    assert_non_null(text);
    size_t got = fread(text, 1, (1 << 16) - 1, file);
    fclose(file);
    assert_true(got > 0 && got < (1 << 16) - 1);
    return text;
}

/* Edits text in place as a reader following an instruction would: `from` must occur exactly
 * once and becomes `to` (no longer than from + 64 bytes of room left in the buffer). */
static void replace_once(char *text, const char *from, const char *to)
{
    char *at = strstr(text, from);
    assert_non_null(at);
    assert_null(strstr(at + 1, from));
    size_t rest = strlen(at + strlen(from));
    assert_true(strlen(text) + strlen(to) < (1 << 16) - 1);
    memmove(at + strlen(to), at + strlen(from), rest + 1);
    memcpy(at, to, strlen(to));
}

/* "Delete everything from `steps:` down." */
static void delete_steps(char *text)
{
    char *steps = strstr(text, "\nsteps:\n");
    assert_non_null(steps);
    steps[1] = '\0';
}

/* Index of a token (first one so written); fails when the lesson has no such token. */
static int token_of(const loaded *x, const char *token)
{
    for (int i = 0; i < x->l.n_tokens; i++)
        if (strcmp(x->l.tokens[i], token) == 0) return i;
    print_error("%s: no token \"%s\"\n", x->name, token);
    fail();
    return -1;
}

/* Fails unless the cell is within tolerance of want, naming the lesson and the cell. */
static void expect_cell(const loaded *x, stage_id stage, int head, const char *row, int col,
                        double want, double tolerance)
{
    double got = trace_value(&x->t, stage, head, token_of(x, row), col);
    if (!(fabs(got - want) <= tolerance)) {
        print_error("%s: %s[%s,%d] of head %d = %.10g, expected %.10g within %g\n", x->name,
                    stage_get(stage)->name, row, col, head, got, want, tolerance);
        fail();
    }
}

static void expect_weight(const loaded *x, const char *row, const char *col, double want,
                          double tolerance)
{
    expect_cell(x, STAGE_WEIGHTS, 1, row, token_of(x, col), want, tolerance);
}

/* --- every lesson --- */

/* Every lesson in lessons/ (globbed, so a new lesson is covered) loads, computes and passes
 * lesson_check without an error or a warning: its answers, claims and live numbers hold and no
 * question is answered on screen before it is asked. Each weights row of each head is a
 * distribution: sums to 1 within 1e-12, no negative weight, hidden cells exactly 0. */
static void test_every_lesson_checks_clean(void **state)
{
    (void)state;
    glob_t found;
    int rc = glob("lessons/*.yaml", 0, NULL, &found);
    if (rc != 0 || found.gl_pathc == 0) {
        print_error("no lessons found in lessons/ (run the tests from the repository root)\n");
        fail();
    }
    int failures = 0;
    for (size_t f = 0; f < found.gl_pathc; f++) {
        const char *path = found.gl_pathv[f];
        loaded x;
        if (!try_load(path, NULL, path, &x)) {
            failures++;
            continue;
        }
        int n = trace_rows(&x.t, STAGE_WEIGHTS), m = trace_cols(&x.t, STAGE_WEIGHTS);
        for (int h = 1; h <= x.t.heads; h++) {
            for (int i = 0; i < n; i++) {
                double sum = 0;
                for (int j = 0; j < m; j++) {
                    double w = trace_value(&x.t, STAGE_WEIGHTS, h, i, j);
                    if (w < 0 || (trace_is_hidden(&x.t, i, j) && w != 0.0)) {
                        print_error("%s: weights[%d,%d] of head %d = %.17g\n", path, i, j, h, w);
                        fail();
                    }
                    sum += w;
                }
                if (!(fabs(sum - 1.0) <= 1e-12)) {
                    print_error("%s: weights row %d of head %d sums to %.17g\n", path, i, h, sum);
                    fail();
                }
            }
        }
        int claims = 0;
        for (int k = 0; k < x.l.n_steps; k++) claims += x.l.steps[k].n_expect;
        if (x.l.title == NULL || x.l.title[0] == '\0' || x.l.about == NULL ||
            x.l.n_steps == 0 || claims == 0) {
            print_error("%s: a shipped lesson needs a title, an about line, steps and claims "
                        "that prove its numbers\n", path);
            fail();
        }
        unload(&x);
    }
    if (failures > 0) {
        print_error("%d of %zu lessons do not check cleanly\n", failures, found.gl_pathc);
        fail();
    }
    /* Every lesson named in the issue ships. */
    static const char *const expected[] = {
        "cat_sat", "bank_river", "bank_loan", "animal_it", "scrambled", "scrambled_positional",
        "causal", "no_scale", "with_scale", "four_heads", "cross",
    };
    for (size_t e = 0; e < sizeof expected / sizeof *expected; e++) {
        char path[256];
        snprintf(path, sizeof path, "lessons/%s.yaml", expected[e]);
        bool present = false;
        for (size_t f = 0; f < found.gl_pathc; f++)
            if (strcmp(found.gl_pathv[f], path) == 0) present = true;
        if (!present) {
            print_error("missing lesson %s\n", path);
            fail();
        }
    }
    globfree(&found);
}

/* --- what one lesson says about another, and "try it" instructions --- */

/* Maps each token of `to` to its position in `from`; both must hold the same distinct
 * tokens. */
static void permutation(const loaded *from, const loaded *to, int *perm)
{
    if (from->l.n_tokens != to->l.n_tokens) {
        print_error("%s and %s: different numbers of tokens\n", from->name, to->name);
        fail();
    }
    int n = to->l.n_tokens;
    for (int i = 0; i < n; i++) {
        perm[i] = -1;
        for (int j = 0; j < n; j++)
            if (strcmp(to->l.tokens[i], from->l.tokens[j]) == 0) {
                if (perm[i] >= 0) {
                    print_error("%s: token \"%s\" repeated\n", from->name, to->l.tokens[i]);
                    fail();
                }
                perm[i] = j;
            }
        if (perm[i] < 0) {
            print_error("%s: token \"%s\" is not in %s\n", to->name, to->l.tokens[i],
                        from->name);
            fail();
        }
        for (int k = 0; k < i; k++)
            if (perm[k] == perm[i]) {
                print_error("%s: token \"%s\" used twice\n", to->name, to->l.tokens[i]);
                fail();
            }
    }
}

/* Largest difference between to's weights and from's weights reordered by perm. */
static double permuted_difference(const trace *from, const trace *to, const int *perm,
                                  int *worst_i, int *worst_j)
{
    double worst = 0;
    *worst_i = *worst_j = 0;
    for (int h = 1; h <= to->heads; h++)
        for (int i = 0; i < to->n; i++)
            for (int j = 0; j < to->m; j++) {
                double d = fabs(trace_value(to, STAGE_WEIGHTS, h, i, j) -
                                trace_value(from, STAGE_WEIGHTS, h, perm[i], perm[j]));
                if (d > worst) {
                    worst = d;
                    *worst_i = i;
                    *worst_j = j;
                }
            }
    return worst;
}

/* Without positional encoding, reordering the words only reorders the numbers. */
static void test_scrambled_is_bank_river_reordered(void **state)
{
    (void)state;
    loaded bank, scrambled;
    load("bank_river", &bank);
    load("scrambled", &scrambled);
    assert_false(scrambled.l.input.positional);
    int perm[16];
    assert_true(scrambled.l.n_tokens <= 16);
    permutation(&bank, &scrambled, perm);
    /* The order really changed. */
    bool moved = false;
    for (int i = 0; i < scrambled.l.n_tokens; i++) moved = moved || perm[i] != i;
    assert_true(moved);
    int wi, wj;
    double d = permuted_difference(&bank.t, &scrambled.t, perm, &wi, &wj);
    if (!(d <= 1e-12)) {
        print_error("scrambled: weights[%s,%s] differs from bank_river's by %.3g (tolerance "
                    "1e-12)\n", scrambled.l.tokens[wi], scrambled.l.tokens[wj], d);
        fail();
    }
    /* and so does every output row: bank comes out the same whatever the order */
    for (int i = 0; i < scrambled.l.n_tokens; i++)
        for (int c = 0; c < scrambled.t.d_model; c++) {
            double a = trace_value(&scrambled.t, STAGE_OUTPUT, 1, i, c);
            double b = trace_value(&bank.t, STAGE_OUTPUT, 1, perm[i], c);
            if (!(fabs(a - b) <= 1e-12)) {
                print_error("scrambled: output[%s,%d] = %.17g, bank_river's = %.17g\n",
                            scrambled.l.tokens[i], c, a, b);
                fail();
            }
        }
    unload(&scrambled);
    unload(&bank);
}

/* scrambled_positional compares two orders under the same encoding: bank_river's order with
 * `positional: sinusoidal` added (and its steps deleted, as the instruction says) gives river
 * only 0.02 and of 0.51, and the reversed order's weights are not those reordered. */
static void test_scrambled_positional_compares_two_orders(void **state)
{
    (void)state;
    char *text = lesson_text("bank_river");
    delete_steps(text);
    strcat(text, "positional: sinusoidal\n");
    loaded original, reversed;
    if (!try_load("bank_river_positional.yaml", text, "bank_river with positions", &original))
        fail();
    free(text);
    load("scrambled_positional", &reversed);
    assert_true(original.l.input.positional && reversed.l.input.positional);
    expect_weight(&original, "bank", "river", 0.02, 0.005);
    expect_weight(&original, "bank", "of", 0.51, 0.005);
    int perm[16];
    assert_true(reversed.l.n_tokens <= 16);
    permutation(&original, &reversed, perm);
    int wi, wj;
    double d = permuted_difference(&original.t, &reversed.t, perm, &wi, &wj);
    if (!(d > 0.05)) {
        print_error("scrambled_positional: weights equal bank_river's with positional "
                    "encoding, reordered (largest difference %.3g)\n", d);
        fail();
    }
    unload(&reversed);
    unload(&original);
}

/* bank_loan's concat step says of bank_loan_one_head (its compare pair) that bank shares one
 * budget, so its output has less water and less money than the two heads find: there bank gives
 * 0.33 to river and 0.33 to loan, and gets about 0.33 water and 0.39 money (two heads: 0.71 and
 * 0.70, which bank_loan's claims pin). */
static void test_bank_loan_single_head(void **state)
{
    (void)state;
    loaded one;
    load("bank_loan_one_head", &one);
    expect_weight(&one, "bank", "river", 0.33, 0.005);
    expect_weight(&one, "bank", "loan", 0.33, 0.005);
    expect_cell(&one, STAGE_CONTEXT, 1, "bank", 0, 0.33, 0.005);
    expect_cell(&one, STAGE_CONTEXT, 1, "bank", 2, 0.39, 0.005);
    unload(&one);
}

/* bank_river: "change the 4 in the last row of W_Q to 1 and save": the lesson still checks,
 * and its narration follows the new numbers. */
static void test_bank_river_try_it(void **state)
{
    (void)state;
    char *text = lesson_text("bank_river");
    replace_once(text, "  - [4, 0, 0, 0]\n", "  - [1, 0, 0, 0]\n");
    loaded edited;
    if (!try_load("bank_river.yaml", text, "bank_river edited", &edited)) fail();
    free(text);
    expect_weight(&edited, "bank", "river", 0.2919, 0.00005);
    const char *last = edited.l.steps[edited.l.n_steps - 1].say;
    if (!strstr(last, "bank's water, 0.29, is its share for river")) {
        print_error("bank_river edited: the last step does not follow: %s\n", last);
        fail();
    }
    unload(&edited);
}

/* no_scale and with_scale: identical but for `scale`; unscaled rows saturate, scaled rows
 * stay spread; and the numbers each quotes from the other. */
static void test_scaling(void **state)
{
    (void)state;
    loaded off, on;
    load("no_scale", &off);
    load("with_scale", &on);
    if (off.l.input.scale || !on.l.input.scale || off.t.d_k < 8 || off.t.d_k != on.t.d_k ||
        off.t.n != on.t.n) {
        print_error("no_scale/with_scale: expected scale false/true, the same d_k of at least "
                    "8 and the same tokens\n");
        fail();
    }
    for (int i = 0; i < off.t.n; i++) {
        assert_string_equal(off.l.tokens[i], on.l.tokens[i]);
        double max_off = 0, max_on = 0;
        for (int j = 0; j < off.t.n; j++) {
            assert_true(trace_value(&on.t, STAGE_SCORES, 1, i, j) ==
                        trace_value(&off.t, STAGE_SCORES, 1, i, j));
            max_off = fmax(max_off, trace_value(&off.t, STAGE_WEIGHTS, 1, i, j));
            max_on = fmax(max_on, trace_value(&on.t, STAGE_WEIGHTS, 1, i, j));
        }
        if (!(max_off > 0.9) || !(max_on < 0.65)) {
            print_error("row \"%s\": largest weight %.4f unscaled (expected above 0.9), %.4f "
                        "scaled (expected below 0.65)\n", off.l.tokens[i], max_off, max_on);
            fail();
        }
    }
    /* with_scale quotes no_scale's 0.968, 0.011 and 0.702; no_scale quotes with_scale's
     * 0.181 */
    expect_weight(&off, "birds", "birds", 0.968, 0.0005);
    expect_weight(&off, "birds", "sing", 0.011, 0.0005);
    expect_cell(&off, STAGE_CONTEXT, 1, "birds", 3, 0.702, 0.0005);
    expect_cell(&on, STAGE_CONTEXT, 1, "birds", 3, 0.181, 0.0005);
    unload(&on);
    unload(&off);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson_checks_clean),
        cmocka_unit_test(test_scrambled_is_bank_river_reordered),
        cmocka_unit_test(test_scrambled_positional_compares_two_orders),
        cmocka_unit_test(test_bank_loan_single_head),
        cmocka_unit_test(test_bank_river_try_it),
        cmocka_unit_test(test_scaling),
    };
    return cmocka_run_group_tests_name("lessons", tests, NULL, NULL);
}
