/* The lesson loader: good lessons in every key form become the right attention_input, the random
 * generator gives its documented numbers, and bad lessons give exactly the diagnostics expected
 * (the tests/bad/ corpus checks many more of those through the program). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "support.h"
#include "fixtures.h"
#include "lesson.h"
#include "lesson_answer.h"
#include "lesson_diag.h"
#include "lesson_text.h"
#include "spelling.h"
#include "random.h"

/* ---- helpers ---- */

static lesson_status load(const char *text, lesson *l, lesson_diagnostics *d) {
    return lesson_load_buffer("t.yaml", text, strlen(text), l, d);
}

/* Loads text, which must be a valid lesson without a warning. */
static void load_ok(const char *text, lesson *l) {
    assert_int_equal(fixture_load(text, l), 0);
}

/* Loads text, which must be invalid, and compares every printed diagnostic line. */
static void expect_errors(const char *text, const char *expected) {
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(load(text, &l, &d), LESSON_INVALID);
    assert_null(l.tokens);
    fixture_diagnostics_are(&d, expected);
    lesson_diagnostics_free(&d);
}

#define CAT_SAT \
    "title: cat sat\n" \
    "tokens: [cat, sat]\n" \
    "embeddings:\n" \
    "  cat: [1.0, 0.5]\n" \
    "  sat: [0.0, 1.0]\n"

static const double identity2[] = { 1, 0, 0, 1 };

/* ---- good lessons ---- */

static void test_cat_sat_defaults(void **state) {
    (void)state;
    lesson l;
    load_ok(CAT_SAT, &l);
    assert_string_equal(l.path, "t.yaml");
    assert_string_equal(l.title, "cat sat");
    assert_null(l.about);
    assert_int_equal(l.n_tokens, 2);
    assert_string_equal(l.tokens[0], "cat");
    assert_string_equal(l.tokens[1], "sat");
    assert_int_equal(l.n_source, 0);
    assert_null(l.source);
    assert_int_equal(l.n_steps, 0);
    assert_null(l.steps);
    const attention_input *in = &l.input;
    assert_int_equal(in->n_tokens, 2);
    assert_int_equal(in->n_source, 2);
    assert_null(in->source);
    assert_null(in->source_embeddings);
    assert_int_equal(in->d_model, 2);
    assert_int_equal(in->heads, 1);
    assert_int_equal(in->mask, MASK_NONE);
    assert_null(in->mask_cells);
    assert_false(in->positional);
    assert_true(in->scale);
    assert_ptr_equal(in->tokens, l.tokens);
    double embeddings[] = { 1.0, 0.5, 0.0, 1.0 };
    support_assert_close("embeddings", embeddings, in->embeddings, 4, 0);
    const double *W[] = { in->W_Q, in->W_K, in->W_V, in->W_O };
    for (int i = 0; i < 4; i++) support_assert_close("W", identity2, W[i], 4, 0);
    /* and the core can run on it */
    trace t;
    fixture_compute(in, &t);
    double cat_weights[] = { 0.6296, 0.3704 };
    support_assert_close("weights of cat", cat_weights, trace_block(&t, STAGE_WEIGHTS, 1), 2, 5e-5);
    trace_free(&t);
    lesson_free(&l);
}

static void test_sentence_repeats_and_case(void **state) {
    (void)state;
    lesson l;
    load_ok("title: t\n"
            "about: |\n  two lines\n  of about\n"
            "tokens: |\n  The cat\tthe\n   cat \n"
            "embeddings: {The: [1, 2], the: [3, 4], cat: [5, 6]}\n", &l);
    assert_string_equal(l.about, "two lines\nof about\n");
    assert_int_equal(l.n_tokens, 4);
    const char *words[] = { "The", "cat", "the", "cat" };
    for (int i = 0; i < 4; i++) assert_string_equal(l.tokens[i], words[i]);
    double rows[] = { 1, 2, 5, 6, 3, 4, 5, 6 };
    support_assert_close("embeddings", rows, l.input.embeddings, 8, 0);
    lesson_free(&l);
}

static void test_byte_order_mark(void **state) {
    (void)state;
    lesson l;
    load_ok("\xef\xbb\xbf" CAT_SAT, &l);
    assert_string_equal(l.title, "cat sat");
    /* the lesson keeps its text as loaded, for checks after loading to quote */
    assert_int_equal(l.text_size, strlen(CAT_SAT) + 3);
    assert_string_equal(l.text, "\xef\xbb\xbf" CAT_SAT);
    lesson_free(&l);
    /* the mark takes no column */
    expect_errors("\xef\xbb\xbftitle: t\ntokens: [a, b]\nembeddings: {a: [1]}\n",
                  "t.yaml:2:13: error: token 'b' has no embedding\n"
                  "    2 | tokens: [a, b]\n"
                  "      |             ^\n");
    /* the quote of line 1 leaves the mark out, and the caret still finds its column */
    expect_errors("\xef\xbb\xbftitle: t\ntokens: [a]\nembeddings: {a: [1, 2]}\nheads: 4\n"
                  "d_model: 2\n",
                  "t.yaml:4:8: error: heads (4) must divide d_model (2)\n"
                  "    4 | heads: 4\n"
                  "      |        ^\n"
                  "hint: use 1 or 2\n");
    int line, col;
    lesson_offset_position("\xef\xbb\xbf" "ab", 5, 4, &line, &col);
    assert_int_equal(col, 2);
}

