/* --csv STAGE: one matrix as RFC 4180 CSV, labels in the first row and column, numbers with
 * 17 significant digits (bit-exact), "-inf" for hidden cells of masked. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "output.h"

/* A field is quoted when it holds a comma, a quote or a line break; quotes are doubled. */
static void put_field(output *o, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, o->stream);
        return;
    }
    fputc('"', o->stream);
    for (; *text; text++) {
        if (*text == '"')
            fputc('"', o->stream);
        fputc(*text, o->stream);
    }
    fputc('"', o->stream);
}

static void csv_begin(output *o)
{
    (void)o;
}

static void csv_step(output *o, stage_id stage, int head)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(stage);
    char buffer[32];
    fputs(info->name, o->stream);
    for (int c = 0; c < trace_cols(t, stage); c++) {
        fputc(',', o->stream);
        put_field(o, trace_axis_label(t, info->cols, c, buffer, sizeof buffer));
    }
    fputs("\r\n", o->stream);
    for (int r = 0; r < trace_rows(t, stage); r++) {
        put_field(o, trace_axis_label(t, info->rows, r, buffer, sizeof buffer));
        for (int c = 0; c < trace_cols(t, stage); c++) {
            double x = trace_value(t, stage, head, r, c);
            if (isinf(x))
                fprintf(o->stream, ",%s", x < 0 ? "-inf" : "inf");
            else
                fprintf(o->stream, ",%.17g", x);
        }
        fputs("\r\n", o->stream);
    }
}

static void csv_end(output *o)
{
    (void)o;
}

const output_format output_csv = { csv_begin, csv_step, csv_end };
