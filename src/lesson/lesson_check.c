/* Checking a loaded lesson against its numbers (lesson_check in lesson.h): answers, `expect:`
 * claims and live numbers in text, and questions whose answer the script already showed. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "claim.h"
#include "lesson.h"
#include "lesson_answer.h"
#include "lesson_diag.h"
#include "lesson_text.h"
#include "number.h"
#include "text.h"

/* The head a step's cells default to: its own, else the first. */
static int step_head(const lesson_step *step) {
    return step->head > 0 ? step->head : 1;
}

static bool has_focus(const lesson_step *step) {
    return step->focus_row >= 0 && step->focus_col >= 0;
}

static trace_cell focus_cell(const lesson_step *step) {
    return (trace_cell){ step->stage, stage_get(step->stage)->per_head ? step_head(step) : 1,
                         step->focus_row, step->focus_col };
}

/* Untrusted text (a claim, a message naming tokens) made harmless for a message, not cut. */
#define SHOWN_MAX 1024
static const char *escaped(const char *text, char *buffer) {
    text_escape(text, buffer, SHOWN_MAX);
    return buffer;
}

static void write_number(double x, char *buffer, size_t size) {
    number_format f = { NUMBER_SHORT, 4, 0, false };
    number_write(x, &f, buffer, size);
}

/* ---- answers ---- */

/* A number given as the answer (answer written as text) must be within tolerance of the focus
 * cell: an error at the answer otherwise. */
static void check_value(const lesson_step *step, const trace *t, double given, const char *text,
                        double within, lesson_diagnostics *d) {
    trace_cell cell = focus_cell(step);
    double value = trace_value(t, cell.stage, cell.head, cell.row, cell.col);
    if (fabs(given - value) <= within * (1.0 + 1e-9) + 1e-15) return;
    char name[CLAIM_MESSAGE_MAX], name_shown[SHOWN_MAX], number[NUMBER_MAX];
    char tolerance[NUMBER_MAX], shown[LESSON_ESCAPED_MAX];
    claim_cell_name(t, &cell, name, sizeof name);
    write_number(value, number, sizeof number);
    write_number(within, tolerance, sizeof tolerance);
    const char *answer = text ? text : "?";
    lesson_report(d, step->answer_at.line, step->answer_at.col, LESSON_ERROR_WRONG_ANSWER,
                  lesson_escape(answer, strlen(answer), shown), escaped(name, name_shown), number,
                  tolerance);
}

static void check_number(const lesson_step *step, const trace *t, lesson_diagnostics *d) {
    check_value(step, t, step->answer, step->answer_text, step->tolerance, d);
}

/* A numeric choice ([0.14, 0.58, 0.90]) is the focus cell's value to its own precision: within
 * half a unit of its last decimal, or the step's tolerance when that is larger. */
static void check_numeric_choice(const lesson_step *step, const trace *t, const char *answer,
                                 lesson_diagnostics *d) {
    double given;
    if (lesson_parse_number(answer, &given) != LESSON_NUMBER_OK) return;
    int decimals = lesson_answer_decimals(answer);
    double half_unit = 0.5 * pow(10.0, -(decimals > 0 ? decimals : 0));
    check_value(step, t, given, answer, fmax(half_unit, step->tolerance), d);
}

/* Whether text names column col of the stage: by its label, or as a cell names it (dog@6). */
static bool names_column(const trace *t, stage_id stage, int col, const char *text) {
    char label[32], name[320];
    stage_axis axis = stage_get(stage)->cols;
    return strcmp(trace_axis_label(t, axis, col, label, sizeof label), text) == 0
        || strcmp(trace_axis_name(t, axis, col, name, sizeof name), text) == 0;
}

/* Which extreme of its row a question asks for: the largest ("look at most", "the largest
 * share", "highest"), the smallest ("look at least", "the lowest score"), or neither. */
typedef enum { ASKS_NEITHER, ASKS_LARGEST, ASKS_SMALLEST } asked_extreme;

/* The column of the focus row that holds its largest or smallest value (the first of equals);
 * the smallest among the cells the mask leaves visible, as a hidden weight (0) or masked score
 * (−∞) is no answer to "which word does cat look at least?". */