static void test_every_key_form(void **state) {
    (void)state;
    lesson l;
    load_ok("title: every key\n"
            "tokens:\n  - a\n  - \"b c\"\n  - 7\n"
            "embeddings:\n  a: [1, 0, 0, 0]\n  b c: [0, 1, 0, 0]\n  '7': [0, 0, 1, -2.5e-1]\n"
            "  unused: [9, 9, 9, 9]\n"
            "d_model: 4\nheads: 2\n"
            "W_Q: identity\n"
            "W_K:\n  - [1, 2, 3, 4]\n  - [5, 6, 7, 8]\n  - [9, 10, 11, 12]\n"
            "  - [13, 14, 15, +16.]\n"
            "W_V: {random: xavier, seed: 7, scale: 0.5}\n"
            "mask:\n  - [1, 0, 0]\n  - [1, 1, 0]\n  - [0, 1, 1]\n"
            "positional: sinusoidal\nscale: false\n", &l);
    const attention_input *in = &l.input;
    assert_string_equal(l.tokens[1], "b c");
    assert_string_equal(l.tokens[2], "7");
    assert_int_equal(in->d_model, 4);
    assert_int_equal(in->heads, 2);
    assert_true(in->positional);
    assert_false(in->scale);
    assert_int_equal(in->mask, MASK_EXPLICIT);
    unsigned char cells[] = { 1, 0, 0, 1, 1, 0, 0, 1, 1 };
    assert_memory_equal(in->mask_cells, cells, 9);
    assert_true(in->embeddings[11] == -0.25);
    assert_true(in->W_K[15] == 16.0);
    assert_true(in->W_K[4] == 5.0);
    double v[16];
    random_state r;
    random_seed(&r, 7);
    random_fill(&r, RANDOM_XAVIER, 8, 0.5, v, 16);
    support_assert_close("W_V", v, in->W_V, 16, 0);
    lesson_free(&l);
}

static void test_causal_mask(void **state) {
    (void)state;
    lesson l;
    load_ok(CAT_SAT "mask: causal\n", &l);
    assert_int_equal(l.input.mask, MASK_CAUSAL);
    assert_null(l.input.mask_cells);
    unsigned char cells[] = { 1, 0, 1, 1 };   /* the lesson keeps the causal rule as cells */
    assert_memory_equal(l.mask_cells, cells, 4);
    lesson_free(&l);
}

static void test_cross_attention(void **state) {
    (void)state;
    lesson l;
    load_ok("title: cross\ntokens: Le chat\nsource: [The, cat, sat]\n"
            "embeddings: {Le: [1, 0], chat: [0, 1], The: [2, 0], cat: [0, 2], sat: [1, 1]}\n"
            "mask: [[1, 1, 0], [0, 1, 1]]\n", &l);
    const attention_input *in = &l.input;
    assert_int_equal(l.n_source, 3);
    assert_int_equal(in->n_source, 3);
    assert_ptr_equal(in->source, l.source);
    assert_string_equal(in->source[2], "sat");
    double source[] = { 2, 0, 0, 2, 1, 1 };
    support_assert_close("source embeddings", source, in->source_embeddings, 6, 0);
    unsigned char cells[] = { 1, 1, 0, 0, 1, 1 };
    assert_memory_equal(in->mask_cells, cells, 6);
    trace t;
    fixture_compute(in, &t);
    trace_free(&t);
    lesson_free(&l);
}

