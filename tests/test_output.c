/* The text outputs against the one walk (numbering, repeated matrices, narration on any head),
 * their escaping of lesson text, and their exit status when the stream fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "lesson.h"
#include "output.h"
#include "text.h"
#include "trace.h"
#include "walk.h"

/* Two heads; narration on Q twice, on scores of head 2 (which the old outputs dropped), and a
 * title and a token carrying terminal controls. */
static const char lesson_text[] =
    "title: \"two \\e[31mheads\\u202e\"\n"
    "tokens: [\"a|b\", \"c\\e\"]\n"
    "embeddings:\n"
    "  \"a|b\": [1.0, 0.5, 0.25, 0.0]\n"
    "  \"c\\e\": [0.0, 1.0, 0.5, 0.25]\n"
    "heads: 2\n"
    "steps:\n"
    "  - stage: Q\n"
    "    say: first on Q\n"
    "  - stage: Q\n"
    "    say: second on Q\n"
    "  - stage: scores\n"
    "    head: 2\n"
    "    say: said at head two\n"
    "    focus: [0, 1]\n";

typedef struct {
    lesson l;
    trace t;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    fixture_load_traced(lesson_text, &f->l, &f->t);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    trace_free(&f->t);
    lesson_free(&f->l);
    free(f);
    return 0;
}

/* The whole output of a format, to be freed. */
static char *written(const fixture *f, const output_format *format)
{
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    assert_non_null(stream);
    assert_int_equal(output_write(format, &f->l, &f->t, 4, stream), EXIT_STATUS_OK);
    fclose(stream);
    return text;
}

static int count(const char *text, const char *piece)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, piece)) != NULL; at += strlen(piece))
        n++;
    return n;
}

/* The explanation of a cell of a shipped lesson, every term or not, to be freed. */
static char *explained(const char *path, const char *spec, bool full)
{
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(lesson_load(path, &l, &d), LESSON_OK);
    trace t;
    fixture_compute(&l.input, &t);
    trace_cell cell;
    char error[256];
    assert_true(trace_cell_parse(&t, spec, 1, &cell, error, sizeof error));
    int (*explain)(const trace *, const trace_cell *, int, char *, size_t) =
        full ? trace_cell_explain_full : trace_cell_explain;
    int length = explain(&t, &cell, 4, NULL, 0);
    char *text = malloc((size_t)length + 1);
    assert_non_null(text);
    assert_int_equal(explain(&t, &cell, 4, text, (size_t)length + 1), length);
    trace_free(&t);
    lesson_free(&l);
    return text;
}

/* bank_loan's context[bank,0] is made by one term of eight (river's weight × 1.0), the last
 * of those the old first-three-and-last shortening showed. */
/* Issue 24: a token written more than once is named by its position wherever a cell is named
 * ("dog@6"), and that name is accepted: rope's second dog is at position 6. */
static void test_repeated_tokens_are_named_by_position(void **state)
{
    (void)state;
    char *text = explained("lessons/rope.yaml", "Q_rotated[dog@6,1]", false);
    assert_non_null(strstr(text, "Q_rotated[dog@6,1] = Q[dog@6,0]·sin θ + Q[dog@6,1]·cos θ, θ = 6 × "));
    free(text);
    text = explained("lessons/no_scale.yaml", "scaled[birds,birds]", false);   /* said once */
    assert_string_equal(text, "scaled[birds,birds] = scores[birds,birds] (scale: false) = 4.5");
    free(text);
    text = explained("lessons/rope.yaml", "weights[dog@6,dog@2]", false);
    assert_non_null(strstr(text, "weights[dog@6,dog@2] = "));
    assert_non_null(strstr(text, " [dog@2] + "));
    assert_non_null(strstr(text, "more terms (the, met@3, a@4, "));
    free(text);
}

