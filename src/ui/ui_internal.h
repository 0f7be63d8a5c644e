/* Internals shared by the UI's files (ui*.c) and its tests: the view model, the key bindings,
 * key scripts, text handling and drawing. Not part of the program's API; see ui.h for that. */
#ifndef ATTNSTEP_UI_INTERNAL_H
#define ATTNSTEP_UI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>
#include "trace.h"
#include "lesson.h"
#include "ui.h"

/* ---- how to draw (decided once per run from the locale, the terminal and --color) ---- */
typedef struct {
    bool utf8;      /* the locale shows UTF-8; otherwise ASCII text and ACS/ASCII lines */
    int colors;     /* 0 (no colour: shade glyphs instead), 8 or 256 */
} ui_style;

/* ---- actions and the one table of key bindings (ui_keys.c) ---- */
typedef enum {
    UI_ACT_NONE,
    UI_ACT_QUIT, UI_ACT_HELP, UI_ACT_REDRAW,
    UI_ACT_NEXT, UI_ACT_PREV, UI_ACT_FIRST, UI_ACT_LAST,
    UI_ACT_HEAD_NEXT, UI_ACT_HEAD_PREV, UI_ACT_HEAD_NUMBER,
    UI_ACT_MOVE,
    UI_ACT_STEP_IN, UI_ACT_STEP_OUT, UI_ACT_HEATMAP,
    UI_ACT_CHOOSE, UI_ACT_HIGHLIGHT, UI_ACT_TYPE, UI_ACT_ERASE, UI_ACT_ANSWER, UI_ACT_SKIP,
    UI_ACT_OPEN,
    UI_ACT_COUNT
} ui_action;

/* Directions of UI_ACT_MOVE: the index of its key, modulo 4. */
enum { UI_DIR_LEFT, UI_DIR_DOWN, UI_DIR_UP, UI_DIR_RIGHT };

/* Where a binding applies: a lesson, the picker, or a question waiting for its answer (one of
 * the choices, or a typed number), whose keys are their own context. */
enum { UI_IN_LESSON = 1, UI_IN_PICKER = 2, UI_IN_CHOICE = 4, UI_IN_NUMBER = 8 };
#define UI_IN_QUESTION (UI_IN_CHOICE | UI_IN_NUMBER)

/* The characters of a typed number, in the order of UI_ACT_TYPE's keys (its arg indexes this). */
#define UI_TYPED_CHARS "0123456789.-"

/* Curses function keys are kept apart from characters (which go up to 0x10FFFF). */
#define UI_KEY(k) (0x110000 + (k))

#define UI_MAX_KEYS 16
typedef struct {
    ui_action action;
    unsigned contexts;         /* UI_IN_LESSON and/or UI_IN_PICKER */
    int keys[UI_MAX_KEYS];     /* 0-terminated */
    const char *bar;           /* short label for the key bar, NULL to leave it out */
    const char *help;          /* the help overlay's description */
    int bar_keys;              /* how many keys the bar shows side by side (0: the first);
                                  keys[n…2n-1] stand in where keys[0…n-1] are not single
                                  characters (arrows in an ASCII locale) */
} ui_binding;

const ui_binding *ui_bindings(int *count);

/* The action key has in context; arg receives the key's index in its binding (so the head
 * for UI_ACT_HEAD_NUMBER is arg + 1 and the direction of UI_ACT_MOVE is arg % 4). */
ui_action ui_key_action(int key, unsigned context, int *arg);

/* How a key is shown to people ("n", "Space", "PgDn", "←"); ASCII unless utf8. */
const char *ui_key_label(int key, bool utf8, char *buffer, size_t size);

/* The keys the key bar shows for a binding, e.g. "n" or "←↓↑→". */
void ui_binding_bar_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size);
/* Every key of a binding for the help overlay, e.g. "n Space PgDn" or "1–9". */
void ui_binding_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size);

/* ---- key scripts for headless runs (ui_keys.c); the format is described in ui.h ---- */
/* UI_EV_TICK: the terminal's input timed out (time to look at the lesson file again);
 * UI_EV_RELOAD: a key script's "reload" (look now) or "reload FILE" (as if the lesson's file had
 * just been saved with FILE's text), so reloading is tested without timing. */
