/* The walk (walk.h): the steps of a trace in order, narration placed at its stage and head. */
#include <assert.h>
#include <stdlib.h>
#include "walk.h"

static int heads_of(const trace *t, stage_id stage)
{
    return stage_get(stage)->per_head ? t->heads : 1;
}

/* Whether mark belongs at (stage, head): a mark naming no head goes with the first. */
static bool marked_at(const walk_mark *mark, stage_id stage, int head)
{
    return mark->stage == stage && (mark->head == 0 ? 1 : mark->head) == head;
}

static int place(const trace *t, const walk_mark *marks, int n_marks, walk_step *out)
{
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        stage_id stage = (stage_id)s;
        if (!trace_has_stage(t, stage))
            continue;
        for (int h = 1; h <= heads_of(t, stage); h++) {
            int placed = 0;
            for (int i = 0; i < n_marks; i++)
                if (marked_at(&marks[i], stage, h)) {
                    if (out)
                        out[count] = (walk_step){ stage, h, WALK_WHOLE, i };
                    count++;
                    placed++;
                }
            if (placed == 0) {
                if (out)
                    out[count] = (walk_step){ stage, h, WALK_WHOLE, -1 };
                count++;
            }
        }
    }
    return count;
}

bool walk_build(walk *w, const trace *t, const walk_mark *marks, int n_marks)
{
    *w = (walk){ NULL, 0 };
    /* two passes over one rule: the first counts, the second fills */
    int count = place(t, marks, n_marks, NULL);
    w->steps = calloc((size_t)count, sizeof *w->steps);
    if (!w->steps)
        return false;
    w->count = place(t, marks, n_marks, w->steps);
    assert(w->count == count);
    return true;
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
        && w->steps[k].position == w->steps[k - 1].position;
}
