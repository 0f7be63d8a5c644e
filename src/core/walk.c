/* The walk (walk.h): the author's script when the lesson has one, else every stage and head of
 * the trace in pipeline order. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include "walk.h"

static int heads_of(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? t->heads : 1;
}

/* The pipeline: every stage the trace has, each head of a per-head stage in turn. */
static int place_pipeline(const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                          walk_step *out)
{
    (void)marks;
    (void)n_marks;
    (void)train_steps;
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(t, stage))
            continue;
        for (int h = 1; h <= heads_of(t, stage); h++) {
            if (out)
                out[count] = (walk_step){ stage, h, WALK_WHOLE, -1, 0 };
            count++;
        }
    }
    return count;
}

/* The loss's stage: the forward row of the loss family, the one number training lowers. */
static stage_id loss_stage(const trace *t)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        const stage_info *info = stage_get((stage_id)s);
        if (info->family == FAMILY_LOSS && !(info->flags & STAGE_GRADIENT)
            && trace_has_stage(t, (stage_id)s))
            return (stage_id)s;
    }
    return STAGE_COUNT;
}

/* Training without a script: the pipeline at the lesson's weights, then the loss after each
 * update. */
static int place_training(const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                          walk_step *out)
{
    int count = place_pipeline(t, marks, n_marks, 0, out);
    stage_id loss = loss_stage(t);
    for (int k = 1; loss < STAGE_COUNT && k <= train_steps; k++) {
        if (out)
            out[count] = (walk_step){ loss, 1, WALK_WHOLE, -1, k };
        count++;
    }
    return count;
}

/* The script: one step per mark, in the author's order, at the mark's token when it names one;
 * a mark the trace cannot show (the loader never lets one through) is left out. */
static int place_script(const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                        walk_step *out)
{
    int count = 0;
    for (int i = 0; i < n_marks; i++) {
        int head = marks[i].head == 0 ? 1 : marks[i].head;
        int position = marks[i].token > 0 ? marks[i].token - 1 : WALK_WHOLE;
        if (!trace_has_stage(t, marks[i].stage) || head > heads_of(t, marks[i].stage)
            || position >= t->n || (position != WALK_WHOLE && !t->in->decode)
            || marks[i].train_step < 0 || marks[i].train_step > train_steps)
            continue;
        if (out)
            out[count] = (walk_step){ marks[i].stage, head, position, i, marks[i].train_step };
        count++;
    }
    return count;
}

/* Whether a decoding walk shows a stage at each token: its row says so (STAGE_DECODED: the
 * stages that make the token's rows), and the trace has it. */
static bool decoded(const trace *t, stage_id stage)
{
    return (stage_get(stage)->flags & STAGE_DECODED) && trace_has_stage(t, stage);
}

/* Decoding: token by token, the stages that make that token's rows in table order, the
 * per-head ones head by head (all of head 1's, then head 2's). */
static int place_decode(const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                        walk_step *out)
{
    (void)marks;
    (void)n_marks;
    (void)train_steps;
    int count = 0;
    for (int p = 0; p < t->n; p++)
        for (int s = 0; s < STAGE_COUNT; s++) {
            stage_id stage = (stage_id)s;
            if (!decoded(t, stage))
                continue;
            if (!stage_get(stage)->per_head) {
                if (out)
                    out[count] = (walk_step){ stage, 1, p, -1, 0 };
                count++;
                continue;
            }
            int run = s;  /* the per-head stages from here on, made head by head */
            while (run < STAGE_COUNT && stage_get((stage_id)run)->per_head)
                run++;
            for (int h = 1; h <= t->heads; h++)
                for (int r = s; r < run; r++) {
                    if (!decoded(t, (stage_id)r))
                        continue;
                    if (out)
                        out[count] = (walk_step){ (stage_id)r, h, p, -1, 0 };
                    count++;
                }
            s = run - 1;
        }
    return count;
}

typedef int placer(const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                   walk_step *out);

static bool build(walk *w, const trace *t, const walk_mark *marks, int n_marks, int train_steps,
                  placer *place)
{
    *w = (walk){ NULL, 0 };
    /* two passes over one rule: the first counts, the second fills */
    int count = place(t, marks, n_marks, train_steps, NULL);
    w->steps = calloc(count > 0 ? (size_t)count : 1, sizeof *w->steps);
    if (!w->steps)
        return false;
    w->count = place(t, marks, n_marks, train_steps, w->steps);
    assert(w->count == count);
    return true;
}

bool walk_build_trained(walk *w, const trace *t, const walk_mark *marks, int n_marks,
                        int train_steps)
{
    placer *place = n_marks > 0 ? place_script : t->in->decode ? place_decode
                  : train_steps > 0 ? place_training : place_pipeline;
    return build(w, t, marks, n_marks, train_steps, place);
}

bool walk_build(walk *w, const trace *t, const walk_mark *marks, int n_marks)
{
    return walk_build_trained(w, t, marks, n_marks, 0);
}

bool walk_build_pipeline(walk *w, const trace *t)
{
    return build(w, t, NULL, 0, 0, place_pipeline);
}

walk_step walk_step_off(const walk_step *whole, const walk_step *left)
{
    walk_step off = *whole;
    if (left && left->position != WALK_WHOLE && (stage_get(whole->stage)->flags & STAGE_DECODED))
        off.position = left->position;
    return off;
}

bool walk_build_decode(walk *w, const trace *t)
{
    return build(w, t, NULL, 0, 0, place_decode);
}

/* The one rule of what a step at a position shows along one axis of its stage (whole: the
 * axis's length): the cache's keys 0 … p along the keys, their tiles 0 … p / tile, the
 * token's own row p along the queries, everything else. */
static void span(stage_axis axis, bool rows, int position, int tile, int whole, int *first,
                 int *end)
{
    *first = 0;
    *end = whole;
    if (position == WALK_WHOLE)
        return;
    if (axis == AXIS_SOURCE)
        *end = position + 1;
    else if (axis == AXIS_TILES)
        *end = position / tile + 1;
    else if (rows) {
        *first = position;
        *end = position + 1;
    }
}

void walk_step_rows(const trace *t, const walk_step *step, int *first, int *end)
{
    span(stage_get(step->stage)->rows, true, step->position, t->in->tile,
         trace_rows(t, step->stage), first, end);
}

void walk_step_cols(const trace *t, const walk_step *step, int *first, int *end)
{
    span(stage_get(step->stage)->cols, false, step->position, t->in->tile,
         trace_cols(t, step->stage), first, end);
}

bool walk_position_shows(stage_id stage, int position, int tile, int row, int col)
{
    int first_row, end_row, first_col, end_col;
    span(stage_get(stage)->rows, true, position, tile, INT_MAX, &first_row, &end_row);
    span(stage_get(stage)->cols, false, position, tile, INT_MAX, &first_col, &end_col);
    return row >= first_row && row < end_row && col >= first_col && col < end_col;
}

void walk_free(walk *w)
{
    free(w->steps);
    *w = (walk){ NULL, 0 };
}

int walk_find(const walk *w, stage_id stage, int head)
{
    for (int k = 0; k < w->count; k++)
        if (w->steps[k].stage == stage
            && (w->steps[k].head == head || !stage_get(stage)->per_head))
            return k;
    return -1;
}

bool walk_repeats_matrix(const walk *w, int k)
{
    return k > 0 && k < w->count && w->steps[k].stage == w->steps[k - 1].stage
        && w->steps[k].head == w->steps[k - 1].head
        && w->steps[k].position == w->steps[k - 1].position
        && w->steps[k].train_step == w->steps[k - 1].train_step;
}
