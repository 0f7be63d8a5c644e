/* Recording, quoting and printing the lesson loader's diagnostics (the tables are in
 * lesson_diag.h): one printer for every mode, clang-style with the source line and a caret. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_diag.h"
#include "lesson_text.h"
#include "spelling.h"
#include "text.h"

static const char *const formats[] = {
#define LESSON_ERROR_FORMAT(id, format) format,
    LESSON_ERROR_TABLE(LESSON_ERROR_FORMAT)
#undef LESSON_ERROR_FORMAT
};

static const char *const hint_formats[] = {
#define LESSON_HINT_FORMAT(id, format) format,
    LESSON_HINT_TABLE(LESSON_HINT_FORMAT)
#undef LESSON_HINT_FORMAT
};

static const char *const severity_names[] = { "error", "warning" };

static char *format_text(const char *format, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    char *text = length < 0 ? NULL : malloc((size_t)length + 1);
    if (text) vsnprintf(text, (size_t)length + 1, format, args);
    return text;
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

static lesson_diagnostic *record(lesson_diagnostics *d, int line, int col,
                                 lesson_severity severity, lesson_error error, va_list args) {
    if (d->count >= LESSON_MAX_DIAGNOSTICS) {
        d->dropped++;
        return NULL;
    }
    if (!d->items) {
        d->items = calloc(LESSON_MAX_DIAGNOSTICS + 1, sizeof *d->items);
        if (!d->items) return NULL;
    }
    char *message = format_text(formats[error], args);
    if (!message) return NULL;  /* out of memory: the other diagnostics still say what they can */
    int at = insertion_point(d, line, col);
    memmove(d->items + at + 1, d->items + at, (size_t)(d->count - at) * sizeof *d->items);
    d->items[at] = (lesson_diagnostic){ .line = line, .col = col, .severity = severity,
                                        .message = message };
    d->items[at].follows.line = d->following.line;
    d->items[at].follows.col = d->following.col;
    d->items[at].follows.key = d->following.key;
    d->count++;
    return &d->items[at];
}

lesson_diagnostic *lesson_report(lesson_diagnostics *d, int line, int col, lesson_error error,
                                 ...) {
    va_list args;
    va_start(args, error);
    lesson_diagnostic *item = record(d, line, col, LESSON_SEVERITY_ERROR, error, args);
    va_end(args);
    return item;
}

lesson_diagnostic *lesson_report_warning(lesson_diagnostics *d, int line, int col,
                                         lesson_error error, ...) {
    va_list args;
    va_start(args, error);
    lesson_diagnostic *item = record(d, line, col, LESSON_SEVERITY_WARNING, error, args);
    va_end(args);
    return item;
}

bool lesson_suggest(lesson_diagnostic *item, const char *word, const char *const *words,
                    int count) {
    const char *near = item ? spelling_nearest(word, words, count) : NULL;
    if (!near) return false;
    char shown[LESSON_ESCAPED_MAX];
    lesson_escape(near, strlen(near), shown);
    const char *format = "%s; did you mean '%s'?";
    size_t size = strlen(item->message) + strlen(shown) + strlen(format);
    char *longer = malloc(size);
    if (!longer) return false;
    snprintf(longer, size, format, item->message, shown);
    free(item->message);
    item->message = longer;
    return true;
}

void lesson_hint(lesson_diagnostic *item, lesson_hint_id hint, ...) {
    if (!item) return;
    va_list args;
    va_start(args, hint);
    char *text = format_text(hint_formats[hint], args);
    va_end(args);
    free(item->hint);
    item->hint = text;
}

int lesson_error_count(const lesson_diagnostics *d) {
    int errors = d->dropped;
    for (int i = 0; i < d->count; i++) errors += d->items[i].severity == LESSON_SEVERITY_ERROR;
    return errors;
}

static char *message_of(lesson_error error, ...) {
    va_list args;
    va_start(args, error);
    char *message = format_text(formats[error], args);
    va_end(args);
    return message;
}

void lesson_follows(lesson_diagnostic *item, int line, int col, const char *key) {
    if (item) { item->follows.line = line; item->follows.col = col; item->follows.key = key; }
}

void lesson_follow_from(lesson_diagnostics *d, int line, int col, const char *key) {
    d->following.line = line;
    d->following.col = col;
    d->following.key = key;
}

void lesson_explains(lesson_diagnostic *root, int line, int col, const char *key) {
    if (root) { root->explains.line = line; root->explains.col = col; root->explains.key = key; }
}