static void test_a_long_sum_shows_its_largest_terms(void **state)
{
    (void)state;
    char *text = explained("lessons/bank_loan.yaml", "context[bank,0]", false);
    /* each term named by its key, in key order; those left out named too; the result kept */
    assert_non_null(strstr(text, " = (0.0418 × 0.0) [The] + (0.0418 × 0.0) [bank] + (0.0418 × 0.0)"
                                 " [of] + (0.7073 × 1.0) [river] + 4 more terms (the, gave, a, "
                                 "loan), each 0 = 0.7073"));
    assert_int_equal(count(text, " × "), 1 + 4);  /* Σ_j weights × v_j, then four terms */
    free(text);
    text = explained("lessons/bank_loan.yaml", "context[bank,0]", true);
    assert_int_equal(count(text, " × "), 1 + 8);
    assert_null(strstr(text, "more terms"));
    free(text);
    /* the softmax's sum: the largest left out, 0.05917, is rounded up so that the bound holds */
    text = explained("lessons/bank_loan.yaml", "weights[bank,river]", true);   /* every value */
    assert_non_null(strstr(text, "exp(2.8284 − 2.8284) (= 1.0) [river] + "));
    assert_non_null(strstr(text, " [loan]) = 1.0 / 1.4137 = 0.7073"));
    free(text);
    text = explained("lessons/bank_loan.yaml", "weights[bank,river]", false);
    assert_non_null(strstr(text, "exp(2.8284 − 2.8284) [river] + 4 more terms (the, gave, a, loan), "
                                 "each |term| ≤ 0.0592)"));
    free(text);
}

/* A sum short enough is written whole, with or without --full; --full (and the UI's e) gives
 * each term's value too (issue 24). */
static void test_a_short_sum_is_written_whole(void **state)
{
    (void)state;
    char *text = explained("lessons/bank_loan.yaml", "Q[bank,0]", false);
    char *full = explained("lessons/bank_loan.yaml", "Q[bank,0]", true);
    assert_string_equal(text, "Q[bank,0] = input_bank · W_Q[:,0] = (0.0 × 1.0) + (0.0 × 0.0) + "
                              "(0.0 × 0.0) + (1.0 × 4.0) = 4.0");
    assert_string_equal(full, "Q[bank,0] = input_bank · W_Q[:,0] = (0.0 × 1.0) (= 0.0) + (0.0 × "
                              "0.0) (= 0.0) + (0.0 × 0.0) (= 0.0) + (1.0 × 4.0) (= 4.0) = 4.0");
    assert_int_equal(count(text, " × "), 4);
    free(text);
    free(full);
}

static void test_steps_are_numbered_by_the_walk(void **state)
{
    fixture *f = *state;
    walk w;
    assert_true(lesson_walk(&f->l, &f->t, &w));
    char *plain = written(f, &output_plain), *markdown = written(f, &output_markdown);
    char last[32];
    snprintf(last, sizeof last, "\n[%d/%d] ", w.count, w.count);
    assert_non_null(strstr(plain, last));
    snprintf(last, sizeof last, "\n## %d. ", w.count);
    assert_non_null(strstr(markdown, last));
    snprintf(last, sizeof last, "\n## %d. ", w.count + 1);
    assert_null(strstr(markdown, last));
    /* one repeated matrix (the second item on Q): written once, with a note */
    assert_int_equal(count(plain, "(the matrix of step "), 1);
    assert_int_equal(count(markdown, "*The matrix of step "), 1);
    walk_free(&w);
    free(plain);
    free(markdown);
}

static void test_narration_of_every_head_is_written(void **state)
{
    fixture *f = *state;
    char *plain = written(f, &output_plain), *markdown = written(f, &output_markdown);
    for (int i = 0; i < 2; i++) {
        const char *text = i ? markdown : plain;
        assert_non_null(strstr(text, "first on Q"));
        assert_non_null(strstr(text, "second on Q"));
        assert_non_null(strstr(text, "said at head two"));
        assert_non_null(strstr(text, "scores[a|b,c\\x1b] (head 2)"));  /* its worked cell */
    }
    free(plain);
    free(markdown);
}

static void test_json_keeps_one_entry_per_stage_and_head(void **state)
{
    fixture *f = *state;
    char *json = written(f, &output_json);
    walk w;
    assert_true(walk_build(&w, &f->t, NULL, 0));
    assert_int_equal(count(json, "{\"name\": "), w.count);
    walk_free(&w);
    free(json);
}

/* No output sends a control character of the lesson to the terminal. */
static void test_lesson_text_is_escaped_everywhere(void **state)
{
    fixture *f = *state;
    const output_format *formats[] = { &output_plain, &output_markdown, &output_worksheet,
                                       &output_json };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char *text = written(f, formats[i]);
        assert_null(strchr(text, '\x1b'));
        assert_null(strstr(text, "\xe2\x80\xae"));
        free(text);
    }
    char *json = written(f, &output_json);
    assert_non_null(strstr(json, "\"two \\u001b[31mheads\\u202e\""));
    free(json);
    char *markdown = written(f, &output_markdown);
    assert_non_null(strstr(markdown, "| a\\|b |"));   /* '|' kept out of the cell structure */
    /* the control escape's backslash is escaped for Markdown, so it shows */
    assert_non_null(strstr(markdown, "# two \\\\x1b\\[31mheads\\\\u202e\n"));
    free(markdown);
    char *csv = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&csv, &size);
    assert_int_equal(output_write_matrix(&output_csv, &f->l, &f->t, STAGE_SCORES, 2, stream),
                     EXIT_STATUS_OK);
    fclose(stream);
    const char *header = "scores,a|b,c\\x1b\r\n";
    assert_memory_equal(csv, header, strlen(header));
    free(csv);
}