static int extreme_column(const trace *t, const trace_cell *cell, asked_extreme which) {
    bool hides = stage_get(cell->stage)->flags & (STAGE_HIDES | STAGE_ATTENTION);
    int best = hides && trace_is_hidden(t, cell->row, cell->col) ? -1 : cell->col;
    for (int col = 0; col < trace_cols(t, cell->stage); col++) {
        if (hides && trace_is_hidden(t, cell->row, col)) continue;
        double x = trace_value(t, cell->stage, cell->head, cell->row, col);
        if (best < 0 || (which == ASKS_SMALLEST
                         ? x < trace_value(t, cell->stage, cell->head, cell->row, best)
                         : x > trace_value(t, cell->stage, cell->head, cell->row, best)))
            best = col;
    }
    return best < 0 ? cell->col : best;   /* a row the mask hides whole has no extreme */
}

/* Whether the word at ask[at] is "least" in "at least half" or "at least 0.5" (a bound, not the
 * question), rather than "look at least?". */
static bool bound_phrase(const char *ask, const char *at) {
    if (at - ask < 3 || strncasecmp(at - 3, "at ", 3) != 0) return false;
    const char *next = at + strlen("least");
    while (*next == ' ') next++;
    return isalnum((unsigned char)*next) && next > at + strlen("least");
}

