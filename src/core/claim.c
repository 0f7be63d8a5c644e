/* Claims and live numbers (claim.h): a hand-written parser for the small claim language, its
 * evaluation against a trace, and the placeholders of lesson text. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "claim.h"
#include "cost.h"
#include "number.h"
#include "spelling.h"

/* "=" holds when the two sides agree to this much, relative to the larger (sums in another
 * order differ in the last bits; a number written in decimal is not exact in binary). */
#define CLAIM_EQUAL_DIGITS 1e-12

static bool fail(char *error, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, size, format, args);
    va_end(args);
    return false;
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Copies at most size - 1 bytes of [begin, end) into out. */
static void copy_span(const char *begin, const char *end, char *out, size_t size)
{
    size_t length = (size_t)(end - begin);
    if (length >= size)
        length = size - 1;
    memcpy(out, begin, length);
    out[length] = '\0';
}

/* ---- numbers and cells ---- */

/* The minus sign of typeset text, U+2212, which lessons write in their prose. */
#define CLAIM_MINUS "\xe2\x88\x92"

/* A decimal number [+-−]digits[.digits][e[+-]digits], read without the locale; *decimals is
 * the place of its last digit written (2 for 0.25 and for 25e-3, -1 for 3e1). */
static const char *parse_number(const char *p, double *value, int *decimals)
{
    bool negative = *p == '-' || strncmp(p, CLAIM_MINUS, 3) == 0;
    if (strncmp(p, CLAIM_MINUS, 3) == 0)
        p += 3;
    else if (*p == '-' || *p == '+')
        p++;
    const char *start = p;
    char digits[40];
    size_t used = 0;
    int after_point = -1;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && after_point < 0); p++) {
        if (*p == '.') {
            after_point = 0;
            continue;
        }
        if (used + 1 >= sizeof digits)
            return NULL;
        digits[used++] = *p;
        if (after_point >= 0)
            after_point++;
    }
    if (used == 0 || p == start)
        return NULL;
    digits[used] = '\0';
    int place = after_point > 0 ? after_point : 0;
    if ((*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))) {
        char *end;
        long exponent = strtol(p + 1, &end, 10);
        if (end == p + 1 || exponent < -400 || exponent > 400)
            return NULL;
        place -= (int)exponent;
        p = end;
    }
    /* digits alone (no point) read the same in every locale */
    /* dividing by an exact power of ten rounds once: 0.25 reads as the double nearest 0.25 */
    double x = place >= 0 ? strtod(digits, NULL) / pow(10.0, place)
                          : strtod(digits, NULL) * pow(10.0, -place);
    *value = negative ? -x : x;
    *decimals = place;
    return p;
}

/* Reads "STAGE[" … "]" and an optional "@H" from p; spec receives STAGE[…] with `extra` put
 * before the closing bracket (",0" for a row). Returns the end, or NULL. */
static const char *scan_cell(const char *p, const char *extra, char *spec, size_t spec_size,
                             int *head)
{
    const char *open = strchr(p, '[');
    const char *close = open ? strchr(open, ']') : NULL;
    if (!open || !close || open == p)
        return NULL;
    for (const char *c = p; c < open; c++)
        if (*c == ' ' || *c == '\t')
            return NULL;
    int written = snprintf(spec, spec_size, "%.*s%s]", (int)(close - p), p, extra);
    if (written < 0 || (size_t)written >= spec_size)
        return NULL;
    const char *end = close + 1;
    if (*end == '@') {
        char *after;
        long h = strtol(end + 1, &after, 10);
        if (after == end + 1 || h < 1 || h > 1 << 20)
            return NULL;
        *head = (int)h;
        end = after;
    }
    return end;
}

/* A cell (or, with `extra` ",0", a row) at p; fills cell. */
static const char *parse_cell(const trace *t, const char *p, const char *extra, int head,
                              trace_cell *cell, char *error, size_t size)
{
    char spec[384];
    const char *end = scan_cell(p, extra, spec, sizeof spec, &head);
    if (!end) {
        fail(error, size, "'%.80s' is not a cell: write STAGE[ROW,COL], optionally @HEAD", p);
        return NULL;
    }
    if (!trace_cell_parse(t, spec, head, cell, error, size))
        return NULL;
    return end;
}

/* ---- counts of the layer ---- */

