/* The shipped lessons show what their text claims. Each lesson in lessons/ is loaded with the
 * real loader and computed with the real core, and the test asserts the property its narration
 * states: the hand-worked numbers, the word a row attends to most, thresholds, exact zeros,
 * and equality of reordered weights. Every failure names the lesson and the cell.
 * Run from the repository root (tests/run.sh does). */
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

static void print_diagnostics(const char *path, const lesson_diagnostics *d)
{
    for (int i = 0; i < d->count; i++)
        print_error("%s:%d:%d: error: %s\n", path, d->items[i].line, d->items[i].col,
                    d->items[i].message ? d->items[i].message : "(no message)");
}

/* Loads and computes a lesson from a path. On any problem prints it, naming the path, and
 * returns false with nothing left to free. */
static bool try_load_path(const char *path, const char *name, loaded *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    lesson_diagnostics diagnostics;
    memset(&diagnostics, 0, sizeof diagnostics);
    lesson_status status = lesson_load(path, &out->l, &diagnostics);
    if (status != LESSON_OK || diagnostics.count != 0) {
        print_error("%s: does not load cleanly (status %d, %d diagnostics)\n", path, (int)status,
                    diagnostics.count);
        print_diagnostics(path, &diagnostics);
        lesson_diagnostics_free(&diagnostics);
        if (status == LESSON_OK) lesson_free(&out->l);
        return false;
    }
    lesson_diagnostics_free(&diagnostics);
    trace_failure failure;
    trace_status ts = trace_compute(&out->l.input, NULL, &out->t, &failure);
    if (ts != TRACE_OK) {
        print_error("%s: trace_compute failed: %s (stage %d, head %d, row %d, col %d)\n", path,
                    trace_status_message(ts), (int)failure.stage, failure.head, failure.row,
                    failure.col);
        lesson_free(&out->l);
        return false;
    }
    return true;
}

/* The same, failing the test on any problem. */
static void load_path(const char *path, const char *name, loaded *out)
{
    if (!try_load_path(path, name, out)) fail();
}

static void load(const char *name, loaded *out)
{
    char path[256];
    snprintf(path, sizeof path, "lessons/%s.yaml", name);
    load_path(path, name, out);
}

static void unload(loaded *x)
{
    trace_free(&x->t);
    lesson_free(&x->l);
}

/* Index of a query token (first one so written); fails when the lesson has no such token. */
static int row_of(const loaded *x, const char *token)
{
    for (int i = 0; i < x->l.n_tokens; i++)
        if (strcmp(x->l.tokens[i], token) == 0) return i;
    print_error("%s: no token \"%s\"\n", x->name, token);
    fail();
    return -1;
}

/* Index of a key token: a source token in cross-attention, a token otherwise. */
static int col_of(const loaded *x, const char *token)
{
    if (x->l.n_source > 0) {
        for (int i = 0; i < x->l.n_source; i++)
            if (strcmp(x->l.source[i], token) == 0) return i;
        print_error("%s: no source token \"%s\"\n", x->name, token);
        fail();
        return -1;
    }
    return row_of(x, token);
}

static const char *col_label(const loaded *x, int j)
{
    return x->l.n_source > 0 ? x->l.source[j] : x->l.tokens[j];
}

static double weight(const loaded *x, int head, const char *row, const char *col)
{
    return trace_value(&x->t, STAGE_WEIGHTS, head, row_of(x, row), col_of(x, col));
}

/* Fails unless |got - want| <= tolerance, naming the lesson and the cell. */
static void expect_near(const loaded *x, const char *cell, double got, double want,
                        double tolerance)
{
    if (!(fabs(got - want) <= tolerance)) {
        print_error("%s: %s = %.10g, expected %.10g within %g\n", x->name, cell, got, want,
                    tolerance);
        fail();
    }
}

