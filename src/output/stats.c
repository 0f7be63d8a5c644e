/* The cost of attention, counted and measured: `--stats` (per stage of one trace) and `--cost`
 * (how multiplications, time and memory grow with the sentence length). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "kernels.h"
#include "random.h"
#include "stats.h"

typedef unsigned long long tally;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Cells that the mask leaves visible, in one (n, m) matrix. */
static tally visible_cells(const trace *t)
{
    tally visible = 0;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->m; j++)
            visible += !trace_is_hidden(t, i, j);
    return visible;
}

/* The counts of one stage, over all heads. */
static stats_stage count_stage(const trace *t, stage_id stage, tally visible)
{
    tally n = (tally)t->n, m = (tally)t->m, d = (tally)t->d_model, d_k = (tally)t->d_k;
    tally h = (tally)t->heads, per_head = n * m * sizeof(double);
    stats_stage s = { .stage = stage, .heads = stage_get(stage)->per_head ? t->heads : 1,
                      .rows = trace_rows(t, stage), .cols = trace_cols(t, stage) };
    /* the positional encoding's table is held for the first stage that adds it */
    bool first_input = stage == STAGE_SOURCE_INPUT || t->in->source == NULL;
    tally positional_rows = n > m ? n : m;
    switch (stage) {
    case STAGE_SOURCE_INPUT:
    case STAGE_INPUT: { /* embeddings + PE: one addition per cell, a copy without PE */
        tally rows = stage == STAGE_INPUT ? n : m;
        s.additions = t->in->positional ? rows * d : 0;
        s.bytes = (size_t)(rows * d * sizeof(double));
        if (t->in->positional && first_input)
            s.bytes += (size_t)(positional_rows * d * sizeof(double));
        break;
    }
    case STAGE_Q:
    case STAGE_K:
    case STAGE_V:
    case STAGE_OUTPUT: { /* (rows×d)·(d×d): a dot product of d terms per cell */
        tally rows = stage == STAGE_K || stage == STAGE_V ? m : n;
        s.multiplications = rows * d * d;
        s.additions = rows * d * (d - 1);
        s.bytes = (size_t)(rows * d * sizeof(double));
        break;
    }
    case STAGE_SCORES: /* per head (n×d_k)·(d_k×m) */
        s.multiplications = h * n * m * d_k;
        s.additions = h * n * m * (d_k - 1);
        s.bytes = (size_t)(h * per_head);
        break;
    case STAGE_SCALED: /* derived from scores when shown */
        s.divisions = t->in->scale ? h * n * m : 0;
        break;
    case STAGE_MASKED: /* derived: only comparisons */
        break;
    case STAGE_WEIGHTS: /* per visible cell: − max and exp; per row: visible − 1 additions for
                         * the sum; every cell divided by it */
        s.additions = h * (2 * visible - n);
        s.exponentials = h * visible;
        s.divisions = h * n * m;
        s.bytes = (size_t)(h * per_head);
        break;
    case STAGE_CONTEXT: /* per head (n×m)·(m×d_k) */
        s.multiplications = h * n * d_k * m;
        s.additions = h * n * d_k * (m - 1);
        s.bytes = (size_t)(h * n * d_k * sizeof(double));
        break;
    case STAGE_CONCAT:
        s.bytes = (size_t)(n * d * sizeof(double));
        break;
    case STAGE_COUNT:
        break;
    }
    return s;
}

static void add_to_total(stats_stage *total, const stats_stage *s)
{
    total->multiplications += s->multiplications;
    total->additions += s->additions;
    total->divisions += s->divisions;
    total->exponentials += s->exponentials;
    total->bytes += s->bytes;
    total->seconds += s->seconds;
}

void stats_count(const trace *t, stats_table *table)
{
    memset(table, 0, sizeof *table);
    table->total.stage = STAGE_COUNT;
    tally visible = visible_cells(t);
    /* the step list visits each head of a per-head stage in turn; one entry per stage */
    int steps = trace_step_count(t);
    for (int k = 0; k < steps; k++) {
        stage_id stage;
        int head;
        trace_step_at(t, k, &stage, &head);
        if (table->count > 0 && table->stages[table->count - 1].stage == stage)
            continue;
        table->stages[table->count] = count_stage(t, stage, visible);
        add_to_total(&table->total, &table->stages[table->count]);
        table->count++;
    }
}

/* The buffers one stage's computation writes while it is timed. */
typedef struct {
    const trace *t;
    double *out;
    double sink;  /* derived values summed, so deriving them cannot be optimised away */
} timing;

