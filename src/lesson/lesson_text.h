/* Text helpers of the lesson loader: strict numbers, escaping untrusted text for messages,
 * UTF-8 checks with line:col, nearest-word suggestions, and a string index (hash table). */
#ifndef ATTNSTEP_LESSON_TEXT_H
#define ATTNSTEP_LESSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LESSON_NUMBER_OK,
    LESSON_NUMBER_SYNTAX,     /* not a decimal number */
    LESSON_NUMBER_NONFINITE,  /* nan, inf, .inf and friends */
    LESSON_NUMBER_RANGE,      /* overflows a double (rounds to infinity) */
    LESSON_NUMBER_TINY        /* rounds to zero in a double (a nonzero number under half the
                                 smallest subnormal, 4.9e-324); a subnormal result is kept */
} lesson_number_status;

/* Parses the whole of text as a decimal number: [+-]? (digits [. digits?] | . digits)
 * ([eE] [+-]? digits)?. No hex, underscores, spaces, nan or inf. The decimal point is '.'
 * whatever the locale. */
lesson_number_status lesson_parse_number(const char *text, double *value);

/* Parses the whole of text as a decimal integer from min to max (no sign for max ≥ 0 only). */
bool lesson_parse_integer(const char *text, uint64_t min, uint64_t max, uint64_t *value);

/* Copies text (length bytes) into out for a message: control characters, C1 codes, bidi controls
 * and invalid bytes escaped (\x1b, \u202e), cut with "…" after max_chars characters.
 * out must hold at least LESSON_ESCAPED_MAX bytes; returns out. */
#define LESSON_ESCAPED_MAX 512
char *lesson_escape(const char *text, size_t length, char *out);

typedef enum {
    LESSON_TEXT_OK,
    LESSON_TEXT_NUL,       /* a NUL byte: a binary file */
    LESSON_TEXT_CONTROL,   /* a control character YAML refuses (value is the code point) */
    LESSON_TEXT_UTF8       /* a byte that is not valid UTF-8 (value is the byte) */
} lesson_text_status;

/* Whether data (NUL-terminated at data[size]) holds only text libyaml accepts: UTF-8 without
 * NUL or the control characters outside YAML's printable set. Otherwise *offset is the first
 * bad byte and *value what is there. */
lesson_text_status lesson_check_text(const char *data, size_t size, size_t *offset,
                                     unsigned *value);

/* Line and column (from 1, counted in characters) of a byte offset into data, which is
 * NUL-terminated at data[size]. */
void lesson_offset_position(const char *data, size_t size, size_t offset, int *line, int *col);

/* The byte offset of line:col (from 1, in characters) in data, NUL-terminated at data[size];
 * size when the place is past the end. */
size_t lesson_position_offset(const char *data, size_t size, int line, int col);

/* A place in a text, for finding many places in order in linear time: start it zeroed. */
typedef struct {
    size_t offset;
    int line, col;
} lesson_cursor;

/* The byte offset of line:col (as lesson_position_offset), moving cursor there: from where it
 * was when the place is not before it, else from the top. */
size_t lesson_cursor_move(lesson_cursor *cursor, const char *data, size_t size, int line,
                          int col);

/* Where libyaml's first line starts in data: after a UTF-8 byte order mark, which it skips. */
size_t lesson_first_line(const char *data, size_t size);

/* The end (the offset of its line break, or size) of the line of data that starts at byte
 * offset, with libyaml's line breaks (CR LF, CR, LF, NEL, LS, PS); *next (when not NULL) is
 * where the next line starts. */
size_t lesson_line_end(const char *data, size_t size, size_t offset, size_t *next);

/* Where a comment cuts the plain (unquoted, not block) scalar that starts at byte offset start of
 * data: the offset of a '#' after a space that is followed at once by text ("feature #0"), which
 * reads as part of the sentence but ends it; size when there is none. A comment written as one
 * ("# a note", after a space) is an author's note and is not reported. */
size_t lesson_cut_by_comment(const char *data, size_t size, size_t start);

/* Looking up strings among many, in O(log n) whatever the strings are: a sorted array rather
 * than a hash table, so that crafted keys cannot make the loader slow. */
typedef struct {
    const char *key;   /* borrowed, not copied */
    int value;
} lesson_index_entry;

typedef struct {
    lesson_index_entry *entries;  /* sorted by key, then by value */
    int count;
} lesson_index;

/* Builds an index of keys[i] → i for i < count. Returns false when out of memory. */
bool lesson_index_build(lesson_index *index, const char *const *keys, int count);

/* The smallest i with keys[i] equal to key (its first occurrence), or -1 when there is none. */
int lesson_index_first(const lesson_index *index, const char *key);

/* The indices i with keys[i] equal to key, in order: at most max of them into out; returns how
 * many there are in all (0 when there is none). */
int lesson_index_positions(const lesson_index *index, const char *key, int *out, int max);

void lesson_index_free(lesson_index *index);

#endif