static void test_steps_focus_and_questions(void **state) {
    (void)state;
    lesson l;
    load_ok(CAT_SAT "heads: 2\nsteps:\n"
            "  - stage: input\n    say: the words\n"
            "  - stage: weights\n    head: 2\n    focus: [sat, cat]\n"
            "  - stage: context\n    focus: [1, '0']\n"
            "  - stage: Q\n    focus: [cat, 1]\n"
            "    ask: Which word?\n    choices: [cat, sat]\n    answer: sat\n"
            "  - stage: output\n    ask: How much?\n    answer: 0.63\n"
            "  - stage: output\n    ask: Exactly?\n    answer: -1e-2\n    tolerance: 0\n", &l);
    assert_int_equal(l.n_steps, 6);
    lesson_step *s = l.steps;
    assert_int_equal(s[0].stage, STAGE_INPUT);
    assert_string_equal(s[0].say, "the words");
    assert_int_equal(s[0].head, 0);
    assert_int_equal(s[0].focus_row, -1);
    assert_int_equal(s[0].focus_col, -1);
    assert_null(s[0].ask);
    assert_int_equal(s[0].line, 8);
    assert_int_equal(s[1].stage, STAGE_WEIGHTS);
    assert_int_equal(s[1].head, 2);
    assert_int_equal(s[1].focus_row, 1);
    assert_int_equal(s[1].focus_col, 0);
    assert_null(s[1].say);
    assert_int_equal(s[2].focus_row, 1);
    assert_int_equal(s[2].focus_col, 0);
    assert_int_equal(s[3].focus_col, 1);
    assert_string_equal(s[3].ask, "Which word?");
    assert_int_equal(s[3].n_choices, 2);
    assert_string_equal(s[3].choices[1], "sat");
    assert_int_equal(s[3].answer_choice, 1);
    assert_string_equal(s[4].ask, "How much?");
    assert_int_equal(s[4].n_choices, 0);
    assert_null(s[4].choices);
    assert_int_equal(s[4].answer_choice, -1);
    assert_true(s[4].answer == 0.63);
    assert_true(s[4].tolerance == 0.005);
    assert_true(s[5].answer == -0.01);
    assert_true(s[5].tolerance == 0.0);
    lesson_free(&l);
}

static void test_focus_on_source_and_repeats(void **state) {
    (void)state;
    lesson l;
    load_ok("title: t\ntokens: a b a\nsource: x a\nembeddings: {a: [1], b: [2], x: [3]}\n"
            "steps:\n  - stage: K\n    focus: [a, 0]\n  - stage: scores\n    focus: [a@2, a]\n"
            "  - stage: source_input\n    focus: [x, 0]\n", &l);
    assert_int_equal(l.steps[0].focus_row, 1);   /* K's rows are the source tokens */
    assert_int_equal(l.steps[1].focus_row, 2);   /* the "a" at position 2 of tokens */
    assert_int_equal(l.steps[1].focus_col, 1);   /* the "a" of source, written once there */
    assert_int_equal(l.steps[2].focus_row, 0);
    lesson_free(&l);
}

/* The plain name of a repeated token could be either: a focus or a position naming it is
 * refused with its positions. */
static void test_repeated_token_refused_in_focus_and_position(void **state) {
    (void)state;
    expect_errors("title: t\ntokens: a b a\nembeddings: {a: [1], b: [2]}\n"
                  "steps:\n  - stage: scores\n    focus: [b, a]\n",
                  "t.yaml:6:16: error: focus column names a token written more than once: 'a' "
                  "appears at positions 0 and 2: write a@0 or a@2\n"
                  "    6 |     focus: [b, a]\n      |                ^\n");
    expect_errors("title: t\ntokens: a b a\nembeddings: {a: [1], b: [2]}\nmask: causal\n"
                  "decode: true\nsteps:\n  - stage: Q\n    position: a\n",
                  "t.yaml:8:15: error: position names a token written more than once: 'a' "
                  "appears at positions 0 and 2: write a@0 or a@2\n"
                  "    8 |     position: a\n      |               ^\n");
    lesson l;
    load_ok("title: t\ntokens: a b a\nembeddings: {a: [1], b: [2]}\nmask: causal\n"
            "decode: true\nsteps:\n  - stage: Q\n    position: a@2\n    focus: [a@2, 0]\n", &l);
    assert_int_equal(l.steps[0].token, 3);
    assert_int_equal(l.steps[0].focus_row, 2);
    lesson_free(&l);
}

/* ---- the random generator ---- */

static void test_random_known_values(void **state) {
    (void)state;
    random_state r;
    random_seed(&r, 42);
    /* xoshiro256** seeded by splitmix64(42), checked against an independent implementation */
    assert_true(random_next(&r) == 1546998764402558742u);
    assert_true(random_next(&r) == 6990951692964543102u);
    assert_true(random_next(&r) == 12544586762248559009u);
    double normal[4], xavier[4];
    random_seed(&r, 42);
    random_fill(&r, RANDOM_NORMAL, 0, 1.0, normal, 4);
    random_seed(&r, 42);
    random_fill(&r, RANDOM_XAVIER, 4, 1.0, xavier, 4);
    double normal_expected[] = { -0.30326306467873809, 1.3438117634372808,
                                 0.38346179126769414, 0.93696242502589533 };
    double xavier_expected[] = { -1.0193233839810851, -0.29643663467598452,
                                 0.44101448856912306, 1.0402810134069138 };
    support_assert_close("normal", normal_expected, normal, 4, 0);
    support_assert_close("xavier", xavier_expected, xavier, 4, 0);
}

