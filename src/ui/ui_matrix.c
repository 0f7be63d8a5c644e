/* The matrix pane: the current stage's matrix as numbers or as a heatmap (colour ramps, or
 * shade glyphs without colour), its header, legend and labels, scrolled to the selection.
 * Every number is read from the trace; only the visible cells are drawn. */
#include "ui_curses.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_keys.h"
#include "ui_matrix.h"
#include "ui_util.h"

enum { PAIR_SEQ = UI_PAIR_FREE, PAIR_DIV = UI_PAIR_FREE + 16 };

/* Colour ramps (background, text): sequential for weights (dark = 0, bright = 1), diverging
 * blue-white-red for signed matrices (white = 0). */
typedef struct { short bg, fg; } ramp_colour;
static const ramp_colour seq256[] = {{54, 15}, {60, 15}, {24, 15}, {30, 15}, {36, 15},
                                     {35, 0},  {71, 0},  {107, 0}, {148, 0}, {184, 0}};
static const ramp_colour div256[] = {{19, 15}, {26, 15}, {32, 15}, {74, 0}, {117, 0}, {255, 0},
                                     {217, 0}, {210, 0}, {203, 0}, {160, 15}, {124, 15}};
static const ramp_colour seq8[] = {{COLOR_BLUE, COLOR_WHITE}, {COLOR_MAGENTA, COLOR_WHITE},
                                   {COLOR_CYAN, COLOR_BLACK}, {COLOR_GREEN, COLOR_BLACK},
                                   {COLOR_YELLOW, COLOR_BLACK}};
static const ramp_colour div8[] = {{COLOR_BLUE, COLOR_WHITE}, {COLOR_CYAN, COLOR_BLACK},
                                   {COLOR_WHITE, COLOR_BLACK}, {COLOR_YELLOW, COLOR_BLACK},
                                   {COLOR_RED, COLOR_WHITE}};

/* Shade glyphs stand in for colour, so nothing is lost on a monochrome screen. */
static const char *const shades_utf8[] = {" ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                          "\xe2\x96\x88"};
static const char *const shades_ascii[] = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};

typedef struct { const ramp_colour *colours; int n, first_pair; } ramp;

static ramp ramp_for(const ui_style *st, bool diverging)
{
    if (st->colors >= 256)
        return diverging ? (ramp){div256, UI_COUNT(div256), PAIR_DIV} : (ramp){seq256, UI_COUNT(seq256), PAIR_SEQ};
    return diverging ? (ramp){div8, UI_COUNT(div8), PAIR_DIV} : (ramp){seq8, UI_COUNT(seq8), PAIR_SEQ};
}

void ui_matrix_colors_init(int colors)
{
    if (colors == 0) return;
    ui_style st = {.colors = colors};
    for (int d = 0; d < 2; d++) {
        ramp r = ramp_for(&st, d == 1);
        for (int i = 0; i < r.n; i++)
            init_pair((short)(r.first_pair + i), r.colours[i].fg, r.colours[i].bg);
    }
}

/* Position 0…1 of x on its ramp: weights as they are, signed values with 0 in the middle. */
static double ramp_position(double x, bool diverging, double absmax)
{
    if (!diverging) return x < 0 ? 0 : x > 1 ? 1 : x;
    return absmax > 0 ? (x / absmax + 1) / 2 : 0.5;
}

static int ramp_level(double position, int n)
{
    return ui_clamp((int)lround(position * (n - 1)), 0, n - 1);
}

/* The shade glyph for a position; on a diverging ramp it shows the distance from 0. */
static const char *shade(const ui_style *st, double position, bool diverging)
{
    double strength = diverging ? fabs(position * 2 - 1) : position;
    if (st->utf8) return shades_utf8[ramp_level(strength, UI_COUNT(shades_utf8))];
    return shades_ascii[ramp_level(strength, UI_COUNT(shades_ascii))];
}

/* The current matrix's extremes, measured for every matrix when the view was built. */
static const ui_range *extremes(const ui_view *v)
{
    return ui_view_range(v);
}

