/* The lesson screen: title, stage list, matrix pane (ui_matrix.c), explanation, narration and
 * key bar around one lesson's view; its keys, clicks and the following of its file. */
#include "ui_curses.h"
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_display.h"
#include "ui_edit.h"
#include "ui_loss.h"
#include "ui_matrix.h"
#include "ui_narration.h"
#include "ui_progress.h"
#include "ui_screen.h"
#include "ui_text.h"
#include "ui_util.h"


/* The stage list as drawn, so that a click on a line opens its stage and head. */
typedef struct {
    int y, w;                    /* its first row and its width (0 when not drawn) */
    int count;                   /* lines shown, one a stage or a head */
    walk_step opens[256];        /* the stage and head each line opens */
} stage_list;

typedef struct {
    ui_screen base;
    ui_opened *o;
    ui_view v;
    ui_matrix_grid grid;
    stage_list list;
    ui_file_stamp seen;          /* the lesson's file when last looked at */
    ui_display d;                /* how the lesson is shown (the display keys) */
    bool show_notices;           /* a reload's warnings and notes above the narration, until a key */
    ui_edit edit;                /* what if?: the edit line and the edits made (ui_edit.h) */
    /* the training axis (a lesson with train:): the matrix shown at the step's own train_step
     * moved by < and >, the trace there (v.t points at it), and where the move was made */
    int train_moved;
    unsigned long train_place;
    train_cache trained;
} lesson_screen;

static lesson_screen *lesson_of(ui_screen *s)
{
    return (lesson_screen *)s;
}

static const lesson_screen *lesson_const(const ui_screen *s)
{
    return (const lesson_screen *)s;
}

/* Where the parts of the screen go. */
typedef struct {
    int body_y, body_h, list_w, mat_x, mat_w;
    int explain_y, explain_h, narration_y, narration_h;
    bool list_made_room;         /* the step list hid itself so that every column fits */
    bool full_explanation;       /* presenting: the explanation with every term has the room */
} regions;

/* The step list's width (its separator not counted), from its widest down to the narrowest
 * that still names a stage ("▸ weights", "  ▸ head 4"; longer names end in …). */
#define LIST_WIDEST 16
#define LIST_NARROWEST 12

/* The step list's width: the widest that lets every column of the matrix show with its full
 * label; where none does, none at all when that makes them fit (unless L asked for the list),
 * else the widest (the matrix scrolls either way). Hidden by L, when presenting and on
 * screens narrower than 60 columns. */
static int list_width(ui_view *v, const ui_display *d, const ui_style *st, bool *made_room)
{
    *made_room = false;
    if (COLS < 60 || d->present || d->list == UI_LIST_HIDDEN) return 0;
    for (int w = LIST_WIDEST; w >= LIST_NARROWEST; w--)
        if (ui_matrix_shows_every_column(v, COLS - w - 1, st)) return w;
    *made_room = d->list == UI_LIST_AUTO && ui_matrix_shows_every_column(v, COLS, st);
    return *made_room ? 0 : LIST_WIDEST;
}

/* Presenting, the narration has every line it needs (leaving the matrix four rows at least),
 * the explanation two; the matrix takes the rows it can fill (ui_matrix_rows_used: taller rows
 * with bars), and the rows it leaves go to the explanation, which then shows every term when
 * they fit (full). */
static regions split_presenting(ui_view *v, const char *explanation, const char *full,
                                const char *narration, const ui_style *st)
{
    regions r = {.body_y = 1, .mat_w = COLS};
    int avail = LINES - 3;   /* less the title, the narration's rule and the key bar */
    int explain_h = ui_clamp(ui_lines_needed(explanation, COLS - 2, st), 1, 2);
    r.narration_h = ui_clamp(ui_lines_needed(narration, COLS - 2, st), 1,
                             avail - explain_h - 4 > 1 ? avail - explain_h - 4 : 1);
    int room = avail - r.narration_h - explain_h;
    int spare = room - ui_clamp(ui_matrix_rows_used(v, COLS, room, st), 0, room);
    int full_h = full ? ui_lines_needed(full, COLS - 2, st) : 0;
    r.full_explanation = full_h > explain_h && full_h <= explain_h + spare;
    r.explain_h = r.full_explanation ? full_h : explain_h;
    r.narration_y = LINES - 1 - r.narration_h;
    r.explain_y = r.narration_y - 1 - r.explain_h;
    r.body_h = r.explain_y - r.body_y;
    return r;
}

