/* Draws a lesson's screen with curses: title, stage list, matrix or heatmap, explanation,
 * narration, key bar and help overlay. Every number shown is read from the trace. */
#include "ui_curses.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_internal.h"

enum { PAIR_ACCENT = 1, PAIR_SEQ = 8, PAIR_DIV = 24 };
#define TEXT_MAX 4096

/* Colour ramps (background, text): sequential for weights (dark = 0, bright = 1), diverging
 * blue-white-red for signed matrices (white = 0). */
typedef struct { short bg, fg; } ramp_colour;
static const ramp_colour seq256[] = {{54, 15}, {60, 15}, {24, 15}, {30, 15}, {36, 15},
                                     {35, 0},  {71, 0},  {107, 0}, {148, 0}, {184, 0}};
static const ramp_colour div256[] = {{19, 15}, {26, 15}, {32, 15}, {74, 0}, {117, 0}, {255, 0},
                                     {217, 0}, {210, 0}, {203, 0}, {160, 15}, {124, 15}};
static const ramp_colour seq8[] = {{COLOR_BLUE, COLOR_WHITE}, {COLOR_MAGENTA, COLOR_WHITE},
                                   {COLOR_CYAN, COLOR_BLACK}, {COLOR_GREEN, COLOR_BLACK},
                                   {COLOR_YELLOW, COLOR_BLACK}};
static const ramp_colour div8[] = {{COLOR_BLUE, COLOR_WHITE}, {COLOR_CYAN, COLOR_BLACK},
                                   {COLOR_WHITE, COLOR_BLACK}, {COLOR_YELLOW, COLOR_BLACK},
                                   {COLOR_RED, COLOR_WHITE}};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Shade glyphs stand in for colour, so nothing is lost on a monochrome screen. */
static const char *const shades_utf8[] = {" ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                          "\xe2\x96\x88"};
static const char *const shades_ascii[] = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};

typedef struct { const ramp_colour *colours; int n, first_pair; } ramp;

static ramp ramp_for(const ui_style *st, bool diverging)
{
    if (st->colors >= 256)
        return diverging ? (ramp){div256, COUNT(div256), PAIR_DIV} : (ramp){seq256, COUNT(seq256), PAIR_SEQ};
    return diverging ? (ramp){div8, COUNT(div8), PAIR_DIV} : (ramp){seq8, COUNT(seq8), PAIR_SEQ};
}

