/* The view model of one lesson: the walk of steps, the selected cell, stepping in and out.
 * No curses here, so the tests can drive it directly; it only reads what the core computed. */
#include <stdio.h>
#include <stdlib.h>
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
    ui_step step = {stage, head, -1, -1, NULL};
    if (!s) return step;
    step.say = s->say;
    if (s->focus_row >= 0 && s->focus_row < trace_rows(t, stage) && s->focus_col >= 0 &&
        s->focus_col < trace_cols(t, stage)) {
        step.focus_row = s->focus_row;
        step.focus_col = s->focus_col;
    }
    return step;
}

bool ui_view_init(ui_view *v, const trace *t, const lesson_step *narration, int n_narration)
{
    *v = (ui_view){.t = t, .heat_weights = true, .stats_step = -1};
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

static void step_by(ui_view *v, int delta)
{
    if (v->stepped_in) { step_cell(v, delta); return; }
    int target = v->step + delta;
    if (target < 0 || target >= v->n_steps) {
        snprintf(v->message, sizeof v->message, "%s", target < 0 ? "this is the first step" :
                 "this is the last step");
        return;
    }
    ui_view_goto(v, target);
}

bool ui_view_apply(ui_view *v, ui_action action, int arg)
{
    v->message[0] = '\0';
    switch (action) {
    case UI_ACT_QUIT: return false;
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
