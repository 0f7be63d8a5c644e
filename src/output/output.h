/* The text readers of a trace: plain tables, JSON (and whatever else implements output_format).
 * Each walks the same step list (trace_step_at) and writes to a stream. */
#ifndef ATTNSTEP_OUTPUT_H
#define ATTNSTEP_OUTPUT_H

#include <stdio.h>
#include "trace.h"
#include "lesson.h"

typedef struct output output;

/* What a format does at the start, for each step (one stage, one head) and at the end. */
typedef struct {
    void (*begin)(output *o);
    void (*step)(output *o, stage_id stage, int head);
    void (*end)(output *o);
} output_format;

struct output {
    const lesson *lesson;
    const trace *trace;
    int precision;     /* decimals in tables and explanations */
    FILE *stream;
    int step;          /* index of the current step, from 0 */
    stage_id only_stage;  /* for formats of one matrix (CSV): the stage wanted */
    int only_head;        /* and its head */
};

extern const output_format output_plain;  /* labelled text tables with the narration */
extern const output_format output_json;   /* every intermediate, bit-exact (see README) */
extern const output_format output_markdown;  /* a handout: narration, tables, worked cells */
extern const output_format output_csv;    /* one matrix (only_stage, only_head), bit-exact */

/* Writes the whole trace in a format. Returns 0, or -1 when the stream reported an error. */
int output_write(const output_format *format, const lesson *l, const trace *t, int precision,
                 FILE *stream);

/* The same for a one-matrix format: only that stage and head are visited. */
int output_write_matrix(const output_format *format, const lesson *l, const trace *t,
                        stage_id stage, int head, FILE *stream);

/* A table cell at o->precision fixed decimals ("−∞" for hidden cells), as snprintf. */
int output_cell_text(const output *o, double x, char *buffer, size_t size);

/* How a format writes the narration of one lesson step. Any member may be NULL. */
typedef struct {
    void (*ask)(output *o, const char *question, const char *answer);  /* predict, then reveal */
    void (*say)(output *o, const char *text);
    void (*focus)(output *o, const char *explanation);  /* the focused cell's arithmetic */
} output_narrator;

/* Narrates each lesson step that belongs to this stage and head (a step without a head belongs
 * to head 1), in the lesson's order: its question with the choices and then the answer, its
 * text, and the worked arithmetic of its focused cell. */
void output_narration(output *o, stage_id stage, int head, const output_narrator *narrator);

/* Writes untrusted text with its control characters escaped (text_escape). */
void output_text(output *o, const char *utf8);

/* The same, keeping its line breaks (text_escape_lines), for narration. */
void output_text_lines(output *o, const char *utf8);

/* The escaped copy of utf8 (line breaks kept when keep_lines), to be freed; NULL without
 * memory. */
char *output_escaped(const char *utf8, bool keep_lines);

#endif
