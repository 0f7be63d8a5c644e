/* "What if?": one number of a loaded lesson changed, as --set NAME[ROW,COL]=VALUE and the UI's
 * `=` write it (issue 29). The one place an edit is named, checked and applied: the command line
 * and the UI both apply edits here, to the lesson's own matrices, before (or instead of
 * reloading for) computing, so an edited lesson gives bit for bit what the lesson file with that
 * number changed gives. */
#ifndef ATTNSTEP_LESSON_EDIT_H
#define ATTNSTEP_LESSON_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include "lesson.h"

/* One changed number: which matrix (READ_DATA with DATA_EMBEDDINGS, DATA_SOURCE_EMBEDDINGS or
 * DATA_TARGET; READ_PARAM with a row of the parameter table), its cell and its new value. The
 * kind and id are what trace_first_reader takes, so a view recomputes from the first stage
 * that reads the matrix. */
typedef struct {
    read_kind kind;
    int id;
    int row, col;    /* from 0; a token's row where the lesson writes one vector per token */
    double value;
} lesson_edit;

#define LESSON_EDIT_ERRORS(X) \
    X(OK, "") \
    X(FORM, "write NAME[ROW,COL]=VALUE (a bias: NAME[COL]=VALUE)") \
    X(NAME, "no such matrix") \
    X(ABSENT, "this lesson has no such matrix") \
    X(ROW, "no such row") \
    X(COL, "no such column") \
    X(NUMBER, "the value is not a decimal number") \
    X(NOT_FINITE, "the value is not a finite number")

typedef enum {
#define LESSON_EDIT_ENUM(id, message) LESSON_EDIT_##id,
    LESSON_EDIT_ERRORS(LESSON_EDIT_ENUM)
#undef LESSON_EDIT_ENUM
} lesson_edit_status;

/* The status's message, from the one table above. */
const char *lesson_edit_message(lesson_edit_status status);

/* Reads text, "NAME[ROW,COL]=VALUE", against l: NAME is embeddings, source_embeddings, target
 * (the loss's) or a parameter of the table the lesson has (W_Q … b_O); ROW of a token's matrix
 * is a token as the lesson's embeddings: name it (a token written more than once: dog@6, unless
 * the lesson writes one vector per token, which its plain name then names) or a 0-based index,
 * COL and a parameter's ROW 0-based indices; a bias is NAME[COL]. On failure error says what
 * and which part, with the range or the names it could have been. */
lesson_edit_status lesson_edit_parse(const lesson *l, const char *text, lesson_edit *out,
                                     char *error, size_t size);

/* The same check for an edit given by parts, as the classroom's messages carry one (nothing
 * from the network is trusted): NAME a matrix l has (as lesson_edit_parse names them), ROW and
 * COL 0-based indices inside it (a bias's ROW 0, a token's matrix by row index, never by
 * name), VALUE finite. On failure error says what, as lesson_edit_parse's. */
lesson_edit_status lesson_edit_make(const lesson *l, const char *name, int row, int col,
                                    double value, lesson_edit *out, char *error, size_t size);

/* The name of the matrix e edits ("embeddings", "W_Q", "b_Q"): what lesson_edit_make takes. */
const char *lesson_edit_matrix_name(const lesson_edit *e);

/* The number e names, as l holds it now. */
double lesson_edit_value(const lesson *l, const lesson_edit *e);

/* Writes e's value into l (every row that shares the vector: the lesson's one vector per
 * token, written where it is repeated) and returns the value it replaced. */
double lesson_edit_apply(lesson *l, const lesson_edit *e);

/* e's canonical name, "embeddings[bank,0]", "W_Q[1,0]", "b_Q[2]" (tokens as written, not
 * escaped). Returns the length it wanted, as snprintf. */
int lesson_edit_name(const lesson *l, const lesson_edit *e, char *buffer, size_t size);

/* The shape of the matrix kind and id name in l (a bias: one row); false when l has none. */
bool lesson_edit_shape(const lesson *l, read_kind kind, int id, int *rows, int *cols);

/* After edits (the trace t computed from l's edited numbers): writes l's narration again from
 * its text as loaded (its live numbers, `answer: auto`) and checks its answers and claims
 * against t, as lesson_check does; diagnostics holds what the edits made false (free it).
 * options as l was loaded with; LESSON_NO_MEMORY when the text could not be read again. */
lesson_status lesson_edit_refresh(lesson *l, const lesson_options *options, const trace *t,
                                  lesson_diagnostics *diagnostics);

/* The shortest decimal that reads back as x ("0.1", not 0.10000000000000001): how an edited
 * number is shown for editing and written into a lesson. */
void lesson_edit_shortest(double x, char *out, size_t size);

/* The text of l's file with the matrices that edits (count of them, oldest first, as applied
 * to l) changed written out inline with l's numbers now, under a comment naming the edits and
 * the numbers they replaced (was[i]): loading it gives l's numbers bit for bit. NULL with
 * error saying why for what it cannot write: a matrix whose key is not the first thing on its
 * line, embeddings written row by row where a token repeats, a lesson with numpy's draws (whose
 * order the rewrite would change). Free the result. */
char *lesson_edit_write(const lesson *l, const lesson_edit *edits, const double *was, int count,
                        char *error, size_t size);

/* Parses and applies each of count texts in order (--set, repeated); stops at the first bad
 * one with error as lesson_edit_parse's, naming the text. */
lesson_edit_status lesson_edits_apply(lesson *l, const char *const *texts, int count,
                                      char *error, size_t size);

#endif
