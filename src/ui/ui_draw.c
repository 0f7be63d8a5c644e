/* Draws a lesson's screen with curses: title, stage list, explanation, narration, key bar and
 * help overlay around the matrix pane (ui_matrix.c); and the text and line helpers both use. */
#include "ui_curses.h"
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_internal.h"

#define TEXT_MAX 4096

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

void ui_cut_text(const char *text, int width, const ui_style *st, char *out, size_t size)
{
    if (ui_width(text, st) <= width) { snprintf(out, size, "%s", text); return; }
    static wchar_t w[TEXT_MAX];
    size_t n = ui_text_widen(text, st->utf8, w, TEXT_MAX);
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

int ui_width(const char *text, const ui_style *st)
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

const char *ui_action_key(ui_action action, unsigned context, const ui_style *st,
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
        int width = ui_width(key, st) + 1 + ui_width(b[i].bar, st);
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
        if (b[i].contexts & context) keys_w = ui_clamp(ui_width(keys, st), keys_w, 24);
    }
    int width = COLS - 2 < 76 ? COLS - 2 : 76, height = LINES - 2 < lines + 4 ? LINES - 2 : lines + 4;
    int y0 = (LINES - height) / 2, x0 = (COLS - width) / 2, shown = height - 4;
    keys_w = keys_w < width / 3 ? keys_w : width / 3;
    *top = ui_clamp(*top, 0, lines > shown ? lines - shown : 0);
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
    int body = ui_clamp(ui_view_rows(v) + 3, 4, avail * 2 / 3 > 4 ? avail * 2 / 3 : 4);
    r.explain_h = ui_clamp(lines_needed(explanation, COLS - 2, st), 1, 3);
    if (body + r.explain_h + 1 > avail) r.explain_h = avail - body - 1 > 1 ? avail - body - 1 : 1;
    if (body + r.explain_h + 1 > avail) body = avail - r.explain_h - 1;
    r.narration_h = ui_clamp(lines_needed(narration, COLS - 2, st), 1, avail - body - r.explain_h);
    r.narration_y = LINES - 1 - r.narration_h;
    r.explain_y = r.narration_y - 1 - r.explain_h;
    r.body_y = 1;
    r.body_h = r.explain_y - r.body_y;
    r.list_w = COLS >= 60 ? 16 : 0;
    r.mat_x = r.list_w ? r.list_w + 1 : 0;
    r.mat_w = COLS - r.mat_x;
    return r;
}

/* Appends formatted text to text (of size), keeping it terminated. */
static void add(char *text, size_t size, const char *format, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    vsnprintf(text + used, size - used, format, args);
    va_end(args);
}

/* The title bar's right side: where the filling has got to (stepped in), the score (where the
 * lesson asks anything), the stage and head, and "step k of N"; with_stage false leaves the
 * stage out (the matrix header names it too), for narrow screens. */
static void title_status(const ui_view *v, bool with_stage, char *text, size_t size)
{
    const ui_step *s = ui_view_current(v);
    int right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    text[0] = '\0';
    if (v->stepped_in)
        add(text, size, "cell %ld of %ld \xc2\xb7 ", (long)v->row * ui_view_cols(v) + v->col + 1,
            (long)ui_view_rows(v) * ui_view_cols(v));
    if (asked > 0) add(text, size, "score %d/%d \xc2\xb7 ", right, asked);  /* once one is answered */
    if (with_stage) add(text, size, "%s ", stage_get(s->stage)->name);
    if (with_stage && stage_get(s->stage)->per_head && v->t->heads > 1)
        add(text, size, "head %d/%d ", s->head, v->t->heads);
    if (with_stage) add(text, size, "\xc2\xb7 ");
    add(text, size, "step %d of %d ", v->step + 1, v->n_steps);
}

static void draw_title(const ui_view *v, const char *title, const ui_style *st)
{
    enum { TITLE_ROOM = 14 };   /* columns kept for " attnstep · title" */
    char left[256], right[256];
    snprintf(left, sizeof left, " attnstep \xc2\xb7 %.200s", title);
    title_status(v, true, right, sizeof right);
    if (ui_width(right, st) > COLS - TITLE_ROOM) title_status(v, false, right, sizeof right);
    if (ui_width(right, st) > COLS)   /* keep "step k of N" even on the narrowest screen */
        snprintf(right, sizeof right, "step %d/%d ", v->step + 1, v->n_steps);
    int right_w = ui_width(right, st);
    ui_field(0, 0, COLS, "", st, A_REVERSE, 0, UI_LEFT);
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
    int n = list_lines(v, st, lines, UI_COUNT(lines)), current = 0;
    for (int i = 0; i < n; i++)   /* the current head's line when there is one */
        if (lines[i].current) current = i;
    int first = n > r->body_h ? ui_clamp(current - r->body_h / 2, 0, n - r->body_h) : 0;
    layout->list_y = r->body_y;
    layout->list_x = 0;
    layout->list_w = r->list_w;
    layout->list_first = first;
    layout->list_count = 0;
    for (int i = first; i < n && i - first < r->body_h && i - first < UI_COUNT(layout->list_steps); i++) {
        ui_put(r->body_y + i - first, 0, r->list_w - 1, lines[i].text, st,
               lines[i].current ? A_BOLD : A_NORMAL, lines[i].current ? UI_PAIR_ACCENT * (st->colors > 0) : 0);
        layout->list_steps[layout->list_count++] = lines[i].step;
    }
    ui_draw_vline(r->body_y, r->list_w, r->body_h, st);
}

