/* The pieces of the second hardening round (issue #11) on their own: text_write_escaped writes
 * what text_escape makes and reports a failed write, lesson_open_regular refuses special files
 * without blocking, and the loader's memory rule counts a lesson's own matrices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support.h"
#include "lesson.h"
#include "text.h"

/* What text_write_escaped writes for text, read back through a temporary file. */
static char *written_escaped(const char *text, bool keep_newlines)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(text_write_escaped(f, text, keep_newlines), 0);
    long size = ftell(f);
    rewind(f);
    char *back = calloc((size_t)size + 1, 1);
    assert_non_null(back);
    assert_int_equal(fread(back, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    return back;
}

static void test_write_escaped_matches_text_escape(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "plain", "\x1b[31mred\x07", "c1 \xc2\x9b and bidi \xe2\x80\xae", "bad \xff byte",
        "two\nlines\r\n", "",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        for (int keep = 0; keep < 2; keep++) {
            char expected[256];
            (keep ? text_escape_lines : text_escape)(texts[i], expected, sizeof expected);
            char *got = written_escaped(texts[i], keep);
            assert_string_equal(got, expected);
            free(got);
        }
    char *got = written_escaped("\x1b]0;x\x07", false);
    assert_string_equal(got, "\\x1b]0;x\\x07");
    free(got);
}

static void test_write_escaped_reports_a_failed_write(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    assert_non_null(full);
    setvbuf(full, NULL, _IONBF, 0);   /* every fputs reaches the device at once */
    assert_int_equal(text_write_escaped(full, "anything", false), EOF);
    fclose(full);
}

/* lesson_open_regular's refusal of path, which must be exactly why. */
static void refused(const char *path, const char *why)
{
    const char *got = NULL;
    assert_null(lesson_open_regular(path, &got));
    assert_non_null(got);
    assert_string_equal(got, why);
}

static void test_open_regular_refuses_special_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnstep-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64], file[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(file, sizeof file, "%s/lesson.yaml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("title: t\n", f);
    fclose(f);

    /* the FIFO has no writer: opening it without O_NONBLOCK would wait forever */
    refused(fifo, "it is a FIFO, not a regular file");
    refused(dir, "it is a directory, not a regular file");
    refused("/dev/zero", "it is a device, not a regular file");
    refused("/dev/null", "it is a device, not a regular file");
    char missing[80];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    refused(missing, "No such file or directory");

    const char *why = NULL;
    FILE *opened = lesson_open_regular(file, &why);
    assert_non_null(opened);
    char line[32];
    assert_non_null(fgets(line, sizeof line, opened));   /* a blocking stream again: reads whole */
    assert_string_equal(line, "title: t\n");
    fclose(opened);

    unlink(fifo);
    unlink(file);
    rmdir(dir);
}

/* A lesson of n tokens at d_model 64 with random weights: 4 × 64² doubles (128 KiB) of weights
 * and a trace that is much smaller for a few tokens. */
static const char wide_lesson[] =
    "title: wide\ntokens: a b\nd_model: 64\nembeddings: {random: normal, seed: 1}\n"
    "W_Q: {random: normal, seed: 2}\nW_K: {random: normal, seed: 3}\n"
    "W_V: {random: normal, seed: 4}\nW_O: {random: normal, seed: 5}\n";

static void test_the_memory_rule_counts_the_weights(void **state)
{
    (void)state;
    lesson l;
    lesson_diagnostics d;
    /* the weights alone (128 KiB) are over a 100 KiB cap, though the trace is far below it */
    assert_int_equal(lesson_load_buffer_within("w.yaml", wide_lesson, sizeof wide_lesson - 1,
                                               100 << 10, &l, &d), LESSON_INVALID);
    assert_int_equal(d.count, 1);
    /* the amount follows what the trace holds; the limit is the cap it was checked against */
    const char *message = d.items[0].message, *tail = " KiB; the limit is 100 KiB";
    assert_true(strncmp(message, "the lesson and its trace would need 1", 37) == 0);
    assert_string_equal(message + strlen(message) - strlen(tail), tail);
    lesson_diagnostics_free(&d);
    /* and within a cap that holds them the same lesson loads */
    assert_int_equal(lesson_load_buffer_within("w.yaml", wide_lesson, sizeof wide_lesson - 1,
                                               1 << 20, &l, &d), LESSON_OK);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_escaped_matches_text_escape),
        cmocka_unit_test(test_write_escaped_reports_a_failed_write),
        cmocka_unit_test(test_open_regular_refuses_special_files),
        cmocka_unit_test(test_the_memory_rule_counts_the_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