/* A stream that cannot be written: every format says EXIT_STATUS_IO, never OK. */
/* One escaping function for all Markdown: HTML as entities, Markdown's syntax backslashed,
 * line breaks kept only when asked. */
static void test_markdown_escaping(void **state)
{
    (void)state;
    char text[256];
    const char *source = "<s> *a* `x` # h [x](javascript:y) a|b & _c_ 1. \\ \x1b\n";
    text_escape_markdown(source, false, text, sizeof text);
    assert_string_equal(text, "&lt;s&gt; \\*a\\* \\`x\\` \\# h \\[x\\](javascript:y) a\\|b "
                              "&amp; \\_c\\_ 1. \\\\ \\\\x1b\\\\x0a");
    /* prose stays readable: , ; ? / . : ' " ( ) - + are syntax only where a line starts */
    text_escape_markdown("one\ntwo, three; four? five/six: it's \"x\" (y) - z.", true, text,
                         sizeof text);
    assert_string_equal(text, "one\ntwo, three; four? five/six: it's \"x\" (y) - z.");
    /* where a line starts: a list item, a heading underline, an ordered item, a definition */
    text_escape_markdown("- a\n  + b\n===\n12. c\n3) d\n: e\n1x. f", true, text, sizeof text);
    assert_string_equal(text, "\\- a\n  \\+ b\n\\===\n12\\. c\n3\\) d\n\\: e\n1x. f");
    /* as snprintf: the length wanted, the text cut to the buffer */
    char tiny[4];
    assert_int_equal(text_escape_markdown("<a>", false, tiny, sizeof tiny), 9);
    assert_string_equal(tiny, "&lt");
}

static void test_a_failed_write_is_reported(void **state)
{
    fixture *f = *state;
    const output_format *formats[] = { &output_plain, &output_markdown, &output_worksheet,
                                       &output_json };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        FILE *full = fopen("/dev/full", "w");
        assert_non_null(full);
        assert_int_equal(output_write(formats[i], &f->l, &f->t, 4, full), EXIT_STATUS_IO);
        fclose(full);
    }
    FILE *full = fopen("/dev/full", "w");
    assert_non_null(full);
    assert_int_equal(output_write_matrix(&output_csv, &f->l, &f->t, STAGE_Q, 1, full),
                     EXIT_STATUS_IO);
    fclose(full);
}

/* The first failure stops the output: nothing is written after it, even where the stream
 * would take it again. */
static void test_writers_stop_after_the_first_failure(void **state)
{
    fixture *f = *state;
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    output o = { &f->l, &f->t, 4, stream, NULL, 0, EXIT_STATUS_OK, NULL };
    output_puts(&o, "kept");
    output_fail(&o, EXIT_STATUS_SOFTWARE);
    output_fail(&o, EXIT_STATUS_IO);  /* the first failure is the one reported */
    output_puts(&o, " lost");
    output_printf(&o, "%d", 1);
    output_number(&o, 1.5, NUMBER_SHORT);
    output_text(&o, "lost");
    fclose(stream);
    assert_string_equal(text, "kept");
    assert_int_equal(o.status, EXIT_STATUS_SOFTWARE);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_long_sum_shows_its_largest_terms),
        cmocka_unit_test(test_repeated_tokens_are_named_by_position),
        cmocka_unit_test(test_a_short_sum_is_written_whole),
        cmocka_unit_test(test_steps_are_numbered_by_the_walk),
        cmocka_unit_test(test_narration_of_every_head_is_written),
        cmocka_unit_test(test_json_keeps_one_entry_per_stage_and_head),
        cmocka_unit_test(test_lesson_text_is_escaped_everywhere),
        cmocka_unit_test(test_markdown_escaping),
        cmocka_unit_test(test_a_failed_write_is_reported),
        cmocka_unit_test(test_writers_stop_after_the_first_failure),
    };
    return cmocka_run_group_tests_name("output", tests, setup, teardown);
}
