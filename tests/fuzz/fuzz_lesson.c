/* libFuzzer target: any bytes through the lesson loader, the core, lesson_check (claims and live
 * numbers), every text output and the explanation of cells. Run with `make fuzz`
 * (FUZZ_SECONDS=N); crashes become regression files in tests/bad/. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "trace.h"
#include "lesson.h"
#include "output.h"
#include "walk.h"

/* The loader's own limit on everything a lesson makes the program allocate (its matrices and
 * its trace, counted before anything is allocated or drawn), made smaller: a lesson past it is
 * checked and refused like one past LESSON_MAX_BYTES, so a valid but large input never costs
 * seconds of random draws and printing, which libFuzzer would report as a hang. */
#define FUZZ_MAX_BYTES ((size_t)256 << 10)

static void explain_corners(const trace *t)
{
    char text[4096];
    walk w;
    if (!walk_build(&w, t, NULL, 0))
        return;
    for (int k = 0; k < w.count; k++) {
        trace_cell cell = { w.steps[k].stage, w.steps[k].head, 0, 0 };
        int rows = trace_rows(t, cell.stage), cols = trace_cols(t, cell.stage);
        int corners[4][2] = { { 0, 0 }, { 0, cols - 1 }, { rows - 1, 0 }, { rows - 1, cols - 1 } };
        for (int i = 0; i < 4; i++) {
            cell.row = corners[i][0];
            cell.col = corners[i][1];
            trace_cell_explain(t, &cell, 4, text, sizeof text);
        }
    }
    walk_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    lesson l;
    lesson_diagnostics diagnostics;
    if (lesson_load_buffer_within("fuzz.yaml", (const char *)data, size, FUZZ_MAX_BYTES, &l,
                                  &diagnostics) != LESSON_OK) {
        lesson_diagnostics_print(&diagnostics, sink);
        lesson_diagnostics_free(&diagnostics);
        return 0;
    }
    trace t;
    if (trace_compute(&l.input, NULL, &t, NULL) == TRACE_OK) {
        /* answers, claims and live numbers: untrusted text parsed against the trace; as in
         * every mode, a lesson that fails its check is not shown */
        bool checked = lesson_check(&l, &t, true, &diagnostics) == LESSON_OK;
        lesson_diagnostics_print(&diagnostics, sink);
        lesson_diagnostics_free(&diagnostics);
        if (checked) {
            output_write(&output_plain, &l, &t, 4, sink);
            output_write(&output_json, &l, &t, 4, sink);
            output_write(&output_markdown, &l, &t, 2, sink);
        }
        explain_corners(&t);
        trace_free(&t);
    }
    lesson_free(&l);
    return 0;
}
