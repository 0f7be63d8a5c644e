/* libyaml's syntax errors in an author's terms (see lesson_syntax.h). libyaml says where it
 * stopped; the mistake is often earlier (the key without a space after ':' on the line above) or
 * elsewhere (the quote or bracket that was never closed), so each case finds its own place. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_diag.h"
#include "lesson_syntax.h"
#include "lesson_text.h"

typedef struct {
    const yaml_parser_t *parser;
    const char *data;
    size_t size;
    lesson_diagnostics *d;
} syntax;

/* The last scalar libyaml's scanner read before it stopped, with the marks around it. */
typedef struct {
    bool found, plain;
    yaml_mark_t start, end;
} scalar_seen;

static bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

static size_t offset_of(const syntax *s, yaml_mark_t mark) {
    return lesson_position_offset(s->data, s->size, (int)mark.line + 1, (int)mark.column + 1);
}

static void position_of(const syntax *s, size_t offset, int *line, int *col) {
    lesson_offset_position(s->data, s->size, offset, line, col);
}

/* The offset where the line of mark starts. */
static size_t line_start(const syntax *s, yaml_mark_t mark) {
    return lesson_position_offset(s->data, s->size, (int)mark.line + 1, 1);
}

static size_t line_end(const syntax *s, size_t from) {
    return lesson_line_end(s->data, s->size, from, NULL);
}

static size_t skip_blanks(const syntax *s, size_t from) {
    while (from < s->size && is_blank(s->data[from])) from++;
    return from;
}

/* Escapes bytes [from, to) of the file for a message, with a space put in after the byte at
 * `space_after` (SIZE_MAX for none); out holds LESSON_ESCAPED_MAX bytes. */
static const char *quote(const syntax *s, size_t from, size_t to, size_t space_after,
                         char *out) {
    char *raw = malloc(to - from + 2);
    if (!raw) return "";
    size_t used = 0;
    for (size_t i = from; i < to; i++) {
        raw[used++] = s->data[i];
        if (i == space_after) raw[used++] = ' ';
    }
    raw[used] = '\0';
    lesson_escape(raw, used, out);
    free(raw);
    return out;
}

/* The first ':' in the word that starts at `from` (up to a blank or the line's end) that is
 * followed by more of the word: "heads:2" meant as "heads: 2". A "://" (a web address) is not
 * one. Returns its offset, or SIZE_MAX. */
static size_t tight_colon(const syntax *s, size_t from) {
    size_t end = line_end(s, from);
    for (size_t i = from; i + 1 < end && !is_blank(s->data[i]); i++)
        if (s->data[i] == ':' && !is_blank(s->data[i + 1]) && s->data[i + 1] != '/') return i;
    return SIZE_MAX;
}

/* Reports "missing space after ':'" at the colon of the word that starts at `word`, quoting the
 * rest of its line as it is and as it should be. */
static void report_missing_space(const syntax *s, size_t word, size_t colon) {
    size_t end = line_end(s, word);
    while (end > word && is_blank(s->data[end - 1])) end--;
    char shown[LESSON_ESCAPED_MAX], fixed[LESSON_ESCAPED_MAX];
    int line, col;
    position_of(s, colon, &line, &col);
    lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_MISSING_SPACE,
                              quote(s, word, end, SIZE_MAX, shown)),
                LESSON_HINT_SPACE_AFTER_COLON, quote(s, word, end, colon, fixed));
}

static scalar_seen last_scalar(const syntax *s) {
    scalar_seen seen = { 0 };
    yaml_parser_t scanner;
    if (!yaml_parser_initialize(&scanner)) return seen;
    yaml_parser_set_input_string(&scanner, (const unsigned char *)s->data, s->size);
    for (bool going = true; going;) {
        yaml_token_t token;
        if (!yaml_parser_scan(&scanner, &token)) break;
        if (token.type == YAML_SCALAR_TOKEN)
            seen = (scalar_seen){ true, token.data.scalar.style == YAML_PLAIN_SCALAR_STYLE,
                                  token.start_mark, token.end_mark };
        going = token.type != YAML_STREAM_END_TOKEN;
        yaml_token_delete(&token);
    }
    yaml_parser_delete(&scanner);
    return seen;
}

