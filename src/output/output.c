/* The walk shared by every text output (begin, one call per step of the walk, end), the writers
 * that remember the first failure, and the pieces several outputs use: cells, narration,
 * escaped text. */
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"
#include "text.h"

void output_fail(output *o, exit_status status)
{
    if (o->status == EXIT_STATUS_OK)
        o->status = status;
}

/* After a write: a stream in error means the output is incomplete. */
static void check_stream(output *o, bool failed)
{
    if (failed || ferror(o->stream))
        output_fail(o, EXIT_STATUS_IO);
}

void output_puts(output *o, const char *text)
{
    if (o->status == EXIT_STATUS_OK)
        check_stream(o, fputs(text, o->stream) == EOF);
}

void output_putc(output *o, char c)
{
    if (o->status == EXIT_STATUS_OK)
        check_stream(o, fputc(c, o->stream) == EOF);
}

void output_printf(output *o, const char *format, ...)
{
    if (o->status != EXIT_STATUS_OK)
        return;
    va_list args;
    va_start(args, format);
    int wrote = vfprintf(o->stream, format, args);
    va_end(args);
    check_stream(o, wrote < 0);
}

static int write_number(double x, number_style style, int precision, char *buffer, size_t size)
{
    return number_write(x, &(number_format){ style, precision, 0, false }, buffer, size);
}

void output_number(output *o, double x, number_style style)
{
    char number[NUMBER_MAX];
    write_number(x, style, o->precision, number, sizeof number);
    output_puts(o, number);
}

int output_cell_text(const output *o, double x, char *buffer, size_t size)
{
    return write_number(x, NUMBER_FIXED, o->precision, buffer, size);
}

/* Flushes the stream and says how the whole output went. */
static exit_status finish(output *o)
{
    if (o->status == EXIT_STATUS_OK)
        check_stream(o, fflush(o->stream) != 0);
    return o->status;
}

const trace *output_trained_trace(output *o, const trace *t, train_cache *cache, int k)
{
    const trace *at = train_cache_at(cache, t, &o->lesson->train, k, NULL, NULL);
    if (!at)
        output_fail(o, EXIT_STATUS_SOFTWARE);
    return at;
}

exit_status output_write(const output_format *format, const lesson *l, const trace *t,
                         int precision, FILE *stream)
{
    return output_write_figured(format, l, t, precision, NULL, stream);
}

exit_status output_write_figured(const output_format *format, const lesson *l, const trace *t,
                                 int precision, const char *figures, FILE *stream)
{
    walk w;
    bool built = format->narrated ? lesson_walk(l, t, &w) : walk_build_pipeline(&w, t);
    if (!built)
        return EXIT_STATUS_SOFTWARE;
    output o = { l, t, precision, stream, &w, 0, EXIT_STATUS_OK, figures };
    train_cache at = { 0 };
    format->begin(&o);
    for (; o.step < w.count && o.status == EXIT_STATUS_OK; o.step++) {
        o.trace = output_trained_trace(&o, t, &at, w.steps[o.step].train_step);
        if (o.trace)
            format->step(&o, &w.steps[o.step]);
    }
    o.trace = t;
    format->end(&o);
    train_cache_free(&at);
    walk_free(&w);
    return finish(&o);
}

exit_status output_write_matrix(const output_format *format, const lesson *l, const trace *t,
                                stage_id stage, int head, FILE *stream)
{
    return output_write_matrix_at(format, l, t, stage, head, -1, stream);
}

exit_status output_write_matrix_at(const output_format *format, const lesson *l,
                                   const trace *t, stage_id stage, int head, int precision,
                                   FILE *stream)
{
    output o = { l, t, precision, stream, NULL, 0, EXIT_STATUS_OK, NULL };
    walk_step step = { stage, stage_get(stage)->per_head ? head : 1, WALK_WHOLE, -1, 0 };
    format->begin(&o);
    format->step(&o, &step);
    format->end(&o);
    return finish(&o);
}

char *output_escaped(output *o, const char *utf8, bool keep_lines)
{
    int (*escape)(const char *, char *, size_t) = keep_lines ? text_escape_lines : text_escape;
    int length = escape(utf8, NULL, 0);
    char *escaped = malloc((size_t)length + 1);
    if (escaped)
        escape(utf8, escaped, (size_t)length + 1);
    else
        output_fail(o, EXIT_STATUS_SOFTWARE);
    return escaped;
}

