/* The drawing helpers every screen uses (ui_paint.h): fields, wrapped text, lines, boxes, the
 * key bar, the accent colour and numbers. Calls curses and the leaf modules only. */
#include "ui_curses.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_keys.h"
#include "ui_paint.h"
#include "ui_text.h"
#include "ui_util.h"


/* Writes n wide characters at y, x in the current attributes, each spacing character with the
 * zero-width ones after it in one cell (setcchar): mvaddnwstr would give a mark or joiner after
 * a wide character to the wide character's second column, where it is lost, and 👩‍💻 would show
 * as two pictures. */
static void add_clusters(int y, int x, const wchar_t *w, size_t n)
{
    attr_t attrs;
    short pair;
    attr_get(&attrs, &pair, NULL);
    move(y, x);
    for (size_t i = 0; i < n;) {
        wchar_t cluster[CCHARW_MAX + 1];
        size_t k = 0, start = i;
        cluster[k++] = w[i++];
        while (i < n && w[i] != L'\n' && ui_text_width(w + i, 1) == 0) {
            if (k < CCHARW_MAX) cluster[k++] = w[i];
            i++;   /* marks past the cell's room are left out, never drawn on their own */
        }
        cluster[k] = L'\0';
        cchar_t cell;
        if (setcchar(&cell, cluster, attrs & ~A_COLOR, pair, NULL) == OK) add_wch(&cell);
        else addnwstr(w + start, (int)(i - start));
    }
}

int ui_colors_init(ui_color choice)
{
    if (choice == UI_COLOR_NEVER) return 0;   /* main turns NO_COLOR into never */
    /* 40 pairs: the accent and, from UI_PAIR_FREE on, the matrix pane's two ramps */
    if (!has_colors() || start_color() == ERR || COLORS < 8 || COLOR_PAIRS < 40) return 0;
    use_default_colors();
    init_pair(UI_PAIR_ACCENT, COLOR_YELLOW, -1);
    init_pair(UI_PAIR_DONE, COLOR_GREEN, -1);
    return COLORS >= 256 ? 256 : 8;
}

number_format ui_number_format(number_style style, int max_width, const ui_style *st)
{
    return (number_format){style, st->precision, max_width, !st->utf8};
}

int ui_number(double x, number_style style, int max_width, const ui_style *st, char *buffer,
              size_t size)
{
    number_format f = ui_number_format(style, max_width, st);
    return number_write(x, &f, buffer, size);
}

int ui_field(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
             int pair, int align)
{
    wchar_t w[UI_TEXT_MAX], line[UI_TEXT_MAX];
    if (width <= 0) return 0;
    if (width > UI_TEXT_MAX / 2) width = UI_TEXT_MAX / 2;
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    int used;
    size_t fit = ui_text_fit(w, n, width, &used);
    int pad = align == UI_RIGHT ? width - used : align == UI_CENTER ? (width - used) / 2 : 0;
    size_t len = 0;
    for (int i = 0; i < pad; i++) line[len++] = L' ';
    for (size_t i = 0; i < fit; i++) line[len++] = w[i];
    for (int i = pad + used; i < width; i++) line[len++] = L' ';
    attr_set((attr_t)attr, (short)pair, NULL);
    add_clusters(y, x, line, len);
    attr_set(A_NORMAL, 0, NULL);
    return used;
}

int ui_put(int y, int x, int width, const char *text, const ui_style *st, unsigned attr, int pair)
{
    wchar_t w[UI_TEXT_MAX];
    if (width <= 0) return 0;
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    int used;
    size_t fit = ui_text_fit(w, n, width, &used);
    attr_set((attr_t)attr, (short)pair, NULL);
    add_clusters(y, x, w, fit);
    attr_set(A_NORMAL, 0, NULL);
    return used;
}

