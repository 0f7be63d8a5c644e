/* The lesson loader: a YAML lesson file in, the core's attention_input (and the narration) out,
 * or diagnostics "path:line:col: error: message". The only module that touches libyaml. */
#ifndef ATTNSTEP_LESSON_H
#define ATTNSTEP_LESSON_H

#include <stddef.h>
#include <stdio.h>
#include "trace.h"
#include "train.h"
#include "walk.h"

/* Limits on what a lesson file may hold; each message that refuses a file names its limit. */
#define LESSON_MAX_FILE_BYTES ((size_t)4 << 20)  /* 4 MiB */
#define LESSON_MAX_TOKENS 4096                   /* in tokens, and again in source */
#define LESSON_MAX_D_MODEL 4096
#define LESSON_MAX_HEADS 256
#define LESSON_MAX_TOKEN_BYTES 256
#define LESSON_MAX_STRING (64 * 1024)            /* bytes of any one text value */
#define LESSON_MAX_DEPTH 32                      /* nested lists and mappings */
#define LESSON_MAX_NODES 2000000                 /* values of every kind in one file */
#define LESSON_MAX_BYTES TRACE_MAX_BYTES         /* the lesson's matrices and its trace */

/* A place in the lesson file, from 1. */
typedef struct {
    int line, col;
} lesson_place;

/* A text that may hold live numbers ({weights[bank,river]}; claim.h): where its value is written
 * and where each of its placeholders is, in order, so that a bad one is reported at its place. */
typedef struct {
    lesson_place at;
    int count;
    lesson_place *marks;   /* (count) */
    bool rendered;         /* lesson_check has written its live numbers into the text */
} lesson_written;

/* One claim of a step's `expect:` list, as written (claim.h is its language). */
typedef struct {
    char *text;
    lesson_place at;
} lesson_claim;

/* One item of the lesson's narration script. A step with `ask` is a question put to the
 * student before the step's stage is shown: either multiple choice (choices and answer_choice)
 * or numeric (answer, accepted within ± tolerance). */
typedef struct {
    stage_id stage;
    int head;              /* from 1; 0 when the step names none */
    int focus_row;         /* index along the stage's rows (tokens, or source tokens for K, V and
                              source_input), or -1 without focus */
    int focus_col;         /* index along the stage's columns, or -1 without focus */
    int token;             /* in a decoding lesson, the token the step shows being generated,
                              from 1 (walk_step.position + 1); 0 for the whole matrix */
    int train_step;        /* train_step: k, the trace after k updates of train: (0: none) */
    char *say;             /* narration text, or NULL */
    int line;              /* where the step is written in the file */
    char *ask;             /* the question, or NULL when the step asks none */
    int n_choices;         /* 0 for a numeric question (or none) */
    char **choices;        /* (n_choices) the possible answers, as written; NULL when none */
    int answer_choice;     /* index of the right choice; -1 for a numeric question (or none),
                              and for `answer: auto` until lesson_check has taken it */
    double answer;         /* the right number, for a numeric question */
    double tolerance;      /* a numeric answer counts when |given − answer| ≤ tolerance (0.005
                              unless the lesson says otherwise) */
    bool answer_auto;      /* `answer: auto`: lesson_check takes the answer from the trace */
    char *answer_text;     /* the answer as written, for messages; NULL without one */
    lesson_place answer_at, ask_at;
    int n_expect;
    lesson_claim *expect;  /* (n_expect) the claims lesson_check proves; NULL when none */
    lesson_written say_written, ask_written;  /* the placeholders of say and ask */
} lesson_step;

typedef struct {
    char *path;
    char *text;                  /* the file as loaded (NUL-terminated at text[text_size]), so that
                                    later checks can quote its lines */
    size_t text_size;
    size_t bytes;                /* what the lesson's numbers and its trace take together */
    char *title;
    lesson_place title_at;       /* where the title is written */
    char *about;                 /* NULL when the lesson has none */
    lesson_written about_written;
    int n_tokens;
    char **tokens;               /* (n_tokens) as written, repeats kept */
    int n_source;                /* 0 in self-attention (input.n_source is then n_tokens) */
    char **source;               /* (n_source) cross-attention keys; NULL in self-attention */
    int n_steps;
    lesson_step *steps;          /* NULL when the lesson has no steps */
    /* Storage behind input; input's pointers point here. */
    double *embeddings;          /* (n_tokens, d_model) */
    double *source_embeddings;   /* (n_source, d_model) or NULL */
    double *target;              /* (n_tokens, d_model) the loss's target, or NULL */
    bool embeddings_by_token;    /* the embeddings are one vector per distinct token (a mapping,
                                    {random:}), shared by its rows in tokens and source; false
                                    when written row by row ({file:}, numpy): lesson_edit.h */
    bool target_by_token;        /* the target is a mapping token → row, shared likewise */
    train_config train;          /* train: (train.h); steps 0 when the lesson does not train */
    double *params[PARAM_COUNT];    /* the core's parameter table's: W_Q … W_O, and the biases
                                       b_Q … b_O, NULL when the lesson gives none */
    unsigned char *mask_cells;   /* (n_tokens, n_source or n_tokens) 1 = may attend, for explicit,
                                    causal and window masks (input.mask_cells is set only for explicit
                                    ones); NULL without a mask */
    int n_data_files;
    char **data_files;           /* (n_data_files) the path of each {file: ...} read, as opened
                                    (for a view that follows the lesson's files); NULL when none */
    attention_input input;
    struct lesson_diagnostics *notes;  /* what a successful load noted (severity NOTE), freed
                                    with the lesson; lesson_check passes them on */
} lesson;

