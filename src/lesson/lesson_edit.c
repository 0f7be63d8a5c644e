/* One number of a loaded lesson changed (lesson_edit.h): the matrices an edit can name are the
 * lesson's data matrices (embeddings, source_embeddings, the loss's target) and every row of
 * the core's parameter table, read from the table, so a parameter added there is editable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_edit.h"
#include "lesson_text.h"
#include "spelling.h"
#include "token_name.h"

/* The data matrices, by the names a lesson file gives them. */
static const struct {
    const char *name;
    data_id data;
} data_matrices[] = {
    { "embeddings", DATA_EMBEDDINGS },
    { "source_embeddings", DATA_SOURCE_EMBEDDINGS },
    { "target", DATA_TARGET },
};
enum {
    DATA_MATRICES = (int)(sizeof data_matrices / sizeof data_matrices[0]),
    MATRICES = DATA_MATRICES + PARAM_COUNT
};

/* One matrix an edit can name, as the lesson holds it. */
typedef struct {
    const char *name;
    read_kind kind;
    int id;
    double *values;          /* NULL: the lesson has none */
    int rows, cols;
    stage_axis row_axis;     /* AXIS_TOKENS, AXIS_SOURCE, or a parameter's */
    bool by_token;           /* one vector per distinct token, written in each of its rows */
} matrix;

/* Matrix i of the list: the data matrices, then the parameter table's rows. */
static matrix matrix_at(const lesson *l, int i)
{
    const attention_input *in = &l->input;
    if (i >= DATA_MATRICES) {
        param_id p = (param_id)(i - DATA_MATRICES);
        const param_info *info = param_get(p);
        return (matrix){ info->name, READ_PARAM, (int)p, l->params[p],
                         trace_input_axis_length(in, info->rows),
                         trace_input_axis_length(in, info->cols), info->rows, false };
    }
    data_id data = data_matrices[i].data;
    bool source = data == DATA_SOURCE_EMBEDDINGS;
    double *values = data == DATA_EMBEDDINGS ? l->embeddings
                   : source ? l->source_embeddings : l->target;
    bool by_token = data == DATA_TARGET ? l->target_by_token : l->embeddings_by_token;
    return (matrix){ data_matrices[i].name, READ_DATA, (int)data, values,
                     source ? l->n_source : l->n_tokens, in->d_model,
                     source ? AXIS_SOURCE : AXIS_TOKENS, by_token };
}

static int matrix_index(read_kind kind, int id)
{
    if (kind == READ_PARAM)
        return DATA_MATRICES + id;
    for (int i = 0; i < DATA_MATRICES; i++)
        if ((int)data_matrices[i].data == id)
            return i;
    return -1;
}

static matrix matrix_of(const lesson *l, const lesson_edit *e)
{
    return matrix_at(l, matrix_index(e->kind, e->id));
}

static bool has_tokens(const matrix *m)
{
    return m->row_axis == AXIS_TOKENS || m->row_axis == AXIS_SOURCE;
}

static token_axis tokens_of(const lesson *l, const matrix *m)
{
    return m->row_axis == AXIS_SOURCE
        ? token_axis_of((const char *const *)l->source, l->n_source)
        : token_axis_of((const char *const *)l->tokens, l->n_tokens);
}

const char *lesson_edit_message(lesson_edit_status status)
{
    static const char *const messages[] = {
#define LESSON_EDIT_MESSAGE(id, message) [LESSON_EDIT_##id] = message,
        LESSON_EDIT_ERRORS(LESSON_EDIT_MESSAGE)
#undef LESSON_EDIT_MESSAGE
    };
    return messages[status];
}

static lesson_edit_status failed(lesson_edit_status status, char *error, size_t size,
                                 const char *format, const char *a, const char *b)
{
    char detail[1400];
    snprintf(detail, sizeof detail, format, a, b);
    snprintf(error, size, "%s%s%s", lesson_edit_message(status), *detail ? ": " : "", detail);
    return status;
}

