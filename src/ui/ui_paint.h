/* The drawing helpers every screen uses (ui_paint.c): text in fields, lines and boxes, the key
 * bar, the "terminal too small" notice, the accent colour and the numbers. Calls only curses,
 * the key table and the text helpers, never a screen. */
#ifndef ATTNSTEP_UI_PAINT_H
#define ATTNSTEP_UI_PAINT_H

#include <stdbool.h>
#include <stddef.h>
#include "number.h"
#include "ui.h"
#include "ui_keys.h"

/* How to draw (decided once per run from the locale, the terminal, --color and --precision). */
typedef struct {
    bool utf8;      /* the locale shows UTF-8; otherwise ASCII text and ACS/ASCII lines */
    int colors;     /* 0 (no colour: shade glyphs instead), 8 or 256 */
    int precision;  /* decimals of the numbers shown */
    int palette;    /* the heatmap's colours: UI_PALETTE_VIRIDIS (default) or UI_PALETTE_INFERNO */
    bool present;   /* open lessons in the presentation preset (--present) */
} ui_style;

/* Heatmap palettes, both readable with the common colour-vision deficiencies: viridis for
 * weights with a blue-orange diverging ramp for signed values (the default), or inferno with a
 * purple-green diverging ramp. */
enum { UI_PALETTE_VIRIDIS, UI_PALETTE_INFERNO, UI_PALETTE_COUNT };

/* Colour pair of remarks and the current stage (also a lesson half done, in the picker), of a
 * lesson done; pairs from UI_PAIR_FREE on are the matrix's. */
enum { UI_PAIR_ACCENT = 1, UI_PAIR_DONE = 2, UI_PAIR_FREE = 8 };

/* Starts colour and sets up the accent pair; returns how many colours the UI will use (0, 8 or
 * 256): 0 for --color=never, NO_COLOR (with auto) or a terminal without enough colours. */
int ui_colors_init(ui_color choice);

/* The one way the UI writes a number: number_write with the style's precision, ASCII when the
 * locale is not UTF-8, and max_width columns at most (0: no limit). ui_number_format is the
 * format it uses, for text written by the view model (verdicts). */
number_format ui_number_format(number_style style, int max_width, const ui_style *st);
int ui_number(double x, number_style style, int max_width, const ui_style *st, char *buffer,
              size_t size);

#define UI_MIN_COLS 36
#define UI_MIN_ROWS 10
bool ui_screen_too_small(void);
void ui_draw_too_small(const ui_style *st);

/* Draws text in exactly width columns, padded with spaces in the same attributes so colour
 * backgrounds fill the field. Returns the columns the text itself took. */
enum { UI_LEFT, UI_RIGHT, UI_CENTER };
int ui_field(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
             int pair, int align);
/* Draws UTF-8 text at y, x in at most width columns; returns the columns used. */
int ui_put(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
           int pair);
/* Word-wraps text into height lines at y, x; a text that needs more ends with "…". */
void ui_put_wrapped(int y, int x, int width, int height, const char *text, const ui_style *st,
                    unsigned attr);
/* Word-wraps text and draws its lines first … first+height-1 at y, x (a pane that scrolls);
 * returns how many lines the whole text needs. */
int ui_put_wrapped_from(int y, int x, int width, int height, int first, const char *text,
                        const ui_style *st, unsigned attr);
/* Lines text needs when wrapped to width columns. */
int ui_lines_needed(const char *text, int width, const ui_style *st);
/* text cut to width columns, ending in "…" when it had to be cut (a matrix label, a long
 * status line). */
void ui_cut_text(const char *text, int width, const ui_style *st, char *out, size_t size);
/* An explanation ("name = terms = result") too long for lines of width is cut in the middle,
 * never at its end (issue 24, 25): its first terms, "+ …", its last term and its result; where
 * not even one first term fits, as much of the sum as fits, cut after a closed term (else at a
 * blank, never inside a number) with "…", then the last term (or only the result) as it is;
 * else the name, "= …" and the result. Returns whether the text now fits. */
bool ui_keep_the_result(char *text, size_t size, int width, int lines, const ui_style *st);
/* text shortened to width columns by rule, never inside a word, so that a formula or a legend
 * says nothing false: whole; else without its closing parenthesised clauses, the last first
 * ("(causal mask)"); else up to a clause's comma and ", …" ("0 = no attention, …"); else "". */
void ui_shorten_text(const char *text, int width, const ui_style *st, char *out, size_t size);
/* Columns text takes on screen. */
int ui_width(const char *text, const ui_style *st);

void ui_draw_hline(int y, int x, int width, const ui_style *st);
void ui_draw_vline(int y, int x, int height, const ui_style *st);
/* A box with a blank inside, and a blank margin of one cell around it (clipped to the screen;
 * the title bar above and the key bar below stay, bars of their own): nothing the screen
 * beneath drew touches a corner or a side, so no stray character reads as part of it. */
void ui_draw_box(int y, int x, int height, int width, const ui_style *st);
/* The key bar on the bottom line: the bindings of context that have a bar label. */
void ui_draw_bar(unsigned context, const ui_style *st);
/* The key bar led by action's key with label (a key the bar does not list, worth naming now,
 * e.g. "L step list" when the step list hid itself to make room). */
void ui_draw_bar_led(unsigned context, ui_action action, const char *label, const ui_style *st);

#endif
