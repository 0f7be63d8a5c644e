/* The view model of one lesson (ui_view.h): the user's place on the lesson's walk, the
 * selected cell, stepping in and out, and the questions. No curses. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_tally.h"
#include "ui_util.h"
#include "ui_view.h"

/* A question the view can ask: the loader checks that the answer is one of the choices; a
 * narration built by hand (the tests) is checked too. */
static bool asks(const lesson_step *item)
{
    return item && item->ask &&
           (item->n_choices == 0 || (item->answer_choice >= 0 && item->answer_choice < item->n_choices));
}

/* ---- the extremes of every step, measured once at load ---- */

/* Where the finite extremes of head's matrix of stage are (cell indices, SIZE_MAX when none is
 * finite), leaving out the cells the mask hides when masking: scanned as an array when the
 * stage is stored, else cell by cell as trace_value reads it. */
static void find_extremes(const trace *t, stage_id stage, int head, bool masking, size_t at[2])
{
    int rows = trace_rows(t, stage), cols = trace_cols(t, stage);
    const double *block = trace_block(t, stage, head);
    double lo = INFINITY, hi = -INFINITY;
    at[0] = at[1] = SIZE_MAX;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            size_t i = (size_t)r * (size_t)cols + (size_t)c;
            double x = block ? block[i] : trace_value(t, stage, head, r, c);
            if (x >= lo && x <= hi) continue;   /* most cells: one predictable branch */
            if (!isfinite(x) || (masking && trace_is_hidden(t, r, c))) continue;
            if (x < lo) { lo = x; at[0] = i; }
            if (x > hi) { hi = x; at[1] = i; }
        }
}

/* The stored stage whose cells a stage's extremes sit at: itself when stored; for a derived
 * stage that is an increasing function of its first input cell by cell (STAGE_MONOTONE, of
 * the same shape), that input's (followed down to a stored stage); else the stage itself,
 * which is then scanned cell by cell. */
static stage_id extremes_source(const trace *t, stage_id stage)
{
    stage_id at = stage;
    while (stage_get(at)->storage == STAGE_DERIVED && (stage_get(at)->flags & STAGE_MONOTONE)) {
        stage_id from = trace_stage_node_input(t, at, 0);
        if (from == STAGE_COUNT || stage_get(from)->rows != stage_get(stage)->rows
            || stage_get(from)->cols != stage_get(stage)->cols)
            return stage;
        at = from;
    }
    return stage_get(at)->storage == STAGE_STORED ? at : stage;
}

/* Whether step s's extremes leave out the cells the mask hides. */
static bool masking_of(const trace *t, const walk_step *s)
{
    return (stage_get(s->stage)->flags & STAGE_HIDES) && t->in->mask != MASK_NONE;
}

/* Step s's range from the cells its extremes are at (at[0] SIZE_MAX: no finite value). */
static void set_range(const trace *t, const walk_step *s, const size_t at[2], ui_range *m)
{
    int cols = trace_cols(t, s->stage);
    *m = (ui_range){0, 0, true};
    if (at[0] == SIZE_MAX) return;
    m->lo = trace_value(t, s->stage, s->head, (int)(at[0] / (size_t)cols), (int)(at[0] % (size_t)cols));
    m->hi = trace_value(t, s->stage, s->head, (int)(at[1] / (size_t)cols), (int)(at[1] % (size_t)cols));
}

/* The lo and hi of every stage and head (each once: the pipeline). The stored stages are
 * scanned as arrays; a monotone derived stage (scaled, masked) takes its extremes at the cells
 * of its stored source's (masked with a mask: among the cells it shows), each source and head
 * scanned once for all the stages derived from it; any other derived stage is read cell by
 * cell. Nothing is recomputed. */
static void measure_steps(ui_view *v)
{
    const trace *t = v->t;
    size_t heads = (size_t)t->heads, (*known)[2] = calloc(STAGE_COUNT * heads, sizeof *known);
    for (int i = 0; i < v->pipeline.count; i++) {
        const walk_step *s = &v->pipeline.steps[i];
        stage_id source = extremes_source(t, s->stage);
        bool masking = masking_of(t, s);
        size_t at[2], *cached = known ? known[(size_t)source * heads + (size_t)s->head - 1] : NULL;
        if (!masking && cached && cached[0] != 0) {   /* kept plus one */
            at[0] = cached[0] - 1;
            at[1] = cached[1] - 1;
        } else {
            find_extremes(t, source, s->head, masking, at);
            if (!masking && cached && at[0] != SIZE_MAX) {
                cached[0] = at[0] + 1;
                cached[1] = at[1] + 1;
            }
        }
        set_range(t, s, at, &v->range[i]);
    }
    free(known);
}

/* The extremes of pipeline step i, measured now on the trace they are of (after an edit,
 * only the matrix shown is scanned, when it is shown: an edit at n = 1024 changes dozens of
 * million-cell matrices, and scanning them all took a fifth of its time). */