static const char *const count_words[] = {
    [COUNT_MULTIPLICATIONS] = "multiplications", [COUNT_ADDITIONS] = "additions",
    [COUNT_DIVISIONS] = "divisions", [COUNT_EXPONENTIALS] = "exponentials",
    [COUNT_BYTES] = "bytes", [COUNT_PARAMETERS] = "parameters",
};

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The count word at p (followed by a character no name has): which, and the text after it. */
static const char *parse_count_word(const char *p, claim_count_kind *kind)
{
    for (size_t k = 0; k < sizeof count_words / sizeof count_words[0]; k++) {
        size_t length = strlen(count_words[k]);
        if (strncmp(p, count_words[k], length) == 0 && !name_char(p[length])) {
            *kind = (claim_count_kind)k;
            return p + length;
        }
    }
    return NULL;
}

/* The name at p (letters, digits, '_') into name; the text after it. */
static const char *scan_name(const char *p, char *name, size_t size)
{
    const char *end = p;
    while (name_char(*end))
        end++;
    copy_span(p, end, name, size);
    return end;
}

static bool find_counted_stage(const trace *t, const char *name, claim_count *out,
                               char *error, size_t size)
{
    if (strcmp(name, "total") == 0) {
        out->what = CLAIM_COUNT_TOTAL;
        return true;
    }
    stage_id stage = trace_find_stage(t->in, name);
    if (stage == STAGE_COUNT) {
        trace_stage_unknown(t, name, error, size);
        return false;
    }
    if (!trace_has_stage(t, stage)) {
        trace_stage_absent(stage, trace_stage_missing(t, stage), error, size);
        return false;
    }
    out->what = (int)stage;
    return true;
}

/* Why name is no parameter of t: a parameter it lacks, or a name that is none (with the
 * nearest one t has); then the ones it has. */
