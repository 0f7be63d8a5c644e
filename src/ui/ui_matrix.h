/* The matrix pane (ui_matrix.c): the current step's matrix as numbers or as a heatmap, with its
 * header, legend, labels and scroll note, scrolled to the selection. The lesson screen calls it;
 * it calls only the paint helpers and the view model. */
#ifndef ATTNSTEP_UI_MATRIX_H
#define ATTNSTEP_UI_MATRIX_H

#include <stdbool.h>
#include "ui_paint.h"
#include "ui_view.h"

/* Where the pane drew its cells, so that a click can be mapped back to one. */
typedef struct {
    int grid_y, grid_x;          /* screen position of the first visible cell */
    int cell_w;                  /* columns per cell; 0 when no cell was drawn */
    int tile_h;                  /* rows per matrix row (presenting: its numbers and bars) */
    int taller;                  /* presenting: the first rows that take one row more */
    int vis_rows, vis_cols;      /* cells visible */
    int left;                    /* the first visible column */
    int group;                   /* columns per head when heads are grouped (a separator
                                    column between groups), else 0 */
} ui_matrix_grid;

/* Sets up the heatmap's colour pairs (from UI_PAIR_FREE on) for colors (0, 8 or 256) in the
 * default palette; a drawing in another palette sets its pairs up itself. */
void ui_matrix_colors_init(int colors);

/* Draws the pane in the given rectangle and fills grid; scrolls v to the selection. */
void ui_matrix_draw(ui_view *v, int y, int x, int width, int height, const ui_style *st,
                    ui_matrix_grid *grid);

/* Rows the pane needs to show the whole current matrix (header, legend, heads, labels). */
int ui_matrix_height(const ui_view *v);
/* Rows the pane draws in a width × height rectangle (at most height). Presenting (st->present),
 * its layout fills the room: the column labels staggered over two rows where that lets every
 * column show with its label, the spare width widening the cells (up to twice the number) and
 * centring the rest, and each matrix row up to three rows high, its numbers over bars as long
 * as they are large. */
int ui_matrix_rows_used(ui_view *v, int width, int height, const ui_style *st);

/* Whether every column of the current matrix fits in width columns with its full label and a
 * blank on both sides of its numbers. */
bool ui_matrix_fits(ui_view *v, int width, const ui_style *st);
/* Whether every column fits with its full label, with one blank or two around its numbers. */
bool ui_matrix_shows_every_column(ui_view *v, int width, const ui_style *st);
/* The most decimals any number the current matrix shows needs, up to most: its digits once its
 * trailing zeros are dropped (4.0 needs 1, 0.70734 needs 5), so presenting writes no column of
 * zeros ("4.00000000"). */
int ui_matrix_decimals_needed(const ui_view *v, int most, const ui_style *st);


/* The screen column where visible column c (0: the first shown) starts: its blank before the
 * number, where the selected cell's "[" goes (a comparison marks differing cells there). */
int ui_matrix_cell_x(const ui_matrix_grid *grid, int c);

/* The screen row where visible row r (0: the first shown) starts. */
int ui_matrix_row_y(const ui_matrix_grid *grid, int r);

/* The cell drawn at column x, row y of the screen: true with its row and col. */
bool ui_matrix_hit(const ui_matrix_grid *grid, const ui_view *v, int x, int y, int *row,
                   int *col);

#endif
