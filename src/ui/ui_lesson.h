/* An open lesson and its file (ui_lesson.c): loading and tracing it, and following the file
 * while it is shown, so an author who saves sees the new numbers at once and a broken save
 * never costs the view. */
#ifndef ATTNSTEP_UI_LESSON_H
#define ATTNSTEP_UI_LESSON_H

#include <stdbool.h>
#include <stddef.h>
#include "exit_status.h"
#include "lesson.h"
#include "trace.h"
#include "ui_view.h"

/* What a file looked like when last seen: whether it exists, its inode, size and mtime. */
typedef struct {
    bool present;
    unsigned long long dev, ino;
    long long size, mtime_sec, mtime_nsec;
} ui_file_stamp;

typedef struct {
    lesson l;
    trace t;                     /* t.in points into l: the pair stays where it was made */
    trace_options compute;       /* how t was computed; a reload computes the same way */
    lesson_options load;         /* how l was loaded (--allow-paths); a reload loads the same way */
    /* Progress kept between runs (ui_progress.h): the state folder (borrowed; NULL: none
     * kept), the hash of the lesson's text as loaded (its key), whether the last step was
     * ever reached, and why progress is not being saved ("" while it is). */
    const char *state_dir;
    unsigned long long hash;
    bool done;
    char progress_note[256];
    /* The lesson's data files (l.data_files, in order) as last looked at: a change to any of
     * them reloads the lesson as a change to its own file does. NULL when it has none (or
     * when memory ran out: then they are not followed). */
    ui_file_stamp *data_seen;
    /* What the lesson's check said without failing (lesson_check with warnings: the warnings
     * and the load's notes), each "warning: line 40: message (hint: …)" on a line of its own,
     * escaped; NULL when it said nothing. How many of each, for a one-line summary. */
    char *notices;
    int warnings, notes;
} ui_opened;

/* Loads path with load's options (NULL: the defaults) and traces it (with compute's threads
 * and kernels) into a new ui_opened (or, with text, parses text as if it were path's
 * contents). Returns EXIT_STATUS_OK, or EXIT_STATUS_DATA (a bad lesson), EXIT_STATUS_NO_INPUT
 * (unreadable) or EXIT_STATUS_SOFTWARE (no memory) with the first problem, escaped, whole
 * (its did-you-mean and hint kept: "path:line:col: error: message (hint: …)") in error; with
 * report, every diagnostic also goes to standard error. The lesson is checked as --check
 * checks it, so its warnings and notes are in notices. */
exit_status ui_lesson_open(const char *path, const char *text, size_t text_size,
                           const trace_options *compute, const lesson_options *load,
                           ui_opened **out, bool report, char *error, size_t size);
void ui_lesson_close(ui_opened *o);

ui_file_stamp ui_file_stamp_of(const char *path);
bool ui_file_stamp_equal(const ui_file_stamp *a, const ui_file_stamp *b);

/* Follows the open lesson's file and its data files: when the file's stamp differs from *seen
 * or a data file's from its stamp in (*o)->data_seen (or always, with from, a
 * file whose text stands in for the lesson's), reloads it and rebuilds v on the new trace; a
 * broken, half-written or vanished file keeps *o and v as they were and puts its first
 * diagnostic in v->reload_error until a later save loads. Returns whether v changed. */
bool ui_lesson_follow(ui_opened **o, ui_view *v, ui_file_stamp *seen, const char *from);

#endif
