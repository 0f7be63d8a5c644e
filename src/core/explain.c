/* The arithmetic behind any cell of a trace, written out with the real numbers, and the
 * parsing of cell names such as "weights[bank,river]". Pure: text goes into caller buffers. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "number.h"
#include "token_name.h"
#include "spelling.h"
#include "ops/ops.h"

/* A sum of more than SUM_TERMS_SHOWN terms shows only its SUM_TERMS_KEPT terms of largest
 * magnitude (in their order) and says what it left out, unless every term is asked for. */
enum { SUM_TERMS_SHOWN = 6, SUM_TERMS_KEPT = 4 };

void explain_put(explain_text *out, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    size_t room = out->length < out->size ? out->size - out->length : 0;
    int wrote = vsnprintf(room ? out->buffer + out->length : NULL, room, format, args);
    va_end(args);
    if (wrote > 0)
        out->length += (size_t)wrote;
}

void explain_put_number_at(explain_text *out, double x, int precision)
{
    char number[NUMBER_MAX];
    number_write(x, &(number_format){ NUMBER_SHORT, precision, 0, false }, number,
                 sizeof number);
    explain_put(out, "%s", number);
}

void explain_put_number(explain_text *out, double x)
{
    explain_put_number_at(out, x, out->precision);
}

bool explain_term_present(const sum_terms *s, int i)
{
    return !s->absent || !s->absent(s, i);
}

/* Whether term i is one of the kept ones. */
static bool is_kept(const int *kept, int count, int i)
{
    for (int k = 0; k < count; k++)
        if (kept[k] == i)
            return true;
    return false;
}

/* Fills kept[] with the SUM_TERMS_KEPT present terms of largest magnitude (the first of equal
 * ones); returns the largest magnitude of the present terms not kept. */
static double choose_terms(const sum_terms *s, int kept[SUM_TERMS_KEPT])
{
    for (int k = 0; k < SUM_TERMS_KEPT; k++) {
        kept[k] = -1;
        for (int i = 0; i < s->count; i++)
            if (explain_term_present(s, i) && !is_kept(kept, k, i)
                && (kept[k] < 0 || fabs(s->value(s, i)) > fabs(s->value(s, kept[k]))))
                kept[k] = i;
    }
    double left_out = 0.0;
    for (int i = 0; i < s->count; i++)
        if (explain_term_present(s, i) && !is_kept(kept, SUM_TERMS_KEPT, i)
            && fabs(s->value(s, i)) > left_out)
            left_out = fabs(s->value(s, i));
    return left_out;
}

/* How small the terms left out are, at the explanation's precision p: "each 0", "each |term| <
 * 0.00005" (half a unit of the last decimal: each would be written 0.0), or "each |term| ≤
 * 0.0592" (the largest of them rounded up to p decimals, so the bound holds). */
static void put_bound(explain_text *out, double largest)
{
    double unit = pow(10.0, -out->precision);
    if (largest == 0.0)
        explain_put(out, "each 0");
    else if (largest < unit / 2) {
        explain_put(out, "each |term| < ");
        explain_put_number_at(out, unit / 2, out->precision < 17 ? out->precision + 1 : 17);
    } else {
        explain_put(out, "each |term| ≤ ");
        explain_put_number(out, ceil(largest / unit) * unit);
    }
}

/* The names of the terms left out, in key order: "(of, the, gave, loan)", the first
 * NAMES_LISTED of them and how many more. */
enum { NAMES_LISTED = 6 };
static void put_left_out_names(explain_text *out, const sum_terms *s, const int *kept)
{
    int listed = 0, left = 0;
    for (int i = 0; i < s->count; i++) {
        if (!explain_term_present(s, i) || is_kept(kept, SUM_TERMS_KEPT, i))
            continue;
        if (listed < NAMES_LISTED)
            explain_put(out, "%s%s", listed++ ? ", " : "(",
                        explain_source_label(out, s->t, s->first + i));
        else
            left++;
    }
    if (left)
        explain_put(out, " and %d more", left);
    explain_put(out, ")");
}

/* Writes the sum's present terms joined by " + ", each named by its key when the terms run
 * along keys ("(0.7073 × 1.0) [river]"), in key order: all of them when they fit or when
 * out->full (then each with its value, "(= 0.7073)"), else the largest with a note of how many were left out, which (by name) and how
 * small they are: "+ 4 more terms (the, gave, a, loan), each 0". */