/* Whether some diagnostic of d explains the absence that item follows from. */
static bool explained(const lesson_diagnostics *d, const lesson_diagnostic *item) {
    if (!item->follows.key) return false;
    for (int i = 0; i < d->count; i++) {
        const lesson_diagnostic *root = &d->items[i];
        if (root->explains.key && root->explains.line == item->follows.line
            && root->explains.col == item->follows.col
            && strcmp(root->explains.key, item->follows.key) == 0)
            return true;
    }
    return false;
}

/* Frees and removes the diagnostics that a root cause explains, keeping the others' order:
 * first which go (a root may be explained too, and must still count), then the removal. */
static void drop_explained(lesson_diagnostics *d) {
    bool drop[LESSON_MAX_DIAGNOSTICS + 1];
    for (int i = 0; i < d->count; i++) drop[i] = explained(d, &d->items[i]);
    int kept = 0;
    for (int i = 0; i < d->count; i++) {
        lesson_diagnostic *item = &d->items[i];
        if (!drop[i]) {
            d->items[kept++] = *item;
            continue;
        }
        free(item->message);
        free(item->hint);
        free(item->source);
    }
    d->count = kept;
}

void lesson_report_finish(lesson_diagnostics *d) {
    if (d->items) drop_explained(d);
    if (d->dropped == 0 || !d->items) return;
    /* The allocation keeps room for this line; it goes last, after every positioned one. */
    char *message = message_of(LESSON_ERROR_TOO_MANY_ERRORS, LESSON_MAX_DIAGNOSTICS);
    if (message) d->items[d->count++] = (lesson_diagnostic){ .message = message };
    d->dropped = 0;
}

/* The byte offset `chars` characters after from in data, or end if that comes first. */
static size_t skip_chars(const char *data, size_t from, size_t end, size_t chars) {
    size_t i = from;
    for (size_t n = 0; n < chars && i < end; n++) {
        unsigned cp = 0;
        int length = text_decode(data + i, &cp);
        i += length > 0 ? (size_t)length : 1;
    }
    return i < end ? i : end;
}

/* Gives item the part of the line [start, end) of data around its column: all of it when it is
 * short, else a window cut with "…", so that one huge line (a 4 MiB list) is neither copied for
 * each of its problems nor printed whole. */
static void quote_line(lesson_diagnostic *item, const char *data, size_t start, size_t end) {
    enum { BEFORE = 40, WINDOW = 120 };
    static const char cut[] = "\xe2\x80\xa6";
    size_t caret = item->col > 0 ? (size_t)item->col - 1 : 0;   /* in characters */
    size_t first = caret > BEFORE + 20 ? caret - BEFORE : 0;   /* in characters */
    size_t from = skip_chars(data, start, end, first), to = skip_chars(data, from, end, WINDOW);
    bool cut_before = from > start, cut_after = to < end;
    size_t length = to - from, size = length + 2 * sizeof cut;
    item->source = malloc(size);
    if (!item->source) return;
    snprintf(item->source, size, "%s%.*s%s", cut_before ? cut : "", (int)length, data + from,
             cut_after ? cut : "");
    item->source_col = (int)(caret - first) + 1 + (cut_before ? 1 : 0);
}

/* YAML 1.1 (libyaml) ends a line at U+2028, U+2029 and U+0085 too, which editors mostly show
 * as nothing: a problem on either of the two lines after one (an indentation error in the
 * middle of a comment, a text cut short) is explained by it, whatever the check that found it
 * thought. starts[k] is where line item->line − k begins (0 for none). */
static void explain_hidden_break(lesson_diagnostic *item, const char *data,
                                 const size_t starts[3]) {
    static const struct { const char *bytes, *name, *escape; } breaks[] = {
        { "\xe2\x80\xa8", "U+2028 (LINE SEPARATOR)", "\\u2028" },
        { "\xe2\x80\xa9", "U+2029 (PARAGRAPH SEPARATOR)", "\\u2029" },
        { "\xc2\x85", "U+0085 (NEXT LINE)", "\\x85" },
    };
    for (int k = 0; k < 2 && item->line - k > 1; k++)
        for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
            size_t length = strlen(breaks[i].bytes), start = starts[k];
            if (start >= length && memcmp(data + start - length, breaks[i].bytes, length) == 0) {
                lesson_hint(item, LESSON_HINT_HIDDEN_BREAK, item->line - k - 1, breaks[i].name,
                            breaks[i].escape);
                return;
            }
        }
}

