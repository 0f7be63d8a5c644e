/* The matrix pane: the current stage's matrix as numbers or as a heatmap (colour ramps, or
 * shade glyphs without colour), its header, legend and labels, scrolled to the selection.
 * Every number is read from the trace; only the visible cells are drawn. */
#include "ui_curses.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heat.h"
#include "ui_keys.h"
#include "ui_edit.h"
#include "ui_matrix.h"
#include "ui_util.h"

enum { PAIR_SEQ = UI_PAIR_FREE, PAIR_DIV = UI_PAIR_FREE + 16, PAIR_MASK = UI_PAIR_FREE + 28 };

/* The ramps, buckets and edges are the heatmap's one rule (heat.h), shared with the SVG
 * figures; here they become curses' colour pairs. The 8-colour ramps are numbered as curses
 * numbers its colours, and the palettes as the style names them. */
_Static_assert(COLOR_BLACK == HEAT_BLACK && COLOR_RED == HEAT_RED && COLOR_GREEN == HEAT_GREEN &&
               COLOR_YELLOW == HEAT_YELLOW && COLOR_BLUE == HEAT_BLUE &&
               COLOR_MAGENTA == HEAT_MAGENTA && COLOR_CYAN == HEAT_CYAN &&
               COLOR_WHITE == HEAT_WHITE, "curses' colours are ANSI's");
_Static_assert((int)UI_PALETTE_VIRIDIS == (int)HEAT_VIRIDIS && (int)UI_PALETTE_INFERNO == (int)HEAT_INFERNO &&
               (int)UI_PALETTE_COUNT == (int)HEAT_PALETTE_COUNT, "the UI's palettes are heat.h's");

/* Shade glyphs stand in for colour, so nothing is lost on a monochrome screen. */
static const char *const shades_utf8[] = {" ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                          "\xe2\x96\x88"};
static const char *const shades_ascii[] = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};

typedef struct { const heat_colour *colours; int n, first_pair; } ramp;

static ramp ramp_for(const ui_style *st, bool diverging)
{
    heat_ramp t = heat_ramp_of(st->palette, st->colors >= 256, diverging);
    return (ramp){t.colours, t.n, diverging ? PAIR_DIV : PAIR_SEQ};
}

/* The palette whose pairs are set up now: init_pair recolours what is on screen, so a switch
 * of palette only needs the pairs set again before the next frame. */
static int pairs_palette = -1, pairs_colors = 0;

static void set_pairs(const ui_style *st)
{
    if (st->colors == 0 || (st->palette == pairs_palette && st->colors == pairs_colors)) return;
    for (int d = 0; d < 2; d++) {
        ramp r = ramp_for(st, d == 1);
        for (int i = 0; i < r.n; i++)
            init_pair((short)(r.first_pair + i), r.colours[i].fg, r.colours[i].bg);
    }
    heat_colour mask = heat_mask(st->colors >= 256);
    init_pair(PAIR_MASK, mask.fg, mask.bg);
    pairs_palette = st->palette;
    pairs_colors = st->colors;
}

void ui_matrix_colors_init(int colors)
{
    pairs_palette = -1;
    set_pairs(&(ui_style){.colors = colors, .palette = UI_PALETTE_VIRIDIS});
}


/* The shade glyph for a position; on a diverging ramp it shows the distance from 0. */
static const char *shade(const ui_style *st, double position, bool diverging)
{
    double strength = diverging ? fabs(position * 2 - 1) : position;
    if (st->utf8) return shades_utf8[heat_bucket(strength, UI_COUNT(shades_utf8))];
    return shades_ascii[heat_bucket(strength, UI_COUNT(shades_ascii))];
}

/* Columns of x written as a cell. */
static int number_columns_of(double x, const ui_style *st)
{
    char text[NUMBER_MAX];
    ui_number(x, NUMBER_FIXED, 0, st, text, sizeof text);
    return number_columns(text);
}

/* Width of every number of the current matrix: a cell writes its number with a fixed count of
 * decimals, so the widest are the extremes (and −∞ where the mask hides cells); while a question
 * waits, one column (its cells are "·"). */
