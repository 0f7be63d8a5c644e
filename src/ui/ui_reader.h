/* --reader: the lesson as plain lines for screen readers and braille displays (ui_reader.c, no
 * curses). Commands come one a line (next, prev, step N, head H, cell NAME, row TOKEN, col
 * TOKEN, read, why, answer X, skip, say, help, quit); every line written is self-contained and
 * escaped (no control character but the newline ending it). It drives the UI's own view model
 * (ui_view: the walk, the questions, their grading and verdicts) and narration
 * (ui_narration_text), and the core's explanations, so nothing of theirs is written twice. */
#ifndef ATTNSTEP_UI_READER_H
#define ATTNSTEP_UI_READER_H

#include <stdio.h>
#include "exit_status.h"
#include "lesson.h"
#include "trace.h"

/* The prompt written before each command when there is one (at a terminal). */
#define UI_READER_PROMPT "> "

/* Reads commands from in until quit or its end, answering on out; prompt is written before
 * each command unless NULL. Numbers at `precision` decimals. Returns EXIT_STATUS_OK, or
 * EXIT_STATUS_SOFTWARE when out of memory (out's write errors are left for its closer). */
exit_status ui_reader_run(const lesson *l, const trace *t, int precision, FILE *in, FILE *out,
                          const char *prompt);

#endif