static void measure_one(const ui_view *v, int i)
{
    const trace *t = v->ranges_of;
    const walk_step *s = &v->pipeline.steps[i];
    size_t at[2];
    find_extremes(t, extremes_source(t, s->stage), s->head, masking_of(t, s), at);
    set_range(t, s, at, &v->range[i]);   /* the view's cache: filling it moves nothing */
}

void ui_view_numbers_changed(ui_view *v, const trace *t, stage_id from)
{
    v->t = v->ranges_of = t;
    for (int i = 0; i < v->pipeline.count; i++)
        if (v->pipeline.steps[i].stage >= from) v->range[i].known = false;
}

bool ui_view_init(ui_view *v, const trace *t, const lesson *l)
{
    *v = (ui_view){.t = t, .ranges_of = t, .lesson = l, .heat_weights = true};
    bool built = l ? lesson_walk(l, t, &v->walk) : walk_build_pipeline(&v->walk, t);
    if (built && v->walk.count > 0) {
        v->state = calloc((size_t)v->walk.count, sizeof *v->state);
        v->reached = calloc((size_t)v->walk.count, sizeof *v->reached);
    }
    if (v->state && v->reached && walk_build_pipeline(&v->pipeline, t) && v->pipeline.count > 0)
        v->range = calloc((size_t)v->pipeline.count, sizeof *v->range);
    if (!v->range) {
        ui_view_free(v);
        return false;
    }
    for (int k = 0; k < v->walk.count; k++)
        v->state[k] = (ui_step_state){asks(ui_view_item(v, k)) ? UI_Q_OPEN : UI_Q_NONE, -1, 0};
    measure_steps(v);
    ui_view_goto(v, 0);
    return true;
}

void ui_view_free(ui_view *v)
{
    walk_free(&v->walk);
    walk_free(&v->pipeline);
    free(v->state);
    free(v->reached);
    free(v->range);
    v->state = NULL;
    v->reached = NULL;
    v->range = NULL;
}

const walk_step *ui_view_current(const ui_view *v)
{
    return v->off_script ? &v->off_step : &v->walk.steps[v->step];
}

const ui_range *ui_view_range(const ui_view *v)
{
    if (!v->range[v->shown].known) measure_one(v, v->shown);
    return &v->range[v->shown];
}

const lesson_step *ui_view_item(const ui_view *v, int k)
{
    return v->lesson ? lesson_narration(v->lesson, &v->walk.steps[k]) : NULL;
}

const lesson_step *ui_view_here(const ui_view *v)
{
    return v->off_script ? NULL : ui_view_item(v, v->step);
}

bool ui_view_focus(const ui_view *v, int k, int *row, int *col)
{
    const lesson_step *item = ui_view_item(v, k);
    stage_id stage = v->walk.steps[k].stage;
    if (!item || item->focus_row < 0 || item->focus_row >= trace_rows(v->t, stage) ||
        item->focus_col < 0 || item->focus_col >= trace_cols(v->t, stage))
        return false;
    *row = item->focus_row;
    *col = item->focus_col;
    return true;
}

int ui_view_rows(const ui_view *v)
{
    int first, end;
    walk_step_rows(v->t, ui_view_current(v), &first, &end);
    return end - first;
}

int ui_view_cols(const ui_view *v)
{
    int first, end;
    walk_step_cols(v->t, ui_view_current(v), &first, &end);
    return end - first;
}

int ui_view_first_row(const ui_view *v)
{
    int first, end;
    walk_step_rows(v->t, ui_view_current(v), &first, &end);
    return first;
}

int ui_view_first_col(const ui_view *v)
{
    int first, end;
    walk_step_cols(v->t, ui_view_current(v), &first, &end);
    return first;
}

/* Keeps the selected cell among those on screen. */
static void clamp_selection(ui_view *v)
{
    int row = ui_view_first_row(v), col = ui_view_first_col(v);
    v->row = ui_clamp(v->row, row, row + ui_view_rows(v) - 1);
    v->col = ui_clamp(v->col, col, col + ui_view_cols(v) - 1);
}

/* Whether the lesson's walk is its own, the author's script or decoding's time axis (else it
 * is the pipeline itself). */
static bool scripted(const ui_view *v)
{
    return v->lesson && (v->lesson->n_steps > 0 || v->t->in->decode);
}

/* Shows a matrix: step of the script, or (off) the pipeline's step `shown`. Keeps the selected
 * cell where it was when the new stage has it, so a cell can be followed from scores to
 * weights; the step's narration focus wins when it has one. */
static void show(ui_view *v, int step, bool off, int shown)
{
    v->step = ui_clamp(step, 0, v->walk.count - 1);
    v->off_script = off;
    v->before_step = false;
    if (!off) {
        const walk_step *s = &v->walk.steps[v->step];
        shown = walk_find(&v->pipeline, s->stage, s->head);
    }
    assert(shown >= 0 && shown < v->pipeline.count);
    v->shown = shown;
    v->off_step = walk_step_off(&v->pipeline.steps[shown], &v->walk.steps[v->step]);
    v->stepped_in = false;
    v->pick = -1;
    v->typed[0] = '\0';
    if (!off) ui_view_focus(v, v->step, &v->row, &v->col);
    if (!off && v->state[v->step].question == UI_Q_OPEN) v->reached[v->step] = true;
    clamp_selection(v);
}