typedef enum {
    UI_EV_KEY, UI_EV_RESIZE, UI_EV_CLICK, UI_EV_DUMP, UI_EV_TICK, UI_EV_RELOAD, UI_EV_END
} ui_event_kind;

typedef struct {
    ui_event_kind kind;
    int key;        /* UI_EV_KEY */
    int x, y;       /* UI_EV_CLICK: column and row; UI_EV_RESIZE: columns and rows */
    char file[256]; /* UI_EV_RELOAD: FILE, or "" to look at the lesson's own file */
} ui_event;

/* Parses one script line. Returns 1 with ev filled, 0 for a blank or comment line, -1 with a
 * reason in error for a line it does not understand. */
int ui_script_parse_line(const char *line, ui_event *ev, char *error, size_t size);

/* Reads a whole script. Returns 0, or the exit status (64 bad line, 66 unreadable) with a
 * one-line message "path:line: ..." in error. */
int ui_script_load(const char *path, ui_event **events, int *count, char *error, size_t size);

/* ---- text (ui_text.c): UTF-8 in, wide characters out, ASCII when the locale is not UTF-8 ---- */
size_t ui_text_widen(const char *s, bool utf8, wchar_t *out, size_t capacity);
int ui_text_width(const wchar_t *s, size_t n);
/* How many characters of s (n of them) fit in width columns; *used gets their width. */
size_t ui_text_fit(const wchar_t *s, size_t n, int width, int *used);

typedef struct { size_t start, length; } ui_span;
/* Word-wraps s into lines of at most width columns; '\n' breaks a line. Fills up to
 * max_lines spans and returns how many lines the whole text needs. */
int ui_text_wrap(const wchar_t *s, size_t n, int width, ui_span *lines, int max_lines);

/* ---- the view model of one lesson (ui_view.c, no curses) ---- */

/* Where a step's question stands. Right or wrong is judged from the answer given whenever it
 * is shown, so a reload that changes the lesson's answer judges again. */
typedef enum {
    UI_Q_NONE,        /* the step asks nothing */
    UI_Q_OPEN,        /* asked and waiting: the stage's numbers and narration are hidden */
    UI_Q_ANSWERED,    /* answered (given_choice or given_number); counts in the score */
    UI_Q_REVEALED     /* skipped, or opened straight at with --at: shown, not scored */
} ui_question;

typedef struct {
    stage_id stage;
    int head;                   /* from 1; 1 for stages that are not per head */
    int focus_row, focus_col;   /* the narration's cell, -1 without */
    const char *say;            /* borrowed narration text, or NULL */
    const lesson_step *item;    /* borrowed narration item (for its question), or NULL */
    ui_question question;
    int given_choice;           /* UI_Q_ANSWERED with choices: the index picked */
    double given_number;        /* UI_Q_ANSWERED, numeric: the number typed */
    /* The finite extremes of the step's matrix (for the legend and the width of the numbers),
     * measured for every step by ui_view_init: a 1024-token stage is a million cells, too many
     * to scan on a keypress. */
    double lo, hi;
} ui_step;

typedef struct {
    const trace *t;
    ui_step *steps;
    int n_steps;
    int step;                   /* the current step, index into steps */
    int row, col;               /* the selected cell */
    bool stepped_in;            /* filling the stage: cells after the selected one are hidden */
    bool heat_weights;          /* weights on the sequential ramp (default on) */
    bool heat_signed;           /* other matrices on the diverging ramp (default off) */
    bool help;                  /* the help overlay is shown */
    int help_top;               /* its first line, when it is longer than the screen */
    int top, left;              /* first visible row and column of the matrix */
    char message[200];          /* a one-off remark for the status line, "" for none */
    double lo, hi;              /* the finite extremes of the current step's matrix (drawing
                                   copies them from the step) */
    int label_w[AXIS_HEAD_DIMS + 1];  /* widest label of each axis, 0 until first drawn: the
                                   labels of 1024 tokens are too many to measure on every key */
    int pick;                   /* an open choice question: the highlighted choice, -1 none */
    char typed[24];             /* an open numeric question: what has been typed */
    bool summary;               /* the score is shown; the next key dismisses it */
    bool leaving;               /* ... and then leaves the lesson (it came from quit) */
    char reload_error[512];     /* why the lesson's file did not reload (escaped), or "" */
} ui_view;