static int number_width(const ui_view *v, const ui_style *st)
{
    if (ui_view_question_open(v)) return 1;   /* every cell is "·" until the answer */
    int lo = number_columns_of(ui_view_range(v)->lo, st);
    int hi = number_columns_of(ui_view_range(v)->hi, st);
    int width = lo > hi ? lo : hi;
    if (stage_get(ui_view_current(v)->stage)->flags & STAGE_HIDES) {
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

/* The selected cell's row or column as a name: a repeated token with its position ("dog@6"). */
static const char *axis_name(const ui_view *v, bool rows, int i, char *buffer, size_t size)
{
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    return trace_axis_name(v->t, rows ? info->rows : info->cols, i, buffer, size);
}

/* Columns of the widest label along the rows (or columns) of the current stage. Each axis is
 * measured once, on the first frame that shows it: the labels of 1024 tokens are too many to
 * measure on every key. */
static int widest_label(ui_view *v, bool rows, const ui_style *st)
{
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    int *widest = &v->label_w[rows ? info->rows : info->cols];
    stage_id stage = ui_view_current(v)->stage;   /* the whole axis, whatever a step shows */
    int count = rows ? trace_rows(v->t, stage) : trace_cols(v->t, stage);
    if (*widest == 0) {
        *widest = 1;
        for (int i = 0; i < count; i++) {
            char buffer[32];
            int w = ui_width(axis_label(v, rows, i, buffer, sizeof buffer), st);
            *widest = w > *widest ? w : *widest;
        }
    }
    return *widest;
}

/* Columns per head where the columns of a matrix are the heads' side by side (Q, K, V and
 * concat of a lesson with heads; K and V by key group under GQA), else 0. */
static int head_group(const ui_view *v)
{
    return trace_column_group_width(v->t, ui_view_current(v)->stage);
}

/* How the pane is laid out: a cell is a blank column, the number (as wide as the widest
 * number and, when the screen has room, the widest column label), a second blank (left out
 * when that lets every column fit) and shade glyphs when the heatmap has no colour. The
 * selected cell's brackets sit in the blank columns around its number. */
typedef struct {
    int label_w;                 /* row labels */
    int indent;                  /* presenting: blank columns before the pane, centring it */
    bool stagger;                /* presenting: column labels on two rows, alternately, so a
                                    label may reach over its left neighbour's number */
    int cw, cell_w, glyph_w;     /* number field, whole cell, shade glyphs */
    int numbers;                 /* the widest number, right-aligned in the number field */
    int pad;                     /* blank columns around the number: 1 or 2 */
    int group;                   /* columns per head, 0 when not grouped */
    int vis_cols;                /* columns that fit, wherever the scroll starts */
    bool full_labels;            /* no column label is cut */
    bool heat, diverging;
    double absmax;               /* the largest magnitude shown (a bar's full length) */
    double extent;               /* the ramp's ends, ±extent (diverging) or 0 … 1: its buckets
                                    a round step wide (heat_extent) */
} layout;

/* Separator columns k consecutive columns may cross, at most. */
static int separators(int k, int group)
{
    return group && k > 1 ? (k - 2) / group + 1 : 0;
}

/* Columns k cells take: their cells, the separators they may cross, the closing bracket. */
static int cells_width(const layout *L, int k)
{
    return k * L->cell_w + separators(k, L->group) + 1;
}

/* Presenting, a label fits its column when it is no wider than the number field, or, with the
 * labels staggered over two rows, than two cells less a blank. */
static bool label_fits(const layout *L, int label)
{
    return label <= L->cw || (L->stagger && label <= 2 * L->cell_w - 1);
}

/* Presenting, once every column fits: the spare columns widen every cell (up to twice its
 * number's width) and what is left centres the pane; a label still wider than its number
 * field staggers. */
static void spread(layout *L, int cols, int avail, int cols_full)
{
    int n = cols > 0 ? cols : 1, spare = avail - cells_width(L, cols);
    int grow = ui_clamp(spare / n, 0, L->cw);
    L->cw += grow;
    L->cell_w += grow;
    L->stagger = cols > 1 && cols_full > L->cw;
    L->indent = (avail - cells_width(L, cols)) / 2;
}

static layout lay_out(ui_view *v, int width, const ui_style *st)
{
    layout L = {.heat = ui_view_heatmap(v), .diverging = heat_diverging(ui_view_current(v)->stage)};
    int cols = ui_view_cols(v);
    L.absmax = fmax(fabs(ui_view_range(v)->lo), fabs(ui_view_range(v)->hi));
    int buckets = ramp_for(st, L.diverging).n;
    L.extent = heat_extent(L.absmax, buckets, L.diverging);
    L.glyph_w = L.heat && !st->colors ? 2 : 0;
    L.group = head_group(v);
    int rows_full = widest_label(v, true, st), cols_full = widest_label(v, false, st);
    L.label_w = ui_clamp(rows_full, 1, width / 4 > 6 ? width / 4 : 6);
    int avail = width - 2 - L.label_w;   /* less the row marker, the labels and a blank */
    int numbers = L.numbers = number_width(v, st), n = cols > 0 ? cols : 1;
    /* a blank on both sides of every number, unless one blank lets every column fit where two
     * do not (the selected cell's closing bracket then takes the next cell's blank) */
    int seps = separators(cols, L.group) + 1;
    L.pad = !L.glyph_w && n * (numbers + 2) + seps > avail && n * (numbers + 1) + seps <= avail ? 1 : 2;
    int per_col = (avail - 1 - separators(cols, L.group)) / n - L.pad - L.glyph_w;
    int label_room = cols_full < per_col ? cols_full : per_col;
    L.cw = numbers > label_room ? numbers : label_room;
    L.cell_w = L.cw + L.pad + L.glyph_w;
    /* labels over two rows where they are wider than their cells: presenting, and while a
     * question hides the numbers, so that every choice's column shows with its label */
    L.stagger = (st->present || ui_view_question_open(v)) && cols > 1 && cols_full > L.cw;
    L.full_labels = label_fits(&L, cols_full);
    L.vis_cols = 0;
    while (L.vis_cols < cols && cells_width(&L, L.vis_cols + 1) <= avail) L.vis_cols++;
    if (st->present && L.vis_cols == cols && L.full_labels) spread(&L, cols, avail, cols_full);
    return L;
}

int ui_matrix_height(const ui_view *v)
{
    return ui_view_rows(v) + 3 + (head_group(v) > 0);
}

/* Rows a presented matrix row may take: its numbers and, below them, bars as long as the
 * numbers are large, so that the room a projector has goes to what the class reads. */
#define TILE_MOST 6

/* Where the rows go in a pane of height rows at y: the header, the legend, the heads, the
 * column labels (two rows staggered), then the matrix rows, each tile_h rows high (presenting,
 * the most that let every row show, up to TILE_MOST, the first `taller` rows one more, so that
 * the rows left over are used, unless that would give bars to fewer than half the rows; else 1). */
typedef struct { bool legend, heads; int grid_y, tile_h, taller, vis_rows; } pane_rows;

static pane_rows frame_of(const ui_view *v, const layout *L, int y, int height, const ui_style *st)
{
    pane_rows f = {.legend = height >= 5, .heads = L->group && height >= 6};
    f.grid_y = y + 1 + f.legend + f.heads + 1 + L->stagger;
    int room = y + height - f.grid_y, rows = ui_view_rows(v) > 0 ? ui_view_rows(v) : 1;
    f.tile_h = st->present ? ui_clamp(room / rows, 1, TILE_MOST) : 1;
    f.vis_rows = ui_clamp(room / f.tile_h, 0, ui_view_rows(v));
    if (st->present && f.tile_h < TILE_MOST && f.vis_rows == ui_view_rows(v))
        f.taller = ui_clamp(room - f.vis_rows * f.tile_h, 0, f.vis_rows);
    if (f.tile_h == 1 && 2 * f.taller < f.vis_rows) f.taller = 0;   /* bars only where most rows have them */
    return f;
}

int ui_matrix_rows_used(ui_view *v, int width, int height, const ui_style *st)
{
    layout L = lay_out(v, width, st);
    pane_rows f = frame_of(v, &L, 0, height, st);
    return f.grid_y + f.vis_rows * f.tile_h + f.taller;
}

int ui_matrix_row_y(const ui_matrix_grid *grid, int r)
{
    return grid->grid_y + r * grid->tile_h + (r < grid->taller ? r : grid->taller);
}

/* The rows visible row r takes on screen. */
static int row_height(const ui_matrix_grid *grid, int r)
{
    return grid->tile_h + (r < grid->taller);
}

bool ui_matrix_fits(ui_view *v, int width, const ui_style *st)
{
    layout L = lay_out(v, width, st);
    return L.vis_cols == ui_view_cols(v) && L.full_labels && L.pad == 2;
}

bool ui_matrix_shows_every_column(ui_view *v, int width, const ui_style *st)
{
    layout L = lay_out(v, width, st);
    return L.vis_cols == ui_view_cols(v) && L.full_labels;
}

/* Screen column where visible column c (0 = the first shown) starts: a separator column
 * before each head's first column but the first one shown. */
static int col_x(const ui_matrix_grid *grid, int c)
{
    int seps = grid->group ? (grid->left + c) / grid->group - grid->left / grid->group : 0;
    return grid->grid_x + c * grid->cell_w + seps;
}

/* Whether a cell is one the mask hides, in a stage that shows it: −∞ where it hides, a weight
 * of exactly 0 in the attention. */
static bool is_masked(const ui_view *v, int row, int col)
{
    return heat_masked(v->t, ui_view_current(v)->stage, row, col);
}

/* Decimals x needs at most `most`: those left once its trailing zeros are dropped. */
static int decimals_of(double x, int most, const ui_style *st)
{
    ui_style at_most = *st;
    at_most.precision = most;
    char text[NUMBER_MAX];
    ui_number(x, NUMBER_FIXED, 0, &at_most, text, sizeof text);
    const char *point = strchr(text, '.');
    if (!point || strpbrk(text, "eE")) return point ? most : 0;   /* exponent form: every one */
    int n = (int)strlen(point + 1);
    while (n > 0 && point[n] == '0') n--;
    return n;
}

int ui_matrix_decimals_needed(const ui_view *v, int most, const ui_style *st)
{
    const walk_step *s = ui_view_current(v);
    int needed = 0;
    for (int r = 0; r < ui_view_rows(v) && needed < most; r++)
        for (int c = 0; c < ui_view_cols(v) && needed < most; c++) {
            int row = ui_view_first_row(v) + r, col = ui_view_first_col(v) + c;
            if (!ui_view_is_filled(v, row, col) || is_masked(v, row, col)) continue;
            double x = trace_value(v->t, s->stage, s->head, row, col);
            if (isfinite(x)) {
                int d = decimals_of(x, most, st);
                needed = d > needed ? d : needed;
            }
        }
    return needed;
}

/* What if? (ui_edit.h): a cell an edit changed has a mark in the blank before its number,
 * • (~ in ASCII); the explanation line says what it was. */
static void edit_mark(const ui_view *v, const ui_style *st, int y, int x, int row, int col,
                      unsigned attr, int pair)
{
    const walk_step *s = ui_view_current(v);
    double was;
    if (!ui_view_marks_selection(v) || !ui_view_is_filled(v, row, col))
        return;   /* an open question's cells, unfilled cells: a mark would tell of them */
    if (v->edits && ui_edit_changed(v->edits, v->t, s->stage, s->head, row, col, &was))
        ui_field(y, x, 1, st->utf8 ? "\xe2\x80\xa2" : "~", st, attr | A_BOLD, pair, UI_LEFT);
}

/* Draws one cell; returns its colour pair (the selected cell's frame takes it) and notes a
 * masked cell in *masked. */
static int draw_cell(const ui_view *v, const ui_style *st, const layout *L, int y, int x,
                     int row, int col, bool *masked)
{
    const walk_step *s = ui_view_current(v);
    bool hides = stage_get(s->stage)->flags & STAGE_HIDES;
    bool marked = ui_view_marks_selection(v);
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
    } else if (is_masked(v, row, col) && (L->heat || hides)) {
        /* a masked cell is no small weight: its own mark, colour and glyph, and −∞ bold so it
         * reads from the back of the room */
        *masked = true;
        if (hides) ui_number(-INFINITY, NUMBER_FIXED, L->cw, st, text, sizeof text);
        else snprintf(text, sizeof text, "0");   /* exactly 0, unlike any small weight */
        attr |= A_BOLD;
        pair = L->heat && st->colors ? PAIR_MASK : 0;
        glyph = st->utf8 ? "\xe2\x95\xb3" : "x";
    } else {
        double value = trace_value(v->t, s->stage, s->head, row, col);
        /* a fixed count of decimals, so that a column's decimal points line up (0.1770 under
         * 0.2919); a number wider than the field switches to exponent form, never cut */
        ui_number(value, NUMBER_FIXED, L->cw, st, text, sizeof text);
        if (!isfinite(value)) attr |= A_BOLD;
        else if (L->heat) {
            double position = heat_position(value, L->diverging, L->extent);
            if (st->colors) {
                ramp r = ramp_for(st, L->diverging);
                pair = r.first_pair + heat_bucket(position, r.n);
            } else {
                glyph = shade(st, position, L->diverging);
            }
        }
    }
    ui_field(y, x, L->cw + 1, text, st, attr, pair, UI_RIGHT);
    edit_mark(v, st, y, x, row, col, attr, pair);
    if (L->pad > 1) ui_field(y, x + 1 + L->cw, 1, "", st, attr, pair, UI_LEFT);
    for (int i = 0; i < L->glyph_w; i++)   /* after the closing bracket's blank */
        ui_field(y, x + 2 + L->cw + i, 1, glyph, st, A_NORMAL, 0, UI_LEFT);
    return pair;
}

/* The ramp's swatches, each `each` columns wide, with the value at every bucket edge between
 * them ("0 ██ 0.2 ██ 0.4 … 1") when edges is true, else only at both ends. Returns the columns
 * used (0 when the edges do not fit). */
static int draw_ramp(int y, int x, int width, const ui_style *st, const layout *L, bool edges,
                     bool draw)
{
    ramp r = ramp_for(st, L->diverging);
    ui_style edge_style = *st;
    edge_style.precision = st->precision < 2 ? st->precision : 2;
    int used = 0;
    for (int i = 0; i <= r.n; i++) {
        if (edges || i == 0 || i == r.n) {
            char edge[NUMBER_MAX];
            ui_number(heat_edge(i, r.n, L->diverging, L->extent), NUMBER_SHORT, 0, &edge_style,
                      edge, sizeof edge);
            int w = ui_width(edge, st);
            if (used + w > width) return 0;
            if (draw) ui_put(y, x + used, w, edge, st, A_BOLD, 0);
            used += w + (i < r.n);   /* a blank before the next swatch */
        }
        if (i == r.n) break;
        int each = edges ? 2 : 1;
        if (used + each > width) return 0;
        if (draw) ui_field(y, x + used, each, "", st, A_NORMAL, r.first_pair + i, UI_LEFT);
        used += each + (edges || i == r.n - 1);   /* a blank before the next edge */
    }
    return used;
}

/* The shades as a strip, for the legend without colour. */
static int draw_shades(int y, int x, const ui_style *st, bool diverging)
{
    int n = st->utf8 ? UI_COUNT(shades_utf8) : UI_COUNT(shades_ascii);
    if (diverging) n = 2 * n - 1;   /* shades grow both ways from 0 */
    for (int i = 0; i < n; i++) {
        double position = n > 1 ? (double)i / (n - 1) : 0;
        ui_field(y, x + i, 1, shade(st, position, diverging), st, A_NORMAL, 0, UI_LEFT);
    }
    return n;
}

/* Legend text in bold, shortened by whole clauses (ui_shorten_text); returns the columns used. */
static int put_whole(int y, int x, int width, const char *text, const ui_style *st)
{
    char shown[256];
    ui_shorten_text(text, width, st, shown, sizeof shown);
    return ui_put(y, x, width, shown, st, A_BOLD, 0);
}

static void draw_legend(const ui_view *v, const ui_style *st, const layout *L, bool masked,
                        int y, int x, int width)
{
    char key[32], text[200];
    if (ui_view_question_open(v)) {   /* the range would give answers away */
        put_whole(y, x, width, "numbers hidden (until the question is answered)", st);
        return;
    }
    if (!L->heat) {
        snprintf(text, sizeof text, "numbers \xc2\xb7 %s: heatmap",
                 ui_action_key(UI_ACT_HEATMAP, UI_IN_LESSON, st->utf8, key, sizeof key));
        put_whole(y, x, width, text, st);
        return;
    }
    int used;
    char steps[64] = "";
    if (st->colors) {   /* the edge of every bucket on a short ramp, where they fit */
        ramp r = ramp_for(st, L->diverging);
        bool edges = r.n <= 5 && draw_ramp(y, x, width, st, L, true, false) > 0;
        used = draw_ramp(y, x, width, st, L, edges, true);
        if (!edges) {
            char step[NUMBER_MAX];
            ui_number(heat_edge(1, r.n, L->diverging, L->extent) -
                      heat_edge(0, r.n, L->diverging, L->extent), NUMBER_SHORT, 0, st, step, sizeof step);
            snprintf(steps, sizeof steps, " (%d steps of %s)", r.n, step);
        }
    } else {
        char lo[NUMBER_MAX], hi[NUMBER_MAX];
        ui_number(L->diverging ? -L->extent : 0, NUMBER_SHORT, 0, st, lo, sizeof lo);
        ui_number(L->diverging ? L->extent : 1, NUMBER_SHORT, 0, st, hi, sizeof hi);
        used = ui_put(y, x, width, lo, st, A_BOLD, 0) + 1;
        used += draw_shades(y, x + used, st, L->diverging) + 1;
        used += ui_put(y, x + used, width - used, hi, st, A_BOLD, 0);
    }
    used += put_whole(y, x + used, width - used, steps, st);
    text[0] = '\0';
    if (masked) {   /* the masked cells' own swatch (or glyph) */
        used += 2;
        if (st->colors && used + 2 <= width) {
            ui_field(y, x + used, 2, "", st, A_NORMAL, PAIR_MASK, UI_LEFT);
            used += 2;
        } else if (!st->colors)
            used += ui_put(y, x + used, width - used, st->utf8 ? "\xe2\x95\xb3" : "x", st, A_BOLD, 0);
        snprintf(text, sizeof text, " masked");
    }
    else if (L->diverging) {
        char min[NUMBER_MAX], max[NUMBER_MAX];
        ui_number(ui_view_range(v)->lo, NUMBER_SHORT, 0, st, min, sizeof min);
        ui_number(ui_view_range(v)->hi, NUMBER_SHORT, 0, st, max, sizeof max);
        snprintf(text, sizeof text, "  values %s \xe2\x80\xa6 %s", min, max);
    } else
        snprintf(text, sizeof text, "  0 = no attention, 1 = all of it");
    put_whole(y, x + used, width - used, text, st);
}

/* "rows 2–13 of 40, cols 0–5 of 40" when the matrix does not fit, so scrolling is visible:
 * 0-based, as the column labels, cells (weights[2,0]) and positions (dog@6) are. */
static int draw_scroll_note(const ui_view *v, const ui_style *st, int y, int right, int vis_rows,
                            int vis_cols)
{
    char text[128] = "", part[64];
    const char *dash = st->utf8 ? "\xe2\x80\x93" : "-";
    if (vis_rows < ui_view_rows(v)) {
        int top = v->top - ui_view_first_row(v);
        snprintf(part, sizeof part, "rows %d%s%d of %d", top, dash, top + vis_rows - 1,
                 ui_view_rows(v));
        strcat(text, part);
    }
    if (vis_cols < ui_view_cols(v)) {
        int left = v->left - ui_view_first_col(v);
        snprintf(part, sizeof part, "%scols %d%s%d of %d", text[0] ? ", " : "", left, dash,
                 left + vis_cols - 1, ui_view_cols(v));
        strcat(text, part);
    }
    int w = ui_width(text, st);
    if (w > 0) ui_put(y, right - w, w, text, st, A_BOLD, 0);
    return w;
}

/* The formula, the shape and the head, and at the right the selected row's and column's full
 * labels (the matrix may have to cut them). Where all do not fit, the formula gives way first,
 * then the labels, each by whole clauses (ui_shorten_text: a formula cut inside a word or
 * before its −∞ would read as another formula), a formula with none that fits giving way to
 * the stage's name; the shape and "head 2 of 2" are never cut. */
static void draw_header(const ui_view *v, const ui_style *st, int y, int x, int width)
{
    const walk_step *s = ui_view_current(v);
    char shape[160], part[160], formula[256], row[48], col[48], cut[sizeof part + 8];
    char left[sizeof formula + sizeof shape + 8];
    trace_stage_formula(v->t, s->stage, formula, sizeof formula);
    snprintf(shape, sizeof shape, "  %d%s%d", ui_view_rows(v), st->utf8 ? "\xc3\x97" : "x",
             ui_view_cols(v));
    if (stage_get(s->stage)->per_head && v->t->heads > 1) {
        size_t used = strlen(shape);
        snprintf(shape + used, sizeof shape - used, "  head %d of %d", s->head, v->t->heads);
    }
    int shape_w = ui_width(shape, st), selection_w = 0;
    if (ui_view_marks_selection(v)) {
        snprintf(part, sizeof part, "row %s, column %s", axis_name(v, true, v->row, row, sizeof row),
                 axis_name(v, false, v->col, col, sizeof col));
        int most = ui_clamp(width - shape_w - 2, 0, width / 2);
        ui_shorten_text(part, most, st, cut, sizeof cut);
        selection_w = ui_width(cut, st);
        if (selection_w) ui_put(y, x + width - selection_w, selection_w, cut, st, A_BOLD, 0);
    }
    int room = width - (selection_w ? selection_w + 2 : 0), formula_room = room - shape_w;
    ui_shorten_text(formula, formula_room, st, left, sizeof left);   /* whole clauses only */
    if (!left[0]) ui_shorten_text(stage_get(s->stage)->name, formula_room, st, left, sizeof left);
    if (left[0]) strcat(left, shape);
    else snprintf(left, sizeof left, "%s", shape + 2);   /* no room for the formula */
    ui_put(y, x, room, left, st, A_BOLD, 0);
}

/* The heads over their columns (the selected cell's head in reverse) and a separator line
 * between heads, from the head row down to the last visible row. */
static void draw_heads(const ui_view *v, const ui_style *st, const ui_matrix_grid *grid, int y,
                       int bottom)
{
    int selected = ui_view_marks_selection(v) ? v->col / grid->group : -1;
    for (int c = 0; c < grid->vis_cols;) {
        int col = grid->left + c, head = col / grid->group;
        int last = ui_clamp((head + 1) * grid->group - grid->left, c + 1, grid->vis_cols);
        int x0 = col_x(grid, c), x1 = col_x(grid, last - 1) + grid->cell_w;
        char label[48];
        stage_id stage = ui_view_current(v)->stage;
        trace_column_group_label(v->t, stage, head, false, label, sizeof label);
        if (ui_width(label, st) > x1 - x0 - 1)   /* "heads 1–2" where the group's name is cut */
            trace_column_group_label(v->t, stage, head, true, label, sizeof label);
        ui_field(y, x0 + 1, x1 - x0 - 1, label, st, head == selected ? A_BOLD | A_REVERSE : A_BOLD,
                 0, UI_CENTER);
        if (c > 0) ui_draw_vline(y, x0 - 1, bottom - y, st);
        c = last;
    }
}

static void draw_column_labels(const ui_view *v, const ui_style *st, const layout *L,
                               const ui_matrix_grid *grid)
{
    char buffer[32], label[64];
    for (int c = 0; c < grid->vis_cols; c++) {
        int col = grid->left + c, cx = col_x(grid, c);
        bool sel = col == v->col && ui_view_marks_selection(v);
        bool head = L->group && ui_view_marks_selection(v) && col / L->group == v->col / L->group;
        /* staggered, every other label is a row higher and may reach over its left neighbour */
        int room = L->stagger ? 2 * L->cell_w - 1 : L->cw, ly = grid->grid_y - 1 - (L->stagger && col % 2 == 0);
        ui_cut_text(axis_label(v, false, col, buffer, sizeof buffer), room, st, label, sizeof label);
        int w = ui_width(label, st), lx = cx + 1 + L->cw - w;   /* right-aligned over the numbers */
        unsigned attr = sel ? A_BOLD | A_REVERSE : head ? A_BOLD | A_UNDERLINE : A_BOLD;
        ui_put(ly, lx, w, label, st, attr, 0);
        if (sel) ui_put(ly, lx - 1, 1, st->utf8 ? "\xe2\x96\xbe" : "v", st, A_BOLD, 0);
    }
}

/* Under a presented cell's number, a bar as long as the number is large on its ramp (a weight
 * of 1, or the largest magnitude of a signed matrix, is as wide as the widest number), in eighths of a
 * column, in the cell's colour; nothing under a cell the mask hides or not yet filled. */
static void draw_bar(const ui_view *v, const ui_style *st, const layout *L, int y, int x, int row,
                     int col, int pair)
{
    static const char *const eighths[] = {"", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d",
                                          "\xe2\x96\x8c", "\xe2\x96\x8b", "\xe2\x96\x8a",
                                          "\xe2\x96\x89"};
    const walk_step *s = ui_view_current(v);
    if (!ui_view_is_filled(v, row, col) || is_masked(v, row, col)) return;
    double value = trace_value(v->t, s->stage, s->head, row, col);
    if (!isfinite(value)) return;
    double strength = L->diverging ? (L->absmax > 0 ? fabs(value) / L->absmax : 0) : fmin(fmax(value, 0), 1);
    int parts = st->utf8 ? 8 : 1, length = (int)lround(strength * L->numbers * parts);
    char bar[8 * 3 * 64 + 4] = "";
    size_t used = 0;
    for (int i = 0; i < length / parts && used + 4 < sizeof bar; i++)
        used += (size_t)snprintf(bar + used, sizeof bar - used, "%s", st->utf8 ? "\xe2\x96\x88" : "#");
    if (length % parts) snprintf(bar + used, sizeof bar - used, "%s", eighths[length % parts]);
    /* reversed, a block is drawn in the pair's background: the ramp's colour */
    ui_put(y, x + 1 + L->cw - L->numbers, L->numbers, bar, st, pair ? A_REVERSE : A_NORMAL, pair);
}

/* One row: its marker and label (cut with … when too long), its cells, and the selected
 * cell's brackets in the blank columns on either side, in the cell's own colour. */
static void draw_row(const ui_view *v, const ui_style *st, const layout *L,
                     const ui_matrix_grid *grid, int x, int i, bool *masked)
{
    int row = v->top + i, ry = ui_matrix_row_y(grid, i);
    bool sel = row == v->row && ui_view_marks_selection(v);
    char buffer[32], label[64];
    if (sel) ui_put(ry, x, 1, st->utf8 ? "\xe2\x96\xb8" : ">", st, A_BOLD, 0);
    ui_cut_text(axis_label(v, true, row, buffer, sizeof buffer), L->label_w, st, label, sizeof label);
    ui_put(ry, x + 1, L->label_w, label, st, sel ? A_BOLD | A_REVERSE : A_BOLD, 0);
    int frame = -1, pair = 0;
    for (int c = 0; c < grid->vis_cols; c++) {
        int p = draw_cell(v, st, L, ry, col_x(grid, c), row, grid->left + c, masked);
        if (sel && grid->left + c == v->col) { frame = c; pair = p; }
        for (int t = 1; t < row_height(grid, i); t++)
            draw_bar(v, st, L, ry + t, col_x(grid, c), row, grid->left + c, p);
    }
    if (frame < 0) return;
    int fx = col_x(grid, frame) + (st->present ? L->cw - L->numbers : 0);   /* beside the number */
    ui_put(ry, fx, 1, "[", st, A_BOLD, pair);
    ui_put(ry, col_x(grid, frame) + 1 + L->cw, 1, "]", st, A_BOLD, pair);
}

void ui_matrix_draw(ui_view *v, int y, int x, int width, int height, const ui_style *st,
                    ui_matrix_grid *grid)
{
    set_pairs(st);
    layout L = lay_out(v, width, st);
    pane_rows f = frame_of(v, &L, y, height, st);
    bool legend = f.legend, heads = f.heads;
    grid->grid_y = f.grid_y;
    grid->grid_x = x + L.indent + 2 + L.label_w;
    grid->cell_w = L.cell_w;
    grid->tile_h = f.tile_h;
    grid->taller = f.taller;
    grid->group = L.group;
    grid->vis_rows = f.vis_rows;
    grid->vis_cols = L.vis_cols;
    draw_header(v, st, y, x, width);
    if (grid->vis_rows < 1 || grid->vis_cols < 1) {
        ui_put(y + 1, x, width, "(no room to show the matrix)", st, A_DIM, 0);
        grid->cell_w = 0;
        return;
    }
    ui_view_scroll(v, grid->vis_rows, grid->vis_cols);
    grid->left = v->left;
    if (heads)
        draw_heads(v, st, grid, grid->grid_y - 2 - L.stagger, ui_matrix_row_y(grid, grid->vis_rows));
    draw_column_labels(v, st, &L, grid);
    bool masked = false;
    for (int i = 0; i < grid->vis_rows; i++) draw_row(v, st, &L, grid, x + L.indent, i, &masked);
    if (legend) {
        int note = draw_scroll_note(v, st, y + 1, x + width, grid->vis_rows, grid->vis_cols);
        draw_legend(v, st, &L, masked, y + 1, x, width - note - (note ? 2 : 0));
    }
}

int ui_matrix_cell_x(const ui_matrix_grid *grid, int c)
{
    return col_x(grid, c);
}

bool ui_matrix_hit(const ui_matrix_grid *grid, const ui_view *v, int x, int y, int *row, int *col)
{
    int r = 0;
    while (r < grid->vis_rows && ui_matrix_row_y(grid, r + 1) <= y) r++;
    if (grid->cell_w <= 0 || y < grid->grid_y || r >= grid->vis_rows) return false;
    for (int c = 0; c < grid->vis_cols; c++) {
        int cx = col_x(grid, c);
        if (x < cx || x >= cx + grid->cell_w) continue;
        *row = v->top + r;
        *col = grid->left + c;
        return true;
    }
    return false;
}