/* The portable logarithm and cosine agree with libm to a few units in the last place. */
static void test_random_normal_matches_libm(void **state) {
    (void)state;
    random_state r, copy;
    random_seed(&r, 1);
    for (int i = 0; i < 100000; i++) {
        copy = r;
        double u1 = 1.0 - random_uniform(&copy), u2 = random_uniform(&copy);
        double expected = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        double z = random_normal(&r);
        assert_true(fabs(z - expected) <= 1e-14 * (1.0 + fabs(expected)));
    }
}

/* {random: numpy} draws one row per position, as numpy's program draws its matrix: the tokens'
 * rows, then the source's. So a cross-attention lesson's source embeddings are the rows after
 * its tokens', the very rows a self-attention lesson over all five words gets at 2..4 (no test
 * had a cross-attention lesson with per-position embeddings, where the source's rows start). */
static void test_numpy_embeddings_of_the_source_follow_the_tokens(void **state) {
    (void)state;
    lesson cross, all;
    load_ok("title: t\ntokens: [a, b]\nsource: [c, d, e]\nd_model: 2\n"
            "embeddings: {random: numpy, seed: 3}\n", &cross);
    load_ok("title: t\ntokens: [a, b, c, d, e]\nd_model: 2\n"
            "embeddings: {random: numpy, seed: 3}\n", &all);
    support_assert_close("token embeddings", all.input.embeddings, cross.input.embeddings, 4, 0);
    support_assert_close("source embeddings", all.input.embeddings + 4,
                         cross.input.source_embeddings, 6, 0);
    lesson_free(&cross);
    lesson_free(&all);
}

static void test_random_embeddings_follow_first_appearance(void **state) {
    (void)state;
    lesson l;
    load_ok("title: t\ntokens: b a b\nsource: [c, a]\nd_model: 3\n"
            "embeddings: {random: normal, seed: 5, scale: 2}\n"
            "W_O: {random: normal}\n", &l);
    double draws[9], W[9];
    random_state r;
    random_seed(&r, 5);
    random_fill(&r, RANDOM_NORMAL, 6, 2.0, draws, 9);   /* b, a, c in that order */
    double tokens[] = { draws[0], draws[1], draws[2], draws[3], draws[4], draws[5],
                        draws[0], draws[1], draws[2] };
    double source[] = { draws[6], draws[7], draws[8], draws[3], draws[4], draws[5] };
    support_assert_close("embeddings", tokens, l.input.embeddings, 9, 0);
    support_assert_close("source embeddings", source, l.input.source_embeddings, 6, 0);
    random_seed(&r, 0);   /* the default seed */
    random_fill(&r, RANDOM_NORMAL, 6, 1.0, W, 9);
    support_assert_close("W_O", W, l.input.W_O, 9, 0);
    lesson_free(&l);
}

/* ---- diagnostics ---- */

/* Every problem, but not the 'missing key tokens' that the misspelt 'token' explains: the other
 * problems do not follow from it, so they stay. */
static void test_every_problem_is_reported(void **state) {
    (void)state;
    expect_errors("title: t\ntoken: [cat]\nembeddings:\n  cat: [1, 2]\n  sat: [1]\nheads: 3\n"
                  "W_K: [[1, 0], [0, nan]]\nscale: yes\n",
                  "t.yaml:2:1: error: unknown key 'token'; did you mean 'tokens'?\n"
                  "    2 | token: [cat]\n"
                  "      | ^\n"
                  "t.yaml:5:8: error: the embedding of 'sat': expected 2 numbers, found 1\n"
                  "    5 |   sat: [1]\n"
                  "      |        ^\n"
                  "t.yaml:6:8: error: heads (3) must divide d_model (2)\n"
                  "    6 | heads: 3\n"
                  "      |        ^\n"
                  "hint: use 1 or 2\n"
                  "t.yaml:7:19: error: a row of W_K: 'nan' is not a finite number\n"
                  "    7 | W_K: [[1, 0], [0, nan]]\n"
                  "      |                   ^\n"
                  "t.yaml:8:8: error: scale must be true or false, not 'yes'\n"
                  "    8 | scale: yes\n"
                  "      |        ^\n");
}

static void test_untrusted_text_is_escaped(void **state) {
    (void)state;
    expect_errors("title: t\ntokens: [\"\\e[2J\", \"\\u202Eab\"]\nembeddings: {x: [1]}\n",
                  "t.yaml:2:10: error: token '\\x1b[2J' has no embedding\n"
                  "    2 | tokens: [\"\\e[2J\", \"\\u202Eab\"]\n"
                  "      |          ^\n"
                  "t.yaml:2:19: error: token '\\u202eab' has no embedding\n"
                  "    2 | tokens: [\"\\e[2J\", \"\\u202Eab\"]\n"
                  "      |                   ^\n");
    /* The quoted line is lesson text too: a raw bidi override in it is escaped, and the caret
     * counts columns on the screen (a wide character takes two, an escape its length). */
    expect_errors("title: t\ntokens: [\xe7\x8c\xab, \xe2\x80\xaeq]\nembeddings: {\xe7\x8c\xab: [1]}\n",
                  "t.yaml:2:13: error: token '\\u202eq' has no embedding\n"
                  "    2 | tokens: [\xe7\x8c\xab, \\u202eq]\n"
                  "      |              ^\n");
}

