/* Claims and live numbers (src/core/claim.h) on a small two-head trace whose values are known by
 * hand, and lesson_check, which applies them to a lesson: answers, `answer: auto`, claims,
 * placeholders written into the text, and the warning for a question the script answered. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "claim.h"
#include "cost.h"
#include "lesson.h"
#include "token_name.h"

/* cat [1, 0.5], sat [0, 1], mat [1, 0.5], W = identity, 2 heads (d_k = 1). Head 1 scores are
 * the products of column 0: cat row [1, 0, 1]; head 2 of column 1: cat row [0.25, 0.5, 0.25]. */
#define LESSON_TEXT \
    "title: t\n" \
    "tokens: [cat, sat, mat]\n" \
    "embeddings:\n" \
    "  cat: [1.0, 0.5]\n" \
    "  sat: [0.0, 1.0]\n" \
    "  mat: [1.0, 0.5]\n" \
    "heads: 2\n"

typedef struct {
    lesson l;
    trace t;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    fixture_load_traced(LESSON_TEXT, &f->l, &f->t);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    trace_free(&f->t);
    lesson_free(&f->l);
    free(f);
    return 0;
}

/* Whether a claim holds; it must parse. */
static bool holds(const trace *t, const char *text, int head) {
    claim c;
    char error[CLAIM_MESSAGE_MAX], detail[CLAIM_MESSAGE_MAX];
    if (!claim_parse(t, text, head, &c, error, sizeof error)) {
        fprintf(stderr, "'%s': %s\n", text, error);
        fail();
    }
    return claim_holds(t, &c, detail, sizeof detail);
}

/* The reason a claim does not parse. */
static void refused(const trace *t, const char *text, const char *expected) {
    claim c;
    char error[CLAIM_MESSAGE_MAX];
    assert_false(claim_parse(t, text, 1, &c, error, sizeof error));
    assert_string_equal(error, expected);
}

/* ---- claims ---- */

static void test_comparisons(void **state) {
    const trace *t = &((fixture *)*state)->t;
    assert_true(holds(t, "scores[cat,cat] > 0.9", 1));
    assert_false(holds(t, "scores[cat,cat] > 1", 1));
    assert_true(holds(t, "scores[cat,cat] >= 1", 1));
    assert_true(holds(t, "scores[cat,sat] < 0.1", 1));
    assert_true(holds(t, "scores[cat,sat] <= 0", 1));
    assert_false(holds(t, "scores[cat,sat] < 0", 1));
    assert_true(holds(t, "0.9 < scores[cat,cat]", 1));
    assert_true(holds(t, "scores[cat,sat] < scores[cat,cat]", 1));
    assert_false(holds(t, "scores[cat,cat] < scores[cat,mat]", 1));
    assert_true(holds(t, "scores[cat,cat] = scores[cat,mat]", 1));
    assert_true(holds(t, "scores[cat,sat] = 0.5", 2));
    assert_true(holds(t, "input[cat,1] == 0.5", 1));
    /* = is equality, not rounding: 0.5 is not "= 0" nor "= 0.50001" */
    assert_false(holds(t, "scores[cat,sat] = 0", 2));
    assert_false(holds(t, "scores[cat,sat] = 0.50001", 2));
}

/* A space after the cell's comma is how people write a pair: weights[cat, sat] is that cell,
 * and a misspelt column after the space is named without it. */
static void test_a_space_after_the_comma(void **state) {
    const trace *t = &((fixture *)*state)->t;
    assert_true(holds(t, "scores[cat, sat] < scores[cat,  cat]", 1));
    assert_true(holds(t, "scores[cat, sat] = 0.5", 2));
    assert_true(holds(t, "input[cat, 1] == 0.5", 1));
    refused(t, "scores[cat, sst] > 0", "no such cell 'scores[cat, sst]': 'sst' is not a column "
            "of scores; did you mean 'sat'?");
}

static void test_about_takes_its_tolerance_from_the_decimals(void **state) {
    const trace *t = &((fixture *)*state)->t;
    /* weights[cat,sat]@2 = e^0.5 / (2 e^0.25 + e^0.5) */
    double w = exp(0.5) / (2 * exp(0.25) + exp(0.5));
    char claim_text[128];
    snprintf(claim_text, sizeof claim_text, "weights[cat,sat] ≈ %.2f", w + 0.004);
    assert_true(holds(t, claim_text, 2));
    snprintf(claim_text, sizeof claim_text, "weights[cat,sat] ≈ %.3f", w + 0.004);
    assert_false(holds(t, claim_text, 2));
    snprintf(claim_text, sizeof claim_text, "weights[cat,sat] ~ %.3f ± 0.005", w + 0.004);
    assert_true(holds(t, claim_text, 2));
    snprintf(claim_text, sizeof claim_text, "weights[cat,sat] ~ %.3f +- 0.003", w + 0.004);
    assert_false(holds(t, claim_text, 2));
    assert_true(holds(t, "weights[cat,sat] ≈ 0.4", 2));   /* ± 0.05 */
    assert_true(holds(t, "weights[cat,sat] ≈ 391e-3", 2));   /* ± 0.0005 */
    assert_false(holds(t, "weights[cat,sat] ≈ 392e-3", 2));
    assert_true(holds(t, "weights[cat,sat] < 4E-1", 2));
    assert_true(holds(t, "scores[cat,sat] > −1", 2));   /* the typeset minus, U+2212 */
    assert_true(holds(t, "scores[cat,sat] > -1e9", 2));
    assert_true(holds(t, "weights[cat,sat] ≈ weights[cat,cat] ± 0.1", 2));
    assert_false(holds(t, "weights[cat,sat] ≈ weights[cat,cat] ± 0.01", 2));
}

