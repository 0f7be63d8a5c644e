/* The comparison screen (attnstep --compare A B, or C in a lesson): the same step of two lessons
 * in two panes that move together, the cells that differ marked, and a difference line. A is
 * always the first pane; either lesson may lead (x swaps), and both files are followed. */
#include "ui_curses.h"
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text.h"
#include "train.h"
#include "ui_display.h"
#include "ui_matrix.h"
#include "ui_screen.h"
#include "ui_text.h"
#include "ui_util.h"

/* Panes side by side from this many columns (two of 50, room for a 5×5 matrix at 4 decimals
 * with its labels), unless a matrix shows whole only stacked; narrower, they are stacked,
 * which needs this many rows for two matrices of a few rows each with the explanation, the
 * difference line and the narration. */
#define COMPARE_SIDE_COLS 100
#define COMPARE_STACK_ROWS 20

/* How the rows and columns of tokens pair up between the two lessons. */
typedef enum {
    TOKENS_SAME,        /* the same tokens in the same order */
    TOKENS_REORDERED,   /* the same tokens in another order: paired by token */
    TOKENS_BY_POSITION  /* other tokens: paired by position */
} token_match;

typedef struct {
    ui_opened *o;
    ui_view v;
    ui_matrix_grid grid;
    ui_file_stamp seen;          /* the lesson's file when last looked at */
    int letter;                  /* 0: A (the first lesson, the first pane), 1: B */
    bool absent;                 /* the follower lacks the leader's stage or head */
    int *by_token[2];            /* the other lesson's index of each query token [0] and key
                                    token [1], -1 where it has none */
    int train_step;              /* --train-step: the weights after this many updates of the
                                    lesson's training are shown (0: the lesson's own) */
    train_cache *trained;        /* their trace, when train_step > 0 (its own memory: x swaps
                                    sides by value) */
} side;

typedef struct {
    ui_screen base;
    side s[2];                   /* s[0] leads (keys move it); s[1] follows it; x swaps them */
    token_match match;
    ui_display d;                /* decimals, palette and narration scroll of both panes */
} compare_screen;

static compare_screen *compare_of(ui_screen *s)
{
    return (compare_screen *)s;
}

/* ---- pairing tokens ---- */

static const char *const *labels_of(const trace *t, int axis, int *count)
{
    *count = axis == 0 ? t->n : t->m;
    return axis == 1 && t->in->source ? t->in->source : t->in->tokens;
}

/* The index in to of the k-th repeat of from[i]'s label (k counted in from), or -1. */
static int same_token(const char *const *from, int i, const char *const *to, int to_n)
{
    int repeat = 0;
    for (int j = 0; j < i; j++) repeat += strcmp(from[j], from[i]) == 0;
    for (int j = 0; j < to_n; j++)
        if (strcmp(to[j], from[i]) == 0 && repeat-- == 0) return j;
    return -1;
}

/* Fills each side's maps by token; returns how the tokens compare. A lesson pair whose token
 * lists are not the same multiset is paired by position instead, and the screen says so. */
static token_match pair_tokens(compare_screen *cs)
{
    token_match match = TOKENS_SAME;
    for (int axis = 0; axis < 2; axis++) {
        int n[2];
        const char *const *labels[2] = {labels_of(cs->s[0].v.t, axis, &n[0]),
                                        labels_of(cs->s[1].v.t, axis, &n[1])};
        for (int me = 0; me < 2; me++)
            for (int i = 0; i < n[me]; i++) {
                int j = same_token(labels[me], i, labels[1 - me], n[1 - me]);
                cs->s[me].by_token[axis][i] = j;
                if (j < 0 || n[0] != n[1]) match = TOKENS_BY_POSITION;
                else if (j != i && match == TOKENS_SAME) match = TOKENS_REORDERED;
            }
    }
    if (match == TOKENS_BY_POSITION)
        for (int axis = 0; axis < 2; axis++)
            for (int me = 0; me < 2; me++) {
                int n, other;
                labels_of(cs->s[me].v.t, axis, &n);
                labels_of(cs->s[1 - me].v.t, axis, &other);
                for (int i = 0; i < n; i++) cs->s[me].by_token[axis][i] = i < other ? i : -1;
            }
    return match;
}

/* The other lesson's index along axis for index i of side me's current matrix, or -1 when it
 * is not among the other's [first, first + count) on screen. */
static int pair_index(const compare_screen *cs, int me, stage_axis axis, int i, int first,
                      int count)
{
    int j = axis == AXIS_TOKENS ? cs->s[me].by_token[0][i]
          : axis == AXIS_SOURCE ? cs->s[me].by_token[1][i] : i;
    return j >= first && j < first + count ? j : -1;
}