/* Runs one stage's computation once, as the core does it, into scratch memory. */
static void run_stage(timing *x, stage_id stage)
{
    const trace *t = x->t;
    int n = t->n, m = t->m, d = t->d_model, d_k = t->d_k;
    size_t nm = (size_t)n * (size_t)m;
    switch (stage) {
    case STAGE_SOURCE_INPUT:
    case STAGE_INPUT: {
        const double *e = stage == STAGE_INPUT ? t->in->embeddings
                        : t->in->source_embeddings;
        size_t cells = (size_t)(stage == STAGE_INPUT ? n : m) * (size_t)d;
        for (size_t i = 0; i < cells; i++)
            x->out[i] = e[i] + (t->positional ? t->positional[i] : 0.0);
        break;
    }
    case STAGE_Q: kernels_matmul(x->out, t->input, t->in->W_Q, n, d, d); break;
    case STAGE_K: kernels_matmul(x->out, t->source_input, t->in->W_K, m, d, d); break;
    case STAGE_V: kernels_matmul(x->out, t->source_input, t->in->W_V, m, d, d); break;
    case STAGE_OUTPUT: kernels_matmul(x->out, t->concat, t->in->W_O, n, d, d); break;
    case STAGE_SCORES:
        for (int h = 0; h < t->heads; h++)
            kernels_scores(x->out, t->Q, t->K, n, m, d_k, d, h * d_k);
        break;
    case STAGE_SCALED:
    case STAGE_MASKED: /* what showing every cell costs: they are derived on demand */
        for (int h = 1; h <= t->heads; h++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++) {
                    double v = trace_value(t, stage, h, i, j);
                    x->sink += isinf(v) ? 0.0 : v;
                }
        break;
    case STAGE_WEIGHTS: {
        kernels_softmax_rule rule = { t->in->scale, d_k, t->in->mask, t->in->mask_cells };
        for (int h = 0; h < t->heads; h++)
            kernels_softmax(x->out, t->scores + (size_t)h * nm, n, m, &rule);
        break;
    }
    case STAGE_CONTEXT:
        for (int h = 0; h < t->heads; h++)
            kernels_context(x->out, t->weights + (size_t)h * nm, t->V, n, m, d_k, d, h * d_k);
        break;
    case STAGE_CONCAT:
        for (int h = 0; h < t->heads; h++)
            for (int i = 0; i < n; i++)
                memcpy(x->out + (size_t)i * (size_t)d + (size_t)(h * d_k),
                       t->context + ((size_t)h * (size_t)n + (size_t)i) * (size_t)d_k,
                       (size_t)d_k * sizeof(double));
        break;
    case STAGE_COUNT:
        break;
    }
}

/* Seconds per run of a stage: runs it 1, 2, 4, … times until a batch takes a millisecond, so a
 * 2-token lesson is timed above the clock's resolution, then takes the best of three batches. */
static double time_stage(timing *x, stage_id stage)
{
    long runs = 1;
    double best = INFINITY;
    for (int batch = 0; batch < 3; batch++) {
        double elapsed;
        for (;;) {
            double start = now();
            for (long r = 0; r < runs; r++)
                run_stage(x, stage);
            elapsed = now() - start;
            if (elapsed >= 1e-3 || runs >= (1L << 20))
                break;
            runs *= 2;
        }
        if (elapsed / (double)runs < best)
            best = elapsed / (double)runs;
    }
    return best;
}

/* The scratch that stats_time writes into: the largest matrix of one stage and head. */
static size_t scratch_doubles(const trace *t)
{
    size_t n = (size_t)t->n, m = (size_t)t->m, d = (size_t)t->d_model;
    size_t size = n * m;
    if (n * d > size)
        size = n * d;
    if (m * d > size)
        size = m * d;
    return size;
}

bool stats_time(const trace *t, stats_table *table)
{
    timing x = { t, malloc(scratch_doubles(t) * sizeof(double)), 0.0 };
    if (!x.out)
        return false;
    table->total.seconds = 0.0;
    for (int s = 0; s < table->count; s++) {
        table->stages[s].seconds = time_stage(&x, table->stages[s].stage);
        table->total.seconds += table->stages[s].seconds;
    }
    free(x.out);
    return true;
}

size_t stats_peak_memory(void)
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    return (size_t)usage.ru_maxrss * 1024; /* Linux counts kibibytes */
}

