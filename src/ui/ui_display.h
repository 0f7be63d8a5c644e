/* How a screen shows its lessons, changed by keys in front of a class (decimals, palette, step
 * list, presentation, narration scroll): the state of the lesson screen and of the comparison
 * (ui_display.c), never the view model's, which only knows where the student is. No curses. */
#ifndef ATTNSTEP_UI_DISPLAY_H
#define ATTNSTEP_UI_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include "ui_keys.h"
#include "ui_paint.h"

#define UI_MAX_DECIMALS 8

/* The step list: by default shown, narrowed (its titles cut with …) or hidden when that lets
 * every column of the matrix fit; L hides it, or shows it even where the matrix scrolls. */
typedef enum { UI_LIST_AUTO, UI_LIST_HIDDEN, UI_LIST_SHOWN } ui_list;

typedef struct {
    bool set;                    /* taken from the run's style yet */
    int precision;               /* decimals (+ and -) */
    int palette;                 /* the heatmap's colours (c) */
    ui_list list;                /* the step list: shown where it costs no column, or as L says */
    bool list_drawn;             /* the last frame showed the step list (what L toggles) */
    bool present;                /* the presentation preset (P, --present) */
    bool auto_precision;         /* presenting: the most decimals that fit, until + or - */
    int narration_top;           /* the narration's first line shown (J and K) */
    unsigned long narration_of;  /* the matrix and step that narration_top belongs to */
} ui_display;

/* The run's style with d's decimals, palette and presentation; d takes its settings from st the
 * first time. */
ui_style ui_display_style(ui_display *d, const ui_style *st);

/* Applies a display key (UI_ACT_MORE_DECIMALS … UI_ACT_PRESENT); shown is the precision the
 * screen draws with now (what + and - start from). Writes a remark for the status line into
 * message (left alone when there is none) and returns false for any other action. */
bool ui_display_key(ui_display *d, ui_action action, int arg, int shown, char *message,
                    size_t size);

/* Starts the narration at its top when here (the matrix and step shown) changed. */
void ui_display_narration_at(ui_display *d, unsigned long here);

/* Where a narration that does not fit its pane is, and the keys that scroll it (shown of its
 * needed lines are on screen; most is the largest narration_top): " 3–5 of 19 · J↓ K↑ ". */
void ui_display_scroll_note(const ui_display *d, int shown, int needed, int most,
                            const ui_style *st, char *text, size_t size);

#endif