void ui_cut_text(const char *text, int width, const ui_style *st, char *out, size_t size)
{
    if (ui_width(text, st) <= width) { snprintf(out, size, "%s", text); return; }
    wchar_t w[UI_TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    size_t fit = ui_text_fit(w, n, width - 1, NULL);
    size_t used = 0;
    for (size_t i = 0; i < fit && used + MB_LEN_MAX + 4 < size; i++) {
        mbstate_t state;
        memset(&state, 0, sizeof state);
        size_t k = wcrtomb(out + used, w[i], &state);
        if (k != (size_t)-1) used += k;
    }
    snprintf(out + used, size - used, "%s", st->utf8 ? "\xe2\x80\xa6" : "~");
}

/* Where the parenthesised clause that ends text[0, n) opens (its blank before), or 0. */
static size_t closing_clause(const char *text, size_t n)
{
    if (n == 0 || text[n - 1] != ')') return 0;
    for (size_t i = n - 1, depth = 0; i-- > 0;) {
        if (text[i] == ')') depth++;
        else if (text[i] == '(' && depth == 0)
            return i > 0 && text[i - 1] == ' ' ? i - 1 : 0;   /* "softmax(x)" is no clause */
        else if (text[i] == '(') depth--;
    }
    return 0;
}

void ui_shorten_text(const char *text, int width, const ui_style *st, char *out, size_t size)
{
    size_t n = strlen(text);
    snprintf(out, size, "%s", text);
    for (size_t open; ui_width(out, st) > width && (open = closing_clause(text, n)) > 0;) {
        n = open;
        snprintf(out, size, "%.*s", (int)n, text);
    }
    const char *dots = st->utf8 ? ", \xe2\x80\xa6" : ", ...";
    while (ui_width(out, st) > width) {
        const char *comma = NULL;
        for (const char *at = strstr(text, ", "); at && (size_t)(at - text) < n; at = strstr(at + 1, ", "))
            comma = at;
        if (!comma) { out[0] = '\0'; return; }   /* nothing whole fits */
        n = (size_t)(comma - text);
        snprintf(out, size, "%.*s%s", (int)n, text, dots);
    }
}

int ui_width(const char *text, const ui_style *st)
{
    wchar_t w[UI_TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    return ui_text_width(w, n);
}

void ui_put_wrapped(int y, int x, int width, int height, const char *text, const ui_style *st,
                    unsigned attr)
{
    wchar_t w[UI_TEXT_MAX];
    ui_span lines[64];
    if (width < 2 || height < 1) return;
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    height = height > 64 ? 64 : height;
    int needed = ui_text_wrap(w, n, width, lines, height);
    for (int i = 0; i < height && i < needed; i++) {
        bool cut = i == height - 1 && needed > height;
        const wchar_t *more = st->utf8 ? L" \u2026" : L" ...";
        int reserve = cut ? (int)wcslen(more) : 0;
        size_t fit = ui_text_fit(w + lines[i].start, lines[i].length, width - reserve, NULL);
        attr_set((attr_t)attr, 0, NULL);
        add_clusters(y + i, x, w + lines[i].start, fit);
        if (cut) addnwstr(more, reserve);
        attr_set(A_NORMAL, 0, NULL);
    }
}

int ui_put_wrapped_from(int y, int x, int width, int height, int first, const char *text,
                        const ui_style *st, unsigned attr)
{
    wchar_t w[UI_TEXT_MAX];
    ui_span lines[UI_TEXT_MAX / 2];
    if (width < 1) return 0;
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    int needed = ui_text_wrap(w, n, width, lines, UI_COUNT(lines));
    for (int i = 0; i < height && first + i < needed && first + i < UI_COUNT(lines); i++) {
        const ui_span *line = &lines[first + i];
        size_t fit = ui_text_fit(w + line->start, line->length, width, NULL);
        attr_set((attr_t)attr, 0, NULL);
        add_clusters(y + i, x, w + line->start, fit);
        attr_set(A_NORMAL, 0, NULL);
    }
    return needed;
}

int ui_lines_needed(const char *text, int width, const ui_style *st)
{
    wchar_t w[UI_TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, UI_TEXT_MAX);
    return ui_text_wrap(w, n, width, NULL, 0);
}

/* The last occurrence of needle in text before end, or NULL. */
static const char *last_before(const char *text, const char *end, const char *needle)
{
    const char *found = NULL;
    for (const char *at = strstr(text, needle); at && at < end; at = strstr(at + 1, needle))
        found = at;
    return found;
}

/* Writes text[0, head) + between + tail into out; true when that fits in lines of width. */
static bool cut_fits(char *out, size_t size, const char *text, size_t head, const char *between,
                     const char *tail, int width, int lines, const ui_style *st)
{
    snprintf(out, size, "%.*s%s%s", (int)head, text, between, tail);
    return ui_lines_needed(out, width, st) <= lines;
}

/* The longest head of text, ending at a blank between from and to, that fits before "… tail";
 * with closing, only a blank after a closed term (")" or "]"), so no term is cut. */
static bool cut_at_blank(char *out, size_t size, const char *text, const char *from,
                         const char *to, const char *dots, const char *tail, bool closing,
                         int width, int lines, const ui_style *st)
{
    char between[8];
    snprintf(between, sizeof between, " %s", dots);
    for (const char *at = to - 1; at > from; at--) {
        if (*at != ' ' || (closing && at[-1] != ')' && at[-1] != ']')) continue;
        /* a head longer than the whole room cannot fit: start where one could */
        if ((long)(at - text) > (long)width * lines) continue;
        if (cut_fits(out, size, text, (size_t)(at - text), between, tail, width, lines, st))
            return true;
    }
    return false;
}

bool ui_keep_the_result(char *text, size_t size, int width, int lines, const ui_style *st)
{
    if (ui_lines_needed(text, width, st) <= lines) return true;
    const char *result = last_before(text, text + strlen(text), " = ");
    const char *name_end = strstr(text, " = ");
    if (!result || result == name_end) return false;
    const char *last_term = last_before(text, result, " + ");
    const char *dots = st->utf8 ? "\xe2\x80\xa6" : "...";
    char *cut = malloc(size), between[16];
    if (!cut) return false;
    snprintf(between, sizeof between, " + %s", dots);
    bool done = false;
    /* whole terms: the first ones, "+ …", the last term and the result */
    for (const char *at = last_term ? last_before(text, last_term, " + ") : NULL; at && !done;
         at = last_before(text, at, " + "))
        done = cut_fits(cut, size, text, (size_t)(at - text), between, last_term, width, lines, st);
    /* else characters cut in the middle, after a closed term where one fits, else at a blank,
     * before the last term and the result, else before the result alone */
    const char *tails[] = {last_term ? last_term : result, result};
    for (int t = 0; t < 2 && !done; t++)
        for (int closing = 1; closing >= 0 && !done; closing--)
            done = cut_at_blank(cut, size, text, name_end + 3, tails[t], dots, tails[t],
                                closing, width, lines, st);
    if (!done) snprintf(cut, size, "%.*s = %s%s", (int)(name_end - text), text, dots, result);
    snprintf(text, size, "%s", cut);
    free(cut);
    return ui_lines_needed(text, width, st) <= lines;
}

void ui_draw_hline(int y, int x, int width, const ui_style *st)
{
    (void)st;   /* WACS_ lines are Unicode in a UTF-8 locale and ACS (or ASCII) otherwise */
    if (width > 0) mvhline_set(y, x, WACS_HLINE, width);
}

void ui_draw_vline(int y, int x, int height, const ui_style *st)
{
    (void)st;
    if (height > 0) mvvline_set(y, x, WACS_VLINE, height);
}

void ui_draw_box(int y, int x, int height, int width, const ui_style *st)
{
    int left = x > 0 ? x - 1 : x, right = x + width < COLS ? x + width + 1 : x + width;
    int top = y > 1 ? y - 1 : y, bottom = y + height < LINES - 1 ? y + height + 1 : y + height;
    for (int i = top; i < bottom; i++) ui_field(i, left, right - left, "", st, A_NORMAL, 0, UI_LEFT);
    ui_draw_hline(y, x + 1, width - 2, st);
    ui_draw_hline(y + height - 1, x + 1, width - 2, st);
    ui_draw_vline(y + 1, x, height - 2, st);
    ui_draw_vline(y + 1, x + width - 1, height - 2, st);
    mvadd_wch(y, x, WACS_ULCORNER);
    mvadd_wch(y, x + width - 1, WACS_URCORNER);
    mvadd_wch(y + height - 1, x, WACS_LLCORNER);
    mvadd_wch(y + height - 1, x + width - 1, WACS_LRCORNER);
}

bool ui_screen_too_small(void)
{
    return COLS < UI_MIN_COLS || LINES < UI_MIN_ROWS;
}

void ui_draw_too_small(const ui_style *st)
{
    char text[160];
    const char *times = st->utf8 ? "\xc3\x97" : "x";
    snprintf(text, sizeof text, "terminal too small: need at least %d%s%d (now %d%s%d)",
             UI_MIN_COLS, times, UI_MIN_ROWS, COLS, times, LINES);
    wchar_t w[256];
    ui_span lines[16];
    size_t n = ui_text_widen(text, st->utf8, w, 256);
    int count = ui_text_wrap(w, n, COLS, lines, 16), y0 = (LINES - count) / 2;
    erase();
    for (int i = 0; i < count && i < 16 && i < LINES; i++) {
        int width = ui_text_width(w + lines[i].start, lines[i].length);
        attr_set(A_BOLD, 0, NULL);
        add_clusters(y0 > 0 ? y0 + i : i, (COLS - width) / 2, w + lines[i].start,
                     lines[i].length);
        attr_set(A_NORMAL, 0, NULL);
    }
}

/* One key and its label at x on the bar; false (nothing drawn) when it does not fit. */
static bool bar_item(int *x, const ui_binding *b, const char *label, const ui_style *st)
{
    char key[64];
    int y = LINES - 1;
    ui_binding_bar_keys(b, st->utf8, key, sizeof key);
    if (*x + ui_width(key, st) + 1 + ui_width(label, st) > COLS) return false;
    *x += ui_put(y, *x, COLS - *x, key, st, A_REVERSE | A_BOLD, 0) + 1;
    *x += ui_put(y, *x, COLS - *x, label, st, A_NORMAL, 0) + 2;
    return true;
}

void ui_draw_bar_led(unsigned context, ui_action action, const char *label, const ui_style *st)
{
    int count, x = 0;
    const ui_binding *b = ui_bindings(&count);
    ui_field(LINES - 1, 0, COLS, "", st, A_NORMAL, 0, UI_LEFT);
    for (int i = 0; i < count && label; i++)
        if (b[i].action == action && ui_binding_applies(&b[i], context)) {
            bar_item(&x, &b[i], label, st);
            break;
        }
    for (int i = 0; i < count; i++) {
        if (!b[i].bar || !ui_binding_applies(&b[i], context)) continue;
        if (!bar_item(&x, &b[i], b[i].bar, st)) break;
    }
}

void ui_draw_bar(unsigned context, const ui_style *st)
{
    ui_draw_bar_led(context, UI_ACT_NONE, NULL, st);
}