/* "12.3 ms", "850 µs", "4.1 s": three significant digits at most. */
static void format_seconds(double seconds, char *buffer, size_t size)
{
    if (seconds >= 1.0)
        snprintf(buffer, size, "%.2f s", seconds);
    else if (seconds >= 1e-3)
        snprintf(buffer, size, "%.*f ms", seconds >= 0.1 ? 0 : seconds >= 0.01 ? 1 : 2,
                 seconds * 1e3);
    else if (seconds >= 1e-6)
        snprintf(buffer, size, "%.*f µs", seconds >= 1e-4 ? 0 : seconds >= 1e-5 ? 1 : 2,
                 seconds * 1e6);
    else
        snprintf(buffer, size, "%.0f ns", seconds * 1e9);
}

/* "512 B", "2.0 KiB", "64.0 MiB". */
static void format_bytes(size_t bytes, char *buffer, size_t size)
{
    static const char *const units[] = { "KiB", "MiB", "GiB" };
    if (bytes < 1024) {
        snprintf(buffer, size, "%zu B", bytes);
        return;
    }
    double value = (double)bytes / 1024.0;
    int unit = 0;
    while (value >= 1024.0 && unit < 2) {
        value /= 1024.0;
        unit++;
    }
    snprintf(buffer, size, unit == 2 ? "%.2f %s" : "%.1f %s", value, units[unit]);
}

/* "1,048,576": digits grouped by three, so counts can be checked by hand; from ten million on,
 * "134.2 M" or "4.295 G", which fits the columns. */
static void format_count(tally value, char *buffer, size_t size)
{
    if (value >= 10000000000ULL) {
        snprintf(buffer, size, "%.1f G", (double)value * 1e-9);
        return;
    }
    if (value >= 1000000000ULL) {
        snprintf(buffer, size, "%.3f G", (double)value * 1e-9);
        return;
    }
    if (value >= 10000000ULL) {
        snprintf(buffer, size, "%.1f M", (double)value * 1e-6);
        return;
    }
    char digits[32];
    int length = snprintf(digits, sizeof digits, "%llu", value), at = 0;
    for (int i = 0; i < length && (size_t)at + 2 < size; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            buffer[at++] = ',';
        buffer[at++] = digits[i];
    }
    buffer[at] = '\0';
}

static const char *const mask_names[] = {
    [MASK_NONE] = "no mask", [MASK_CAUSAL] = "causal mask", [MASK_EXPLICIT] = "lesson's mask",
};

/* Columns that UTF-8 text takes (×, ÷, µ are one column in two bytes): printf pads bytes. */
static int columns(const char *text)
{
    int width = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        width += (*c & 0xC0) != 0x80;
    return width;
}

/* Prints text in a field of width columns, left- or right-aligned, with at least one space on
 * the side facing its neighbour even when the text is wider than the field. */
static void put_field(FILE *out, const char *text, int width, bool left)
{
    int pad = width - columns(text);
    if (!left)
        fprintf(out, "%*s", pad > 1 ? pad : 1, "");
    fputs(text, out);
    if (left)
        fprintf(out, "%*s", pad > 1 ? pad : 1, "");
}

/* One line of the --stats table: stage, shape, multiplications, additions, exponentials,
 * divisions, bytes held, time. */
static void print_stats_line(FILE *out, const char *const fields[8])
{
    static const int widths[8] = { -13, -14, 15, 11, 10, 10, 11, 9 };
    for (int f = 0; f < 8; f++)
        put_field(out, fields[f], abs(widths[f]), widths[f] < 0);
    fputc('\n', out);
}

/* Writes one row of the --stats table. */
static void print_stage_row(FILE *out, const char *name, const stats_stage *s, bool derived)
{
    char shape[48], mults[32], adds[32], exps[32], divs[32], held[32], time[32];
    if (s->stage == STAGE_COUNT)
        snprintf(shape, sizeof shape, " ");
    else if (s->heads > 1)
        snprintf(shape, sizeof shape, "%d × %d×%d", s->heads, s->rows, s->cols);
    else
        snprintf(shape, sizeof shape, "%d×%d", s->rows, s->cols);
    format_count(s->multiplications, mults, sizeof mults);
    format_count(s->additions, adds, sizeof adds);
    format_count(s->exponentials, exps, sizeof exps);
    format_count(s->divisions, divs, sizeof divs);
    if (derived)
        snprintf(held, sizeof held, "(derived)");
    else
        format_bytes(s->bytes, held, sizeof held);
    format_seconds(s->seconds, time, sizeof time);
    const char *const fields[] = { name, shape, mults, adds, exps, divs, held, time };
    print_stats_line(out, fields);
}