/* Columns of x written as a cell. */
static int number_columns_of(double x, const ui_style *st)
{
    char text[NUMBER_MAX];
    ui_number(x, NUMBER_FIXED, 0, st, text, sizeof text);
    return number_columns(text);
}

/* Width of every number of the current matrix: a cell writes its number with a fixed count of
 * decimals, so the widest are the extremes (and −∞ where the mask hides cells). */
static int number_width(const ui_view *v, const ui_style *st)
{
    int lo = number_columns_of(extremes(v)->lo, st), hi = number_columns_of(extremes(v)->hi, st);
    int width = lo > hi ? lo : hi;
    if (ui_view_current(v)->stage == STAGE_MASKED) {
        int inf = number_columns_of(-INFINITY, st);
        width = inf > width ? inf : width;
    }
    return width;
}

static const char *axis_label(const ui_view *v, bool rows, int i, char *buffer, size_t size)
{
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    return trace_axis_label(v->t, rows ? info->rows : info->cols, i, buffer, size);
}

/* Columns of the widest label along the rows (or columns) of the current stage, at most cap.
 * Each axis is measured once, on the first frame that shows it: the labels of 1024 tokens are
 * too many to measure on every key. */
static int widest_label(ui_view *v, bool rows, int count, const ui_style *st, int cap)
{
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    int *widest = &v->label_w[rows ? info->rows : info->cols];
    if (*widest == 0) {
        *widest = 1;
        for (int i = 0; i < count; i++) {
            char buffer[32];
            int w = ui_width(axis_label(v, rows, i, buffer, sizeof buffer), st);
            *widest = w > *widest ? w : *widest;
        }
    }
    return *widest < cap ? *widest : cap;
}

typedef struct {
    int cw, cell_w, glyph_w;     /* number field, whole cell, shade glyphs */
    bool heat, diverging;
    double absmax;
} cell_style;

static void draw_cell(const ui_view *v, const ui_style *st, const cell_style *cs, int y, int x,
                      int row, int col)
{
    const walk_step *s = ui_view_current(v);
    bool marked = ui_view_marks_selection(v);
    bool selected = marked && row == v->row && col == v->col;
    bool cross = marked && (row == v->row || col == v->col);
    /* The selected cell's query row and key column form an underlined crosshair, so "which
     * word does this one look at?" is read along one row. */
    unsigned attr = cross ? A_BOLD | A_UNDERLINE : A_NORMAL;
    int pair = 0;
    char text[NUMBER_MAX];
    const char *glyph = " ";
    if (!ui_view_is_filled(v, row, col)) {
        snprintf(text, sizeof text, "%s", st->utf8 ? "\xc2\xb7" : ".");
        attr = A_DIM;
    } else {
        double value = trace_value(v->t, s->stage, s->head, row, col);
        /* a fixed count of decimals, so that a column's decimal points line up (0.1770 under
         * 0.2919); a number wider than the field switches to exponent form, never cut */
        ui_number(value, NUMBER_FIXED, cs->cw, st, text, sizeof text);
        if (!isfinite(value)) attr |= A_DIM;
        else if (cs->heat) {
            double position = ramp_position(value, cs->diverging, cs->absmax);
            if (st->colors) {
                ramp r = ramp_for(st, cs->diverging);
                pair = r.first_pair + ramp_level(position, r.n);
            } else {
                glyph = shade(st, position, cs->diverging);
            }
        }
    }
    /* Brackets mark the selected cell on every screen, colour or not, and in screen dumps. */
    char shown[80];
    snprintf(shown, sizeof shown, selected ? "[%s]" : "%s ", text);
    if (selected) attr |= A_REVERSE | A_BOLD;
    ui_field(y, x, cs->cw + 2, shown, st, attr, pair, UI_RIGHT);
    for (int i = 0; i < cs->glyph_w; i++)
        ui_field(y, x + 2 + cs->cw + i, 1, glyph, st, A_NORMAL, 0, UI_LEFT);
}

