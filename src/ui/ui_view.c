/* The view model of one lesson: the walk of steps, the selected cell, stepping in and out.
 * No curses here, so the tests can drive it directly; it only reads what the core computed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_internal.h"

static int heads_of(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? t->heads : 1;
}

/* Whether narration item s belongs at (stage, head); an item naming no head (or a head of a
 * stage that has one matrix for all heads) goes with the first head. */
static bool narration_at(const lesson_step *s, const trace *t, stage_id stage, int head)
{
    if (s->stage != stage) return false;
    int wanted = s->head >= 1 && s->head <= heads_of(t, stage) ? s->head : 1;
    return wanted == head;
}

static ui_step make_step(const trace *t, stage_id stage, int head, const lesson_step *s)
{
    ui_step step = {stage, head, -1, -1, NULL, s, UI_Q_NONE, -1, 0, 0, 0};
    if (!s) return step;
    step.say = s->say;
    /* the loader checks the answer is one of the choices; a view built by hand is checked too */
    if (s->ask && (s->n_choices == 0 || (s->answer_choice >= 0 && s->answer_choice < s->n_choices)))
        step.question = UI_Q_OPEN;
    if (s->focus_row >= 0 && s->focus_row < trace_rows(t, stage) && s->focus_col >= 0 &&
        s->focus_col < trace_cols(t, stage)) {
        step.focus_row = s->focus_row;
        step.focus_col = s->focus_col;
    }
    return step;
}

/* ---- the extremes of every step, measured once at load ---- */

/* Where the finite extremes of a block are (cell indices, SIZE_MAX when none is finite),
 * leaving out the cells the mask hides when masking. */
static void find_extremes(const trace *t, const double *block, int rows, int cols, bool masking,
                          size_t at[2])
{
    double lo = INFINITY, hi = -INFINITY;
    at[0] = at[1] = SIZE_MAX;
    for (int r = 0; r < rows; r++) {
        const double *row = block + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            double x = row[c];
            if (x >= lo && x <= hi) continue;   /* most cells: one predictable branch */
            if (!isfinite(x) || (masking && trace_is_hidden(t, r, c))) continue;
            size_t i = (size_t)r * (size_t)cols + (size_t)c;
            if (x < lo) { lo = x; at[0] = i; }
            if (x > hi) { hi = x; at[1] = i; }
        }
    }
}

/* Every step's lo and hi. The stored stages are scanned as arrays; scaled and masked are the
 * scores divided by √d_k (or not), a monotone map, so their extremes are trace_value at the
 * cells of the scores' extremes (masked with a mask: among the cells it shows). Nothing is
 * recomputed; each head's scores are scanned once for the three stages. */
static void measure_steps(ui_view *v)
{
    const trace *t = v->t;
    size_t (*scores_at)[2] = calloc((size_t)t->heads, sizeof *scores_at);
    for (int i = 0; i < v->n_steps; i++) {
        ui_step *s = &v->steps[i];
        if (i > 0 && s->stage == s[-1].stage && s->head == s[-1].head) {   /* narration steps */
            s->lo = s[-1].lo;
            s->hi = s[-1].hi;
            continue;
        }
        int rows = trace_rows(t, s->stage), cols = trace_cols(t, s->stage);
        bool derived = s->stage == STAGE_SCALED || s->stage == STAGE_MASKED;
        bool masking = s->stage == STAGE_MASKED && t->in->mask != MASK_NONE;
        size_t at[2];
        if (derived && !masking && scores_at && scores_at[s->head - 1][0] != 0) {
            at[0] = scores_at[s->head - 1][0] - 1;
            at[1] = scores_at[s->head - 1][1] - 1;
        } else {
            find_extremes(t, trace_block(t, derived ? STAGE_SCORES : s->stage, s->head), rows,
                          cols, masking, at);
        }
        if (s->stage == STAGE_SCORES && scores_at && at[0] != SIZE_MAX) {   /* kept plus one */
            scores_at[s->head - 1][0] = at[0] + 1;
            scores_at[s->head - 1][1] = at[1] + 1;
        }
        s->lo = s->hi = 0;
        if (at[0] == SIZE_MAX) continue;   /* no finite value at all */
        s->lo = trace_value(t, s->stage, s->head, (int)(at[0] / (size_t)cols), (int)(at[0] % (size_t)cols));
        s->hi = trace_value(t, s->stage, s->head, (int)(at[1] / (size_t)cols), (int)(at[1] % (size_t)cols));
    }
    free(scores_at);
}