/* Decimal commas are found by how each ',' is written, through a byte order mark, CR LF line
 * breaks and multi-byte characters; a list broken over lines after its commas is not mixed. */
/* The about of a summary (the picker's) has its live numbers only in a lesson small enough to
 * build at once: one of d_model 2048 (128 MiB of weights to draw) keeps its placeholders as
 * written, so that a list of large lessons never builds one. Fails if the summary builds it. */
static void test_summary_never_builds_a_large_lesson(void **state) {
    (void)state;
    const int sizes[] = { 2, 2048 };
    for (int i = 0; i < 2; i++) {
        char path[] = "/tmp/attnstep-summary-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        assert_non_null(f);
        fprintf(f, "title: t\nabout: score {scores[a,b]}\ntokens: [a, b]\nd_model: %d\n"
                "embeddings: {random: normal, seed: 1}\nW_Q: {random: normal, seed: 2}\n",
                sizes[i]);
        fclose(f);
        lesson_summary summary;
        lesson_diagnostics d;
        assert_int_equal(lesson_load_summary(path, NULL, &summary, &d), LESSON_OK);
        if (i == 0) assert_null(strchr(summary.about, '{'));   /* small: the live number */
        else assert_string_equal(summary.about, "score {scores[a,b]}");
        lesson_summary_free(&summary);
        unlink(path);
    }
}

/* decode: true with the causal mask's rows written out is 'mask: causal' (as the guide says);
 * any other explicit mask is still refused (tests/bad/decode_explicit_not_causal). */
static void test_decode_takes_an_explicit_causal_mask(void **state) {
    (void)state;
    lesson l;
    load_ok("title: t\ntokens: [a, b, c]\nembeddings: {a: [1, 0], b: [0, 1], c: [1, 1]}\n"
            "decode: true\nmask: [[1, 0, 0], [1, 1, 0], [1, 1, 1]]\n", &l);
    assert_int_equal(l.input.mask, MASK_CAUSAL);
    lesson_free(&l);
    load_ok("title: t\ntokens: [a, b]\nembeddings: {a: [1, 0], b: [0, 1]}\n"
            "mask: [[1, 0], [1, 1]]\n", &l);   /* without decode it stays as written */
    assert_int_equal(l.input.mask, MASK_EXPLICIT);
    lesson_free(&l);
}

static void test_decimal_commas(void **state) {
    (void)state;
    expect_errors("\xef\xbb\xbftitle: t\r\ntokens: [caf\xc3\xa9, b]\r\nembeddings:\r\n"
                  "  caf\xc3\xa9: [1,5, 0,5]\r\n  b: [1,\r\n    2]\r\n",
                  "t.yaml:4:11: error: the embedding of 'caf\xc3\xa9': probable decimal commas: "
                  "the list mixes ', ' and ',' between numbers\n"
                  "    4 |   caf\xc3\xa9: [1,5, 0,5]\n"
                  "      |           ^\n"
                  "hint: write decimals with a point: [1.5, 0.5]\n");
    lesson l;
    load_ok("title: t\ntokens: [a]\nembeddings: {a: [1,5,0,5]}\n", &l);  /* not mixed */
    assert_int_equal(l.input.d_model, 4);
    lesson_free(&l);
}

/* Without d_model, the length most vectors have decides which one is wrong; a tie keeps the
 * first one's length and claims no majority. */
static void test_short_vector_is_blamed(void **state) {
    (void)state;
    expect_errors("title: t\ntokens: a b c\nembeddings:\n  a: [1]\n  b: [1, 2]\n  c: [3, 4]\n",
                  "t.yaml:4:6: error: the embedding of 'a': expected 2 numbers, found 1\n"
                  "    4 |   a: [1]\n"
                  "      |      ^\n"
                  "hint: most embeddings here have 2 numbers\n");
    expect_errors("title: t\ntokens: a b\nembeddings:\n  a: [1]\n  b: [1, 2]\n",
                  "t.yaml:5:6: error: the embedding of 'b': expected 1 number, found 2\n"
                  "    5 |   b: [1, 2]\n"
                  "      |      ^\n");
}

/* Every way a diagnostic is printed: a warning says so, a long line is shown as a window
 * around the column, and a problem without a place has no quote. */
