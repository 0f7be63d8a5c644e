/* The classroom in the UI (issue #14, ui_class.c): a leader sends where its lesson view is to
 * every follower; a follower shows the leader's step, head, selected cell and open question on
 * its own screen until a key of its own moves it (it is then on its own; f follows again). No
 * curses: the view model and the transport (net.h) only. ui_class_screen.c puts a class on the
 * stack of screens, around the lesson screen it drives. */
#ifndef ATTNSTEP_UI_CLASS_H
#define ATTNSTEP_UI_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include "exit_status.h"
#include "lesson_edit.h"
#include "ui_view.h"

typedef struct ui_class ui_class;

typedef struct {
    bool lead;                 /* --lead */
    const char *listen;        /* --listen ADDR:PORT for the leader, or NULL (127.0.0.1:7340) */
    const char *follow;        /* --follow HOST:PORT, or NULL */
    const char *code;          /* --code: 16 hex digits; NULL: a leader draws a fresh one */
    const char *name;          /* --name of a follower, or NULL ("student") */
    const char *key;           /* --key: the leader's public key, for a follower, or NULL */
    int per_address;           /* --per-address: a leader's limit of followers from one
                                  address (0: NET_DEFAULT_PER_ADDRESS) */
    bool encrypt;              /* --encrypt: a leader's CURVE on loopback too */
} ui_class_options;

/* Starts leading or following the lesson whose text has hash. The leader says on stderr
 * where it listens (the address bound: "every address of this machine" for 0.0.0.0) and what
 * its followers type (the port, the class code, and the key when it encrypts). NULL with *status and a message on
 * stderr when it cannot (a malformed code, address or name: 64; an address in use: 70). */
ui_class *ui_class_open(const ui_class_options *o, unsigned long long hash, exit_status *status);
/* Says bye and closes; NULL is allowed. */
void ui_class_close(ui_class *c);

/* Handles the network: the leader sends v's place when it moved and counts its class; a
 * following follower takes the leader's place into v. Returns whether v or the status
 * changed (draw again). now: CLOCK_MONOTONIC seconds. */
bool ui_class_poll(ui_class *c, ui_view *v, double now);

/* A follower's key, before the screen has it: f follows again (true: the key is used up). */
bool ui_class_key(ui_class *c, ui_view *v, int key, double now);
/* A follower's place before a key, and after it: one that moved it to another step or matrix,
 * or to another cell when no question was waiting, puts it on its own (answering a question
 * does not, though the answer may select the question's cell). */
typedef struct { int step, shown, row, col; bool off_script, question_open; } ui_class_place;
ui_class_place ui_class_place_of(const ui_view *v);
void ui_class_moved(ui_class *c, const ui_class_place *before, ui_view *v);

/* In a class, the leader's what-if edits (issue 29) reach every follower, following or on its
 * own (the class works on one lesson): a follower's numbers are the lesson as written, the
 * leader's edits, then its own on top (ui_edit_take_leader). Its latest edits as this
 * follower took them, checked against its lesson: false before any arrived (and for the
 * leader). The class screen hands them to its lesson screen on every poll. */
bool ui_class_leader_edits(const ui_class *c, const lesson_edit **edits, int *count);

/* The status line's text: "leading :PORT · code CODE · 28/30 here" (followers showing the
 * leader's place, of those joined) or, while a question is open, the tally in the whole room:
 * "answered 12/30: 1×8 2×4", or for numbers a histogram, "answered 12/30: 0.5 ▕█  ▂ █▏ 0.63 ·
 * 6 right · median 0.6" (ui_tally.h; "right" when the lesson knows the key, never shown) and,
 * when three or fewer are left, " · waiting: NAME, NAME" (escaped; in a number question in
 * place of the median),
 * "following",
 * "on your own — f to follow", "joining HOST:PORT…". */
void ui_class_status(const ui_class *c, char *text, size_t size);

/* For key scripts' "await joined N" and "await synced": the followers heard from, and of them
 * those showing the leader's place (-1 for a follower). */
int ui_class_joined(const ui_class *c, double now);
/* The leader: how many answered the question open now (-1 for a follower). */
int ui_class_answered(const ui_class *c, double now);
int ui_class_synced(const ui_class *c, double now);

/* The leader's boxes (r and W), as text of lines each ending in '\n' (cut at size); false for
 * a follower. The results: every question of this class so far, in the order of the script
 * (ui_tally_results_text), at most UI_CLASS_MAX_RESULTS. The roster: "30 followers · 28 here ·
 * 12 answered the open question", then a line per follower in the order they joined: its name
 * (escaped, cut on a whole character to UI_CLASS_NAME_COLUMNS columns), where it is ("step 5
 * · head 2", "off the script · head 1", "joining"), "answered" when it answered the open
 * question, and the seconds since its last message. */
enum { UI_CLASS_MAX_RESULTS = 256, UI_CLASS_NAME_COLUMNS = 20 };
bool ui_class_results_text(const ui_class *c, char *text, size_t size);
bool ui_class_roster_text(const ui_class *c, const ui_view *v, double now, char *text,
                          size_t size);

/* Whether a follower holds back an answer it sent (its question shows as open until the
 * leader reveals). */
bool ui_class_holds_answer(const ui_class *c);

/* The seq of the leader's place a follower last took into its view, or -1. */
long ui_class_taken(const ui_class *c);

/* Whether a follower's class has ended: the leader refused it (code, lesson) or said bye.
 * *status and the message (escaped-safe: hex and fixed words) say why; a bye is status 0. */
bool ui_class_ended(const ui_class *c, exit_status *status, char *message, size_t size);

#endif