static bool refuse_parameter(const trace *t, const char *name, char *error, size_t size)
{
    const char *names[PARAM_COUNT];
    int count = 0;
    bool known = false;
    for (int p = 0; p < PARAM_COUNT; p++) {
        known |= strcmp(param_get((param_id)p)->name, name) == 0;
        if (trace_param(t, (param_id)p))
            names[count++] = param_get((param_id)p)->name;
    }
    const char *nearest = known ? NULL : spelling_nearest(name, names, count);
    size_t used = (size_t)snprintf(error, size, known ? "this lesson has no %s" :
                                   "'%s' is not a parameter", name);
    if (nearest && used < size)
        used += (size_t)snprintf(error + used, size - used, "; did you mean '%s'?", nearest);
    if (used < size)
        used += (size_t)snprintf(error + used, size - used, " (its parameters:");
    for (int i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(error + used, size - used, " %s", names[i]);
    if (used < size)
        snprintf(error + used, size - used, ")");
    return false;
}

static bool find_parameter(const trace *t, const char *name, claim_count *out, char *error,
                           size_t size)
{
    for (int p = 0; p < PARAM_COUNT; p++)
        if (trace_param(t, (param_id)p) && strcmp(param_get((param_id)p)->name, name) == 0) {
            out->what = p;
            return true;
        }
    return refuse_parameter(t, name, error, size);
}

/* Why the layer of t cannot be counted at n tokens, written as digits (length bytes). */
static void refuse_length(const trace *t, cost_at_verdict verdict, int n, const char *digits,
                          size_t length, char *error, size_t size)
{
    switch (verdict) {
    case COST_AT_OUT_OF_RANGE:
        fail(error, size, "'at %.*s' is out of range: count a sentence of 1 to %d tokens",
             (int)(length > 24 ? 24 : length), digits, COST_LONGEST);
        break;
    case COST_AT_SOURCE:
        fail(error, size, "'at %d' counts self-attention over %d tokens, but this lesson has a "
             "source", n, n);
        break;
    case COST_AT_OWN_MASK:
        fail(error, size, "'at %d' needs a mask that is a rule (none, causal or a window): this "
             "lesson's own mask has cells for its %d tokens only", n, t->n);
        break;
    case COST_AT_OK:
        break;
    }
}

/* " at N" after a count, if written: the sentence's tokens, checked against the lesson. */
static const char *parse_count_length(const trace *t, const char *p, claim_count *out,
                                      char *error, size_t size)
{
    out->n = t->n;
    const char *at = skip_spaces(p);
    if (strncmp(at, "at", 2) != 0 || name_char(at[2]))
        return p;
    const char *digits = skip_spaces(at + 2), *end = digits;
    long n = 0;
    for (; *end >= '0' && *end <= '9'; end++)
        n = n > COST_LONGEST ? n : n * 10 + (*end - '0');   /* past the limit is past it */
    if (end == digits || name_char(*end) || *end == '.') {
        fail(error, size, "'at' takes a whole number of tokens, as in 'at 1024'");
        return NULL;
    }
    if (out->kind == COUNT_PARAMETERS) {
        fail(error, size, "the parameters do not depend on the sentence's length: leave out "
             "'at %.*s'", (int)(end - digits), digits);
        return NULL;
    }
    out->n = n > COST_LONGEST ? COST_LONGEST + 1 : (int)n;
    cost_at_verdict verdict = cost_at_check(t, out->n);
    if (verdict == COST_AT_OK)
        return end;
    refuse_length(t, verdict, out->n, digits, (size_t)(end - digits), error, size);
    return NULL;
}

/* A count at p: WORD STAGE [at N], or parameters [NAME]. NULL when p holds no count word;
 * *bad is then false, else true with why in error. */
static const char *parse_count(const trace *t, const char *p, claim_count *out, bool *bad,
                               char *error, size_t size)
{
    *bad = false;
    *out = (claim_count){ 0 };
    const char *end = parse_count_word(p, &out->kind);
    if (!end)
        return NULL;
    *bad = true;
    char name[64];
    const char *after = scan_name(skip_spaces(end), name, sizeof name);
    if (out->kind == COUNT_PARAMETERS) {
        out->what = CLAIM_COUNT_TOTAL;
        if (name[0] && strcmp(name, "at") != 0) {
            if (!find_parameter(t, name, out, error, size))
                return NULL;
            end = after;
        }
    } else {
        if (!name[0] || strcmp(name, "at") == 0) {
            fail(error, size, "write %s STAGE, or %s total, optionally 'at N' tokens",
                 count_words[out->kind], count_words[out->kind]);
            return NULL;
        }
        if (!find_counted_stage(t, name, out, error, size))
            return NULL;
        end = after;
    }
    end = parse_count_length(t, end, out, error, size);
    if (end)
        *bad = false;
    return end;
}

static unsigned long long count_field(const cost_counts *counts, claim_count_kind kind)
{
    switch (kind) {
    case COUNT_MULTIPLICATIONS: return counts->multiplications;
    case COUNT_ADDITIONS: return counts->additions;
    case COUNT_DIVISIONS: return counts->divisions;
    case COUNT_EXPONENTIALS: return counts->exponentials;
    case COUNT_BYTES: return counts->bytes;
    case COUNT_PARAMETERS: break;
    }
    assert(0 && "parameters are not counted by a stage");
    return 0;
}

unsigned long long claim_count_value(const trace *t, const claim_count *count)
{
    unsigned long long sum = 0;
    int first = count->what == CLAIM_COUNT_TOTAL ? 0 : count->what;
    if (count->kind == COUNT_PARAMETERS) {
        int end = count->what == CLAIM_COUNT_TOTAL ? PARAM_COUNT : first + 1;
        for (int p = first; p < end; p++)
            sum += cost_parameter_count(t, (param_id)p);
        return sum;
    }
    int end = count->what == CLAIM_COUNT_TOTAL ? STAGE_COUNT : first + 1;
    for (int s = first; s < end; s++) {
        if (!trace_has_stage(t, (stage_id)s))
            continue;
        cost_counts counts;
        cost_stage_at(t, count->n, (stage_id)s, &counts);
        sum += count_field(&counts, count->kind);
    }
    return sum;
}

static const char *parse_operand(const trace *t, const char *p, int head, claim_operand *out,
                                 char *error, size_t size)
{
    p = skip_spaces(p);
    *out = (claim_operand){ 0 };
    bool bad;
    const char *end = parse_count(t, p, &out->count, &bad, error, size);
    if (bad)
        return NULL;
    out->is_count = end != NULL;
    if (!end)
        end = parse_number(p, &out->number, &out->decimals);
    if (!end) {
        out->is_cell = true;
        end = parse_cell(t, p, "", head, &out->cell, error, size);
        if (!end)
            return NULL;
    }
    copy_span(p, end, out->text, sizeof out->text);
    return end;
}

/* ---- claims ---- */

static const struct {
    const char *text;
    claim_op op;
} operators[] = {
    { "<=", CLAIM_LESS_EQUAL }, { ">=", CLAIM_GREATER_EQUAL }, { "<", CLAIM_LESS },
    { ">", CLAIM_GREATER }, { "==", CLAIM_EQUAL }, { "=", CLAIM_EQUAL },
    { "\xe2\x89\x88", CLAIM_ABOUT }, { "~", CLAIM_ABOUT },
};

static const char *parse_operator(const char *p, claim_op *op)
{
    p = skip_spaces(p);
    for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++) {
        size_t length = strlen(operators[i].text);
        if (strncmp(p, operators[i].text, length) == 0) {
            *op = operators[i].op;
            return p + length;
        }
    }
    return NULL;
}

