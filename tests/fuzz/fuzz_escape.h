/* What the fuzz harnesses share (tests/fuzz/fuzz_escape.c): the no-raw-control property they
 * check (what attnstep writes to a terminal, once escaped by the one escaping rule of src/text,
 * holds no C0 control but line breaks, no DEL, C1 or bidi control, and only valid UTF-8), and
 * the trace of a harness's own lesson, computed once. */
#ifndef ATTNSTEP_FUZZ_ESCAPE_H
#define ATTNSTEP_FUZZ_ESCAPE_H

#include <stdbool.h>
#include "trace.h"

/* Aborts, naming the byte, when text itself breaks the property, but for the C0 controls listed
 * in `allowed` ("\n" for narration, "\t" for a file name, which may hold a tab): for text the
 * program guarantees clean before any escaping. */
void fuzz_check_clean(const char *text, const char *allowed);

/* Escapes text as the program does before printing it (text_escape, or text_escape_lines when
 * keep_lines), then fuzz_check_clean. */
void fuzz_check_escaped(const char *text, bool keep_lines);

/* The trace of the lesson in text (named name in messages), loaded and computed on the first
 * call and kept for the run; aborts when the harness's own lesson does not load. */
const trace *fuzz_trace_once(const char *name, const char *text);

#endif
