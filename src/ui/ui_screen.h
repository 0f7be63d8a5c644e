/* Screens as operations: every screen of the UI (a lesson, the lesson picker, the help overlay
 * and the score box) is one module behind the same small set of operations, so the main loop
 * (ui.c) keeps a stack of screens, draws it and sends each event to the top without knowing
 * which screen it drives. Overlays are pushed over the screen they cover and popped when
 * dismissed. */
#ifndef ATTNSTEP_UI_SCREEN_H
#define ATTNSTEP_UI_SCREEN_H

#include <stdbool.h>
#include "ui_keys.h"
#include "ui_lesson.h"
#include "ui_paint.h"

typedef struct ui_screen ui_screen;

/* What the stack does once a screen has handled an event: close `close` screens from the top
 * (1: the screen itself; 2: it and the one beneath, as the score box does when it leaves the
 * lesson), then push `open` (a new screen, or NULL). */
typedef struct {
    int close;
    ui_screen *open;
} ui_outcome;

typedef struct {
    /* An overlay is drawn over the screen beneath, which is drawn first; a screen that is not
     * one fills the terminal (the screens beneath it are not drawn). */
    bool overlay;
    void (*draw)(ui_screen *s, const ui_style *st);
    /* A key, and a click at column x, row y, for the top screen. */
    ui_outcome (*key)(ui_screen *s, int key, const ui_style *st);
    ui_outcome (*click)(ui_screen *s, int x, int y);
    /* The input was quiet for a while (UI_EV_TICK), or a key script said "reload [FILE]"
     * (UI_EV_RELOAD): every screen with something to follow looks at it. Returns whether the
     * screen must be drawn again. NULL: nothing to follow. */
    bool (*follow)(ui_screen *s, const ui_event *ev);
    /* Which key bindings apply here (UI_IN_LESSON, UI_IN_PICKER, UI_IN_CHOICE, UI_IN_NUMBER):
     * the key bar and the help overlay show those. */
    unsigned (*context)(const ui_screen *s);
    /* For ATTNSTEP_KEY_TIMES (ui.h): what key will do here as a word, asked before the key is
     * sent (NULL, or an operation returning NULL: the key is not timed); and a number that
     * changes when the screen scrolls (NULL: it never does). */
    const char *(*key_kind)(const ui_screen *s, int key);
    unsigned long (*scroll_mark)(const ui_screen *s);
    /* Frees the screen and what it owns. */
    void (*close)(ui_screen *s);
} ui_screen_ops;

/* Each screen's own struct begins with this. */
struct ui_screen {
    const ui_screen_ops *ops;
    ui_screen *under;   /* the screen beneath on the stack (set when pushed), NULL at the bottom */
};

/* A lesson: takes o (closed with the screen); NULL when out of memory (o is then closed). */
ui_screen *ui_lesson_screen_new(ui_opened *o);
/* The view of a lesson screen, to place it before it is first drawn (--at, --head). */
ui_view *ui_lesson_screen_view(ui_screen *screen);

/* The lesson picker, listing the lessons in folders (separated by ':'; from $ATTNSTEP_LESSONS)
 * when given, else in the installed lessons folder and then ./lessons; the lessons it opens are
 * computed with compute and loaded with load (NULL: the defaults), and their progress is kept
 * under state_dir (borrowed; NULL: not kept), which also gives each lesson's progress in the
 * list. NULL when out of memory. */
ui_screen *ui_picker_screen_new(const char *folders, const trace_options *compute,
                                const lesson_options *load, const char *state_dir);

/* The lesson picker listing the lessons in the folder of the lesson at path, to pick one to
 * compare with it: the one picked opens side by side with that lesson, in place of the picker.
 * NULL when out of memory. */
ui_screen *ui_picker_screen_beside(const char *path, const trace_options *compute,
                                   const lesson_options *load, const char *state_dir);

/* Two lessons side by side (ui_compare.c): a and b loaded and traced with compute (with
 * report, every diagnostic to standard error). NULL with *status (as ui_lesson_open's) and the
 * first problem in error when one does not open. A leads: keys and --at move it, and B shows
 * the same stage, head and cell, at its own script step for them when it has one. */
ui_screen *ui_compare_screen_open(const char *a, const char *b, const trace_options *compute,
                                  const lesson_options *load, bool report, exit_status *status,
                                  char *error, size_t size);
/* The leading lesson's view, to place it before it is first drawn (--at, --head). */
ui_view *ui_compare_screen_view(ui_screen *screen);

/* The help overlay, listing the bindings of the screen it covers (scrolls with ↑ ↓ when long;
 * any other key or a click closes it). NULL when out of memory. */
ui_screen *ui_help_screen_new(void);

/* The sum pane over a lesson (v is its view): the selected cell's arithmetic with every term,
 * one a line, scrolled with the move keys; any other key closes it. NULL when out of memory. */
ui_screen *ui_sum_screen_new(const ui_view *v, const ui_style *st);

/* The score box over a lesson (v is its view): any key dismisses it; with leaving (it came
 * from quit) or on the quit key it leaves the lesson too. NULL when out of memory. */
ui_screen *ui_summary_screen_new(const ui_view *v, bool leaving);

/* A box over a screen that scrolls (the help overlay, the sum pane; ui_scroller.c): its struct
 * begins with this, its draw keeps top at or before its last page and sets page, and its key,
 * click and key_kind operations are the ones below. */
typedef struct {
    ui_screen base;
    int top;                     /* the first line shown */
    int page;                    /* lines the last frame showed: next and previous move a page */
    const char *kind;            /* the word of its keys in the key timings ("help-key") */
} ui_scroller;

ui_outcome ui_scroller_key(ui_screen *s, int key, const ui_style *st);
ui_outcome ui_scroller_click(ui_screen *s, int x, int y);
const char *ui_scroller_key_kind(const ui_screen *s, int key);
/* "↓ ↑ scroll, any other key closes": the footer's words for a box that scrolls. */
void ui_scroller_hint(const ui_style *st, char *text, size_t size);

/* The context of the screen beneath: an overlay's keys and help are those of what it covers
 * (the context operation of the help and the score box). */
static inline unsigned ui_screen_context_beneath(const ui_screen *s)
{
    return s->under->ops->context(s->under);
}

/* An outcome that closes nothing and opens nothing. */
#define UI_STAY ((ui_outcome){0, NULL})

#endif
