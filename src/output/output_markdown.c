/* --markdown: a handout for slides and worksheets — the narration, every step as a Markdown
 * table, and the worked arithmetic of the cells the narration focuses on; with --worksheet, the
 * questions without their answers or the tables that give them away, then an answer key. All
 * lesson text goes through text_escape_markdown, so every token renders as it is written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_answer.h"
#include "output.h"
#include "output_svg.h"
#include "text.h"

/* Untrusted text in Markdown (line breaks kept when keep_lines), table cells included. */
static void put_markdown(output *o, const char *utf8, bool keep_lines)
{
    if (o->status != EXIT_STATUS_OK)
        return;
    int length = text_escape_markdown(utf8, keep_lines, NULL, 0);
    char *escaped = malloc((size_t)length + 1);
    if (!escaped) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    text_escape_markdown(utf8, keep_lines, escaped, (size_t)length + 1);
    output_puts(o, escaped);
    free(escaped);
}

/* How a format writes lesson text: as it is, or with the answers held back (the worksheet). */
typedef void text_writer(output *o, const char *utf8, bool keep_lines);

/* The title, the lesson's about, the tokens and the shape. */
static void put_opening(output *o, text_writer *put_text)
{
    const trace *t = o->trace;
    output_puts(o, "# ");
    put_text(o, o->lesson->title, false);
    output_puts(o, "\n\n");
    if (o->lesson->about) {
        put_text(o, o->lesson->about, true);
        output_puts(o, "\n\n");
    }
    output_puts(o, "Tokens:");
    for (int i = 0; i < t->n; i++) {
        output_puts(o, i ? " · " : " ");
        put_markdown(o, t->in->tokens[i], false);
    }
    output_printf(o, "  \nd_model %d, %d head%s, d_k %d.\n", t->d_model, t->heads,
                  t->heads == 1 ? "" : "s", t->d_k);
}

static void markdown_begin(output *o)
{
    put_opening(o, put_markdown);
}

/* How a table writes a cell: its number, or a blank where it would tell an answer. */
typedef void cell_writer(output *o, double x);

static void put_cell(output *o, double x)
{
    output_number(o, x, NUMBER_FIXED);
}

static void put_row(output *o, const char *label, const walk_step *step, int row, int first_col,
                    int end_col, cell_writer *cell)
{
    output_puts(o, "| ");
    put_markdown(o, label, false);
    for (int c = first_col; c < end_col; c++) {
        output_puts(o, " | ");
        cell(o, trace_value(o->trace, step->stage, step->head, row, c));
    }
    output_puts(o, " |\n");
}

/* The part of the step's matrix it shows (walk_step_rows, walk_step_cols): all of it, or at a
 * decoding step the rows and columns decoding computes for that token. */
static void put_table_with(output *o, const walk_step *step, cell_writer *cell)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(step->stage);
    int first_row, end_row, first_col, end_col;
    walk_step_rows(t, step, &first_row, &end_row);
    walk_step_cols(t, step, &first_col, &end_col);
    char buffer[32];
    output_puts(o, "|");
    for (int c = first_col; c < end_col; c++) {
        output_puts(o, " | ");
        put_markdown(o, trace_axis_label(t, info->cols, c, buffer, sizeof buffer), false);
    }
    output_puts(o, " |\n|---|");
    for (int c = first_col; c < end_col; c++)
        output_puts(o, "---:|");
    output_putc(o, '\n');
    for (int r = first_row; r < end_row; r++)
        put_row(o, trace_axis_label(t, info->rows, r, buffer, sizeof buffer), step, r,
                first_col, end_col, cell);
}

static void put_table(output *o, const walk_step *step)
{
    put_table_with(o, step, put_cell);
}

static void ask_markdown(output *o, const char *question, const char *answer)
{
    output_puts(o, "\n**Question:** ");
    put_markdown(o, question, false);
    output_puts(o, "  \n**Answer:** ");
    put_markdown(o, answer, false);
    output_putc(o, '\n');
}

static void say_markdown(output *o, const char *text)
{
    output_putc(o, '\n');
    put_markdown(o, text, true);
    output_putc(o, '\n');
}

