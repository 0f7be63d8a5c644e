/* --reader: a line-oriented lesson for screen readers and braille displays, on the UI's view
 * model (ui_view) and narration (ui_narration), with no curses and no cursor movement. */
#include "ui_reader.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "heat.h"
#include "text.h"
#include "ui_narration.h"
#include "ui_view.h"

typedef struct {
    ui_view v;
    FILE *out;
    int precision;
    trace_cell cell;      /* the cell `why` explains: the last one named, else the selection */
    bool failed;          /* out of memory */
} reader;

/* Writes one line (or, for narration, lines), every byte escaped (text_write_escaped keeps
 * only the line breaks), ending with a newline. */
static void say(reader *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void say(reader *r, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (!text) {
        r->failed = true;
        return;
    }
    va_start(args, format);
    vsnprintf(text, (size_t)length + 1, format, args);
    va_end(args);
    text_write_escaped(r->out, text, true);
    fputc('\n', r->out);
    free(text);
}

static number_format cell_format(const reader *r)
{
    return (number_format){ NUMBER_FIXED, r->precision, 0, false };
}

/* "1 row by 6 columns" */
static void shape_words(int rows, int cols, char *text, size_t size)
{
    snprintf(text, size, "%d row%s by %d column%s", rows, rows == 1 ? "" : "s", cols,
             cols == 1 ? "" : "s");
}

/* The matrix a step shows, by name: "weights, head 2" (the head only where there are several). */
static void matrix_name(const reader *r, stage_id stage, int head, char *text, size_t size)
{
    bool named = stage_get(stage)->per_head && r->v.t->heads > 1;
    snprintf(text, size, "%s%s", stage_get(stage)->name, named ? ", head " : "");
    if (named)
        snprintf(text + strlen(text), size - strlen(text), "%d", head);
}

/* Whether a matrix's numbers would answer the question waiting (the UI's rule: its own stage
 * and head, and every matrix after its stage). */
static bool withheld(const reader *r, stage_id stage, int head)
{
    int shown = walk_find(&r->v.pipeline, stage, head);
    return shown >= 0 && ui_view_passes_waiting(&r->v, true, shown);
}

static bool refuse_withheld(reader *r, stage_id stage, int head)
{
    if (!withheld(r, stage, head))
        return false;
    say(r, "The numbers of %s wait for the answer to the question at step %d: answer it there, "
        "or skip it.", stage_get(stage)->name, ui_view_waiting(&r->v) + 1);
    return true;
}

/* The part of a matrix to read: the current step's rows and columns when it is the matrix on
 * screen, else all of it. */
static void extent(const reader *r, stage_id stage, int head, int *rows, int *cols)
{
    const walk_step *s = ui_view_current(&r->v);
    bool here = s->stage == stage && s->head == head;
    rows[0] = here ? ui_view_first_row(&r->v) : 0;
    rows[1] = here ? rows[0] + ui_view_rows(&r->v) : trace_rows(r->v.t, stage);
    cols[0] = here ? ui_view_first_col(&r->v) : 0;
    cols[1] = here ? cols[0] + ui_view_cols(&r->v) : trace_cols(r->v.t, stage);
}

/* Whether a cell counts among its row's numbers: finite and not masked. */
static bool counts(const reader *r, stage_id stage, int head, int row, int col)
{
    return !heat_masked(r->v.t, stage, row, col) && isfinite(trace_value(r->v.t, stage, head, row, col));
}

/* A cell's value as read: its number, or that the mask hides it. */
static void value_words(const reader *r, stage_id stage, int head, int row, int col, char *text,
                        size_t size)
{
    double x = trace_value(r->v.t, stage, head, row, col);
    number_format f = cell_format(r);
    if (heat_masked(r->v.t, stage, row, col))
        snprintf(text, size, "masked (%s)", stage_get(stage)->flags & STAGE_HIDES ? "minus infinity" : "0");
    else
        number_write(x, &f, text, size);
}

/* ", the largest in bank's row" when the cell is its row's largest (or smallest) of several. */
static void row_rank(const reader *r, stage_id stage, int head, int row, int col, char *text,
                     size_t size)
{
    int rows[2], cols[2], n = 0;
    extent(r, stage, head, rows, cols);
    double x = trace_value(r->v.t, stage, head, row, col), lo = INFINITY, hi = -INFINITY;
    for (int c = cols[0]; c < cols[1]; c++) {
        if (!counts(r, stage, head, row, c)) continue;
        double y = trace_value(r->v.t, stage, head, row, c);
        lo = fmin(lo, y);
        hi = fmax(hi, y);
        n++;
    }
    char name[64];
    const char *label = trace_axis_name(r->v.t, stage_get(stage)->rows, row, name, sizeof name);
    text[0] = '\0';
    if (n < 2 || !counts(r, stage, head, row, col) || lo == hi) return;
    if (x == hi) snprintf(text, size, ", the largest in %s's row", label);
    else if (x == lo) snprintf(text, size, ", the smallest in %s's row", label);
}

/* "weights, head 1, row bank, column river: 0.6488, the largest in bank's row" */
static void say_cell(reader *r, const trace_cell *c)
{
    const stage_info *info = stage_get(c->stage);
    char matrix[64], rb[64], cb[64], value[NUMBER_MAX + 32], rank[128];
    matrix_name(r, c->stage, c->head, matrix, sizeof matrix);
    value_words(r, c->stage, c->head, c->row, c->col, value, sizeof value);
    row_rank(r, c->stage, c->head, c->row, c->col, rank, sizeof rank);
    say(r, "%s, row %s, column %s: %s%s", matrix,
        trace_axis_name(r->v.t, info->rows, c->row, rb, sizeof rb),
        trace_axis_name(r->v.t, info->cols, c->col, cb, sizeof cb), value, rank);
}

/* One row or column as a line: "weights, head 1, row bank: The 0.0878, …, river 0.6488". */
static void say_line_of(reader *r, stage_id stage, int head, bool is_row, int at)
{
    int rows[2], cols[2];
    extent(r, stage, head, rows, cols);
    const stage_info *info = stage_get(stage);
    int *along = is_row ? cols : rows;
    size_t size = 96 + (size_t)(along[1] - along[0]) * (NUMBER_MAX + 96), used;
    char *text = malloc(size), matrix[64], name[64];
    if (!text) {
        r->failed = true;
        return;
    }
    matrix_name(r, stage, head, matrix, sizeof matrix);
    used = (size_t)snprintf(text, size, "%s, %s %s:", matrix, is_row ? "row" : "column",
                            trace_axis_name(r->v.t, is_row ? info->rows : info->cols, at, name,
                                            sizeof name));
    for (int i = along[0]; i < along[1] && used < size; i++) {
        char value[NUMBER_MAX + 32];
        value_words(r, stage, head, is_row ? at : i, is_row ? i : at, value, sizeof value);
        used += (size_t)snprintf(text + used, size - used, "%s %s %s", i > along[0] ? "," : "",
                                 trace_axis_name(r->v.t, is_row ? info->cols : info->rows, i,
                                                 name, sizeof name), value);
    }
    say(r, "%s", text);
    free(text);
}

/* The matrix on screen: its shape, largest and smallest cell, then row by row. */
static void read_matrix(reader *r)
{
    const walk_step *s = ui_view_current(&r->v);
    if (refuse_withheld(r, s->stage, s->head)) return;
    int rows[2], cols[2];
    extent(r, s->stage, s->head, rows, cols);
    trace_cell lo = { s->stage, s->head, -1, -1 }, hi = lo;
    for (int i = rows[0]; i < rows[1]; i++)
        for (int j = cols[0]; j < cols[1]; j++) {
            if (!counts(r, s->stage, s->head, i, j)) continue;
            double x = trace_value(r->v.t, s->stage, s->head, i, j);
            if (hi.row < 0 || x > trace_value(r->v.t, s->stage, s->head, hi.row, hi.col)) { hi.row = i; hi.col = j; }
            if (lo.row < 0 || x < trace_value(r->v.t, s->stage, s->head, lo.row, lo.col)) { lo.row = i; lo.col = j; }
        }
    char matrix[64], shape[64];
    matrix_name(r, s->stage, s->head, matrix, sizeof matrix);
    shape_words(rows[1] - rows[0], cols[1] - cols[0], shape, sizeof shape);
    say(r, "%s: %s.", matrix, shape);
    if (hi.row >= 0) {
        fputs("Largest: ", r->out);
        say_cell(r, &hi);
        fputs("Smallest: ", r->out);
        say_cell(r, &lo);
    }
    for (int i = rows[0]; i < rows[1]; i++)
        say_line_of(r, s->stage, s->head, true, i);
}

/* Where the view is, then its narration (or its question), as the lesson screen shows them. */
static void announce(reader *r)
{
    const ui_view *v = &r->v;
    const walk_step *s = ui_view_current(v);
    char formula[256], head[32] = "", token[128] = "";
    trace_stage_formula(v->t, s->stage, formula, sizeof formula);
    if (stage_get(s->stage)->per_head && v->t->heads > 1)
        snprintf(head, sizeof head, ", head %d", s->head);
    if (s->position != WALK_WHOLE)
        snprintf(token, sizeof token, ", token %d of %d (%s)", s->position + 1, v->t->n,
                 v->t->in->tokens[s->position]);
    char shape[64];
    shape_words(ui_view_rows(v), ui_view_cols(v), shape, sizeof shape);
    if (v->off_script)
        say(r, "Off the script: %s%s%s, %s.", formula, head, token, shape);
    else
        say(r, "Step %d of %d: %s%s%s, %s.", v->step + 1, v->walk.count, formula, head, token,
            shape);
    number_format f = { NUMBER_SHORT, r->precision, 0, false };
    char narration[16384];
    ui_narration_text(v, &f, ">", "", narration, sizeof narration);
    size_t n = strlen(narration);
    while (n && (narration[n - 1] == '\n' || narration[n - 1] == ' ')) narration[--n] = '\0';
    say(r, "%s", narration);
    if (ui_view_question_open(v))
        say(r, "%s", ui_view_here(v)->n_choices > 0
                         ? "Answer with: answer and a choice's number or name; skip shows the answer."
                         : "Answer with: answer and a number; skip shows the answer.");
    r->cell = (trace_cell){ s->stage, s->head, v->row, v->col };
}

/* The view's remark about the last command ("this is the last step"), if it made one. */
static bool remark(reader *r)
{
    if (!r->v.message[0]) return false;
    char *esc = strstr(r->v.message, "(Esc skips it)");   /* the key is the UI's: here, skip */
    if (esc) snprintf(esc, sizeof r->v.message - (size_t)(esc - r->v.message), "or skip it");
    say(r, "%s.", r->v.message);
    r->v.message[0] = '\0';
    return true;
}

static void say_score(reader *r)
{
    int right, asked, questions;
    ui_view_score(&r->v, &right, &asked, &questions);
    say(r, "Score: %d of %d answered right; %d question%s in the lesson, %d skipped.", right,
        asked, questions, questions == 1 ? "" : "s", ui_view_skipped(&r->v));
}

/* Applies a movement and says where it led (or why it did not move). */
static void move(reader *r, ui_action action, int arg)
{
    int step = r->v.step, shown = r->v.shown;
    bool off = r->v.off_script;
    ui_view_outcome outcome = ui_view_apply(&r->v, action, arg);
    if (outcome == UI_VIEW_SCORE) {
        say(r, "That was the last step.");
        say_score(r);
        return;
    }
    bool moved = step != r->v.step || shown != r->v.shown || off != r->v.off_script;
    remark(r);
    if (moved) announce(r);
}

/* `step N`: held by the question waiting, as the UI's keys are. */
static void go_step(reader *r, const char *arg)
{
    char *end;
    long n = strtol(arg, &end, 10);
    if (end == arg || *end || n < 1 || n > r->v.walk.count) {
        say(r, "No step %s: the lesson has steps 1 to %d.", arg, r->v.walk.count);
        return;
    }
    if (ui_view_passes_waiting(&r->v, false, (int)n - 1)) {
        say(r, "Step %d asks first: answer it there, or skip it.", ui_view_waiting(&r->v) + 1);
        return;
    }
    ui_view_goto(&r->v, (int)n - 1);
    announce(r);
}

static void go_head(reader *r, const char *arg)
{
    char *end;
    long h = strtol(arg, &end, 10);
    if (end == arg || *end || h < 1 || h > r->v.t->heads) {
        say(r, "No head %s: this lesson has head%s 1%s%d.", arg, r->v.t->heads > 1 ? "s" : "",
            r->v.t->heads > 1 ? " to " : "", r->v.t->heads > 1 ? r->v.t->heads : 1);
        return;
    }
    if (!stage_get(ui_view_current(&r->v)->stage)->per_head) {
        say(r, "%s is one matrix for every head.", stage_get(ui_view_current(&r->v)->stage)->name);
        return;
    }
    move(r, UI_ACT_HEAD_NUMBER, (int)h - 1);
}

/* A cell named as --explain names one, at the current head unless the name says. */
static bool parse_cell(reader *r, const char *spec, trace_cell *cell)
{
    char error[512];
    if (trace_cell_parse(r->v.t, spec, ui_view_current(&r->v)->head, cell, error, sizeof error))
        return true;
    say(r, "%s", error);
    return false;
}

static void name_cell(reader *r, const char *spec)
{
    trace_cell c;
    if (!parse_cell(r, spec, &c) || refuse_withheld(r, c.stage, c.head)) return;
    const walk_step *s = ui_view_current(&r->v);
    if (c.stage == s->stage && c.head == s->head) {   /* the selection, as a click selects */
        r->v.row = c.row;
        r->v.col = c.col;
    }
    r->cell = c;
    say_cell(r, &c);
}

/* `row TOKEN`, `col TOKEN`: a line of the matrix on screen, named as a cell's row or column. */
static void read_line(reader *r, const char *token, bool is_row)
{
    const walk_step *s = ui_view_current(&r->v);
    if (refuse_withheld(r, s->stage, s->head)) return;
    size_t size = strlen(token) + 64;
    char *spec = malloc(size);
    if (!spec) { r->failed = true; return; }
    snprintf(spec, size, is_row ? "%s[%s,0]" : "%s[0,%s]", stage_get(s->stage)->name, token);
    trace_cell c;
    if (parse_cell(r, spec, &c)) say_line_of(r, s->stage, s->head, is_row, is_row ? c.row : c.col);
    free(spec);
}

static void why(reader *r)
{
    const trace_cell *c = &r->cell;
    if (refuse_withheld(r, c->stage, c->head)) return;
    int length = trace_cell_explain(r->v.t, c, r->precision, NULL, 0);
    char *text = malloc((size_t)length + 1);
    if (!text) { r->failed = true; return; }
    trace_cell_explain(r->v.t, c, r->precision, text, (size_t)length + 1);
    say(r, "%s", text);
    free(text);
}

/* `answer X`: a choice by its number or its words, or a number typed as the UI's keys type it
 * (the view's own checks and grading). */
static void answer(reader *r, const char *given)
{
    ui_view *v = &r->v;
    if (!ui_view_question_open(v)) {
        say(r, "No question is open here.");
        return;
    }
    const lesson_step *q = ui_view_here(v);
    if (q->n_choices > 0) {
        char *end;
        long n = strtol(given, &end, 10);
        int choice = end != given && !*end ? (int)n - 1 : -1;
        for (int i = 0; i < q->n_choices && choice < 0; i++)
            if (strcasecmp(given, q->choices[i]) == 0) choice = i;
        if (choice < 0 && (end == given || *end)) {
            say(r, "%s is not one of the choices: answer with 1 to %d, or a choice as written.",
                given, q->n_choices);
            return;
        }
        ui_view_apply(v, UI_ACT_CHOOSE, choice);
    } else {
        if (given[strspn(given, UI_TYPED_CHARS)] != '\0') {
            say(r, "%s is not a number: answer with digits, a decimal point and a minus sign.",
                given);
            return;
        }
        while (v->typed[0]) ui_view_apply(v, UI_ACT_ERASE, 0);
        for (const char *c = given; *c && !v->message[0]; c++)
            ui_view_apply(v, UI_ACT_TYPE, (int)(strchr(UI_TYPED_CHARS, *c) - UI_TYPED_CHARS));
        if (!v->message[0]) ui_view_apply(v, UI_ACT_ANSWER, 0);
        char said[sizeof v->message];
        memcpy(said, v->message, sizeof said);
        while (v->typed[0]) ui_view_apply(v, UI_ACT_ERASE, 0);   /* a refused number is dropped */
        memcpy(v->message, said, sizeof said);
    }
    if (!remark(r)) announce(r);
}

static void help(reader *r)
{
    static const char *const lines[] = {
        "Commands, one a line:",
        "next, prev: the next or previous step. step N: step N.",
        "head H: the same stage at head H.",
        "read: the matrix, its shape and largest cell first, then row by row.",
        "row TOKEN, col TOKEN: one row or column of the matrix.",
        "cell NAME: one cell, such as cell weights[bank,river].",
        "why: the arithmetic of the last cell named, or of the step's cell.",
        "answer X: answer the open question (a choice's number or name, or a number). skip: show its answer.",
        "say: the narration again. help: these lines. quit: the score, and leave.",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) say(r, "%s", lines[i]);
}

/* Runs one command line; false for quit. */
static bool command(reader *r, char *line)
{
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(line);
    while (n && strchr(" \t\r\n", line[n - 1])) line[--n] = '\0';
    char *arg = line + strcspn(line, " \t");
    if (*arg) *arg++ = '\0';
    while (*arg == ' ' || *arg == '\t') arg++;
    if (!*line) return true;
    bool bare = !*arg;
    if (strcmp(line, "quit") == 0 && bare) { say_score(r); return false; }
    if ((strcmp(line, "next") == 0 || strcmp(line, "n") == 0) && bare) move(r, UI_ACT_NEXT, 0);
    else if ((strcmp(line, "prev") == 0 || strcmp(line, "p") == 0) && bare) move(r, UI_ACT_PREV, 0);
    else if (strcmp(line, "step") == 0 && !bare) go_step(r, arg);
    else if (strcmp(line, "head") == 0 && !bare) go_head(r, arg);
    else if (strcmp(line, "cell") == 0 && !bare) name_cell(r, arg);
    else if (strcmp(line, "row") == 0 && !bare) read_line(r, arg, true);
    else if ((strcmp(line, "col") == 0 || strcmp(line, "column") == 0) && !bare) read_line(r, arg, false);
    else if (strcmp(line, "read") == 0 && bare) read_matrix(r);
    else if (strcmp(line, "why") == 0 && bare) why(r);
    else if (strcmp(line, "answer") == 0 && !bare) answer(r, arg);
    else if (strcmp(line, "skip") == 0 && bare) { ui_view_apply(&r->v, UI_ACT_SKIP, 0); announce(r); }
    else if (strcmp(line, "say") == 0 && bare) announce(r);
    else if (strcmp(line, "help") == 0 && bare) help(r);
    else if (bare && strstr(" step head cell row col column answer ", line) && strlen(line) > 2)
        say(r, "%s needs a word after it: help lists the commands.", line);
    else say(r, "Unknown command %s%s%s: help lists them.", line, bare ? "" : " ", arg);
    return true;
}

exit_status ui_reader_run(const lesson *l, const trace *t, int precision, FILE *in, FILE *out,
                          const char *prompt)
{
    reader r = { .out = out, .precision = precision };
    if (!ui_view_init(&r.v, t, l)) return EXIT_STATUS_SOFTWARE;
    say(&r, "%s. %d steps; help lists the commands.", l->title, r.v.walk.count);
    announce(&r);
    char *line = NULL;
    size_t capacity = 0;
    for (bool going = true; going && !r.failed;) {
        if (prompt) { fputs(prompt, out); fflush(out); }
        if (getline(&line, &capacity, in) < 0) { say_score(&r); break; }
        going = command(&r, line);
        fflush(out);
    }
    free(line);
    ui_view_free(&r.v);
    return r.failed ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_OK;
}
