/* --markdown: a handout for slides and worksheets — the narration, every step as a Markdown
 * table, and the worked arithmetic of the cells the narration focuses on. */
#include <stdio.h>
#include <string.h>
#include "output.h"
#include "text.h"

/* Untrusted text inside a table cell: escaped, and '|' would end the cell. */
static void put_cell_text(output *o, const char *utf8)
{
    for (const char *bar; (bar = strchr(utf8, '|')) != NULL; utf8 = bar + 1) {
        char piece[256];
        snprintf(piece, sizeof piece, "%.*s", (int)(bar - utf8), utf8);
        output_text(o, piece);
        fputs("\\|", o->stream);
    }
    output_text(o, utf8);
}

static void markdown_begin(output *o)
{
    const trace *t = o->trace;
    fputs("# ", o->stream);
    output_text(o, o->lesson->title);
    fputs("\n\n", o->stream);
    if (o->lesson->about) {
        output_text(o, o->lesson->about);
        fputs("\n\n", o->stream);
    }
    fputs("Tokens:", o->stream);
    for (int i = 0; i < t->n; i++) {
        fputs(" `", o->stream);
        output_text(o, t->in->tokens[i]);
        fputs("`", o->stream);
    }
    fprintf(o->stream, "  \nd_model %d, %d head%s, d_k %d.\n", t->d_model, t->heads,
            t->heads == 1 ? "" : "s", t->d_k);
}

static void put_row(output *o, const char *label, stage_id stage, int head, int row)
{
    char buffer[64];
    fputs("| ", o->stream);
    put_cell_text(o, label);
    for (int c = 0; c < trace_cols(o->trace, stage); c++) {
        output_cell_text(o, trace_value(o->trace, stage, head, row, c), buffer, sizeof buffer);
        fprintf(o->stream, " | %s", buffer);
    }
    fputs(" |\n", o->stream);
}

static void ask_markdown(output *o, const char *question, const char *answer)
{
    fputs("\n**Question:** ", o->stream);
    output_text(o, question);
    fputs("  \n**Answer:** ", o->stream);
    output_text(o, answer);
    fputc('\n', o->stream);
}

static void say_markdown(output *o, const char *text)
{
    fputc('\n', o->stream);
    output_text_lines(o, text);
    fputc('\n', o->stream);
}

static void focus_markdown(output *o, const char *explanation)
{
    fputs("\n    ", o->stream);
    output_text(o, explanation);
    fputc('\n', o->stream);
}

static void markdown_step(output *o, stage_id stage, int head)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(stage);
    char buffer[32];
    fprintf(o->stream, "\n## %d. %s", o->step + 1, info->formula);
    if (info->per_head && t->heads > 1)
        fprintf(o->stream, " (head %d)", head);
    fprintf(o->stream, " — %d×%d\n\n|", trace_rows(t, stage), trace_cols(t, stage));
    for (int c = 0; c < trace_cols(t, stage); c++) {
        fputs(" | ", o->stream);
        put_cell_text(o, trace_axis_label(t, info->cols, c, buffer, sizeof buffer));
    }
    fputs(" |\n|---|", o->stream);
    for (int c = 0; c < trace_cols(t, stage); c++)
        fputs("---:|", o->stream);
    fputc('\n', o->stream);
    for (int r = 0; r < trace_rows(t, stage); r++)
        put_row(o, trace_axis_label(t, info->rows, r, buffer, sizeof buffer), stage, head, r);
    static const output_narrator narrator = { ask_markdown, say_markdown, focus_markdown };
    output_narration(o, stage, head, &narrator);
}

static void markdown_end(output *o)
{
    (void)o;
}

const output_format output_markdown = { markdown_begin, markdown_step, markdown_end };