int ui_colors_init(ui_color choice)
{
    const char *no_color = getenv("NO_COLOR");
    if (choice == UI_COLOR_NEVER || (choice == UI_COLOR_AUTO && no_color && *no_color)) return 0;
    if (!has_colors() || start_color() == ERR || COLORS < 8 || COLOR_PAIRS < 40) return 0;
    use_default_colors();
    ui_style st = {.colors = COLORS >= 256 ? 256 : 8};
    init_pair(PAIR_ACCENT, COLOR_YELLOW, -1);
    for (int d = 0; d < 2; d++) {
        ramp r = ramp_for(&st, d == 1);
        for (int i = 0; i < r.n; i++)
            init_pair((short)(r.first_pair + i), r.colours[i].fg, r.colours[i].bg);
    }
    return st.colors;
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Position 0…1 of x on its ramp: weights as they are, signed values with 0 in the middle. */
static double ramp_position(double x, bool diverging, double absmax)
{
    if (!diverging) return x < 0 ? 0 : x > 1 ? 1 : x;
    return absmax > 0 ? (x / absmax + 1) / 2 : 0.5;
}

static int ramp_level(double position, int n)
{
    return clampi((int)lround(position * (n - 1)), 0, n - 1);
}

/* The shade glyph for a position; on a diverging ramp it shows the distance from 0. */
static const char *shade(const ui_style *st, double position, bool diverging)
{
    double strength = diverging ? fabs(position * 2 - 1) : position;
    if (st->utf8) return shades_utf8[ramp_level(strength, COUNT(shades_utf8))];
    return shades_ascii[ramp_level(strength, COUNT(shades_ascii))];
}

int ui_field(int y, int x, int width, const char *text, const ui_style *st, unsigned attr,
             int pair, int align)
{
    wchar_t w[TEXT_MAX], line[TEXT_MAX];
    if (width <= 0) return 0;
    if (width > TEXT_MAX / 2) width = TEXT_MAX / 2;
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
    int used;
    size_t fit = ui_text_fit(w, n, width, &used);
    int pad = align == UI_RIGHT ? width - used : align == UI_CENTER ? (width - used) / 2 : 0;
    size_t len = 0;
    for (int i = 0; i < pad; i++) line[len++] = L' ';
    for (size_t i = 0; i < fit; i++) line[len++] = w[i];
    for (int i = pad + used; i < width; i++) line[len++] = L' ';
    attr_set((attr_t)attr, (short)pair, NULL);
    mvaddnwstr(y, x, line, (int)len);
    attr_set(A_NORMAL, 0, NULL);
    return used;
}

int ui_put(int y, int x, int width, const char *text, const ui_style *st, unsigned attr, int pair)
{
    wchar_t w[TEXT_MAX];
    if (width <= 0) return 0;
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
    int used;
    size_t fit = ui_text_fit(w, n, width, &used);
    attr_set((attr_t)attr, (short)pair, NULL);
    mvaddnwstr(y, x, w, (int)fit);
    attr_set(A_NORMAL, 0, NULL);
    return used;
}

static int text_width(const char *text, const ui_style *st)
{
    wchar_t w[TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
    return ui_text_width(w, n);
}

/* Word-wraps text into height lines at y, x; a text that needs more ends with "…". */
static void draw_wrapped(int y, int x, int width, int height, const char *text,
                         const ui_style *st, unsigned attr)
{
    static wchar_t w[TEXT_MAX];
    ui_span lines[64];
    if (width < 2 || height < 1) return;
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
    height = height > 64 ? 64 : height;
    int needed = ui_text_wrap(w, n, width, lines, height);
    for (int i = 0; i < height && i < needed; i++) {
        bool cut = i == height - 1 && needed > height;
        const wchar_t *more = st->utf8 ? L" \u2026" : L" ...";
        int reserve = cut ? (int)wcslen(more) : 0;
        size_t fit = ui_text_fit(w + lines[i].start, lines[i].length, width - reserve, NULL);
        attr_set((attr_t)attr, 0, NULL);
        mvaddnwstr(y + i, x, w + lines[i].start, (int)fit);
        if (cut) addnwstr(more, reserve);
        attr_set(A_NORMAL, 0, NULL);
    }
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
    for (int i = 0; i < height; i++) ui_field(y + i, x, width, "", st, A_NORMAL, 0, UI_LEFT);
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
    static wchar_t w[256];
    ui_span lines[16];
    size_t n = ui_text_widen(text, st->utf8, w, 256);
    int count = ui_text_wrap(w, n, COLS, lines, 16), y0 = (LINES - count) / 2;
    erase();
    for (int i = 0; i < count && i < 16 && i < LINES; i++) {
        int width = ui_text_width(w + lines[i].start, lines[i].length);
        attr_set(A_BOLD, 0, NULL);
        mvaddnwstr(y0 > 0 ? y0 + i : i, (COLS - width) / 2, w + lines[i].start, (int)lines[i].length);
        attr_set(A_NORMAL, 0, NULL);
    }
}

/* The label of an action's first key, so text that names a key follows the table. */
static const char *action_key(ui_action action, unsigned context, const ui_style *st,
                              char *buffer, size_t size)
{
    int count;
    const ui_binding *b = ui_bindings(&count);
    for (int i = 0; i < count; i++)
        if (b[i].action == action && (b[i].contexts & context))
            return ui_key_label(b[i].keys[0], st->utf8, buffer, size);
    return "?";
}

void ui_draw_bar(unsigned context, const ui_style *st)
{
    int count, x = 0, y = LINES - 1;
    const ui_binding *b = ui_bindings(&count);
    ui_field(y, 0, COLS, "", st, A_NORMAL, 0, UI_LEFT);
    for (int i = 0; i < count; i++) {
        if (!b[i].bar || !(b[i].contexts & context)) continue;
        char key[64];
        ui_binding_bar_keys(&b[i], st->utf8, key, sizeof key);
        int width = text_width(key, st) + 1 + text_width(b[i].bar, st);
        if (x + width > COLS) break;
        x += ui_put(y, x, COLS - x, key, st, A_REVERSE | A_BOLD, 0) + 1;
        x += ui_put(y, x, COLS - x, b[i].bar, st, A_NORMAL, 0) + 2;
    }
}

void ui_draw_help(unsigned context, const ui_style *st, int *top)
{
    int count, lines = 0;
    const ui_binding *b = ui_bindings(&count);
    for (int i = 0; i < count; i++) lines += (b[i].contexts & context) != 0;
    int keys_w = 1;
    for (int i = 0; i < count; i++) {
        char keys[96];
        ui_binding_keys(&b[i], st->utf8, keys, sizeof keys);
        if (b[i].contexts & context) keys_w = clampi(text_width(keys, st), keys_w, 24);
    }
    int width = COLS - 2 < 76 ? COLS - 2 : 76, height = LINES - 2 < lines + 4 ? LINES - 2 : lines + 4;
    int y0 = (LINES - height) / 2, x0 = (COLS - width) / 2, shown = height - 4;
    keys_w = keys_w < width / 3 ? keys_w : width / 3;
    *top = clampi(*top, 0, lines > shown ? lines - shown : 0);
    ui_draw_box(y0, x0, height, width, st);
    ui_put(y0, x0 + 2, width - 4, " keys ", st, A_BOLD, 0);
    for (int i = 0, line = 0; i < count; i++) {
        if (!(b[i].contexts & context) || line++ < *top || line > *top + shown) continue;
        char keys[96];
        int y = y0 + line - *top;
        ui_binding_keys(&b[i], st->utf8, keys, sizeof keys);
        ui_put(y, x0 + 2, keys_w, keys, st, A_BOLD, 0);
        ui_put(y, x0 + 3 + keys_w, width - keys_w - 5, b[i].help, st, A_NORMAL, 0);
    }
    char footer[128] = "any key closes this help", up[32], down[32];
    if (lines > shown)   /* too many keys for this screen: the help scrolls */
        snprintf(footer, sizeof footer, "%s %s scroll, any other key closes",
                 ui_key_label(UI_KEY(KEY_DOWN), st->utf8, down, sizeof down),
                 ui_key_label(UI_KEY(KEY_UP), st->utf8, up, sizeof up));
    ui_put(y0 + height - 2, x0 + 2, width - 4, footer, st, A_DIM, 0);
}

/* ---- the lesson screen ---- */

typedef struct {
    int body_y, body_h, list_w, mat_x, mat_w;
    int explain_y, explain_h, narration_y, narration_h;
} regions;

static int lines_needed(const char *text, int width, const ui_style *st)
{
    static wchar_t w[TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
    return ui_text_wrap(w, n, width, NULL, 0);
}

/* Shares the rows out between the matrix (its rows, up to two thirds of the screen), the
 * explanation (up to three lines) and the narration; what is left goes to the matrix. */
static regions split_screen(const ui_view *v, const char *explanation, const char *narration,
                            const ui_style *st)
{
    regions r;
    int avail = LINES - 3;   /* less the title, the narration's rule and the key bar */
    int body = clampi(ui_view_rows(v) + 3, 4, avail * 2 / 3 > 4 ? avail * 2 / 3 : 4);
    r.explain_h = clampi(lines_needed(explanation, COLS - 2, st), 1, 3);
    if (body + r.explain_h + 1 > avail) r.explain_h = avail - body - 1 > 1 ? avail - body - 1 : 1;
    if (body + r.explain_h + 1 > avail) body = avail - r.explain_h - 1;
    r.narration_h = clampi(lines_needed(narration, COLS - 2, st), 1, avail - body - r.explain_h);
    r.narration_y = LINES - 1 - r.narration_h;
    r.explain_y = r.narration_y - 1 - r.explain_h;
    r.body_y = 1;
    r.body_h = r.explain_y - r.body_y;
    r.list_w = COLS >= 60 ? 16 : 0;
    r.mat_x = r.list_w ? r.list_w + 1 : 0;
    r.mat_w = COLS - r.mat_x;
    return r;
}

static void draw_title(const ui_view *v, const char *title, const ui_style *st)
{
    char left[256], right[256];
    const ui_step *s = ui_view_current(v);
    snprintf(left, sizeof left, " attnstep \xc2\xb7 %.200s", title);
    if (stage_get(s->stage)->per_head && v->t->heads > 1)
        snprintf(right, sizeof right, "%s head %d/%d \xc2\xb7 step %d of %d ",
                 stage_get(s->stage)->name, s->head, v->t->heads, v->step + 1, v->n_steps);
    else
        snprintf(right, sizeof right, "%s \xc2\xb7 step %d of %d ", stage_get(s->stage)->name,
                 v->step + 1, v->n_steps);
    if (v->stepped_in) {   /* where the filling has got to, next to the step counter */
        char cell[300];
        long at = (long)v->row * ui_view_cols(v) + v->col + 1;
        snprintf(cell, sizeof cell, "cell %ld of %ld \xc2\xb7 ", at,
                 (long)ui_view_rows(v) * ui_view_cols(v));
        size_t used = strlen(cell);
        snprintf(cell + used, sizeof cell - used, "%.200s", right);
        snprintf(right, sizeof right, "%.250s", cell);
    }
    ui_field(0, 0, COLS, "", st, A_REVERSE, 0, UI_LEFT);
    int right_w = text_width(right, st);
    if (right_w > COLS) {   /* keep "step k of N" even on the narrowest screen */
        snprintf(right, sizeof right, "step %d/%d ", v->step + 1, v->n_steps);
        right_w = text_width(right, st);
    }
    ui_put(0, 0, COLS - right_w - 2, left, st, A_REVERSE | A_BOLD, 0);
    ui_put(0, COLS - right_w, right_w, right, st, A_REVERSE, 0);
}

typedef struct { char text[48]; int step; bool current; } list_line;

/* The stage list: every stage, and the heads of the current per-head stage as sub-steps. */
static int list_lines(const ui_view *v, const ui_style *st, list_line *out, int max)
{
    const ui_step *cur = ui_view_current(v);
    const char *mark = st->utf8 ? "\xe2\x96\xb8" : ">";
    int n = 0;
    for (int s = 0; s < STAGE_COUNT && n < max; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(v->t, stage)) continue;
        bool here = cur->stage == stage;
        out[n] = (list_line){.step = ui_view_find(v, stage, cur->head), .current = here};
        snprintf(out[n++].text, sizeof out->text, "%s %s", here ? mark : " ", stage_get(stage)->name);
        if (!here || !stage_get(stage)->per_head || v->t->heads < 2) continue;
        for (int h = 1; h <= v->t->heads && n < max; h++) {
            out[n] = (list_line){.step = ui_view_find(v, stage, h), .current = h == cur->head};
            snprintf(out[n++].text, sizeof out->text, "  %s head %d", h == cur->head ? mark : " ", h);
        }
    }
    return n;
}

static void draw_stage_list(const ui_view *v, const regions *r, const ui_style *st,
                            ui_layout *layout)
{
    static list_line lines[STAGE_COUNT + 256];
    int n = list_lines(v, st, lines, COUNT(lines)), current = 0;
    for (int i = 0; i < n; i++)   /* the current head's line when there is one */
        if (lines[i].current) current = i;
    int first = n > r->body_h ? clampi(current - r->body_h / 2, 0, n - r->body_h) : 0;
    layout->list_y = r->body_y;
    layout->list_x = 0;
    layout->list_w = r->list_w;
    layout->list_first = first;
    layout->list_count = 0;
    for (int i = first; i < n && i - first < r->body_h && i - first < COUNT(layout->list_steps); i++) {
        ui_put(r->body_y + i - first, 0, r->list_w - 1, lines[i].text, st,
               lines[i].current ? A_BOLD : A_NORMAL, lines[i].current ? PAIR_ACCENT * (st->colors > 0) : 0);
        layout->list_steps[layout->list_count++] = lines[i].step;
    }
    ui_draw_vline(r->body_y, r->list_w, r->body_h, st);
}

/* Finite extremes of the current matrix, measured once per step (a 2048-token matrix is
 * four million cells: too many to scan on every key). */
static void measure(ui_view *v)
{
    if (v->stats_step == v->step) return;
    const ui_step *s = ui_view_current(v);
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < ui_view_rows(v); r++)
        for (int c = 0; c < ui_view_cols(v); c++) {
            double x = trace_value(v->t, s->stage, s->head, r, c);
            if (!isfinite(x)) continue;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    v->lo = lo <= hi ? lo : 0;
    v->hi = lo <= hi ? hi : 0;
    v->stats_step = v->step;
}

/* Columns taken by the integer part (with sign) of x as format_number writes it. */
static int integer_width(double x, int precision, const ui_style *st)
{
    char text[64];
    format_number(x, precision, text, sizeof text);
    char *dot = strchr(text, '.');
    if (dot) *dot = '\0';
    return text_width(text, st);
}

/* Width of every number of the current matrix: the widest integer part plus the decimals. */
static int number_width(const ui_view *v, int precision, const ui_style *st)
{
    int ip = integer_width(v->lo, precision, st), hp = integer_width(v->hi, precision, st);
    int width = (ip > hp ? ip : hp) + 1 + (precision > 0 ? precision : 1);
    if (ui_view_current(v)->stage == STAGE_MASKED) {
        char text[32];
        format_number(-INFINITY, precision, text, sizeof text);
        int inf = text_width(text, st);
        width = inf > width ? inf : width;
    }
    return width;
}

static const char *axis_label(const ui_view *v, bool rows, int i, char *buffer, size_t size)
{
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    return trace_axis_label(v->t, rows ? info->rows : info->cols, i, buffer, size);
}

static int widest_label(const ui_view *v, bool rows, int count, const ui_style *st, int cap)
{
    int widest = 1;
    for (int i = 0; i < count && widest < cap; i++) {
        char buffer[32];
        int w = text_width(axis_label(v, rows, i, buffer, sizeof buffer), st);
        widest = w > widest ? w : widest;
    }
    return widest < cap ? widest : cap;
}

/* A label that fits width columns, ending in "…" when it had to be cut (the explanation line
 * always names the selected cell's tokens in full). */
static void cut_label(const char *label, int width, const ui_style *st, char *out, size_t size)
{
    if (text_width(label, st) <= width) { snprintf(out, size, "%s", label); return; }
    wchar_t w[64];
    size_t n = ui_text_widen(label, st->utf8, w, 64);
    size_t fit = ui_text_fit(w, n, width - 1, NULL);
    size_t used = 0;
    for (size_t i = 0; i < fit && used + MB_LEN_MAX + 4 < size; i++) {
        char bytes[MB_LEN_MAX];
        mbstate_t state;
        memset(&state, 0, sizeof state);
        size_t k = wcrtomb(bytes, w[i], &state);
        if (k == (size_t)-1) continue;
        memcpy(out + used, bytes, k);
        used += k;
    }
    snprintf(out + used, size - used, "%s", st->utf8 ? "\xe2\x80\xa6" : "~");
}

typedef struct {
    int cw, cell_w, glyph_w;     /* number field, whole cell, shade glyphs */
    bool heat, diverging;
    double absmax;
} cell_style;

static void draw_cell(const ui_view *v, const ui_style *st, const cell_style *cs, int precision,
                      int y, int x, int row, int col)
{
    const ui_step *s = ui_view_current(v);
    bool selected = row == v->row && col == v->col, cross = row == v->row || col == v->col;
    /* The selected cell's query row and key column form an underlined crosshair, so "which
     * word does this one look at?" is read along one row. */
    unsigned attr = cross ? A_BOLD | A_UNDERLINE : A_NORMAL;
    int pair = 0;
    char text[64];
    const char *glyph = " ";
    if (!ui_view_is_filled(v, row, col)) {
        snprintf(text, sizeof text, "%s", st->utf8 ? "\xc2\xb7" : ".");
        attr = A_DIM;
    } else {
        double value = trace_value(v->t, s->stage, s->head, row, col);
        format_number(value, precision, text, sizeof text);
        if (!isfinite(value)) attr |= A_DIM;
        else if (cs->heat) {
            double position = ramp_position(value, cs->diverging, cs->absmax);
            if (st->colors) {
                ramp r = ramp_for(st, cs->diverging);
                pair = r.first_pair + ramp_level(position, r.n);
            } else {
                glyph = shade(st, position, cs->diverging);
            }
        }
    }
    /* Brackets mark the selected cell on every screen, colour or not, and in screen dumps. */
    char shown[80];
    snprintf(shown, sizeof shown, selected ? "[%s]" : "%s ", text);
    if (selected) attr |= A_REVERSE | A_BOLD;
    ui_field(y, x, cs->cw + 2, shown, st, attr, pair, UI_RIGHT);
    for (int i = 0; i < cs->glyph_w; i++)
        ui_field(y, x + 2 + cs->cw + i, 1, glyph, st, A_NORMAL, 0, UI_LEFT);
}

/* The ramp as a strip of swatches, for the legend. */
static int draw_swatches(int y, int x, const ui_style *st, bool diverging)
{
    ramp r = ramp_for(st, diverging);
    int n = st->colors ? r.n : st->utf8 ? COUNT(shades_utf8) : COUNT(shades_ascii);
    if (!st->colors && diverging) n = 2 * n - 1;   /* shades grow both ways from 0 */
    for (int i = 0; i < n; i++) {
        double position = n > 1 ? (double)i / (n - 1) : 0;
        if (st->colors) ui_field(y, x + i, 1, "", st, A_NORMAL, r.first_pair + i, UI_LEFT);
        else ui_field(y, x + i, 1, shade(st, position, diverging), st, A_NORMAL, 0, UI_LEFT);
    }
    return n;
}

static void draw_legend(const ui_view *v, const ui_style *st, const cell_style *cs, int precision,
                        int y, int x, int width)
{
    char lo[64], hi[64], key[32], text[160];
    if (!cs->heat) {
        snprintf(text, sizeof text, "numbers \xc2\xb7 %s: heatmap",
                 action_key(UI_ACT_HEATMAP, UI_IN_LESSON, st, key, sizeof key));
        ui_put(y, x, width, text, st, A_DIM, 0);
        return;
    }
    if (cs->diverging) {   /* the ramp runs from -max|x| to +max|x|, white (or blank) at 0 */
        format_number(-cs->absmax, precision, lo, sizeof lo);
        format_number(cs->absmax, precision, hi, sizeof hi);
    } else {
        snprintf(lo, sizeof lo, "0");
        snprintf(hi, sizeof hi, "1");
    }
    int used = ui_put(y, x, width, lo, st, A_NORMAL, 0) + 1;
    used += draw_swatches(y, x + used, st, cs->diverging) + 1;
    used += ui_put(y, x + used, width - used, hi, st, A_NORMAL, 0);
    if (cs->diverging) {
        char min[64], max[64];
        format_number(v->lo, precision, min, sizeof min);
        format_number(v->hi, precision, max, sizeof max);
        snprintf(text, sizeof text, "  values %s \xe2\x80\xa6 %s", min, max);
    } else
        snprintf(text, sizeof text, "  0 = no attention, 1 = all of it");
    ui_put(y, x + used, width - used, text, st, A_DIM, 0);
}

/* "rows 3–14 of 40, cols 1–6 of 40" when the matrix does not fit, so scrolling is visible. */
static int draw_scroll_note(const ui_view *v, const ui_style *st, int y, int right, int vis_rows,
                            int vis_cols)
{
    char text[128] = "", part[64];
    const char *dash = st->utf8 ? "\xe2\x80\x93" : "-";
    if (vis_rows < ui_view_rows(v)) {
        snprintf(part, sizeof part, "rows %d%s%d of %d", v->top + 1, dash, v->top + vis_rows, ui_view_rows(v));
        strcat(text, part);
    }
    if (vis_cols < ui_view_cols(v)) {
        snprintf(part, sizeof part, "%scols %d%s%d of %d", text[0] ? ", " : "", v->left + 1, dash,
                 v->left + vis_cols, ui_view_cols(v));
        strcat(text, part);
    }
    int w = text_width(text, st);
    if (w > 0) ui_put(y, right - w, w, text, st, A_DIM, 0);
    return w;
}

static void draw_header(const ui_view *v, const ui_style *st, int y, int x, int width)
{
    const ui_step *s = ui_view_current(v);
    char text[256], part[64];
    snprintf(text, sizeof text, "%s  %d%s%d", stage_get(s->stage)->formula, ui_view_rows(v),
             st->utf8 ? "\xc3\x97" : "x", ui_view_cols(v));
    if (stage_get(s->stage)->per_head && v->t->heads > 1) {
        snprintf(part, sizeof part, "  head %d of %d", s->head, v->t->heads);
        strcat(text, part);
    }
    ui_put(y, x, width, text, st, A_BOLD, 0);
}

static void draw_matrix(ui_view *v, const regions *r, const ui_style *st, int precision,
                        ui_layout *layout)
{
    int y = r->body_y, x = r->mat_x, width = r->mat_w, bottom = r->body_y + r->body_h;
    measure(v);
    cell_style cs = {.heat = ui_view_heatmap(v), .diverging = ui_view_current(v)->stage != STAGE_WEIGHTS};
    cs.absmax = fmax(fabs(v->lo), fabs(v->hi));
    cs.glyph_w = cs.heat && !st->colors ? 2 : 0;
    int label_w = widest_label(v, true, ui_view_rows(v), st, 12);
    int numbers = number_width(v, precision, st);
    int col_labels = widest_label(v, false, ui_view_cols(v), st, numbers > 6 ? numbers : 6);
    cs.cw = numbers > col_labels ? numbers : col_labels;
    cs.cell_w = cs.cw + 2 + cs.glyph_w;
    bool legend = r->body_h >= 5;
    layout->grid_y = y + 1 + legend + 1;
    layout->grid_x = x + label_w + 2;
    layout->cell_w = cs.cell_w;
    layout->vis_rows = clampi(bottom - layout->grid_y, 0, ui_view_rows(v));
    layout->vis_cols = clampi((x + width - layout->grid_x) / cs.cell_w, 0, ui_view_cols(v));
    draw_header(v, st, y, x, width);
    if (layout->vis_rows < 1 || layout->vis_cols < 1) {
        ui_put(y + 1, x, width, "(no room to show the matrix)", st, A_DIM, 0);
        return;
    }
    ui_view_scroll(v, layout->vis_rows, layout->vis_cols);
    if (legend) {
        int note = draw_scroll_note(v, st, y + 1, x + width, layout->vis_rows, layout->vis_cols);
        draw_legend(v, st, &cs, precision, y + 1, x, width - note - (note ? 2 : 0));
    }
    char buffer[32];
    for (int c = 0; c < layout->vis_cols; c++) {
        int col = v->left + c, cx = layout->grid_x + c * cs.cell_w;
        bool sel = col == v->col;
        char label[64];
        cut_label(axis_label(v, false, col, buffer, sizeof buffer), cs.cw, st, label, sizeof label);
        int used = ui_field(layout->grid_y - 1, cx + 1, cs.cw, label, st,
                            sel ? A_BOLD | A_REVERSE : A_BOLD, 0, UI_RIGHT);
        if (sel) ui_put(layout->grid_y - 1, cx + cs.cw - used, 1, st->utf8 ? "\xe2\x96\xbe" : "v", st, A_BOLD, 0);
    }
    for (int i = 0; i < layout->vis_rows; i++) {
        int row = v->top + i, ry = layout->grid_y + i;
        bool sel = row == v->row;
        if (sel) ui_put(ry, x, 1, st->utf8 ? "\xe2\x96\xb8" : ">", st, A_BOLD, 0);
        ui_field(ry, x + 1, label_w, axis_label(v, true, row, buffer, sizeof buffer), st,
                   sel ? A_BOLD | A_REVERSE : A_BOLD, 0, UI_LEFT);
        for (int c = 0; c < layout->vis_cols; c++)
            draw_cell(v, st, &cs, precision, ry, layout->grid_x + c * cs.cell_w, row, v->left + c);
    }
}

static void explanation_text(const ui_view *v, int precision, char *text, size_t size)
{
    const ui_step *s = ui_view_current(v);
    trace_cell cell = {s->stage, s->head, v->row, v->col};
    trace_cell_explain(v->t, &cell, precision, text, size);
}

/* The lesson's narration for this step, or what the stage table says about the stage. */
static void narration_text(const ui_view *v, char *text, size_t size)
{
    const ui_step *s = ui_view_current(v);
    const stage_info *info = stage_get(s->stage);
    if (s->say) snprintf(text, size, "%s", s->say);
    else snprintf(text, size, "%s, made from %s.", info->formula, info->inputs);
}

static void draw_narration(const ui_view *v, const regions *r, const char *text,
                           const ui_style *st)
{
    int sep = r->narration_y - 1;
    ui_draw_hline(sep, 0, COLS, st);
    int used = 2 + ui_put(sep, 2, COLS - 4, ui_view_current(v)->say ? " narration " :
                          " about this stage ", st, A_BOLD, 0);
    if (v->message[0]) {   /* a remark about the last key, until the next one */
        char remark[sizeof v->message + 4];
        snprintf(remark, sizeof remark, " %s ", v->message);
        int w = text_width(remark, st), room = COLS - used - 2;
        ui_put(sep, w < room ? COLS - 1 - w : used + 1, room, remark, st, A_BOLD,
               PAIR_ACCENT * (st->colors > 0));
    }
    draw_wrapped(r->narration_y, 1, COLS - 2, r->narration_h, text, st, A_NORMAL);
}

void ui_draw_lesson(ui_view *v, const char *title, const ui_style *st, int precision,
                    ui_layout *layout)
{
    *layout = (ui_layout){0};
    erase();
    if (ui_screen_too_small()) { ui_draw_too_small(st); return; }
    static char explanation[TEXT_MAX], narration[TEXT_MAX];
    explanation_text(v, precision, explanation, sizeof explanation);
    narration_text(v, narration, sizeof narration);
    regions r = split_screen(v, explanation, narration, st);
    draw_title(v, title, st);
    if (r.list_w) draw_stage_list(v, &r, st, layout);
    draw_matrix(v, &r, st, precision, layout);
    draw_wrapped(r.explain_y, 1, COLS - 2, r.explain_h, explanation, st, A_NORMAL);
    draw_narration(v, &r, narration, st);
    ui_draw_bar(UI_IN_LESSON, st);
    if (v->help) ui_draw_help(UI_IN_LESSON, st, &v->help_top);
}

int ui_layout_hit(const ui_layout *layout, const ui_view *v, int x, int y,
                  int *row, int *col, int *step)
{
    if (layout->cell_w > 0 && x >= layout->grid_x && y >= layout->grid_y &&
        (x - layout->grid_x) / layout->cell_w < layout->vis_cols &&
        y - layout->grid_y < layout->vis_rows) {
        *row = v->top + (y - layout->grid_y);
        *col = v->left + (x - layout->grid_x) / layout->cell_w;
        return 1;
    }
    if (layout->list_w && x < layout->list_x + layout->list_w && y >= layout->list_y &&
        y - layout->list_y < layout->list_count && layout->list_steps[y - layout->list_y] >= 0) {
        *step = layout->list_steps[y - layout->list_y];
        return 2;
    }
    return 0;
}