static void test_diagnostic_printing(void **state) {
    (void)state;
    char line[401];
    memset(line, 'x', 400);
    memcpy(line, "title: ", 7);
    line[400] = '\0';
    lesson_diagnostics d = { .path = strdup("t.yaml") };
    char data[420];  /* a CR LF line, then one of 400 characters */
    snprintf(data, sizeof data, "a: 1\r\n%s\n", line);
    lesson_hint(lesson_report_warning(&d, 1, 4, LESSON_ERROR_MISSING_KEY, "b"),
                LESSON_HINT_USE_HEADS, "2");
    lesson_report(&d, 2, 250, LESSON_ERROR_EMPTY_LIST, "x");
    lesson_report(&d, 3, 1, LESSON_ERROR_EMPTY_LIST, "past the end");
    lesson_report(&d, 0, 0, LESSON_ERROR_FILE_EMPTY);
    lesson_diagnostics_quote(&d, data, strlen(data));
    char expected[2048], window[200];
    memset(window, 'x', 120);
    window[120] = '\0';
    snprintf(expected, sizeof expected,
             "t.yaml: error: the file is empty; a lesson needs at least title, tokens and "
             "embeddings\n"
             "t.yaml:1:4: warning: missing key 'b'\n"
             "    1 | a: 1\n"
             "      |    ^\n"
             "hint: use 2\n"
             "t.yaml:2:250: error: x must not be empty\n"
             "    2 | \xe2\x80\xa6%s\xe2\x80\xa6\n"
             "      | %41s^\n"
             "t.yaml:3:1: error: past the end must not be empty\n", window, "");
    fixture_diagnostics_are(&d, expected);
    lesson_diagnostics_free(&d);
}

static void test_unreadable_file(void **state) {
    (void)state;
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(lesson_load("tests/no/such/file.yaml", &l, &d), LESSON_UNREADABLE);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.items[0].line, 0);
    assert_string_equal(d.items[0].message, "cannot read: No such file or directory");
    lesson_diagnostics_free(&d);
}

static void test_size_limits_of_buffers(void **state) {
    (void)state;
    lesson l;
    lesson_diagnostics d;
    size_t size = LESSON_MAX_FILE_BYTES + 1;
    char *big = malloc(size);
    assert_non_null(big);
    memset(big, '#', size);
    assert_int_equal(lesson_load_buffer("big.yaml", big, size, &l, &d), LESSON_INVALID);
    assert_string_equal(d.items[0].message,
                        "the file is larger than the limit of 4 MiB (4194304 bytes)");
    lesson_diagnostics_free(&d);
    /* exactly at the limit, the file is read (and is only a comment) */
    assert_int_equal(lesson_load_buffer("big.yaml", big, size - 1, &l, &d), LESSON_INVALID);
    assert_string_equal(d.items[0].message,
                        "the file is empty; a lesson needs at least title, tokens and embeddings");
    lesson_diagnostics_free(&d);
    free(big);
}

static void test_many_problems_are_capped(void **state) {
    (void)state;
    size_t size = 64 + 20 * 1000;
    char *text = malloc(size), *p = text;
    p += sprintf(p, "title: t\ntokens: a\nembeddings:\n  a: [");
    for (int i = 0; i < 1000; i++) p += sprintf(p, "x, ");
    sprintf(p, "1]\n");
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(load(text, &l, &d), LESSON_INVALID);
    assert_int_equal(d.count, 101);
    assert_string_equal(d.items[100].message, "too many problems; only the first 100 are shown");
    assert_int_equal(d.items[100].line, 0);
    lesson_diagnostics_free(&d);
    free(text);
}

/* ---- text helpers ---- */

static void test_numbers_are_strict(void **state) {
    (void)state;
    const char *good[] = { "1", "-2", "+3", "0.5", ".5", "5.", "1e3", "1E-3", "-0", "007" };
    const double values[] = { 1, -2, 3, 0.5, 0.5, 5, 1000, 0.001, 0, 7 };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        double x = 99;
        assert_int_equal(lesson_parse_number(good[i], &x), LESSON_NUMBER_OK);
        assert_true(x == values[i]);
    }
    const char *syntax[] = { "", " 1", "1 ", "0x10", "1_000", "1e", "e3", ".", "+", "1.2.3",
                             "1,5", "--1", "one" };
    for (size_t i = 0; i < sizeof syntax / sizeof *syntax; i++) {
        double x;
        assert_int_equal(lesson_parse_number(syntax[i], &x), LESSON_NUMBER_SYNTAX);
    }
    const char *nonfinite[] = { "nan", "NaN", "inf", "-Infinity", ".inf", "-.INF", ".nan" };
    for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
        double x;
        assert_int_equal(lesson_parse_number(nonfinite[i], &x), LESSON_NUMBER_NONFINITE);
    }
    double x;
    /* the decimal point stays '.' under a locale that writes "1,5" (when one is installed) */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        assert_int_equal(lesson_parse_number("1.5", &x), LESSON_NUMBER_OK);
        assert_true(x == 1.5);
        assert_int_equal(lesson_parse_number("1,5", &x), LESSON_NUMBER_SYNTAX);
        setlocale(LC_NUMERIC, "C");
    } else {  /* said, and a failure in CI, where .ci/install-deps generates de_DE */
        const char *ci = getenv("CI");
        print_message("SKIP the decimal comma check: no de_DE.UTF-8 or fr_FR.UTF-8 locale\n");
        if (ci && strcmp(ci, "true") == 0)
            fail_msg("CI=true and no de_DE.UTF-8 or fr_FR.UTF-8 locale to test with");
    }
    assert_int_equal(lesson_parse_number("1e400", &x), LESSON_NUMBER_RANGE);
    /* too small: it rounds to zero, a status of its own; a subnormal result is a double */
    assert_int_equal(lesson_parse_number("-1e-400", &x), LESSON_NUMBER_TINY);
    assert_int_equal(lesson_parse_number("2.47e-324", &x), LESSON_NUMBER_TINY);
    assert_int_equal(lesson_parse_number("2.48e-324", &x), LESSON_NUMBER_OK);
    assert_true(x > 0.0);
    assert_int_equal(lesson_parse_number("4.9e-324", &x), LESSON_NUMBER_OK);
    uint64_t n;
    assert_true(lesson_parse_integer("18446744073709551615", 0, UINT64_MAX, &n));
    assert_true(n == UINT64_MAX);
    assert_false(lesson_parse_integer("18446744073709551616", 0, UINT64_MAX, &n));
    assert_false(lesson_parse_integer("-1", 0, 10, &n));
    assert_false(lesson_parse_integer("2.0", 0, 10, &n));
}