/* The cell of the other lesson paired with side me's cell (row, col) of the matrix shown. */
static bool pair_cell(const compare_screen *cs, int me, int row, int col, int *orow, int *ocol)
{
    const ui_view *other = &cs->s[1 - me].v;
    const stage_info *info = stage_get(ui_view_current(&cs->s[me].v)->stage);
    if (cs->s[1].absent) return false;
    *orow = pair_index(cs, me, info->rows, row, ui_view_first_row(other), ui_view_rows(other));
    *ocol = pair_index(cs, me, info->cols, col, ui_view_first_col(other), ui_view_cols(other));
    return *orow >= 0 && *ocol >= 0;
}

static double value_at(const ui_view *v, int row, int col)
{
    const walk_step *s = ui_view_current(v);
    return trace_value(v->t, s->stage, s->head, row, col);
}

/* Two numbers that print alike at any precision are the same: equal, both −∞, or within
 * rounding of the last bits (the two lessons may reach one value by different sums). */
static bool same_number(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Whether side me's cell differs from its pair (a cell with no pair differs). */
static bool cell_differs(const compare_screen *cs, int me, int row, int col)
{
    int orow, ocol;
    if (!pair_cell(cs, me, row, col, &orow, &ocol)) return true;
    return !same_number(value_at(&cs->s[me].v, row, col), value_at(&cs->s[1 - me].v, orow, ocol));
}

/* ---- the follower follows the leader ---- */

/* How many steps before step of w show the same stage and head. */
static int ordinal(const walk *w, int step)
{
    int n = 0;
    for (int i = 0; i < step; i++)
        n += w->steps[i].stage == w->steps[step].stage && w->steps[i].head == w->steps[step].head;
    return n;
}

/* Steps pair by stage and head: the follower's script step at the leader's stage and head (the
 * same repeat of it when the script comes back to it, else its first), or -1 when its script
 * never shows them. */
static int paired_step(const ui_view *lead, const ui_view *follower)
{
    const walk_step *at = ui_view_current(lead);
    int want = lead->off_script ? 0 : ordinal(&lead->walk, lead->step), first = -1;
    bool per_head = stage_get(at->stage)->per_head;
    if (!follower->lesson || follower->lesson->n_steps == 0) return -1;
    for (int k = 0; k < follower->walk.count; k++) {
        const walk_step *s = &follower->walk.steps[k];
        if (s->stage != at->stage || (per_head && s->head != at->head)) continue;
        if (first < 0) first = k;
        if (want-- == 0) return k;
    }
    return first;
}

/* A comparison asks no questions: both lessons' answers are shown, as the lesson shows them
 * once a question is skipped. */
static void reveal_all(ui_view *v)
{
    for (int k = 0; k < v->walk.count; k++)
        if (v->state[k].question == UI_Q_OPEN) v->state[k].question = UI_Q_REVEALED;
}

/* Puts the follower on the leader's stage, head and cell (its own script step for them when it
 * has one, else off its script), with the same filling and heatmap. */
static void follow_leader(compare_screen *cs)
{
    ui_view *lead = &cs->s[0].v, *f = &cs->s[1].v;
    const walk_step *at = ui_view_current(lead);
    cs->s[1].absent = !trace_has_stage(f->t, at->stage)
                   || (stage_get(at->stage)->per_head && at->head > f->t->heads);
    if (cs->s[1].absent) return;
    int k = paired_step(lead, f);
    if (k >= 0) ui_view_goto(f, k);
    else ui_view_open_stage(f, at->stage, at->head);
    reveal_all(f);
    int row, col;
    if (pair_cell(cs, 0, lead->row, lead->col, &row, &col)) { f->row = row; f->col = col; }
    f->stepped_in = lead->stepped_in;
    f->heat_weights = lead->heat_weights;
    f->heat_signed = lead->heat_signed;
}

/* ---- drawing ---- */

/* The mark of a differing cell: ≠, or ! in ASCII (where * already stands for ·). */
static const char *differ_mark(const ui_style *st)
{
    return st->utf8 ? "\xe2\x89\xa0" : "!";
}

static const char *letter_of(const compare_screen *cs, int me)
{
    return cs->s[me].letter == 0 ? "A" : "B";
}

/* The side shown as A (letter 0) or as B (letter 1). */
static int side_of(const compare_screen *cs, int letter)
{
    return cs->s[0].letter == letter ? 0 : 1;
}

/* "weights[bank,river] head 2" for side me's selected cell. */
static void cell_name(const ui_view *v, int row, int col, char *text, size_t size)
{
    const walk_step *s = ui_view_current(v);
    const stage_info *info = stage_get(s->stage);
    char r[64], c[64];
    /* a repeated token by its position ("the@3"), as every cell is named */
    snprintf(text, size, "%s[%s,%s]", info->name, trace_axis_name(v->t, info->rows, row, r, sizeof r),
             trace_axis_name(v->t, info->cols, col, c, sizeof c));
    if (info->per_head && v->t->heads > 1) ui_text_append(text, size, " head %d", s->head);
}

/* The difference line: the selected cell in both lessons and how many cells of the matrix
 * differ, e.g. "weights[bank,river]: 0.6488 vs 0.2919 · 8 of 25 cells differ". */
static void difference_line(const compare_screen *cs, const ui_style *st, char *text, size_t size)
{
    const ui_view *a = &cs->s[0].v, *b = &cs->s[1].v;
    const walk_step *at = ui_view_current(a);
    const char *lead = letter_of(cs, 0), *other = letter_of(cs, 1);
    char name[160], x[NUMBER_MAX], y[NUMBER_MAX];
    cell_name(a, a->row, a->col, name, sizeof name);
    ui_number(value_at(a, a->row, a->col), NUMBER_FIXED, 0, st, x, sizeof x);
    text[0] = '\0';
    if (cs->s[1].absent && trace_has_stage(b->t, at->stage)) {
        snprintf(text, size, "%s: %s in %s; %s has %d head%s, so head %d is only in %s", name, x,
                 lead, other, b->t->heads, b->t->heads == 1 ? "" : "s", at->head, lead);
        return;
    }
    if (cs->s[1].absent) {
        snprintf(text, size, "%s: %s in %s; %s has no %s stage", name, x, lead, other,
                 stage_get(at->stage)->name);
        return;
    }
    int orow, ocol, differ = 0, rows = ui_view_rows(a), cols = ui_view_cols(a);
    if (pair_cell(cs, 0, a->row, a->col, &orow, &ocol)) {
        /* A's number first, whichever leads */
        ui_number(value_at(b, orow, ocol), NUMBER_FIXED, 0, st, y, sizeof y);
        ui_text_append(text, size, "%s: %s vs %s", name, cs->s[0].letter == 0 ? x : y,
            cs->s[0].letter == 0 ? y : x);
    } else {
        ui_text_append(text, size, "%s: %s in %s; %s has no such cell", name, x, lead, other);
    }
    for (int r = ui_view_first_row(a); r < ui_view_first_row(a) + rows; r++)
        for (int c = ui_view_first_col(a); c < ui_view_first_col(a) + cols; c++)
            differ += cell_differs(cs, 0, r, c);
    if (differ == 0) ui_text_append(text, size, " \xc2\xb7 no cell differs");
    else ui_text_append(text, size, " \xc2\xb7 %d of %d cells differ (marked %s)", differ, rows * cols,
             differ_mark(st));
}

/* How the tokens pair, then each lesson's narration for its step (or what the stage is). */
static void narration_text(const compare_screen *cs, char *text, size_t size)
{
    static const char *const pairing[] = {
        "",
        "The same tokens in another order: cells are paired by token, not by position.\n",
        "The lessons' tokens differ: cells are compared by position, not by token.\n",
    };
    snprintf(text, size, "%s", pairing[cs->match]);
    for (int letter = 0; letter < 2; letter++) {
        int me = side_of(cs, letter);
        const ui_view *v = &cs->s[me].v;
        const lesson_step *item = ui_view_here(v);
        const walk_step *s = ui_view_current(v);
        char formula[256], inputs[128];
        if (me == 1 && cs->s[1].absent) {
            ui_text_append(text, size, "%s: (not at this stage)\n", letter_of(cs, me));
            continue;
        }
        trace_stage_formula(v->t, s->stage, formula, sizeof formula);
        trace_stage_inputs(v->t, s->stage, inputs, sizeof inputs);
        if (item && item->say) ui_text_append(text, size, "%s: %s\n", letter_of(cs, me), item->say);
        else ui_text_append(text, size, "%s: %s, made from %s.%s\n", letter_of(cs, me), formula,
                 inputs,
                 v->off_script ? " (Off its script: no step of it shows this stage and head.)" : "");
    }
}

/* The pane's first line: which lesson, and where it is on its own script. */
static void draw_pane_title(const compare_screen *cs, int me, int y, int x, int width,
                            const ui_style *st)
{
    const side *sd = &cs->s[me];
    const ui_view *v = &sd->v;
    char right[64], left[300], cut[320];
    if (me == 1 && sd->absent) snprintf(right, sizeof right, "not at this stage ");
    else snprintf(right, sizeof right, "%sstep %d of %d ", v->off_script ? "off its script, from " : "",
                  v->step + 1, v->walk.count);
    if (sd->train_step > 0) {   /* the weights shown are not the lesson's own: said first */
        char trained[sizeof right + 40];
        snprintf(trained, sizeof trained, "trained %d/%d \xc2\xb7 %s", sd->train_step,
                 sd->o->l.train.steps, right);
        snprintf(right, sizeof right, "%.60s", trained);
    }
    snprintf(left, sizeof left, " %s \xc2\xb7 %.200s", letter_of(cs, me), sd->o->l.title);
    int right_w = ui_width(right, st);
    if (right_w > width / 2) right_w = 0;
    ui_cut_text(left, width - right_w - 1, st, cut, sizeof cut);
    ui_field(y, x, width, "", st, A_REVERSE, 0, UI_LEFT);
    ui_put(y, x, width - right_w - 1, cut, st, A_REVERSE | A_BOLD, 0);
    if (right_w) ui_put(y, x + width - right_w, right_w, right, st, A_REVERSE, 0);
}

/* Marks side me's visible cells that differ from their pair, in the blank before each number
 * (the selected cell has its brackets there, and the difference line speaks for it). */
static void mark_differences(const compare_screen *cs, int me, const ui_style *st)
{
    const side *sd = &cs->s[me];
    const ui_matrix_grid *g = &sd->grid;
    if (g->cell_w <= 0 || cs->s[1].absent) return;
    for (int r = 0; r < g->vis_rows; r++)
        for (int c = 0; c < g->vis_cols; c++) {
            int row = sd->v.top + r, col = g->left + c;
            bool selected = row == sd->v.row && col == sd->v.col && ui_view_marks_selection(&sd->v);
            if (selected || !ui_view_is_filled(&sd->v, row, col) || !cell_differs(cs, me, row, col))
                continue;
            int x = ui_matrix_cell_x(g, c), y = ui_matrix_row_y(g, r);
            cchar_t old;
            wchar_t w[CCHARW_MAX + 1];
            attr_t attrs;
            short pair = 0;
            mvin_wch(y, x, &old);
            getcchar(&old, w, &attrs, &pair, NULL);
            ui_put(y, x, 1, differ_mark(st), st, A_BOLD, pair);
        }
}

static void draw_pane(compare_screen *cs, int me, int y, int x, int width, int height,
                      const ui_style *st)
{
    side *sd = &cs->s[me];
    sd->grid = (ui_matrix_grid){0};
    draw_pane_title(cs, me, y, x, width, st);
    if (me == 1 && sd->absent) {
        char text[300];
        const walk_step *at = ui_view_current(&cs->s[0].v);
        if (trace_has_stage(sd->v.t, at->stage))
            snprintf(text, sizeof text, "%s has %d head%s: head %d is only in %s.",
                     letter_of(cs, 1), sd->v.t->heads, sd->v.t->heads == 1 ? "" : "s", at->head,
                     letter_of(cs, 0));
        else
            snprintf(text, sizeof text, "%s has no %s stage: only %s shows it.", letter_of(cs, 1),
                     stage_get(at->stage)->name, letter_of(cs, 0));
        ui_put_wrapped(y + 2, x + 1, width - 2, height - 2, text, st, A_BOLD);
        return;
    }
    ui_matrix_draw(&sd->v, y + 1, x, width, height - 1, st, &sd->grid);
    mark_differences(cs, me, st);
}

/* The terminal can hold neither two panes side by side nor one above the other. */
static void draw_cramped(const ui_style *st)
{
    char text[200];
    const char *times = st->utf8 ? "\xc3\x97" : "x";
    snprintf(text, sizeof text, "terminal too small for a comparison: it needs %d columns for "
             "two panes side by side, or %d rows to stack them (now %d%s%d)",
             COMPARE_SIDE_COLS, COMPARE_STACK_ROWS, COLS, times, LINES);
    int lines = ui_lines_needed(text, COLS - 2, st);
    ui_put_wrapped((LINES - lines) / 2, 1, COLS - 2, lines, text, st, A_BOLD);
}

static void draw_title(const compare_screen *cs, const ui_style *st)
{
    const ui_view *a = &cs->s[0].v;
    const walk_step *at = ui_view_current(a);
    char right[128] = "";
    ui_text_append(right, sizeof right, "%s ", stage_get(at->stage)->name);
    if (stage_get(at->stage)->per_head && a->t->heads > 1)
        ui_text_append(right, sizeof right, "head %d/%d ", at->head, a->t->heads);
    int right_w = ui_width(right, st);
    ui_field(0, 0, COLS, "", st, A_REVERSE, 0, UI_LEFT);
    char left[128];
    snprintf(left, sizeof left, " attnstep \xc2\xb7 comparing two lessons (%s leads, %s follows)",
             letter_of(cs, 0), letter_of(cs, 1));
    ui_put(0, 0, COLS - right_w - 1, left, st, A_REVERSE | A_BOLD, 0);
    if (right_w < COLS / 2) ui_put(0, COLS - right_w, right_w, right, st, A_REVERSE, 0);
}

/* The status line: a reload's error (naming its lesson) before any message, the leader's
 * message before the follower's ("reloaded with_scale.yaml"). */
static void status_text(const compare_screen *cs, char *text, size_t size)
{
    text[0] = '\0';
    for (int me = 0; me < 2 && !text[0]; me++)
        if (cs->s[me].v.reload_error[0])
            snprintf(text, size, "%s: %s", letter_of(cs, me), cs->s[me].v.reload_error);
    for (int me = 0; me < 2 && !text[0]; me++)
        if (cs->s[me].v.message[0]) snprintf(text, size, "%s", cs->s[me].v.message);
}

/* Rows the panes share: the screen less the title, the explanation, the difference line, the
 * narration with its rule, and the key bar. */
static int body_height(int explain_h, int diff_h, int narration_h)
{
    return LINES - 1 - narration_h - 1 - diff_h - explain_h - 1;
}

/* Whether both panes (the follower's only where it is at the leader's stage) would show their
 * matrix whole, every column with its full label and every row, in panes of width × height. */
static bool panes_show_all(compare_screen *cs, int width, int height, const ui_style *st)
{
    for (int me = 0; me < 2; me++) {
        ui_view *v = &cs->s[me].v;
        if (me == 1 && cs->s[1].absent) continue;
        if (!ui_matrix_shows_every_column(v, width, st) || ui_matrix_height(v) > height - 1)
            return false;   /* less the pane's title */
    }
    return true;
}

/* The narration's rows: up to 6 side by side (3 stacked), and more where the panes leave rows
 * their matrices do not need (at 200x50 it was cut at 6 of 7 lines above 30 empty rows). */
static int narration_rows(compare_screen *cs, bool side_by_side, int explain_h, int diff_h,
                          int needs)
{
    int pane[2];
    for (int me = 0; me < 2; me++)   /* a matrix and the pane's title; an absent side, a note */
        pane[me] = 1 + (me == 1 && cs->s[1].absent ? 3 : ui_matrix_height(&cs->s[me].v));
    int panes = side_by_side ? (pane[0] > pane[1] ? pane[0] : pane[1]) : pane[0] + pane[1];
    int spare = body_height(explain_h, diff_h, 0) - panes;
    int most = side_by_side ? 6 : 3;
    return ui_clamp(needs, 1, spare > most ? spare : most);
}

/* The narration under its rule: when longer than its pane it scrolls (J and K), and the rule's
 * right end says which lines are shown, unless the status line has something to say. */
static void draw_narration(compare_screen *cs, int y, int height, const char *text,
                           const ui_style *st)
{
    const ui_view *a = &cs->s[0].v;
    char status[sizeof a->message + sizeof a->reload_error + 8];
    int needed = ui_lines_needed(text, COLS - 2, st), most = needed > height ? needed - height : 0;
    cs->d.narration_top = ui_clamp(cs->d.narration_top, 0, most);
    ui_draw_hline(y - 1, 0, COLS, st);
    status_text(cs, status, sizeof status);
    if (status[0]) ui_put(y - 1, 2, COLS - 4, status, st, A_BOLD, 0);
    else if (most > 0) {
        char note[128];
        ui_display_scroll_note(&cs->d, height, needed, most, st, note, sizeof note);
        int w = ui_width(note, st);
        if (w < COLS - 4) ui_put(y - 1, COLS - 1 - w, w, note, st, A_BOLD, 0);
    }
    ui_put_wrapped_from(y, 1, COLS - 2, height, cs->d.narration_top, text, st, A_NORMAL);
}

static void draw(ui_screen *s, const ui_style *run_style)
{
    compare_screen *cs = compare_of(s);
    char explanation[UI_TEXT_MAX], narration[UI_TEXT_MAX];
    char difference[512];
    ui_style mine = ui_display_style(&cs->d, run_style);   /* + - c change both panes */
    const ui_style *st = &mine;
    erase();
    bool side_by_side = COLS >= COMPARE_SIDE_COLS;
    if (!side_by_side && LINES < COMPARE_STACK_ROWS) { draw_cramped(st); return; }
    /* the follower is placed from the leader before each frame, so every way the leader moves
     * (keys, clicks, --at) is followed */
    follow_leader(cs);
    bool can_stack = LINES >= COMPARE_STACK_ROWS;
    const ui_view *a = &cs->s[0].v;
    /* a new matrix or step, or the other lesson leading, starts the narration at its top */
    ui_display_narration_at(&cs->d, (unsigned long)a->shown << 20 ^ (unsigned long)a->step << 2
                                    ^ (unsigned long)a->off_script << 1 ^ (unsigned long)cs->s[0].letter);
    trace_cell cell = {ui_view_current(a)->stage, ui_view_current(a)->head, a->row, a->col};
    trace_cell_explain(a->t, &cell, st->precision, explanation, sizeof explanation);
    difference_line(cs, st, difference, sizeof difference);
    narration_text(cs, narration, sizeof narration);
    int explain_h = ui_clamp(ui_lines_needed(explanation, COLS - 2, st), 1, 2);
    int diff_h = ui_clamp(ui_lines_needed(difference, COLS - 2, st), 1, 2);
    int narration_needs = ui_lines_needed(narration, COLS - 2, st);
    /* side by side where both matrices show whole, or where stacking would not show them
     * whole either (the scaling pair's 8 columns at 120×30 are stacked) */
    if (side_by_side && can_stack
        && !panes_show_all(cs, (COLS - 1) / 2,
                           body_height(explain_h, diff_h, ui_clamp(narration_needs, 1, 6)), st)
        && panes_show_all(cs, COLS, body_height(explain_h, diff_h, ui_clamp(narration_needs, 1, 3)) / 2, st))
        side_by_side = false;
    int narration_h = narration_rows(cs, side_by_side, explain_h, diff_h, narration_needs);
    int narration_y = LINES - 1 - narration_h, diff_y = narration_y - 1 - diff_h;
    int explain_y = diff_y - explain_h, body_h = body_height(explain_h, diff_h, narration_h);
    ui_keep_the_result(explanation, sizeof explanation, COLS - 2, explain_h, st);
    draw_title(cs, st);
    int first = side_of(cs, 0), second = side_of(cs, 1);   /* A's pane first, whichever leads */
    if (side_by_side) {
        int w = (COLS - 1) / 2;
        draw_pane(cs, first, 1, 0, w, body_h, st);
        ui_draw_vline(1, w, body_h, st);
        draw_pane(cs, second, 1, w + 1, COLS - w - 1, body_h, st);
    } else {
        int h = body_h / 2;
        draw_pane(cs, first, 1, 0, COLS, h, st);
        draw_pane(cs, second, 1 + h, 0, COLS, body_h - h, st);
    }
    ui_put_wrapped(explain_y, 1, COLS - 2, explain_h, explanation, st, A_NORMAL);
    ui_put_wrapped(diff_y, 1, COLS - 2, diff_h, difference, st, A_BOLD);
    draw_narration(cs, narration_y, narration_h, narration, st);
    ui_draw_bar(UI_IN_LESSON | UI_IN_COMPARE, st);
}

/* ---- keys and clicks ---- */

/* The follower leads from where it stands (on the leader's stage, head and cell, unless it
 * lacks them), and the leader follows it. */
static void swap_leader(compare_screen *cs)
{
    side lead = cs->s[0];
    cs->s[0] = cs->s[1];
    cs->s[1] = lead;
    cs->s[1].absent = false;
    snprintf(cs->s[0].v.message, sizeof cs->s[0].v.message, "%s leads now, %s follows",
             letter_of(cs, 0), letter_of(cs, 1));
}

static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    compare_screen *cs = compare_of(s);
    ui_view *lead = &cs->s[0].v;
    int arg = 0;
    ui_action action = ui_key_action(k, UI_IN_LESSON | UI_IN_COMPARE, &arg);
    ui_screen *overlay = NULL;
    lead->message[0] = cs->s[1].v.message[0] = '\0';
    switch (action) {
    case UI_ACT_QUIT: return (ui_outcome){1, NULL};
    case UI_ACT_HELP: overlay = ui_help_screen_new(); break;
    case UI_ACT_SUM: {   /* the leader's cell, with the panes' decimals */
        ui_style mine = ui_display_style(&cs->d, st);
        overlay = ui_sum_screen_new(lead, &mine);
        break;
    }
    case UI_ACT_SWAP: swap_leader(cs); return UI_STAY;
    default: break;
    }
    if (action == UI_ACT_HELP || action == UI_ACT_SUM) {
        if (!overlay) snprintf(lead->message, sizeof lead->message, "out of memory");
        return (ui_outcome){0, overlay};
    }
    /* how both lessons are shown: decimals, palette, the narration's scroll */
    if (ui_display_key(&cs->d, action, arg, ui_display_style(&cs->d, st).precision, lead->message,
                       sizeof lead->message))
        return UI_STAY;
    /* where the lesson is, not how it is shown: the moves, steps, heads, filling, heatmap */
    if (action >= UI_ACT_NEXT && action <= UI_ACT_PAIR) {
        ui_view_apply(lead, action, arg);
        reveal_all(lead);
        return UI_STAY;
    }
    char label[32], help[32];
    snprintf(lead->message, sizeof lead->message, "%s does nothing in a comparison; %s lists the keys",
             ui_key_label(k, st->utf8, label, sizeof label),
             ui_action_key(UI_ACT_HELP, UI_IN_LESSON, st->utf8, help, sizeof help));
    return UI_STAY;
}