int stats_print(const trace *t, const char *title, FILE *out)
{
    stats_table table;
    stats_count(t, &table);
    /* the peak so far is what loading the lesson and computing the trace took; the timing's
     * scratch comes on top and is reported apart */
    size_t peak = stats_peak_memory();
    if (!stats_time(t, &table))
        return -1;
    fprintf(out, "Cost of %s\nn = %d query tokens, m = %d key tokens, d_model = %d, "
            "%d head%s of d_k = %d, %s%s\n\n", title ? title : "the lesson", t->n, t->m,
            t->d_model, t->heads, t->heads == 1 ? "" : "s", t->d_k, mask_names[t->in->mask],
            t->in->scale ? ", scaled by 1/√d_k" : "");
    static const char *const heading[] = { "stage", "shape", "multiplications", "additions",
                                           "exp", "÷", "held", "time" };
    print_stats_line(out, heading);
    for (int s = 0; s < table.count; s++) {
        const stats_stage *row = &table.stages[s];
        bool derived = row->stage == STAGE_SCALED || row->stage == STAGE_MASKED;
        print_stage_row(out, stage_get(row->stage)->name, row, derived);
    }
    print_stage_row(out, "total", &table.total, false);
    char peak_text[32], scratch[32];
    format_bytes(peak, peak_text, sizeof peak_text);
    format_bytes(scratch_doubles(t) * sizeof(double), scratch, sizeof scratch);
    fprintf(out, "\nPeak memory of this process (max RSS) while loading and computing: %s;\n"
            "the timing above then wrote into %s of scratch besides.\n"
            "\nA dot product of k terms counts k multiplications and k − 1 additions (a\n"
            "subtraction counts as an addition). The stages scaled and masked are not stored:\n"
            "they are derived from scores when shown, and their time is what deriving every\n"
            "cell once costs. Each time is the stage run again alone with the core's kernels,\n"
            "the best of three batches.\n", peak_text, scratch);
    return ferror(out) ? -1 : 0;
}

/* One size of --cost. */
typedef struct {
    int n;
    tally multiplications, quadratic;  /* all, and those of scores and context (n² of them) */
    double seconds;
    size_t bytes;
} cost_row;

/* Best time of trace_compute over repeated runs: at least three, so that one run slowed by
 * other work on the machine does not count, and more while under 0.3 s in all. */
static bool measure(const attention_input *in, cost_row *row)
{
    double best = INFINITY, spent = 0.0;
    for (int run = 0; run < 50 && (run < 3 || spent < 0.3); run++) {
        trace t;
        double start = now();
        if (trace_compute(in, &t, NULL) != TRACE_OK)
            return false;
        double elapsed = now() - start;
        spent += elapsed;
        best = elapsed < best ? elapsed : best;
        if (run == 0) {
            stats_table table;
            stats_count(&t, &table);
            row->multiplications = table.total.multiplications;
            for (int s = 0; s < table.count; s++)
                if (table.stages[s].stage == STAGE_SCORES || table.stages[s].stage == STAGE_CONTEXT)
                    row->quadratic += table.stages[s].multiplications;
        }
        trace_free(&t);
    }
    row->seconds = best;
    row->bytes = trace_bytes_needed(in);
    return true;
}

/* One line of the --cost table: n, then multiplications, those of the n² part, time and memory,
 * each with its ratio to the line before. */
static void print_cost_line(FILE *out, const char *const fields[9])
{
    static const int widths[9] = { 6, 16, 7, 16, 7, 10, 7, 12, 7 };
    for (int f = 0; f < 9; f++)
        put_field(out, fields[f], widths[f], false);
    fputc('\n', out);
}

static void format_ratio(double now_value, double before, char *buffer, size_t size)
{
    if (before > 0.0)
        snprintf(buffer, size, "×%.2f", now_value / before);
    else
        snprintf(buffer, size, " ");
}

/* Marks for a time on the plot's log₂ scale: one for the first size's time, three more for
 * every doubling of it. */
static int marks_for(double seconds, double first)
{
    double doublings = log2(seconds / first);
    return 1 + (int)lround(3.0 * (doublings > 0 ? doublings : 0));
}

/* Bars on a log₂ scale, so that a quadrupling (what doubling n does to the n² part) always adds
 * six marks, whatever the sizes. */
static void plot(FILE *out, const cost_row *rows, int count)
{
    fprintf(out, "\nTime on a log scale (every ▮▮▮ more is twice the time, so ×4 adds six):\n");
    for (int r = 0; r < count; r++) {
        int marks = marks_for(rows[r].seconds, rows[0].seconds);
        fprintf(out, "  n = %5d ", rows[r].n);
        for (int i = 0; i < marks; i++)
            fputs("▮", out);
        char time[32];
        format_seconds(rows[r].seconds, time, sizeof time);
        fprintf(out, " %s\n", time);
    }
}