/* Whether ask names one of the words as a whole word (outside "at least N"). */
static bool asks_with(const char *ask, const char *const *words, size_t count) {
    for (const char *p = ask; p && *p; p++) {
        if (p != ask && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        for (size_t i = 0; i < count; i++) {
            size_t length = strlen(words[i]);
            if (strncasecmp(p, words[i], length) == 0 && !isalnum((unsigned char)p[length])
                && !(strcmp(words[i], "least") == 0 && bound_phrase(ask, p)))
                return true;
        }
    }
    return false;
}

/* What a question asks for, from its words; one that names both extremes asks for neither. */
static asked_extreme asks_for(const char *ask) {
    static const char *const largest[] = { "most", "largest", "highest", "biggest", "greatest",
                                           "strongest", "maximum" };
    static const char *const smallest[] = { "least", "smallest", "lowest", "fewest", "weakest",
                                            "minimum" };
    bool most = asks_with(ask, largest, sizeof largest / sizeof largest[0]);
    bool least = asks_with(ask, smallest, sizeof smallest / sizeof smallest[0]);
    return most == least ? ASKS_NEITHER : most ? ASKS_LARGEST : ASKS_SMALLEST;
}

/* A choice key (explicit, or taken by `answer: auto`) naming the focus column, where the row's
 * largest (which: ASKS_LARGEST) or smallest visible value is in another column: the focus, and
 * the key with it, is on the wrong cell. An explicit key is refused; an automatic one warned
 * of (warning), as the author may mean it. The other column is named as the explanation names
 * it (a repeated token with its position). */
static void report_not_extreme(const lesson_step *step, const trace *t, const char *key,
                               asked_extreme which, bool warning, lesson_diagnostics *d) {
    trace_cell cell = focus_cell(step);
    int best = extreme_column(t, &cell, which);
    if (best == cell.col) return;
    char label[320], name[CLAIM_MESSAGE_MAX], name_shown[SHOWN_MAX];
    char key_shown[LESSON_ESCAPED_MAX], best_shown[LESSON_ESCAPED_MAX];
    const char *other = trace_axis_name(t, stage_get(cell.stage)->cols, best, label,
                                        sizeof label);
    claim_cell_name(t, &cell, name, sizeof name);
    bool largest = which == ASKS_LARGEST;
    lesson_error code = warning ? (largest ? LESSON_ERROR_AUTO_NOT_LARGEST
                                           : LESSON_ERROR_AUTO_NOT_SMALLEST)
                                : (largest ? LESSON_ERROR_KEY_NOT_LARGEST
                                           : LESSON_ERROR_KEY_NOT_SMALLEST);
    (warning ? lesson_report_warning : lesson_report)(
        d, step->answer_at.line, step->answer_at.col, code,
        lesson_escape(key, strlen(key), key_shown), escaped(name, name_shown),
        lesson_escape(other, strlen(other), best_shown));
}

/* An explicit key naming the focus column of a question that asks for the largest or the
 * smallest (one that asks for neither is not held to either). */
static void check_key_extreme(const lesson_step *step, const trace *t, const char *answer,
                              lesson_diagnostics *d) {
    asked_extreme which = asks_for(step->ask);
    if (which != ASKS_NEITHER) report_not_extreme(step, t, answer, which, false, d);
}

/* An explicit choice key is checked as `answer: auto` would take it: the choice naming the
 * focus column is the key (and where the question asks for the largest or the smallest, that
 * column holds the row's largest or smallest visible value); a key naming another column, or
 * not the focus column's choice when there is one, is refused; any other key that is a number
 * is the focus cell's value. */
static void check_choice(const lesson_step *step, const trace *t, lesson_diagnostics *d) {
    trace_cell cell = focus_cell(step);
    const char *answer = step->choices[step->answer_choice];
    if (names_column(t, step->stage, cell.col, answer)) {
        check_key_extreme(step, t, answer, d);
        return;
    }
    bool wrong = false;
    for (int col = 0; col < trace_cols(t, step->stage) && !wrong; col++)
        wrong = names_column(t, step->stage, col, answer);
    stage_axis axis = stage_get(step->stage)->cols;
    for (int i = 0; i < step->n_choices && !wrong && axis <= AXIS_SOURCE; i++)
        wrong = names_column(t, step->stage, cell.col, step->choices[i]);
    if (!wrong) {
        check_numeric_choice(step, t, answer, d);   /* a number is a claim about the value */
        return;
    }
    char name[CLAIM_MESSAGE_MAX], name_shown[SHOWN_MAX], shown[LESSON_ESCAPED_MAX];
    claim_cell_name(t, &cell, name, sizeof name);
    lesson_report(d, step->answer_at.line, step->answer_at.col, LESSON_ERROR_WRONG_CHOICE,
                  lesson_escape(answer, strlen(answer), shown), escaped(name, name_shown));
}

/* A choice taken by `answer: auto` is most likely the wrong key to "which word does cat look
 * at most?" when its column does not hold the row's largest value; a question that asks for the
 * smallest ("look at least?") is held to the row's smallest visible value instead. */
static void warn_not_extreme(const lesson_step *step, const trace *t, const char *column,
                             lesson_diagnostics *d) {
    asked_extreme which = asks_for(step->ask) == ASKS_SMALLEST ? ASKS_SMALLEST : ASKS_LARGEST;
    report_not_extreme(step, t, column, which, true, d);
}

/* `answer: auto`: the focus cell's value, or the choice that names the focus cell's column. */
static void take_answer(lesson_step *step, const trace *t, bool warnings,
                        lesson_diagnostics *d) {
    trace_cell cell = focus_cell(step);
    if (step->n_choices == 0) {
        step->answer = trace_value(t, cell.stage, cell.head, cell.row, cell.col);
        return;
    }
    char label[32], shown[LESSON_ESCAPED_MAX];
    const char *column = trace_axis_label(t, stage_get(step->stage)->cols, cell.col, label,
                                          sizeof label);
    for (int i = 0; i < step->n_choices; i++)
        if (strcmp(step->choices[i], column) == 0) {
            step->answer_choice = i;
            if (warnings) warn_not_extreme(step, t, column, d);
            return;
        }
    lesson_report(d, step->answer_at.line, step->answer_at.col, LESSON_ERROR_AUTO_NO_CHOICE,
                  lesson_escape(column, strlen(column), shown));
}

static void check_answer(lesson_step *step, const trace *t, bool warnings,
                         lesson_diagnostics *d) {
    if (!step->ask) return;
    if (!has_focus(step)) {
        char shown[LESSON_ESCAPED_MAX];
        const char *answer = step->answer_text ? step->answer_text : "?";
        if (step->answer_auto)
            lesson_report(d, step->answer_at.line, step->answer_at.col,
                          LESSON_ERROR_AUTO_NO_FOCUS);
        else if (warnings && step->n_choices == 0)
            lesson_report_warning(d, step->answer_at.line, step->answer_at.col,
                                  LESSON_ERROR_UNCHECKED_ANSWER,
                                  lesson_escape(answer, strlen(answer), shown));
        return;
    }
    if (step->answer_auto) take_answer(step, t, warnings, d);
    else if (step->n_choices > 0 && step->answer_choice >= 0) check_choice(step, t, d);
    else if (step->n_choices == 0) check_number(step, t, d);
}

/* ---- claims ---- */

/* The hint of a claim that cannot be read when it writes a number with a decimal comma ("> 0,5":
 * a ',' between digits outside a cell's brackets): the claim with points instead. */
static void hint_claim_comma(lesson_diagnostic *item, const char *text) {
    char *pointed = strdup(text);
    bool found = false;
    int depth = 0;
    for (size_t i = 0; pointed && pointed[i]; i++) {
        depth += pointed[i] == '[' ? 1 : pointed[i] == ']' ? -1 : 0;
        if (depth == 0 && pointed[i] == ',' && i > 0 && isdigit((unsigned char)pointed[i - 1])
            && isdigit((unsigned char)pointed[i + 1])) {
            pointed[i] = '.';
            found = true;
        }
    }
    char shown[SHOWN_MAX];
    if (found) lesson_hint(item, LESSON_HINT_DECIMAL_POINT, escaped(pointed, shown));
    free(pointed);
}

static void check_claims(const lesson_step *step, const trace *t, lesson_diagnostics *d) {
    for (int i = 0; i < step->n_expect; i++) {
        const lesson_claim *written = &step->expect[i];
        char shown[SHOWN_MAX], why[CLAIM_MESSAGE_MAX], why_shown[SHOWN_MAX];
        escaped(written->text, shown);
        claim c;
        if (!claim_parse(t, written->text, step_head(step), &c, why, sizeof why)) {
            hint_claim_comma(lesson_report(d, written->at.line, written->at.col,
                                           LESSON_ERROR_BAD_CLAIM, shown, escaped(why, why_shown)),
                             written->text);
        } else if (!claim_holds(t, &c, why, sizeof why)) {
            lesson_report(d, written->at.line, written->at.col, LESSON_ERROR_FALSE_CLAIM, shown,
                          escaped(why, why_shown));
        }
    }
}

/* ---- text a YAML comment cut ---- */

/* An unquoted text with " #0" in it: YAML reads "#0 …" as a comment, and the text ends before. */
static void check_cut(const lesson *l, const char *text, const lesson_written *w,
                      lesson_cursor *cursor, lesson_diagnostics *d) {
    if (!text || !l->text || w->at.line < 1) return;
    size_t start = lesson_cursor_move(cursor, l->text, l->text_size, w->at.line, w->at.col);
    size_t hash = lesson_cut_by_comment(l->text, l->text_size, start);
    if (hash >= l->text_size) return;
    int line, col;
    lesson_offset_position(l->text, l->text_size, hash, &line, &col);
    size_t end = lesson_line_end(l->text, l->text_size, hash, NULL);
    char shown[LESSON_ESCAPED_MAX];
    lesson_hint(lesson_report(d, line, col, LESSON_ERROR_COMMENT_CUTS_TEXT,
                              lesson_escape(l->text + hash, end - hash, shown)),
                LESSON_HINT_QUOTE_FROM, w->at.line);
}

/* The texts in the order they are written, so that one cursor walks the file once. */
static void check_cuts(const lesson *l, lesson_diagnostics *d) {
    lesson_cursor cursor = { 0 };
    check_cut(l, l->about, &l->about_written, &cursor, d);
    for (int i = 0; i < l->n_steps; i++) {
        check_cut(l, l->steps[i].say, &l->steps[i].say_written, &cursor, d);
        check_cut(l, l->steps[i].ask, &l->steps[i].ask_written, &cursor, d);
    }
}

/* ---- live numbers ---- */

/* text with its live numbers written (claim_render), or NULL: out of memory, or a bad
 * placeholder (error says which; error->message is empty when memory ran out). */
static char *rendered_copy(const trace *t, const char *text, int head,
                           claim_text_error *error) {
    error->message[0] = '\0';
    int length = claim_render(t, text, head, NULL, 0, error);
    char *out = length < 0 ? NULL : malloc((size_t)length + 1);
    if (out) claim_render(t, text, head, out, (size_t)length + 1, error);
    return out;
}

/* Replaces *text by its rendering, or reports the first bad placeholder at its place. */
static void render(char **text, lesson_written *w, int head, const trace *t,
                   lesson_diagnostics *d) {
    /* once only: the rendering's "{" (from "{{") is no placeholder */
    if (!*text || w->rendered || !strchr(*text, '{')) return;
    w->rendered = true;
    claim_text_error error;
    char *rendered = rendered_copy(t, *text, head, &error);
    if (!rendered && error.message[0]) {
        lesson_place at = error.index < w->count ? w->marks[error.index] : w->at;
        char shown[SHOWN_MAX];
        lesson_report(d, at.line, at.col, LESSON_ERROR_BAD_PLACEHOLDER,
                      escaped(error.message, shown));
        return;
    }
    if (!rendered) {
        lesson_report(d, w->at.line, w->at.col, LESSON_ERROR_NO_MEMORY);
        return;
    }
    free(*text);
    *text = rendered;
}

/* ---- questions the script already answered (read before the live numbers are written) ---- */

/* Whether step `earlier` shows the matrix that question `asked` asks about. */
static bool shows_matrix_of(const lesson_step *earlier, const lesson_step *asked,
                            const trace *t) {
    if (earlier->stage != asked->stage || earlier->train_step != asked->train_step) return false;
    if (stage_get(asked->stage)->per_head && step_head(earlier) != step_head(asked)) return false;
    /* a decoding step shows only its token's part: it answers a question whose focus is there */
    return earlier->token == 0 || !has_focus(asked)
        || walk_position_shows(asked->stage, earlier->token - 1, t->in->tile, asked->focus_row,
                               asked->focus_col);
}

/* Whether text (shown at `where`, its placeholders in head `head`) tells the answer of question
 * `asked` through a live number: its focus cell's value, or for a choice the extreme of its
 * row; if so, warns and returns true. */
static bool told(const trace *t, const char *text, int head, const char *where, int line,
                 const lesson_step *asked, lesson_diagnostics *d) {
    if (!text || !has_focus(asked)) return false;
    trace_cell cell = focus_cell(asked);
    if (!claim_text_names(t, text, head, &cell, asked->n_choices > 0)) return false;
    char name[CLAIM_MESSAGE_MAX], shown[SHOWN_MAX];
    claim_cell_name(t, &cell, name, sizeof name);
    lesson_report_warning(d, asked->ask_at.line, asked->ask_at.col, LESSON_ERROR_QUESTION_TOLD,
                          where, line, escaped(name, shown));
    return true;
}

/* A text a student may read before a question: of this lesson or of the one before it. */
typedef struct {
    const lesson *l;       /* the lesson it is written in */
    const trace *t;        /* that lesson's trace */
    const char *text;      /* as written (placeholders unwritten), or NULL */
    int head;              /* its placeholders' head */
    lesson_place at;
    bool written;          /* written in the file (else made by the program: a worked sum) */
    const char *where;     /* "the narration of step 3" */
} read_text;

/* The line of l's file where the count-th (from 0) occurrence of found[0, length) after place
 * `at` is, or at's line when it is not written there (a live number). */
static int line_of(const lesson *l, lesson_place at, const char *found, size_t length,
                   int count) {
    if (!l->text) return at.line;
    size_t from = lesson_position_offset(l->text, l->text_size, at.line, at.col);
    const char *p = l->text + from, *end = l->text + l->text_size;
    for (; p && p + length <= end; p++) {
        p = memchr(p, found[0], (size_t)(end - p));
        if (!p || p + length > end) break;
        if (memcmp(p, found, length) == 0 && count-- == 0) {
            int line, col;
            lesson_offset_position(l->text, l->text_size, (size_t)(p - l->text), &line, &col);
            return line;
        }
    }
    return at.line;
}

static int occurrences_before(const char *text, size_t at, const char *found, size_t length) {
    int count = 0;
    for (size_t i = 0; i < at; i++) count += memcmp(text + i, found, length) == 0;
    return count;
}

/* Whether the text, its live numbers written, says the answer in so many words: a number near
 * it or its choice in a sentence naming the focus row. If so, warns with the line. */
static bool said(const read_text *r, const lesson_step *asked, const lesson_answer *a,
                 lesson_diagnostics *d) {
    if (!r->text) return false;
    claim_text_error error;
    char *rendered = strchr(r->text, '{') ? rendered_copy(r->t, r->text, r->head, &error) : NULL;
    const char *text = rendered ? rendered : r->text;
    size_t at, length;
    bool found = lesson_answer_find(a, text, 0, &at, &length);
    if (found) {
        int line = !r->written ? r->at.line
                 : line_of(r->l, r->at, text + at, length,
                           occurrences_before(text, at, text + at, length));
        char shown[LESSON_ESCAPED_MAX];
        lesson_report_warning(d, asked->ask_at.line, asked->ask_at.col,
                              LESSON_ERROR_QUESTION_SAID, r->where, line,
                              lesson_escape(text + at, length, shown));
    }
    free(rendered);
    return found;
}

/* What the checks of one lesson share: its sentence, and the lesson before it in ORDER. */
typedef struct {
    char *sentence;
    lesson previous;
    trace previous_trace;
    bool has_previous;
    char previous_name[256];
} leak_context;

/* One lesson whose texts a student reads before the question: this one, or the one before
 * (`before` names it; its live numbers name its own cells, so only its words are read). */
typedef struct {
    const lesson *l;
    const trace *t;
    const char *before;    /* "first.yaml", or NULL for the question's own lesson */
    const lesson_step *asked;
    const lesson_answer *answer, *numbers;  /* the answer; the same told by a number only */
    lesson_diagnostics *d;
} reader;

/* Whether one text tells the answer: by a live number (of the question's own lesson), or in
 * words; numbers_only for a text that names tokens without saying anything of them (a worked
 * sum, a list of choices). */
static bool tells(const reader *from, const char *text, int head, lesson_place at,
                  bool written, bool numbers_only, const char *what) {
    if (!text) return false;
    char where[512];
    if (from->before) snprintf(where, sizeof where, "%s of %s, the lesson before", what,
                               from->before);
    else snprintf(where, sizeof where, "%s", what);
    read_text r = { from->l, from->t, text, head, at, written, where };
    if (!from->before && written
        && told(from->t, text, head, where, at.line, from->asked, from->d))
        return true;
    return said(&r, from->asked, numbers_only ? from->numbers : from->answer, from->d);
}

/* A step's choices as the question bar lists them, "0.14, 0.58, 0.90" (malloc'd, or NULL). */
static char *choices_text(const lesson_step *s) {
    if (s->n_choices == 0) return NULL;
    size_t size = 1;
    for (int i = 0; i < s->n_choices; i++) size += strlen(s->choices[i]) + 2;
    char *out = malloc(size);
    if (!out) return NULL;
    out[0] = '\0';
    for (int i = 0; i < s->n_choices; i++)
        strcat(strcat(out, i ? ", " : ""), s->choices[i]);
    return out;
}

/* The worked sum the UI and --plain show for a step's focus cell, when its terms are cells of
 * the question's stage (the step shows that stage or one made from it: context's sum writes
 * each weight), else NULL: an embedding's 1.0 tells no weight. malloc'd. */
static char *worked_sum(const trace *t, const lesson_step *s, const lesson_step *asked) {
    if (!has_focus(s) || s->stage == STAGE_COUNT || asked->stage == STAGE_COUNT
        || (s->stage != asked->stage && !stage_reads(s->stage, READ_NODE, (int)asked->stage)))
        return NULL;
    trace_cell cell = focus_cell(s);
    int length = trace_cell_explain(t, &cell, CLAIM_TEXT_PRECISION, NULL, 0);
    char *out = length < 0 ? NULL : malloc((size_t)length + 1);
    if (out) trace_cell_explain(t, &cell, CLAIM_TEXT_PRECISION, out, (size_t)length + 1);
    return out;
}

/* Whether step j tells the answer: its narration, its question and choices, or the worked sum
 * of its focus cell. */
static bool step_tells(const reader *from, int j) {
    const lesson_step *s = &from->l->steps[j];
    /* a step at another training step shows other weights' numbers, which tell nothing */
    if (!from->before && s->train_step != from->asked->train_step) return false;
    char what[64];
    snprintf(what, sizeof what, "the narration of step %d", j + 1);
    if (tells(from, s->say, step_head(s), s->say_written.at, true, false, what)) return true;
    snprintf(what, sizeof what, "the question of step %d", j + 1);
    if (tells(from, s->ask, step_head(s), s->ask_at, true, false, what)) return true;
    char *choices = choices_text(s), *sum = worked_sum(from->t, s, from->asked);
    snprintf(what, sizeof what, "the choices of step %d", j + 1);
    bool found = tells(from, choices, step_head(s), s->ask_at, true, true, what);
    snprintf(what, sizeof what, "the worked sum of step %d's focus", j + 1);
    lesson_place line = { s->line, 1 };
    found = found || tells(from, sum, step_head(s), line, false, true, what);
    free(choices);
    free(sum);
    return found;
}

/* Whether a lesson tells the answer before step `until`: its title, its about text (the
 * picker's summary), and each earlier step. */
static bool lesson_tells(const reader *from, int until) {
    const lesson *l = from->l;
    if (tells(from, l->title, 1, l->title_at, true, false, "the title")
        || tells(from, l->about, 1, l->about_written.at, true, false, "the about text"))
        return true;
    for (int j = 0; j < until; j++)
        if (step_tells(from, j)) return true;
    return false;
}

/* A question's answer told before it is answered: in the title or about text (the picker shows
 * both), an earlier step's narration, question, choices or worked sum, the question itself, or
 * the lesson before in ORDER (any of its texts). */
static bool warn_told(const lesson *l, const trace *t, int k, const leak_context *c,
                      lesson_diagnostics *d) {
    const lesson_step *asked = &l->steps[k];
    char row[32];
    lesson_answer a, numbers;
    lesson_answer_of(t, asked, c->sentence, row, sizeof row, &a);
    numbers = a;
    numbers.token = NULL;
    reader own = { l, t, NULL, asked, &a, &numbers, d };
    if (lesson_tells(&own, k)
        || tells(&own, asked->ask, step_head(asked), asked->ask_at, true, false,
                 "the question itself"))
        return true;
    if (!c->has_previous) return false;
    reader before = { &c->previous, &c->previous_trace, c->previous_name, asked, &a, &numbers, d };
    return lesson_tells(&before, c->previous.n_steps);
}

static const trace *step_trace(const lesson *l, const trace *t, const lesson_step *step,
                               train_cache *cache, lesson_diagnostics *d);

static void warn_leaks(const lesson *l, const trace *t, const leak_context *c,
                       train_cache *cache, lesson_diagnostics *d) {
    for (int k = 0; k < l->n_steps; k++) {
        const lesson_step *asked = &l->steps[k];
        if (!asked->ask || asked->stage == STAGE_COUNT) continue;
        /* a question at a training step is answered by that step's numbers */
        const trace *at = step_trace(l, t, asked, cache, d);
        if (!at || warn_told(l, at, k, c, d)) continue;
        for (int j = 0; j < k; j++) {
            if (!shows_matrix_of(&l->steps[j], asked, t)) continue;
            char head[32] = "";
            if (stage_get(asked->stage)->per_head)
                snprintf(head, sizeof head, " of head %d", step_head(asked));
            lesson_report_warning(d, asked->ask_at.line, asked->ask_at.col,
                                  LESSON_ERROR_QUESTION_LEAK, j + 1, l->steps[j].line,
                                  stage_get(asked->stage)->name, head);
            break;
        }
    }
}

/* The file named on the line before `name` in the ORDER file of folder dir (copied into
 * previous), or false when name is first, not named, or there is no ORDER. */
static bool previous_in_order(const char *dir, const char *name, char *previous, size_t size) {
    char path[4200], line[512], before[512] = "";
    snprintf(path, sizeof path, "%s/ORDER", dir);
    const char *why;
    FILE *f = lesson_open_regular(path, &why);  /* never blocks on a FIFO named ORDER */
    if (!f) return false;
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        size_t length = strlen(line);
        while (length > 0 && line[length - 1] == ' ') line[--length] = '\0';
        if (length == 0) continue;
        if (strcmp(line, name) == 0) found = before[0] != '\0';
        else snprintf(before, sizeof before, "%s", line);
    }
    fclose(f);
    if (found) snprintf(previous, size, "%s", before);
    return found;
}

