/* The narration of a step as text, shared by the lesson screen and --reader (no curses). */
#include "ui_narration.h"
#include <stdio.h>
#include <string.h>
#include "ui_edit.h"
#include "ui_text.h"

/* A waiting question: the question, then its choices one a line (the highlighted one marked),
 * or the number typed so far. */
static void question_text(const ui_view *v, const number_format *f, const char *mark,
                          const char *cursor, char *text, size_t size)
{
    const lesson_step *q = ui_view_here(v);
    snprintf(text, size, "%s\n", q->ask);
    for (int i = 0; i < q->n_choices; i++)
        ui_text_append(text, size, "%s %d  %s\n", i == v->pick ? mark : " ", i + 1, q->choices[i]);
    if (q->n_choices > 0) return;
    char precision[80];   /* what is asked and what counts, before the answer (issue 24) */
    ui_view_precision(v, v->step, f, precision, sizeof precision);
    ui_text_append(text, size, "Your answer (%s): %s%s\n", precision, v->typed, cursor);
}

void ui_narration_text(const ui_view *v, const number_format *f, const char *mark,
                       const char *cursor, char *text, size_t size)
{
    const walk_step *s = ui_view_current(v);
    const lesson_step *item = ui_view_here(v);
    text[0] = '\0';
    if (!v->off_script && v->step == 0 && v->lesson && v->lesson->about)
        ui_text_append(text, size, "%s\n\n", v->lesson->about);
    if (ui_view_question_open(v)) {
        size_t used = strlen(text);
        question_text(v, f, mark, cursor, text + used, size - used);
        return;
    }
    if (v->off_script && v->before_step)
        ui_text_append(text, size, "Off the script: n goes to step %d, the script's first.\n", v->step + 1);
    else if (v->off_script && v->step + 1 < v->walk.count)
        ui_text_append(text, size, "Off the script: n goes on to step %d, p back to step %d.\n",
            v->step + 2, v->step + 1);
    else if (v->off_script)
        ui_text_append(text, size, "Off the script: n or p goes back to step %d.\n", v->step + 1);
    if (item && v->state[v->step].question != UI_Q_NONE) {
        char verdict[1024];
        ui_view_verdict(v, v->step, f, verdict, sizeof verdict);
        ui_text_append(text, size, "%s\n%s\n", item->ask, verdict);
    }
    if (v->edits && !v->off_script) {   /* what if?: the claims here the edits made false */
        size_t used = strlen(text);
        ui_edit_untrue(v->edits, item, text + used, size - used);
    }
    char formula[256], inputs[128];
    trace_stage_formula(v->t, s->stage, formula, sizeof formula);
    trace_stage_inputs(v->t, s->stage, inputs, sizeof inputs);  /* what this trace reads */
    if (item && item->say) ui_text_append(text, size, "%s", item->say);
    else ui_text_append(text, size, "%s, made from %s.", formula, inputs);
}