void lesson_diagnostics_quote(lesson_diagnostics *d, const char *data, size_t size) {
    size_t starts[3] = { lesson_first_line(data, size), 0, 0 }, next = 0;
    int line = 1;
    for (int i = 0; i < d->count; i++) {
        lesson_diagnostic *item = &d->items[i];
        if (item->line <= 0 || item->source) continue;
        if (item->line < line) {  /* not in order of lines: start again from the top */
            starts[0] = lesson_first_line(data, size), starts[1] = starts[2] = 0;
            line = 1;
        }
        size_t end = lesson_line_end(data, size, starts[0], &next);
        for (; line < item->line && next < size; line++) {
            starts[2] = starts[1], starts[1] = starts[0], starts[0] = next;
            end = lesson_line_end(data, size, starts[0], &next);
        }
        if (line != item->line) continue;  /* past the end */
        quote_line(item, data, starts[0], end);
        explain_hidden_break(item, data, starts);
    }
}

/* Escapes the first `chars` characters of text (all of it for SIZE_MAX) into a new string;
 * NULL when out of memory. */
static char *escape_prefix(const char *text, size_t chars) {
    char *raw = strndup(text, skip_chars(text, 0, strlen(text), chars));
    size_t size = raw ? strlen(raw) * 6 + 1 : 0;  /* an escape takes at most 6 bytes per byte */
    char *shown = raw ? malloc(size) : NULL;
    if (shown) text_escape(raw, shown, size);
    free(raw);
    return shown;
}

/* Prints the quoted source line of item (escaped: it is lesson text) and a caret under its
 * column, counted in the columns the escaped text takes on a terminal. */
static void print_quote(const lesson_diagnostic *item, FILE *stream) {
    char *shown = escape_prefix(item->source, SIZE_MAX);
    char *before = escape_prefix(item->source, (size_t)(item->source_col - 1));
    if (shown && before) {
        char number[16];
        int digits = snprintf(number, sizeof number, "%d", item->line);
        int width = digits < 5 ? 5 : digits;
        fprintf(stream, "%*s | %s\n", width, number, shown);
        fprintf(stream, "%*s | %*s^\n", width, "", text_width(before), "");
    }
    free(shown);
    free(before);
}

void lesson_diagnostic_headline(const lesson_diagnostics *d, const lesson_diagnostic *item,
                                char *out, size_t size) {
    const char *path = d->path ? d->path : "";
    /* File names are untrusted text too; an escape takes at most 6 bytes per input byte. */
    size_t path_size = strlen(path) * 6 + 1;
    char *shown = malloc(path_size);
    if (shown) text_escape(path, shown, path_size);
    const char *severity = severity_names[item->severity];
    if (item->line > 0)
        snprintf(out, size, "%s:%d:%d: %s: %s", shown ? shown : "?", item->line, item->col,
                 severity, item->message);
    else
        snprintf(out, size, "%s: %s: %s", shown ? shown : "?", severity, item->message);
    free(shown);
}

void lesson_diagnostic_paragraph(const lesson_diagnostics *d, const lesson_diagnostic *item,
                                 char *out, size_t size) {
    (void)d;
    if (item->line > 0) snprintf(out, size, "line %d: %s", item->line, item->message);
    else snprintf(out, size, "%s", item->message);
    size_t used = strlen(out);
    if (item->hint && used < size) snprintf(out + used, size - used, " (hint: %s)", item->hint);
}

void lesson_diagnostics_print(const lesson_diagnostics *d, FILE *stream) {
    for (int i = 0; i < d->count; i++) {
        const lesson_diagnostic *item = &d->items[i];
        /* Room for all of it: an escape takes at most 6 bytes per byte of the path. */
        size_t size = (d->path ? strlen(d->path) * 6 : 0) + strlen(item->message) + 64;
        char *headline = malloc(size);
        if (headline) lesson_diagnostic_headline(d, item, headline, size);
        fprintf(stream, "%s\n", headline ? headline : item->message);
        free(headline);
        if (item->source) print_quote(item, stream);
        if (item->hint) fprintf(stream, "hint: %s\n", item->hint);
    }
}

void lesson_diagnostics_free(lesson_diagnostics *d) {
    for (int i = 0; i < d->count; i++) {
        free(d->items[i].message);
        free(d->items[i].hint);
        free(d->items[i].source);
    }
    free(d->items);
    free(d->path);
    *d = (lesson_diagnostics){ 0 };
}