/* Shares the rows out between the matrix (all its rows, up to two thirds of the screen), the
 * explanation (up to three lines) and the narration; what is left goes to the matrix.
 * Presenting, split_presenting shares them. */
static regions split_screen(ui_view *v, const ui_display *d, const char *explanation,
                            const char *full, const char *narration, const ui_style *st)
{
    if (d->present) return split_presenting(v, explanation, full, narration, st);
    regions r = {0};
    int avail = LINES - 3;   /* less the title, the narration's rule and the key bar */
    int most = avail * 2 / 3;
    int body = ui_clamp(ui_matrix_height(v), 4, most > 4 ? most : 4);
    r.explain_h = ui_clamp(ui_lines_needed(explanation, COLS - 2, st), 1, 3);
    if (body + r.explain_h + 1 > avail) r.explain_h = avail - body - 1 > 1 ? avail - body - 1 : 1;
    if (body + r.explain_h + 1 > avail) body = avail - r.explain_h - 1;
    r.narration_h = ui_clamp(ui_lines_needed(narration, COLS - 2, st), 1, avail - body - r.explain_h);
    r.narration_y = LINES - 1 - r.narration_h;
    r.explain_y = r.narration_y - 1 - r.explain_h;
    r.body_y = 1;
    r.body_h = r.explain_y - r.body_y;
    r.list_w = list_width(v, d, st, &r.list_made_room);
    r.mat_x = r.list_w ? r.list_w + 1 : 0;
    r.mat_w = COLS - r.mat_x;
    return r;
}

/* The most decimals, from `most` down to 1, with which the matrix passes fits; 0 when none
 * does. */
static int most_decimals(ui_view *v, ui_style mine, int most,
                         bool (*fits)(ui_view *, int, const ui_style *))
{
    for (mine.precision = most; mine.precision >= 1; mine.precision--)
        if (fits(v, COLS, &mine)) return mine.precision;
    return 0;
}

/* The style the screen draws with: the run's, with the screen's decimals, palette and
 * presentation. Presenting (until + or -), the most decimals with which every column of the
 * matrix shows with its label and a blank on both sides of its numbers (ui_matrix_fits, laid
 * out as presenting lays it out), else with one blank (ui_matrix_shows_every_column), else 1;
 * at most what the numbers need (ui_matrix_decimals_needed) or the run's decimals, the more. */
static ui_style style_of(lesson_screen *ls, const ui_style *st)
{
    ui_display *d = &ls->d;
    ui_style mine = ui_display_style(d, st);
    if (d->present && d->auto_precision) {
        /* no more than the numbers need (no column of trailing zeros), nor fewer than the
         * run's own decimals for that reason alone */
        int needed = ui_matrix_decimals_needed(&ls->v, UI_MAX_DECIMALS, &mine);
        int cap = needed > d->precision ? needed : d->precision;
        int most = most_decimals(&ls->v, mine, cap, ui_matrix_fits);
        if (most == 0) most = most_decimals(&ls->v, mine, cap, ui_matrix_shows_every_column);
        mine.precision = most > 0 ? most : 1;
    }
    return mine;
}

/* The title bar's right side: where the filling has got to (stepped in), the score (where the
 * lesson asks anything), the stage and head, and "step k of N"; with_stage false leaves the
 * stage out (the matrix header names it too), for narrow screens. */
static void title_status(const ui_view *v, bool with_stage, int train_step, char *text,
                         size_t size)
{
    const walk_step *s = ui_view_current(v);
    int right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    text[0] = '\0';
    if (v->stepped_in)
        ui_text_append(text, size, "cell %ld of %ld \xc2\xb7 ",
            (long)(v->row - ui_view_first_row(v)) * ui_view_cols(v) + v->col - ui_view_first_col(v) + 1,
            (long)ui_view_rows(v) * ui_view_cols(v));
    if (asked > 0) ui_text_append(text, size, "score %d/%d \xc2\xb7 ", right, asked);  /* once one is answered */
    if (with_stage) ui_text_append(text, size, "%s ", stage_get(s->stage)->name);
    if (with_stage && stage_get(s->stage)->per_head && v->t->heads > 1)
        ui_text_append(text, size, "head %d/%d ", s->head, v->t->heads);
    if (with_stage && stage_get(s->stage)->per_head && v->t->kv_heads < v->t->heads)
        ui_text_append(text, size, "\xc2\xb7 K/V group %d ", trace_kv_group(v->t, s->head));  /* GQA */
    if (with_stage) ui_text_append(text, size, "\xc2\xb7 ");
    if (s->position != WALK_WHOLE)   /* a decoding step: the token being generated */
        ui_text_append(text, size, "token %d of %d (%s) \xc2\xb7 ", s->position + 1, v->t->n,
            v->t->in->tokens[s->position]);
    if (train_step >= 0)   /* a lesson that trains: the weights after how many updates */
        ui_text_append(text, size, "trained %d/%d \xc2\xb7 ", train_step, v->lesson->train.steps);
    if (v->off_script) ui_text_append(text, size, "off the script, %s ", v->before_step ? "before" : "from");
    ui_text_append(text, size, "step %d of %d ", v->step + 1, v->walk.count);
}