static void put_escaped(output *o, const char *utf8, bool keep_lines)
{
    if (o->status != EXIT_STATUS_OK)
        return;
    char *escaped = output_escaped(o, utf8, keep_lines);
    if (escaped)
        output_puts(o, escaped);
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

static void focus_explanation(output *o, const lesson_step *s, int head,
                              void (*focus)(output *o, const char *explanation))
{
    trace_cell cell = { s->stage, head, s->focus_row, s->focus_col };
    int length = trace_cell_explain(o->trace, &cell, o->precision, NULL, 0);
    char *explanation = malloc((size_t)length + 1);
    if (!explanation) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    trace_cell_explain(o->trace, &cell, o->precision, explanation, (size_t)length + 1);
    focus(o, explanation);
    free(explanation);
}

/* The answer of a numeric question, "0.63 (± 0.005)". */
static void numeric_answer(const output *o, const lesson_step *s, char *answer, size_t size)
{
    char number[NUMBER_MAX], tolerance[NUMBER_MAX];
    write_number(s->answer, NUMBER_SHORT, o->precision, number, sizeof number);
    write_number(s->tolerance, NUMBER_SHORT, o->precision, tolerance, sizeof tolerance);
    snprintf(answer, size, "%s (± %s)", number, tolerance);
}

/* The question with its choices, "Which word…? (animal / street / tired)", and the answer. */
static void ask_question(output *o, const lesson_step *s,
                         void (*ask)(output *o, const char *question, const char *answer))
{
    size_t length = strlen(s->ask) + 8;
    for (int i = 0; i < s->n_choices; i++)
        length += strlen(s->choices[i]) + 3;
    char *question = malloc(length), answer[2 * NUMBER_MAX + 8];
    if (!question) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    size_t used = (size_t)snprintf(question, length, "%s", s->ask);
    for (int i = 0; i < s->n_choices; i++)
        used += (size_t)snprintf(question + used, length - used, "%s%s", i ? " / " : " (",
                                 s->choices[i]);
    if (s->n_choices)
        snprintf(question + used, length - used, ")");
    if (s->n_choices)
        ask(o, question, s->choices[s->answer_choice]);
    else {
        numeric_answer(o, s, answer, sizeof answer);
        ask(o, question, answer);
    }
    free(question);
}

void output_token(output *o, int position, void (*word)(output *o, const char *utf8))
{
    assert(position >= 0 && position < o->trace->n);
    output_printf(o, "token %d of %d (", position + 1, o->trace->n);
    word(o, o->trace->in->tokens[position]);
    output_putc(o, ')');
}

/* The header of the current step: its number, formula, head and shape. */
static void step_header(output *o, const walk_step *step, const output_narrator *narrator)
{
    char small[160], *formula = small;
    int length = trace_stage_formula(o->trace, step->stage, small, sizeof small);
    if ((size_t)length >= sizeof small) {  /* formulas are short, but nothing here cuts one */
        formula = malloc((size_t)length + 1);
        if (!formula) {
            output_fail(o, EXIT_STATUS_SOFTWARE);
            return;
        }
        trace_stage_formula(o->trace, step->stage, formula, (size_t)length + 1);
    }
    bool named = stage_get(step->stage)->per_head && o->trace->heads > 1;
    int first_row, end_row, first_col, end_col;
    walk_step_rows(o->trace, step, &first_row, &end_row);
    walk_step_cols(o->trace, step, &first_col, &end_col);
    narrator->header(o, o->step + 1, formula, named ? step->head : 0, step->position,
                     end_row - first_row, end_col - first_col);
    if (formula != small)
        free(formula);
    if (step->train_step > 0) {   /* the training axis: which weights the numbers are from */
        output_printf(o, "after %d training step%s (W ← W − η · d_W, η = ", step->train_step,
                      step->train_step == 1 ? "" : "s");
        output_number(o, o->lesson->train.learning_rate, NUMBER_SHORT);
        output_puts(o, ")\n\n");
    }
}

void output_narrated_step(output *o, const walk_step *step, const output_narrator *narrator)
{
    step_header(o, step, narrator);
    if (walk_repeats_matrix(o->walk, o->step))
        narrator->repeated(o, o->step);
    else
        narrator->table(o, step);
    const lesson_step *s = lesson_narration(o->lesson, step);
    if (!s)
        return;
    if (s->ask && narrator->ask)
        ask_question(o, s, narrator->ask);
    if (s->say && narrator->say)
        narrator->say(o, s->say);
    if (s->focus_row >= 0 && s->focus_col >= 0 && narrator->focus)
        focus_explanation(o, s, step->head, narrator->focus);
}
