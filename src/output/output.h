/* The text readers of a trace: plain tables, Markdown, JSON and CSV (and whatever else
 * implements output_format). Each visits the steps of the one walk (walk.h) and writes to a
 * stream through the writers below, which remember the first failure. */
#ifndef ATTNSTEP_OUTPUT_H
#define ATTNSTEP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "exit_status.h"
#include "lesson.h"
#include "number.h"
#include "trace.h"
#include "walk.h"

typedef struct output output;

/* The contract between output_write and a format, as a worked call sequence. For cat_sat
 * (one head, two narration items on scores and two on weights) output_write(&output_plain,
 * l, t, 4, stdout) makes these calls:
 *
 *     begin(o)                      title, tokens, configuration
 *     step(o, &walk.steps[0])       o->step == 0: input, no narration
 *     …
 *     step(o, &walk.steps[4])       o->step == 4: scores, narration item 0
 *     step(o, &walk.steps[5])       o->step == 5: scores again, narration item 1;
 *                                   walk_repeats_matrix(o->walk, 5) is true, so
 *                                   output_narrated_step (which plain's step calls)
 *                                   writes the header and a note instead of the table
 *     …                             (13 steps in all: o->walk->count)
 *     end(o)
 *
 * A format with `narrated` false (JSON) is given the walk without narration instead
 * (walk_build_pipeline(&w, t)): one step per stage and head, none repeated. A one-matrix
 * format (CSV) goes through output_write_matrix: begin, one step (o->walk is NULL, o->step
 * 0), end.
 *
 * A format writes only through output_puts, output_printf, output_putc, output_number,
 * output_text and output_text_lines (or through narration, which uses them). These check the
 * stream after each write and record the first failure in o->status (EXIT_STATUS_IO for a
 * failed write, EXIT_STATUS_SOFTWARE for memory it could not get); once o->status is not
 * EXIT_STATUS_OK every writer does nothing, so a format needs no error handling of its own
 * and may keep going until output_write stops calling it (it stops before the next step). A
 * format that allocates memory itself reports a failure with output_fail. */
struct output {
    const lesson *lesson;
    const trace *trace;
    int precision;        /* decimals in tables and explanations; for a one-matrix format,
                             -1 means exact (NUMBER_EXACT) */
    FILE *stream;
    const walk *walk;     /* the steps visited; NULL for a one-matrix format */
    int step;             /* index of the current step in walk, from 0 */
    exit_status status;   /* EXIT_STATUS_OK until the first failure */
    const char *figures;  /* the folder of --svg-dir whose figures a handout links (each step's
                             by output_svg_name), or NULL */
};

typedef struct {
    void (*begin)(output *o);
    void (*step)(output *o, const walk_step *step);
    void (*end)(output *o);
    bool narrated;        /* visits the lesson's walk (narration placed) rather than the
                             pipeline walk without narration */
} output_format;

extern const output_format output_plain;     /* labelled text tables with the narration */
extern const output_format output_json;      /* every intermediate, bit-exact (see README) */
extern const output_format output_markdown;  /* a handout: narration, tables, worked cells */
extern const output_format output_worksheet; /* the handout's questions without answers or the
                                                tables that give them, then an answer key */
extern const output_format output_csv;       /* one matrix, bit-exact */

/* Writes the whole trace in a format, the stream flushed at the end. Returns EXIT_STATUS_OK,
 * EXIT_STATUS_IO when a write or the flush failed, or EXIT_STATUS_SOFTWARE when memory ran
 * out (the walk, or text to escape); the output then stops at that point. */
exit_status output_write(const output_format *format, const lesson *l, const trace *t,
                         int precision, FILE *stream);

/* The same, a handout linking each step's figure in the folder figures (--markdown --svg-dir,
 * which writes them there first). */
exit_status output_write_figured(const output_format *format, const lesson *l, const trace *t,
                                 int precision, const char *figures, FILE *stream);

/* The same for a one-matrix format: only that stage and head (1 for a stage that is not per
 * head) are visited, numbers at full precision. */
exit_status output_write_matrix(const output_format *format, const lesson *l, const trace *t,
                                stage_id stage, int head, FILE *stream);

/* The same with numbers at `precision` decimals (NUMBER_FIXED; -1: exact, as above): --csv
 * with --precision. */
exit_status output_write_matrix_at(const output_format *format, const lesson *l,
                                   const trace *t, stage_id stage, int head, int precision,
                                   FILE *stream);

/* Records a failure (the first one is kept); every writer does nothing afterwards. */
void output_fail(output *o, exit_status status);

/* The trace a step at train_step k shows (train.h's train_cache_at over the lesson's train:):
 * t, the lesson's own, for 0. NULL after output_fail: training was checked when the lesson was
 * loaded, so only memory can run out here. output_write sets o->trace from it at each step. */
const trace *output_trained_trace(output *o, const trace *t, train_cache *cache, int k);

/* Trusted text (written by attnstep itself: names, formulas, punctuation, numbers). Lesson
 * text goes through output_text instead. */
void output_puts(output *o, const char *text);
void output_putc(output *o, char c);
void output_printf(output *o, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* x as number_write writes it in `style` at o->precision (NUMBER_EXACT ignores it). */
void output_number(output *o, double x, number_style style);

/* A table cell, NUMBER_FIXED at o->precision ("−∞" for hidden cells), as number_write. */
int output_cell_text(const output *o, double x, char *buffer, size_t size);

/* Writes untrusted text with its control characters escaped (text_escape). */
void output_text(output *o, const char *utf8);

/* The same, keeping its line breaks (text_escape_lines), for narration. */
void output_text_lines(output *o, const char *utf8);

/* The escaped copy of utf8 (line breaks kept when keep_lines), to be freed; NULL without
 * memory, which is then recorded in o->status. */
char *output_escaped(output *o, const char *utf8, bool keep_lines);

/* How a narrated format writes a step: its header line, its matrix (or the note that stands
 * for it when the step repeats the matrix of the step before), and its narration item. Any of
 * ask, say and focus may be NULL. */
typedef struct {
    /* number from 1; head 0 when the step has no head to name (a stage for all heads, or a
       one-head lesson); position the token being decoded (walk_step.position, WALK_WHOLE for
       none); rows × cols the part of the matrix the step shows (walk_step_rows, _cols) */
    void (*header)(output *o, int number, const char *formula, int head, int position, int rows,
                   int cols);
    void (*table)(output *o, const walk_step *step);  /* the rows and columns the step shows */
    void (*repeated)(output *o, int previous);  /* previous: the number of the step before */
    void (*ask)(output *o, const char *question, const char *answer);  /* predict, then reveal */
    void (*say)(output *o, const char *text);
    void (*focus)(output *o, const char *explanation);  /* the focused cell's arithmetic */
} output_narrator;

/* Writes "token 3 of 6 (sat)" for a step at position 2 of 6, the word through `word` (each
 * format's own escaping of lesson text). */
void output_token(output *o, int position, void (*word)(output *o, const char *utf8));

/* Writes the current step, o->step: the header (its formula from trace_stage_formula); the
 * table, or the note when walk_repeats_matrix says the matrix was just shown; then its
 * narration item (walk_step.narration; none when -1): its question with the choices and then
 * the answer, its text, and the worked arithmetic of its focused cell. */
void output_narrated_step(output *o, const walk_step *step, const output_narrator *narrator);

#endif
