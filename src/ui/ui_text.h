/* Text for the terminal (ui_text.c): UTF-8 in, wide characters out, with text.h's one width
 * and control rules, and an ASCII spelling when the locale cannot show UTF-8; word wrapping. */
#ifndef ATTNSTEP_UI_TEXT_H
#define ATTNSTEP_UI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

/* Decodes s into out (at most capacity - 1 characters, then L'\0'); returns how many. Control
 * characters never come out (C0 as spaces, the others as U+FFFD); '\n' stays. */
size_t ui_text_widen(const char *s, bool utf8, wchar_t *out, size_t capacity);
/* Columns n characters of s take. */
int ui_text_width(const wchar_t *s, size_t n);
/* How many characters of s (n of them) fit in width columns; *used gets their width. */
size_t ui_text_fit(const wchar_t *s, size_t n, int width, int *used);

typedef struct { size_t start, length; } ui_span;
/* Word-wraps s into lines of at most width columns; '\n' breaks a line. Fills up to
 * max_lines spans and returns how many lines the whole text needs. */
int ui_text_wrap(const wchar_t *s, size_t n, int width, ui_span *lines, int max_lines);

/* Appends printf-formatted text to text (a string in size bytes), keeping it terminated: the
 * screens build their status and narration lines with it. */
void ui_text_append(char *text, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
