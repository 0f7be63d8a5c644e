/* UTF-8 display width and escaping of untrusted text, without depending on the locale. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>
#include "text.h"

int text_decode(const char *s, unsigned *codepoint)
{
    const unsigned char *u = (const unsigned char *)s;
    int length;
    unsigned c;
    if (u[0] < 0x80) { *codepoint = u[0]; return 1; }
    if (u[0] >= 0xc2 && u[0] <= 0xdf) { length = 2; c = u[0] & 0x1fu; }
    else if (u[0] >= 0xe0 && u[0] <= 0xef) { length = 3; c = u[0] & 0x0fu; }
    else if (u[0] >= 0xf0 && u[0] <= 0xf4) { length = 4; c = u[0] & 0x07u; }
    else return 0;
    for (int i = 1; i < length; i++) {
        if ((u[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (u[i] & 0x3fu);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    static const unsigned smallest[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (c < smallest[length] || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
        return 0;
    *codepoint = c;
    return length;
}

/* The width of a code point comes from utf8proc's tables (the whole of Unicode, East Asian
 * Width and emoji presentation included, whatever the locale), not from ranges written here. */
int text_char_width(unsigned c)
{
    if (c > 0x10ffff)
        return 1;
    return utf8proc_charwidth((utf8proc_int32_t)c);
}

int text_width(const char *utf8)
{
    int width = 0;
    while (*utf8) {
        unsigned c;
        int length = text_decode(utf8, &c);
        width += length ? text_char_width(c) : 4;   /* an invalid byte is shown as \xNN */
        utf8 += length ? length : 1;
    }
    return width;
}

/* Zero-width and format characters: invisible, they can hide text, glue two names into one
 * that looks like another, or break a line where none is seen (U+2028). */
static bool is_invisible(unsigned c)
{
    return c == 0x200b || c == 0x200d || c == 0x2028 || c == 0x2029 || c == 0xfeff
        || c == 0x180e || (c >= 0x2060 && c <= 0x2064) || (c >= 0x206a && c <= 0x206f)
        || (c >= 0xfff9 && c <= 0xfffb);
}

bool text_is_control(unsigned c)
{
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)
        || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)
        || c == 0x200e || c == 0x200f || c == 0x061c || is_invisible(c);
}

bool text_is_tag(unsigned c)
{
    return c >= 0xe0000 && c <= 0xe007f;
}

int text_json_escape(unsigned c, char *piece, size_t size)
{
    if (c < 0x10000)
        return snprintf(piece, size, "\\u%04x", c);
    unsigned offset = c - 0x10000;   /* 20 bits: the high ten, then the low ten */
    return snprintf(piece, size, "\\u%04x\\u%04x", 0xd800 + (offset >> 10),
                    0xdc00 + (offset & 0x3ffu));
}

/* An emoji, or the variation selector that asks for one: a zero-width joiner between two of
 * them makes one picture (👩‍💻), the only place it is shown as it is. */
static bool is_emoji(unsigned c)
{
    return (c >= 0x1f000 && c <= 0x1faff) || (c >= 0x2600 && c <= 0x27bf) || c == 0xfe0f;
}

bool text_joins_emoji(unsigned prev, const char *after)
{
    unsigned next;
    return is_emoji(prev) && text_decode(after, &next) > 0 && is_emoji(next);
}

/* The escaped form of the character at utf8 into piece (at least 16 bytes): itself, or \xNN
 * for an invalid byte or a C0 control or DEL, or \uNNNN for any other control, a zero-width or
 * format character or a tag character. prev is the character before (0 at the start). Stores
 * the bytes consumed in *bytes and the character in *c, and returns the length of piece. */
static int escape_piece(const char *utf8, unsigned prev, bool keep_newlines, char *piece,
                        int *bytes, unsigned *c)
{
    int length = text_decode(utf8, c);
    *bytes = length ? length : 1;
    if (length == 0) {
        *c = 0;
        return snprintf(piece, 16, "\\x%02x", (unsigned char)*utf8);
    }
    bool hidden = (text_is_control(*c) || text_is_tag(*c)) && !(keep_newlines && *c == '\n')
                  && !(*c == 0x200d && text_joins_emoji(prev, utf8 + 3));
    if (hidden)
        return snprintf(piece, 16, *c < 0x80 ? "\\x%02x" : "\\u%04x", *c);
    return snprintf(piece, 16, "%.*s", length, utf8);
}

/* Appends piece to buffer at *length, as snprintf would, counting what does not fit. */
static void append_piece(char *buffer, size_t size, size_t *length, const char *piece)
{
    for (; *piece; piece++, (*length)++)
        if (*length + 1 < size)
            buffer[*length] = *piece;
}

/* Where a character stands on its line, for the characters Markdown reads as syntax only at the
 * start of a line (a list item, a heading underline, a quote, a definition, an ordered item). */
typedef enum { LINE_START, LINE_DIGITS, LINE_TEXT } line_place;

