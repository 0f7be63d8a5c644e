/* The text readers of a trace: plain tables, JSON (and whatever else implements output_format).
 * Each walks the same step list (trace_step_at) and writes to a stream. */
#ifndef ATTNSTEP_OUTPUT_H
#define ATTNSTEP_OUTPUT_H

#include <stdio.h>
#include "attention.h"
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
};

extern const output_format output_plain;  /* labelled text tables with the narration */
extern const output_format output_json;   /* every intermediate, bit-exact (see README) */

/* Writes the whole trace in a format. Returns 0, or -1 when the stream reported an error. */
int output_write(const output_format *format, const lesson *l, const trace *t, int precision,
                 FILE *stream);

/* Writes untrusted text with its control characters escaped (text_escape). */
void output_text(output *o, const char *utf8);

#endif
