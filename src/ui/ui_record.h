/* --record FILE without destroying anything (ui_record.c): FILE is refused when it is an input
 * of the run (compared by device and inode, so a second name or a link is caught too) or not a
 * regular file (a FIFO would block, a device is no recording); the recording is written to a
 * temporary file in FILE's folder and renamed over FILE only when the run ends, so a run that
 * fails to start, or a recording that cannot be written, leaves FILE as it was. */
#ifndef ATTNSTEP_UI_RECORD_H
#define ATTNSTEP_UI_RECORD_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "exit_status.h"

typedef struct {
    FILE *f;                 /* the temporary file being written; NULL when not recording */
    const char *path;        /* FILE, as given */
    char *temporary;         /* the temporary file's path, beside FILE */
    bool exists;             /* FILE existed when the run started: dev and ino are its */
    dev_t dev;
    ino_t ino;
} ui_record;

/* An input of the run, named for the message that refuses it ("the lesson"). */
typedef struct {
    const char *path;
    const char *what;
} ui_record_input;

/* Checks path against the inputs (a NULL path is skipped) and opens the temporary file.
 * EXIT_STATUS_OK, or, having said why on standard error: EXIT_STATUS_USAGE (path is an
 * input), EXIT_STATUS_IO (not a regular file, or the temporary file cannot be made). */
exit_status ui_record_open(ui_record *r, const char *path, const ui_record_input *inputs,
                           int count);

/* The same check for an input known only once the lesson is loaded (its data files). */
exit_status ui_record_check(const ui_record *r, const ui_record_input *input);

/* Ends the recording: with keep, the temporary file is renamed over FILE (false, having said
 * why, when any of it could not be written: then FILE is untouched); without, it is removed. */
bool ui_record_close(ui_record *r, bool keep);

#endif