static void test_escape_and_positions(void **state) {
    (void)state;
    char out[LESSON_ESCAPED_MAX];
    assert_string_equal(lesson_escape("a\x1b[31m\x7f", 8, out), "a\\x1b[31m\\x7f");
    char long_text[200];
    memset(long_text, 'x', sizeof long_text);
    lesson_escape(long_text, sizeof long_text, out);
    assert_int_equal(strlen(out), 64 + 3);
    assert_string_equal(out + 64, "\xe2\x80\xa6");
    const char text[] = "ab\r\ncaf\xc3\xa9 x\rz";
    int line, col;
    lesson_offset_position(text, sizeof text - 1, 9, &line, &col);  /* the space after é */
    assert_int_equal(line, 2);
    assert_int_equal(col, 5);
    lesson_offset_position(text, sizeof text - 1, 12, &line, &col);  /* z, after a lone CR */
    assert_int_equal(line, 3);
    assert_int_equal(col, 1);
    assert_int_equal(lesson_position_offset(text, sizeof text - 1, 2, 5), 9);
    assert_int_equal(lesson_position_offset(text, sizeof text - 1, 3, 1), 12);
    assert_int_equal(lesson_position_offset(text, sizeof text - 1, 9, 1), sizeof text - 1);
    const char *keys[] = { "title", "tokens", "heads" };
    assert_string_equal(spelling_nearest("token", keys, 3), "tokens");
    assert_string_equal(spelling_nearest("tilte", keys, 3), "title");
    assert_null(spelling_nearest("mask", keys, 3));
    /* a difference of case only beats any other near word; a one-letter word has no near one */
    const char *tokens[] = { "cat", "sat", "a", "b" };
    assert_string_equal(spelling_nearest("Sat", tokens, 4), "sat");
    assert_string_equal(spelling_nearest("cta", tokens, 4), "cat");
    assert_null(spelling_nearest("c", tokens, 4));
    assert_null(spelling_nearest("dog", tokens, 4));
    /* the cursor finds places in order, and again after going back */
    lesson_cursor cursor = { 0 };
    assert_int_equal(lesson_cursor_move(&cursor, text, sizeof text - 1, 2, 5), 9);
    assert_int_equal(lesson_cursor_move(&cursor, text, sizeof text - 1, 3, 1), 12);
    assert_int_equal(lesson_cursor_move(&cursor, text, sizeof text - 1, 1, 1), 0);
}

/* Many distinct keys in one mapping: the duplicate check stays linear (this would take
 * minutes if it compared every pair). */
static void test_large_mapping_is_fast(void **state) {
    (void)state;
    int count = 200000;
    char *text = malloc((size_t)count * 24 + 100), *p = text;
    p += sprintf(p, "title: t\ntokens: k0\nembeddings:\n");
    for (int i = 0; i < count; i++) p += sprintf(p, "  k%d: [1]\n", i);
    lesson l;
    /* processor time, not wall time, so a loaded machine does not fail it: about 0.3 s here,
     * 12 s when the count of equal vector lengths was quadratic */
    clock_t start = clock();
    load_ok(text, &l);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    if (seconds > 4.0) fail_msg("200000 embeddings took %.1f s of processor time", seconds);
    lesson_free(&l);
    free(text);
}

/* A million opening brackets: refused at level 33 (the 32nd bracket), before libyaml goes any
 * deeper. */