void explain_put_sum(explain_text *out, const sum_terms *s)
{
    int present = 0;
    bool named = s->keyed;
    for (int i = 0; i < s->count; i++)
        present += explain_term_present(s, i);
    bool shorten = !out->full && present > SUM_TERMS_SHOWN;
    int kept[SUM_TERMS_KEPT];
    double left_out = shorten ? choose_terms(s, kept) : 0.0;
    for (int i = 0, shown = 0; i < s->count; i++) {
        if (!explain_term_present(s, i) || (shorten && !is_kept(kept, SUM_TERMS_KEPT, i)))
            continue;
        explain_put(out, shown++ ? " + " : "");
        s->put_term(out, s, i);
        if (out->full) {   /* every term: each one's value too, "exp(−0.53) (= 0.588)" */
            explain_put(out, " (= ");
            explain_put_number(out, s->value(s, i));
            explain_put(out, ")");
        }
        if (named)
            explain_put(out, " [%s]", explain_source_label(out, s->t, s->first + i));
    }
    if (!shorten)
        return;
    explain_put(out, " + %s%d more terms", named ? "" : "… ", present - SUM_TERMS_KEPT);
    if (named) {
        explain_put(out, " ");
        put_left_out_names(out, s, kept);
    }
    explain_put(out, ", ");
    put_bound(out, left_out);
    explain_put(out, named ? "" : " …");
}

static double product_value(const sum_terms *s, int i)
{
    return s->p.left[(size_t)i * s->p.left_stride] * s->p.right[(size_t)i * s->p.right_stride];
}

static void put_product(explain_text *out, const sum_terms *s, int i)
{
    explain_put(out, "(");
    explain_put_number(out, s->p.left[(size_t)i * s->p.left_stride]);
    explain_put(out, " × ");
    explain_put_number(out, s->p.right[(size_t)i * s->p.right_stride]);
    explain_put(out, ")");
}

void explain_put_product_terms(explain_text *out, const products *p, int count,
                               const trace *keyed)
{
    sum_terms s = { .count = count, .value = product_value, .put_term = put_product, .p = *p,
                    .t = keyed, .keyed = keyed != NULL };
    explain_put_sum(out, &s);
}

void explain_put_group_parts(explain_text *out, const trace *t, const trace_cell *cell, int group,
                             const char *name, int c, bool offset, head_products of_head,
                             const trace *keyed)
{
    for (int h = 1, first = 1; h <= t->heads; h++) {
        if (trace_kv_group(t, h) != group) continue;
        products p = of_head(t, cell, h);
        double total = 0.0;
        for (int i = 0; i < t->n; i++)
            total = fma(p.left[(size_t)i * p.left_stride], p.right[(size_t)i * p.right_stride],
                        total);
        int col = offset ? (int)ops_head_offset(t, h) + c : c;
        explain_put(out, "%s[head %d, %s[i,%d]: ", first ? "" : " + ", h, name, col);
        explain_put_product_terms(out, &p, t->n, keyed);
        explain_put(out, " = ");
        explain_put_number(out, total);
        explain_put(out, "]");
        first = 0;
    }
}

/* How many labels along axis (tokens and source tokens; 0 for the others, never repeated). */
static int axis_tokens(const trace *t, stage_axis axis)
{
    return axis == AXIS_TOKENS ? t->n : axis == AXIS_SOURCE ? t->m : 0;
}

const char *trace_axis_name(const trace *t, stage_axis axis, int i, char *buffer, size_t size)
{
    char other[32];
    const char *label = trace_axis_label(t, axis, i, buffer, size);
    int count = axis_tokens(t, axis);
    for (int j = 0; j < count; j++)
        if (j != i && strcmp(trace_axis_label(t, axis, j, other, sizeof other), label) == 0) {
            char copy[64];
            snprintf(copy, sizeof copy, "%s", label);
            snprintf(buffer, size, "%s@%d", copy, i);
            return buffer;
        }
    return label;
}

/* Whether a stage's columns are key groups that several heads share (K and V under GQA). */
static bool shared_groups(const trace *t, stage_id stage)
{
    return stage_get(stage)->cols == AXIS_KV_DIMS && t->kv_heads < t->heads;
}

int trace_column_group_width(const trace *t, stage_id stage)
{
    if (!(stage_get(stage)->flags & STAGE_HEAD_COLUMNS))
        return 0;
    int groups = stage_get(stage)->cols == AXIS_KV_DIMS ? t->kv_heads : t->heads;
    return groups > 1 || shared_groups(t, stage) ? t->d_k : 0;
}