void ui_view_goto(ui_view *v, int step)
{
    show(v, ui_clamp(step, 0, v->walk.count - 1), false, 0);
}

/* ---- the question waiting: reached, left unanswered, and in the way of what comes after ---- */

int ui_view_waiting(const ui_view *v)
{
    for (int k = 0; k < v->walk.count; k++)
        if (v->reached[k] && v->state[k].question == UI_Q_OPEN) return k;
    return -1;
}

/* The last place of the pipeline holding stage (any head): the matrices after it are made from
 * the stage's numbers, so they would answer a question about it. */
static int last_of_stage(const ui_view *v, stage_id stage)
{
    int last = -1;
    for (int i = 0; i < v->pipeline.count; i++)
        if (v->pipeline.steps[i].stage == stage) last = i;
    return last;
}

bool ui_view_passes_waiting(const ui_view *v, bool off_script, int index)
{
    int k = ui_view_waiting(v);
    if (k < 0) return false;
    if (!off_script) return index > k;
    const walk_step *q = &v->walk.steps[k], *to = &v->pipeline.steps[index];
    return (to->stage == q->stage && to->head == q->head) || index > last_of_stage(v, q->stage);
}

void ui_view_skip_waiting(ui_view *v)
{
    for (int k; (k = ui_view_waiting(v)) >= 0;) v->state[k].question = UI_Q_REVEALED;
}

/* Says why a key does not go past the question waiting; true when it would have. */
static bool held_by_question(ui_view *v, bool off_script, int index)
{
    if (!ui_view_passes_waiting(v, off_script, index)) return false;
    snprintf(v->message, sizeof v->message, "step %d asks first: answer it there (Esc skips it)",
             ui_view_waiting(v) + 1);
    return true;
}

/* A step a key goes to: past the question waiting, that question instead (it stays asked). */
static void go_to_step(ui_view *v, int step)
{
    if (held_by_question(v, false, step)) step = ui_view_waiting(v);
    ui_view_goto(v, step);
}

void ui_view_open_stage(ui_view *v, stage_id stage, int head)
{
    int shown = walk_find(&v->pipeline, stage, head), waiting = ui_view_waiting(v);
    const walk_step *left = &v->walk.steps[v->step];
    if (shown < 0) return;
    if (!scripted(v)) { go_to_step(v, walk_find(&v->walk, stage, head)); return; }
    if (waiting >= 0 && v->walk.steps[waiting].stage == stage && v->walk.steps[waiting].head == head) {
        ui_view_goto(v, waiting);   /* the question's own matrix: the question, still asked */
        return;
    }
    if (held_by_question(v, true, shown)) return;
    if (left->stage == stage && (left->head == head || !stage_get(stage)->per_head)) {
        ui_view_goto(v, v->step);   /* back to the step left */
        return;
    }
    for (int k = 0; left->position != WALK_WHOLE && k < v->walk.count; k++) {
        const walk_step *s = &v->walk.steps[k];
        if (s->stage == stage && s->head == head && s->position == left->position) {
            go_to_step(v, k);   /* decoding: the same token's step in that head */
            return;
        }
    }
    show(v, v->step, true, shown);
}

/* The first script step at the cell's stage and head that shows the cell (at a decoding step,
 * the token's), with the cell as its focus when with_focus; -1 when there is none. */
static int script_step_at(const ui_view *v, const trace_cell *cell, bool with_focus)
{
    for (int k = 0; k < v->walk.count; k++) {
        const walk_step *s = &v->walk.steps[k];
        int row, col, first_row, end_row, first_col, end_col;
        if (s->stage != cell->stage || (stage_get(s->stage)->per_head && s->head != cell->head))
            continue;
        walk_step_rows(v->t, s, &first_row, &end_row);
        walk_step_cols(v->t, s, &first_col, &end_col);
        if (cell->row < first_row || cell->row >= end_row || cell->col < first_col
            || cell->col >= end_col)
            continue;
        if (!with_focus || (ui_view_focus(v, k, &row, &col) && row == cell->row && col == cell->col))
            return k;
    }
    return -1;
}

bool ui_view_open_at(ui_view *v, const trace_cell *cell)
{
    int shown = walk_find(&v->pipeline, cell->stage, cell->head);
    if (shown < 0) return false;
    int step = script_step_at(v, cell, true);
    if (step < 0) step = script_step_at(v, cell, false);
    if (step >= 0) {
        ui_view_goto(v, step);
    } else {   /* no step left behind: n goes to the script's first */
        show(v, 0, true, shown);
        v->before_step = true;
        v->off_step = v->pipeline.steps[shown];   /* the whole matrix: no token was left */
    }
    v->row = cell->row;
    v->col = cell->col;
    clamp_selection(v);
    return true;
}