/* NAME: a matrix the lesson has, or why not, with what it could have meant. */
static lesson_edit_status find_matrix(const lesson *l, const char *name, size_t length,
                                      matrix *out, char *error, size_t size)
{
    const char *names[MATRICES];
    char list[512] = "", word[64];
    int count = 0;
    for (int i = 0; i < MATRICES; i++) {
        matrix m = matrix_at(l, i);
        if (strlen(m.name) == length && strncmp(m.name, name, length) == 0) {
            *out = m;
            if (m.values)
                return LESSON_EDIT_OK;
            snprintf(word, sizeof word, "'%s'", m.name);
            return failed(LESSON_EDIT_ABSENT, error, size, "%s %s", word,
                          m.kind == READ_PARAM ? "is not given (a bias exists only where the "
                                                 "lesson writes one)"
                          : m.id == DATA_TARGET ? "exists only with 'loss: {target: …}'"
                          : "exists only in cross-attention (with 'source')");
        }
        if (m.values) {
            names[count++] = m.name;
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", m.name);
        }
    }
    snprintf(word, sizeof word, "%.*s", (int)(length < 60 ? length : 60), name);
    const char *nearest = spelling_nearest(word, names, count);
    char hint[128] = "";
    if (nearest)
        snprintf(hint, sizeof hint, "did you mean '%s'? ", nearest);
    char detail[700];
    snprintf(detail, sizeof detail, "'%s'; %sthis lesson's are %s", word, hint, list);
    return failed(LESSON_EDIT_NAME, error, size, "%s%s", detail, "");
}

/* A 0-based index written in digits, or -1. */
static int index_of(const char *text, size_t length)
{
    if (length == 0 || length > 9 || strspn(text, "0123456789") < length)
        return -1;
    return atoi(text);
}

static lesson_edit_status out_of_range(lesson_edit_status status, const matrix *m,
                                       const char *text, size_t length, char *error,
                                       size_t size)
{
    char what[96], range[128];
    bool row = status == LESSON_EDIT_ROW;
    snprintf(what, sizeof what, "%s %.*s", row ? "row" : "column", (int)(length < 40 ? length
             : 40), text);
    snprintf(range, sizeof range, "is out of range: %s has %s 0 to %d", m->name,
             row ? "rows" : "columns", (row ? m->rows : m->cols) - 1);
    return failed(status, error, size, "%s %s", what, range);
}

/* ROW of a token's matrix: a token by name (a repeated one by position, unless the lesson
 * writes one vector per token), else a 0-based index. */
static lesson_edit_status find_token_row(const lesson *l, const matrix *m, const char *text,
                                         size_t length, int *row, char *error, size_t size)
{
    token_axis axis = tokens_of(l, m);
    token_name_status found = token_name_find(&axis, text, length, row);
    if (found == TOKEN_NAME_FOUND)
        return LESSON_EDIT_OK;
    if (found == TOKEN_NAME_REPEATED && m->by_token) {
        /* its first row: every row of it shares the one vector */
        for (int i = 0; i < axis.count; i++) {
            const char *label = axis.label(axis.tokens, i);
            if (strlen(label) == length && strncmp(label, text, length) == 0) {
                *row = i;
                return LESSON_EDIT_OK;
            }
        }
    }
    char why[512];
    if (found == TOKEN_NAME_REPEATED) {
        token_name_refusal(&axis, text, length, why, sizeof why);
        return failed(LESSON_EDIT_ROW, error, size, "%s%s", why, "");
    }
    int index = index_of(text, length);
    if (index >= 0 && index < m->rows) {
        *row = index;
        return LESSON_EDIT_OK;
    }
    if (index >= 0)
        return out_of_range(LESSON_EDIT_ROW, m, text, length, error, size);
    snprintf(why, sizeof why, "'%.*s' is not a token of %s (name a row by token or 0-based "
             "index)", (int)(length < 60 ? length : 60), text, m->name);
    return failed(LESSON_EDIT_ROW, error, size, "%s%s", why, "");
}

