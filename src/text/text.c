/* UTF-8 display width and escaping of untrusted text, without depending on the locale. */
#include <stdbool.h>
#include <stdio.h>
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

typedef struct { unsigned first, last; } range;

static bool in_ranges(unsigned c, const range *ranges, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (c >= ranges[i].first && c <= ranges[i].last)
            return true;
    return false;
}

/* The common zero-width marks, enough for the accents and joiners lessons use. */
static const range zero_width[] = {
    { 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd }, { 0x0610, 0x061a },
    { 0x064b, 0x065f }, { 0x0e31, 0x0e31 }, { 0x0e34, 0x0e3a }, { 0x1ab0, 0x1aff },
    { 0x1dc0, 0x1dff }, { 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
    { 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff },
};

/* East Asian Wide and Fullwidth blocks, and emoji. */
static const range double_width[] = {
    { 0x1100, 0x115f }, { 0x2e80, 0x303e }, { 0x3041, 0x33ff }, { 0x3400, 0x4dbf },
    { 0x4e00, 0x9fff }, { 0xa000, 0xa4cf }, { 0xac00, 0xd7a3 }, { 0xf900, 0xfaff },
    { 0xfe30, 0xfe4f }, { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x1f300, 0x1f64f },
    { 0x1f900, 0x1f9ff }, { 0x20000, 0x3fffd },
};

int text_char_width(unsigned c)
{
    if (in_ranges(c, zero_width, sizeof zero_width / sizeof *zero_width))
        return 0;
    if (in_ranges(c, double_width, sizeof double_width / sizeof *double_width))
        return 2;
    return 1;
}

int text_width(const char *utf8)
{
    int width = 0;
    while (*utf8) {
        if ((unsigned char)*utf8 < 0x80) {  /* ASCII, every number printed: one column each */
            width++;
            utf8++;
            continue;
        }
        unsigned c;
        int length = text_decode(utf8, &c);
        width += length ? text_char_width(c) : 4;   /* an invalid byte is shown as \xNN */
        utf8 += length ? length : 1;
    }
    return width;
}

bool text_is_control(unsigned c)
{
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)
        || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)
        || c == 0x200e || c == 0x200f || c == 0x061c;
}

static int escape(const char *utf8, char *buffer, size_t size, bool keep_newlines)
{
    size_t length = 0;
    while (*utf8) {
        unsigned c;
        int bytes = text_decode(utf8, &c);
        char piece[16];
        int wrote;
        if (bytes == 0)
            wrote = snprintf(piece, sizeof piece, "\\x%02x", (unsigned char)*utf8);
        else if (text_is_control(c) && !(keep_newlines && c == '\n'))
            wrote = snprintf(piece, sizeof piece, c < 0x80 ? "\\x%02x" : "\\u%04x", c);
        else
            wrote = snprintf(piece, sizeof piece, "%.*s", bytes, utf8);
        for (int i = 0; i < wrote; i++, length++)
            if (length + 1 < size)
                buffer[length] = piece[i];
        utf8 += bytes ? bytes : 1;
    }
    if (size)
        buffer[length < size ? length : size - 1] = '\0';
    return (int)length;
}

int text_escape(const char *utf8, char *buffer, size_t size)
{
    return escape(utf8, buffer, size, false);
}

int text_escape_lines(const char *utf8, char *buffer, size_t size)
{
    return escape(utf8, buffer, size, true);
}
