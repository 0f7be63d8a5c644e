/* One number of a loaded lesson changed (lesson_edit.h): the matrices an edit can name are the
 * lesson's data matrices (embeddings, source_embeddings, the loss's target) and every row of
 * the core's parameter table, read from the table, so a parameter added there is editable. */
#include <math.h>
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
            bool norm = m.kind == READ_PARAM && (m.id == PARAM_GAIN || m.id == PARAM_NORM_BIAS);
            return failed(LESSON_EDIT_ABSENT, error, size, "%s %s", word,
                          norm ? "is not given (the norm's gain exists with 'norm:', its bias "
                                 "with a layer norm only)"
                          : m.kind == READ_PARAM ? "is not given (a bias exists only where the "
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

lesson_edit_status lesson_edit_make(const lesson *l, const char *name, int row, int col,
                                    double value, lesson_edit *out, char *error, size_t size)
{
    matrix m;
    lesson_edit_status status = find_matrix(l, name, strlen(name), &m, error, size);
    if (status != LESSON_EDIT_OK)
        return status;
    char index[16];
    if (row < 0 || row >= m.rows) {
        snprintf(index, sizeof index, "%d", row);
        return out_of_range(LESSON_EDIT_ROW, &m, index, strlen(index), error, size);
    }
    if (col < 0 || col >= m.cols) {
        snprintf(index, sizeof index, "%d", col);
        return out_of_range(LESSON_EDIT_COL, &m, index, strlen(index), error, size);
    }
    if (!isfinite(value))
        return failed(LESSON_EDIT_NOT_FINITE, error, size, "%s%s", "",
                      "a lesson's numbers are finite doubles");
    *out = (lesson_edit){ m.kind, m.id, row, col, value };
    return LESSON_EDIT_OK;
}

const char *lesson_edit_matrix_name(const lesson_edit *e)
{
    int i = matrix_index(e->kind, e->id);
    return i < DATA_MATRICES ? data_matrices[i].name : param_get((param_id)e->id)->name;
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

/* Whether anything of l's narration depends on its numbers: live numbers, claims, answers. */
static bool says_numbers(const lesson *l)
{
    if (l->about_written.count > 0)
        return true;
    for (int i = 0; i < l->n_steps; i++) {
        const lesson_step *step = &l->steps[i];
        if (step->say_written.count || step->ask_written.count || step->n_expect || step->ask)
            return true;
    }
    return false;
}

lesson_status lesson_edit_refresh(lesson *l, const lesson_options *options, const trace *t,
                                  lesson_diagnostics *diagnostics)
{
    /* the narration as written is gone (lesson_check wrote its live numbers into it): read it
     * again from the text, and swap it in */
    *diagnostics = (lesson_diagnostics){0};
    if (!says_numbers(l))   /* nothing to write again or to check: a large lesson stays fast */
        return LESSON_OK;
    lesson fresh;
    lesson_diagnostics ignored;
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

void lesson_edit_shortest(double x, char *out, size_t size)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, x);
        if (strtod(out, NULL) == x) return;
    }
}

/* ---- writing an edited lesson ---- */

/* A growing text. */
typedef struct {
    char *text;
    size_t used, capacity;
    bool failed;
} text_out;

static void put(text_out *o, const char *text, size_t length)
{
    if (o->failed) return;
    if (o->used + length + 1 > o->capacity) {
        size_t capacity = 2 * (o->used + length + 1);
        char *more = realloc(o->text, capacity);
        if (!more) { o->failed = true; return; }
        o->text = more;
        o->capacity = capacity;
    }
    memcpy(o->text + o->used, text, length);
    o->used += length;
    o->text[o->used] = '\0';
}

static void puts_out(text_out *o, const char *text) { put(o, text, strlen(text)); }

/* A row of numbers as a flow list, "[0.5, 1, -2]". */
static void put_row(text_out *o, const double *values, int count)
{
    puts_out(o, "[");
    for (int i = 0; i < count; i++) {
        char number[32];
        lesson_edit_shortest(values[i], number, sizeof number);
        if (i) puts_out(o, ", ");
        puts_out(o, number);
    }
    puts_out(o, "]");
}

/* A token as a YAML double-quoted key: every byte but '"' and '\' as it is (tokens hold no
 * control characters: the loader refuses them). */