/* Index of label along a stage's columns, as a cell names its column (trace_axis_find); -1
 * with why in error when it names none or is a repeated token's plain name. */
static int find_column(const trace *t, stage_id stage, const char *label, char *error,
                       size_t size)
{
    int col = trace_axis_find(t, stage_get(stage)->cols, label, strlen(label), error, size);
    if (col == -1)
        fail(error, size, "'%s' is not a column of %s", label, stage_get(stage)->name);
    return col < 0 ? -1 : col;
}

/* "argmax" or "argmin" and a space at p: which, and the text after it. */
static const char *parse_extreme_word(const char *p, claim_kind *kind)
{
    p = skip_spaces(p);
    if (strncmp(p, "argmax", 6) == 0 || strncmp(p, "argmin", 6) == 0) {
        if (p[6] == ' ' || p[6] == '\t') {
            *kind = p[4] == 'a' ? CLAIM_ARGMAX : CLAIM_ARGMIN;
            return p + 6;
        }
    }
    return NULL;
}

static bool parse_extreme(const trace *t, const char *p, int head, claim *out, char *error,
                          size_t size)
{
    const char *start = skip_spaces(p);
    const char *end = parse_cell(t, start, ",0", head, &out->left.cell, error, size);
    if (!end)
        return false;
    out->left.is_cell = true;
    copy_span(start, end, out->left.text, sizeof out->left.text);
    end = skip_spaces(end);
    if (*end != '=')
        return fail(error, size, "write argmax %s = LABEL", out->left.text);
    char label[256];
    const char *first = skip_spaces(end + 1);
    copy_span(first, first + strlen(first), label, sizeof label);
    for (size_t n = strlen(label); n > 0 && (label[n - 1] == ' ' || label[n - 1] == '\t'); n--)
        label[n - 1] = '\0';
    out->column = find_column(t, out->left.cell.stage, label, error, size);
    if (out->column < 0)
        return false;
    copy_span(label, label + strlen(label), out->right.text, sizeof out->right.text);
    return true;
}

/* Half a unit of the last decimal written: "≈ 0.85" holds within 0.005. */
static double implied_tolerance(const claim_operand *number)
{
    return 0.5 * pow(10.0, -number->decimals);
}

static bool parse_tolerance(const char *p, claim *out, char *error, size_t size)
{
    p = skip_spaces(p);
    if (*p == '\0')
        return true;
    const char *after = NULL;
    if (strncmp(p, "\xc2\xb1", 2) == 0)
        after = p + 2;
    else if (strncmp(p, "+-", 2) == 0)
        after = p + 2;
    if (!after)
        return fail(error, size, "unexpected '%.40s' after the claim", p);
    if (out->op != CLAIM_ABOUT)
        return fail(error, size, "a tolerance (±) goes with ≈ only");
    int decimals = 0;
    const char *end = parse_number(skip_spaces(after), &out->tolerance, &decimals);
    if (!end || out->tolerance < 0)
        return fail(error, size, "± needs a number of at least 0");
    if (*skip_spaces(end) != '\0')
        return fail(error, size, "unexpected '%.40s' after the tolerance", skip_spaces(end));
    return true;
}

/* A side read from the trace (a cell or a count), not written as a number. */
static bool measured(const claim_operand *o)
{
    return o->is_cell || o->is_count;
}

