/* Text helpers of the lesson loader (see lesson_text.h): everything here is linear in its input,
 * so hostile files cannot make the loader slow before a limit is checked. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_text.h"
#include "text.h"

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p, int *count) {
    *count = 0;
    while (is_digit(*p)) { p++; (*count)++; }
    return p;
}

/* Whether text spells a non-finite number in one of YAML's or C's ways. */
static bool names_nonfinite(const char *text) {
    static const char *const names[] = {"nan", "inf", "infinity", ".nan", ".inf"};
    if (*text == '+' || *text == '-') text++;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t j = 0;
        while (names[i][j] && text[j] && (text[j] | 0x20) == names[i][j]) j++;
        if (!names[i][j] && !text[j]) return true;
    }
    return false;
}

/* strtod in the "C" locale whatever LC_NUMERIC is: text is already known to be a plain decimal
 * number, so only its '.' may need to become the locale's decimal point. */
static double strtod_c(const char *text) {
    const char *point = localeconv()->decimal_point, *dot = strchr(text, '.');
    if (strcmp(point, ".") == 0 || !dot) return strtod(text, NULL);
    size_t size = strlen(text) + strlen(point) + 1;
    char *copy = malloc(size);
    if (!copy) return strtod(text, NULL);
    snprintf(copy, size, "%.*s%s%s", (int)(dot - text), text, point, dot + 1);
    double x = strtod(copy, NULL);
    free(copy);
    return x;
}

lesson_number_status lesson_parse_number(const char *text, double *value) {
    if (names_nonfinite(text)) return LESSON_NUMBER_NONFINITE;
    const char *p = text;
    int whole = 0, fraction = 0, exponent = 0;
    if (*p == '+' || *p == '-') p++;
    p = skip_digits(p, &whole);
    if (*p == '.') p = skip_digits(p + 1, &fraction);
    if (whole + fraction == 0) return LESSON_NUMBER_SYNTAX;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        p = skip_digits(p, &exponent);
        if (exponent == 0) return LESSON_NUMBER_SYNTAX;
    }
    if (*p) return LESSON_NUMBER_SYNTAX;
    errno = 0;
    double x = strtod_c(text);
    /* ERANGE is both overflow and underflow. A subnormal result such as 4.9e-324 is a double
     * (the nearest one) and is kept; infinity or a number that became zero is refused. */
    if (errno == ERANGE && isinf(x)) return LESSON_NUMBER_RANGE;
    if (errno == ERANGE && x == 0.0) return LESSON_NUMBER_TINY;
    *value = x;
    return LESSON_NUMBER_OK;
}

bool lesson_parse_integer(const char *text, uint64_t min, uint64_t max, uint64_t *value) {
    uint64_t x = 0;
    if (!*text) return false;
    for (const char *p = text; *p; p++) {
        if (!is_digit(*p)) return false;
        uint64_t digit = (uint64_t)(*p - '0');
        if (x > (UINT64_MAX - digit) / 10) return false;
        x = x * 10 + digit;
    }
    if (x < min || x > max) return false;
    *value = x;
    return true;
}

/* YAML 1.1's printable set, as libyaml's reader checks it. */
static bool yaml_printable(unsigned cp) {
    return cp == 0x09 || cp == 0x0a || cp == 0x0d || (cp >= 0x20 && cp <= 0x7e) || cp == 0x85
        || (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd)
        || (cp >= 0x10000 && cp <= 0x10ffff);
}

lesson_text_status lesson_check_text(const char *data, size_t size, size_t *offset,
                                     unsigned *value) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < size;) {
        unsigned cp = 0;
        size_t length = (size_t)text_decode(data + i, &cp);
        *offset = i;
        if (length == 0) { *value = p[i]; return LESSON_TEXT_UTF8; }
        if (cp == 0) { *value = 0; return LESSON_TEXT_NUL; }
        if (!yaml_printable(cp)) { *value = cp; return LESSON_TEXT_CONTROL; }
        i += length;
    }
    return LESSON_TEXT_OK;
}

/* Bytes of the line break at data[i] (0 when there is none): libyaml's breaks are CR LF (one
 * break), CR, LF, NEL, LS and PS. */
static size_t break_length(const char *data, size_t size, size_t i) {
    const unsigned char *p = (const unsigned char *)data;
    if (i >= size) return 0;
    if (p[i] == '\r') return i + 1 < size && p[i + 1] == '\n' ? 2 : 1;
    if (p[i] == '\n') return 1;
    unsigned cp = 0;
    size_t length = (size_t)text_decode(data + i, &cp);
    return length > 0 && (cp == 0x85 || cp == 0x2028 || cp == 0x2029) ? length : 0;
}

/* Bytes of the character at data[i]: an invalid byte counts as one character. */
static size_t char_length(const char *data, size_t i) {
    unsigned cp = 0;
    int length = text_decode(data + i, &cp);
    return length > 0 ? (size_t)length : 1;
}