/* The arithmetic goes in an indented code block, where Markdown reads nothing as syntax: it
 * is only control-escaped (and never holds a line break). */
static void focus_markdown(output *o, const char *explanation)
{
    output_puts(o, "\n    ");
    output_text(o, explanation);
    output_putc(o, '\n');
}

static void repeated_markdown(output *o, int previous)
{
    output_printf(o, "*The matrix of step %d again.*\n", previous);
}

static void put_token_word(output *o, const char *utf8)
{
    put_markdown(o, utf8, false);
}

/* A heading's end: the head, the token being decoded and the shape shown. */
static void heading_end(output *o, int head, int position, int rows, int cols)
{
    if (head)
        output_printf(o, " (head %d)", head);
    if (position != WALK_WHOLE) {
        output_puts(o, " · ");
        output_token(o, position, put_token_word);
    }
    output_printf(o, " — %d×%d\n\n", rows, cols);
}

static void header_markdown(output *o, int number, const char *formula, int head, int position,
                            int rows, int cols)
{
    output_printf(o, "\n## %d. %s", number, formula);  /* attnstep's own text, read as is */
    heading_end(o, head, position, rows, cols);
}

/* A link's destination, in <>: the folder as given, with what would end or break it (<, >,
 * a line break, any byte below 0x20 or 0x7f, %) percent-encoded. */
static void put_destination(output *o, const char *path)
{
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (*c < 0x20 || *c == 0x7f || *c == '<' || *c == '>' || *c == '%')
            output_printf(o, "%%%02X", *c);
        else
            output_putc(o, (char)*c);
    }
}

/* The heading, then the step's figure when the handout links them (--svg-dir). */
static void header_figured(output *o, int number, const char *formula, int head, int position,
                           int rows, int cols)
{
    header_markdown(o, number, formula, head, position, rows, cols);
    if (!o->figures || !o->walk)
        return;
    char name[96];
    output_svg_name(o->trace, o->walk, o->step, name, sizeof name);
    output_printf(o, "![step %d: %s](<", number, stage_get(o->walk->steps[o->step].stage)->name);
    put_destination(o, o->figures);
    output_printf(o, "/%s>)\n\n", name);
}

static void markdown_step(output *o, const walk_step *step)
{
    static const output_narrator narrator = {
        header_figured, put_table, repeated_markdown, ask_markdown, say_markdown,
        focus_markdown,
    };
    output_narrated_step(o, step, &narrator);
}

static void markdown_end(output *o)
{
    (void)o;
}

const output_format output_markdown = { markdown_begin, markdown_step, markdown_end, true };

/* ---- the worksheet ---- */

/* Stages that show the same numbers, or their order, by family: the scores, their scaling,
 * the mask and the softmax are exact functions of one another or keep their order in each row
 * (a question on any of them is answered by the others); the context family is the contexts,
 * alone or side by side. Every other stage is a group of its own. */
static int family(stage_id stage)
{
    switch (stage_get(stage)->family) {
    case FAMILY_SCORES: case FAMILY_MASK: case FAMILY_SOFTMAX: case FAMILY_DROPOUT:
        return -1 - FAMILY_SCORES;
    case FAMILY_CONTEXT: return -1 - FAMILY_CONTEXT;
    default: return (int)stage;
    }
}

/* Whether a table of stage at head gives away the answer of a question asked on asked at
 * asked_head: the same family, and the same head unless one of them is for every head. */
static bool gives_away(stage_id stage, int head, stage_id asked, int asked_head)
{
    bool same_head = !stage_get(stage)->per_head || !stage_get(asked)->per_head
                     || head == asked_head;
    return same_head && family(stage) == family(asked);
}

/* The narration item of walk step k, if it asks a question. */
static const lesson_step *question_at(const output *o, int k)
{
    const lesson_step *s = lesson_narration(o->lesson, &o->walk->steps[k]);
    return s && s->ask ? s : NULL;
}