static lesson_edit_status find_cell(const lesson *l, const matrix *m, const char *inside,
                                    size_t length, lesson_edit *e, char *error, size_t size)
{
    /* columns are indices, so the last comma splits (a token may hold commas) */
    const char *comma = NULL;
    for (size_t i = 0; i < length; i++)
        if (inside[i] == ',') comma = inside + i;
    const char *col_text = comma ? comma + 1 : inside;
    size_t col_length = length - (size_t)(col_text - inside);
    size_t row_length = comma ? (size_t)(comma - inside) : 0;
    e->row = 0;
    if (m->rows == 1 && (!comma || index_of(inside, row_length) == 0)) {
        /* a bias: NAME[COL], or NAME[0,COL] */
    } else if (!comma) {
        return failed(LESSON_EDIT_FORM, error, size, "'%s' has rows and columns: write %s[ROW,COL]",
                      m->name, m->name);
    } else if (has_tokens(m)) {
        lesson_edit_status status = find_token_row(l, m, inside, row_length, &e->row, error,
                                                   size);
        if (status != LESSON_EDIT_OK)
            return status;
    } else {
        e->row = index_of(inside, row_length);
        if (e->row < 0 || e->row >= m->rows)
            return out_of_range(LESSON_EDIT_ROW, m, inside, row_length, error, size);
    }
    e->col = index_of(col_text, col_length);
    if (e->col < 0 || e->col >= m->cols)
        return out_of_range(LESSON_EDIT_COL, m, col_text, col_length, error, size);
    return LESSON_EDIT_OK;
}

static lesson_edit_status read_value(const char *text, double *value, char *error, size_t size)
{
    char shown[LESSON_ESCAPED_MAX];
    lesson_escape(text, strlen(text), shown);
    switch (lesson_parse_number(text, value)) {
    case LESSON_NUMBER_OK:
        return LESSON_EDIT_OK;
    case LESSON_NUMBER_NONFINITE:
    case LESSON_NUMBER_RANGE:
        return failed(LESSON_EDIT_NOT_FINITE, error, size, "'%s'%s", shown,
                      " (a lesson's numbers are finite doubles)");
    case LESSON_NUMBER_TINY:
        return failed(LESSON_EDIT_NUMBER, error, size, "'%s'%s", shown,
                      " rounds to zero in a double: write 0");
    default:
        return failed(LESSON_EDIT_NUMBER, error, size, "'%s'%s", shown, " (write e.g. 0.25 or -1e-3)");
    }
}

lesson_edit_status lesson_edit_parse(const lesson *l, const char *text, lesson_edit *out,
                                     char *error, size_t size)
{
    const char *open = strchr(text, '['), *close = NULL;
    for (const char *p = text; (p = strstr(p, "]=")) != NULL; p++)
        close = p;   /* the last "]=": a token may hold "]=" too */
    if (!open || !close || close < open || open == text)
        return failed(LESSON_EDIT_FORM, error, size, "%s%s", "", "");
    matrix m;
    lesson_edit_status status = find_matrix(l, text, (size_t)(open - text), &m, error, size);
    if (status != LESSON_EDIT_OK)
        return status;
    lesson_edit e = { m.kind, m.id, 0, 0, 0.0 };
    status = find_cell(l, &m, open + 1, (size_t)(close - open - 1), &e, error, size);
    if (status == LESSON_EDIT_OK)
        status = read_value(close + 2, &e.value, error, size);
    if (status == LESSON_EDIT_OK)
        *out = e;
    return status;
}

double lesson_edit_value(const lesson *l, const lesson_edit *e)
{
    matrix m = matrix_of(l, e);
    return m.values[(size_t)e->row * (size_t)m.cols + (size_t)e->col];
}

/* Writes value at column col of every row of m whose token is `token` (or only at row). */
static void write_rows(const lesson *l, const matrix *m, const char *token, int row, int col,
                       double value)
{
    if (!m->values)
        return;
    token_axis axis = tokens_of(l, m);
    for (int r = 0; r < m->rows; r++)
        if (token ? strcmp(axis.label(axis.tokens, r), token) == 0 : r == row)
            m->values[(size_t)r * (size_t)m->cols + (size_t)col] = value;
}