/* ---- following both files ---- */

/* Side sd shows its lesson at the weights after train_step updates (train_cache_at), its
 * extremes measured there; false with error (escaped: the lesson's title is not in it) when
 * that cannot be computed. */
static bool show_trained(side *sd, char *error, size_t size)
{
    if (sd->train_step <= 0) return true;
    if (!sd->trained && !(sd->trained = calloc(1, sizeof *sd->trained))) {
        snprintf(error, size, "out of memory");
        return false;
    }
    train_cache_free(sd->trained);
    trace_failure f;
    const trace *at = train_cache_at(sd->trained, &sd->o->t, &sd->o->l.train, sd->train_step,
                                     &sd->o->compute, &f);
    if (!at) {
        snprintf(error, size, "--train-step %d: training overflows: %s in %s", sd->train_step,
                 trace_status_message(f.status), stage_get(f.stage)->name);
        return false;
    }
    ui_view_numbers_changed(&sd->v, at, (stage_id)0);
    return true;
}

/* (Re)makes side me's maps of tokens to the other side's, sized to its trace. */
static bool alloc_maps(side *sd)
{
    const trace *t = &sd->o->t;
    for (int axis = 0; axis < 2; axis++) {
        int n = axis == 0 ? t->n : t->m;
        free(sd->by_token[axis]);
        sd->by_token[axis] = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
        if (!sd->by_token[axis]) return false;
    }
    return true;
}