static void put_token(text_out *o, const char *token)
{
    puts_out(o, "\"");
    for (const char *c = token; *c; c++) {
        if (*c == '"' || *c == '\\') puts_out(o, "\\");
        put(o, c, 1);
    }
    puts_out(o, "\"");
}

/* A token's row, "TOKEN: [..]", unless an earlier row of the same token wrote it already. */
static void put_token_row(text_out *o, const char *pad, const char *const *tokens, int r,
                          const char *const *before, int n_before, const double *row, int cols)
{
    for (int i = 0; i < n_before; i++)
        if (strcmp(before[i], tokens[r]) == 0) return;
    for (int i = 0; i < r; i++)
        if (strcmp(tokens[i], tokens[r]) == 0) return;
    puts_out(o, pad);
    put_token(o, tokens[r]);
    puts_out(o, ": ");
    put_row(o, row, cols);
}

/* The value of matrix m inline, after "KEY:", its lines indented by indent + 2: a bias as one
 * flow list, a matrix one row a line, the embeddings one vector per distinct token (of tokens,
 * then of source: the one mapping serves both). */
static void put_matrix(text_out *o, const lesson *l, const matrix *m, int indent)
{
    char pad[64];
    snprintf(pad, sizeof pad, "\n%*s", indent + 2, "");
    if (m->rows == 1 && !has_tokens(m)) {
        puts_out(o, " ");
        put_row(o, m->values, m->cols);
        puts_out(o, "\n");
        return;
    }
    const char *const *tokens = (const char *const *)l->tokens;
    bool embeddings = m->kind == READ_DATA && m->id != DATA_TARGET;
    for (int r = 0; r < m->rows; r++) {
        const double *row = m->values + (size_t)r * (size_t)m->cols;
        if (m->by_token) {
            put_token_row(o, pad, tokens, r, NULL, 0, embeddings ? l->embeddings
                          + (size_t)r * (size_t)m->cols : row, m->cols);
            continue;
        }
        puts_out(o, pad);
        puts_out(o, "- ");
        put_row(o, row, m->cols);
    }
    for (int r = 0; embeddings && l->source && r < l->n_source; r++)
        put_token_row(o, pad, (const char *const *)l->source, r, tokens, l->n_tokens,
                      l->source_embeddings + (size_t)r * (size_t)m->cols, m->cols);
    puts_out(o, "\n");
}

static int indentation(const char *line)
{
    return (int)strspn(line, " ");
}

static bool blank_or_comment(const char *line)
{
    const char *c = line + strspn(line, " \t");
    return *c == '\n' || *c == '\0' || *c == '#';
}

/* Where the block of key `name` (the first thing on its line, at indent within [from, to)) is:
 * [*start, *end) from its line to the last line of its value (comments and blank lines before
 * the next key stay the next key's). False when no line starts with "name:". */
static bool find_key(const char *from, const char *to, const char *name, int indent,
                     const char **start, const char **end)
{
    size_t length = strlen(name);
    for (const char *line = from; line && line < to; ) {
        const char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        if (indentation(line) == indent && strncmp(line + indent, name, length) == 0
            && line[indent + length] == ':') {
            *start = line;
            *end = next;
            for (const char *after = next; after < to && *after; ) {
                const char *following = strchr(after, '\n');
                following = following ? following + 1 : after + strlen(after);
                if (!blank_or_comment(after)) {
                    if (indentation(after) <= indent) break;
                    *end = following;
                }
                after = following;
            }
            return true;
        }
        line = next;
    }
    return false;
}

/* Whether the lesson draws with numpy's generator: rewriting one of its matrices inline would
 * change the draws of the others. */
static bool draws_numpy(const lesson *l)
{
    for (const char *at = strstr(l->text, "numpy"); at; at = strstr(at + 1, "numpy")) {
        const char *line = at;
        while (line > l->text && line[-1] != '\n') line--;
        const char *hash = memchr(line, '#', (size_t)(at - line));
        if (!hash) return true;
    }
    return false;
}

/* The comment that heads a written experiment: where it comes from, each edit as its --set and
 * the number it replaced, one line each whatever the names hold. */