static void draw_title(const ui_view *v, const char *title, int train_step, const ui_style *st)
{
    enum { TITLE_ROOM = 14 };   /* columns kept for " attnstep · title" */
    char left[256], right[256];
    snprintf(left, sizeof left, " attnstep \xc2\xb7 %.200s", title);
    title_status(v, true, train_step, right, sizeof right);
    if (ui_width(right, st) > COLS - TITLE_ROOM)
        title_status(v, false, train_step, right, sizeof right);
    if (ui_width(right, st) > COLS)   /* keep "step k of N" even on the narrowest screen */
        snprintf(right, sizeof right, "%sstep %d/%d ", v->off_script ? "off " : "", v->step + 1,
                 v->walk.count);
    int right_w = ui_width(right, st);
    char cut[sizeof left + 8];
    ui_cut_text(left, COLS - right_w - 2, st, cut, sizeof cut);   /* a long title ends in … */
    ui_field(0, 0, COLS, "", st, A_REVERSE, 0, UI_LEFT);
    ui_put(0, 0, COLS - right_w - 2, cut, st, A_REVERSE | A_BOLD, 0);
    ui_put(0, COLS - right_w, right_w, right, st, A_REVERSE, 0);
}

typedef struct { char text[48]; walk_step opens; bool current; } list_line;

/* The stage list: every stage, and the heads of the current per-head stage as sub-steps; a line
 * opens its stage and head (off the script when the lesson has one: ui_view_open_stage). */
static int list_lines(const ui_view *v, const ui_style *st, list_line *out, int max)
{
    const walk_step *cur = ui_view_current(v);
    const char *mark = st->utf8 ? "\xe2\x96\xb8" : ">";
    int n = 0;
    for (int s = 0; s < STAGE_COUNT && n < max; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(v->t, stage)) continue;
        bool here = cur->stage == stage;
        int head = stage_get(stage)->per_head ? ui_clamp(cur->head, 1, v->t->heads) : 1;
        out[n] = (list_line){.opens = {stage, head, WALK_WHOLE, -1}, .current = here};
        snprintf(out[n++].text, sizeof out->text, "%s %s", here ? mark : " ", stage_get(stage)->name);
        if (!here || !stage_get(stage)->per_head || v->t->heads < 2) continue;
        for (int h = 1; h <= v->t->heads && n < max; h++) {
            out[n] = (list_line){.opens = {stage, h, WALK_WHOLE, -1}, .current = h == cur->head};
            snprintf(out[n++].text, sizeof out->text, "  %s head %d", h == cur->head ? mark : " ", h);
        }
    }
    return n;
}

static void draw_stage_list(const ui_view *v, const regions *r, const ui_style *st,
                            stage_list *list)
{
    list_line lines[STAGE_COUNT + 256];
    int n = list_lines(v, st, lines, UI_COUNT(lines)), current = 0;
    for (int i = 0; i < n; i++)   /* the current head's line when there is one */
        if (lines[i].current) current = i;
    int first = n > r->body_h ? ui_clamp(current - r->body_h / 2, 0, n - r->body_h) : 0;
    list->y = r->body_y;
    list->w = r->list_w;
    list->count = 0;
    for (int i = first; i < n && i - first < r->body_h && i - first < UI_COUNT(list->opens); i++) {
        char cut[sizeof lines[i].text + 8];   /* a name longer than the list ends in … */
        ui_cut_text(lines[i].text, r->list_w - 1, st, cut, sizeof cut);
        ui_put(r->body_y + i - first, 0, r->list_w - 1, cut, st,
               lines[i].current ? A_BOLD : A_NORMAL, lines[i].current ? UI_PAIR_ACCENT * (st->colors > 0) : 0);
        list->opens[list->count++] = lines[i].opens;
    }
    ui_draw_vline(r->body_y, r->list_w, r->body_h, st);
}

