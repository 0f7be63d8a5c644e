/* --json: every intermediate of the trace, with numbers printed to read back bit-exact. */
#include <math.h>
#include <stdio.h>
#include "output.h"
#include "text.h"

/* A JSON string: quotes, backslashes and every control character escaped. */
static void put_string(output *o, const char *utf8)
{
    fputc('"', o->stream);
    for (const unsigned char *c = (const unsigned char *)utf8; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(o->stream, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(o->stream, "\\u%04x", *c);
        else
            fputc(*c, o->stream);
    }
    fputc('"', o->stream);
}

static void put_labels(output *o, const char *key, stage_axis axis, int count)
{
    char buffer[32];
    fprintf(o->stream, "\"%s\": [", key);
    for (int i = 0; i < count; i++) {
        fputs(i ? ", " : "", o->stream);
        put_string(o, trace_axis_label(o->trace, axis, i, buffer, sizeof buffer));
    }
    fputs("]", o->stream);
}

static void json_begin(output *o)
{
    const trace *t = o->trace;
    fputs("{\n  \"title\": ", o->stream);
    put_string(o, o->lesson->title);
    fputs(",\n  ", o->stream);
    put_labels(o, "tokens", AXIS_TOKENS, t->n);
    if (t->in->source) {
        fputs(",\n  ", o->stream);
        put_labels(o, "source", AXIS_SOURCE, t->m);
    }
    fprintf(o->stream, ",\n  \"d_model\": %d,\n  \"heads\": %d,\n  \"d_k\": %d,\n"
            "  \"stages\": [", t->d_model, t->heads, t->d_k);
}

/* %.17g reads back to the same double; -inf (hidden cells of masked) has no JSON number. */
static void put_number(output *o, double x)
{
    if (isfinite(x))
        fprintf(o->stream, "%.17g", x);
    else
        fputs("null", o->stream);
}

static void json_step(output *o, stage_id stage, int head)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(stage);
    int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
    fprintf(o->stream, "%s\n    {\"name\": \"%s\", \"head\": ", o->step ? "," : "", info->name);
    if (info->per_head)
        fprintf(o->stream, "%d", head);
    else
        fputs("null", o->stream);
    fputs(",\n     ", o->stream);
    put_labels(o, "rows", info->rows, rows);
    fputs(",\n     ", o->stream);
    put_labels(o, "cols", info->cols, cols);
    fputs(",\n     \"values\": [", o->stream);
    for (int r = 0; r < rows; r++) {
        fputs(r ? ",\n       [" : "[", o->stream);
        for (int c = 0; c < cols; c++) {
            fputs(c ? ", " : "", o->stream);
            put_number(o, trace_value(t, stage, head, r, c));
        }
        fputs("]", o->stream);
    }
    fputs("]}", o->stream);
}

static void json_end(output *o)
{
    fputs("\n  ]\n}\n", o->stream);
}

const output_format output_json = { json_begin, json_step, json_end };