bool claim_parse(const trace *t, const char *text, int head, claim *out, char *error,
                 size_t error_size)
{
    *out = (claim){ .kind = CLAIM_COMPARE, .tolerance = -1.0 };
    const char *p = parse_extreme_word(text, &out->kind);
    if (p)
        return parse_extreme(t, p, head, out, error, error_size);
    p = parse_operand(t, text, head, &out->left, error, error_size);
    if (!p)
        return false;
    p = parse_operator(p, &out->op);
    if (!p)
        return fail(error, error_size, "expected one of < <= > >= = ≈ ~ after '%s'",
                    out->left.text);
    p = parse_operand(t, p, head, &out->right, error, error_size);
    if (!p || !parse_tolerance(p, out, error, error_size))
        return false;
    if (!measured(&out->left) && !measured(&out->right))
        return fail(error, error_size, "a claim compares at least one cell or count");
    if (out->tolerance < 0 && out->op == CLAIM_ABOUT) {
        const claim_operand *number = measured(&out->left) ? &out->right : &out->left;
        if (measured(number))
            return fail(error, error_size, "≈ between two cells or counts needs its tolerance: "
                        "± T");
        out->tolerance = implied_tolerance(number);
    }
    return true;
}

/* ---- evaluating ---- */

static double operand_value(const trace *t, const claim_operand *o)
{
    if (o->is_count)
        return (double)claim_count_value(t, &o->count);  /* exact below 2^53 */
    return o->is_cell ? trace_value(t, o->cell.stage, o->cell.head, o->cell.row, o->cell.col)
                      : o->number;
}

static bool within(double a, double b, double tolerance)
{
    /* the decimal numbers written are not exact in binary: allow for that, and nothing more */
    return fabs(a - b) <= tolerance * (1.0 + 1e-9) + 1e-15;
}

static bool compare(claim_op op, double a, double b, double tolerance)
{
    switch (op) {
    case CLAIM_LESS: return a < b;
    case CLAIM_LESS_EQUAL: return a <= b;
    case CLAIM_GREATER: return a > b;
    case CLAIM_GREATER_EQUAL: return a >= b;
    case CLAIM_EQUAL:
        return fabs(a - b) <= CLAIM_EQUAL_DIGITS * fmax(1.0, fmax(fabs(a), fabs(b)));
    case CLAIM_ABOUT: return within(a, b, tolerance);
    }
    assert(0 && "unknown claim operator");
    return false;
}

/* Decimals for the numbers of a message: 4, or one more than the claim wrote. */
static int message_precision(const claim *c)
{
    int decimals = c->left.decimals > c->right.decimals ? c->left.decimals : c->right.decimals;
    return decimals + 1 > 4 ? (decimals + 1 > 17 ? 17 : decimals + 1) : 4;
}

static void write_number(double x, int precision, char *buffer, size_t size)
{
    number_format f = { NUMBER_SHORT, precision, 0, false };
    number_write(x, &f, buffer, size);
}

int claim_extreme(const trace *t, stage_id stage, int head, int row, bool largest)
{
    int best = 0;
    for (int col = 1; col < trace_cols(t, stage); col++) {
        double x = trace_value(t, stage, head, row, col);
        double b = trace_value(t, stage, head, row, best);
        if (largest ? x > b : x < b)
            best = col;
    }
    return best;
}

static bool extreme_holds(const trace *t, const claim *c, char *detail, size_t size)
{
    const trace_cell *row = &c->left.cell;
    int best = claim_extreme(t, row->stage, row->head, row->row, c->kind == CLAIM_ARGMAX);
    double top = trace_value(t, row->stage, row->head, row->row, best);
    /* a tie with the column claimed still holds */
    if (trace_value(t, row->stage, row->head, row->row, c->column) == top)
        return true;
    char label[32], best_number[NUMBER_MAX], claimed_number[NUMBER_MAX], claimed[32];
    stage_axis axis = stage_get(row->stage)->cols;
    write_number(top, 4, best_number, sizeof best_number);
    write_number(trace_value(t, row->stage, row->head, row->row, c->column), 4, claimed_number,
                 sizeof claimed_number);
    snprintf(detail, size, "%s of %s is %s (%s; %s is %s)",
             c->kind == CLAIM_ARGMAX ? "argmax" : "argmin", c->left.text,
             trace_axis_label(t, axis, best, label, sizeof label), best_number,
             trace_axis_label(t, axis, c->column, claimed, sizeof claimed), claimed_number);
    return false;
}