typedef enum {
    LESSON_SEVERITY_ERROR,       /* the lesson is refused */
    LESSON_SEVERITY_WARNING,     /* said, but the lesson is still usable */
    LESSON_SEVERITY_NOTE         /* what the loader took a guess at (a CSV file's first line
                                    read as its header): said, never a failure */
} lesson_severity;

typedef struct {
    int line, col;               /* from 1; 0 when the problem has no place (unreadable file) */
    lesson_severity severity;    /* an error unless the check that found it says otherwise */
    char *message;
    char *hint;                  /* how to fix it ("use 1, 2 or 4"), or NULL */
    char *source;                /* the file's line `line` as written (raw lesson text: escape it
                                    before showing), or NULL when not quoted; a long line is cut
                                    to a window around col, marked with "…" */
    int source_col;              /* where col is in source (from 1, in characters) */
    /* Root causes (lesson_diag.h): the key whose absence this problem follows from, and the
     * key whose absence this problem explains (a misspelling of it), each as the place of its
     * mapping and the key's name (a string of the loader's key tables); 0 and NULL when none.
     * The loader drops a problem that follows from what another one explains. */
    struct { int line, col; const char *key; } follows, explains;
} lesson_diagnostic;

typedef struct lesson_diagnostics {
    char *path;
    int count;
    lesson_diagnostic *items;
    int dropped;                 /* problems past LESSON_MAX_DIAGNOSTICS, while loading */
    struct { int line, col; const char *key; } following;  /* while loading: what every problem
                                    reported now follows from (lesson_follow_from) */
} lesson_diagnostics;

typedef enum {
    LESSON_OK,
    LESSON_INVALID,      /* diagnostics say why; exit status 65 */
    LESSON_UNREADABLE,   /* the file cannot be opened or read; exit status 66 */
    LESSON_NO_MEMORY     /* memory ran out while loading; exit status 70 */
} lesson_status;

/* How a lesson is loaded; all zero (or a NULL pointer) is the default. */
typedef struct {
    bool allow_paths;   /* --allow-paths: data files ({file: NAME}) may be read from anywhere,
                           not only from the lesson's folder */
    size_t max_bytes;   /* the cap on everything the lesson and its trace would allocate
                           (counted before anything is allocated or drawn); 0: LESSON_MAX_BYTES */
    /* --set: numbers to change after loading (lesson_edit.h), each "NAME[ROW,COL]=VALUE".
     * The loader does not read them: whoever computes the lesson applies them first
     * (lesson_edits_apply), so a reload of the file applies them again. */
    int n_edits;
    const char *const *edits;
} lesson_options;

/* Loads path with the default options. On LESSON_OK fills out (free with lesson_free) and
 * leaves diagnostics empty (what the load noted is in out->notes, which lesson_check passes on
 * with the warnings); otherwise out is empty and diagnostics holds every problem found
 * (free with lesson_diagnostics_free). */
lesson_status lesson_load(const char *path, lesson *out, lesson_diagnostics *diagnostics);

/* The same with options (NULL: the defaults). */
lesson_status lesson_load_with(const char *path, const lesson_options *options, lesson *out,
                               lesson_diagnostics *diagnostics);

/* What a list of lessons shows of a lesson: its title and its about with its live numbers
 * (as lesson_about_shown writes it) when the lesson and its trace take at most
 * LESSON_ABOUT_BUILD_MAX bytes, else with its placeholders as written (a list never builds a
 * large lesson's matrices), or NULL when it has none. Free with lesson_summary_free. */
#define LESSON_ABOUT_BUILD_MAX ((size_t)16 << 20)
typedef struct {
    char *title;
    char *about;
} lesson_summary;

/* Loads only what a list of lessons shows, checking path as lesson_load does (the same
 * statuses and diagnostics, which lesson_load's caller frees the same way) without drawing,
 * reading into place or allocating the lesson's matrices: fast for a lesson of any size. */
lesson_status lesson_load_summary(const char *path, const lesson_options *options,
                                  lesson_summary *out, lesson_diagnostics *diagnostics);
void lesson_summary_free(lesson_summary *summary);