static void switch_head(ui_view *v, int head)
{
    const walk_step *s = ui_view_current(v);
    const char *name = stage_get(s->stage)->name;
    if (v->t->heads == 1) {
        snprintf(v->message, sizeof v->message, "this lesson has one head");
    } else if (!stage_get(s->stage)->per_head) {
        snprintf(v->message, sizeof v->message, "%s is one matrix for all heads", name);
    } else if (head < 1 || head > v->t->heads) {
        snprintf(v->message, sizeof v->message, "no head %d: this lesson has %d heads", head,
                 v->t->heads);
    } else {
        int row = v->row, col = v->col, focus_row, focus_col;
        ui_view_open_stage(v, s->stage, head);
        if (v->off_script || !ui_view_focus(v, v->step, &focus_row, &focus_col)) {
            v->row = row;
            v->col = col;
        }
    }
}

/* ] and [: the next or previous stage and head of the pipeline, as the step list opens them,
 * keeping the selected cell where the new stage has it. */
static void step_stage(ui_view *v, int delta)
{
    int target = v->shown + delta, row = v->row, col = v->col;
    if (target < 0 || target >= v->pipeline.count) {
        snprintf(v->message, sizeof v->message, "%s", target < 0 ? "this is the first stage" :
                 "this is the last stage");
        return;
    }
    ui_view_open_stage(v, v->pipeline.steps[target].stage, v->pipeline.steps[target].head);
    if (v->off_script) {
        v->row = row;
        v->col = col;
        clamp_selection(v);
    }
}

/* b: the stage shown beside this one (its node's `beside`: weighted_norms beside weights), or
 * back, at the same head and cell; a message when the lesson has none. */
static void show_pair(ui_view *v)
{
    const walk_step *s = ui_view_current(v);
    stage_id pair = stage_pair(s->stage);
    int row = v->row, col = v->col;
    if (pair == STAGE_COUNT) {
        snprintf(v->message, sizeof v->message, "no stage is shown beside %s",
                 stage_get(s->stage)->name);
        return;
    }
    if (!trace_has_stage(v->t, pair)) {
        snprintf(v->message, sizeof v->message, "%s, shown beside %s, needs '%s'",
                 stage_get(pair)->name, stage_get(s->stage)->name,
                 stage_presence_key(stage_get(pair)->presence));
        return;
    }
    ui_view_open_stage(v, pair, s->head);
    if (v->off_script) {
        v->row = row;
        v->col = col;
        clamp_selection(v);
    }
}

/* Moves the selection (and, stepped in, the cell being filled). */
static void move(ui_view *v, int drow, int dcol)
{
    v->row += drow;
    v->col += dcol;
    clamp_selection(v);
}

/* Moves the selection and the matrix's window together by the columns the window showed (at
 * least one), so the next screenful comes into view with the selection at the same place in
 * it: 0 left, 1 right. */
static void page(ui_view *v, int direction)
{
    int dcol = (direction == 0 ? -1 : 1) * (v->page_cols > 1 ? v->page_cols : 1);
    v->left += dcol;
    move(v, 0, dcol);
}

/* Stepped in, next and previous walk the cells in reading order. */
static void step_cell(ui_view *v, int delta)
{
    int first_row = ui_view_first_row(v), first_col = ui_view_first_col(v);
    long cols = ui_view_cols(v), last = (long)ui_view_rows(v) * cols - 1;
    long at = (long)(v->row - first_row) * cols + v->col - first_col + delta;
    if (at > last) {
        v->stepped_in = false;
        snprintf(v->message, sizeof v->message, "every cell filled; stepped out");
        return;
    }
    at = at < 0 ? 0 : at;
    v->row = first_row + (int)(at / cols);
    v->col = first_col + (int)(at % cols);
}

/* Whether the lesson has a score to show (a lesson never answered just ends). */
static bool has_score(const ui_view *v)
{
    int right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    return asked > 0;
}

static ui_view_outcome step_by(ui_view *v, int delta)
{
    if (v->stepped_in) { step_cell(v, delta); return UI_VIEW_STAY; }
    /* off the script, p goes back to the step left and n on to the one after it */
    int target = v->step + (v->off_script && (delta < 0 || v->before_step) ? 0 : delta);
    if (v->off_script && target >= v->walk.count && !has_score(v)) target = v->step;
    if (target >= v->walk.count && ui_view_waiting(v) >= 0) target = v->walk.count;   /* held */
    else if (target >= v->walk.count && has_score(v)) return UI_VIEW_SCORE;
    if (target < 0 || target >= v->walk.count) {
        snprintf(v->message, sizeof v->message, "%s", target < 0 ? "this is the first step" :
                 "this is the last step");
        return UI_VIEW_STAY;
    }
    go_to_step(v, target);
    return UI_VIEW_STAY;
}

/* ---- questions ---- */