/* One character's Markdown form: an entity, a backslash escape, or the character itself
 * (escaped first by text_escape when it is a control character or an invalid byte, whose
 * backslash is then escaped too). Punctuation that is syntax anywhere (emphasis, code, links,
 * tables, headings' closing #, and pandoc's math, citations and attributes) is always escaped;
 * - + = : % only where a line starts, . and ) only after a line's leading digits, so that the
 * handout's source stays readable. */
static void markdown_piece(const char *utf8, int bytes, bool keep_lines, line_place place,
                           char piece[32])
{
    unsigned char c = (unsigned char)utf8[0];
    if (c == '<' || c == '>' || c == '&') {
        snprintf(piece, 32, "%s", c == '<' ? "&lt;" : c == '>' ? "&gt;" : "&amp;");
        return;
    }
    bool syntax = bytes == 1 && c != '\0'
        && (strchr("\\`*_[]|~^$@{}#", c)
            || (place == LINE_START && strchr("-+=:%", c))
            || (place == LINE_DIGITS && strchr(".)", c)));
    if (syntax) {
        snprintf(piece, 32, "\\%c", c);
        return;
    }
    if (bytes == 1 && c == '\n' && keep_lines) {
        snprintf(piece, 32, "\n");
        return;
    }
    char one[8], escaped[24];
    snprintf(one, sizeof one, "%.*s", bytes, utf8);
    text_escape(one, escaped, sizeof escaped);
    snprintf(piece, 32, "%s%s", escaped[0] == '\\' ? "\\" : "", escaped);
}

/* The place of the character after c, which stood at place. */
static line_place markdown_next_place(unsigned c, bool keep_lines, line_place place)
{
    if (c == '\n' && keep_lines)
        return LINE_START;
    if (place == LINE_START && c == ' ')
        return LINE_START;
    if ((place == LINE_START || place == LINE_DIGITS) && c >= '0' && c <= '9')
        return LINE_DIGITS;
    return LINE_TEXT;
}

int text_escape_markdown(const char *utf8, bool keep_lines, char *buffer, size_t size)
{
    size_t length = 0;
    line_place place = LINE_START;
    while (*utf8) {
        unsigned c;
        int bytes = text_decode(utf8, &c);
        char piece[32];
        markdown_piece(utf8, bytes ? bytes : 1, keep_lines, place, piece);
        append_piece(buffer, size, &length, piece);
        place = markdown_next_place(bytes ? c : 0xFFFD, keep_lines, place);
        utf8 += bytes ? bytes : 1;
    }
    if (size)
        buffer[length < size ? length : size - 1] = '\0';
    return (int)length;
}

/* One piece of XML character data or attribute value: the five characters XML reads as syntax
 * as entities, anything else as escape_piece writes it. */
static const char *xml_entity(const char *piece)
{
    if (piece[0] == '\0' || piece[1] != '\0') return NULL;
    switch (piece[0]) {
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '&': return "&amp;";
    case '"': return "&quot;";
    case '\'': return "&apos;";
    default: return NULL;
    }
}

/* Hands each piece escape_piece writes of utf8 to put, or instead what entity gives for it
 * (NULL: the piece itself; entity NULL: no entities): the one loop of every escaping, into a
 * buffer or onto a stream. */
static void escape_each(const char *utf8, bool keep_newlines,
                        const char *(*entity)(const char *piece),
                        void (*put)(void *sink, const char *piece), void *sink)
{
    unsigned prev = 0;
    while (*utf8) {
        char piece[16];
        int bytes;
        escape_piece(utf8, prev, keep_newlines, piece, &bytes, &prev);
        const char *instead = entity ? entity(piece) : NULL;
        put(sink, instead ? instead : piece);
        utf8 += bytes;
    }
}

typedef struct {
    char *buffer;
    size_t size, length;
} buffer_sink;

static void put_in_buffer(void *sink, const char *piece)
{
    buffer_sink *b = sink;
    append_piece(b->buffer, b->size, &b->length, piece);
}

/* Escapes utf8 into buffer as snprintf would. */
static int escape(const char *utf8, char *buffer, size_t size, bool keep_newlines,
                  const char *(*entity)(const char *piece))
{
    buffer_sink b = {buffer, size, 0};
    escape_each(utf8, keep_newlines, entity, put_in_buffer, &b);
    if (size)
        buffer[b.length < size ? b.length : size - 1] = '\0';
    return (int)b.length;
}

typedef struct {
    FILE *stream;
    int status;
} stream_sink;

static void put_on_stream(void *sink, const char *piece)
{
    stream_sink *s = sink;
    if (fputs(piece, s->stream) == EOF)
        s->status = EOF;
}

int text_write_escaped(FILE *stream, const char *utf8, bool keep_newlines)
{
    stream_sink s = {stream, 0};
    escape_each(utf8, keep_newlines, NULL, put_on_stream, &s);
    return s.status;
}

int text_escape(const char *utf8, char *buffer, size_t size)
{
    return escape(utf8, buffer, size, false, NULL);
}

int text_escape_lines(const char *utf8, char *buffer, size_t size)
{
    return escape(utf8, buffer, size, true, NULL);
}

int text_escape_xml(const char *utf8, bool keep_lines, char *buffer, size_t size)
{
    return escape(utf8, buffer, size, keep_lines, xml_entity);
}