const char *trace_column_group_label(const trace *t, stage_id stage, int group, bool brief,
                                     char *buffer, size_t size)
{
    int per_group = shared_groups(t, stage) ? t->heads / t->kv_heads : 1;
    int first = group * per_group + 1;
    char heads[32];
    if (per_group == 1)
        snprintf(heads, sizeof heads, "head %d", first);
    else   /* an en dash between the first and last head */
        snprintf(heads, sizeof heads, "heads %d\xe2\x80\x93%d", first, first + per_group - 1);
    if (brief || !shared_groups(t, stage))
        snprintf(buffer, size, "%s", heads);
    else
        snprintf(buffer, size, "group %d (%s)", group + 1, heads);
    return buffer;
}

/* A name for an explanation's format arguments, which name a few cells at once: kept in one of
 * the ring of buffers in out, each alive until EXPLAIN_NAMES_KEPT more names are taken. */
static const char *ring_name(explain_text *out, const trace *t, stage_axis axis, int i)
{
    char *buffer = out->names[out->next_name];
    out->next_name = (out->next_name + 1) % EXPLAIN_NAMES_KEPT;
    return trace_axis_name(t, axis, i, buffer, EXPLAIN_NAME_MAX);
}

const char *explain_row_label(explain_text *out, const trace *t, const trace_cell *cell)
{
    return ring_name(out, t, stage_get(cell->stage)->rows, cell->row);
}

const char *explain_source_label(explain_text *out, const trace *t, int i)
{
    return ring_name(out, t, AXIS_SOURCE, i);
}

static void put_cell_name(explain_text *out, const trace *t, const trace_cell *cell)
{
    const stage_info *info = stage_get(cell->stage);
    explain_put(out, "%s[%s,%s]", info->name, explain_row_label(out, t, cell),
        ring_name(out, t, info->cols, cell->col));
    if (info->per_head && t->heads > 1)
        explain_put(out, " (head %d)", cell->head);
}

/* " of group 2" after a key or value that grouped-query attention shares; nothing otherwise. */
void explain_put_group(explain_text *out, const trace *t, int head)
{
    if (t->kv_heads < t->heads)
        explain_put(out, " of group %d", trace_kv_group(t, head));
}

void explain_put_source_cell(explain_text *out, const trace *t, const char *stage,
                            const trace_cell *cell)
{
    explain_put(out, "%s[%s,%s]", stage, explain_row_label(out, t, cell),
                explain_source_label(out, t, cell->col));
}

/* ---- the online softmax: running_max and running_sum, tile by tile ---- */

static int explain_cell(const trace *t, const trace_cell *cell, int precision, bool full,
                        char *buffer, size_t size)
{
    explain_text out = { .buffer = buffer, .size = size, .precision = precision, .full = full };
    if (size)
        buffer[0] = '\0';
    put_cell_name(&out, t, cell);
    if (stage_functions_get(cell->stage)->explain(&out, t, cell)) {
        explain_put(&out, " = ");
        explain_put_number(&out, trace_value(t, cell->stage, cell->head, cell->row, cell->col));
    }
    return out.length > (size_t)INT_MAX ? -1 : (int)out.length;
}

int trace_cell_explain(const trace *t, const trace_cell *cell, int precision,
                       char *buffer, size_t size)
{
    return explain_cell(t, cell, precision, false, buffer, size);
}

int trace_cell_explain_full(const trace *t, const trace_cell *cell, int precision,
                            char *buffer, size_t size)
{
    return explain_cell(t, cell, precision, true, buffer, size);
}

/* The tokens along a token axis (tokens or source tokens), as token_name reads them. */
static token_axis tokens_along(const trace *t, stage_axis axis)
{
    const char *const *tokens = axis == AXIS_SOURCE && t->in->source ? t->in->source
                                                                     : t->in->tokens;
    return token_axis_of(tokens, axis_tokens(t, axis));
}

/* What find_index returns for a label that names no index, or a repeated token's plain name. */
enum { INDEX_NONE = -1, INDEX_REPEATED = TRACE_NAME_REPEATED };

/* The length of an axis. */
static int axis_count(const trace *t, stage_axis axis)
{
    return axis == AXIS_TOKENS ? t->n : axis == AXIS_SOURCE ? t->m
         : axis == AXIS_MODEL_DIMS ? t->d_model
         : axis == AXIS_KV_DIMS ? t->kv_heads * t->d_k
         : axis == AXIS_HEAD_DIMS ? t->d_k : trace_tile_count(t);
}

/* Index of the label along an axis: a token (token_name's rule: a token written once by its
 * name, any by "dog@6"), or a 0-based index; INDEX_REPEATED for a repeated token's plain name. */