/* Opens path for reading, refusing anything but a regular file (a FIFO, a device, a directory,
 * a socket) without blocking on it: the one way lessons, lesson folders' entries and key
 * scripts are opened. NULL with *why set to a short reason ("it is a FIFO, not a regular
 * file", or strerror's text) when it cannot be read. */
FILE *lesson_open_regular(const char *path, const char **why);

/* The same for a file already opened (read-only, with O_NONBLOCK) as fd, which it takes over:
 * on failure fd is closed. For a file opened some other way than by path (lesson_file.c opens
 * data files beneath the lesson's folder). */
FILE *lesson_fdopen_regular(int fd, const char **why);

/* The same from memory; path is only used in messages. */
lesson_status lesson_load_buffer(const char *path, const char *data, size_t size,
                                 lesson *out, lesson_diagnostics *diagnostics);

/* The same with a cap of max_bytes instead of LESSON_MAX_BYTES on everything the lesson and its
 * trace would allocate (counted before anything is allocated or any random number drawn): for
 * the fuzz harness, which must stay fast. */
lesson_status lesson_load_buffer_within(const char *path, const char *data, size_t size,
                                        size_t max_bytes, lesson *out,
                                        lesson_diagnostics *diagnostics);

/* The same from memory with options (NULL: the defaults); path also places data files. */
lesson_status lesson_load_buffer_with(const char *path, const char *data, size_t size,
                                      const lesson_options *options, lesson *out,
                                      lesson_diagnostics *diagnostics);

/* Checks a loaded lesson against its trace t (computed from l->input), as every mode that shows
 * a lesson does after trace_compute: each answer against the focus cell (filling `answer: auto`),
 * each `expect:` claim, and each placeholder of say, ask and about, whose live numbers it then
 * writes into that text (claim_render). With warnings, also passes on what the load noted
 * (l->notes: a CSV file's header) and warns of a question whose answer an
 * earlier step of the script already showed: an earlier step at the question's stage (and, for
 * a per-head stage, its head; at a position, one whose part shows the question's focus). Returns LESSON_OK when no error was found (warnings may have
 * been), else LESSON_INVALID; either way diagnostics holds what was found (free with
 * lesson_diagnostics_free). */
lesson_status lesson_check(lesson *l, const trace *t, bool warnings,
                           lesson_diagnostics *diagnostics);

/* The lesson's `about` with its live numbers written, for a list of lessons that does not
 * compute each one (the UI's picker), or NULL when it has none. The trace is computed here when
 * it needs at most LESSON_ABOUT_TRACE_MAX bytes; a larger lesson, or one whose placeholders
 * are wrong, gets the text as written. Free it. */
#define LESSON_ABOUT_TRACE_MAX ((size_t)64 << 20)
char *lesson_about_shown(const lesson *l);

/* Prints each diagnostic as "path:line:col: error: message" (or "path: error: message";
 * "warning" for a warning), then, when it is quoted, its source line (escaped) with a caret
 * under the column, then "hint: ..." when it has a hint — the one printer of every mode:
 *     lesson.yaml:5:8: error: heads (3) must divide d_model (4)
 *         5 | heads: 3
 *           |        ^
 *     hint: use 1, 2 or 4 */
void lesson_diagnostics_print(const lesson_diagnostics *diagnostics, FILE *stream);

/* The first line of the diagnostic item of diagnostics, as the printer writes it: "path:line:col:
 * error: message" (or "path: error: message"; "warning" for a warning), the path escaped, cut
 * to fit in out (size bytes). For a view with room for one line, such as a status line. */
void lesson_diagnostic_headline(const lesson_diagnostics *diagnostics,
                                const lesson_diagnostic *item, char *out, size_t size);

/* "line 2: message (hint: ...)": the whole of item (its did-you-mean is in the message) for a
 * view that already names the lesson and wraps text (the picker), in one paragraph; "line N: "
 * only when it has a place, the hint only when it has one. */
void lesson_diagnostic_paragraph(const lesson_diagnostics *diagnostics,
                                 const lesson_diagnostic *item, char *out, size_t size);

/* Gives each diagnostic that has a line but no quote yet its line of data (the file's text,
 * size bytes, NUL-terminated at data[size]), for the printer. The loader does this itself;
 * checks run after loading pass the lesson's text (lesson.text). */
void lesson_diagnostics_quote(lesson_diagnostics *diagnostics, const char *data, size_t size);

/* The walk of the lesson's trace t (computed from l->input): the author's script, one step per
 * item of l->steps in the author's order (lesson_narration finds the item again), or the
 * pipeline when the lesson has no steps. Returns false when out of memory. */
bool lesson_walk(const lesson *l, const trace *t, walk *w);

/* The narration item told at a step of lesson_walk (its say, focus and question), or NULL for a
 * step without one: the one way every view finds a step's narration. */
const lesson_step *lesson_narration(const lesson *l, const walk_step *step);

void lesson_free(lesson *l);
void lesson_diagnostics_free(lesson_diagnostics *diagnostics);

#endif