/* The selected cell's arithmetic (every term when full); while a question waits, nothing that
 * names a cell (the selected one is the answer's). */
static void explanation_text(const ui_view *v, const ui_style *st, bool full, char *text,
                             size_t size)
{
    const walk_step *s = ui_view_current(v);
    if (ui_view_question_open(v)) {
        snprintf(text, size, "(answer the question below to see the numbers worked out)");
        return;
    }
    trace_cell cell = {s->stage, s->head, v->row, v->col};
    if (!full || trace_cell_explain_full(v->t, &cell, st->precision, text, size) >= (int)size)
        trace_cell_explain(v->t, &cell, st->precision, text, size);
    double was;   /* what if?: a cell an edit changed says what it was */
    if (v->edits && ui_edit_changed(v->edits, v->t, s->stage, s->head, v->row, v->col, &was)) {
        char number[NUMBER_MAX];
        number_format f = ui_number_format(NUMBER_SHORT, 0, st);
        number_write(was, &f, number, sizeof number);
        ui_text_append(text, size, ", was %s", number);
    }
}

/* The explanation's place, or the edit line while it is open. */
static void explanation_or_edit(const lesson_screen *ls, const ui_style *st, bool full,
                                char *text, size_t size)
{
    if (!ls->edit.open) {
        explanation_text(&ls->v, st, full, text, size);
        return;
    }
    number_format f = ui_number_format(NUMBER_SHORT, 0, st);
    ui_edit_line(&ls->edit, ls->o, &f, text, size);
}

/* The narration under its rule; when it is longer than its pane it scrolls (J and K), and the
 * rule's right end says which lines are shown (unless a remark about the last key is there). */
static void draw_narration(const ui_view *v, ui_display *d, const regions *r, const char *text,
                           const char *note, const ui_style *st)
{
    int sep = r->narration_y - 1, accent = UI_PAIR_ACCENT * (st->colors > 0);
    ui_draw_hline(sep, 0, COLS, st);
    int needed = ui_lines_needed(text, COLS - 2, st);
    int most = needed > r->narration_h ? needed - r->narration_h : 0;
    d->narration_top = ui_clamp(d->narration_top, 0, most);
    const char *label = ui_view_question_open(v) ? " question " :
                        v->off_script ? " off the script " :
                        ui_view_here(v) && ui_view_here(v)->say ? " narration " :
                        " about this stage ";
    if (v->reload_error[0])   /* why is the pane's first paragraph (with_notices) */
        label = " the save did not load: the last good version is shown ";
    int used = 2 + ui_put(sep, 2, COLS - 4, label, st, A_BOLD, v->reload_error[0] ? accent : 0);
    char right[sizeof v->message + 4] = "";
    if (v->message[0])   /* a remark about the last key, until the next one */
        snprintf(right, sizeof right, " %s ", v->message);
    else if (most > 0)
        ui_display_scroll_note(d, r->narration_h, needed, most, st, right, sizeof right);
    else if (note[0])   /* progress is not being saved: said until a save works */
        snprintf(right, sizeof right, " %.*s ", (int)sizeof v->message - 1, note);
    int w = ui_width(right, st), room = COLS - used - 2;
    if (w > 0 && room > 2)
        ui_put(sep, w < room ? COLS - 1 - w : used + 1, room, right, st, A_BOLD,
               v->message[0] || (note[0] && most == 0) ? accent : 0);
    ui_put_wrapped_from(r->narration_y, 1, COLS - 2, r->narration_h, d->narration_top, text, st,
                        A_NORMAL);
}

/* What the author must read before the narration, put at its top: a failed reload's first
 * error whole (wrapped with the narration: its did-you-mean and hint are never cut at the
 * screen's width) until a save loads, and after a reload the check's warnings and notes until a
 * key. At opening a one-line count says they exist (constructor): a warning can quote an
 * answer, which a class must not see on the projector before its question. */