/* Every comparison reads the same with its operands swapped: a number on the left of ≈ gives
 * the tolerance from its decimals as on the right, and A < B is B > A (issue 32: claims were
 * tested with the number on the right of ≈ only). weights[cat,sat] at head 2 is 0.39099. */
static void test_claims_in_both_operand_orders(void **state) {
    const trace *t = &((fixture *)*state)->t;
    assert_true(holds(t, "0.4 ≈ weights[cat,sat]", 2));       /* ± 0.05 */
    assert_true(holds(t, "391e-3 ≈ weights[cat,sat]", 2));    /* ± 0.0005 */
    assert_false(holds(t, "392e-3 ≈ weights[cat,sat]", 2));
    assert_true(holds(t, "0.392 ~ weights[cat,sat] ± 0.002", 2));   /* 0.39099 */
    assert_false(holds(t, "0.392 ~ weights[cat,sat] ± 0.001", 2));
    assert_true(holds(t, "weights[cat,cat] ≈ weights[cat,sat] ± 0.1", 2));
    static const struct { const char *op, *mirror; } ops[] = {
        { "<", ">" }, { "<=", ">=" }, { ">", "<" }, { ">=", "<=" }, { "=", "=" },
    };
    static const char *const numbers[] = { "0.3", "0.39", "0.5", "1" };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t n = 0; n < sizeof numbers / sizeof numbers[0]; n++) {
            char left[96], right[96];
            snprintf(left, sizeof left, "weights[cat,sat] %s %s", ops[o].op, numbers[n]);
            snprintf(right, sizeof right, "%s %s weights[cat,sat]", numbers[n], ops[o].mirror);
            if (holds(t, left, 2) != holds(t, right, 2)) {
                print_error("'%s' and '%s' disagree\n", left, right);
                fail();
            }
        }
    /* and the swapped claims are not all true or all false: they depend on the number */
    assert_true(holds(t, "0.3 < weights[cat,sat]", 2));
    assert_false(holds(t, "0.5 < weights[cat,sat]", 2));
}

static void test_heads(void **state) {
    const trace *t = &((fixture *)*state)->t;
    assert_true(holds(t, "scores[cat,cat] = 1", 1));
    assert_true(holds(t, "scores[cat,cat] = 0.25", 2));
    assert_true(holds(t, "scores[cat,cat]@2 = 0.25", 1));
    assert_true(holds(t, "scores[cat,cat]@1 > scores[cat,cat]@2", 2));
}

static void rendered(const trace *t, const char *text, int head, const char *expected);

