/* --csv STAGE: one matrix as RFC 4180 CSV, labels in the first row and column, numbers with
 * 17 significant digits (bit-exact) or, with --precision, at that many decimals; "-inf" for
 * hidden cells of masked. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"

/* A cell a spreadsheet would read as a formula: one that starts with = + - @, tab or CR
 * (OWASP's advice on CSV injection) and is not a number, such as a token "-1". */
static bool formula_like(const char *text)
{
    if (!strchr("=+-@\t\r", text[0]) || text[0] == '\0')
        return false;
    char *end;
    strtod(text, &end);
    return end == text || *end != '\0';
}

/* A label: escaped like any lesson text, prefixed with ' when a spreadsheet would take it for
 * a formula, then quoted when it holds a comma, a quote or a line break, its quotes doubled. */
static void put_field(output *o, const char *utf8)
{
    char *text = output_escaped(o, utf8, false);
    if (!text)
        return;
    bool quoted = strpbrk(text, ",\"\r\n") != NULL;
    if (quoted)
        output_putc(o, '"');
    if (formula_like(text))
        output_putc(o, '\'');
    for (const char *c = text; *c; c++)
        output_puts(o, *c == '"' ? "\"\"" : (char[]){ *c, '\0' });
    if (quoted)
        output_putc(o, '"');
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
            double x = trace_value(t, step->stage, step->head, r, c);
            /* hidden cells stay "-inf" at any precision */
            output_number(o, x, o->precision < 0 || !isfinite(x) ? NUMBER_EXACT : NUMBER_FIXED);
        }
        output_puts(o, "\r\n");
    }
}

static void csv_end(output *o)
{
    (void)o;
}

const output_format output_csv = { csv_begin, csv_step, csv_end, false };