/* Loads the lesson before l in its folder's ORDER, if any, to read what it already said. */
static void leak_context_open(leak_context *c, const lesson *l) {
    *c = (leak_context){ .sentence = lesson_sentence(l) };
    const char *path = l->path ? l->path : "", *slash = strrchr(path, '/');
    char dir[4096], file[4400];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!previous_in_order(dir, slash ? slash + 1 : path, c->previous_name,
                           sizeof c->previous_name))
        return;
    snprintf(file, sizeof file, "%s/%s", dir, c->previous_name);
    lesson_diagnostics ignored;
    lesson_status loaded = lesson_load(file, &c->previous, &ignored);
    lesson_diagnostics_free(&ignored);
    if (loaded != LESSON_OK) return;
    if (trace_compute(&c->previous.input, NULL, &c->previous_trace, NULL) == TRACE_OK)
        c->has_previous = true;
    else
        lesson_free(&c->previous);
}

static void leak_context_close(leak_context *c) {
    free(c->sentence);
    if (!c->has_previous) return;
    trace_free(&c->previous_trace);
    lesson_free(&c->previous);
}

/* The trace a step's answers, claims and live numbers are about: t, or at its train_step the
 * trace after that many updates (training was run once when the lesson was loaded; NULL only
 * when memory runs out, which is then reported). */
