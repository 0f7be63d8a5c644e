/* Screens as operations: every screen of the UI (a lesson, the lesson picker, a comparison, the
 * help overlay, the sum pane, the score box and the classroom around a lesson) is one module
 * behind the same small set of operations, so the main loop (ui.c) keeps a stack of screens,
 * draws it and sends each event to the top without knowing which screen it drives. Overlays
 * are pushed over the screen they cover and popped when dismissed. A screen driven from outside
 * too (the classroom's network) says so through the optional operations at the end of
 * ui_screen_ops, which the loop asks of every screen on the stack. */
#ifndef ATTNSTEP_UI_SCREEN_H
#define ATTNSTEP_UI_SCREEN_H

#include <stdbool.h>
#include "exit_status.h"
#include "ui_class.h"
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

/* Why a screen ended the run before its input did (a follower whose class ended): the run's
 * exit status, and when that is not 0 the words said on stderr after "attnstep: " (fixed words
 * and numbers only: they are written as they are). */
typedef struct {
    bool ended;
    exit_status status;
    char why[400];
} ui_ending;

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

    /* ---- Driven from outside as well as by keys (the classroom, ui_class_screen.c). Every one
     * of these may be 0 or NULL (nothing outside), and each is asked of every screen on the
     * stack, not only of the top one. ---- */
    /* How often, in ms, the screen wants poll called while the input is quiet (0: the loop's
     * own pace, a quarter of a second, is enough). */
    int poll_ms;
    /* After each event the stack handled, and while a key script awaits: the screen looks
     * outside (now: CLOCK_MONOTONIC seconds). Returns whether it must be drawn again; it ends
     * the run by filling *ending (its ended set). */
    bool (*poll)(ui_screen *s, double now, ui_ending *ending);
    /* A key, offered before the top screen has it, even while the terminal is too small to
     * draw: true when the screen took it (the top screen then never sees it). */
    bool (*claim)(ui_screen *s, int key, double now);
    /* A key script's "await" (ev is the UI_EV_AWAIT): whether what it waits for has come. The
     * loop polls the stack until every screen with this operation says so (with none, nothing
     * is awaited), and ends the run with status 70 after a minute. */
    bool (*ready)(ui_screen *s, const ui_event *ev, double now);
    /* Whether the screen has moved by itself since it was last asked, in a way whose every
     * frame counts (a follower that took the leader's place): headless, the frame drawn next is
     * written out, and while a key script awaits it is drawn at once. */
    bool (*news)(ui_screen *s);
    /* Headless: whether the run goes on polling once its key script has ended, until a poll
     * ends it (a follower goes on until its leader says bye). */
    bool (*outlasts_script)(const ui_screen *s);
} ui_screen_ops;

/* Each screen's own struct begins with this. */
struct ui_screen {
    const ui_screen_ops *ops;
    ui_screen *under;   /* the screen beneath on the stack (set when pushed), NULL at the bottom */
};

/* A lesson: takes o (closed with the screen); NULL when out of memory (o is then closed). */
ui_screen *ui_lesson_screen_new(ui_opened *o);
/* The view of a lesson screen, to place it before it is first drawn (--at, --head), or to wrap
 * it in a classroom; the loop never asks (it drives screens only through their operations). */
ui_view *ui_lesson_screen_view(ui_screen *screen);
/* A follower's lesson screen takes its class leader's edits (ui_edit_take_leader) and shows
 * the lesson's own trace again (a trained step's was made before them); true when that
 * changed the numbers. */
bool ui_lesson_screen_take_edits(ui_screen *screen, const lesson_edit *edits, int count);

/* A classroom around a lesson screen (ui_class_screen.c): leads or follows (o, ui_class.h) the
 * lesson that inner shows, whose text has hash; it takes inner (closed with it, or at once when
 * the class does not open). Keys, clicks, drawing and the lesson's file are inner's; the
 * classroom adds the network (polled every 30 ms), the class's words in the status line, the
 * follower's f, and a key script's "await". A follower whose class ends ends the run when
 * headless, and on the terminal only when the leader refused it (after a bye the student goes
 * on alone). NULL with *status when the class does not open (said on stderr by ui_class_open)
 * or there is no memory. */
ui_screen *ui_class_screen_new(ui_screen *inner, const ui_class_options *o,
                               unsigned long long hash, bool headless, exit_status *status);

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
 * the same stage, head and cell, at its own script step for them when it has one. With
 * train_step ≥ 0 (--train-step; -1: none), B is shown at its weights after that many updates
 * of its training (its pane's title says "trained N/STEPS"): 64 when B does not train or
 * trains for fewer steps, 65 when its training overflows. */
ui_screen *ui_compare_screen_open(const char *a, const char *b, const trace_options *compute,
                                  const lesson_options *load, int train_step, bool report,
                                  exit_status *status, char *error, size_t size);
/* The leading lesson's view, to place it before it is first drawn (--at, --head). */
ui_view *ui_compare_screen_view(ui_screen *screen);

/* The help overlay, listing the bindings of the screen it covers (scrolls with ↑ ↓ when long;
 * any other key or a click closes it). NULL when out of memory. */
ui_screen *ui_help_screen_new(void);

/* The sum pane over a lesson (v is its view): the selected cell's arithmetic with every term,
 * one a line, scrolled with the move keys; any other key closes it. NULL when out of memory. */
ui_screen *ui_sum_screen_new(const ui_view *v, const ui_style *st);

/* A box of text over a screen (ui_sum.c, the sum pane's box): title (static, e.g. " class
 * results ") and text's lines (copied; '\n' between them), scrolled with the move keys; any
 * other key closes it. NULL when out of memory. */
ui_screen *ui_text_screen_new(const char *title, const char *text);

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
