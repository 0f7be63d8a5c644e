/* What the fuzz harnesses share (tests/fuzz/fuzz_escape.h): the no-raw-control property and
 * the trace of a harness's own lesson. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_escape.h"
#include "lesson.h"
#include "text.h"

void fuzz_check_clean(const char *text, const char *allowed)
{
    unsigned prev = 0;
    for (const char *p = text; *p;) {
        unsigned c;
        int bytes = text_decode(p, &c);
        /* a zero-width joiner between two emoji is the picture they make (👩‍💻), which the
           escaping keeps as it is, by the same rule (text_joins_emoji) */
        bool let_through = (c < 0x20 && strchr(allowed, (int)c) != NULL)
                           || (bytes > 0 && c == 0x200d && text_joins_emoji(prev, p + bytes));
        if (bytes == 0 || (text_is_control(c) && !let_through)) {
            fprintf(stderr, "raw control or invalid byte 0x%02x at offset %d\n",
                    (unsigned char)*p, (int)(p - text));
            abort();
        }
        prev = c;
        p += bytes;
    }
}

void fuzz_check_escaped(const char *text, bool keep_lines)
{
    int (*escape)(const char *, char *, size_t) = keep_lines ? text_escape_lines : text_escape;
    int length = escape(text, NULL, 0);
    char *escaped = malloc((size_t)length + 1);
    if (!escaped)
        return;
    escape(text, escaped, (size_t)length + 1);
    fuzz_check_clean(escaped, keep_lines ? "\n" : "");
    free(escaped);
}

const trace *fuzz_trace_once(const char *name, const char *text)
{
    static lesson the_lesson;
    static trace the_trace;
    static bool loaded;
    if (loaded)
        return &the_trace;
    lesson_diagnostics diagnostics;
    if (lesson_load_buffer(name, text, strlen(text), &the_lesson, &diagnostics) != LESSON_OK
        || trace_compute(&the_lesson.input, NULL, &the_trace, NULL) != TRACE_OK)
        abort();
    loaded = true;
    return &the_trace;
}
