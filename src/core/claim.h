/* Claims and live numbers: the small language in which a lesson states what its numbers are
 * ("weights[bank,river] > 0.6", "argmax weights[bank] = river") and writes them into its text
 * ("{weights[bank,river]}"), parsed and evaluated against a trace. Pure: no I/O, no globals. */
#ifndef ATTNSTEP_CLAIM_H
#define ATTNSTEP_CLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include "trace.h"

/* Enough bytes for any message the functions below write. */
#define CLAIM_MESSAGE_MAX 512

/* Decimals of a number written into text by a placeholder that names none ("{weights[a,b]}"):
 * the default --precision, so a lesson reads the same whatever the viewer's options. */
#define CLAIM_TEXT_PRECISION 4

typedef enum { CLAIM_LESS, CLAIM_LESS_EQUAL, CLAIM_GREATER, CLAIM_GREATER_EQUAL, CLAIM_EQUAL,
               CLAIM_ABOUT } claim_op;

/* A count of the layer, read from the node table's cost operations (cost.h), never a timing:
 * "multiplications scores at 1024" (every head of scores over a sentence of 1024 tokens; without
 * "at N" the lesson's own), "additions total" (every stage), "bytes weights" (what the trace
 * holds of it, as --stats's "held"), "parameters" (every parameter the lesson gives),
 * "parameters W_Q". */
typedef enum { COUNT_MULTIPLICATIONS, COUNT_ADDITIONS, COUNT_DIVISIONS, COUNT_EXPONENTIALS,
               COUNT_BYTES, COUNT_PARAMETERS } claim_count_kind;

#define CLAIM_COUNT_TOTAL (-1)   /* claim_count.what: every stage, or every parameter */

typedef struct {
    claim_count_kind kind;
    int what;    /* a stage_id, a param_id for COUNT_PARAMETERS, or CLAIM_COUNT_TOTAL */
    int n;       /* the sentence's tokens it counts over */
} claim_count;

/* The value of a count in t (claim_parse or claim_render read it). */
unsigned long long claim_count_value(const trace *t, const claim_count *count);

/* One side of a comparison: a cell of the trace, a count of the layer, or a number as
 * written. */
typedef struct {
    bool is_cell;
    bool is_count;
    claim_count count;
    trace_cell cell;
    double number;
    int decimals;        /* decimals the number was written with */
    char text[96];       /* as written, for messages (cut when longer) */
} claim_operand;

typedef enum { CLAIM_COMPARE, CLAIM_ARGMAX, CLAIM_ARGMIN } claim_kind;

typedef struct {
    claim_kind kind;
    claim_op op;                  /* CLAIM_COMPARE */
    claim_operand left, right;    /* CLAIM_COMPARE; for argmax/argmin, left is the row (its
                                     cell's col is 0) */
    double tolerance;             /* CLAIM_ABOUT: how far apart still holds */
    int column;                   /* argmax/argmin: the column claimed */
} claim;

/* Parses one claim:
 *   CELL OP VALUE, VALUE OP CELL or CELL OP CELL, with OP one of < <= > >= = ≈ ~ (a COUNT may
 *     stand for a CELL: "multiplications scores at 512 = multiplications Q at 512"; = between
 *     counts, or a count and a number, holds when they are the same whole number)
 *     (≈ and ~ hold within half a unit of the last decimal written, or "± T" / "+- T";
 *      = and == hold when the two sides agree to 12 significant digits: "weights[a,b] = 0"
 *      means exactly 0, not "rounds to 0");
 *   argmax ROW = LABEL, argmin ROW = LABEL, with ROW written STAGE[ROW];
 * where CELL is STAGE[ROW,COL] (trace_cell_parse) with an optional "@H" naming its head, else
 * head. Returns true and fills out, or false with a one-line reason in error. */
bool claim_parse(const trace *t, const char *text, int head, claim *out, char *error,
                 size_t error_size);

/* Whether the claim holds in t. When it does not, detail says what the numbers are
 * ("weights[bank,river] is 0.2919"). */
bool claim_holds(const trace *t, const claim *c, char *detail, size_t detail_size);

/* The column label of the largest (argmax) or smallest value of row `row` of a stage at head;
 * ties go to the first column. Returns the column index. */
int claim_extreme(const trace *t, stage_id stage, int head, int row, bool largest);

/* Where rendering text failed: the byte offset of the placeholder's '{' and why. */
typedef struct {
    size_t offset;
    int index;       /* which placeholder of the text, from 0 */
    char message[CLAIM_MESSAGE_MAX];
} claim_text_error;

/* Finds the first placeholder of text at or after byte `from` ("{{" is a literal brace, not
 * one): true with the offset of its '{' in *open and its length in *length, through its '}' or,
 * when it has none, to the end of its line. */
bool claim_placeholder_find(const char *text, size_t from, size_t *open, size_t *length);

/* Writes text with its placeholders replaced by live numbers:
 *   {CELL}     the cell's value, CLAIM_TEXT_PRECISION decimals, trailing zeros trimmed;
 *   {CELL:N}   with exactly N decimals (0 … 17);
 *   {COUNT}    a count, whole, its digits grouped ("536,870,912"): WORD STAGE [at N], WORD one of
 *              multiplications additions divisions exponentials bytes, STAGE a stage of the lesson or
 *              total, N from 1 to COST_LONGEST; or parameters [NAME];
 *   {argmax ROW}, {argmin ROW}  the label of the row's largest or smallest column;
 *   {{         a literal '{'.
 * CELL and ROW as in claim_parse, head the default head. Returns the length it wanted (as
 * snprintf), or -1 with error filled at the first bad placeholder (out then holds the text up
 * to it). */
int claim_render(const trace *t, const char *text, int head, char *out, size_t size,
                 claim_text_error *error);

/* Whether a placeholder of text (read as claim_render does) writes the value of cell or, with
 * row, the label of the largest or smallest column of cell's row: text that tells a question's
 * answer. Placeholders that cannot be read name nothing. */
bool claim_text_names(const trace *t, const char *text, int head, const trace_cell *cell,
                      bool row);

/* Writes a cell's name, "weights[bank,river]", with "@H" after it for a per-head stage at a head
 * other than 1. Returns the length it wanted. */
int claim_cell_name(const trace *t, const trace_cell *cell, char *buffer, size_t size);

#endif
