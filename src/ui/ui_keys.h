/* The one table of key bindings (the key bar, the help overlay, --help-keys and the man page
 * come from it), key names for people and for key scripts, and the key-script reader of
 * headless runs (ui_keys.c). No curses state: only curses' key codes. */
#ifndef ATTNSTEP_UI_KEYS_H
#define ATTNSTEP_UI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include "exit_status.h"

typedef enum {
    UI_ACT_NONE,
    UI_ACT_QUIT, UI_ACT_HELP, UI_ACT_REDRAW,
    UI_ACT_NEXT, UI_ACT_PREV, UI_ACT_FIRST, UI_ACT_LAST,
    UI_ACT_HEAD_NEXT, UI_ACT_HEAD_PREV, UI_ACT_HEAD_NUMBER,
    UI_ACT_MOVE, UI_ACT_PAGE,
    UI_ACT_STEP_IN, UI_ACT_STEP_OUT, UI_ACT_HEATMAP, UI_ACT_SUM,
    UI_ACT_STAGE_NEXT, UI_ACT_STAGE_PREV,
    UI_ACT_PAIR,                /* the stage shown beside this one (its row's `beside`) */
    UI_ACT_CHOOSE, UI_ACT_HIGHLIGHT, UI_ACT_TYPE, UI_ACT_ERASE, UI_ACT_ANSWER, UI_ACT_SKIP,
    UI_ACT_OPEN,
    /* the lesson screen's display keys, in this order from MORE_DECIMALS to PRESENT */
    UI_ACT_MORE_DECIMALS, UI_ACT_FEWER_DECIMALS, UI_ACT_STEP_LIST, UI_ACT_PALETTE,
    UI_ACT_NARRATION_SCROLL, UI_ACT_PRESENT,
    UI_ACT_COMPARE,
    UI_ACT_SWAP,                /* a comparison: the other lesson leads */
    UI_ACT_RESET,               /* the picker: forget the selected lesson's progress */
    /* while a recorded demo replays (--replay) */
    UI_ACT_REPLAY_PAUSE, UI_ACT_REPLAY_FASTER, UI_ACT_REPLAY_SLOWER, UI_ACT_REPLAY_STOP,
    /* a follower in a class (--follow) */
    UI_ACT_FOLLOW,
    /* a leader (--lead): the results of the class's questions, the roster of its followers */
    UI_ACT_RESULTS, UI_ACT_ROSTER,
    /* what if? (ui_edit.h): change a number, undo the last change or every one */
    UI_ACT_EDIT, UI_ACT_UNDO, UI_ACT_UNDO_ALL, UI_ACT_WRITE, UI_ACT_PARAMETERS,
    /* a lesson that trains (train:): the matrix at the step before or after, the loss curve */
    UI_ACT_TRAIN_PREV, UI_ACT_TRAIN_NEXT, UI_ACT_LOSS_CURVE,
    UI_ACT_COUNT
} ui_action;

/* Directions of UI_ACT_MOVE: the index of its key, modulo 4 (UI_ACT_PAGE: 0 left, 1 right). */
enum { UI_DIR_LEFT, UI_DIR_DOWN, UI_DIR_UP, UI_DIR_RIGHT };

/* Where a binding applies: a lesson, the picker, or a question waiting for its answer (one of
 * the choices, or a typed number), whose keys are their own context; a comparison is a lesson
 * with keys of its own besides (its context is UI_IN_LESSON | UI_IN_COMPARE). */
enum { UI_IN_LESSON = 1, UI_IN_PICKER = 2, UI_IN_CHOICE = 4, UI_IN_NUMBER = 8, UI_IN_COMPARE = 16,
       UI_IN_REPLAY = 32, /* a recorded demo playing on the terminal (--replay) */
       UI_IN_CLASS = 64, /* a follower in a class (--follow), asked before the screen's own */
       UI_IN_LEAD = 256, /* a leader of a class (--lead): added to its lesson's context */
       UI_IN_EDIT = 2048 /* a lesson's edit line is open (=, ui_edit.h) */ };
#define UI_IN_QUESTION (UI_IN_CHOICE | UI_IN_NUMBER)
/* A lesson's binding with this bit does not apply in a comparison (it has no step list, no
 * presentation, no third lesson to pick): the key bar, the help and the keys leave it out there. */
enum { UI_NOT_COMPARE = 128 };
/* A binding with UI_LEADER_ONLY applies only where the context has UI_IN_LEAD, one with
 * UI_NOT_LEADER only where it has not: the same key with a leader's own words (Esc reveals the
 * question to the class, where a student's Esc skips it). */
enum { UI_LEADER_ONLY = 512, UI_NOT_LEADER = 1024 };

/* The characters of a typed number, in the order of UI_ACT_TYPE's keys (its arg indexes this). */
#define UI_TYPED_CHARS "0123456789.-"

/* Curses function keys are kept apart from characters (which go up to 0x10FFFF). */
#define UI_KEY(k) (0x110000 + (k))

#define UI_MAX_KEYS 16
typedef struct {
    ui_action action;
    unsigned contexts;         /* UI_IN_LESSON, UI_IN_PICKER…, and UI_NOT_COMPARE */
    int keys[UI_MAX_KEYS];     /* 0-terminated */
    const char *bar;           /* short label for the key bar, NULL to leave it out */
    const char *help;          /* the help overlay's description */
    int bar_keys;              /* how many keys the bar shows side by side (0: the first);
                                  keys[n…2n-1] stand in where keys[0…n-1] are not single
                                  characters (arrows in an ASCII locale) */
} ui_binding;

const ui_binding *ui_bindings(int *count);