/* The ramp as a strip of swatches, for the legend. */
static int draw_swatches(int y, int x, const ui_style *st, bool diverging)
{
    ramp r = ramp_for(st, diverging);
    int n = st->colors ? r.n : st->utf8 ? UI_COUNT(shades_utf8) : UI_COUNT(shades_ascii);
    if (!st->colors && diverging) n = 2 * n - 1;   /* shades grow both ways from 0 */
    for (int i = 0; i < n; i++) {
        double position = n > 1 ? (double)i / (n - 1) : 0;
        if (st->colors) ui_field(y, x + i, 1, "", st, A_NORMAL, r.first_pair + i, UI_LEFT);
        else ui_field(y, x + i, 1, shade(st, position, diverging), st, A_NORMAL, 0, UI_LEFT);
    }
    return n;
}

static void draw_legend(const ui_view *v, const ui_style *st, const cell_style *cs, int y, int x,
                        int width)
{
    char lo[NUMBER_MAX], hi[NUMBER_MAX], key[32], text[160];
    if (ui_view_question_open(v)) {   /* the range would give answers away */
        ui_put(y, x, width, "numbers hidden until the question is answered", st, A_DIM, 0);
        return;
    }
    if (!cs->heat) {
        snprintf(text, sizeof text, "numbers \xc2\xb7 %s: heatmap",
                 ui_action_key(UI_ACT_HEATMAP, UI_IN_LESSON, st->utf8, key, sizeof key));
        ui_put(y, x, width, text, st, A_DIM, 0);
        return;
    }
    if (cs->diverging) {   /* the ramp runs from -max|x| to +max|x|, white (or blank) at 0 */
        ui_number(-cs->absmax, NUMBER_SHORT, 0, st, lo, sizeof lo);
        ui_number(cs->absmax, NUMBER_SHORT, 0, st, hi, sizeof hi);
    } else {
        snprintf(lo, sizeof lo, "0");
        snprintf(hi, sizeof hi, "1");
    }
    int used = ui_put(y, x, width, lo, st, A_NORMAL, 0) + 1;
    used += draw_swatches(y, x + used, st, cs->diverging) + 1;
    used += ui_put(y, x + used, width - used, hi, st, A_NORMAL, 0);
    if (cs->diverging) {
        char min[NUMBER_MAX], max[NUMBER_MAX];
        ui_number(extremes(v)->lo, NUMBER_SHORT, 0, st, min, sizeof min);
        ui_number(extremes(v)->hi, NUMBER_SHORT, 0, st, max, sizeof max);
        snprintf(text, sizeof text, "  values %s \xe2\x80\xa6 %s", min, max);
    } else
        snprintf(text, sizeof text, "  0 = no attention, 1 = all of it");
    ui_put(y, x + used, width - used, text, st, A_DIM, 0);
}

/* "rows 3–14 of 40, cols 1–6 of 40" when the matrix does not fit, so scrolling is visible. */
static int draw_scroll_note(const ui_view *v, const ui_style *st, int y, int right, int vis_rows,
                            int vis_cols)
{
    char text[128] = "", part[64];
    const char *dash = st->utf8 ? "\xe2\x80\x93" : "-";
    if (vis_rows < ui_view_rows(v)) {
        snprintf(part, sizeof part, "rows %d%s%d of %d", v->top + 1, dash, v->top + vis_rows, ui_view_rows(v));
        strcat(text, part);
    }
    if (vis_cols < ui_view_cols(v)) {
        snprintf(part, sizeof part, "%scols %d%s%d of %d", text[0] ? ", " : "", v->left + 1, dash,
                 v->left + vis_cols, ui_view_cols(v));
        strcat(text, part);
    }
    int w = ui_width(text, st);
    if (w > 0) ui_put(y, right - w, w, text, st, A_DIM, 0);
    return w;
}

static void draw_header(const ui_view *v, const ui_style *st, int y, int x, int width)
{
    const walk_step *s = ui_view_current(v);
    char text[512], part[64], formula[256];
    trace_stage_formula(v->t, s->stage, formula, sizeof formula);
    snprintf(text, sizeof text, "%s  %d%s%d", formula, ui_view_rows(v),
             st->utf8 ? "\xc3\x97" : "x", ui_view_cols(v));
    if (stage_get(s->stage)->per_head && v->t->heads > 1) {
        snprintf(part, sizeof part, "  head %d of %d", s->head, v->t->heads);
        strcat(text, part);
    }
    ui_put(y, x, width, text, st, A_BOLD, 0);
}

