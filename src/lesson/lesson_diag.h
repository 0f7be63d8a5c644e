/* The lesson loader's diagnostics: every kind of problem with its message format, in one table,
 * and the function that records one. Messages never contain raw untrusted text: callers pass
 * token names and keys through lesson_escape first. */
#ifndef ATTNSTEP_LESSON_DIAG_H
#define ATTNSTEP_LESSON_DIAG_H

#include "lesson.h"

/* X(ID, printf format of the message) */
#define LESSON_ERROR_TABLE(X) \
    X(CANNOT_READ,       "cannot read: %s") \
    X(FILE_TOO_LARGE,    "the file is larger than the limit of 4 MiB (4194304 bytes)") \
    X(FILE_EMPTY,        "the file is empty; a lesson needs at least title, tokens and " \
                         "embeddings") \
    X(NUL_BYTE,          "NUL byte: this is a binary file, not a YAML lesson") \
    X(BAD_UTF8,          "invalid UTF-8 (byte 0x%02x): a lesson must be UTF-8 text") \
    X(CONTROL_CHAR,      "control character %s is not allowed in a lesson") \
    X(YAML_SYNTAX,       "YAML syntax error: %s") \
    X(YAML_TAB,          "YAML syntax error: a tab here; YAML indents with spaces only") \
    X(TOO_DEEP,          "nesting deeper than %d levels; the limit is %d") \
    X(TOO_MANY_NODES,    "more than %d YAML values; the limit is %d") \
    X(ANCHOR,            "YAML anchors are not allowed (&%s)") \
    X(ALIAS,             "YAML aliases are not allowed (*%s)") \
    X(SECOND_DOCUMENT,   "a second YAML document; a lesson file holds exactly one") \
    X(STRING_TOO_LONG,   "text of %zu bytes; the limit is 64 KiB (65536 bytes)") \
    X(NUL_IN_TEXT,       "text containing a NUL character (\\0)") \
    X(NOT_A_LESSON,      "a lesson is a mapping of keys (title:, tokens:, ...), not %s") \
    X(KEY_NOT_TEXT,      "a key must be text, not %s") \
    X(DUPLICATE_KEY,     "duplicate key '%s' (first given at line %d)") \
    X(UNKNOWN_KEY,       "unknown key '%s'; did you mean '%s'?") \
    X(UNKNOWN_KEY_LIST,  "unknown key '%s'; the keys here are: %s") \
    X(MISSING_KEY,       "missing key '%s'") \
    X(WRONG_TYPE,        "%s must be %s, not %s") \
    X(BAD_VALUE,         "%s must be %s, not '%s'") \
    X(NOT_A_NUMBER,      "%s: '%s' is not a number") \
    X(NOT_FINITE,        "%s: '%s' is not a finite number") \
    X(OUT_OF_RANGE,      "%s: '%s' is out of range for a double") \
    X(BAD_INTEGER,       "%s must be a whole number from %llu to %llu, not '%s'") \
    X(OVER_LIMIT,        "%s is %llu; the limit is %llu") \
    X(EMPTY_LIST,        "%s must not be empty") \
    X(EMPTY_TOKEN,       "empty token in %s") \
    X(TOKEN_TOO_LONG,    "token of %zu bytes; the limit is 256 bytes") \
    X(WRONG_SIZE,        "%s: expected %d %s, found %d") \
    X(HEADS_DIVIDE,      "heads (%d) must divide d_model (%d)") \
    X(NEEDS_D_MODEL,     "random embeddings need 'd_model: N' beside them") \
    X(NO_EMBEDDING,      "token '%s' has no embedding") \
    X(MASK_ROW_HIDDEN,   "the mask row of '%s' hides every key; each token must see at least one") \
    X(CAUSAL_CROSS,      "a causal mask needs self-attention, but this lesson has a source") \
    X(TRACE_TOO_LARGE,   "the lesson and its trace would need %s; the limit is 1 GiB") \
    X(UNKNOWN_STAGE,     "unknown stage '%s'; did you mean '%s'?") \
    X(UNKNOWN_STAGE_LIST, "unknown stage '%s'; the stages are: %s") \
    X(NO_SOURCE_STAGE,   "stage 'source_input' exists only in cross-attention (with 'source')") \
    X(NO_SUCH_HEAD,      "head %d does not exist; this lesson has %d") \
    X(HEAD_NOT_PER_HEAD, "stage '%s' is one matrix for all heads, so it takes no 'head'; " \
                         "the stages with one matrix per head are: %s") \
    X(BAD_FOCUS,         "focus %s '%s' is not one of the %ss of stage '%s'") \
    X(NOT_A_CHOICE,      "answer '%s' is not one of the choices") \
    X(NEEDS,             "'%s' needs %s") \
    X(NO_MEMORY,         "not enough memory to load this lesson") \
    X(TOO_MANY_ERRORS,   "too many problems; only the first %d are shown")

typedef enum {
#define LESSON_ERROR_ENUM(id, format) LESSON_ERROR_##id,
    LESSON_ERROR_TABLE(LESSON_ERROR_ENUM)
#undef LESSON_ERROR_ENUM
    LESSON_ERROR_COUNT
} lesson_error;

/* At most this many diagnostics are kept; one more line then says that there were more. */
#define LESSON_MAX_DIAGNOSTICS 100

/* Records a problem at line:col (from 1; 0:0 for the file as a whole), keeping the list in
 * order of position. The arguments follow the error's format in the table. */
void lesson_report(lesson_diagnostics *diagnostics, int line, int col, lesson_error error, ...);

/* Adds the closing "too many problems" line if some were dropped. */
void lesson_report_finish(lesson_diagnostics *diagnostics);

#endif