/* Each side's file is followed as a lesson screen follows its own: a save reloads that lesson
 * (a broken one keeps the last good view, with its error), and the tokens pair afresh. A key
 * script's "reload FILE" stands in for the leading lesson's file (x first to stand in for the
 * other's). */
static bool follow(ui_screen *s, const ui_event *ev)
{
    compare_screen *cs = compare_of(s);
    bool changed = false;
    for (int me = 0; me < 2; me++) {
        if (me == 1 && ev->file[0]) continue;
        const char *from = ev->file[0] ? ev->file : NULL;
        const ui_opened *before = cs->s[me].o;
        changed |= ui_lesson_follow(&cs->s[me].o, &cs->s[me].v, &cs->s[me].seen, from);
        if (cs->s[me].o != before && !alloc_maps(&cs->s[me])) {
            snprintf(cs->s[me].v.reload_error, sizeof cs->s[me].v.reload_error,
                     "out of memory while reloading");
            return true;
        }
        if (cs->s[me].o != before) reveal_all(&cs->s[me].v);
        if (cs->s[me].o != before && cs->s[me].train_step > 0   /* trained again, if it can be */
            && (cs->s[me].train_step > cs->s[me].o->l.train.steps
                || !show_trained(&cs->s[me], cs->s[me].v.reload_error,
                                 sizeof cs->s[me].v.reload_error)))
            cs->s[me].train_step = 0;
    }
    if (changed) cs->match = pair_tokens(cs);
    return changed || ev->kind == UI_EV_RELOAD;
}