bool ui_view_init(ui_view *v, const trace *t, const lesson_step *narration, int n_narration)
{
    *v = (ui_view){.t = t, .heat_weights = true};
    int capacity = n_narration;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (trace_has_stage(t, (stage_id)s)) capacity += heads_of(t, (stage_id)s);
    v->steps = calloc((size_t)capacity, sizeof *v->steps);
    if (!v->steps) return false;
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(t, stage)) continue;
        for (int h = 1; h <= heads_of(t, stage); h++) {
            int placed = 0;
            for (int i = 0; i < n_narration; i++) {
                if (!narration_at(&narration[i], t, stage, h)) continue;
                v->steps[v->n_steps++] = make_step(t, stage, h, &narration[i]);
                placed++;
            }
            if (placed == 0) v->steps[v->n_steps++] = make_step(t, stage, h, NULL);
        }
    }
    measure_steps(v);
    ui_view_goto(v, 0);
    return true;
}

void ui_view_free(ui_view *v)
{
    free(v->steps);
    v->steps = NULL;
    v->n_steps = 0;
}

const ui_step *ui_view_current(const ui_view *v)
{
    return &v->steps[v->step];
}

int ui_view_rows(const ui_view *v)
{
    return trace_rows(v->t, ui_view_current(v)->stage);
}

int ui_view_cols(const ui_view *v)
{
    return trace_cols(v->t, ui_view_current(v)->stage);
}

int ui_view_find(const ui_view *v, stage_id stage, int head)
{
    for (int i = 0; i < v->n_steps; i++)
        if (v->steps[i].stage == stage && (v->steps[i].head == head || !stage_get(stage)->per_head))
            return i;
    return -1;
}

/* Keeps the selected cell where it was when the new stage has it, so a cell can be followed
 * from scores to weights; the step's narration focus wins when it has one. */
void ui_view_goto(ui_view *v, int step)
{
    v->step = ui_clamp(step, 0, v->n_steps - 1);
    v->stepped_in = false;
    v->pick = -1;
    v->typed[0] = '\0';
    const ui_step *s = ui_view_current(v);
    if (s->focus_row >= 0) {
        v->row = s->focus_row;
        v->col = s->focus_col;
    }
    v->row = ui_clamp(v->row, 0, ui_view_rows(v) - 1);
    v->col = ui_clamp(v->col, 0, ui_view_cols(v) - 1);
}

bool ui_view_open_at(ui_view *v, const trace_cell *cell)
{
    int step = ui_view_find(v, cell->stage, cell->head);
    if (step < 0) return false;
    ui_view_goto(v, step);
    v->row = ui_clamp(cell->row, 0, ui_view_rows(v) - 1);
    v->col = ui_clamp(cell->col, 0, ui_view_cols(v) - 1);
    return true;
}

static void switch_head(ui_view *v, int head)
{
    const ui_step *s = ui_view_current(v);
    const char *name = stage_get(s->stage)->name;
    if (v->t->heads == 1) {
        snprintf(v->message, sizeof v->message, "this lesson has one head");
    } else if (!stage_get(s->stage)->per_head) {
        snprintf(v->message, sizeof v->message, "%s is one matrix for all heads", name);
    } else if (head < 1 || head > v->t->heads) {
        snprintf(v->message, sizeof v->message, "no head %d: this lesson has %d heads", head,
                 v->t->heads);
    } else {
        int row = v->row, col = v->col;
        ui_view_goto(v, ui_view_find(v, s->stage, head));
        if (ui_view_current(v)->focus_row < 0) { v->row = row; v->col = col; }
    }
}