/* Whether any question of the lesson is answered by a table of stage at head. */
static bool answers_a_question(const output *o, stage_id stage, int head)
{
    for (int k = 0; k < o->walk->count; k++)
        if (question_at(o, k)
            && gives_away(stage, head, o->walk->steps[k].stage, o->walk->steps[k].head))
            return true;
    return false;
}

/* Whether the worked arithmetic of a cell of stage shows such a table's numbers: the stage's
 * own, or those of a stage it reads (the node table's inputs, e.g. weights and V). */
static bool arithmetic_answers_a_question(const output *o, stage_id stage, int head)
{
    if (answers_a_question(o, stage, head))
        return true;
    stage_id read;
    for (int i = 0; (read = trace_stage_node_input(o->trace, stage, i)) != STAGE_COUNT; i++)
        if (answers_a_question(o, read, head))
            return true;
    return false;
}

/* ---- answers held back: no number or token that tells an answer before the key ---- */

/* What tells the answer of question step s, as the worksheet looks for it: a number at any
 * rounding (1 to 4 decimals, or a percentage) near its value, or the right choice in a sentence
 * naming the focus row, and then its focus cell's value too ("cat fits itself (1.25)"). A whole
 * number tells nothing there: 1.0 is in every table. Returns how many of answers[2] it filled. */
static int held_answers(const output *o, const lesson_step *s, const char *sentence, char *row,
                        size_t size, lesson_answer answers[2])
{
    lesson_answer a;
    lesson_answer_of(o->trace, s, sentence, row, size, &a);
    int count = 0;
    if (!a.numeric) {
        answers[count++] = a;
        if (s->focus_row < 0 || s->focus_col < 0)
            return count;
        int head = stage_get(s->stage)->per_head && s->head > 0 ? s->head : 1;
        a = (lesson_answer){ .numeric = true, .decimals = -1,
                             .value = trace_value(o->trace, s->stage, head, s->focus_row,
                                                  s->focus_col) };
    }
    a.every_rounding = true;
    if (a.value != round(a.value))
        answers[count++] = a;
    return count;
}

/* text with every match of a replaced by "____" (malloc'd; NULL when memory ran out). */
static char *blank_one(char *text, const lesson_answer *a)
{
    static const char blank[] = "____";
    size_t at, length, from = 0;
    while (text && lesson_answer_find(a, text, from, &at, &length)) {
        size_t size = strlen(text) - length + sizeof blank;
        char *out = malloc(size);
        if (out)
            snprintf(out, size, "%.*s%s%s", (int)at, text, blank, text + at + length);
        free(text);
        text = out;
        from = at + sizeof blank - 1;
    }
    return text;
}

/* text with the answers of all the lesson's questions blanked (malloc'd; NULL: no memory). */
static char *held_back(const output *o, const char *text)
{
    char *out = strdup(text), *sentence = lesson_sentence(o->lesson);
    for (int i = 0; i < o->lesson->n_steps && out; i++) {
        const lesson_step *s = &o->lesson->steps[i];
        if (!s->ask)
            continue;
        char row[32];
        lesson_answer answers[2];
        int count = held_answers(o, s, sentence, row, sizeof row, answers);
        for (int j = 0; j < count && out; j++)
            out = blank_one(out, &answers[j]);
    }
    free(sentence);
    return out;
}

static void put_held_back(output *o, const char *utf8, bool keep_lines)
{
    if (!utf8)
        return;
    char *shown = held_back(o, utf8);
    if (!shown) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    put_markdown(o, shown, keep_lines);
    free(shown);
}

/* Whether a table cell's number, as written, tells an answer: without copies, as a large
 * table has many cells (and no sentence, which a number never is). */
static bool cell_tells(const output *o, const char *number)
{
    for (int i = 0; i < o->lesson->n_steps; i++) {
        const lesson_step *s = &o->lesson->steps[i];
        if (!s->ask)
            continue;
        char row[32];
        lesson_answer answers[2];
        int count = held_answers(o, s, NULL, row, sizeof row, answers);
        size_t at, length;
        for (int j = 0; j < count; j++)
            if (lesson_answer_find(&answers[j], number, 0, &at, &length))
                return true;
    }
    return false;
}

