/* --markdown: a handout for slides and worksheets — the narration, every step as a Markdown
 * table, and the worked arithmetic of the cells the narration focuses on. */
#include <stdlib.h>
#include <string.h>
#include "output.h"

/* Untrusted text inside a table cell: escaped like any lesson text, then each '|' of the
 * escaped text written as "\|", since a bare one would end the cell. */
static void put_cell_text(output *o, const char *utf8)
{
    char *escaped = output_escaped(o, utf8, false);
    if (!escaped)
        return;
    const char *piece = escaped;
    for (const char *bar; (bar = strchr(piece, '|')) != NULL; piece = bar + 1)
        output_printf(o, "%.*s\\|", (int)(bar - piece), piece);
    output_puts(o, piece);
    free(escaped);
}

static void markdown_begin(output *o)
{
    const trace *t = o->trace;
    output_puts(o, "# ");
    output_text(o, o->lesson->title);
    output_puts(o, "\n\n");
    if (o->lesson->about) {
        output_text(o, o->lesson->about);
        output_puts(o, "\n\n");
    }
    output_puts(o, "Tokens:");
    for (int i = 0; i < t->n; i++) {
        output_puts(o, " `");
        output_text(o, t->in->tokens[i]);
        output_puts(o, "`");
    }
    output_printf(o, "  \nd_model %d, %d head%s, d_k %d.\n", t->d_model, t->heads,
                  t->heads == 1 ? "" : "s", t->d_k);
}

static void put_row(output *o, const char *label, stage_id stage, int head, int row)
{
    output_puts(o, "| ");
    put_cell_text(o, label);
    for (int c = 0; c < trace_cols(o->trace, stage); c++) {
        output_puts(o, " | ");
        output_number(o, trace_value(o->trace, stage, head, row, c), NUMBER_FIXED);
    }
    output_puts(o, " |\n");
}

static void put_table(output *o, stage_id stage, int head)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(stage);
    char buffer[32];
    output_puts(o, "|");
    for (int c = 0; c < trace_cols(t, stage); c++) {
        output_puts(o, " | ");
        put_cell_text(o, trace_axis_label(t, info->cols, c, buffer, sizeof buffer));
    }
    output_puts(o, " |\n|---|");
    for (int c = 0; c < trace_cols(t, stage); c++)
        output_puts(o, "---:|");
    output_putc(o, '\n');
    for (int r = 0; r < trace_rows(t, stage); r++)
        put_row(o, trace_axis_label(t, info->rows, r, buffer, sizeof buffer), stage, head, r);
}

static void ask_markdown(output *o, const char *question, const char *answer)
{
    output_puts(o, "\n**Question:** ");
    output_text(o, question);
    output_puts(o, "  \n**Answer:** ");
    output_text(o, answer);
    output_putc(o, '\n');
}

static void say_markdown(output *o, const char *text)
{
    output_putc(o, '\n');
    output_text_lines(o, text);
    output_putc(o, '\n');
}

static void focus_markdown(output *o, const char *explanation)
{
    output_puts(o, "\n    ");
    output_text(o, explanation);
    output_putc(o, '\n');
}

static void repeated_markdown(output *o, int previous)
{
    output_printf(o, "*The matrix of step %d again.*\n", previous);
}

static void header_markdown(output *o, int number, const char *formula, int head, int rows,
                            int cols)
{
    output_printf(o, "\n## %d. %s", number, formula);
    if (head)
        output_printf(o, " (head %d)", head);
    output_printf(o, " — %d×%d\n\n", rows, cols);
}

static void markdown_step(output *o, const walk_step *step)
{
    static const output_narrator narrator = {
        header_markdown, put_table, repeated_markdown, ask_markdown, say_markdown,
        focus_markdown,
    };
    output_narrated_step(o, step, &narrator);
}

static void markdown_end(output *o)
{
    (void)o;
}

const output_format output_markdown = { markdown_begin, markdown_step, markdown_end, true };