static void expect_cell(const loaded *x, stage_id stage, int head, const char *row,
                        const char *col, double want, double tolerance)
{
    int r = row_of(x, row);
    int c;
    if (stage_get(stage)->cols == AXIS_SOURCE)
        c = col_of(x, col);
    else
        c = atoi(col);
    char cell[128];
    snprintf(cell, sizeof cell, "%s[head %d][%s,%s]", stage_get(stage)->name, head, row, col);
    expect_near(x, cell, trace_value(&x->t, stage, head, r, c), want, tolerance);
}

/* Fails unless `row` attends most to `want` in `head`; names the winner otherwise. */
static void expect_argmax(const loaded *x, int head, const char *row, const char *want)
{
    int r = row_of(x, row), best = 0;
    int m = trace_cols(&x->t, STAGE_WEIGHTS);
    for (int j = 1; j < m; j++)
        if (trace_value(&x->t, STAGE_WEIGHTS, head, r, j) >
            trace_value(&x->t, STAGE_WEIGHTS, head, r, best))
            best = j;
    if (best != col_of(x, want)) {
        print_error("%s: weights[head %d] row \"%s\" attends most to \"%s\" (%.4f), "
                    "expected \"%s\" (%.4f)\n",
                    x->name, head, row, col_label(x, best),
                    trace_value(&x->t, STAGE_WEIGHTS, head, r, best), want,
                    weight(x, head, row, want));
        fail();
    }
}

static void expect_below(const loaded *x, int head, const char *row, const char *col,
                         double limit)
{
    double w = weight(x, head, row, col);
    if (!(w < limit)) {
        print_error("%s: weights[head %d][%s,%s] = %.4f, expected below %g\n", x->name, head,
                    row, col, w, limit);
        fail();
    }
}

/* --- every lesson --- */

/* Every lesson in lessons/ (globbed, so a new lesson is covered) loads without a diagnostic,
 * computes, and each weights row of each head is a distribution: sums to 1 within 1e-12,
 * no negative weight, hidden cells exactly 0. */