/* The selected cell's arithmetic; while a question waits, only the cell's name. */
static void explanation_text(const ui_view *v, int precision, char *text, size_t size)
{
    const ui_step *s = ui_view_current(v);
    if (ui_view_question_open(v)) {
        const stage_info *info = stage_get(s->stage);
        char rb[32], cb[32];
        snprintf(text, size, "%s[%s,%s] = ?   (answer the question below to see it worked out)",
                 info->name, trace_axis_label(v->t, info->rows, v->row, rb, sizeof rb),
                 trace_axis_label(v->t, info->cols, v->col, cb, sizeof cb));
        return;
    }
    trace_cell cell = {s->stage, s->head, v->row, v->col};
    trace_cell_explain(v->t, &cell, precision, text, size);
}

/* A waiting question: the question, then its choices one a line (the highlighted one marked),
 * or the number typed so far. */
static void question_text(const ui_view *v, const ui_style *st, char *text, size_t size)
{
    const lesson_step *q = ui_view_current(v)->item;
    snprintf(text, size, "%s\n", q->ask);
    for (int i = 0; i < q->n_choices; i++)
        add(text, size, "%s %d  %s\n", i == v->pick ? (st->utf8 ? "\xe2\x96\xb8" : ">") : " ",
            i + 1, q->choices[i]);
    if (q->n_choices == 0) add(text, size, "Your answer: %s_\n", v->typed);
}

/* The lesson's narration for this step, or what the stage table says about the stage; a
 * question waiting comes instead, and an answered one comes first with its verdict. */
static void narration_text(const ui_view *v, const ui_style *st, int precision, char *text,
                           size_t size)
{
    const ui_step *s = ui_view_current(v);
    const stage_info *info = stage_get(s->stage);
    text[0] = '\0';
    if (ui_view_question_open(v)) { question_text(v, st, text, size); return; }
    if (s->question != UI_Q_NONE) {
        char verdict[1024];
        ui_view_verdict(v, v->step, precision, verdict, sizeof verdict);
        add(text, size, "%s\n%s\n", s->item->ask, verdict);
    }
    char formula[256];
    trace_stage_formula(v->t, s->stage, formula, sizeof formula);
    if (s->say) add(text, size, "%s", s->say);
    else add(text, size, "%s, made from %s.", formula, info->inputs);
}

static void draw_narration(const ui_view *v, const regions *r, const char *text,
                           const ui_style *st)
{
    int sep = r->narration_y - 1, accent = UI_PAIR_ACCENT * (st->colors > 0);
    ui_draw_hline(sep, 0, COLS, st);
    const char *label = ui_view_question_open(v) ? " question " :
                        ui_view_current(v)->say ? " narration " : " about this stage ";
    char cut[sizeof v->reload_error], reload[sizeof cut + 4];
    if (v->reload_error[0]) {   /* the lesson's file did not reload: say why, until it does */
        ui_cut_text(v->reload_error, COLS - 6, st, cut, sizeof cut);
        snprintf(reload, sizeof reload, " %s ", cut);
        label = reload;
    }
    int used = 2 + ui_put(sep, 2, COLS - 4, label, st, A_BOLD, v->reload_error[0] ? accent : 0);
    if (v->message[0]) {   /* a remark about the last key, until the next one */
        char remark[sizeof v->message + 4];
        snprintf(remark, sizeof remark, " %s ", v->message);
        int w = ui_width(remark, st), room = COLS - used - 2;
        if (room > 2)
            ui_put(sep, w < room ? COLS - 1 - w : used + 1, room, remark, st, A_BOLD, accent);
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
    narration_text(v, st, precision, narration, sizeof narration);
    regions r = split_screen(v, explanation, narration, st);
    draw_title(v, title, st);
    if (r.list_w) draw_stage_list(v, &r, st, layout);
    ui_draw_matrix(v, r.body_y, r.mat_x, r.mat_w, r.body_h, st, precision, layout);
    draw_wrapped(r.explain_y, 1, COLS - 2, r.explain_h, explanation, st, A_NORMAL);
    draw_narration(v, &r, narration, st);
    ui_draw_bar(ui_view_context(v), st);
    if (v->help) ui_draw_help(ui_view_context(v), st, &v->help_top);
    if (v->summary) ui_draw_summary(v, st);
}

void ui_draw_summary(const ui_view *v, const ui_style *st)
{
    int right, asked, questions;
    char line[128], hint[128], quit[32];
    ui_view_score(v, &right, &asked, &questions);
    snprintf(line, sizeof line, "You answered %d of %d question%s right", right, asked,
             asked == 1 ? "" : "s");
    if (v->leaving) snprintf(hint, sizeof hint, "any key leaves the lesson");
    else snprintf(hint, sizeof hint, "%s leaves the lesson, any other key stays",
                  ui_action_key(UI_ACT_QUIT, UI_IN_LESSON, st, quit, sizeof quit));
    int w = ui_width(line, st) > ui_width(hint, st) ? ui_width(line, st) : ui_width(hint, st);
    int width = ui_clamp(w + 6, 10, COLS), y = (LINES - 5) / 2, x = (COLS - width) / 2;
    ui_draw_box(y, x, 5, width, st);
    ui_put(y, x + 2, width - 4, " the end ", st, A_BOLD, 0);
    ui_field(y + 1, x + 1, width - 2, line, st, A_BOLD, 0, UI_CENTER);
    ui_field(y + 3, x + 1, width - 2, hint, st, A_DIM, 0, UI_CENTER);
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