/* Moves the selection (and, stepped in, the cell being filled). */
static void move(ui_view *v, int drow, int dcol)
{
    v->row = ui_clamp(v->row + drow, 0, ui_view_rows(v) - 1);
    v->col = ui_clamp(v->col + dcol, 0, ui_view_cols(v) - 1);
}

/* Stepped in, next and previous walk the cells in reading order. */
static void step_cell(ui_view *v, int delta)
{
    long cols = ui_view_cols(v), last = (long)ui_view_rows(v) * cols - 1;
    long at = (long)v->row * cols + v->col + delta;
    if (at > last) {
        v->stepped_in = false;
        snprintf(v->message, sizeof v->message, "every cell filled; stepped out");
        return;
    }
    at = at < 0 ? 0 : at;
    v->row = (int)(at / cols);
    v->col = (int)(at % cols);
}

/* The end of the lesson: the score, once there is one (a lesson never answered just ends). */
static bool show_summary(ui_view *v, bool leaving)
{
    int right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    if (asked == 0) return false;
    v->summary = true;
    v->leaving = leaving;
    return true;
}

static void step_by(ui_view *v, int delta)
{
    if (v->stepped_in) { step_cell(v, delta); return; }
    int target = v->step + delta;
    if (target >= v->n_steps && show_summary(v, false)) return;
    if (target < 0 || target >= v->n_steps) {
        snprintf(v->message, sizeof v->message, "%s", target < 0 ? "this is the first step" :
                 "this is the last step");
        return;
    }
    ui_view_goto(v, target);
}

/* ---- questions ---- */

bool ui_view_question_open(const ui_view *v)
{
    return ui_view_current(v)->question == UI_Q_OPEN;
}

unsigned ui_view_context(const ui_view *v)
{
    if (!ui_view_question_open(v)) return UI_IN_LESSON;
    return ui_view_current(v)->item->n_choices > 0 ? UI_IN_CHOICE : UI_IN_NUMBER;
}

void ui_view_reveal(ui_view *v)
{
    if (ui_view_question_open(v)) v->steps[v->step].question = UI_Q_REVEALED;
}

static bool answered_right(const ui_step *s)
{
    const lesson_step *q = s->item;
    if (q->n_choices > 0) return s->given_choice == q->answer_choice;
    return fabs(s->given_number - q->answer) <= q->tolerance;
}

void ui_view_score(const ui_view *v, int *right, int *asked, int *questions)
{
    *right = *asked = *questions = 0;
    for (int i = 0; i < v->n_steps; i++) {
        const ui_step *s = &v->steps[i];
        *questions += s->question != UI_Q_NONE;
        if (s->question != UI_Q_ANSWERED) continue;
        (*asked)++;
        *right += answered_right(s);
    }
}

static void answer_with(ui_view *v, int choice, double number)
{
    ui_step *s = &v->steps[v->step];
    s->question = UI_Q_ANSWERED;
    s->given_choice = choice;
    s->given_number = number;
    v->pick = -1;
    v->typed[0] = '\0';
}

static void choose(ui_view *v, int choice)
{
    int n = ui_view_current(v)->item->n_choices;
    if (choice < 0 || choice >= n)
        snprintf(v->message, sizeof v->message, "no choice %d: pick 1 to %d", choice + 1, n);
    else
        answer_with(v, choice, 0);
}

/* A typed number grows one character at a time: one minus sign, first; one decimal point. */
static void type_char(ui_view *v, char c)
{
    size_t n = strlen(v->typed);
    if ((c == '-' && n > 0) || (c == '.' && strchr(v->typed, '.')))
        snprintf(v->message, sizeof v->message, "%s", c == '-' ? "a minus sign goes first" :
                 "one decimal point is enough");
    else if (n + 1 >= sizeof v->typed)
        snprintf(v->message, sizeof v->message, "that is long enough for an answer");
    else {
        v->typed[n] = c;
        v->typed[n + 1] = '\0';
    }
}