static const trace *step_trace(const lesson *l, const trace *t, const lesson_step *step,
                               train_cache *cache, lesson_diagnostics *d) {
    const trace *at = train_cache_at(cache, t, &l->train, step->train_step, NULL, NULL);
    if (!at) lesson_report(d, step->line, 1, LESSON_ERROR_NO_MEMORY, NULL);
    return at;
}

lesson_status lesson_check(lesson *l, const trace *t, bool warnings,
                           lesson_diagnostics *diagnostics) {
    *diagnostics = (lesson_diagnostics){ .path = strdup(l->path ? l->path : "") };
    if (warnings) lesson_diagnostics_add_copies(diagnostics, l->notes);
    check_cuts(l, diagnostics);
    train_cache cache = { 0 };   /* a step at train_step k is checked at the weights after k */
    for (int i = 0; i < l->n_steps; i++) {
        const trace *at = step_trace(l, t, &l->steps[i], &cache, diagnostics);
        if (!at) break;
        check_answer(&l->steps[i], at, warnings, diagnostics);
        check_claims(&l->steps[i], at, diagnostics);
    }
    /* after the answers are taken, before the live numbers are written: it reads both */
    if (warnings) {
        leak_context c;
        leak_context_open(&c, l);
        warn_leaks(l, t, &c, &cache, diagnostics);
        leak_context_close(&c);
    }
    for (int i = 0; i < l->n_steps; i++) {
        lesson_step *step = &l->steps[i];
        const trace *at = step_trace(l, t, step, &cache, diagnostics);
        if (!at) break;
        render(&step->say, &step->say_written, step_head(step), at, diagnostics);
        render(&step->ask, &step->ask_written, step_head(step), at, diagnostics);
    }
    train_cache_free(&cache);
    render(&l->about, &l->about_written, 1, t, diagnostics);
    lesson_report_finish(diagnostics);
    if (l->text) lesson_diagnostics_quote(diagnostics, l->text, l->text_size);
    return lesson_error_count(diagnostics) > 0 ? LESSON_INVALID : LESSON_OK;
}

char *lesson_about_shown(const lesson *l) {
    if (!l->about) return NULL;
    trace t;
    if (!strchr(l->about, '{') || l->about_written.rendered
        || trace_bytes_needed(&l->input) > LESSON_ABOUT_TRACE_MAX
        || trace_compute(&l->input, NULL, &t, NULL) != TRACE_OK)
        return strdup(l->about);
    claim_text_error error;
    char *shown = rendered_copy(&t, l->about, 1, &error);
    trace_free(&t);
    return shown ? shown : strdup(l->about);
}