static void test_every_lesson_loads_and_rows_sum_to_one(void **state)
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
        if (!try_load_path(path, path, &x)) {
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
                        print_error("%s: weights[head %d][%s,%s] = %.17g\n", path, h,
                                    x.l.tokens[i], col_label(&x, j), w);
                        fail();
                    }
                    sum += w;
                }
                if (!(fabs(sum - 1.0) <= 1e-12)) {
                    print_error("%s: weights[head %d] row \"%s\" sums to %.17g, not 1 "
                                "within 1e-12\n", path, h, x.l.tokens[i], sum);
                    fail();
                }
            }
        }
        if (x.l.title == NULL || x.l.title[0] == '\0' || x.l.about == NULL ||
            x.l.n_steps == 0) {
            print_error("%s: a shipped lesson needs a title, an about line and steps\n", path);
            fail();
        }
        unload(&x);
    }
    if (failures > 0) {
        print_error("%d of %zu lessons do not load cleanly\n", failures, found.gl_pathc);
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

/* Every predict-then-reveal question in every lesson agrees with the numbers it reveals:
 * a numeric answer is the value of the step's focus cell within the step's tolerance (so a
 * numeric question must focus the cell it asks about), and a multiple-choice answer on an
 * attention table that names a key token is the key the focus row attends to most. */
static void test_questions_match_the_numbers(void **state)
{
    (void)state;
    glob_t found;
    if (glob("lessons/*.yaml", 0, NULL, &found) != 0 || found.gl_pathc == 0) {
        print_error("no lessons found in lessons/ (run the tests from the repository root)\n");
        fail();
    }
    int problems = 0;
    for (size_t f = 0; f < found.gl_pathc; f++) {
        const char *path = found.gl_pathv[f];
        loaded x;
        if (!try_load_path(path, path, &x)) {
            problems++;
            continue;
        }
        for (int k = 0; k < x.l.n_steps; k++) {
            const lesson_step *step = &x.l.steps[k];
            if (step->ask == NULL) continue;
            int head = step->head > 0 ? step->head : 1;
            if (step->n_choices == 0) {
                if (step->focus_row < 0 || step->focus_col < 0) {
                    print_error("%s:%d: a numeric question needs a focus on the cell it asks "
                                "about\n", path, step->line);
                    problems++;
                    continue;
                }
                double v = trace_value(&x.t, step->stage, head, step->focus_row, step->focus_col);
                if (!(fabs(v - step->answer) <= step->tolerance)) {
                    print_error("%s:%d: question answer %g (± %g), but %s[head %d][%s,%d] = "
                                "%.6g\n", path, step->line, step->answer, step->tolerance,
                                stage_get(step->stage)->name, head,
                                x.l.tokens[step->focus_row], step->focus_col, v);
                    problems++;
                }
                continue;
            }
            const stage_info *info = stage_get(step->stage);
            if (!info->per_head || info->cols != AXIS_SOURCE || step->focus_row < 0 ||
                step->answer_choice < 0)
                continue;
            const char *answer = step->choices[step->answer_choice];
            int m = trace_cols(&x.t, step->stage), best = 0, named = -1;
            for (int j = 0; j < m; j++) {
                if (named < 0 && strcmp(col_label(&x, j), answer) == 0) named = j;
                if (trace_value(&x.t, step->stage, head, step->focus_row, j) >
                    trace_value(&x.t, step->stage, head, step->focus_row, best))
                    best = j;
            }
            if (named >= 0 && named != best) {
                print_error("%s:%d: question answer \"%s\", but in %s[head %d] row \"%s\" the "
                            "largest is \"%s\"\n", path, step->line, answer, info->name, head,
                            x.l.tokens[step->focus_row], col_label(&x, best));
                problems++;
            }
        }
        unload(&x);
    }
    globfree(&found);
    if (problems > 0) fail();
}

/* --- each lesson's claim --- */

/* The hand-worked example, every number the narration walks through. */
static void test_cat_sat(void **state)
{
    (void)state;
    loaded x;
    load("cat_sat", &x);
    assert_int_equal(x.t.d_k, 2);
    expect_cell(&x, STAGE_SCORES, 1, "cat", "cat", 1.25, 1e-12);
    expect_cell(&x, STAGE_SCORES, 1, "cat", "sat", 0.5, 1e-12);
    expect_cell(&x, STAGE_SCORES, 1, "sat", "sat", 1.0, 1e-12);
    expect_cell(&x, STAGE_SCALED, 1, "cat", "cat", 0.8839, 1e-4);
    expect_cell(&x, STAGE_SCALED, 1, "cat", "sat", 0.3536, 1e-4);
    expect_cell(&x, STAGE_MASKED, 1, "cat", "sat", 0.3536, 1e-4);
    expect_cell(&x, STAGE_WEIGHTS, 1, "cat", "cat", 0.6296, 1e-4);
    expect_cell(&x, STAGE_WEIGHTS, 1, "cat", "sat", 0.3704, 1e-4);
    expect_cell(&x, STAGE_WEIGHTS, 1, "sat", "cat", 0.4125, 1e-4);
    expect_cell(&x, STAGE_WEIGHTS, 1, "sat", "sat", 0.5875, 1e-4);
    expect_cell(&x, STAGE_CONTEXT, 1, "cat", "0", 0.6296, 1e-4);
    expect_cell(&x, STAGE_CONTEXT, 1, "cat", "1", 0.6852, 1e-4);
    expect_cell(&x, STAGE_OUTPUT, 1, "cat", "0", 0.6296, 1e-4);
    expect_cell(&x, STAGE_OUTPUT, 1, "cat", "1", 0.6852, 1e-4);
    /* the tutorial's rounded figures: 63% / 37%, output ≈ [0.63, 0.69] */
    expect_cell(&x, STAGE_OUTPUT, 1, "cat", "1", 0.69, 0.005);
    unload(&x);
}

static void test_bank_river(void **state)
{
    (void)state;
    loaded x;
    load("bank_river", &x);
    expect_argmax(&x, 1, "bank", "river");
    expect_cell(&x, STAGE_SCORES, 1, "bank", "river", 4.0, 1e-12);
    expect_cell(&x, STAGE_WEIGHTS, 1, "bank", "river", 0.6488, 1e-4);
    expect_below(&x, 1, "bank", "The", 0.1);
    expect_below(&x, 1, "bank", "of", 0.1);
    expect_below(&x, 1, "bank", "the", 0.1);
    expect_cell(&x, STAGE_WEIGHTS, 1, "bank", "The", 0.0878, 1e-4);
    unload(&x);
}

static void test_bank_loan(void **state)
{
    (void)state;
    loaded x;
    load("bank_loan", &x);
    assert_int_equal(x.t.heads, 2);
    expect_argmax(&x, 1, "bank", "river");
    expect_argmax(&x, 2, "bank", "loan");
    expect_cell(&x, STAGE_WEIGHTS, 1, "bank", "river", 0.71, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 2, "bank", "loan", 0.63, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 2, "bank", "gave", 0.15, 0.005);
    /* both views survive concat at full strength: water from head 1, money from head 2 */
    expect_cell(&x, STAGE_CONCAT, 1, "bank", "0", 0.71, 0.005);
    expect_cell(&x, STAGE_CONCAT, 1, "bank", "2", 0.70, 0.005);
    /* W_O writes half of each into the last column */
    expect_cell(&x, STAGE_OUTPUT, 1, "bank", "3", 0.74, 0.005);

    /* The narration's comparison: the same lesson with one head splits bank's attention. */
    attention_input one_head = x.l.input;
    one_head.heads = 1;
    trace one;
    assert_int_equal(trace_compute(&one_head, NULL, &one, NULL), TRACE_OK);
    int bank = row_of(&x, "bank");
    double river = trace_value(&one, STAGE_WEIGHTS, 1, bank, row_of(&x, "river"));
    double loan = trace_value(&one, STAGE_WEIGHTS, 1, bank, row_of(&x, "loan"));
    expect_near(&x, "weights[heads: 1][bank,river]", river, 0.33, 0.005);
    expect_near(&x, "weights[heads: 1][bank,loan]", loan, 0.33, 0.005);
    expect_near(&x, "context[heads: 1][bank,0]", trace_value(&one, STAGE_CONTEXT, 1, bank, 0),
                0.33, 0.005);
    expect_near(&x, "context[heads: 1][bank,2]", trace_value(&one, STAGE_CONTEXT, 1, bank, 2),
                0.39, 0.005);
    trace_free(&one);
    unload(&x);
}

static void test_animal_it(void **state)
{
    (void)state;
    loaded x;
    load("animal_it", &x);
    expect_argmax(&x, 1, "it", "animal");
    expect_cell(&x, STAGE_WEIGHTS, 1, "it", "animal", 0.85, 0.02);
    expect_below(&x, 1, "it", "street", 0.1);
    expect_cell(&x, STAGE_WEIGHTS, 1, "it", "street", 0.07, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 1, "it", "tired", 0.05, 0.005);
    expect_cell(&x, STAGE_OUTPUT, 1, "it", "0", 0.86, 0.005);
    unload(&x);
}

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
    expect_cell(&scrambled, STAGE_WEIGHTS, 1, "bank", "river", 0.6488, 1e-4);
    unload(&scrambled);
    unload(&bank);
}

