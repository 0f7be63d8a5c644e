/* The walk shared by every text output (begin, one call per step of the trace, end) and the
 * pieces several outputs use: cells, narration, escaped text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"
#include "text.h"

static int finish(output *o)
{
    return fflush(o->stream) != 0 || ferror(o->stream) ? -1 : 0;
}

int output_write(const output_format *format, const lesson *l, const trace *t, int precision,
                 FILE *stream)
{
    output o = { l, t, precision, stream, 0, STAGE_COUNT, 0 };
    format->begin(&o);
    for (int count = trace_step_count(t); o.step < count; o.step++) {
        stage_id stage;
        int head;
        trace_step_at(t, o.step, &stage, &head);
        format->step(&o, stage, head);
    }
    format->end(&o);
    return finish(&o);
}

int output_write_matrix(const output_format *format, const lesson *l, const trace *t,
                        stage_id stage, int head, FILE *stream)
{
    output o = { l, t, 17, stream, 0, stage, head };
    format->begin(&o);
    format->step(&o, stage, stage_get(stage)->per_head ? head : 1);
    format->end(&o);
    return finish(&o);
}

int output_cell_text(const output *o, double x, char *buffer, size_t size)
{
    if (isinf(x))
        return snprintf(buffer, size, "%s", x < 0 ? "−∞" : "∞");
    return snprintf(buffer, size, "%.*f", o->precision, x);
}

static void focus_explanation(output *o, const lesson_step *s, int head,
                              void (*focus)(output *o, const char *explanation))
{
    trace_cell cell = { s->stage, head, s->focus_row, s->focus_col };
    int length = trace_cell_explain(o->trace, &cell, o->precision, NULL, 0);
    char *explanation = malloc((size_t)length + 1);
    if (!explanation)
        return;
    trace_cell_explain(o->trace, &cell, o->precision, explanation, (size_t)length + 1);
    focus(o, explanation);
    free(explanation);
}

/* The question with its choices, "Which word…? (animal / street / tired)", and the answer. */
static void ask_question(output *o, const lesson_step *s,
                         void (*ask)(output *o, const char *question, const char *answer))
{
    size_t length = strlen(s->ask) + 8;
    for (int i = 0; i < s->n_choices; i++)
        length += strlen(s->choices[i]) + 3;
    char *question = malloc(length), answer[96];
    if (!question)
        return;
    size_t used = (size_t)snprintf(question, length, "%s", s->ask);
    for (int i = 0; i < s->n_choices; i++)
        used += (size_t)snprintf(question + used, length - used, "%s%s", i ? " / " : " (",
                                 s->choices[i]);
    if (s->n_choices)
        snprintf(question + used, length - used, ")");
    if (s->n_choices) {
        ask(o, question, s->choices[s->answer_choice]);
    } else {
        char number[32], tolerance[32];
        format_number(s->answer, o->precision, number, sizeof number);
        format_number(s->tolerance, o->precision, tolerance, sizeof tolerance);
        snprintf(answer, sizeof answer, "%s (± %s)", number, tolerance);
        ask(o, question, answer);
    }
    free(question);
}

void output_narration(output *o, stage_id stage, int head, const output_narrator *narrator)
{
    for (int i = 0; i < o->lesson->n_steps; i++) {
        const lesson_step *s = &o->lesson->steps[i];
        if (s->stage != stage || (s->head != head && !(s->head == 0 && head == 1)))
            continue;
        if (s->ask && narrator->ask)
            ask_question(o, s, narrator->ask);
        if (s->say && narrator->say)
            narrator->say(o, s->say);
        if (s->focus_row >= 0 && s->focus_col >= 0 && narrator->focus)
            focus_explanation(o, s, head, narrator->focus);
    }
}

char *output_escaped(const char *utf8, bool keep_lines)
{
    int (*escape)(const char *, char *, size_t) = keep_lines ? text_escape_lines : text_escape;
    int length = escape(utf8, NULL, 0);
    char *escaped = malloc((size_t)length + 1);
    if (escaped)
        escape(utf8, escaped, (size_t)length + 1);
    return escaped;
}

static void put_escaped(output *o, const char *utf8, bool keep_lines)
{
    char *escaped = output_escaped(utf8, keep_lines);
    if (escaped)
        fputs(escaped, o->stream);
    free(escaped);
}

void output_text(output *o, const char *utf8)
{
    put_escaped(o, utf8, false);
}

void output_text_lines(output *o, const char *utf8)
{
    put_escaped(o, utf8, true);
}