static void with_notices(const lesson_screen *ls, char *text, size_t size)
{
    const char *error = ls->v.reload_error, *notices = ls->show_notices ? ls->o->notices : NULL;
    if (!error[0] && !notices) return;
    char narration[UI_TEXT_MAX];
    snprintf(narration, sizeof narration, "%s", text);
    text[0] = '\0';   /* longer than the pane holds: the narration's end is what goes */
    ui_text_append(text, size, "%s%s%s\n\n%s", error, error[0] && notices ? "\n" : "",
                   notices ? notices : "", narration);
}

static unsigned context(const ui_screen *s);
/* Whether the lesson trains (train:), so that the training axis and its keys apply. */
static bool trains(const lesson_screen *ls)
{
    return train_active(&ls->o->l.input, &ls->o->l.train);
}

/* Where the view is: a move of < and > holds until the view moves elsewhere. */
static unsigned long view_place(const ui_view *v)
{
    return (unsigned long)v->shown << 20 ^ (unsigned long)v->step << 1 ^ v->off_script;
}

/* The training step of the matrix shown: the step's own (0 off the script) moved by < and >,
 * within 0 … the lesson's steps; -1 when the lesson does not train. */
static int shown_train_step(lesson_screen *ls)
{
    if (!trains(ls)) return -1;
    if (ls->train_place != view_place(&ls->v)) ls->train_moved = 0;
    ls->train_place = view_place(&ls->v);
    int own = ls->v.off_script ? 0 : ui_view_current(&ls->v)->train_step;
    return ui_clamp(own + ls->train_moved, 0, ls->o->l.train.steps);
}

/* Points the view at the trace of the training step shown (the lesson's own at step 0). */
static void show_train_step(lesson_screen *ls)
{
    int k = shown_train_step(ls);
    const trace *at = k > 0 ? train_cache_at(&ls->trained, &ls->o->t, &ls->o->l.train, k,
                                             &ls->o->compute, NULL) : NULL;
    ls->v.t = at ? at : &ls->o->t;
}

static void draw(ui_screen *s, const ui_style *run_style)
{
    lesson_screen *ls = lesson_of(s);
    ui_view *v = &ls->v;
    show_train_step(ls);
    char explanation[UI_TEXT_MAX], full[UI_TEXT_MAX], narration[UI_TEXT_MAX];
    ls->grid = (ui_matrix_grid){0};
    ls->list = (stage_list){0};
    erase();
    ui_style mine = style_of(ls, run_style);
    const ui_style *st = &mine;
    /* a new matrix or step starts its narration at the top */
    ui_display_narration_at(&ls->d, (unsigned long)v->shown << 20 ^ (unsigned long)v->step << 1 ^ v->off_script);
    explanation_or_edit(ls, st, false, explanation, sizeof explanation);
    if (ls->d.present) explanation_or_edit(ls, st, true, full, sizeof full);
    number_format f = ui_number_format(NUMBER_SHORT, 0, st);
    ui_narration_text(v, &f, st->utf8 ? "\xe2\x96\xb8" : ">", "_", narration, sizeof narration);
    with_notices(ls, narration, sizeof narration);
    regions r = split_screen(v, &ls->d, explanation, ls->d.present ? full : NULL, narration, st);
    if (r.full_explanation) memcpy(explanation, full, sizeof explanation);
    ui_keep_the_result(explanation, sizeof explanation, COLS - 2, r.explain_h, st);
    draw_title(v, ls->o->l.title, shown_train_step(ls), st);
    if (r.list_w) draw_stage_list(v, &r, st, &ls->list);
    ui_matrix_draw(v, r.body_y, r.mat_x, r.mat_w, r.body_h, st, &ls->grid);
    ui_put_wrapped(r.explain_y, 1, COLS - 2, r.explain_h, explanation, st, A_NORMAL);
    draw_narration(v, &ls->d, &r, narration, ls->o->progress_note, st);
    ls->d.list_drawn = r.list_w > 0;
    /* the step list made room for the matrix: the key bar says which key brings it back */
    ui_draw_bar_led(context(s), UI_ACT_STEP_LIST, r.list_made_room ? "step list" : NULL, st);
}

/* An overlay to open; when there is no memory for it, the status line says so. */
static ui_outcome open_overlay(ui_view *v, ui_screen *overlay)
{
    if (!overlay) snprintf(v->message, sizeof v->message, "out of memory");
    return (ui_outcome){0, overlay};
}

/* A key that does nothing here is answered in the status line: while a question waits, how to
 * answer it; otherwise where the keys are listed. */