/* Builds the walk: every stage of the trace in table order, per-head stages once per head,
 * with the narration's steps placed at their stage and head (several in lesson order), and
 * measures every step's extremes (a scan of each stored matrix, once, at load). Returns false
 * when out of memory. */
bool ui_view_init(ui_view *v, const trace *t, const lesson_step *narration, int n_narration);
void ui_view_free(ui_view *v);

const ui_step *ui_view_current(const ui_view *v);
int ui_view_rows(const ui_view *v);
int ui_view_cols(const ui_view *v);

/* The first step showing stage (at head, for per-head stages), or -1. */
int ui_view_find(const ui_view *v, stage_id stage, int head);
void ui_view_goto(ui_view *v, int step);
/* Opens at a cell (as from --at); false when the trace has no such step. */
bool ui_view_open_at(ui_view *v, const trace_cell *cell);

/* Applies an action; returns false when it asks to quit. */
bool ui_view_apply(ui_view *v, ui_action action, int arg);

/* Rebuilds the view on a reloaded lesson's trace and narration, keeping the stage, head and
 * ordinal of the current step, the selected cell (clamped), the display toggles and the
 * answers given to questions that are still asked the same way. False when out of memory
 * (v is then unchanged). */
bool ui_view_rebuild(ui_view *v, const trace *t, const lesson_step *narration, int n_narration);

/* Questions: the key context of the current step (UI_IN_CHOICE or UI_IN_NUMBER while its
 * question waits, else UI_IN_LESSON); the score; and the one-line verdict of a step's answered
 * or revealed question, with its numbers read from the trace, e.g.
 * "Not quite: the answer is animal (0.8485); street gets 0.0696" ("" when there is none). */
unsigned ui_view_context(const ui_view *v);
bool ui_view_question_open(const ui_view *v);
void ui_view_score(const ui_view *v, int *right, int *asked, int *questions);
void ui_view_verdict(const ui_view *v, int step, int precision, char *text, size_t size);
/* Opening straight at a step (--at) shows it: its question is revealed, not asked. */
void ui_view_reveal(ui_view *v);

/* Whether a cell is shown (stepping in hides the cells after the selected one). */
bool ui_view_is_filled(const ui_view *v, int row, int col);
/* Whether the current stage is drawn as a heatmap. */
bool ui_view_heatmap(const ui_view *v);
/* Scrolls so the selected cell is among the visible rows and columns. */
void ui_view_scroll(ui_view *v, int visible_rows, int visible_cols);

/* ---- drawing (ui_draw.c, ui_matrix.c; curses) ---- */
enum { UI_PAIR_ACCENT = 1 };   /* colour pair of remarks and the current stage */
#define UI_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static inline int ui_clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}
#define UI_MIN_COLS 36
#define UI_MIN_ROWS 10

/* Where things were drawn, so a mouse click can be mapped back to a cell or a step. */
typedef struct {
    int grid_y, grid_x;          /* screen position of the first visible cell */
    int cell_w;                  /* columns per cell */
    int vis_rows, vis_cols;      /* cells visible */
    int list_y, list_x, list_w;  /* the stage list */
    int list_first, list_count;  /* steps shown in the stage list, one per line */
    int list_steps[256];         /* the step each stage-list line opens */
} ui_layout;

/* Sets up colour pairs and returns how many colours the UI will use (0, 8 or 256). */
int ui_colors_init(ui_color choice);

bool ui_screen_too_small(void);
void ui_draw_too_small(const ui_style *st);
void ui_draw_lesson(ui_view *v, const char *title, const ui_style *st, int precision,
                    ui_layout *layout);
/* The score before leaving (ui_view's summary), one line in a box. */
void ui_draw_summary(const ui_view *v, const ui_style *st);
/* The help overlay, generated from the key table; *top is its first line when it scrolls. */
void ui_draw_help(unsigned context, const ui_style *st, int *top);
/* The matrix pane in the given rectangle; fills layout's grid for mouse hits. */
void ui_draw_matrix(ui_view *v, int y, int x, int width, int height, const ui_style *st,
                    int precision, ui_layout *layout);
