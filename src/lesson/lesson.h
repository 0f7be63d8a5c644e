/* The lesson loader: a YAML lesson file in, the core's attention_input (and the narration) out,
 * or diagnostics "path:line:col: error: message". The only module that touches libyaml. */
#ifndef ATTNSTEP_LESSON_H
#define ATTNSTEP_LESSON_H

#include <stddef.h>
#include <stdio.h>
#include "trace.h"
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

/* One item of the lesson's narration script. A step with `ask` is a question put to the
 * student before the step's stage is shown: either multiple choice (choices and answer_choice)
 * or numeric (answer, accepted within ± tolerance). */
typedef struct {
    stage_id stage;
    int head;              /* from 1; 0 when the step names none */
    int focus_row;         /* index along the stage's rows (tokens, or source tokens for K, V and
                              source_input), or -1 without focus */
    int focus_col;         /* index along the stage's columns, or -1 without focus */
    char *say;             /* narration text, or NULL */
    int line;              /* where the step is written in the file */
    char *ask;             /* the question, or NULL when the step asks none */
    int n_choices;         /* 0 for a numeric question (or none) */
    char **choices;        /* (n_choices) the possible answers, as written; NULL when none */
    int answer_choice;     /* index of the right choice; -1 for a numeric question (or none) */
    double answer;         /* the right number, for a numeric question */
    double tolerance;      /* a numeric answer counts when |given − answer| ≤ tolerance (0.005
                              unless the lesson says otherwise) */
} lesson_step;

typedef struct {
    char *path;
    char *title;
    char *about;                 /* NULL when the lesson has none */
    int n_tokens;
    char **tokens;               /* (n_tokens) as written, repeats kept */
    int n_source;                /* 0 in self-attention (input.n_source is then n_tokens) */
    char **source;               /* (n_source) cross-attention keys; NULL in self-attention */
    int n_steps;
    lesson_step *steps;          /* NULL when the lesson has no steps */
    /* Storage behind input; input's pointers point here. */
    double *embeddings;          /* (n_tokens, d_model) */
    double *source_embeddings;   /* (n_source, d_model) or NULL */
    double *W_Q, *W_K, *W_V, *W_O;  /* (d_model, d_model) each */
    unsigned char *mask_cells;   /* (n_tokens, n_source or n_tokens) 1 = may attend, for explicit
                                    and causal masks (input.mask_cells is set only for explicit
                                    ones); NULL without a mask */
    attention_input input;
} lesson;

typedef struct {
    int line, col;               /* from 1; 0 when the problem has no place (unreadable file) */
    char *message;
} lesson_diagnostic;

typedef struct {
    char *path;
    int count;
    lesson_diagnostic *items;
    int dropped;                 /* problems past LESSON_MAX_DIAGNOSTICS, while loading */
} lesson_diagnostics;

typedef enum {
    LESSON_OK,
    LESSON_INVALID,      /* diagnostics say why; exit status 65 */
    LESSON_UNREADABLE,   /* the file cannot be opened or read; exit status 66 */
    LESSON_NO_MEMORY     /* memory ran out while loading; exit status 70 */
} lesson_status;

/* Loads path. On LESSON_OK fills out (free with lesson_free) and leaves diagnostics empty;
 * otherwise out is empty and diagnostics holds every problem found (free with
 * lesson_diagnostics_free). */
lesson_status lesson_load(const char *path, lesson *out, lesson_diagnostics *diagnostics);

/* Opens path for reading, refusing anything but a regular file (a FIFO, a device, a directory,
 * a socket) without blocking on it: the one way lessons, lesson folders' entries and key
 * scripts are opened. NULL with *why set to a short reason ("it is a FIFO, not a regular
 * file", or strerror's text) when it cannot be read. */
FILE *lesson_open_regular(const char *path, const char **why);

/* The same from memory; path is only used in messages. */
lesson_status lesson_load_buffer(const char *path, const char *data, size_t size,
                                 lesson *out, lesson_diagnostics *diagnostics);

/* The same with a cap of max_bytes instead of LESSON_MAX_BYTES on everything the lesson and its
 * trace would allocate (counted before anything is allocated or any random number drawn): for
 * the fuzz harness, which must stay fast. */
lesson_status lesson_load_buffer_within(const char *path, const char *data, size_t size,
                                        size_t max_bytes, lesson *out,
                                        lesson_diagnostics *diagnostics);

/* Prints each diagnostic as "path:line:col: error: message" (or "path: error: message"). */
void lesson_diagnostics_print(const lesson_diagnostics *diagnostics, FILE *stream);

/* The walk of the lesson's trace t (computed from l->input), with each narration item of
 * l->steps placed at its stage and head (lesson_narration finds it again). Returns false when
 * out of memory. */
bool lesson_walk(const lesson *l, const trace *t, walk *w);

/* The narration item told at a step of lesson_walk (its say, focus and question), or NULL for a
 * step without one: the one way every view finds a step's narration. */
const lesson_step *lesson_narration(const lesson *l, const walk_step *step);

void lesson_free(lesson *l);
void lesson_diagnostics_free(lesson_diagnostics *diagnostics);

#endif