static void explain_unbound(ui_view *v, int key, const ui_style *st)
{
    char label[32], help[32];
    const char *name = ui_key_label(key, st->utf8, label, sizeof label);
    if (ui_view_question_open(v))
        snprintf(v->message, sizeof v->message, "%s: answer first (%s), %s skips", name,
                 (ui_view_context(v) & UI_IN_CHOICE) ? "press a choice's number" :
                 "type a number, then Enter",
                 ui_action_key(UI_ACT_SKIP, UI_IN_QUESTION, st->utf8, help, sizeof help));
    else
        snprintf(v->message, sizeof v->message, "%s does nothing here; %s lists the keys", name,
                 ui_action_key(UI_ACT_HELP, UI_IN_LESSON, st->utf8, help, sizeof help));
}

/* The keys that change how the lesson is shown, not where it is: true when action was one. */
static bool display_key(lesson_screen *ls, ui_action action, int arg, const ui_style *st)
{
    int shown = style_of(ls, st).precision;   /* what + and - start from, presenting or not */
    return ui_display_key(&ls->d, action, arg, shown, ls->v.message, sizeof ls->v.message);
}

/* Questions answered or skipped so far: a change is worth saving at once. */
static int questions_settled(const ui_view *v)
{
    int right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    return asked + ui_view_skipped(v);
}

/* After the lesson's numbers changed (an edit, an undo, the leader's edits): the trained
 * steps were computed from the numbers before, so they go (step k is then the edited lesson
 * trained k steps, computed again when shown). */
static void numbers_changed(lesson_screen *ls)
{
    train_cache_free(&ls->trained);
    ls->v.t = &ls->o->t;
}

/* What if?: = opens the edit line, u and U undo; the edit line has the keys while open. */
static bool edit_key(lesson_screen *ls, ui_action action, int arg)
{
    ui_view *v = &ls->v;
    if (ls->edit.open) {
        ui_edit_key(&ls->edit, ls->o, v, action, arg);
        if (action == UI_ACT_ANSWER) numbers_changed(ls);
        return true;
    }
    if (action != UI_ACT_EDIT && action != UI_ACT_UNDO && action != UI_ACT_UNDO_ALL
        && action != UI_ACT_WRITE)
        return false;
    if (action == UI_ACT_EDIT) ui_edit_begin(&ls->edit, ls->o, v);
    else if (action == UI_ACT_WRITE) ui_edit_write(&ls->edit, ls->o, v);
    else if (ui_view_question_open(v))   /* the numbers it asks about would change */
        snprintf(v->message, sizeof v->message, "no undo while a question waits");
    else {
        ui_edit_undo(&ls->edit, ls->o, v, action == UI_ACT_UNDO_ALL);
        numbers_changed(ls);
    }
    return true;
}

bool ui_lesson_screen_take_edits(ui_screen *s, const lesson_edit *edits, int count)
{
    lesson_screen *ls = lesson_of(s);
    if (!ui_edit_take_leader(&ls->edit, ls->o, &ls->v, edits, count)) return false;
    numbers_changed(ls);
    return true;
}

/* The loss curve of the lesson's training, marked at the step shown, in a box. */
static ui_screen *loss_curve_screen(lesson_screen *ls, const ui_style *st)
{
    const lesson *l = &ls->o->l;
    train_run run;
    if (train_compute(&l->input, &l->train, l->train.steps, &ls->o->compute, &run, NULL)
        != TRACE_OK)
        return NULL;
    char text[UI_TEXT_MAX];
    ui_loss_curve(run.loss, run.steps + 1, shown_train_step(ls), COLS - 8, st->utf8, text,
                  sizeof text);
    train_free(&run);
    return ui_text_screen_new(" training: the loss after each step ", text);
}

/* < and > move the matrix shown along the training steps; T shows the loss curve. */
static ui_outcome training_key(lesson_screen *ls, ui_action action, const ui_style *st)
{
    ui_view *v = &ls->v;
    if (!trains(ls)) {
        snprintf(v->message, sizeof v->message, "this lesson does not train (no train: key)");
        return UI_STAY;
    }
    if (action == UI_ACT_LOSS_CURVE) return open_overlay(v, loss_curve_screen(ls, st));
    int before = shown_train_step(ls);
    ls->train_moved += action == UI_ACT_TRAIN_NEXT ? 1 : -1;
    int now = shown_train_step(ls);
    ls->train_moved -= (action == UI_ACT_TRAIN_NEXT ? 1 : -1) * (now == before);  /* at an end */
    show_train_step(ls);
    char loss[NUMBER_MAX];
    number_write(trace_loss(v->t), &(number_format){ NUMBER_SHORT, 4, 0, !st->utf8 }, loss,
                 sizeof loss);
    snprintf(v->message, sizeof v->message, "%s training step %d of %d: loss %s",
             now == before ? "already at" : "at", now, ls->o->l.train.steps, loss);
    return UI_STAY;
}