/* With positional encoding the reordered sentence gets different weights: compared with
 * bank_river as shipped, and with bank_river given positional encoding as well. */
static void test_scrambled_positional_is_not(void **state)
{
    (void)state;
    loaded bank, positional;
    load("bank_river", &bank);
    load("scrambled_positional", &positional);
    assert_true(positional.l.input.positional);
    int perm[16];
    assert_true(positional.l.n_tokens <= 16);
    permutation(&bank, &positional, perm);
    int wi, wj;
    double d = permuted_difference(&bank.t, &positional.t, perm, &wi, &wj);
    if (!(d > 0.05)) {
        print_error("scrambled_positional: weights are bank_river's reordered (largest "
                    "difference %.3g)\n", d);
        fail();
    }
    attention_input bank_with_pe = bank.l.input;
    bank_with_pe.positional = true;
    trace with_pe;
    assert_int_equal(trace_compute(&bank_with_pe, NULL, &with_pe, NULL), TRACE_OK);
    d = permuted_difference(&with_pe, &positional.t, perm, &wi, &wj);
    if (!(d > 0.05)) {
        print_error("scrambled_positional: weights equal bank_river's with positional "
                    "encoding, reordered (largest difference %.3g)\n", d);
        fail();
    }
    trace_free(&with_pe);
    /* the numbers its narration quotes */
    expect_cell(&positional, STAGE_WEIGHTS, 1, "bank", "river", 0.39, 0.005);
    expect_cell(&positional, STAGE_WEIGHTS, 1, "bank", "of", 0.42, 0.005);
    expect_cell(&positional, STAGE_INPUT, 1, "bank", "1", -0.99, 0.005);
    unload(&positional);
    unload(&bank);
}