static void submit(ui_view *v)
{
    if (ui_view_current(v)->item->n_choices > 0) {
        if (v->pick < 0) snprintf(v->message, sizeof v->message, "pick a choice first");
        else choose(v, v->pick);
        return;
    }
    char *end;
    double x = strtod(v->typed, &end);   /* LC_NUMERIC stays "C": '.' is the decimal point */
    if (end == v->typed || *end || !isfinite(x))
        snprintf(v->message, sizeof v->message, "type a number first");
    else
        answer_with(v, -1, x);
}

static void on_question(ui_view *v, ui_action action, int arg)
{
    int n = ui_view_current(v)->item->n_choices;
    size_t typed = strlen(v->typed);
    switch (action) {
    case UI_ACT_CHOOSE: choose(v, arg); break;
    case UI_ACT_HIGHLIGHT: {   /* even keys go back, odd ones forward; none highlighted at first */
        int forward = arg % 2;
        if (n > 0 && v->pick < 0) v->pick = forward ? 0 : n - 1;
        else if (n > 0) v->pick = (v->pick + (forward ? 1 : n - 1)) % n;
        break;
    }
    case UI_ACT_TYPE: type_char(v, UI_TYPED_CHARS[arg % (int)strlen(UI_TYPED_CHARS)]); break;
    case UI_ACT_ERASE: if (typed > 0) v->typed[typed - 1] = '\0'; break;
    case UI_ACT_ANSWER: submit(v); break;
    case UI_ACT_SKIP: ui_view_reveal(v); break;
    default: break;
    }
}

/* The column of the step's stage labelled text (a choice names a token): the focus column
 * when it is so labelled (tokens may repeat), else the first; -1 when none is. */
static int column_named(const ui_view *v, const ui_step *s, const char *text)
{
    stage_axis axis = stage_get(s->stage)->cols;
    char buffer[32];
    if (axis != AXIS_TOKENS && axis != AXIS_SOURCE) return -1;
    if (s->focus_col >= 0 && strcmp(trace_axis_label(v->t, axis, s->focus_col, buffer,
                                                     sizeof buffer), text) == 0)
        return s->focus_col;
    for (int c = 0; c < trace_cols(v->t, s->stage); c++)
        if (strcmp(trace_axis_label(v->t, axis, c, buffer, sizeof buffer), text) == 0) return c;
    return -1;
}

/* The focus row's cell in column col: for weights "it gives 0.8485 of its attention to animal",
 * or briefly "animal gets 0.8485"; for the other stages "scores[cat,sat] = 0.5". */
static void cell_phrase(const ui_view *v, const ui_step *s, int col, int precision, bool brief,
                        char *out, size_t size)
{
    const stage_info *info = stage_get(s->stage);
    char rb[32], cb[32], number[64];
    const char *row = trace_axis_label(v->t, info->rows, s->focus_row, rb, sizeof rb);
    const char *column = trace_axis_label(v->t, info->cols, col, cb, sizeof cb);
    format_number(trace_value(v->t, s->stage, s->head, s->focus_row, col), precision, number,
                  sizeof number);
    if (s->stage == STAGE_WEIGHTS && brief)
        snprintf(out, size, "%s gets %s", column, number);
    else if (s->stage == STAGE_WEIGHTS)
        snprintf(out, size, "%s gives %s of its attention to %s", row, number, column);
    else
        snprintf(out, size, "%s[%s,%s] = %s", info->name, row, column, number);
}

static void choice_verdict(const ui_view *v, const ui_step *s, int precision, char *text,
                           size_t size)
{
    const lesson_step *q = s->item;
    const char *answer = q->choices[q->answer_choice];
    int right = s->focus_row >= 0 ? column_named(v, s, answer) : -1;
    char phrase[256] = "", value[64] = "", given[300] = "";
    if (right >= 0) {
        cell_phrase(v, s, right, precision, false, phrase, sizeof phrase);
        format_number(trace_value(v->t, s->stage, s->head, s->focus_row, right), precision,
                      value, sizeof value);
    }
    if (s->question == UI_Q_REVEALED) {
        snprintf(text, size, "Answer: %s", right >= 0 ? phrase : answer);
    } else if (answered_right(s)) {
        snprintf(text, size, "Right: %s", right >= 0 ? phrase : answer);
    } else {
        int chosen = s->focus_row >= 0 ? column_named(v, s, q->choices[s->given_choice]) : -1;
        if (chosen >= 0) cell_phrase(v, s, chosen, precision, true, given, sizeof given);
        else snprintf(given, sizeof given, "you said %s", q->choices[s->given_choice]);
        snprintf(text, size, "Not quite: the answer is %s%s%s%s; %s", answer,
                 right >= 0 ? " (" : "", value, right >= 0 ? ")" : "", given);
    }
}