bool claim_holds(const trace *t, const claim *c, char *detail, size_t detail_size)
{
    if (detail_size)
        detail[0] = '\0';
    if (c->kind != CLAIM_COMPARE)
        return extreme_holds(t, c, detail, detail_size);
    double a = operand_value(t, &c->left), b = operand_value(t, &c->right);
    bool whole = (c->left.is_count || c->right.is_count) && c->op == CLAIM_EQUAL;
    if (whole ? a == b : compare(c->op, a, b, c->tolerance))  /* a count is exact */
        return true;
    size_t used = 0;
    const claim_operand *sides[] = { &c->left, &c->right };
    for (int i = 0; i < 2 && used < detail_size; i++) {
        if (!measured(sides[i]))
            continue;
        char number[NUMBER_MAX];
        if (sides[i]->is_count)
            number_write_count(claim_count_value(t, &sides[i]->count), number, sizeof number);
        else
            write_number(operand_value(t, sides[i]), message_precision(c), number, sizeof number);
        used += (size_t)snprintf(detail + used, detail_size - used, "%s%s is %s",
                                 used ? ", " : "", sides[i]->text, number);
    }
    if (c->op == CLAIM_ABOUT && used < detail_size) {
        char tolerance[NUMBER_MAX];
        write_number(c->tolerance, 10, tolerance, sizeof tolerance);
        snprintf(detail + used, detail_size - used, ", not within \u00b1 %s", tolerance);
    }
    return false;
}

/* ---- live numbers in text ---- */

typedef struct {
    char *out;
    size_t size, length;
} builder;

static void put_bytes(builder *b, const char *text, size_t length)
{
    if (b->size > 0 && b->length < b->size - 1) {
        size_t room = b->size - 1 - b->length;
        memcpy(b->out + b->length, text, length < room ? length : room);
        b->out[b->length + (length < room ? length : room)] = '\0';
    }
    b->length += length;
}

/* One placeholder's inside (without its braces), read: a cell and how to write its value, or
 * (kind CLAIM_ARGMAX / CLAIM_ARGMIN) a row whose extreme column's label to write. */
typedef struct {
    claim_kind kind;       /* CLAIM_COMPARE for a cell's value or a count */
    bool is_count;
    claim_count count;
    trace_cell cell;       /* for a row, its col is 0 */
    number_format format;
} placeholder;

static bool parse_placeholder(const trace *t, const char *inside, int head, placeholder *out,
                              char *error, size_t error_size)
{
    out->kind = CLAIM_COMPARE;
    out->format = (number_format){ NUMBER_SHORT, CLAIM_TEXT_PRECISION, 0, false };
    bool bad;
    const char *counted = parse_count(t, skip_spaces(inside), &out->count, &bad, error,
                                      error_size);
    out->is_count = counted != NULL;
    if (bad)
        return false;
    if (counted && *skip_spaces(counted) == ':')
        return fail(error, error_size, "a count is a whole number: leave out '%s'",
                    skip_spaces(counted));
    if (counted && *skip_spaces(counted) != '\0')
        return fail(error, error_size, "unexpected '%s' after the count", skip_spaces(counted));
    if (counted)
        return true;
    const char *p = parse_extreme_word(inside, &out->kind);
    if (p) {
        const char *end = parse_cell(t, skip_spaces(p), ",0", head, &out->cell, error,
                                     error_size);
        if (end && *skip_spaces(end) != '\0')
            return fail(error, error_size, "unexpected '%s' after the row", skip_spaces(end));
        return end != NULL;
    }
    const char *end = parse_cell(t, skip_spaces(inside), "", head, &out->cell, error,
                                 error_size);
    if (!end)
        return false;
    end = skip_spaces(end);
    if (*end == ':') {
        char *after;
        long decimals = strtol(end + 1, &after, 10);
        if (after == end + 1 || decimals < 0 || decimals > 17 || *skip_spaces(after) != '\0')
            return fail(error, error_size, "'%s' is not a number of decimals from 0 to 17",
                        end + 1);
        out->format = (number_format){ NUMBER_FIXED, (int)decimals, 0, false };
    } else if (*end != '\0') {
        return fail(error, error_size, "unexpected '%s' after the cell", end);
    }
    return true;
}