/* The plain text that starts at `start` right after a list item's '- ' and whose first line is
 * a word, a space and more ("- stage scores"): a key with its ':' left out. Reports it at that
 * line, quoting the word and the line as it should be; false when it is not that. */
static bool explain_missing_colon(const syntax *s, size_t start) {
    size_t dash = start;
    while (dash > 0 && is_blank(s->data[dash - 1])) dash--;
    if (dash == 0 || s->data[dash - 1] != '-') return false;
    size_t word = start, end = line_end(s, start);
    while (word < end && (s->data[word] == '_' || (s->data[word] >= 'a' && s->data[word] <= 'z')
                          || (s->data[word] >= 'A' && s->data[word] <= 'Z')))
        word++;
    if (word == start || word >= end || s->data[word] != ' '
        || memchr(s->data + start, ':', end - start))
        return false;
    while (end > start && is_blank(s->data[end - 1])) end--;
    char key[LESSON_ESCAPED_MAX], text[LESSON_ESCAPED_MAX], fixed[LESSON_ESCAPED_MAX];
    quote(s, start, word, SIZE_MAX, key);
    quote(s, start, end, SIZE_MAX, text);
    char *colon = malloc(end - start + 2);
    if (!colon) return false;
    snprintf(colon, end - start + 2, "%.*s:%.*s", (int)(word - start), s->data + start,
             (int)(end - word), s->data + word);
    lesson_escape(colon, strlen(colon), fixed);
    free(colon);
    int line, col;
    position_of(s, word, &line, &col);
    lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_MISSING_COLON, key, text),
                LESSON_HINT_WRITE_AS, fixed);
    return true;
}

/* "mapping values are not allowed in this context": a ': ' inside the unquoted text just read.
 * That text may hold the real mistake (a key on an earlier line written without its space, or
 * a key indented so deep that it continues the text above); otherwise the text needs quotes. */
static bool explain_colon(const syntax *s) {
    scalar_seen text = last_scalar(s);
    if (!text.found || !text.plain) return false;
    size_t start = offset_of(s, text.start), colon = offset_of(s, s->parser->problem_mark);
    for (size_t word = start, next = 0; word < colon; word = skip_blanks(s, next)) {
        size_t found = tight_colon(s, word);
        if (found < colon) {
            report_missing_space(s, word, found);
            return true;
        }
        lesson_line_end(s->data, s->size, word, &next);
    }
    int line, col, start_line = (int)text.start.line + 1;
    position_of(s, colon, &line, &col);
    size_t key = skip_blanks(s, line_start(s, s->parser->problem_mark));
    while (key + 1 < colon && s->data[key] == '-' && is_blank(s->data[key + 1]))
        key = skip_blanks(s, key + 1);  /* "- stage:": the key of a list item */
    char shown[LESSON_ESCAPED_MAX];
    if (line > start_line && key < colon && !memchr(s->data + key, ' ', colon - key)) {
        if (explain_missing_colon(s, start)) return true;
        lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_KEY_TOO_DEEP,
                                  quote(s, key, colon, SIZE_MAX, shown)),
                    LESSON_HINT_LINE_UP_KEY, start_line);
        return true;
    }
    lesson_diagnostic *item = lesson_report(s->d, line, col, LESSON_ERROR_COLON_IN_TEXT);
    size_t end = line_end(s, start);
    while (end > start && is_blank(s->data[end - 1])) end--;
    bool simple = line == start_line && !memchr(s->data + start, '"', end - start)
               && !memchr(s->data + start, '\\', end - start);
    if (simple) lesson_hint(item, LESSON_HINT_QUOTE_LINE, quote(s, start, end, SIZE_MAX, shown));
    else lesson_hint(item, LESSON_HINT_QUOTE_FROM, start_line);
    return true;
}