static void test_causal(void **state)
{
    (void)state;
    loaded x;
    load("causal", &x);
    assert_int_equal(x.l.input.mask, MASK_CAUSAL);
    int n = x.t.n;
    assert_true(n >= 3);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double masked = trace_value(&x.t, STAGE_MASKED, 1, i, j);
            double w = trace_value(&x.t, STAGE_WEIGHTS, 1, i, j);
            if (j > i) {
                if (!(isinf(masked) && masked < 0) || w != 0.0 || !trace_is_hidden(&x.t, i, j)) {
                    print_error("causal: [%s,%s] above the diagonal: masked = %g, weights = "
                                "%.17g (expected -inf and exactly 0)\n", x.l.tokens[i],
                                x.l.tokens[j], masked, w);
                    fail();
                }
            } else if (!(isfinite(masked) && w > 0) || trace_is_hidden(&x.t, i, j)) {
                print_error("causal: [%s,%s] on or below the diagonal is hidden (masked = %g, "
                            "weights = %g)\n", x.l.tokens[i], x.l.tokens[j], masked, w);
                fail();
            }
        }
    expect_cell(&x, STAGE_WEIGHTS, 1, "The", "The", 1.0, 0.0);
    expect_cell(&x, STAGE_WEIGHTS, 1, "cat", "The", 0.3704, 1e-4);
    expect_cell(&x, STAGE_WEIGHTS, 1, "cat", "cat", 0.6296, 1e-4);
    unload(&x);
}

/* no_scale and with_scale: identical but for `scale`; unscaled rows saturate, scaled rows
 * stay spread. */