/* Whether binding applies in context (a screen's context, e.g. UI_IN_LESSON | UI_IN_COMPARE):
 * the one test of the keys, the key bar and the help. */
bool ui_binding_applies(const ui_binding *binding, unsigned context);

/* The action key has in context; arg receives the key's index in its binding (so the head
 * for UI_ACT_HEAD_NUMBER is arg + 1 and the direction of UI_ACT_MOVE is arg % 4). */
ui_action ui_key_action(int key, unsigned context, int *arg);

/* How a key is shown to people ("n", "Space", "PgDn", "←"); ASCII unless utf8. */
const char *ui_key_label(int key, bool utf8, char *buffer, size_t size);

/* The label of an action's first key in context, so text that names a key follows the table;
 * "?" when no key does it there. */
const char *ui_action_key(ui_action action, unsigned context, bool utf8, char *buffer,
                          size_t size);

/* The keys the key bar shows for a binding, e.g. "n" or "←↓↑→". */
void ui_binding_bar_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size);
/* Every key of a binding for the help overlay, e.g. "n Space PgDn" or "1–9". */
void ui_binding_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size);

/* ---- key scripts for headless runs; the format is described in ui.h ---- */
/* UI_EV_TICK: the terminal's input timed out (time to look at the lesson file again);
 * UI_EV_RELOAD: a key script's "reload" (look now) or "reload FILE" (as if the lesson's file had
 * just been saved with FILE's text), so reloading is tested without timing;
 * UI_EV_CLEARS: a key script's "clears" (say how often the terminal has been cleared so far), so
 * a full redraw such as Ctrl-L's is tested without a real terminal. */
/* UI_EV_AWAIT: a key script waits until its class is ready (key says for what, x is N):
 * a leader's "await joined N" (N followers heard from), "await synced" (every follower shows
 * the leader's place), "await answered N" (N of them answered the open question); a
 * follower's "await question" (it shows the leader's open question). */
/* A leader's "await here N": exactly N followers are at its place (each follower's own step and
 * head, as it last said). */
enum { UI_AWAIT_JOINED, UI_AWAIT_SYNCED, UI_AWAIT_ANSWERED, UI_AWAIT_QUESTION, UI_AWAIT_HERE };
/* UI_EV_WAIT: a recording's "wait MS", the time between two events (--record writes it,
 * --replay waits it, --keys runs skip it). */
typedef enum {
    UI_EV_KEY, UI_EV_RESIZE, UI_EV_CLICK, UI_EV_DUMP, UI_EV_TICK, UI_EV_RELOAD, UI_EV_CLEARS,
    UI_EV_WAIT, UI_EV_AWAIT, UI_EV_END
} ui_event_kind;

/* The longest wait a script may hold, in milliseconds (an hour). */
#define UI_SCRIPT_MAX_WAIT_MS 3600000

typedef struct {
    ui_event_kind kind;
    int key;        /* UI_EV_KEY; UI_EV_AWAIT: UI_AWAIT_JOINED, _SYNCED, _ANSWERED, _QUESTION */
    int ms;         /* UI_EV_WAIT: milliseconds, 0 to UI_SCRIPT_MAX_WAIT_MS */
    int x, y;       /* UI_EV_CLICK: column and row; UI_EV_RESIZE: columns and rows;
                       UI_EV_AWAIT: x as above */
    char file[256]; /* UI_EV_RELOAD: FILE, or "" to look at the lesson's own file */
} ui_event;

/* Parses one script line. Returns 1 with ev filled, 0 for a blank or comment line, -1 with a
 * reason in error for a line it does not understand. */
int ui_script_parse_line(const char *line, ui_event *ev, char *error, size_t size);

/* Writes ev as one script line (with its '\n') into line: the line ui_script_parse_line reads
 * back as ev. False, with nothing written, for an event a script cannot hold (a tick, the end,
 * a key without a script name: keys outside the key table's printable ASCII and named keys).
 * A resize is written with ev->x and ev->y. */
bool ui_script_format_event(const ui_event *ev, char *line, size_t size);

/* A script as loaded: each line that holds an event as one step of 12 bytes (its kind and
 * two numbers; a reload's file in the names after the steps), so that a long script costs what
 * its lines say, not a ui_event's 280 bytes each. At most UI_SCRIPT_MAX_LINES lines and
 * UI_SCRIPT_MAX_NAMES bytes of reload file names: a 10 M-line script is refused at its line
 * 1,000,001, having taken some 16 MB, instead of taking 2.7 GB. */
#define UI_SCRIPT_MAX_LINES 1000000
#define UI_SCRIPT_MAX_NAMES ((size_t)16 << 20)
typedef struct {
    unsigned char kind;   /* a ui_event_kind */
    int a, b;             /* key or ms, and x; or x and y; a reload: 1 + its file's offset in
                             names, or 0 for the lesson's own file */
} ui_script_step;
typedef struct {
    ui_script_step *steps;
    int count;
    char *names;          /* the reload files, each NUL-terminated */
    size_t names_used;
} ui_script;

/* Reads a whole script into *script (free it with ui_script_free). Returns EXIT_STATUS_OK,
 * or EXIT_STATUS_USAGE (a bad line, or too many), EXIT_STATUS_NO_INPUT (unreadable) or
 * EXIT_STATUS_SOFTWARE (no memory) with a one-line message "path:line: ..." in error. */
exit_status ui_script_load(const char *path, ui_script *script, char *error, size_t size);

/* The event of step i. */
ui_event ui_script_event(const ui_script *script, int i);

void ui_script_free(ui_script *script);

#endif