/* "could not find expected ':'": a line that libyaml began to read as a key found no ': '. */
static void explain_key(const syntax *s) {
    size_t key = offset_of(s, s->parser->context_mark), colon = tight_colon(s, key);
    if (colon != SIZE_MAX) {
        report_missing_space(s, key, colon);
        return;
    }
    lesson_hint(lesson_report(s->d, (int)s->parser->context_mark.line + 1,
                              (int)s->parser->context_mark.column + 1,
                              LESSON_ERROR_NOT_KEY_VALUE),
                LESSON_HINT_CONTINUE_TEXT);
}

/* An opening quote or bracket (at the context mark) that nothing closed. */
static void explain_unclosed(const syntax *s, bool is_quote) {
    yaml_mark_t at = s->parser->context_mark;
    char opening = s->data[offset_of(s, at)];
    const char *open = opening == '"' ? "\"" : opening == '\'' ? "'" : opening == '{' ? "{" : "[";
    int line = (int)at.line + 1, col = (int)at.column + 1;
    if (is_quote) {
        lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_UNCLOSED_QUOTE, open),
                    LESSON_HINT_CLOSE_QUOTE, open);
        return;
    }
    bool map = opening == '{';
    lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_UNCLOSED_BRACKET, open),
                LESSON_HINT_CLOSE_BRACKET, map ? "mapping" : "list", map ? "}" : "]");
}

/* Text after a closing quote or bracket, on the same line: "hi" there. */
static bool explain_after_closing(const syntax *s, size_t at) {
    size_t before = at;
    while (before > 0 && is_blank(s->data[before - 1])) before--;
    static const char *const closings[][3] = {
        { "\"", "quote (\")", "quotes" }, { "'", "quote (')", "quotes" },
        { "]", "']'", "brackets" }, { "}", "'}'", "braces" },
    };
    for (size_t i = 0; before > 0 && i < sizeof closings / sizeof closings[0]; i++) {
        if (s->data[before - 1] != closings[i][0][0]) continue;
        int line, col;
        position_of(s, at, &line, &col);
        lesson_hint(lesson_report(s->d, line, col, LESSON_ERROR_AFTER_CLOSING, closings[i][1]),
                    LESSON_HINT_INSIDE_CLOSING, closings[i][2]);
        return true;
    }
    return false;
}

/* A line of a block mapping or list that lines up with nothing above it, or text after a
 * closing quote or bracket (the one place in a line where a key was due). */
static bool explain_indent(const syntax *s, bool mapping) {
    yaml_mark_t at = s->parser->problem_mark, block = s->parser->context_mark;
    size_t offset = offset_of(s, at);
    if (skip_blanks(s, line_start(s, at)) != offset) return explain_after_closing(s, offset);
    if (at.column == block.column && !mapping) {   /* a list's item whose '-' is missing */
        lesson_report(s->d, (int)at.line + 1, (int)at.column + 1, LESSON_ERROR_MISSING_DASH,
                      (int)block.line + 1);
        return true;
    }
    if (at.column == block.column) return false;
    lesson_diagnostic *item = lesson_report(s->d, (int)at.line + 1, (int)at.column + 1,
        LESSON_ERROR_WRONG_INDENT, (int)at.column + 1,
        mapping ? "keys of the mapping" : "items ('-') of the list", (int)block.column + 1,
        (int)block.line + 1);
    if (mapping) {
        lesson_hint(item, LESSON_HINT_LINE_UP, (int)block.column + 1);
        return true;
    }
    /* The item's first key follows its '-' (all ASCII from the '-' on, or blanks). */
    size_t dash = offset_of(s, block), key = skip_blanks(s, dash + 1);
    lesson_hint(item, LESSON_HINT_LINE_UP_ITEM, (int)block.line + 1,
                (int)block.column + 1 + (int)(key - dash));
    return true;
}

/* Where the value on the line of mark starts: after the blanks, any "- " and a "key: ". */
static size_t value_start(const syntax *s, yaml_mark_t mark) {
    size_t at = skip_blanks(s, line_start(s, mark)), end = line_end(s, at);
    while (at + 1 < end && s->data[at] == '-' && is_blank(s->data[at + 1]))
        at = skip_blanks(s, at + 1);
    for (size_t i = at; i + 1 < end && s->data[i] != '{'; i++)
        if (s->data[i] == ':' && is_blank(s->data[i + 1])) return skip_blanks(s, i + 1);
    return at;
}