static void test_scaling(void **state)
{
    (void)state;
    loaded off, on;
    load("no_scale", &off);
    load("with_scale", &on);
    if (off.l.input.scale || !on.l.input.scale || off.t.d_k < 16 || off.t.d_k != on.t.d_k ||
        off.t.n != on.t.n) {
        print_error("no_scale/with_scale: expected scale false/true (got %d/%d), the same d_k "
                    "of at least 16 (got %d/%d) and the same tokens (got %d/%d)\n",
                    off.l.input.scale, on.l.input.scale, off.t.d_k, on.t.d_k, off.t.n, on.t.n);
        fail();
    }
    /* the same lesson otherwise: same tokens, same scores */
    for (int i = 0; i < off.t.n; i++) {
        assert_string_equal(off.l.tokens[i], on.l.tokens[i]);
        for (int j = 0; j < off.t.n; j++)
            expect_near(&on, "scores (same as no_scale)",
                        trace_value(&on.t, STAGE_SCORES, 1, i, j),
                        trace_value(&off.t, STAGE_SCORES, 1, i, j), 0.0);
    }
    for (int i = 0; i < off.t.n; i++) {
        double max_off = 0, max_on = 0;
        for (int j = 0; j < off.t.n; j++) {
            max_off = fmax(max_off, trace_value(&off.t, STAGE_WEIGHTS, 1, i, j));
            max_on = fmax(max_on, trace_value(&on.t, STAGE_WEIGHTS, 1, i, j));
        }
        if (!(max_off > 0.9)) {
            print_error("no_scale: row \"%s\" has largest weight %.4f, expected above 0.9 "
                        "(saturated)\n", off.l.tokens[i], max_off);
            fail();
        }
        if (!(max_on < 0.5)) {
            print_error("with_scale: row \"%s\" has largest weight %.4f, expected below 0.5 "
                        "(spread)\n", on.l.tokens[i], max_on);
            fail();
        }
    }
    expect_cell(&off, STAGE_WEIGHTS, 1, "birds", "birds", 0.948, 0.0005);
    expect_cell(&off, STAGE_WEIGHTS, 1, "birds", "sing", 0.017, 0.0005);
    expect_cell(&on, STAGE_WEIGHTS, 1, "birds", "birds", 0.475, 0.0005);
    expect_cell(&on, STAGE_WEIGHTS, 1, "birds", "sing", 0.175, 0.0005);
    unload(&on);
    unload(&off);
}

static void test_four_heads(void **state)
{
    (void)state;
    loaded x;
    load("four_heads", &x);
    assert_int_equal(x.t.heads, 4);
    expect_argmax(&x, 1, "fox", "jumps");   /* subject → verb */
    expect_argmax(&x, 1, "jumps", "fox");
    expect_argmax(&x, 2, "quick", "fox");   /* adjective → noun */
    expect_argmax(&x, 2, "brown", "fox");
    expect_argmax(&x, 2, "lazy", "dog");
    expect_argmax(&x, 3, "jumps", "over");  /* preposition */
    expect_argmax(&x, 3, "over", "dog");
    expect_argmax(&x, 4, "fox", "dog");     /* long range */
    expect_cell(&x, STAGE_WEIGHTS, 1, "fox", "jumps", 0.68, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 1, "jumps", "fox", 0.52, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 2, "quick", "fox", 0.52, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 2, "lazy", "dog", 0.59, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 3, "jumps", "over", 0.68, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 3, "over", "dog", 0.59, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 4, "fox", "dog", 0.59, 0.005);
    unload(&x);
}

static void test_cross(void **state)
{
    (void)state;
    loaded x;
    load("cross", &x);
    assert_int_equal(x.l.n_source, 3);
    assert_true(trace_has_stage(&x.t, STAGE_SOURCE_INPUT));
    expect_argmax(&x, 1, "chat", "cat");
    expect_argmax(&x, 1, "noir", "black");
    expect_argmax(&x, 1, "Le", "The");
    expect_cell(&x, STAGE_WEIGHTS, 1, "chat", "cat", 0.74, 0.005);
    expect_cell(&x, STAGE_WEIGHTS, 1, "noir", "black", 0.74, 0.005);
    expect_cell(&x, STAGE_OUTPUT, 1, "chat", "1", 0.74, 0.005);
    unload(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson_loads_and_rows_sum_to_one),
        cmocka_unit_test(test_questions_match_the_numbers),
        cmocka_unit_test(test_cat_sat),
        cmocka_unit_test(test_bank_river),
        cmocka_unit_test(test_bank_loan),
        cmocka_unit_test(test_animal_it),
        cmocka_unit_test(test_scrambled_is_bank_river_reordered),
        cmocka_unit_test(test_scrambled_positional_is_not),
        cmocka_unit_test(test_causal),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_four_heads),
        cmocka_unit_test(test_cross),
    };
    return cmocka_run_group_tests_name("lessons", tests, NULL, NULL);
}