double lesson_edit_apply(lesson *l, const lesson_edit *e)
{
    double was = lesson_edit_value(l, e);
    matrix m = matrix_of(l, e);
    if (!m.by_token) {
        write_rows(l, &m, NULL, e->row, e->col, e->value);
        return was;
    }
    token_axis axis = tokens_of(l, &m);
    const char *token = axis.label(axis.tokens, e->row);
    write_rows(l, &m, token, 0, e->col, e->value);
    if (e->kind == READ_DATA && e->id != DATA_TARGET) {
        /* the embeddings' one mapping serves tokens and source alike */
        int other = matrix_index(READ_DATA, e->id == DATA_EMBEDDINGS ? DATA_SOURCE_EMBEDDINGS
                                                                      : DATA_EMBEDDINGS);
        matrix shared = matrix_at(l, other);
        write_rows(l, &shared, token, 0, e->col, e->value);
    }
    return was;
}

int lesson_edit_name(const lesson *l, const lesson_edit *e, char *buffer, size_t size)
{
    matrix m = matrix_of(l, e);
    if (m.rows == 1 && !has_tokens(&m))
        return snprintf(buffer, size, "%s[%d]", m.name, e->col);
    if (!has_tokens(&m))
        return snprintf(buffer, size, "%s[%d,%d]", m.name, e->row, e->col);
    token_axis axis = tokens_of(l, &m);
    const char *token = axis.label(axis.tokens, e->row);
    int index;
    bool repeated = token_name_find(&axis, token, strlen(token), &index) != TOKEN_NAME_FOUND;
    if (repeated && !m.by_token)
        return snprintf(buffer, size, "%s[%s@%d,%d]", m.name, token, e->row, e->col);
    return snprintf(buffer, size, "%s[%s,%d]", m.name, token, e->col);
}

lesson_edit_status lesson_edits_apply(lesson *l, const char *const *texts, int count,
                                      char *error, size_t size)
{
    for (int i = 0; i < count; i++) {
        lesson_edit e;
        char why[1024];
        lesson_edit_status status = lesson_edit_parse(l, texts[i], &e, why, sizeof why);
        if (status != LESSON_EDIT_OK) {
            char shown[LESSON_ESCAPED_MAX];
            snprintf(error, size, "'%s': %s", lesson_escape(texts[i], strlen(texts[i]), shown),
                     why);
            return status;
        }
        lesson_edit_apply(l, &e);
    }
    return LESSON_EDIT_OK;
}

bool lesson_edit_shape(const lesson *l, read_kind kind, int id, int *rows, int *cols)
{
    int i = matrix_index(kind, id);
    if (i < 0)
        return false;
    matrix m = matrix_at(l, i);
    *rows = m.rows;
    *cols = m.cols;
    return m.values != NULL;
}

lesson_status lesson_edit_refresh(lesson *l, const lesson_options *options, const trace *t,
                                  lesson_diagnostics *diagnostics)
{
    /* the narration as written is gone (lesson_check wrote its live numbers into it): read it
     * again from the text, and swap it in */
    lesson fresh;
    lesson_diagnostics ignored;
    *diagnostics = (lesson_diagnostics){0};
    if (lesson_load_buffer_with(l->path, l->text, l->text_size, options, &fresh, &ignored)
        != LESSON_OK) {
        lesson_diagnostics_free(&ignored);
        return LESSON_NO_MEMORY;
    }
    lesson_step *steps = l->steps;
    int n_steps = l->n_steps;
    char *about = l->about;
    lesson_written about_written = l->about_written;
    l->steps = fresh.steps, l->n_steps = fresh.n_steps;
    l->about = fresh.about, l->about_written = fresh.about_written;
    fresh.steps = steps, fresh.n_steps = n_steps;
    fresh.about = about, fresh.about_written = about_written;
    lesson_free(&fresh);
    return lesson_check(l, t, false, diagnostics);
}