/* text cut to width columns, ending in "…" when it had to be cut (a matrix label, a long
 * status line). */
void ui_cut_text(const char *text, int width, const ui_style *st, char *out, size_t size);
/* Columns text takes on screen. */
int ui_width(const char *text, const ui_style *st);
/* The label of an action's first key, so text that names a key follows the table. */
const char *ui_action_key(ui_action action, unsigned context, const ui_style *st,
                          char *buffer, size_t size);
void ui_draw_bar(unsigned context, const ui_style *st);
/* Draws text in exactly width columns, padded with spaces in the same attributes so colour
 * backgrounds fill the field. Returns the columns the text itself took. */
enum { UI_LEFT, UI_RIGHT, UI_CENTER };
int ui_field(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
             int pair, int align);
/* Draws UTF-8 text at y, x in at most width columns; returns the columns used. */
int ui_put(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
           int pair);
void ui_draw_hline(int y, int x, int width, const ui_style *st);
void ui_draw_vline(int y, int x, int height, const ui_style *st);
void ui_draw_box(int y, int x, int height, int width, const ui_style *st);

/* Maps a click to a cell (returns 1, fills row/col) or a stage-list line (returns 2, fills
 * step), or returns 0. */
int ui_layout_hit(const ui_layout *layout, const ui_view *v, int x, int y,
                  int *row, int *col, int *step);

/* ---- the lesson picker (ui_picker.c) ---- */
typedef struct {
    char *path, *title, *about;
    char *error;                 /* the first diagnostic when the lesson does not load */
} ui_lesson_entry;

typedef struct {
    ui_lesson_entry *items;
    int count, selected, top;
    char searched[512];          /* the folders looked in, for the "none found" message */
    char message[512];           /* status line: why a lesson did not open */
    bool help;
    int help_top;
} ui_picker;

/* Lists the lessons in $ATTNSTEP_LESSONS (folders separated by ':') if set, else in the
 * installed lessons folder and then ./lessons. */
bool ui_picker_scan(ui_picker *p);
void ui_picker_free(ui_picker *p);
void ui_picker_draw(ui_picker *p, const ui_style *st);
/* The lesson drawn at screen row y, or -1. */
int ui_picker_hit(const ui_picker *p, int y);
/* Applies an action; returns false on quit. UI_ACT_OPEN is left to the caller. */
bool ui_picker_apply(ui_picker *p, ui_action action, int arg);

/* ---- an open lesson and its file (ui_lesson.c) ---- */
typedef struct {
    lesson l;
    trace t;                     /* t.in points into l: the pair stays where it was made */
} ui_opened;

/* Loads and traces path into a new ui_opened (or, with text, parses text as if it were path's
 * contents). Returns 0, or the exit status (65 bad lesson, 66 unreadable, 70) with the first
 * problem, escaped, as "path:line:col: error: message" in error; with report, every diagnostic
 * also goes to standard error. */
int ui_lesson_open(const char *path, const char *text, size_t text_size, ui_opened **out,
                   bool report, char *error, size_t size);
void ui_lesson_close(ui_opened *o);

/* What a file looked like when last seen: whether it exists, its inode, size and mtime. */
typedef struct {
    bool present;
    unsigned long long dev, ino;
    long long size, mtime_sec, mtime_nsec;
} ui_file_stamp;

ui_file_stamp ui_file_stamp_of(const char *path);
bool ui_file_stamp_equal(const ui_file_stamp *a, const ui_file_stamp *b);

/* Follows the open lesson's file: when its stamp differs from *seen (or always, with from, a
 * file whose text stands in for the lesson's), reloads it and rebuilds v on the new trace; a
 * broken, half-written or vanished file keeps *o and v as they were and puts its first
 * diagnostic in v->reload_error until a later save loads. Returns whether v changed. */
bool ui_lesson_follow(ui_opened **o, ui_view *v, ui_file_stamp *seen, const char *from);

#endif