bool ui_view_question_open(const ui_view *v)
{
    return !v->off_script && v->state[v->step].question == UI_Q_OPEN;
}

unsigned ui_view_context(const ui_view *v)
{
    if (!ui_view_question_open(v)) return UI_IN_LESSON | v->class_context;
    return (ui_view_item(v, v->step)->n_choices > 0 ? UI_IN_CHOICE : UI_IN_NUMBER)
         | v->class_context;
}

void ui_view_reveal(ui_view *v)
{
    if (ui_view_question_open(v)) v->state[v->step].question = UI_Q_REVEALED;
}

bool ui_view_number_key(const ui_view *v, int step, double *truth, double *tolerance)
{
    const lesson_step *q = step >= 0 && step < v->walk.count ? ui_view_item(v, step) : NULL;
    int row, col;
    if (!asks(q) || q->n_choices > 0) return false;
    const walk_step *s = &v->walk.steps[step];
    *truth = ui_view_focus(v, step, &row, &col) ? trace_value(v->t, s->stage, s->head, row, col)
                                                : q->answer;
    *tolerance = q->tolerance;
    return !isnan(*truth);
}

static bool answered_right(const ui_view *v, int step)
{
    const lesson_step *q = ui_view_item(v, step);
    const ui_step_state *m = &v->state[step];
    double truth, tolerance;
    if (q->n_choices > 0) return m->given_choice == q->answer_choice;
    return ui_view_number_key(v, step, &truth, &tolerance)
           && ui_tally_within(m->given_number, truth, tolerance);
}

void ui_view_score(const ui_view *v, int *right, int *asked, int *questions)
{
    *right = *asked = *questions = 0;
    for (int k = 0; k < v->walk.count; k++) {
        const ui_step_state *m = &v->state[k];
        *questions += m->question != UI_Q_NONE;
        if (m->question != UI_Q_ANSWERED) continue;
        (*asked)++;
        *right += answered_right(v, k);
    }
}

int ui_view_skipped(const ui_view *v)
{
    int skipped = 0;
    for (int k = 0; k < v->walk.count; k++) skipped += v->state[k].question == UI_Q_REVEALED;
    return skipped;
}

static void answer_with(ui_view *v, int choice, double number)
{
    ui_step_state *m = &v->state[v->step];
    m->question = UI_Q_ANSWERED;
    m->given_choice = choice;
    m->given_number = number;
    v->pick = -1;
    v->typed[0] = '\0';
}

static int choices_here(const ui_view *v)
{
    return ui_view_item(v, v->step)->n_choices;
}