static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    ui_view *v = &lesson_of(s)->v;
    int arg = 0;
    lesson_of(s)->show_notices = false;   /* read: the next key puts them away */
    if (lesson_of(s)->edit.open) {
        ui_action action = ui_key_action(k, UI_IN_EDIT, &arg);
        if (action == UI_ACT_NONE)
            snprintf(v->message, sizeof v->message,
                     "type the new value, Enter sets it, Esc leaves it");
        else edit_key(lesson_of(s), action, arg);
        return UI_STAY;
    }
    /* A question waiting for its answer has keys of its own (its context in the table). */
    ui_action action = ui_key_action(k, ui_view_context(v), &arg);
    ui_action lesson_action = ui_key_action(k, UI_IN_LESSON, NULL);
    if (action == UI_ACT_NONE && ui_view_question_open(v)
        && (lesson_action == UI_ACT_EDIT || lesson_action == UI_ACT_UNDO
            || lesson_action == UI_ACT_UNDO_ALL)) {   /* what if? would leak the answer */
        snprintf(v->message, sizeof v->message,
                 "no edit while a question waits: it would show the answer");
        return UI_STAY;
    }
    if (action == UI_ACT_NONE) { explain_unbound(v, k, st); return UI_STAY; }
    v->message[0] = '\0';
    if (display_key(lesson_of(s), action, arg, st)) return UI_STAY;
    if (edit_key(lesson_of(s), action, arg)) return UI_STAY;
    if (action == UI_ACT_HELP) { v->message[0] = '\0'; return open_overlay(v, ui_help_screen_new()); }
    if (action == UI_ACT_SUM) {   /* the pane writes its numbers with the screen's decimals */
        ui_style mine = style_of(lesson_of(s), st);
        return open_overlay(v, ui_sum_screen_new(v, &mine));
    }
    if (action == UI_ACT_PARAMETERS) {   /* what if?: the numbers = can change */
        ui_style mine = style_of(lesson_of(s), st);
        number_format f = ui_number_format(NUMBER_FIXED, 8, &mine);
        char *text = ui_edit_parameters(&lesson_of(s)->edit, lesson_of(s)->o, &f, st->utf8);
        ui_screen *box = text ? ui_text_screen_new(" parameters ", text) : NULL;
        free(text);
        return open_overlay(v, box);
    }
    if (action == UI_ACT_TRAIN_PREV || action == UI_ACT_TRAIN_NEXT || action == UI_ACT_LOSS_CURVE)
        return training_key(lesson_of(s), action, st);
    if (action == UI_ACT_COMPARE)
        return open_overlay(v, ui_picker_screen_beside(lesson_of(s)->o->l.path,
                                                       &lesson_of(s)->o->compute,
                                                       &lesson_of(s)->o->load,
                                                       lesson_of(s)->o->state_dir));
    int settled = questions_settled(v);
    ui_view_outcome outcome = ui_view_apply(v, action, arg);
    /* an answer (or a skip) is kept at once; the place is kept when the lesson closes */
    if (questions_settled(v) != settled || outcome == UI_VIEW_SCORE)
        ui_progress_save(lesson_of(s)->o, v);
    switch (outcome) {
    case UI_VIEW_SCORE: return open_overlay(v, ui_summary_screen_new(v, false));
    case UI_VIEW_SCORE_LEAVE: return open_overlay(v, ui_summary_screen_new(v, true));
    case UI_VIEW_LEAVE: return (ui_outcome){1, NULL};
    case UI_VIEW_STAY: break;
    }
    return UI_STAY;
}

/* A click on a cell selects it (while a question waits its cell stays selected); a click on the
 * stage list opens that stage and head. */