static void number_verdict(const ui_view *v, const ui_step *s, int precision, char *text,
                           size_t size)
{
    const lesson_step *q = s->item;
    char phrase[256], given[64], answer[64], tolerance[64];
    format_number(s->given_number, precision, given, sizeof given);
    if (s->focus_row >= 0) {
        cell_phrase(v, s, s->focus_col, precision, false, phrase, sizeof phrase);
    } else {
        format_number(q->answer, precision, answer, sizeof answer);
        format_number(q->tolerance, precision, tolerance, sizeof tolerance);
        snprintf(phrase, sizeof phrase, "the answer is %s \xc2\xb1 %s", answer, tolerance);
    }
    if (s->question == UI_Q_REVEALED) snprintf(text, size, "Answer: %s", phrase);
    else if (answered_right(s)) snprintf(text, size, "Right: %s (you said %s)", phrase, given);
    else snprintf(text, size, "Not quite: %s; you said %s", phrase, given);
}

void ui_view_verdict(const ui_view *v, int step, int precision, char *text, size_t size)
{
    const ui_step *s = &v->steps[ui_clamp(step, 0, v->n_steps - 1)];
    text[0] = '\0';
    if (s->question != UI_Q_ANSWERED && s->question != UI_Q_REVEALED) return;
    if (s->item->n_choices > 0) choice_verdict(v, s, precision, text, size);
    else number_verdict(v, s, precision, text, size);
}

/* ---- reloading ---- */

/* How many steps before step show the same stage and head: with the stage and head, this
 * finds "the same step" in a reloaded walk. */
static int ordinal(const ui_view *v, int step)
{
    int n = 0;
    for (int i = 0; i < step; i++)
        n += v->steps[i].stage == v->steps[step].stage && v->steps[i].head == v->steps[step].head;
    return n;
}

/* The step of v at the stage, head and ordinal of old's step, or -1. */
static int same_step(const ui_view *v, const ui_view *old, int step)
{
    const ui_step *o = &old->steps[step];
    for (int i = 0, n = ordinal(old, step); i < v->n_steps; i++)
        if (v->steps[i].stage == o->stage && v->steps[i].head == o->head && n-- == 0) return i;
    return -1;
}

/* An answer carries over when the question is still asked in the same words and choices. */
static void carry_answer(ui_step *to, const ui_step *from)
{
    const lesson_step *a = to->item, *b = from->item;
    if (from->question < UI_Q_ANSWERED || !a || !a->ask || strcmp(a->ask, b->ask) != 0 ||
        a->n_choices != b->n_choices)
        return;
    for (int i = 0; i < a->n_choices; i++)
        if (strcmp(a->choices[i], b->choices[i]) != 0) return;
    to->question = from->question;
    to->given_choice = from->given_choice;
    to->given_number = from->given_number;
}

