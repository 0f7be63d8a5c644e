/* --plain: every step of the trace as a labelled text table, with the lesson's narration and
 * the worked arithmetic of the cells the narration focuses on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"
#include "text.h"

enum { PAGE_WIDTH = 78 };

static void pad(output *o, int columns)
{
    output_printf(o, "%*s", columns > 0 ? columns : 0, "");
}

/* Writes one line of text (no '\n') wrapped at PAGE_WIDTH, each line after `prefix` and
 * continuation lines after `more`. */
static void put_wrapped_line(output *o, const char *prefix, const char *more, char *line)
{
    int room = PAGE_WIDTH - text_width(prefix), used = 0;
    if (line[strspn(line, " \t")] == '\0') {  /* a blank line: the prefix without its blanks */
        size_t length = strlen(prefix);
        while (length > 0 && prefix[length - 1] == ' ')
            length--;
        output_printf(o, "%.*s\n", (int)length, prefix);
        return;
    }
    output_puts(o, prefix);
    char *rest;
    for (char *word = strtok_r(line, " \t", &rest); word; word = strtok_r(NULL, " \t", &rest)) {
        int width = text_width(word);
        if (used > 0 && used + 1 + width > room) {
            output_printf(o, "\n%s", more);
            used = 0;
        }
        output_printf(o, "%s%s", used ? " " : "", word);
        used += (used ? 1 : 0) + width;
    }
    output_putc(o, '\n');
}

/* Writes untrusted text escaped and wrapped, keeping the author's line breaks: the first line
 * after `prefix`, every other after `more`. */
static void put_wrapped(output *o, const char *prefix, const char *more, const char *utf8)
{
    char *escaped = output_escaped(o, utf8, true);
    if (!escaped)
        return;
    char *line = escaped;
    for (char *end; (end = strchr(line, '\n')) != NULL; line = end + 1, prefix = more) {
        *end = '\0';
        put_wrapped_line(o, prefix, more, line);
    }
    if (*line || line == escaped)
        put_wrapped_line(o, prefix, more, line);
    free(escaped);
}

static const char *mask_name(mask_kind mask)
{
    static const char *const names[] = {
        [MASK_NONE] = "none", [MASK_CAUSAL] = "causal", [MASK_EXPLICIT] = "explicit",
        [MASK_WINDOW] = "window",
    };
    return names[mask];
}

static void plain_begin(output *o)
{
    const trace *t = o->trace;
    output_text(o, o->lesson->title);
    output_putc(o, '\n');
    if (o->lesson->about)
        put_wrapped(o, "  ", "  ", o->lesson->about);
    output_puts(o, "tokens:");
    for (int i = 0; i < t->n; i++) {
        output_putc(o, ' ');
        output_text(o, t->in->tokens[i]);
    }
    if (t->in->source) {
        output_puts(o, "\nsource:");
        for (int i = 0; i < t->m; i++) {
            output_putc(o, ' ');
            output_text(o, t->in->source[i]);
        }
    }
    output_printf(o, "\nd_model %d, heads %d, d_k %d, mask %s, positional %s, %s\n",
            t->d_model, t->heads, t->d_k, mask_name(t->in->mask),
            trace_positional_word(trace_positional_kind(t->in)),
            trace_scaling_words(t));
}

static int column_width(output *o, const walk_step *step, int first_row, int end_row, int col)
{
    const trace *t = o->trace;
    char buffer[64];
    int width = text_width(trace_axis_label(t, stage_get(step->stage)->cols, col, buffer,
                                            sizeof buffer));
    for (int r = first_row; r < end_row; r++) {
        output_cell_text(o, trace_value(t, step->stage, step->head, r, col), buffer,
                         sizeof buffer);
        int w = text_width(buffer);
        width = w > width ? w : width;
    }
    return width;
}

/* The part of the step's matrix it shows (walk_step_rows, walk_step_cols): all of it, or at a
 * decoding step the rows and columns decoding computes for that token. */
static void put_table(output *o, const walk_step *step)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(step->stage);
    int first_row, end_row, first_col, end_col, label_width = 0;
    walk_step_rows(t, step, &first_row, &end_row);
    walk_step_cols(t, step, &first_col, &end_col);
    char buffer[64];
    for (int r = first_row; r < end_row; r++) {
        int w = text_width(trace_axis_label(t, info->rows, r, buffer, sizeof buffer));
        label_width = w > label_width ? w : label_width;
    }
    int *widths = malloc(sizeof *widths * (size_t)(end_col - first_col + 1));
    if (!widths) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    for (int c = first_col; c < end_col; c++)
        widths[c - first_col] = column_width(o, step, first_row, end_row, c);
    pad(o, label_width);
    for (int c = first_col; c < end_col; c++) {
        const char *label = trace_axis_label(t, info->cols, c, buffer, sizeof buffer);
        pad(o, 2 + widths[c - first_col] - text_width(label));
        output_text(o, label);
    }
    output_putc(o, '\n');
    for (int r = first_row; r < end_row; r++) {
        const char *label = trace_axis_label(t, info->rows, r, buffer, sizeof buffer);
        output_text(o, label);
        pad(o, label_width - text_width(label));
        for (int c = first_col; c < end_col; c++) {
            output_cell_text(o, trace_value(t, step->stage, step->head, r, c), buffer,
                             sizeof buffer);
            pad(o, 2 + widths[c - first_col] - text_width(buffer));
            output_puts(o, buffer);
        }
        output_putc(o, '\n');
    }
    free(widths);
}

static void ask_plain(output *o, const char *question, const char *answer)
{
    put_wrapped(o, "  ? ", "    ", question);
    put_wrapped(o, "  ! answer: ", "    ", answer);
}

static void say_plain(output *o, const char *text)
{
    put_wrapped(o, "  | ", "  | ", text);
}

static void focus_plain(output *o, const char *explanation)
{
    put_wrapped(o, "  = ", "      ", explanation);
}

static void repeated_plain(output *o, int previous)
{
    output_printf(o, "  (the matrix of step %d again)\n", previous);
}

static void header_plain(output *o, int number, const char *formula, int head, int position,
                         int rows, int cols)
{
    output_printf(o, "\n[%d/%d] %s", number, o->walk->count, formula);
    if (head)
        output_printf(o, "   head %d of %d", head, o->trace->heads);
    if (position != WALK_WHOLE) {
        output_puts(o, "   ");
        output_token(o, position, output_text);
    }
    output_printf(o, "   %d×%d\n", rows, cols);
}

static void plain_step(output *o, const walk_step *step)
{
    static const output_narrator narrator = {
        header_plain, put_table, repeated_plain, ask_plain, say_plain, focus_plain,
    };
    output_narrated_step(o, step, &narrator);
}

static void plain_end(output *o)
{
    (void)o;
}

const output_format output_plain = { plain_begin, plain_step, plain_end, true };