static void write_header(text_out *head, const lesson *l, const lesson_edit *edits,
                         const double *was, int count)
{
    char line[400];
    const char *base = strrchr(l->path, '/');
    snprintf(line, sizeof line, "# What if? This lesson with %d edit%s (attnstep's = or --set), "
             "from %.200s:\n", count, count == 1 ? "" : "s", base ? base + 1 : l->path);
    for (char *c = line; c[0] && c[1]; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    puts_out(head, line);
    for (int i = 0; i < count; i++) {
        char name[256], now[32], before[32];
        lesson_edit_name(l, &edits[i], name, sizeof name);
        lesson_edit_shortest(edits[i].value, now, sizeof now);
        lesson_edit_shortest(was[i], before, sizeof before);
        for (char *c = name; *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
        snprintf(line, sizeof line, "#   --set '%s=%s' (was %s)\n", name, now, before);
        puts_out(head, line);
    }
}

char *lesson_edit_write(const lesson *l, const lesson_edit *edits, const double *was, int count,
                        char *error, size_t size)
{
    bool written[MATRICES] = { false };
    if (draws_numpy(l)) {
        snprintf(error, size, "this lesson draws numbers with numpy: writing one of them out "
                 "would change the others' draws");
        return NULL;
    }
    text_out head = {0}, body = {0};
    char line[400];
    write_header(&head, l, edits, was, count);
    puts_out(&body, l->text);
    for (int i = 0; i < count; i++) {
        int index = matrix_index(edits[i].kind, edits[i].id);
        if (written[index]) continue;
        written[index] = true;
        matrix m = matrix_at(l, index);
        if (m.kind == READ_PARAM && (m.id == PARAM_GAIN || m.id == PARAM_NORM_BIAS)) {
            /* keys of norm:, not of the top level (where 'bias' is ALiBi's) */
            snprintf(error, size, "the norm's %s is a key of 'norm:': write it there by hand",
                     m.name);
            free(head.text), free(body.text);
            return NULL;
        }
        if (m.kind == READ_DATA && m.id != DATA_TARGET && !m.by_token) {
            snprintf(error, size, "its embeddings are written row by row ({file:}): write them "
                     "out by hand");
            free(head.text), free(body.text);
            return NULL;
        }
        /* the key's block in the text as it now is, or the end of the file for a key left out
         * (a weight's identity) */
        bool target = m.kind == READ_DATA && m.id == DATA_TARGET;
        const char *key = m.kind == READ_DATA && m.id == DATA_SOURCE_EMBEDDINGS ? "embeddings"
                        : target ? "target" : m.name;
        const char *from = body.text, *to = body.text + body.used, *start, *end;
        int indent = 0;
        if (target) {
            const char *loss_end;
            if (!find_key(from, to, "loss", 0, &start, &loss_end)) start = NULL;
            const char *inside = start ? strchr(start, '\n') : NULL;
            indent = inside ? indentation(inside + 1) : 0;
            if (!inside || !find_key(inside + 1, loss_end, "target", indent, &start, &end)) {
                snprintf(error, size, "its target is not written as 'loss:' then 'target:' on a "
                         "line of its own");
                free(head.text), free(body.text);
                return NULL;
            }
        } else if (!find_key(from, to, key, 0, &start, &end)) {
            start = end = to;   /* left out: a weight's identity, written at the end */
        }
        text_out rewritten = {0};
        put(&rewritten, body.text, (size_t)(start - body.text));
        if (start == to && body.used && body.text[body.used - 1] != '\n') puts_out(&rewritten, "\n");
        snprintf(line, sizeof line, "%*s%s:", indent, "", key);
        puts_out(&rewritten, line);
        matrix shown = m.kind == READ_DATA && m.id == DATA_SOURCE_EMBEDDINGS
                       ? matrix_at(l, matrix_index(READ_DATA, DATA_EMBEDDINGS)) : m;
        put_matrix(&rewritten, l, &shown, indent);
        puts_out(&rewritten, end);
        free(body.text);
        body = rewritten;
        if (body.failed) break;
        /* tokens and source share the embeddings' one mapping, written once */
        if (m.kind == READ_DATA && m.id != DATA_TARGET) {
            written[matrix_index(READ_DATA, DATA_EMBEDDINGS)] = true;
            written[matrix_index(READ_DATA, DATA_SOURCE_EMBEDDINGS)] = true;
        }
    }
    puts_out(&head, body.text ? body.text : "");
    bool failed = head.failed || body.failed;
    free(body.text);
    if (failed) {
        free(head.text);
        snprintf(error, size, "out of memory");
        return NULL;
    }
    return head.text;
}