static void test_argmax_and_argmin(void **state) {
    const trace *t = &((fixture *)*state)->t;
    assert_true(holds(t, "argmax weights[cat] = sat", 2));
    assert_false(holds(t, "argmax weights[cat] = cat", 2));
    assert_true(holds(t, "argmin weights[cat] = cat", 2));
    assert_true(holds(t, "argmin weights[cat] = mat", 2));   /* a tie with the least holds */
    assert_true(holds(t, "argmax weights[cat]@1 = mat", 2));
    assert_true(holds(t, "argmax  scores[sat]  =  sat ", 2));
    assert_int_equal(claim_extreme(t, STAGE_WEIGHTS, 1, 0, true), 0);  /* ties: the first */
    /* every weights row here ties its first and last keys (cat and mat share an embedding), so
     * the extreme in a row's last column is asked of input, whose last column sat owns alone */
    assert_true(holds(t, "argmax input[sat] = 1", 1));
    assert_false(holds(t, "argmax input[sat] = 0", 1));
    assert_true(holds(t, "argmin input[cat] = 1", 1));
    rendered(t, "{argmax input[sat]}", 1, "1");
    claim c;
    char error[CLAIM_MESSAGE_MAX], detail[CLAIM_MESSAGE_MAX];
    assert_true(claim_parse(t, "argmax weights[cat] = cat", 2, &c, error, sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "argmax of weights[cat] is sat (0.391; cat is 0.3045)");
}

static void test_false_claims_say_the_numbers(void **state) {
    const trace *t = &((fixture *)*state)->t;
    claim c;
    char error[CLAIM_MESSAGE_MAX], detail[CLAIM_MESSAGE_MAX];
    assert_true(claim_parse(t, "weights[cat,sat] > 0.6", 2, &c, error, sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "weights[cat,sat] is 0.391");
    assert_true(claim_parse(t, "weights[cat,sat] < weights[cat,cat]", 2, &c, error,
                            sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "weights[cat,sat] is 0.391, weights[cat,cat] is 0.3045");
    assert_true(claim_parse(t, "weights[cat,sat] ≈ 0.392", 2, &c, error, sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "weights[cat,sat] is 0.391, not within ± 0.0005");
    assert_true(claim_parse(t, "weights[cat,sat] ≈ 0.39112", 2, &c, error, sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "weights[cat,sat] is 0.390991, not within ± 0.000005");
}

static void test_unreadable_claims(void **state) {
    const trace *t = &((fixture *)*state)->t;
    refused(t, "weights[cat,sat] 0.6", "expected one of < <= > >= = ≈ ~ after 'weights[cat,sat]'");
    refused(t, "weights[cat,dog] < 1", "no such cell 'weights[cat,dog]': name the row and "
            "column by token or by 0-based index");
    refused(t, "weights[cat,sat]@3 < 1", "head 3 does not exist: this lesson has 2 heads");
    refused(t, "weights[cat,sat] ≈ weights[cat,cat]",
            "≈ between two cells or counts needs its tolerance: ± T");
    refused(t, "argmax weights[cat] = dog", "'dog' is not a column of weights");
    refused(t, "argmax weights[cat] sat", "write argmax weights[cat] = LABEL");
    refused(t, "1 < 2", "a claim compares at least one cell or count");
    refused(t, "weights[cat,sat] < 1 ± 0.1", "a tolerance (±) goes with ≈ only");
    refused(t, "weights[cat,sat] ≈ 1 ± x", "± needs a number of at least 0");
    refused(t, "weights[cat,sat] < 1 and more", "unexpected 'and more' after the claim");
    refused(t, "cat < 1", "'cat < 1' is not a cell: write STAGE[ROW,COL], optionally @HEAD");
    refused(t, "wieghts[cat,sat] < 1", "unknown stage 'wieghts'; did you mean 'weights'? (stages: "
            "input Q K V scores scaled masked weights context concat output)");
    refused(t, "weights[cta,sat] < 1", "no such cell 'weights[cta,sat]': 'cta' is not a row of "
            "weights; did you mean 'cat'?");
    refused(t, "weights[cat,Sat] < 1", "no such cell 'weights[cat,Sat]': 'Sat' is not a column of "
            "weights; did you mean 'sat'?");
    refused(t, "Q[cat,9] < 1", "no such cell 'Q[cat,9]': column index 9 is out of range: Q has "
            "columns 0 to 1");
    refused(t, "Q[9,0] < 1", "no such cell 'Q[9,0]': row index 9 is out of range: Q has rows 0 to 2");
    /* a stage the lesson lacks: the loader's sentence, not "unknown stage" */
    refused(t, "biased[cat,sat] < 1", "stage 'biased' exists only with 'bias: alibi'");
    refused(t, "source_input[cat,0] < 1",
            "stage 'source_input' exists only in cross-attention (with 'source')");
}

/* ---- live numbers ---- */

static void rendered(const trace *t, const char *text, int head, const char *expected) {
    claim_text_error error;
    char out[256];
    int length = claim_render(t, text, head, out, sizeof out, &error);
    if (length < 0) fprintf(stderr, "'%s': %s\n", text, error.message);
    assert_int_equal(length, (int)strlen(expected));
    assert_string_equal(out, expected);
    assert_int_equal(claim_render(t, text, head, NULL, 0, &error), length);
}

static void test_placeholders(void **state) {
    const trace *t = &((fixture *)*state)->t;
    rendered(t, "no braces", 1, "no braces");
    rendered(t, "cat gives {weights[cat,sat]} to sat", 2, "cat gives 0.391 to sat");
    rendered(t, "{weights[cat,sat]:2} and {weights[cat,sat]:6}", 2, "0.39 and 0.390991");
    rendered(t, "{scores[cat,cat]:2}, {scores[cat,cat]}", 1, "1.00, 1.0");
    rendered(t, "{argmax weights[cat]} {argmin weights[cat]@2}", 2, "sat cat");
    rendered(t, "{scores[cat,sat]@2}", 1, "0.5");
    rendered(t, "{{literal} {{{scores[cat,sat]}}", 1, "{literal} {0.0}");
}

/* Issue 24: a repeated token is named by its position ("the@2") in claims and placeholders,
 * and named so in the messages that name a cell. */
static void test_repeated_tokens_by_position(void **state) {
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced("title: t\ntokens: [the, cat, the]\nembeddings:\n  the: [1.0, 0.0]\n"
                        "  cat: [0.0, 2.0]\n", &l, &t);
    assert_true(holds(&t, "scores[the@2,the@0] = scores[the@0,the@0]", 1));
    rendered(&t, "{scores[the@2,cat]} {scores[the@2,the@2]}", 1, "0.0 1.0");
    trace_cell cell = {STAGE_SCORES, 1, 2, 1};
    char name[CLAIM_MESSAGE_MAX];
    claim_cell_name(&t, &cell, name, sizeof name);
    assert_string_equal(name, "scores[the@2,cat]");
    cell.row = 0;   /* the first "the" is as ambiguous as the later one */
    claim_cell_name(&t, &cell, name, sizeof name);
    assert_string_equal(name, "scores[the@0,cat]");
    refused(&t, "scores[the@1,cat] = 0",
            "no such cell 'scores[the@1,cat]': name the row and column by token or by 0-based index");
    /* the plain name could be either "the": refused, on either side, with what to write */
    const char *which = "'the' appears at positions 0 and 2: write the@0 or the@2";
    char expected[CLAIM_MESSAGE_MAX];
    snprintf(expected, sizeof expected, "cell 'scores[the,cat]' is ambiguous: %s", which);
    refused(&t, "scores[the,cat] = 0", expected);
    snprintf(expected, sizeof expected, "cell 'scores[cat,the]' is ambiguous: %s", which);
    refused(&t, "scores[cat,the] = 0", expected);
    snprintf(expected, sizeof expected, "cell 'scores[the,the]' is ambiguous: %s", which);
    refused(&t, "scores[the,the] = 0", expected);
    refused(&t, "argmin scores[cat] = the", which);
    assert_true(holds(&t, "argmin scores[cat] = the@0", 1));   /* ties go to the first */
    snprintf(expected, sizeof expected, "placeholder '{weights[the,cat]}': cell "
             "'weights[the,cat]' is ambiguous: %s", which);
    claim_text_error error;
    char out[256];
    assert_int_equal(claim_render(&t, "{weights[the,cat]}", 1, out, sizeof out, &error), -1);
    assert_string_equal(error.message, expected);
    trace_free(&t);
    lesson_free(&l);
}

/* The refusal lists a token's positions: every one up to six, the first three to write. */
static void test_repeated_token_refusal_lists_positions(void **state) {
    (void)state;
    const char *tokens[] = { "a", "b", "a", "a", "a", "a", "a", "a", "a" };
    token_axis four = token_axis_of(tokens, 5), many = token_axis_of(tokens, 9);
    char why[256];
    token_name_refusal(&four, "a", 1, why, sizeof why);
    assert_string_equal(why, "'a' appears at positions 0, 2, 3 and 4: write a@0, a@2, a@3 or "
                             "another a@POSITION");
    token_name_refusal(&many, "a", 1, why, sizeof why);
    assert_string_equal(why, "'a' appears at positions 0, 2, 3, 4, 5, 6 and 2 more: write a@0, "
                             "a@2, a@3 or another a@POSITION");
    int index = -1;
    assert_int_equal(token_name_find(&four, "b", 1, &index), TOKEN_NAME_FOUND);
    assert_int_equal(index, 1);
    assert_int_equal(token_name_find(&four, "a@3", 3, &index), TOKEN_NAME_FOUND);
    assert_int_equal(index, 3);
    assert_int_equal(token_name_find(&four, "a", 1, &index), TOKEN_NAME_REPEATED);
    assert_int_equal(token_name_find(&four, "b@0", 3, &index), TOKEN_NAME_NONE);
    assert_int_equal(token_name_find(&four, "a@5", 3, &index), TOKEN_NAME_NONE);
}

static void bad_placeholder(const trace *t, const char *text, size_t offset, int index,
                            const char *message) {
    claim_text_error error;
    char out[256];
    assert_int_equal(claim_render(t, text, 1, out, sizeof out, &error), -1);
    assert_int_equal(error.offset, offset);
    assert_int_equal(error.index, index);
    assert_string_equal(error.message, message);
}

static void test_bad_placeholders(void **state) {
    const trace *t = &((fixture *)*state)->t;
    bad_placeholder(t, "a {scores[cat,sat]} b {scores[cat,dog]}", 22, 1,
                    "placeholder '{scores[cat,dog]}': no such cell 'scores[cat,dog]': name the "
                    "row and column by token or by 0-based index");
    bad_placeholder(t, "{{ {scores[cat,sat]\nnext}", 3, 0,
                    "placeholder '{scores[cat,sat]' has no closing '}' (write {{ for a brace)");
    bad_placeholder(t, "{scores[cat,sat]:x}", 0, 0,
                    "placeholder '{scores[cat,sat]:x}': 'x' is not a number of decimals from 0 "
                    "to 17");
    bad_placeholder(t, "{scores[cat,sat] sat}", 0, 0,
                    "placeholder '{scores[cat,sat] sat}': unexpected 'sat' after the cell");
    bad_placeholder(t, "{}", 0, 0, "placeholder '{}': '' is not a cell: write STAGE[ROW,COL], "
                    "optionally @HEAD");
    size_t open = 0, length = 0;
    assert_true(claim_placeholder_find("{{a} {b}", 0, &open, &length));
    assert_int_equal(open, 5);
    assert_int_equal(length, 3);
    assert_false(claim_placeholder_find("{{a}", 0, &open, &length));
}

/* ---- counts of the layer ---- */

/* The fixture's layer: n = 3 tokens, d_model 2, 2 heads of d_k 1, no mask. Counted by hand: a
 * projection is n·d_model² multiplications, the scores heads·n·n·d_k, the context
 * heads·n·n·d_k, the softmax heads·n·n exponentials and the scaling heads·n·n divisions. */
static void test_counts_by_hand(void **state) {
    const trace *t = &((fixture *)*state)->t;
    rendered(t, "{multiplications scores}", 1, "18");                  /* 2·3·3·1 */
    rendered(t, "{multiplications scores at 1024}", 1, "2,097,152");   /* 2·1024·1024·1 */
    rendered(t, "{multiplications Q at 10}", 1, "40");                 /* 10·2·2 */
    rendered(t, "{additions Q at 10}", 1, "20");                       /* 10·2·(2 − 1) */
    rendered(t, "{multiplications context at 16}", 1, "512");          /* 2·16·16·1 */
    rendered(t, "{exponentials weights at 8}", 1, "128");              /* 2·8·8 */
    rendered(t, "{divisions scaled at 8}", 1, "128");
    /* held: 2 heads of 8 × 8 doubles; a derived stage holds nothing */
    rendered(t, "{bytes weights at 8} {bytes scaled at 8}", 1, "1,024 0");
    rendered(t, "{bytes Q at 8}", 1, "128");                           /* 8 × 2 doubles */
    rendered(t, "{multiplications total}", 1, "84");          /* 4 projections of 12, 18, 18 */
    /* four projections of 4096·2·2, scores and context of 2·4096·4096·1 each */
    rendered(t, "{multiplications total at 4096}", 1, "67,174,400");
    rendered(t, "{parameters} in all, {parameters W_K} in W_K", 1, "16 in all, 4 in W_K");
    rendered(t, "{ multiplications  scores   at  2 }", 1, "8");
    assert_true(holds(t, "multiplications scores at 1024 = 2097152", 1));
    assert_false(holds(t, "multiplications scores at 1024 = 2097153", 1));
    assert_true(holds(t, "multiplications scores = 18", 1));
    assert_true(holds(t, "parameters = 16", 1));
    assert_true(holds(t, "parameters W_Q = parameters W_O", 1));
    /* n² · d_model against n · d_model²: equal at n = d_model, the scores ahead after it */
    assert_true(holds(t, "multiplications scores at 2 = multiplications Q at 2", 1));
    assert_true(holds(t, "multiplications scores at 3 > multiplications Q at 3", 1));
    assert_true(holds(t, "multiplications scores at 1 < multiplications Q at 1", 1));
    assert_true(holds(t, "multiplications scores at 1024 ≈ 2.1e6 ± 1e5", 1));
    assert_true(holds(t, "3 < multiplications context", 1));
    claim c;
    char error[CLAIM_MESSAGE_MAX], detail[CLAIM_MESSAGE_MAX];
    assert_true(claim_parse(t, "multiplications scores at 1024 < multiplications Q at 1024", 1,
                            &c, error, sizeof error));
    assert_false(claim_holds(t, &c, detail, sizeof detail));
    assert_string_equal(detail, "multiplications scores at 1024 is 2,097,152, multiplications Q "
                                "at 1024 is 4,096");
    /* a count names no cell: it never tells a question's answer */
    trace_cell cell = { STAGE_SCORES, 1, 0, 0 };
    assert_false(claim_text_names(t, "{multiplications scores} {parameters}", 1, &cell, true));
}

static void test_unreadable_counts(void **state) {
    const trace *t = &((fixture *)*state)->t;
    refused(t, "multiplications scroes > 1", "unknown stage 'scroes'; did you mean 'scores'? "
            "(stages: input Q K V scores scaled masked weights context concat output)");
    refused(t, "multiplications biased > 1", "stage 'biased' exists only with 'bias: alibi'");
    refused(t, "multiplications > 1",
            "write multiplications STAGE, or multiplications total, optionally 'at N' tokens");
    refused(t, "additions at 4 > 1",
            "write additions STAGE, or additions total, optionally 'at N' tokens");
    refused(t, "multiplications scores at 4097 > 1",
            "'at 4097' is out of range: count a sentence of 1 to 4096 tokens");
    refused(t, "multiplications scores at 0 > 1",
            "'at 0' is out of range: count a sentence of 1 to 4096 tokens");
    refused(t, "multiplications scores at 99999999999999999999 > 1", "'at 99999999999999999999' "
            "is out of range: count a sentence of 1 to 4096 tokens");
    refused(t, "multiplications scores at > 1",
            "'at' takes a whole number of tokens, as in 'at 1024'");
    refused(t, "multiplications scores at 2.5 > 1",
            "'at' takes a whole number of tokens, as in 'at 1024'");
    refused(t, "parameters at 16 > 1",
            "the parameters do not depend on the sentence's length: leave out 'at 16'");
    refused(t, "parameters W_X > 1", "'W_X' is not a parameter; did you mean 'W_Q'? (its "
            "parameters: W_Q W_K W_V W_O)");
    refused(t, "parameters b_Q > 1", "this lesson has no b_Q (its parameters: W_Q W_K W_V W_O)");
    refused(t, "multiplications scores ≈ multiplications Q",
            "≈ between two cells or counts needs its tolerance: ± T");
    bad_placeholder(t, "{multiplications scores:2}", 0, 0, "placeholder "
                    "'{multiplications scores:2}': a count is a whole number: leave out ':2'");
    bad_placeholder(t, "{multiplications scores@2}", 0, 0, "placeholder "
                    "'{multiplications scores@2}': unexpected '@2' after the count");
}

/* A lesson that is no rule at another length: cross-attention (how long is the source?) and a
 * mask of the lesson's own cells; at the lesson's own length both count. A causal mask and a
 * window count the cells they leave visible: n(n + 1)/2 a head for causal. */
static void test_counts_at_another_length(void **state) {
    (void)state;
    lesson l;
    trace t;
    fixture_load_traced("title: t\ntokens: [a, b]\nsource: [c, d, e]\nd_model: 2\n"
                        "embeddings: {random: normal, seed: 1}\n", &l, &t);
    refused(&t, "multiplications scores at 8 > 1",
            "'at 8' counts self-attention over 8 tokens, but this lesson has a source");
    assert_true(holds(&t, "multiplications scores at 2 = 12", 1));   /* 1·2·3·2 */
    trace_free(&t);
    lesson_free(&l);
    fixture_load_traced("title: t\ntokens: [a, b]\nmask: [[1, 0], [1, 1]]\nd_model: 2\n"
                        "embeddings: {random: normal, seed: 1}\n", &l, &t);
    refused(&t, "exponentials weights at 8 > 1", "'at 8' needs a mask that is a rule (none, "
            "causal or a window): this lesson's own mask has cells for its 2 tokens only");
    assert_true(holds(&t, "exponentials weights at 2 = 3", 1));
    trace_free(&t);
    lesson_free(&l);
    fixture_load_traced("title: t\ntokens: [a, b]\nmask: causal\nd_model: 4\nheads: 2\n"
                        "embeddings: {random: normal, seed: 1}\n", &l, &t);
    assert_true(holds(&t, "exponentials weights at 100 = 10100", 1));   /* 2 · 100·101/2 */
    trace_free(&t);
    lesson_free(&l);
    /* a window of 3: rows see 1, 2, then 3 keys each; 2 · (1 + 2 + 3 · 6) = 42 */
    fixture_load_traced("title: t\ntokens: [a, b]\nmask: {window: 3}\nd_model: 4\nheads: 2\n"
                        "embeddings: {random: normal, seed: 1}\n", &l, &t);
    assert_true(holds(&t, "exponentials weights at 8 = 42", 1));
    assert_true(holds(&t, "exponentials weights at 2 = 6", 1));
    trace_free(&t);
    lesson_free(&l);
}

/* Counted at N from shapes alone, a stage's counts are those of the trace of N tokens, whatever
 * the configuration: rope, ALiBi, a window, grouped heads, the online softmax, a norm, the
 * residual, a loss and its gradients. */
static void test_counts_at_n_are_a_real_traces(void **state) {
    (void)state;
    #define ROW "[1, 0, 0, 1]"
    static const char *const configurations[][2] = {   /* for 3 tokens, for 8 */
        { "heads: 2\n", "heads: 2\n" },
        { "heads: 2\nkv_heads: 1\nW_K: {random: normal, seed: 2}\nW_V: {random: normal, seed: 3}\n"
          "positional: rope\nmask: {window: 3}\n", NULL },
        { "heads: 2\nbias: alibi\nmask: causal\nsoftmax: online\ntile: 3\n", NULL },
        { "norm: {kind: layer}\nresidual: true\nloss: {target: [" ROW ", " ROW ", " ROW "]}\n",
          "norm: {kind: layer}\nresidual: true\nloss: {target: [" ROW ", " ROW ", " ROW ", " ROW
          ", " ROW ", " ROW ", " ROW ", " ROW "]}\n" },
    };
    #undef ROW
    for (size_t k = 0; k < sizeof configurations / sizeof configurations[0]; k++) {
        char text[1024];
        lesson short_l, long_l;
        trace short_t, long_t;
        const char *longer = configurations[k][1] ? configurations[k][1] : configurations[k][0];
        snprintf(text, sizeof text, "title: t\ntokens: [a, b, c]\nd_model: 4\n"
                 "embeddings: {random: normal, seed: 1}\n%s", configurations[k][0]);
        fixture_load_traced(text, &short_l, &short_t);
        snprintf(text, sizeof text, "title: t\ntokens: [a, b, c, d, e, f, g, h]\nd_model: 4\n"
                 "embeddings: {random: normal, seed: 1}\n%s", longer);
        fixture_load_traced(text, &long_l, &long_t);
        for (int s = 0; s < STAGE_COUNT; s++) {
            if (!trace_has_stage(&long_t, (stage_id)s))
                continue;
            cost_counts at, real;
            cost_stage_at(&short_t, 8, (stage_id)s, &at);
            cost_stage(&long_t, (stage_id)s, &real);
            assert_memory_equal(&at, &real, sizeof at);
        }
        trace_free(&short_t);
        trace_free(&long_t);
        lesson_free(&short_l);
        lesson_free(&long_l);
    }
}

static void test_text_names_a_cell(void **state) {
    const trace *t = &((fixture *)*state)->t;
    trace_cell cell = { STAGE_WEIGHTS, 2, 0, 1 };   /* weights[cat,sat]@2 */
    assert_true(claim_text_names(t, "x {weights[cat,sat]} y", 2, &cell, false));
    assert_true(claim_text_names(t, "{weights[cat,sat]@2:1}", 1, &cell, false));
    assert_false(claim_text_names(t, "{weights[cat,sat]}", 1, &cell, false));   /* head 1 */
    assert_false(claim_text_names(t, "{weights[cat,mat]} {{weights[cat,sat]}", 2, &cell,
                                  false));
    assert_false(claim_text_names(t, "{argmax weights[cat]}", 2, &cell, false));
    assert_true(claim_text_names(t, "{argmax weights[cat]}", 2, &cell, true));
    assert_true(claim_text_names(t, "{argmin weights[cat]@2}", 1, &cell, true));
    assert_false(claim_text_names(t, "{argmax weights[sat]}", 2, &cell, true));
    assert_false(claim_text_names(t, "{weights[cat,dog]} {weights[cat", 2, &cell, true));
}

/* ---- lesson_check ---- */

/* Loads LESSON_TEXT with steps, checks it, and compares the printed diagnostics. */
static lesson_status checked(const char *steps, bool warnings, const char *expected,
                             fixture *f) {
    char text[4096];
    snprintf(text, sizeof text, "%ssteps:\n%s", LESSON_TEXT, steps);
    fixture_load_traced(text, &f->l, &f->t);
    lesson_diagnostics d;
    lesson_status status = lesson_check(&f->l, &f->t, warnings, &d);
    fixture_diagnostics_are(&d, expected);
    lesson_diagnostics_free(&d);
    return status;
}

static void release(fixture *f) {
    trace_free(&f->t);
    lesson_free(&f->l);
}

static void test_check_writes_live_numbers(void **state) {
    (void)state;
    fixture f;
    assert_int_equal(checked("  - stage: weights\n"
                             "    head: 2\n"
                             "    say: cat gives {weights[cat,sat]} to sat, {{sic}\n"
                             "    ask: 'Cat keeps {weights[cat,cat]:1}; and for sat?'\n"
                             "    focus: [cat, sat]\n"
                             "    answer: auto\n"
                             "    expect: argmax weights[cat] = sat\n", true, "", &f),
                     LESSON_OK);
    assert_string_equal(f.l.steps[0].say, "cat gives 0.391 to sat, {sic}");
    assert_string_equal(f.l.steps[0].ask, "Cat keeps 0.3; and for sat?");
    assert_true(f.l.steps[0].answer_auto);
    assert_true(fabs(f.l.steps[0].answer - exp(0.5) / (2 * exp(0.25) + exp(0.5))) < 1e-15);
    release(&f);
}

static void test_check_answer_auto_with_choices(void **state) {
    (void)state;
    fixture f;
    assert_int_equal(checked("  - stage: weights\n"
                             "    head: 2\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word does cat look at most?\n"
                             "    choices: [cat, sat, mat]\n"
                             "    answer: auto\n", true, "", &f), LESSON_OK);
    assert_int_equal(f.l.steps[0].answer_choice, 1);
    release(&f);
}

/* Issue 24: an explicit choice key is checked as `answer: auto` would take it. In head 1 cat's
 * largest weight is at cat (and mat, its twin), so sat is the key of no "most" question; a key
 * that is not the choice naming the focus column is refused; each error at the key's line. */
static void test_check_explicit_choice_keys(void **state) {
    (void)state;
    fixture f;
    assert_int_equal(checked("  - stage: weights\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word does cat look at most?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: sat\n"
                             "  - stage: weights\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word is named second?\n"
                             "    choices: [sat, neither]\n"
                             "    answer: neither\n", false,
                             "t.yaml:13:13: error: answer 'sat' is the column of the focus "
                             "weights[cat,sat], but the question asks for the largest and that "
                             "row's largest value is at 'cat'; put the focus and the answer "
                             "there\n"
                             "   13 |     answer: sat\n"
                             "      |             ^\n"
                             "t.yaml:18:13: error: answer 'neither' is not the column of the "
                             "focus weights[cat,sat]; a choice that names a column is the right "
                             "one only at the focus\n"
                             "   18 |     answer: neither\n"
                             "      |             ^\n", &f), LESSON_INVALID);
    release(&f);
    /* the same key where the question asks no largest, and at head 2, where sat is largest */
    assert_int_equal(checked("  - stage: weights\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word is named second?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: sat\n"
                             "  - stage: weights\n"
                             "    head: 2\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word does cat look at most?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: sat\n", false, "", &f), LESSON_OK);
    release(&f);
}

/* The counterpart for the smallest: a key of a question asking for the least (least, smallest,
 * lowest, …) must be its row's smallest value. In head 1 cat's row is [0.42, 0.16, 0.42]: sat is
 * the least; in head 2 [0.31, 0.38, 0.31]: cat (and mat, its twin). "at least half" is a bound,
 * not the question; `answer: auto` is warned of against the smallest too. */
static void test_check_keys_that_ask_for_the_least(void **state) {
    (void)state;
    fixture f;
    assert_int_equal(checked("  - stage: weights\n"
                             "    focus: [cat, cat]\n"
                             "    ask: Which word will cat look at least?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: cat\n", false,
                             "t.yaml:13:13: error: answer 'cat' is the column of the focus "
                             "weights[cat,cat], but the question asks for the smallest and that "
                             "row's smallest visible value is at 'sat'; put the focus and the "
                             "answer there\n"
                             "   13 |     answer: cat\n"
                             "      |             ^\n", &f), LESSON_INVALID);
    release(&f);
    assert_int_equal(checked("  - stage: weights\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which word gets the smallest share of cat's attention?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: sat\n"
                             "  - stage: weights\n"
                             "    head: 2\n"
                             "    focus: [cat, mat]\n"
                             "    ask: Which word does cat score LOWEST in head 2?\n"
                             "    choices: [sat, mat]\n"
                             "    answer: mat\n"
                             "  - stage: weights\n"
                             "    focus: [cat, cat]\n"
                             "    ask: Which word gets at least half of what mat gets?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: cat\n", false, "", &f), LESSON_OK);
    release(&f);
    assert_int_equal(checked("  - stage: weights\n"
                             "    focus: [cat, cat]\n"
                             "    ask: Which word will cat look at least?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: auto\n", true,
                             "t.yaml:13:13: warning: 'answer: auto' takes 'cat', the column of "
                             "the focus weights[cat,cat], but the question asks for the smallest "
                             "and that row's smallest visible value is at 'sat'; put the focus "
                             "there\n"
                             "   13 |     answer: auto\n"
                             "      |             ^\n", &f), LESSON_OK);
    release(&f);
}

static void test_check_refuses_wrong_answers(void **state) {
    (void)state;
    fixture f;
    assert_int_equal(checked("  - stage: weights\n"
                             "    head: 2\n"
                             "    focus: [cat, sat]\n"
                             "    ask: How much?\n"
                             "    answer: 0.38\n"
                             "  - stage: context\n"
                             "    head: 2\n"
                             "    focus: [cat, \"0\"]\n"
                             "    ask: And here?\n"
                             "    answer: 0.6\n"
                             "    tolerance: 0.01\n", false,
                             "t.yaml:13:13: error: answer 0.38 is not weights[cat,sat]@2 "
                             "(0.391 ± 0.005)\n"
                             "   13 |     answer: 0.38\n"
                             "      |             ^\n"
                             "t.yaml:18:13: error: answer 0.6 is not context[cat,0]@2 "
                             "(0.6955 ± 0.01)\n"
                             "   18 |     answer: 0.6\n"
                             "      |             ^\n", &f),
                     LESSON_INVALID);
    release(&f);
}

static void test_check_warns_of_answered_questions(void **state) {
    (void)state;
    fixture f;
    /* head 1's weights shown first: the question about head 2 is fine, head 1's is not */
    assert_int_equal(checked("  - stage: weights\n"
                             "  - stage: weights\n"
                             "    head: 2\n"
                             "    focus: [cat, sat]\n"
                             "    ask: Which?\n"
                             "    choices: [cat, sat]\n"
                             "    answer: sat\n"
                             "  - stage: weights\n"
                             "    head: 1\n"
                             "    focus: [cat, cat]\n"
                             "    ask: How much?\n"
                             "    answer: auto\n"
                             "  - stage: concat\n"
                             "    ask: How much, without a focus?\n"
                             "    answer: 0.5\n", true,
                             "t.yaml:19:5: warning: the answer to this question is already on "
                             "screen: step 1 (line 9) shows weights of head 1; ask it at or "
                             "before the first step that shows it\n"
                             "   19 |     ask: How much?\n"
                             "      |     ^\n"
                             "t.yaml:23:13: warning: answer 0.5 cannot be checked: the step "
                             "has no focus (or write 'answer: auto' with a focus)\n"
                             "   23 |     answer: 0.5\n"
                             "      |             ^\n", &f),
                     LESSON_OK);
    release(&f);
}

/* The picker shows about with its live numbers without checking the lesson. */
static void test_about_shown_without_check(void **state) {
    (void)state;
    fixture f;
    fixture_load_traced(LESSON_TEXT "about: 'cat gives {weights[cat,sat]@2:2} to sat'\n", &f.l,
                        &f.t);
    char *about = lesson_about_shown(&f.l);
    assert_string_equal(about, "cat gives 0.39 to sat");
    free(about);
    assert_string_equal(f.l.about, "cat gives {weights[cat,sat]@2:2} to sat");
    release(&f);
    fixture_load_traced(LESSON_TEXT, &f.l, &f.t);
    assert_null(lesson_about_shown(&f.l));
    release(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_claims_in_both_operand_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comparisons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_space_after_the_comma, setup, teardown),
        cmocka_unit_test(test_repeated_tokens_by_position),
        cmocka_unit_test(test_repeated_token_refusal_lists_positions),
        cmocka_unit_test_setup_teardown(test_about_takes_its_tolerance_from_the_decimals, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argmax_and_argmin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_false_claims_say_the_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_claims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_placeholders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_placeholders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_names_a_cell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counts_by_hand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_counts, setup, teardown),
        cmocka_unit_test(test_counts_at_another_length),
        cmocka_unit_test(test_counts_at_n_are_a_real_traces),
        cmocka_unit_test(test_check_writes_live_numbers),
        cmocka_unit_test(test_check_answer_auto_with_choices),
        cmocka_unit_test(test_check_refuses_wrong_answers),
        cmocka_unit_test(test_check_explicit_choice_keys),
        cmocka_unit_test(test_check_keys_that_ask_for_the_least),
        cmocka_unit_test(test_check_warns_of_answered_questions),
        cmocka_unit_test(test_about_shown_without_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