/* A text meant as text that starts with '{' (a placeholder: "{weights[cat, sat]} is high"), on
 * the line where libyaml stopped or where its flow mapping began: a '{' whose first entry has no
 * ':' is no mapping an author meant ({window: 3} is). */
static bool explain_brace_text(const syntax *s) {
    yaml_mark_t marks[2] = { s->parser->problem_mark, s->parser->context_mark };
    for (int m = 0; m < (s->parser->context ? 2 : 1); m++) {
        size_t at = value_start(s, marks[m]), end = line_end(s, at), i = at + 1;
        if (at >= end || s->data[at] != '{') continue;
        while (i < end && s->data[i] != ',' && s->data[i] != '}' && s->data[i] != ':') i++;
        if (i < end && s->data[i] == ':') continue;
        while (end > at && is_blank(s->data[end - 1])) end--;
        int line, col;
        position_of(s, at, &line, &col);
        lesson_diagnostic *item = lesson_report(s->d, line, col, LESSON_ERROR_BRACE_TEXT);
        char shown[LESSON_ESCAPED_MAX];
        if (memchr(s->data + at, '"', end - at) || memchr(s->data + at, '\\', end - at))
            lesson_hint(item, LESSON_HINT_QUOTE_TEXT);
        else
            lesson_hint(item, LESSON_HINT_QUOTE_LINE, quote(s, at, end, SIZE_MAX, shown));
        return true;
    }
    return false;
}

/* Says one of the common mistakes, or returns false for any other error. */
static bool explain(const syntax *s) {
    const char *problem = s->parser->problem, *context = s->parser->context;
    if (explain_brace_text(s)) return true;
    if (strcmp(problem, "mapping values are not allowed in this context") == 0)
        return explain_colon(s);
    if (!context) return false;
    if (strcmp(problem, "could not find expected ':'") == 0) {
        explain_key(s);
        return true;
    }
    if (strcmp(problem, "found unexpected end of stream") == 0
        && strcmp(context, "while scanning a quoted scalar") == 0) {
        explain_unclosed(s, true);
        return true;
    }
    bool flow = strcmp(context, "while parsing a flow sequence") == 0
             || strcmp(context, "while parsing a flow mapping") == 0;
    if (flow && strncmp(problem, "did not find expected ','", 25) == 0
        && s->parser->problem_mark.line > s->parser->context_mark.line) {
        explain_unclosed(s, false);
        return true;
    }
    if (strcmp(problem, "did not find expected key") == 0
        && strcmp(context, "while parsing a block mapping") == 0)
        return explain_indent(s, true);
    if (strcmp(problem, "did not find expected '-' indicator") == 0
        && strcmp(context, "while parsing a block collection") == 0)
        return explain_indent(s, false);
    return false;
}

void lesson_syntax_report(const yaml_parser_t *parser, const char *data, size_t size,
                          lesson_diagnostics *d) {
    if (parser->error == YAML_MEMORY_ERROR || !parser->problem) {
        lesson_report(d, 0, 0, LESSON_ERROR_NO_MEMORY);
        return;
    }
    int line = (int)parser->problem_mark.line + 1, col = (int)parser->problem_mark.column + 1;
    /* Reader errors (bad encoding) carry only a byte offset. */
    if (parser->error == YAML_READER_ERROR)
        lesson_offset_position(data, size, parser->problem_offset, &line, &col);
    if (data[lesson_position_offset(data, size, line, col)] == '\t') {
        /* libyaml only says "found character that cannot start any token". */
        lesson_report(d, line, col, LESSON_ERROR_YAML_TAB);
        return;
    }
    syntax s = { parser, data, size, d };
    if (parser->error != YAML_READER_ERROR && explain(&s)) return;
    char message[512];
    if (parser->context)
        snprintf(message, sizeof message, "%s %s started at line %d", parser->problem,
                 parser->context, (int)parser->context_mark.line + 1);
    else
        snprintf(message, sizeof message, "%s", parser->problem);
    lesson_report(d, line, col, LESSON_ERROR_YAML_SYNTAX, message);
}