size_t lesson_first_line(const char *data, size_t size) {
    return size >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* Walks data from offset i, at line *l and column *c, counting lines and columns as libyaml
 * does, until the byte offset `until` or the place line:col, whichever comes first. Returns the
 * offset reached. */
static size_t walk_from(const char *data, size_t size, size_t i, size_t until, int line, int col,
                        int *l, int *c) {
    while (i < until && i < size && (*l < line || (*l == line && *c < col))) {
        size_t line_break = break_length(data, size, i);
        if (line_break) {
            ++*l;
            *c = 1;
            i += line_break;
        } else {
            ++*c;
            i += char_length(data, i);
        }
    }
    return i;
}

static size_t walk(const char *data, size_t size, size_t until, int line, int col, int *l,
                   int *c) {
    *l = 1;
    *c = 1;
    return walk_from(data, size, lesson_first_line(data, size), until, line, col, l, c);
}

size_t lesson_cursor_move(lesson_cursor *cursor, const char *data, size_t size, int line,
                          int col) {
    if (cursor->line < 1 || line < cursor->line || (line == cursor->line && col < cursor->col))
        *cursor = (lesson_cursor){ lesson_first_line(data, size), 1, 1 };
    cursor->offset = walk_from(data, size, cursor->offset, SIZE_MAX, line, col, &cursor->line,
                               &cursor->col);
    return cursor->offset;
}

void lesson_offset_position(const char *data, size_t size, size_t offset, int *line, int *col) {
    walk(data, size, offset, INT_MAX, INT_MAX, line, col);
}

size_t lesson_position_offset(const char *data, size_t size, int line, int col) {
    int l, c;
    return walk(data, size, SIZE_MAX, line, col, &l, &c);
}

size_t lesson_line_end(const char *data, size_t size, size_t offset, size_t *next) {
    size_t i = offset;
    while (i < size && !break_length(data, size, i)) i += char_length(data, i);
    if (next) *next = i + break_length(data, size, i);
    return i;
}

char *lesson_escape(const char *text, size_t length, char *out) {
    /* Cut after ESCAPE_MAX_CHARS characters, then let text_escape make it harmless. */
    enum { ESCAPE_MAX_CHARS = 64 };
    char cut[ESCAPE_MAX_CHARS * 4 + 1];
    size_t used = 0;
    int chars = 0;
    while (used < length && chars < ESCAPE_MAX_CHARS) {
        unsigned cp;
        int n = text_decode(text + used, &cp);
        size_t step = n > 0 && (size_t)n <= length - used ? (size_t)n : 1;
        memcpy(cut + used, text + used, step);
        used += step;
        chars++;
    }
    cut[used] = '\0';
    /* 64 characters escaped take at most 64 × 6 bytes, so the "…" always fits. */
    int wrote = text_escape(cut, out, LESSON_ESCAPED_MAX - 4);
    if (used < length) memcpy(out + wrote, "\xe2\x80\xa6", 4);
    return out;
}

static bool blank_byte(char c) {
    return c == ' ' || c == '\t';
}

/* The comment on the line data[from, end), if one is there: its '#' offset, or end. */
static size_t comment_on_line(const char *data, size_t from, size_t end) {
    for (size_t j = from; j + 1 < end; j++)
        if (blank_byte(data[j]) && data[j + 1] == '#') return j + 1;
    return end;
}

size_t lesson_cut_by_comment(const char *data, size_t size, size_t start) {
    if (start >= size || strchr("\"'|>[{", data[start])) return size;  /* '#' is text there */
    size_t line = start;
    while (line > 0 && data[line - 1] != '\n' && data[line - 1] != '\r') line--;
    size_t key = line;
    while (key < start && (data[key] == ' ' || data[key] == '-')) key++;
    for (size_t i = start;;) {
        size_t next, end = lesson_line_end(data, size, i, &next);
        size_t hash = comment_on_line(data, i, end);
        if (hash < end) return hash + 1 < end && !blank_byte(data[hash + 1]) ? hash : size;
        if (next >= size) return size;
        /* the scalar goes on over blank lines and lines indented deeper than its key */
        size_t k = next;
        while (k < size && data[k] == ' ') k++;
        bool blank = k >= size || data[k] == '\n' || data[k] == '\r';
        if (!blank && (k - next <= key - line || data[k] == '#')) return size;
        i = next;
    }
}

static int compare_entries(const void *a, const void *b) {
    const lesson_index_entry *x = a, *y = b;
    int order = strcmp(x->key, y->key);
    return order ? order : (x->value > y->value) - (x->value < y->value);
}

bool lesson_index_build(lesson_index *index, const char *const *keys, int count) {
    index->count = 0;
    index->entries = malloc((size_t)(count > 0 ? count : 1) * sizeof *index->entries);
    if (!index->entries) return false;
    for (int i = 0; i < count; i++) index->entries[i] = (lesson_index_entry){ keys[i], i };
    qsort(index->entries, (size_t)count, sizeof *index->entries, compare_entries);
    index->count = count;
    return true;
}

/* The first entry whose key is not below key (count when there is none). */
static int lower_bound(const lesson_index *index, const char *key) {
    int low = 0, high = index->count;  /* the first entry not below key is in [low, high] */
    while (low < high) {
        int middle = low + (high - low) / 2;
        if (strcmp(index->entries[middle].key, key) < 0) low = middle + 1;
        else high = middle;
    }
    return low;
}

int lesson_index_first(const lesson_index *index, const char *key) {
    int low = lower_bound(index, key);
    if (low < index->count && strcmp(index->entries[low].key, key) == 0)
        return index->entries[low].value;
    return -1;
}

int lesson_index_positions(const lesson_index *index, const char *key, int *out, int max) {
    int found = 0;
    /* entries of one key are sorted by value: its positions in order */
    for (int i = lower_bound(index, key);
         i < index->count && strcmp(index->entries[i].key, key) == 0; i++)
        if (found++ < max) out[found - 1] = index->entries[i].value;
    return found;
}

void lesson_index_free(lesson_index *index) {
    free(index->entries);
    index->entries = NULL;
    index->count = 0;
}