/* A click on a cell of either pane selects it (and its pair in the other). */
static ui_outcome click(ui_screen *s, int x, int y)
{
    compare_screen *cs = compare_of(s);
    for (int me = 0; me < 2; me++) {
        int row, col, orow, ocol;
        if (!ui_matrix_hit(&cs->s[me].grid, &cs->s[me].v, x, y, &row, &col)) continue;
        if (me == 1 && !pair_cell(cs, 1, row, col, &orow, &ocol)) return UI_STAY;
        cs->s[0].v.row = me == 0 ? row : orow;
        cs->s[0].v.col = me == 0 ? col : ocol;
    }
    return UI_STAY;
}

static unsigned context(const ui_screen *s)
{
    (void)s;
    return UI_IN_LESSON | UI_IN_COMPARE;
}

static void close_screen(ui_screen *s)
{
    compare_screen *cs = compare_of(s);
    for (int me = 0; me < 2; me++) {
        free(cs->s[me].by_token[0]);
        free(cs->s[me].by_token[1]);
        if (cs->s[me].o) ui_view_free(&cs->s[me].v);
        if (cs->s[me].o) ui_lesson_close(cs->s[me].o);
        if (cs->s[me].trained) train_cache_free(cs->s[me].trained);
        free(cs->s[me].trained);
    }
    free(cs);
}

