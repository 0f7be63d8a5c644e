/* The sum pane: the selected cell's arithmetic with every term (trace_cell_explain_full), one
 * term a line in a box over the lesson, scrolled with the move keys; any other key closes it.
 * The same box shows any text of lines under a title (the classroom's results and roster). */
#include "ui_curses.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_screen.h"
#include "ui_util.h"

typedef struct {
    ui_scroller box;             /* top: the first line shown; page: lines the last frame had */
    char *text;                  /* the whole text, cut into lines (at each " + " or '\n') */
    const char *title;           /* static: " every term " */
    const char **lines;          /* where each line starts in text */
    int count;                   /* lines */
} sum_screen;

static sum_screen *sum_of(ui_screen *s)
{
    return (sum_screen *)s;
}

/* Rows a line takes when wrapped to width, with at least one. */
static int rows_of(const char *line, int width, const ui_style *st)
{
    int rows = ui_lines_needed(line, width, st);
    return rows > 0 ? rows : 1;
}

/* The last first line: from it on, the remaining lines fill the room (or all of them fit). */
static int last_top(const sum_screen *p, int width, int room, const ui_style *st)
{
    int top = p->count, used = 0;
    while (top > 0 && used + rows_of(p->lines[top - 1], width, st) <= room)
        used += rows_of(p->lines[--top], width, st);
    return top < p->count ? top : p->count - 1;
}

static void draw(ui_screen *s, const ui_style *st)
{
    sum_screen *p = sum_of(s);
    int width = COLS - 2, inner = width - 4, needed = 0;
    for (int i = 0; i < p->count; i++) needed += rows_of(p->lines[i], inner, st);
    int height = ui_clamp(needed + 4, 5, LINES - 2), room = height - 4;
    int y0 = (LINES - height) / 2, x0 = (COLS - width) / 2, y = y0 + 1;
    p->box.top = ui_clamp(p->box.top, 0, last_top(p, inner, room, st));
    ui_draw_box(y0, x0, height, width, st);
    ui_put(y0, x0 + 2, inner, p->title, st, A_BOLD, 0);
    int line = p->box.top;
    for (; line < p->count && y - y0 - 1 < room; line++) {
        int rows = ui_clamp(rows_of(p->lines[line], inner, st), 1, room - (y - y0 - 1));
        ui_put_wrapped(y, x0 + 2, inner, rows, p->lines[line], st, A_NORMAL);
        y += rows;
    }
    p->box.page = line - p->box.top > 0 ? line - p->box.top : 1;
    char footer[160], hint[96];
    ui_scroller_hint(st, hint, sizeof hint);
    snprintf(footer, sizeof footer, "lines %d–%d of %d · %s", p->box.top + 1, line, p->count, hint);
    ui_put(y0 + height - 2, x0 + 2, inner, footer, st, A_DIM, 0);
}

static void close_screen(ui_screen *s)
{
    sum_screen *p = sum_of(s);
    free(p->lines);
    free(p->text);
    free(p);
}

/* Down and up move a line, next and previous a page; Ctrl-L redraws; any other key or a click
 * closes the pane (ui_scroller.c). */
static const ui_screen_ops sum_ops = {
    .overlay = true, .draw = draw, .key = ui_scroller_key, .click = ui_scroller_click,
    .context = ui_screen_context_beneath, .key_kind = ui_scroller_key_kind, .close = close_screen,
};

/* Whether the separator at `at` is inside a bracket with no bracket of its own, as in
 * "√(var + eps)": such a sum is one term, where "(exp(…) (= 1.0) + exp(…) …)", a sum whose
 * terms have brackets, is cut term by term. */
static bool in_plain_brackets(const char *text, const char *at)
{
    const char *before = at, *after = at;
    while (before > text && before[-1] != '(' && before[-1] != ')') before--;
    while (*after && *after != '(' && *after != ')') after++;
    return before > text && before[-1] == '(' && *after == ')';
}

/* The next separator from `at`, or NULL; with `terms` one in plain brackets does not count. */
static char *next_separator(const char *text, char *at, const char *separator, bool terms)
{
    for (; (at = strstr(at, separator)) != NULL; at += strlen(separator))
        if (!terms || !in_plain_brackets(text, at)) return at;
    return NULL;
}

/* Cuts p->text at every separator (a line begins after its first byte: " + " keeps the term's
 * "+", "\n" is dropped), recording where each line starts. */
static bool cut_lines(sum_screen *p, const char *separator, bool terms)
{
    size_t step = strlen(separator);
    int count = 1;
    for (char *at = p->text; (at = next_separator(p->text, at, separator, terms)) != NULL;
         at += step)
        count++;
    p->lines = malloc((size_t)count * sizeof *p->lines);
    if (!p->lines) return false;
    p->lines[p->count++] = p->text;
    for (char *at = p->text; (at = next_separator(p->text, at, separator, terms)) != NULL;
         at += step) {
        *at = '\0';
        p->lines[p->count++] = at + 1;
    }
    return true;
}

/* A box of text with title, or NULL (text is freed) when out of memory. */
static ui_screen *box_of(char *text, const char *separator, const char *title, const char *kind)
{
    bool terms = strcmp(separator, " + ") == 0;   /* a sum's terms: a bracketed sum is one */
    sum_screen *p = text ? calloc(1, sizeof *p) : NULL;
    if (p) p->text = text;
    if (!p || !cut_lines(p, separator, terms)) {
        free(text);
        free(p);
        return NULL;
    }
    p->title = title;
    p->box.base.ops = &sum_ops;
    p->box.kind = kind;
    return &p->box.base;
}

ui_screen *ui_sum_screen_new(const ui_view *v, const ui_style *st)
{
    const walk_step *step = ui_view_current(v);
    trace_cell cell = {step->stage, step->head, v->row, v->col};
    int length = trace_cell_explain_full(v->t, &cell, st->precision, NULL, 0);
    char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (text) trace_cell_explain_full(v->t, &cell, st->precision, text, (size_t)length + 1);
    return box_of(text, " + ", " every term ", "sum-key");
}

ui_screen *ui_text_screen_new(const char *title, const char *text)
{
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') n--;   /* no empty last line */
    char *copy = malloc(n + 1);
    if (copy) { memcpy(copy, text, n); copy[n] = '\0'; }
    return box_of(copy, "\n", title, "text-key");
}