static void put_held_cell(output *o, double x)
{
    char number[NUMBER_MAX];
    output_cell_text(o, x, number, sizeof number);
    output_puts(o, cell_tells(o, number) ? "____" : number);
}

static const walk_step *current(const output *o)
{
    return &o->walk->steps[o->step];
}

static void withheld(output *o)
{
    output_puts(o, "*Table withheld: it would answer a question. It is in the answer key.*\n");
}

static void worksheet_table(output *o, const walk_step *step)
{
    if (answers_a_question(o, step->stage, step->head))
        withheld(o);
    else
        put_table_with(o, step, put_held_cell);
}

static void worksheet_repeated(output *o, int previous)
{
    if (answers_a_question(o, current(o)->stage, current(o)->head))
        withheld(o);
    else
        repeated_markdown(o, previous);
}

/* The number of the question at the current step, counting from 1. */
static int question_number(const output *o)
{
    int number = 0;
    for (int k = 0; k <= o->step; k++)
        number += question_at(o, k) != NULL;
    return number;
}

static void worksheet_ask(output *o, const char *question, const char *answer)
{
    (void)answer;
    output_printf(o, "\n**Question %d:** ", question_number(o));
    put_held_back(o, question, false);
    output_puts(o, "  \n**Your answer:** ……………………\n");
}

/* What the narration says at a question's step follows its answer, so it waits for the key. */
static void worksheet_say(output *o, const char *text)
{
    if (question_at(o, o->step))
        return;
    output_putc(o, '\n');
    put_held_back(o, text, true);
    output_putc(o, '\n');
}

static void worksheet_focus(output *o, const char *explanation)
{
    if (question_at(o, o->step)
        || arithmetic_answers_a_question(o, current(o)->stage, current(o)->head))
        return;
    char *shown = held_back(o, explanation);
    if (!shown) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    focus_markdown(o, shown);
    free(shown);
}

/* The about is printed with its answers held back, as everything before the key is. */
static void worksheet_begin(output *o)
{
    put_opening(o, put_held_back);
    output_puts(o, "\n*A worksheet: answer each question where it is asked. The answers, and "
                "the tables that would give them away, are in the answer key at the end.*\n");
}

static void worksheet_step(output *o, const walk_step *step)
{
    static const output_narrator narrator = {
        header_markdown, worksheet_table, worksheet_repeated, worksheet_ask, worksheet_say,
        worksheet_focus,
    };
    output_narrated_step(o, step, &narrator);
}

/* In the key, each question's step again, whole: its table, question and answer, narration and
 * arithmetic, under a heading that names the question. */
static void key_header(output *o, int number, const char *formula, int head, int position,
                       int rows, int cols)
{
    output_printf(o, "\n### Question %d, at step %d. %s", question_number(o), number, formula);
    heading_end(o, head, position, rows, cols);
}

static void key_table_again(output *o, int previous)
{
    (void)previous;
    put_table(o, current(o));
}

static void worksheet_end(output *o)
{
    static const output_narrator narrator = {
        key_header, put_table, key_table_again, ask_markdown, say_markdown, focus_markdown,
    };
    int step = o->step, questions = 0;
    for (int k = 0; k < o->walk->count; k++)
        questions += question_at(o, k) != NULL;
    output_puts(o, "\n## Answer key\n\n");
    if (questions == 0)
        output_puts(o, "This lesson asks no questions: every table is shown above.\n");
    else
        output_printf(o, "%d question%s.\n", questions, questions == 1 ? "" : "s");
    const trace *t = o->trace;
    train_cache at = { 0 };   /* a question at a training step: its table at that step */
    for (o->step = 0; o->step < o->walk->count && o->status == EXIT_STATUS_OK; o->step++)
        if (question_at(o, o->step)
            && (o->trace = output_trained_trace(o, t, &at, current(o)->train_step)) != NULL)
            output_narrated_step(o, current(o), &narrator);
    o->trace = t;
    train_cache_free(&at);
    o->step = step;
}

const output_format output_worksheet = { worksheet_begin, worksheet_step, worksheet_end, true };