static const ui_screen_ops compare_ops = {
    .overlay = false, .draw = draw, .key = key, .click = click, .follow = follow,
    .context = context, .close = close_screen,
};

/* Takes a and b (closed on failure too). */
/* The tokens paired again (a side now shows another trace of its lesson). */
static void cs_pair_again(compare_screen *cs)
{
    cs->match = pair_tokens(cs);
}

static ui_screen *compare_new(ui_opened *a, ui_opened *b)
{
    compare_screen *cs = calloc(1, sizeof *cs);
    ui_opened *o[2] = {a, b};
    bool ok = cs != NULL;
    for (int me = 0; me < 2; me++) {
        if (ok && ui_view_init(&cs->s[me].v, &o[me]->t, &o[me]->l)) cs->s[me].o = o[me];
        else { ok = false; ui_lesson_close(o[me]); continue; }
        cs->s[me].letter = me;
        cs->s[me].seen = ui_file_stamp_of(o[me]->l.path);
        ok = alloc_maps(&cs->s[me]);
        reveal_all(&cs->s[me].v);
    }
    if (!ok) {
        if (cs) close_screen(&cs->base);
        return NULL;
    }
    cs->base.ops = &compare_ops;
    cs->match = pair_tokens(cs);
    return &cs->base;
}

/* Whether lesson l can be shown after `step` updates of its training; else error says why. */
static bool trains_to(const lesson *l, int step, char *error, size_t size)
{
    char path[600];
    text_escape(l->path, path, sizeof path);   /* a path is shown escaped */
    if (!train_active(&l->input, &l->train))
        snprintf(error, size, "--train-step: %s does not train (it has no train: key)", path);
    else if (step > l->train.steps)
        snprintf(error, size, "--train-step %d: %s trains for %d steps (0 to %d)", step, path,
                 l->train.steps, l->train.steps);
    else return true;
    return false;
}

