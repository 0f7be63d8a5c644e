/* The help of the command line (help.c): --help, and the manual page's OPTIONS, ENVIRONMENT,
 * EXIT STATUS and KEYS sections in troff (the Makefile puts them into attnstep.1.in). */
#ifndef ATTNSTEP_HELP_H
#define ATTNSTEP_HELP_H

/* What the help says of one option: three fields of a row of main's option table. */
typedef struct {
    const char *name;   /* its long name, without "--" */
    const char *usage;  /* how the help shows it ("--csv STAGE"), or NULL for --NAME */
    const char *help;   /* its lines ('\n' between), or NULL when another row's usage names it */
} help_option;

/* Writes to stdout, from options[0 … count-1] in their order and the tables of help.c, --help
 * (arg NULL), or with arg "man" the manual page's OPTIONS, ENVIRONMENT and EXIT STATUS. */
void help_print(const help_option *options, int count, const char *arg);

/* --help-keys: writes the UI's keys to stdout, as troff for the KEYS section when arg is "man". */
void help_print_keys(const char *arg);

#endif
