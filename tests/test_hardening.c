/* The pieces of the second hardening round (issue #11) on their own: text_write_escaped writes
 * what text_escape makes and reports a failed write, lesson_open_regular refuses special files
 * without blocking, and the loader's memory rule counts a lesson's own matrices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/* ---- issue 26: loads linear in the lesson's size ---- */

#define BIG_HEAD "title: big\ntokens: [cat, sat]\nembeddings:\n  cat: [1.0, 0.5]\n" \
                 "  sat: [0.0, 1.0]\nsteps:\n"
/* Six lines a step: say above ask, so the loader (which reads ask first) meets a text before
 * the one it read last, every step. */
#define BIG_STEP "  - stage: scores\n    say: >-\n      x {scores[cat,sat]} y {scores[sat,cat]}\n" \
                 "    ask: q {scores[cat,cat]}?\n    choices: [a, b]\n    answer: a\n"

/* A lesson of about size bytes of placeholders; *steps is how many steps it has. */
static char *big_lesson(size_t size, int *steps, size_t *length)
{
    char *text = malloc(size + 1);
    assert_non_null(text);
    size_t used = strlen(BIG_HEAD);
    memcpy(text, BIG_HEAD, used);
    for (*steps = 0; used + strlen(BIG_STEP) <= size; ++*steps, used += strlen(BIG_STEP))
        memcpy(text + used, BIG_STEP, strlen(BIG_STEP));
    text[used] = '\0';
    *length = used;
    return text;
}

/* A lesson of one long line (flow style), each step's say before its ask: the loader reads ask
 * first, so it goes back along the line every step, and must land on the right columns. 90
 * steps (each question warns that its stage is on screen: fewer than the 100 problems that
 * refuse a lesson), each say padded to 10,000 characters. Returns 0, or the check that failed. */
enum { FLOW_STEPS = 90, FLOW_PAD = 10000 };
static int load_flow(void)
{
    const char *head = "title: flow\ntokens: [cat, sat]\nembeddings: {cat: [1.0, 0.5], "
                       "sat: [0.0, 1.0]}\nsteps: [";
    size_t step = FLOW_PAD + 128, used = strlen(head);
    char *text = malloc(used + FLOW_STEPS * step + 8);
    if (!text) return 10;
    memcpy(text, head, used);
    for (int i = 0; i < FLOW_STEPS; i++) {
        used += (size_t)sprintf(text + used, "{stage: input, say: \"%*sx {input[cat,0]}\", ", FLOW_PAD, "");
        used += (size_t)sprintf(text + used, "ask: \"q {input[sat,1]}?\", choices: [a, b], answer: a}%s",
                                i + 1 < FLOW_STEPS ? ", " : "]\n");
    }
    /* the last placeholders' columns, counted from the start of line 4 */
    const char *line4 = strstr(text, "steps: [");
    const char *last_say = NULL, *last_ask = NULL;
    for (const char *p = line4; (p = strstr(p, "{input[cat,0]}")) != NULL; p++) last_say = p;
    for (const char *p = line4; (p = strstr(p, "{input[sat,1]}")) != NULL; p++) last_ask = p;
    int say_col = (int)(last_say - line4) + 1, ask_col = (int)(last_ask - line4) + 1;
    lesson l;
    lesson_diagnostics d;
    int status = 0;
    if (lesson_load_buffer("flow.yaml", text, used, &l, &d) != LESSON_OK) status = 11;
    else {
        const lesson_step *last = &l.steps[FLOW_STEPS - 1];
        const lesson_written *say = &last->say_written, *ask = &last->ask_written;
        if (say->count != 1 || say->marks[0].line != 4 || say->marks[0].col != say_col) status = 12;
        else if (ask->count != 1 || ask->marks[0].line != 4 || ask->marks[0].col != ask_col)
            status = 13;
        lesson_free(&l);
    }
    if (status == 11) lesson_diagnostics_free(&d);
    free(text);
    return status;
}

/* Loads a lesson of 4 MiB less a little, and checks where its last placeholders are: in a
 * child, so plain checks (a cmocka assertion would run the rest of the suite in the child).
 * Returns the child's exit status: 0 when all is well. */
static int load_big(void)
{
    int steps = 0;
    size_t length = 0;
    char *text = big_lesson(LESSON_MAX_FILE_BYTES - 4096, &steps, &length);
    lesson l;
    lesson_diagnostics d;
    if (lesson_load_buffer("big.yaml", text, length, &l, &d) != LESSON_OK) return 1;
    if (l.n_steps != steps) return 2;
    const lesson_step *last = &l.steps[steps - 1];
    int line = 6 + 6 * (steps - 1);   /* the last step's "- stage" line, less one */
    const lesson_written *say = &last->say_written, *ask = &last->ask_written;
    if (say->count != 2 || say->marks[1].line != line + 3 || say->marks[1].col != 29) return 3;
    if (ask->count != 1 || ask->marks[0].line != line + 4 || ask->marks[0].col != 12) return 4;
    lesson_free(&l);
    free(text);
    return load_flow();
}

/* The loader used to find every text's place from the top of the file: 35 s for 592 KB. Here
 * 4 MiB takes a fraction of a second; 20 s is far above that on a loaded machine and far
 * below the hours the quadratic walk would take (the child is killed at the bound). */
static void test_a_large_lesson_loads_in_linear_time(void **state)
{
    (void)state;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        alarm(20);
        _exit(load_big());
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("# a 4 MiB lesson of placeholders loaded in %.2f s\n",
           (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
    assert_false(WIFSIGNALED(status));   /* SIGALRM: over the bound */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_escaped_matches_text_escape),
        cmocka_unit_test(test_write_escaped_reports_a_failed_write),
        cmocka_unit_test(test_open_regular_refuses_special_files),
        cmocka_unit_test(test_the_memory_rule_counts_the_weights),
        cmocka_unit_test(test_a_large_lesson_loads_in_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