ui_screen *ui_compare_screen_open(const char *a, const char *b, const trace_options *compute,
                                  const lesson_options *load, int train_step, bool report,
                                  exit_status *status, char *error, size_t size)
{
    ui_opened *o[2] = {NULL, NULL};
    const char *paths[2] = {a, b};
    for (int me = 0; me < 2; me++) {
        /* --set edits the second lesson only: A against A edited, or against B edited */
        lesson_options mine = load ? *load : (lesson_options){0};
        if (me == 0) mine.n_edits = 0;
        *status = ui_lesson_open(paths[me], NULL, 0, compute, &mine, &o[me], report, error, size);
        if (*status != EXIT_STATUS_OK) {
            if (me == 1) ui_lesson_close(o[0]);
            return NULL;
        }
    }
    if (train_step >= 0 && !trains_to(&o[1]->l, train_step, error, size)) {
        if (report) fprintf(stderr, "attnstep: %s\n", error);
        *status = EXIT_STATUS_USAGE;
        ui_lesson_close(o[0]);
        ui_lesson_close(o[1]);
        return NULL;
    }
    ui_screen *screen = compare_new(o[0], o[1]);
    if (!screen) {
        *status = EXIT_STATUS_SOFTWARE;
        snprintf(error, size, "out of memory");
        return NULL;
    }
    side *b_side = &compare_of(screen)->s[1];
    b_side->train_step = train_step > 0 ? train_step : 0;
    if (!show_trained(b_side, error, size)) {
        if (report) fprintf(stderr, "attnstep: %s\n", error);
        *status = EXIT_STATUS_DATA;
        screen->ops->close(screen);
        return NULL;
    }
    cs_pair_again(compare_of(screen));
    return screen;
}

ui_view *ui_compare_screen_view(ui_screen *screen)
{
    assert(screen->ops == &compare_ops);
    return &compare_of(screen)->s[0].v;
}
