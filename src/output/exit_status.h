/* The exit statuses of attnstep, as sysexits.h names them: main, the outputs and the UI return
 * these, and README's "Exit status" and the man page list the same. */
#ifndef ATTNSTEP_EXIT_STATUS_H
#define ATTNSTEP_EXIT_STATUS_H

typedef enum {
    EXIT_STATUS_OK = 0,
    EXIT_STATUS_USAGE = 64,     /* a bad command line, key script line, --at or --head */
    EXIT_STATUS_DATA = 65,      /* a lesson with errors, or a trace that overflowed */
    EXIT_STATUS_NO_INPUT = 66,  /* a lesson file or key script that cannot be read */
    EXIT_STATUS_SOFTWARE = 70,  /* an internal error: out of memory, no terminal */
    EXIT_STATUS_IO = 74         /* output could not be written */
} exit_status;

#endif