void ui_matrix_draw(ui_view *v, int y, int x, int width, int height, const ui_style *st,
                    ui_matrix_grid *grid)
{
    int bottom = y + height;
    cell_style cs = {.heat = ui_view_heatmap(v), .diverging = ui_view_current(v)->stage != STAGE_WEIGHTS};
    cs.absmax = fmax(fabs(extremes(v)->lo), fabs(extremes(v)->hi));
    cs.glyph_w = cs.heat && !st->colors ? 2 : 0;
    int label_w = widest_label(v, true, ui_view_rows(v), st, 12);
    int numbers = number_width(v, st);
    int col_labels = widest_label(v, false, ui_view_cols(v), st, numbers > 6 ? numbers : 6);
    cs.cw = numbers > col_labels ? numbers : col_labels;
    cs.cell_w = cs.cw + 2 + cs.glyph_w;
    bool legend = height >= 5;
    grid->grid_y = y + 1 + legend + 1;
    grid->grid_x = x + label_w + 2;
    grid->cell_w = cs.cell_w;
    grid->vis_rows = ui_clamp(bottom - grid->grid_y, 0, ui_view_rows(v));
    grid->vis_cols = ui_clamp((x + width - grid->grid_x) / cs.cell_w, 0, ui_view_cols(v));
    draw_header(v, st, y, x, width);
    if (grid->vis_rows < 1 || grid->vis_cols < 1) {
        ui_put(y + 1, x, width, "(no room to show the matrix)", st, A_DIM, 0);
        return;
    }
    ui_view_scroll(v, grid->vis_rows, grid->vis_cols);
    if (legend) {
        int note = draw_scroll_note(v, st, y + 1, x + width, grid->vis_rows, grid->vis_cols);
        draw_legend(v, st, &cs, y + 1, x, width - note - (note ? 2 : 0));
    }
    char buffer[32];
    for (int c = 0; c < grid->vis_cols; c++) {
        int col = v->left + c, cx = grid->grid_x + c * cs.cell_w;
        bool sel = col == v->col && ui_view_marks_selection(v);
        char label[64];
        ui_cut_text(axis_label(v, false, col, buffer, sizeof buffer), cs.cw, st, label, sizeof label);
        int lx = cx + 1 + cs.cw - ui_width(label, st);   /* right-aligned over the numbers */
        ui_put(grid->grid_y - 1, lx, cs.cw, label, st, sel ? A_BOLD | A_REVERSE : A_BOLD, 0);
        if (sel) ui_put(grid->grid_y - 1, lx - 1, 1, st->utf8 ? "\xe2\x96\xbe" : "v", st, A_BOLD, 0);
    }
    for (int i = 0; i < grid->vis_rows; i++) {
        int row = v->top + i, ry = grid->grid_y + i;
        bool sel = row == v->row && ui_view_marks_selection(v);
        if (sel) ui_put(ry, x, 1, st->utf8 ? "\xe2\x96\xb8" : ">", st, A_BOLD, 0);
        ui_put(ry, x + 1, label_w, axis_label(v, true, row, buffer, sizeof buffer), st,
               sel ? A_BOLD | A_REVERSE : A_BOLD, 0);
        for (int c = 0; c < grid->vis_cols; c++)
            draw_cell(v, st, &cs, ry, grid->grid_x + c * cs.cell_w, row, v->left + c);
    }
}

bool ui_matrix_hit(const ui_matrix_grid *grid, const ui_view *v, int x, int y, int *row, int *col)
{
    if (grid->cell_w <= 0 || x < grid->grid_x || y < grid->grid_y ||
        (x - grid->grid_x) / grid->cell_w >= grid->vis_cols || y - grid->grid_y >= grid->vis_rows)
        return false;
    *row = v->top + (y - grid->grid_y);
    *col = v->left + (x - grid->grid_x) / grid->cell_w;
    return true;
}
