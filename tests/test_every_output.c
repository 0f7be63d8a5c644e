/* Every lesson through every output: each shipped lesson (lessons/) and reference lesson
 * (tests/reference/), or the lessons named on the command line, loads, computes, checks and is
 * written by every format (plain, JSON, Markdown, the worksheet), as CSV for every stage and
 * head it has, and explained at the first and last cell of every stage and head, with and
 * without --full; each must succeed. check_valgrind runs this binary under memcheck over the
 * lessons in two processes (a valgrind process spends most of a second starting, so one per
 * lesson and mode was most of that suite's time); make test runs it as it is, and make test-asan
 * under the sanitizers. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "lesson.h"
#include "output.h"
#include "trace.h"

static int lesson_count;
static char **lesson_paths;

/* Writes one whole format of l's trace to /dev/null; fails the test naming what failed. */
static void write_format(const char *path, const char *name, const output_format *format,
                         const lesson *l, const trace *t, FILE *sink)
{
    exit_status status = output_write(format, l, t, 4, sink);
    if (status != EXIT_STATUS_OK) {
        print_error("%s: %s failed (exit status %d)\n", path, name, (int)status);
        fail();
    }
}

/* Explains one cell both ways, as --explain and --explain --full do. */
static void explain_cell(const char *path, const trace *t, trace_cell cell)
{
    int (*explain[])(const trace *, const trace_cell *, int, char *, size_t) = {
        trace_cell_explain, trace_cell_explain_full,
    };
    for (size_t e = 0; e < sizeof explain / sizeof explain[0]; e++) {
        int length = explain[e](t, &cell, 4, NULL, 0);
        char *text = malloc((size_t)(length > 0 ? length : 0) + 1);
        assert_non_null(text);
        if (length < 0 || explain[e](t, &cell, 4, text, (size_t)length + 1) != length) {
            print_error("%s: %s[%d,%d] head %d: the explanation's length changed\n", path,
                        stage_get(cell.stage)->name, cell.row, cell.col, cell.head);
            free(text);
            fail();
        }
        free(text);
    }
}

/* Every stage and head of the trace: as CSV, and explained at its first and last cell. */
static void every_stage(const char *path, const lesson *l, const trace *t, FILE *sink)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(t, stage))
            continue;
        int heads = stage_get(stage)->per_head ? t->heads : 1;
        int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
        for (int head = 1; head <= heads; head++) {
            if (output_write_matrix(&output_csv, l, t, stage, head, sink) != EXIT_STATUS_OK) {
                print_error("%s: --csv %s --head %d failed\n", path, stage_get(stage)->name,
                            head);
                fail();
            }
            explain_cell(path, t, (trace_cell){ stage, head, 0, 0 });
            explain_cell(path, t, (trace_cell){ stage, head, rows - 1, cols - 1 });
        }
    }
}

static void one_lesson(const char *path, FILE *sink)
{
    lesson l;
    lesson_diagnostics diagnostics;
    if (lesson_load(path, &l, &diagnostics) != LESSON_OK) {
        print_error("%s: does not load\n", path);
        lesson_diagnostics_print(&diagnostics, stderr);
        lesson_diagnostics_free(&diagnostics);
        fail();
    }
    lesson_diagnostics_free(&diagnostics);
    trace t;
    trace_failure failure;
    trace_status status = trace_compute(&l.input, NULL, &t, &failure);
    if (status != TRACE_OK) {
        print_error("%s: trace_compute failed: %s\n", path, trace_status_message(status));
        lesson_free(&l);
        fail();
    }
    /* as main does before any output: the answers written `auto` are found in the trace */
    if (lesson_check(&l, &t, false, &diagnostics) != LESSON_OK) {
        print_error("%s: does not check\n", path);
        lesson_diagnostics_print(&diagnostics, stderr);
        fail();
    }
    lesson_diagnostics_free(&diagnostics);
    write_format(path, "--plain", &output_plain, &l, &t, sink);
    write_format(path, "--json", &output_json, &l, &t, sink);
    write_format(path, "--markdown", &output_markdown, &l, &t, sink);
    write_format(path, "--markdown --worksheet", &output_worksheet, &l, &t, sink);
    every_stage(path, &l, &t, sink);
    trace_free(&t);
    lesson_free(&l);
}

static void test_every_lesson_in_every_output(void **state)
{
    (void)state;
    assert_true(lesson_count > 0);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    for (int i = 0; i < lesson_count; i++)
        one_lesson(lesson_paths[i], sink);
    fclose(sink);
}

int main(int argc, char **argv)
{
    glob_t found = { 0 };
    if (argc > 1) {
        lesson_paths = argv + 1;
        lesson_count = argc - 1;
    } else {
        glob("lessons/*.yaml", 0, NULL, &found);
        glob("tests/reference/*.yaml", GLOB_APPEND, NULL, &found);
        lesson_paths = found.gl_pathv;
        lesson_count = (int)found.gl_pathc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson_in_every_output),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    globfree(&found);
    return failed;
}