static void test_deep_nesting_stops_early(void **state) {
    (void)state;
    size_t depth = 1000000;
    char *text = malloc(depth + 16);
    memcpy(text, "steps: ", 7);
    memset(text + 7, '[', depth);
    text[7 + depth] = '\0';
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(load(text, &l, &d), LESSON_INVALID);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.items[0].col, 7 + 32);  /* the lesson mapping itself is level 1 */
    assert_string_equal(d.items[0].message, "nesting deeper than 32 levels; the limit is 32");
    lesson_diagnostics_free(&d);
    free(text);
}

/* Where an answer is written: the match of a in text as "offset:length", or "none". */
static const char *found_in(const lesson_answer *a, const char *text) {
    static char where[32];
    size_t at, length;
    if (!lesson_answer_find(a, text, 0, &at, &length)) return "none";
    snprintf(where, sizeof where, "%zu:%zu", at, length);
    return where;
}

static void test_answers_written_in_text(void **state) {
    (void)state;
    lesson_answer a = { .numeric = true, .value = 0.6296, .tolerance = 0.01, .decimals = 2 };
    assert_string_equal(found_in(&a, "its output [0.6296, 0.6852]"), "12:6");
    assert_string_equal(found_in(&a, "it keeps 63% of it"), "9:3");
    assert_string_equal(found_in(&a, "about 0.62 or so"), "6:4");       /* within ± 0.01 */
    assert_string_equal(found_in(&a, "0.6 is one decimal"), "none");   /* not --check's rule */
    assert_string_equal(found_in(&a, "x0.63 and d_0.63 are names"), "none");
    a.every_rounding = true;
    assert_string_equal(found_in(&a, "0.6 is one decimal"), "0:3");    /* the worksheet's */
    a = (lesson_answer){ .numeric = true, .value = -0.4375, .tolerance = 0.005, .decimals = 2 };
    assert_string_equal(found_in(&a, "it is \xe2\x88\x92" "0.4375 here"), "6:9");
    assert_string_equal(found_in(&a, "it is 0.4375 here"), "none");    /* the wrong sign */
    a = (lesson_answer){ .numeric = true, .value = 1, .tolerance = 0, .decimals = 0 };
    assert_string_equal(found_in(&a, "In head 1, step 1: all of it, 1"), "30:1");
    assert_int_equal(lesson_answer_decimals("0.63"), 2);
    assert_int_equal(lesson_answer_decimals("-1"), 0);
    assert_int_equal(lesson_answer_decimals("auto"), -1);
    lesson_answer c = { .token = "river", .row = "bank", .sentence = "The bank of the river" };
    assert_string_equal(found_in(&c, "Bank looks at river. Why?"), "14:5");  /* a capital */
    assert_string_equal(found_in(&c, "Soon bank looks at river. Why?"), "19:5");
    assert_string_equal(found_in(&c, "bank is here. river is there."), "none");
    assert_string_equal(found_in(&c, "\"The bank of the river.\" Read it."), "none");
    lesson_answer of = { .token = "of", .row = "bank" };
    assert_string_equal(found_in(&of, "the bank of money"), "none");   /* a common word */
    assert_string_equal(found_in(&of, "bank looks at \"of\""), "15:2");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cat_sat_defaults),
        cmocka_unit_test(test_sentence_repeats_and_case),
        cmocka_unit_test(test_byte_order_mark),
        cmocka_unit_test(test_every_key_form),
        cmocka_unit_test(test_causal_mask),
        cmocka_unit_test(test_cross_attention),
        cmocka_unit_test(test_steps_focus_and_questions),
        cmocka_unit_test(test_focus_on_source_and_repeats),
        cmocka_unit_test(test_repeated_token_refused_in_focus_and_position),
        cmocka_unit_test(test_random_known_values),
        cmocka_unit_test(test_random_normal_matches_libm),
        cmocka_unit_test(test_random_embeddings_follow_first_appearance),
        cmocka_unit_test(test_numpy_embeddings_of_the_source_follow_the_tokens),
        cmocka_unit_test(test_every_problem_is_reported),
        cmocka_unit_test(test_summary_never_builds_a_large_lesson),
        cmocka_unit_test(test_decode_takes_an_explicit_causal_mask),
        cmocka_unit_test(test_untrusted_text_is_escaped),
        cmocka_unit_test(test_diagnostic_printing),
        cmocka_unit_test(test_decimal_commas),
        cmocka_unit_test(test_short_vector_is_blamed),
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_size_limits_of_buffers),
        cmocka_unit_test(test_many_problems_are_capped),
        cmocka_unit_test(test_numbers_are_strict),
        cmocka_unit_test(test_escape_and_positions),
        cmocka_unit_test(test_large_mapping_is_fast),
        cmocka_unit_test(test_deep_nesting_stops_early),
        cmocka_unit_test(test_answers_written_in_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
