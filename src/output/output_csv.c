/* --csv STAGE: one matrix as RFC 4180 CSV, labels in the first row and column, numbers with
 * 17 significant digits (bit-exact), "-inf" for hidden cells of masked. */
#include <stdlib.h>
#include <string.h>
#include "output.h"

/* A label: escaped like any lesson text, then quoted when it holds a comma, a quote or a line
 * break, its quotes doubled. */
static void put_field(output *o, const char *utf8)
{
    char *text = output_escaped(o, utf8, false);
    if (!text)
        return;
    if (!strpbrk(text, ",\"\r\n")) {
        output_puts(o, text);
    } else {
        output_putc(o, '"');
        for (const char *c = text; *c; c++)
            output_puts(o, *c == '"' ? "\"\"" : (char[]){ *c, '\0' });
        output_putc(o, '"');
    }
    free(text);
}

static void csv_begin(output *o)
{
    (void)o;
}

static void csv_step(output *o, const walk_step *step)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(step->stage);
    char buffer[32];
    output_puts(o, info->name);
    for (int c = 0; c < trace_cols(t, step->stage); c++) {
        output_putc(o, ',');
        put_field(o, trace_axis_label(t, info->cols, c, buffer, sizeof buffer));
    }
    output_puts(o, "\r\n");
    for (int r = 0; r < trace_rows(t, step->stage); r++) {
        put_field(o, trace_axis_label(t, info->rows, r, buffer, sizeof buffer));
        for (int c = 0; c < trace_cols(t, step->stage); c++) {
            output_putc(o, ',');
            output_number(o, trace_value(t, step->stage, step->head, r, c), NUMBER_EXACT);
        }
        output_puts(o, "\r\n");
    }
}

static void csv_end(output *o)
{
    (void)o;
}

const output_format output_csv = { csv_begin, csv_step, csv_end, false };