static ui_outcome click(ui_screen *s, int x, int y)
{
    lesson_screen *ls = lesson_of(s);
    const stage_list *list = &ls->list;
    int row, col;
    if (ui_matrix_hit(&ls->grid, &ls->v, x, y, &row, &col)) {
        if (!ui_view_question_open(&ls->v)) { ls->v.row = row; ls->v.col = col; }
    } else if (list->w && x < list->w && y >= list->y && y - list->y < list->count) {
        const walk_step *opens = &list->opens[y - list->y];
        ls->v.message[0] = '\0';
        ui_view_open_stage(&ls->v, opens->stage, opens->head);
    }
    return UI_STAY;
}

/* A tick looks at the lesson's file; a key script's reload looks now (or stands another file's
 * text in for it) and always draws again. */
static bool follow(ui_screen *s, const ui_event *ev)
{
    lesson_screen *ls = lesson_of(s);
    const ui_opened *before = ls->o;
    bool changed = ui_lesson_follow(&ls->o, &ls->v, &ls->seen, ev->file[0] ? ev->file : NULL);
    if (ls->o != before) {   /* the file as saved now: the edits made here were to the old one */
        ls->show_notices = ls->o->notices != NULL;   /* the author just saved */
        ui_edit_free(&ls->edit);
        ls->v.edits = NULL;
    }
    if (changed) {   /* the trained traces borrow the old lesson's numbers */
        train_cache_free(&ls->trained);
        ls->v.t = &ls->o->t;
    }
    return changed || ev->kind == UI_EV_RELOAD;
}

static unsigned context(const ui_screen *s)
{
    if (lesson_const(s)->edit.open) return UI_IN_EDIT;
    return ui_view_context(&lesson_const(s)->v);
}

/* The display keys (decimals, step list, palette, narration, presentation) are the screen's
 * own, so the screen names them; the view model names the rest. */
static const char *key_kind(const ui_screen *s, int k)
{
    const ui_view *v = &lesson_const(s)->v;
    ui_action action = ui_key_action(k, ui_view_context(v), NULL);
    if (action >= UI_ACT_MORE_DECIMALS && action <= UI_ACT_PRESENT) return "display";
    if (lesson_const(s)->edit.open || (action >= UI_ACT_EDIT && action <= UI_ACT_WRITE))
        return "edit";
    return ui_view_key_kind(v, k);
}

/* A move that made the matrix scroll is told apart in the timings: it redraws every cell. */
static unsigned long scroll_mark(const ui_screen *s)
{
    const ui_view *v = &lesson_const(s)->v;
    return (unsigned long)v->top << 16 ^ (unsigned long)v->left;
}

static void close_screen(ui_screen *s)
{
    lesson_screen *ls = lesson_of(s);
    ui_progress_save(ls->o, &ls->v);   /* where the student stopped */
    ui_edit_free(&ls->edit);
    ui_view_free(&ls->v);
    train_cache_free(&ls->trained);
    ui_lesson_close(ls->o);
    free(ls);
}

static const ui_screen_ops lesson_ops = {
    .overlay = false, .draw = draw, .key = key, .click = click, .follow = follow,
    .context = context, .key_kind = key_kind, .scroll_mark = scroll_mark, .close = close_screen,
};

/* "1 warning, 2 notes: see --check", for the status line (short: it shares the rule). */
static void notice_count(const ui_opened *o, char *out, size_t size)
{
    char warnings[32] = "", notes[32] = "";
    if (o->warnings) snprintf(warnings, sizeof warnings, "%d warning%s", o->warnings,
                              o->warnings == 1 ? "" : "s");
    if (o->notes) snprintf(notes, sizeof notes, "%d note%s", o->notes, o->notes == 1 ? "" : "s");
    snprintf(out, size, "%s%s%s: see --check", warnings, o->warnings && o->notes ? ", " : "",
             notes);
}

ui_screen *ui_lesson_screen_new(ui_opened *o)
{
    lesson_screen *ls = calloc(1, sizeof *ls);
    if (!ls || !ui_view_init(&ls->v, &o->t, &o->l)) {
        free(ls);
        ui_lesson_close(o);
        return NULL;
    }
    ls->base.ops = &lesson_ops;
    ls->o = o;
    ls->seen = ui_file_stamp_of(o->l.path);
    if (o->warnings || o->notes)   /* the count only: a warning may quote an answer */
        notice_count(o, ls->v.message, sizeof ls->v.message);
    return &ls->base;
}

ui_view *ui_lesson_screen_view(ui_screen *screen)
{
    assert(screen->ops == &lesson_ops);
    return &lesson_of(screen)->v;
}
