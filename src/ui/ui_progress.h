/* Progress a student keeps between runs (ui_progress.c): the answers, the score and the step
 * where each lesson was left, in one small text file per lesson under the state folder
 * ($XDG_STATE_HOME/attnstep, else ~/.local/state/attnstep, chosen by main). No curses. */
#ifndef ATTNSTEP_UI_PROGRESS_H
#define ATTNSTEP_UI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include "ui_lesson.h"
#include "ui_view.h"

/* The state folder into dir: xdg_state_home/attnstep when it is an absolute path (the XDG
 * rule: a relative one is ignored), else home/.local/state/attnstep. False (dir "") when
 * neither is usable. Either may be NULL. */
bool ui_progress_dir(const char *xdg_state_home, const char *home, char *dir, size_t size);

/* The key of a lesson's progress: a 64-bit FNV-1a hash of the lesson file's bytes, so an
 * edited lesson starts afresh instead of inheriting answers to other questions. */
unsigned long long ui_progress_hash(const char *data, size_t size);
/* The same of a file's contents; false when it cannot be read. */
bool ui_progress_hash_file(const char *path, unsigned long long *hash);

/* Where a lesson's progress lives: dir/<16 hex digits of hash>.progress. */
void ui_progress_path(const char *dir, unsigned long long hash, char *path, size_t size);

/* Seconds after which a save's temporary ("<hash>.progress.XXXXXX") is taken for one that a
 * killed save left behind. */
#define UI_PROGRESS_TEMP_AGE 60

/* Writes text as the file dir/name atomically: a temporary file in dir, written, flushed to
 * the disk (fsync), then renamed over the old one, so that a crash or kill -9 at any moment
 * leaves the old file or the new one, never a mixture. dir is made (mode 0700) when missing,
 * and temporaries older than UI_PROGRESS_TEMP_AGE seconds (killed saves') are removed from it.
 * before_rename (NULL in the program) is called between the fsync and the rename: the tests
 * kill the process there. False with the reason in error (e.g. "Read-only file system"). */
bool ui_progress_write_file(const char *dir, const char *name, const char *text,
                            void (*before_rename)(void), char *error, size_t size);

/* What a progress file says, read without the lesson (the picker's column). */
typedef struct {
    int step, steps;             /* the step left (from 0) of the walk's steps */
    bool done;                   /* the last step was reached once */
    int right, asked;            /* the score when saved */
} ui_progress_summary;

typedef enum {
    UI_PROGRESS_NONE,            /* nothing saved for this lesson */
    UI_PROGRESS_FOUND,
    UI_PROGRESS_CORRUPT          /* a file that does not read as a whole: ignored */
} ui_progress_status;

/* Reads the progress file of the lesson file at lesson_path under dir into *s. */
ui_progress_status ui_progress_read_summary(const char *dir, const char *lesson_path,
                                            ui_progress_summary *s);
/* How far a student has got in a lesson, for the picker's glyph and colour. */
typedef enum {
    UI_PROGRESS_UNTOUCHED,       /* nothing saved (or a file that does not read) */
    UI_PROGRESS_PARTIAL,         /* started, the last step never reached */
    UI_PROGRESS_DONE             /* the last step reached once */
} ui_progress_mark;

/* "done, 3/4 right", "step 5 of 13", "step 5 of 13, 2/3 right", "saved progress unreadable"
 * or "" (nothing saved): the picker's words for a lesson; returns how far it has got. */
ui_progress_mark ui_progress_describe(const char *dir, const char *lesson_path, char *text,
                                      size_t size);

/* Opening a lesson (o->state_dir set, or NULL: progress not kept): makes sure the folder can
 * be written (else o->progress_note says progress is not being saved, and v->message too, once)
 * and puts the saved answers into v, and with restore_step the step where the student stopped
 * (--at and --head say where instead). A corrupt file, or one whose walk has another length,
 * is ignored and said once in v->message. */
void ui_progress_open(ui_opened *o, ui_view *v, bool restore_step);

/* Saves v's answers, score and step for o's lesson (nothing when o->state_dir is NULL). A
 * failure never stops the lesson: o->progress_note says progress is not being saved, and a
 * later save that works clears it. */
void ui_progress_save(ui_opened *o, const ui_view *v);

/* The text of a progress file for v (done: the last step was reached once); the length it
 * needs, as snprintf. */
int ui_progress_format(const ui_view *v, bool done, const char *lesson_path, char *text,
                       size_t size);

/* Clears saved progress under dir: every lesson's (lesson_path NULL), or one lesson's (the file
 * of its present contents, and every file saved for the same path under older contents).
 * Returns the number of files removed, or -1 with the reason in error. */
int ui_progress_reset(const char *dir, const char *lesson_path, char *error, size_t size);

#endif