static int find_index(const trace *t, stage_axis axis, const char *label, size_t length)
{
    int count = trace_axis_length(t, axis);   /* 1 for a one-row axis (a bias, the loss) */
    if (axis_tokens(t, axis) > 0) {
        token_axis tokens = tokens_along(t, axis);
        int index = INDEX_NONE;
        token_name_status found = token_name_find(&tokens, label, length, &index);
        if (found != TOKEN_NAME_NONE)
            return found == TOKEN_NAME_FOUND ? index : INDEX_REPEATED;
    }
    if (length == 0 || length > 9 || strspn(label, "0123456789") < length)
        return INDEX_NONE;
    int index = atoi(label);
    return index < count ? index : INDEX_NONE;
}

/* Where the column's label starts after the comma at `comma` (end is the closing ']'): right
 * after it, unless only the spaces after it keep the label from naming a column (cat, sat). A
 * token written with a leading space is still found as written. */
static const char *column_start(const trace *t, stage_axis axis, const char *comma,
                                const char *end)
{
    const char *label = comma + 1;
    if (find_index(t, axis, label, (size_t)(end - label)) != INDEX_NONE)
        return label;
    while (label < end && *label == ' ')
        label++;
    return label;
}

static bool parse_failed(char *error, size_t error_size, const char *format, const char *what)
{
    snprintf(error, error_size, format, what);
    return false;
}

/* The token of a row or column axis nearest to a label that names none, or NULL. */
static const char *nearest_label(const trace *t, stage_axis axis, const char *label,
                                 size_t length)
{
    int count = axis == AXIS_TOKENS ? t->n : axis == AXIS_SOURCE ? t->m : 0;
    const char **words = count > 0 ? malloc((size_t)count * sizeof *words) : NULL;
    char *word = malloc(length + 1);
    const char *nearest = NULL;
    if (words && word) {
        char buffer[32];
        for (int i = 0; i < count; i++)
            words[i] = trace_axis_label(t, axis, i, buffer, sizeof buffer);
        memcpy(word, label, length);
        word[length] = '\0';
        nearest = spelling_nearest(word, words, count);
    }
    free(words);
    free(word);
    return nearest;
}

int trace_axis_find(const trace *t, stage_axis axis, const char *name, size_t length,
                    char *error, size_t error_size)
{
    int index = find_index(t, axis, name, length);
    if (index == INDEX_REPEATED) {
        token_axis tokens = tokens_along(t, axis);
        token_name_refusal(&tokens, name, length, error, error_size);
    }
    return index;
}

/* Whether spec names a row or column by the plain name of a repeated token (at a comma whose
 * other side names one, or is such a name too); if so, error says which positions it could be. */
static bool repeated_name(const trace *t, const stage_info *info, const char *spec,
                          const char *inside, const char *end, char *error, size_t error_size)
{
    for (const char *comma = inside; comma < end; comma++) {
        if (*comma != ',')
            continue;
        const char *column = column_start(t, info->cols, comma, end);
        size_t row_length = (size_t)(comma - inside), col_length = (size_t)(end - column);
        int row = find_index(t, info->rows, inside, row_length);
        int col = find_index(t, info->cols, column, col_length);
        if (row == INDEX_NONE || col == INDEX_NONE || (row >= 0 && col >= 0))
            continue;
        char why[512];
        if (row == INDEX_REPEATED)
            trace_axis_find(t, info->rows, inside, row_length, why, sizeof why);
        else
            trace_axis_find(t, info->cols, column, col_length, why, sizeof why);
        snprintf(error, error_size, "cell '%s' is ambiguous: %s", spec, why);
        return true;
    }
    return false;
}

/* Why no comma of spec splits it into a row and a column: the side that names nothing (taken
 * at the first comma whose other side does name one), with the nearest token to it. */
static bool cell_not_found(const trace *t, const stage_info *info, const char *spec,
                           const char *inside, const char *end, char *error, size_t error_size)
{
    if (repeated_name(t, info, spec, inside, end, error, error_size))
        return false;
    const char *split = NULL;
    bool row_bad = true;
    for (const char *comma = inside; comma < end && !split; comma++) {
        if (*comma != ',')
            continue;
        const char *column = column_start(t, info->cols, comma, end);
        if (find_index(t, info->rows, inside, (size_t)(comma - inside)) >= 0)
            split = comma, row_bad = false;
        else if (find_index(t, info->cols, column, (size_t)(end - column)) >= 0)
            split = comma;
    }
    const char *nearest = NULL, *label = NULL;
    size_t length = 0;
    if (split) {
        label = row_bad ? inside : column_start(t, info->cols, split, end);
        length = row_bad ? (size_t)(split - inside) : (size_t)(end - label);
        nearest = nearest_label(t, row_bad ? info->rows : info->cols, label, length);
    }
    explain_text out = { .buffer = error, .size = error_size };
    if (error_size)
        error[0] = '\0';
    explain_put(&out, "no such cell '%s': ", spec);
    bool index = split && length > 0 && strspn(label, "0123456789") >= length;
    if (nearest)
        explain_put(&out, "'%.*s' is not a %s of %s; did you mean '%s'?", (int)length, label,
            row_bad ? "row" : "column", info->name, nearest);
    else if (index)   /* an index past the end: the range it had to be in */
        explain_put(&out, "%s index %.*s is out of range: %s has %s 0 to %d", row_bad ? "row"
            : "column", (int)length, label, info->name, row_bad ? "rows" : "columns",
            axis_count(t, row_bad ? info->rows : info->cols) - 1);
    else
        explain_put(&out, "name the row and column by token or by 0-based index");
    return false;
}