int stats_cost(int d_model, int heads, FILE *out)
{
    if (d_model < 1 || heads < 1 || d_model % heads != 0)
        return -1;
    size_t d = (size_t)d_model;
    int last = STATS_COST_LAST_N;
    /* the weights alone may already be over the limit: then not even n = 16 is computed */
    attention_input smallest = { .n_tokens = STATS_COST_FIRST_N, .d_model = d_model,
                                 .heads = heads };
    if (trace_bytes_needed(&smallest) > TRACE_MAX_BYTES || 4 * d * d > TRACE_MAX_BYTES / 8) {
        fprintf(out, "(nothing computed: at d_model = %d the trace of n = %d, or the four "
                "d_model×d_model\nweight matrices, would be over the 1 GiB limit)\n", d_model,
                STATS_COST_FIRST_N);
        return ferror(out) ? -1 : 0;
    }
    double *embeddings = malloc((size_t)last * d * sizeof(double));
    double *weights = malloc(4 * d * d * sizeof(double));
    const char **tokens = malloc((size_t)last * sizeof *tokens);
    if (!embeddings || !weights || !tokens) {
        free(embeddings);
        free(weights);
        free(tokens);
        return -1;
    }
    /* random sentences: every n takes the first n rows of one table of embeddings */
    random_state state;
    random_seed(&state, 2024);
    random_fill(&state, RANDOM_NORMAL, 0, 1.0, embeddings, (size_t)last * d);
    random_fill(&state, RANDOM_XAVIER, 2 * d_model, 1.0, weights, 4 * d * d);
    for (int i = 0; i < last; i++)
        tokens[i] = "w";
    fprintf(out, "How attention's cost grows with the sentence: d_model = %d, %d head%s of "
            "d_k = %d,\nrandom embeddings and weights, no mask, each time the best of repeated "
            "runs of the whole trace.\n\n", d_model, heads, heads == 1 ? "" : "s",
            d_model / heads);
    static const char *const heading[] = { "n", "multiplications", "", "in QKᵀ and W·V", "",
                                           "time", "", "memory held", "" };
    print_cost_line(out, heading);
    cost_row rows[16];
    int count = 0, status = 0;
    for (int n = STATS_COST_FIRST_N; n <= last; n *= 2) {
        attention_input in = {
            .n_tokens = n, .tokens = tokens, .d_model = d_model, .heads = heads,
            .embeddings = embeddings, .W_Q = weights, .W_K = weights + d * d,
            .W_V = weights + 2 * d * d, .W_O = weights + 3 * d * d, .mask = MASK_NONE,
            .scale = true,
        };
        size_t bytes = trace_bytes_needed(&in);
        if (bytes > TRACE_MAX_BYTES) {
            char need[32];
            format_bytes(bytes, need, sizeof need);
            fprintf(out, "(stopped before n = %d: its trace would hold %s, over the 1 GiB "
                    "limit)\n", n, need);
            break;
        }
        cost_row *row = &rows[count];
        *row = (cost_row){ .n = n };
        if (!measure(&in, row)) {
            status = -1;
            break;
        }
        char mults[32], quadratic[32], time[32], memory[32], r1[16], r2[16], r3[16], r4[16];
        format_count(row->multiplications, mults, sizeof mults);
        format_count(row->quadratic, quadratic, sizeof quadratic);
        format_seconds(row->seconds, time, sizeof time);
        format_bytes(row->bytes, memory, sizeof memory);
        const cost_row *before = count > 0 ? &rows[count - 1] : NULL;
        format_ratio((double)row->multiplications, before ? (double)before->multiplications : 0,
                     r1, sizeof r1);
        format_ratio((double)row->quadratic, before ? (double)before->quadratic : 0, r2,
                     sizeof r2);
        format_ratio(row->seconds, before ? before->seconds : 0, r3, sizeof r3);
        format_ratio((double)row->bytes, before ? (double)before->bytes : 0, r4, sizeof r4);
        char size[16];
        snprintf(size, sizeof size, "%d", n);
        const char *const line[] = { size, mults, r1, quadratic, r2, time, r3, memory, r4 };
        print_cost_line(out, line);
        fflush(out);
        count++;
    }
    if (count > 0) {
        plot(out, rows, count);
        fprintf(out, "\nScores (Q·Kᵀ) and context (weights·V) take 2·n²·d_model multiplications:"
                " doubling n\nquadruples them (×4.00 above), while the projections "
                "(4·n·d_model²) only double.\nOnce n is well past d_model the n² part dominates,"
                " and time and memory grow\nabout ×4 per doubling too.\n");
    }
    free(embeddings);
    free(weights);
    free(tokens);
    return status == 0 && !ferror(out) ? 0 : -1;
}
