/* Recording and printing the lesson loader's diagnostics (the table is in lesson_diag.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_diag.h"
#include "text.h"

static const char *const formats[] = {
#define LESSON_ERROR_FORMAT(id, format) format,
    LESSON_ERROR_TABLE(LESSON_ERROR_FORMAT)
#undef LESSON_ERROR_FORMAT
};

static char *format_message(lesson_error error, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(NULL, 0, formats[error], copy);
    va_end(copy);
    char *message = length < 0 ? NULL : malloc((size_t)length + 1);
    if (message) vsnprintf(message, (size_t)length + 1, formats[error], args);
    return message;
}

/* Index at which a diagnostic at line:col goes: after every one at or before that place, so
 * that problems at the same place keep the order they were found in. */
static int insertion_point(const lesson_diagnostics *d, int line, int col) {
    int i = d->count;
    while (i > 0 && (d->items[i - 1].line > line
                     || (d->items[i - 1].line == line && d->items[i - 1].col > col)))
        i--;
    return i;
}

static void record(lesson_diagnostics *d, int line, int col, bool warning, lesson_error error,
                   va_list args) {
    if (d->count >= LESSON_MAX_DIAGNOSTICS) {
        d->dropped++;
        return;
    }
    if (!d->items) {
        d->items = calloc(LESSON_MAX_DIAGNOSTICS + 1, sizeof *d->items);
        if (!d->items) return;
    }
    char *message = format_message(error, args);
    if (!message) return;  /* out of memory: the other diagnostics still say what they can */
    int at = insertion_point(d, line, col);
    memmove(d->items + at + 1, d->items + at, (size_t)(d->count - at) * sizeof *d->items);
    d->items[at] = (lesson_diagnostic){ line, col, message, warning };
    d->count++;
}

void lesson_report(lesson_diagnostics *d, int line, int col, lesson_error error, ...) {
    va_list args;
    va_start(args, error);
    record(d, line, col, false, error, args);
    va_end(args);
}

void lesson_warn(lesson_diagnostics *d, int line, int col, lesson_error error, ...) {
    va_list args;
    va_start(args, error);
    record(d, line, col, true, error, args);
    va_end(args);
}

int lesson_error_count(const lesson_diagnostics *d) {
    int errors = d->dropped;
    for (int i = 0; i < d->count; i++) errors += !d->items[i].warning;
    return errors;
}

static char *message_of(lesson_error error, ...) {
    va_list args;
    va_start(args, error);
    char *message = format_message(error, args);
    va_end(args);
    return message;
}

void lesson_report_finish(lesson_diagnostics *d) {
    if (d->dropped == 0 || !d->items) return;
    /* The allocation keeps room for this line; it goes last, after every positioned one. */
    char *message = message_of(LESSON_ERROR_TOO_MANY_ERRORS, LESSON_MAX_DIAGNOSTICS);
    if (message) d->items[d->count++] = (lesson_diagnostic){ 0, 0, message, false };
    d->dropped = 0;
}

void lesson_diagnostics_print(const lesson_diagnostics *d, FILE *stream) {
    const char *path = d->path ? d->path : "";
    /* File names are untrusted text too; an escape takes at most 6 bytes per input byte. */
    size_t size = strlen(path) * 6 + 1;
    char *shown = malloc(size);
    if (shown) text_escape(path, shown, size);
    for (int i = 0; i < d->count; i++) {
        const lesson_diagnostic *item = &d->items[i];
        const char *kind = item->warning ? "warning" : "error";
        if (item->line > 0)
            fprintf(stream, "%s:%d:%d: %s: %s\n", shown ? shown : "?", item->line, item->col,
                    kind, item->message);
        else
            fprintf(stream, "%s: %s: %s\n", shown ? shown : "?", kind, item->message);
    }
    free(shown);
}

void lesson_diagnostics_free(lesson_diagnostics *d) {
    for (int i = 0; i < d->count; i++) free(d->items[i].message);
    free(d->items);
    free(d->path);
    *d = (lesson_diagnostics){ 0 };
}
