/* The shared test inputs (fixtures.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"

const char *const fixture_labels[8] = { "a", "b", "c", "d", "e", "f", "g", "h" };

static const char *const cat_sat_tokens[] = { "cat", "sat" };
static const double cat_sat_embeddings[] = { 1.0, 0.5, 0.0, 1.0 };
static const double identity2[] = { 1, 0, 0, 1 };

attention_input fixture_cat_sat(void)
{
    return (attention_input){
        .n_tokens = 2, .tokens = cat_sat_tokens, .n_source = 2, .d_model = 2, .heads = 1,
        .embeddings = cat_sat_embeddings, .W_Q = identity2, .W_K = identity2,
        .W_V = identity2, .W_O = identity2, .mask = MASK_NONE, .scale = true,
    };
}

void fixture_compute(const attention_input *in, trace *t)
{
    assert_int_equal(trace_compute(in, NULL, t, NULL), TRACE_OK);
}

int fixture_load(const char *text, lesson *l)
{
    lesson_diagnostics d;
    lesson_status status = lesson_load_buffer("t.yaml", text, strlen(text), l, &d);
    if (status != LESSON_OK)
        lesson_diagnostics_print(&d, stderr);
    int count = d.count;
    lesson_diagnostics_free(&d);
    assert_int_equal(status, LESSON_OK);
    return count;
}

void fixture_load_traced(const char *text, lesson *l, trace *t)
{
    fixture_load(text, l);
    fixture_compute(&l->input, t);
}

void fixture_explains(const trace *t, const char *spec, int head, const char *expected)
{
    trace_cell cell;
    char error[256], text[1024];
    assert_true(trace_cell_parse(t, spec, head, &cell, error, sizeof error));
    int length = trace_cell_explain(t, &cell, 4, text, sizeof text);
    assert_int_equal(length, (int)strlen(expected));
    assert_string_equal(text, expected);
}

void fixture_diagnostics_are(const lesson_diagnostics *d, const char *expected)
{
    support_capture capture;
    lesson_diagnostics_print(d, support_capture_begin(&capture));
    char *printed = support_capture_end(&capture);
    assert_string_equal(printed, expected);
    free(printed);
}

lesson_status fixture_load_status(const char *text, lesson *l, char *message, size_t size)
{
    lesson_diagnostics d;
    lesson_status status = lesson_load_buffer("t.yaml", text, strlen(text), l, &d);
    message[0] = '\0';
    if (d.count > 0)
        snprintf(message, size, "%s", d.items[0].message);
    lesson_diagnostics_free(&d);
    return status;
}

void fixture_refused(const char *text, const char *expected)
{
    lesson l;
    char message[512];
    assert_int_not_equal(fixture_load_status(text, &l, message, sizeof message), LESSON_OK);
    if (!strstr(message, expected)) {
        fprintf(stderr, "message: %s\nexpected: %s\n", message, expected);
        fail();
    }
}