/* The text one placeholder stands for, written into value. */
static void render_one(const trace *t, const placeholder *ph, char *value, size_t size)
{
    const trace_cell *c = &ph->cell;
    if (ph->is_count) {
        number_write_count(claim_count_value(t, &ph->count), value, size);
        return;
    }
    if (ph->kind == CLAIM_COMPARE) {
        number_write(trace_value(t, c->stage, c->head, c->row, c->col), &ph->format, value, size);
        return;
    }
    int col = claim_extreme(t, c->stage, c->head, c->row, ph->kind == CLAIM_ARGMAX);
    char label[32];
    snprintf(value, size, "%s",
             trace_axis_label(t, stage_get(c->stage)->cols, col, label, sizeof label));
}

/* The inside of the placeholder at text + open (length bytes, braces included). */
static void placeholder_inside(const char *text, size_t open, size_t length, char *inside,
                               size_t size)
{
    copy_span(text + open + 1, text + open + length - 1, inside, size);
}

bool claim_placeholder_find(const char *text, size_t from, size_t *open, size_t *length)
{
    for (size_t i = from; text[i]; i++) {
        if (text[i] != '{')
            continue;
        if (text[i + 1] == '{') {
            i++;
            continue;
        }
        const char *close = strchr(text + i, '}');
        size_t line = strcspn(text + i, "\n");
        *open = i;
        *length = close && (size_t)(close - (text + i)) < line ? (size_t)(close - (text + i)) + 1
                                                               : line;
        return true;
    }
    return false;
}

/* Literal text, in which each "{{" stands for one brace. */
static void put_literal(builder *b, const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        put_bytes(b, text + i, 1);
        if (text[i] == '{' && i + 1 < length && text[i + 1] == '{')
            i++;
    }
}

int claim_render(const trace *t, const char *text, int head, char *out, size_t size,
                 claim_text_error *error)
{
    builder b = { out, size, 0 };
    if (size)
        out[0] = '\0';
    size_t from = 0, open = 0, length = 0;
    for (int index = 0; claim_placeholder_find(text, from, &open, &length); index++) {
        put_literal(&b, text + from, open - from);
        error->offset = open;
        error->index = index;
        if (text[open + length - 1] != '}') {
            snprintf(error->message, sizeof error->message, "placeholder '%.*s' has no closing "
                     "'}' (write {{ for a brace)", (int)(length > 60 ? 60 : length), text + open);
            return -1;
        }
        char inside[400], value[NUMBER_MAX + 256], why[CLAIM_MESSAGE_MAX - 100];
        placeholder_inside(text, open, length, inside, sizeof inside);
        placeholder ph;
        if (!parse_placeholder(t, inside, head, &ph, why, sizeof why)) {
            snprintf(error->message, sizeof error->message, "placeholder '{%.80s}': %s", inside,
                     why);
            return -1;
        }
        render_one(t, &ph, value, sizeof value);
        put_bytes(&b, value, strlen(value));
        from = open + length;
    }
    put_literal(&b, text + from, strlen(text + from));
    return (int)b.length;
}

bool claim_text_names(const trace *t, const char *text, int head, const trace_cell *cell,
                      bool row)
{
    size_t from = 0, open = 0, length = 0;
    for (; claim_placeholder_find(text, from, &open, &length); from = open + length) {
        char inside[400], why[CLAIM_MESSAGE_MAX];
        placeholder ph;
        if (text[open + length - 1] != '}')
            break;
        placeholder_inside(text, open, length, inside, sizeof inside);
        if (!parse_placeholder(t, inside, head, &ph, why, sizeof why) || ph.is_count)
            continue;   /* a count is the layer's, no cell's value */
        const trace_cell *c = &ph.cell;
        bool same_row = c->stage == cell->stage && c->head == cell->head && c->row == cell->row;
        if (same_row && (ph.kind == CLAIM_COMPARE ? c->col == cell->col : row))
            return true;
    }
    return false;
}

int claim_cell_name(const trace *t, const trace_cell *cell, char *buffer, size_t size)
{
    const stage_info *info = stage_get(cell->stage);
    char row[48], col[48], at[24] = "";
    if (info->per_head && cell->head != 1)
        snprintf(at, sizeof at, "@%d", cell->head);
    return snprintf(buffer, size, "%s[%s,%s]%s", info->name,   /* "dog@6" for a repeated token */
                    trace_axis_name(t, info->rows, cell->row, row, sizeof row),
                    trace_axis_name(t, info->cols, cell->col, col, sizeof col), at);
}