static void choose(ui_view *v, int choice)
{
    int n = choices_here(v);
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
    if (choices_here(v) > 0) {
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
    int n = choices_here(v);
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

/* ---- verdicts ---- */

/* A question being judged: its step, item and state, and the narration's focus (row -1
 * without). */
typedef struct {
    int step;
    const walk_step *at;
    const lesson_step *q;
    const ui_step_state *m;
    int row, col;
    const number_format *f;
} judged;

/* The column of the step's stage labelled text (a choice names a token): the focus column
 * when it is so labelled (tokens may repeat), else the first; -1 when none is. */
static int column_named(const ui_view *v, const judged *j, const char *text)
{
    stage_axis axis = stage_get(j->at->stage)->cols;
    char buffer[32];
    if (axis != AXIS_TOKENS && axis != AXIS_SOURCE) return -1;
    if (j->col >= 0 && strcmp(trace_axis_label(v->t, axis, j->col, buffer, sizeof buffer), text) == 0)
        return j->col;
    for (int c = 0; c < trace_cols(v->t, j->at->stage); c++)
        if (strcmp(trace_axis_label(v->t, axis, c, buffer, sizeof buffer), text) == 0) return c;
    return -1;
}

/* The value of the focus row's cell in column col, as j->f writes it. */
static void cell_number(const ui_view *v, const judged *j, int col, char *out, size_t size)
{
    number_write(trace_value(v->t, j->at->stage, j->at->head, j->row, col), j->f, out, size);
}

/* The focus row's cell in column col: for weights "it gives 0.8485 of its attention to animal",
 * or briefly "animal gets 0.8485"; for the other stages "scores[cat,sat] = 0.5". */
static void cell_phrase(const ui_view *v, const judged *j, int col, bool brief, char *out,
                        size_t size)
{
    const stage_info *info = stage_get(j->at->stage);
    char rb[48], cb[48], number[NUMBER_MAX];   /* names: "dog@6" for a repeated token */
    const char *row = trace_axis_name(v->t, info->rows, j->row, rb, sizeof rb);
    const char *column = trace_axis_name(v->t, info->cols, col, cb, sizeof cb);
    cell_number(v, j, col, number, sizeof number);
    bool attention = info->flags & STAGE_ATTENTION;
    if (attention && brief)
        snprintf(out, size, "%s gets %s", column, number);
    else if (attention)
        snprintf(out, size, "%s gives %s of its attention to %s", row, number, column);
    else
        snprintf(out, size, "%s[%s,%s] = %s", info->name, row, column, number);
}

static void choice_verdict(const ui_view *v, const judged *j, char *text, size_t size)
{
    const lesson_step *q = j->q;
    const char *answer = q->choices[q->answer_choice];
    int right = j->row >= 0 ? column_named(v, j, answer) : -1;
    char phrase[256] = "", value[NUMBER_MAX] = "", given[300] = "";
    if (right >= 0) {
        cell_phrase(v, j, right, false, phrase, sizeof phrase);
        cell_number(v, j, right, value, sizeof value);
    }
    if (j->m->question == UI_Q_REVEALED) {
        snprintf(text, size, "Answer: %s", right >= 0 ? phrase : answer);
    } else if (answered_right(v, j->step)) {
        snprintf(text, size, "Right: %s", right >= 0 ? phrase : answer);
    } else {
        const char *said = q->choices[j->m->given_choice];
        int chosen = j->row >= 0 ? column_named(v, j, said) : -1;
        if (chosen >= 0) cell_phrase(v, j, chosen, true, given, sizeof given);
        else snprintf(given, sizeof given, "you said %s", said);
        snprintf(text, size, "Not quite: the answer is %s%s%s%s; %s", answer,
                 right >= 0 ? " (" : "", value, right >= 0 ? ")" : "", given);
    }
}

/* What counts: "within ± 0.01" (the tolerance in full, whatever the screen's decimals), or
 * "exact" for a tolerance of 0. */
static void write_within(double tolerance, const number_format *f, char *text, size_t size)
{
    char number[NUMBER_MAX];
    number_format wide = *f;
    wide.precision = 9;   /* SHORT trims the zeros after it */
    wide.max_width = 0;
    number_write(tolerance, &wide, number, sizeof number);
    if (tolerance > 0) snprintf(text, size, "within \xc2\xb1 %s", number);
    else snprintf(text, size, "exact");
}

/* The true value (the focus cell, else the lesson's number) and the tolerance it was judged
 * with: "Right: cat gives 0.6296 of its attention to cat; 0.62 is within ± 0.01" (short
 * enough for one line at 80 columns with the shipped lessons' tokens). */
static void number_verdict(const ui_view *v, const judged *j, char *text, size_t size)
{
    const lesson_step *q = j->q;
    char phrase[256], given[NUMBER_MAX], answer[NUMBER_MAX], within[NUMBER_MAX + 16];
    number_write(j->m->given_number, j->f, given, sizeof given);
    if (j->row >= 0) {
        cell_phrase(v, j, j->col, false, phrase, sizeof phrase);
    } else {
        number_write(q->answer, j->f, answer, sizeof answer);
        snprintf(phrase, sizeof phrase, "the answer is %s", answer);
    }
    write_within(q->tolerance, j->f, within, sizeof within);
    if (j->m->question == UI_Q_REVEALED)   /* "(within ± 0.01 counts)", "(exact only)" */
        snprintf(text, size, "Answer: %s (%s %s)", phrase, within, q->tolerance > 0 ? "counts" : "only");
    else if (answered_right(v, j->step))
        snprintf(text, size, "Right: %s; %s is %s", phrase, given, within);
    else snprintf(text, size, "Not quite: %s; %s is not %s", phrase, given, within);
}

void ui_view_precision(const ui_view *v, int step, const number_format *f, char *text,
                       size_t size)
{
    double truth, tolerance;
    char decimals[32], within[NUMBER_MAX + 16];
    text[0] = '\0';
    if (!ui_view_number_key(v, step, &truth, &tolerance)) return;
    ui_tally_precision(tolerance, decimals, sizeof decimals);
    write_within(tolerance, f, within, sizeof within);
    if (tolerance > 0) snprintf(text, size, "%s, %s counts", decimals, within);
    else snprintf(text, size, "%s", decimals);   /* "exactly" */
}

void ui_view_verdict(const ui_view *v, int step, const number_format *f, char *text,
                     size_t size)
{
    int k = ui_clamp(step, 0, v->walk.count - 1);
    judged j = {k, &v->walk.steps[k], ui_view_item(v, k), &v->state[k], -1, -1, f};
    text[0] = '\0';
    if (j.m->question != UI_Q_ANSWERED && j.m->question != UI_Q_REVEALED) return;
    ui_view_focus(v, k, &j.row, &j.col);
    if (j.q->n_choices > 0) choice_verdict(v, &j, text, size);
    else number_verdict(v, &j, text, size);
}

/* ---- reloading ---- */

/* How many steps before step show the same stage and head: with the stage and head, this
 * finds "the same step" in a reloaded walk. */
static int ordinal(const walk *w, int step)
{
    int n = 0;
    for (int i = 0; i < step; i++)
        n += w->steps[i].stage == w->steps[step].stage && w->steps[i].head == w->steps[step].head;
    return n;
}

/* The step of w at the stage, head and ordinal of old's step, or -1. */
static int same_step(const walk *w, const walk *old, int step)
{
    const walk_step *o = &old->steps[step];
    for (int i = 0, n = ordinal(old, step); i < w->count; i++)
        if (w->steps[i].stage == o->stage && w->steps[i].head == o->head && n-- == 0) return i;
    return -1;
}

/* An answer carries over when the question is still asked in the same words and choices. */
static void carry_answer(ui_view *to, int k, const ui_view *from, int i)
{
    const lesson_step *a = ui_view_item(to, k), *b = ui_view_item(from, i);
    const ui_step_state *was = &from->state[i];
    if (was->question < UI_Q_OPEN || !a || !a->ask || strcmp(a->ask, b->ask) != 0 ||
        a->n_choices != b->n_choices)
        return;
    for (int c = 0; c < a->n_choices; c++)
        if (strcmp(a->choices[c], b->choices[c]) != 0) return;
    to->reached[k] = from->reached[i];   /* a question waiting still waits */
    if (was->question == UI_Q_OPEN) return;
    to->state[k].question = was->question;
    to->state[k].given_choice = was->given_choice;
    to->state[k].given_number = was->given_number;
}

/* A place on an axis by name: the label of index i and which repeat of that label it is
 * (tokens may repeat: the second "the" stays the second "the"). */
typedef struct {
    char label[64];
    int repeat;
} axis_place;

static axis_place place_of(const trace *t, stage_axis axis, int i)
{
    axis_place p = {"", 0};
    char buffer[64];
    snprintf(p.label, sizeof p.label, "%s", trace_axis_label(t, axis, i, buffer, sizeof buffer));
    for (int j = 0; j < i; j++)
        p.repeat += strcmp(trace_axis_label(t, axis, j, buffer, sizeof buffer), p.label) == 0;
    return p;
}

/* The index of p on an axis of count labels: its repeat of the label, else the label's last
 * repeat, else `fallback` clamped (the token is gone). */
static int find_place(const trace *t, stage_axis axis, int count, const axis_place *p, int fallback)
{
    char buffer[64];
    int found = -1;
    for (int j = 0, n = 0; j < count; j++)
        if (strcmp(trace_axis_label(t, axis, j, buffer, sizeof buffer), p->label) == 0) {
            found = j;
            if (n++ == p->repeat) return j;
        }
    return found >= 0 ? found : ui_clamp(fallback, 0, count - 1);
}

/* Puts fresh where v was: on the same script step (the same stage, head and ordinal), else
 * the first step at that stage and head, else off the script at that stage and head (the
 * head clamped to the heads there are now). */
static void same_place(ui_view *fresh, const ui_view *v)
{
    const walk_step *was = ui_view_current(v);
    int head = ui_clamp(was->head, 1, fresh->t->heads);
    int here = v->off_script ? -1 : same_step(&fresh->walk, &v->walk, v->step);
    if (here < 0 && !v->off_script) here = walk_find(&fresh->walk, was->stage, head);
    int shown = walk_find(&fresh->pipeline, was->stage, head);
    if (here >= 0 || shown < 0) {
        show(fresh, here >= 0 ? here : v->step, false, 0);
    } else {
        show(fresh, v->step, true, shown);
        fresh->before_step = v->before_step;
    }
}

bool ui_view_rebuild(ui_view *v, const trace *t, const lesson *l)
{
    ui_view fresh;
    if (!ui_view_init(&fresh, t, l)) return false;
    for (int i = 0; i < v->walk.count; i++) {
        int j = same_step(&fresh.walk, &v->walk, i);
        if (j >= 0) carry_answer(&fresh, j, v, i);
    }
    const stage_info *info = stage_get(ui_view_current(v)->stage);
    axis_place row = place_of(v->t, info->rows, v->row), col = place_of(v->t, info->cols, v->col);
    same_place(&fresh, v);
    const stage_info *now = stage_get(ui_view_current(&fresh)->stage);
    bool same_question = ui_view_question_open(&fresh) && !v->off_script &&
                         fresh.step == same_step(&fresh.walk, &v->walk, v->step);
    fresh.row = find_place(t, now->rows, trace_rows(t, ui_view_current(&fresh)->stage), &row,
                           v->row);
    fresh.col = find_place(t, now->cols, trace_cols(t, ui_view_current(&fresh)->stage), &col,
                           v->col);
    clamp_selection(&fresh);
    fresh.stepped_in = v->stepped_in;
    fresh.heat_weights = v->heat_weights;
    fresh.heat_signed = v->heat_signed;
    fresh.top = v->top;
    fresh.left = v->left;
    fresh.class_context = v->class_context;   /* a leader's reload keeps its keys */
    if (same_question) {   /* an answer half typed stays */
        fresh.pick = v->pick < choices_here(&fresh) ? v->pick : -1;
        memcpy(fresh.typed, v->typed, sizeof fresh.typed);
    }
    snprintf(fresh.message, sizeof fresh.message, "%s", v->message);
    ui_view_free(v);
    *v = fresh;
    return true;
}

/* ---- actions ---- */

ui_view_outcome ui_view_apply(ui_view *v, ui_action action, int arg)
{
    v->message[0] = '\0';
    if (action >= UI_ACT_CHOOSE && action <= UI_ACT_SKIP) {
        if (ui_view_question_open(v)) on_question(v, action, arg);
        return UI_VIEW_STAY;
    }
    switch (action) {
    case UI_ACT_QUIT: return has_score(v) ? UI_VIEW_SCORE_LEAVE : UI_VIEW_LEAVE;
    case UI_ACT_NEXT: return step_by(v, 1);
    case UI_ACT_PREV: return step_by(v, -1);
    case UI_ACT_FIRST: go_to_step(v, 0); break;
    case UI_ACT_LAST: go_to_step(v, v->walk.count - 1); break;
    case UI_ACT_HEAD_NEXT:
    case UI_ACT_HEAD_PREV: {
        int heads = v->t->heads, h = ui_view_current(v)->head;
        switch_head(v, (h - 1 + (action == UI_ACT_HEAD_NEXT ? 1 : heads - 1)) % heads + 1);
        break;
    }
    case UI_ACT_HEAD_NUMBER: switch_head(v, arg + 1); break;
    case UI_ACT_STAGE_NEXT: step_stage(v, 1); break;
    case UI_ACT_STAGE_PREV: step_stage(v, -1); break;
    case UI_ACT_PAIR: show_pair(v); break;
    case UI_ACT_MOVE: {
        static const int rows[] = {0, 1, -1, 0}, cols[] = {-1, 0, 0, 1};
        move(v, rows[arg % 4], cols[arg % 4]);
        break;
    }
    case UI_ACT_PAGE: page(v, arg % 2); break;
    case UI_ACT_STEP_IN:
        if (v->stepped_in) step_cell(v, 1);
        else {
            v->stepped_in = true;
            v->row = ui_view_first_row(v);
            v->col = ui_view_first_col(v);
        }
        break;
    case UI_ACT_STEP_OUT: v->stepped_in = false; break;
    case UI_ACT_HEATMAP:
        if (stage_get(ui_view_current(v)->stage)->flags & STAGE_ATTENTION)
            v->heat_weights = !v->heat_weights;
        else v->heat_signed = !v->heat_signed;
        break;
    default: break;
    }
    return UI_VIEW_STAY;
}

const char *ui_view_key_kind(const ui_view *v, int key)
{
    static const char *const moves[] = {"move-left", "move-down", "move-up", "move-right"};
    int arg = 0;
    switch (ui_key_action(key, ui_view_context(v), &arg)) {
    case UI_ACT_MOVE: return moves[arg % 4];
    case UI_ACT_PAGE: return moves[arg % 2 ? UI_DIR_RIGHT : UI_DIR_LEFT];
    case UI_ACT_NEXT: return v->stepped_in ? "cell-next" : "stage-next";
    case UI_ACT_PREV: return v->stepped_in ? "cell-prev" : "stage-prev";
    case UI_ACT_FIRST: return "first";
    case UI_ACT_LAST: return "last";
    case UI_ACT_HEAD_NEXT: case UI_ACT_HEAD_PREV: case UI_ACT_HEAD_NUMBER: return "head";
    case UI_ACT_STAGE_NEXT: case UI_ACT_STAGE_PREV: case UI_ACT_PAIR: return "stage-open";
    case UI_ACT_STEP_IN: return v->stepped_in ? "cell-next" : "step-in";
    case UI_ACT_STEP_OUT: return "step-out";
    case UI_ACT_HEATMAP: return "heatmap";
    case UI_ACT_HELP: return "help";
    case UI_ACT_REDRAW: return "redraw";
    case UI_ACT_QUIT: return "quit";
    case UI_ACT_NONE: return "none";
    default: return "question";
    }
}
bool ui_view_marks_selection(const ui_view *v)
{
    return !ui_view_question_open(v);
}

bool ui_view_is_filled(const ui_view *v, int row, int col)
{
    if (ui_view_question_open(v)) return false;   /* predict first: no number is shown yet */
    return !v->stepped_in || row < v->row || (row == v->row && col <= v->col);
}

bool ui_view_heatmap(const ui_view *v)
{
    return stage_get(ui_view_current(v)->stage)->flags & STAGE_ATTENTION ? v->heat_weights
                                                                          : v->heat_signed;
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
    int first_row = ui_view_first_row(v), first_col = ui_view_first_col(v);
    v->page_cols = visible_cols;
    if (!ui_view_marks_selection(v)) {   /* scrolling to the selection would point at it */
        v->top = first_row;
        v->left = first_col;
        return;
    }
    v->top = first_row + scroll_axis(v->top - first_row, v->row - first_row, visible_rows,
                                     ui_view_rows(v));
    v->left = first_col + scroll_axis(v->left - first_col, v->col - first_col, visible_cols,
                                      ui_view_cols(v));
}
