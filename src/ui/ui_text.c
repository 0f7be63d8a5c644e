/* Text for the terminal (ui_text.h): UTF-8 decoded and measured with text.h's rules (so it
 * does not depend on the locale), word wrapping, and the ASCII spelling used when the locale
 * cannot show UTF-8; appending formatted text to a line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "text.h"
#include "ui_text.h"

/* ASCII spellings of the characters the node table, the core and the UI use. */
static const struct { unsigned cp; const char *ascii; } ascii_spelling[] = {
    {0x00B7, "*"},    {0x00D7, "x"},   {0x1D40, "^T"},  {0x221A, "sqrt"}, {0x2212, "-"},
    {0x221E, "inf"},  {0x2026, "..."}, {0x2014, "-"},   {0x2013, "-"},    {0x2192, "->"},
    {0x2190, "<-"},   {0x2191, "^"},   {0x2193, "v"},   {0x25B8, ">"},    {0x25B6, ">"},
    {0x2018, "'"},    {0x2019, "'"},   {0x201C, "\""},  {0x201D, "\""},   {0x2248, "~"},
    {0x2264, "<="},   {0x2265, ">="},  {0x00A0, " "},   {0x2022, "*"},    {0x2211, "sum"},
    {0x03A3, "sum"},  {0x2260, "!="},  {0x00B1, "+-"},  {0x2208, "in"},
    /* the tally's bars (ui_tally.c), one column each, lowest to tallest, and their frame */
    {0x2581, "_"},    {0x2582, "."},   {0x2583, ","},   {0x2584, ":"},    {0x2585, "="},
    {0x2586, "+"},    {0x2587, "%"},   {0x2588, "#"},   {0x2595, "|"},    {0x258F, "|"},
};

/* Decodes one UTF-8 sequence at s into *cp (text_decode); returns its length. A malformed
 * byte becomes U+FFFD and length 1, so bad input never stops the drawing. */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
    int length = text_decode((const char *)s, cp);
    if (length == 0) {
        *cp = 0xFFFD;
        return 1;
    }
    return (size_t)length;
}

static const char *ascii_for(unsigned cp)
{
    for (size_t i = 0; i < sizeof ascii_spelling / sizeof ascii_spelling[0]; i++)
        if (ascii_spelling[i].cp == cp) return ascii_spelling[i].ascii;
    return "?";
}

size_t ui_text_widen(const char *s, bool utf8, wchar_t *out, size_t capacity)
{
    size_t n = 0;
    if (capacity == 0) return 0;
    const unsigned char *p = (const unsigned char *)s;
    unsigned prev = 0;
    while (*p && n + 1 < capacity) {
        unsigned cp;
        p += utf8_next(p, &cp);
        /* Controls would reach the terminal as commands, or reorder what is shown (text.h's
         * one set): C0 controls and DEL show as a space, the others as U+FFFD; a joiner
         * between two emoji makes one picture (👩‍💻) and is kept, as text_escape keeps it. */
        bool joins = cp == 0x200D && text_joins_emoji(prev, (const char *)p);
        prev = cp;
        if (cp != '\n' && text_is_control(cp) && !joins)
            cp = cp < 0x20 || cp == 0x7F ? ' ' : 0xFFFD;
        if (utf8 || cp < 0x80) { out[n++] = (wchar_t)cp; continue; }
        /* Without UTF-8, marks that take no column of their own (the accent of "e\u0301") are
         * left out, so "café" written either way is "caf?" or "cafe", never wider. */
        if (text_char_width(cp) == 0) continue;
        for (const char *a = ascii_for(cp); *a && n + 1 < capacity; a++) out[n++] = (wchar_t)*a;
    }
    out[n] = L'\0';
    return n;
}

int ui_text_width(const wchar_t *s, size_t n)
{
    int width = 0;
    for (size_t i = 0; i < n; i++) width += text_char_width((unsigned)s[i]);
    return width;
}

size_t ui_text_fit(const wchar_t *s, size_t n, int width, int *used)
{
    int total = 0;
    size_t i = 0;
    for (; i < n && s[i] != L'\n'; i++) {
        int w = text_char_width((unsigned)s[i]);
        if (total + w > width) break;
        total += w;
    }
    if (used) *used = total;
    return i;
}

int ui_text_wrap(const wchar_t *s, size_t n, int width, ui_span *lines, int max_lines)
{
    int count = 0;
    size_t i = 0;
    if (width < 1) return 0;
    while (i < n) {
        size_t fit = ui_text_fit(s + i, n - i, width, NULL);
        size_t end = i + fit, next = end;
        if (end < n && s[end] == L'\n') {
            next = end + 1;
        } else if (end < n) {
            /* Break after the last space that fits, unless the word alone is too long. */
            size_t space = end;
            while (space > i && s[space] != L' ') space--;
            if (space > i) end = space;
            else if (fit == 0) end = i + 1;   /* a character wider than the line */
            next = end;
            while (next < n && s[next] == L' ') next++;
        }
        if (count < max_lines) lines[count] = (ui_span){i, end - i};
        count++;
        i = next;
    }
    return count;
}

void ui_text_append(char *text, size_t size, const char *format, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    vsnprintf(text + used, size - used, format, args);
    va_end(args);
}