bool ui_view_rebuild(ui_view *v, const trace *t, const lesson_step *narration, int n_narration)
{
    ui_view fresh;
    if (!ui_view_init(&fresh, t, narration, n_narration)) return false;
    for (int i = 0; i < v->n_steps; i++) {
        int j = same_step(&fresh, v, i);
        if (j >= 0) carry_answer(&fresh.steps[j], &v->steps[i]);
    }
    int here = same_step(&fresh, v, v->step);
    if (here < 0)   /* fewer heads now, or fewer narration steps: the nearest that is left */
        here = ui_view_find(&fresh, v->steps[v->step].stage,
                            ui_clamp(v->steps[v->step].head, 1, t->heads));
    ui_view_goto(&fresh, here >= 0 ? here : v->step);
    bool same_question = here >= 0 && fresh.steps[fresh.step].question == UI_Q_OPEN;
    fresh.row = ui_clamp(v->row, 0, ui_view_rows(&fresh) - 1);
    fresh.col = ui_clamp(v->col, 0, ui_view_cols(&fresh) - 1);
    fresh.stepped_in = v->stepped_in;
    fresh.heat_weights = v->heat_weights;
    fresh.heat_signed = v->heat_signed;
    fresh.help = v->help;
    fresh.help_top = v->help_top;
    fresh.top = v->top;
    fresh.left = v->left;
    if (same_question) {   /* an answer half typed stays */
        fresh.pick = v->pick < fresh.steps[fresh.step].item->n_choices ? v->pick : -1;
        memcpy(fresh.typed, v->typed, sizeof fresh.typed);
    }
    snprintf(fresh.message, sizeof fresh.message, "%s", v->message);
    ui_view_free(v);
    *v = fresh;
    return true;
}

/* ---- actions ---- */

bool ui_view_apply(ui_view *v, ui_action action, int arg)
{
    v->message[0] = '\0';
    if (v->summary) {   /* one key dismisses the score; after quit (or on q) it leaves */
        v->summary = false;
        return !(v->leaving || action == UI_ACT_QUIT);
    }
    if (action >= UI_ACT_CHOOSE && action <= UI_ACT_SKIP) {
        if (ui_view_question_open(v)) on_question(v, action, arg);
        return true;
    }
    switch (action) {
    case UI_ACT_QUIT: return show_summary(v, true);   /* the score first, if any */
    case UI_ACT_HELP: v->help = !v->help; break;
    case UI_ACT_NEXT: step_by(v, 1); break;
    case UI_ACT_PREV: step_by(v, -1); break;
    case UI_ACT_FIRST: ui_view_goto(v, 0); break;
    case UI_ACT_LAST: ui_view_goto(v, v->n_steps - 1); break;
    case UI_ACT_HEAD_NEXT:
    case UI_ACT_HEAD_PREV: {
        int heads = v->t->heads, h = ui_view_current(v)->head;
        switch_head(v, (h - 1 + (action == UI_ACT_HEAD_NEXT ? 1 : heads - 1)) % heads + 1);
        break;
    }
    case UI_ACT_HEAD_NUMBER: switch_head(v, arg + 1); break;
    case UI_ACT_MOVE: {
        static const int rows[] = {0, 1, -1, 0}, cols[] = {-1, 0, 0, 1};
        move(v, rows[arg % 4], cols[arg % 4]);
        break;
    }
    case UI_ACT_STEP_IN:
        if (v->stepped_in) step_cell(v, 1);
        else { v->stepped_in = true; v->row = v->col = 0; }
        break;
    case UI_ACT_STEP_OUT: v->stepped_in = false; break;
    case UI_ACT_HEATMAP:
        if (ui_view_current(v)->stage == STAGE_WEIGHTS) v->heat_weights = !v->heat_weights;
        else v->heat_signed = !v->heat_signed;
        break;
    default: break;
    }
    return true;
}

bool ui_view_is_filled(const ui_view *v, int row, int col)
{
    if (ui_view_question_open(v)) return false;   /* predict first: no number is shown yet */
    return !v->stepped_in || row < v->row || (row == v->row && col <= v->col);
}

bool ui_view_heatmap(const ui_view *v)
{
    return ui_view_current(v)->stage == STAGE_WEIGHTS ? v->heat_weights : v->heat_signed;
}

static int scroll_axis(int first, int selected, int visible, int total)
{
    if (visible < 1) return 0;
    if (selected < first) first = selected;
    if (selected >= first + visible) first = selected - visible + 1;
    return ui_clamp(first, 0, total > visible ? total - visible : 0);
}

void ui_view_scroll(ui_view *v, int visible_rows, int visible_cols)
{
    v->top = scroll_axis(v->top, v->row, visible_rows, ui_view_rows(v));
    v->left = scroll_axis(v->left, v->col, visible_cols, ui_view_cols(v));
}