void trace_stage_absent(stage_id stage, const char *missing, char *out, size_t size)
{
    stage_presence presence = stage_get(stage)->presence;
    if (!missing)
        missing = stage_presence_key(presence);
    if (presence == PRESENT_WITH_SOURCE && strcmp(missing, "source") == 0)
        snprintf(out, size, "stage '%s' exists only in cross-attention (with 'source')",
                 stage_get(stage)->name);
    else
        snprintf(out, size, "stage '%s' exists only with '%s'", stage_get(stage)->name, missing);
}

void trace_stage_unknown(const trace *t, const char *name, char *out, size_t size)
{
    const char *names[STAGE_COUNT];
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (trace_has_stage(t, (stage_id)s))
            names[count++] = stage_get((stage_id)s)->name;
    const char *nearest = spelling_nearest(name, names, count);
    explain_text text = { .buffer = out, .size = size };
    if (size)
        out[0] = '\0';
    explain_put(&text, "unknown stage '%s'", name);
    if (nearest)
        explain_put(&text, "; did you mean '%s'?", nearest);
    explain_put(&text, " (stages:");
    for (int i = 0; i < count; i++)
        explain_put(&text, " %s", names[i]);
    explain_put(&text, ")");
}

const char *trace_stage_missing(const trace *t, stage_id stage)
{
    const stage_info *info = stage_get(stage);
    if (!trace_presence_met(t->in, info->presence))
        return info->presence == PRESENT_WITH_SOURCE ? "source"
                                                     : stage_presence_key(info->presence);
    /* a gradient exists only where what it is the gradient of exists */
    if (info->of.kind == READ_NODE && !trace_has_stage(t, (stage_id)info->of.id))
        return trace_stage_missing(t, (stage_id)info->of.id);
    if (info->of.kind == READ_PARAM && !trace_param(t, (param_id)info->of.id))
        return param_get((param_id)info->of.id)->name;
    return NULL;
}

bool trace_cell_parse(const trace *t, const char *spec, int head, trace_cell *cell,
                      char *error, size_t error_size)
{
    const char *open = strchr(spec, '[');
    size_t length = strlen(spec);
    if (!open || length < 2 || spec[length - 1] != ']')
        return parse_failed(error, error_size, "'%s' is not of the form STAGE[ROW,COL]", spec);
    char name[32];
    size_t name_length = (size_t)(open - spec);
    if (name_length >= sizeof name)
        return parse_failed(error, error_size, "unknown stage in '%s'", spec);
    memcpy(name, spec, name_length);
    name[name_length] = '\0';
    stage_id stage = trace_find_stage(t->in, name);
    if (stage != STAGE_COUNT && !trace_has_stage(t, stage)) {
        trace_stage_absent(stage, trace_stage_missing(t, stage), error, error_size);
        return false;
    }
    if (stage == STAGE_COUNT) {
        trace_stage_unknown(t, name, error, error_size);
        return false;
    }
    const stage_info *info = stage_get(stage);
    if (info->per_head && (head < 1 || head > t->heads)) {
        snprintf(error, error_size, "head %d does not exist: this lesson has %d head%s", head,
                 t->heads, t->heads == 1 ? "" : "s");
        return false;
    }
    /* Token names may hold commas: try every comma until both sides name a row and a column. */
    const char *inside = open + 1, *end = spec + length - 1;
    for (const char *comma = inside; comma < end; comma++) {
        if (*comma != ',')
            continue;
        int row = find_index(t, info->rows, inside, (size_t)(comma - inside));
        const char *column = column_start(t, info->cols, comma, end);
        int col = find_index(t, info->cols, column, (size_t)(end - column));
        if (row >= 0 && col >= 0) {
            *cell = (trace_cell){ stage, info->per_head ? head : 1, row, col };
            return true;
        }
    }
    return cell_not_found(t, info, spec, inside, end, error, error_size);
}
