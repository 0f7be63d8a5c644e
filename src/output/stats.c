/* The cost of attention, counted and measured: `--stats` (per stage of one trace) and `--cost`
 * (how multiplications, time and memory grow with the sentence length). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cost.h"
#include "decode.h"
#include "number.h"
#include "random.h"
#include "stats.h"
#include "text.h"
#include "walk.h"

typedef unsigned long long tally;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add_to_total(stats_stage *total, const stats_stage *s)
{
    total->counts.multiplications += s->counts.multiplications;
    total->counts.additions += s->counts.additions;
    total->counts.divisions += s->counts.divisions;
    total->counts.exponentials += s->counts.exponentials;
    total->counts.bytes += s->counts.bytes;
    total->seconds += s->seconds;
}

/* One entry: the stage's row of the table counts it (cost.h). */
static stats_stage count_stage(const trace *t, stage_id stage)
{
    stats_stage s = { .stage = stage, .heads = stage_get(stage)->per_head ? t->heads : 1,
                      .rows = trace_rows(t, stage), .cols = trace_cols(t, stage) };
    cost_stage(t, stage, &s.counts);
    return s;
}

bool stats_count(const trace *t, stats_table *table)
{
    memset(table, 0, sizeof *table);
    table->total.stage = STAGE_COUNT;
    /* the pipeline walk visits each head of a per-head stage in turn; one entry per stage */
    walk w;
    if (!walk_build_pipeline(&w, t))
        return false;
    for (int k = 0; k < w.count; k++) {
        stage_id stage = w.steps[k].stage;
        if (table->count > 0 && table->stages[table->count - 1].stage == stage)
            continue;
        table->stages[table->count] = count_stage(t, stage);
        add_to_total(&table->total, &table->stages[table->count]);
        table->count++;
    }
    walk_free(&w);
    return true;
}

/* What one timed run does: stages of t run once each (every head), into scratch. */
typedef struct {
    const trace *t;
    const trace_options *options;
    const stage_id *stages;
    int count;
    double *scratch;
} timed_work;

static void run_work(void *context)
{
    const timed_work *w = context;
    for (int i = 0; i < w->count; i++)
        cost_run(w->t, w->options, w->stages[i], w->scratch);
}

/* One run of anything timed: run(context). */
typedef void timed_run(void *context);

/* Seconds of one batch of runs. */
static double run_batch(timed_run *run, void *context, long runs)
{
    double start = now();
    for (long r = 0; r < runs; r++)
        run(context);
    return now() - start;
}

/* Seconds per run, on memory already allocated and touched: one run first (it touches the
 * scratch and brings the trace's blocks into the caches, so no page fault is timed), then
 * batches of 1, 2, 4, … runs until a batch takes a millisecond (above the clock's resolution),
 * then more batches of that size until min_seconds and STATS_MIN_BATCHES are reached;
 * the best batch, the one least disturbed by other work on the machine. */
static double best_time_of(timed_run *run, void *context, double min_seconds)
{
    run(context);
    long runs = 1;
    double elapsed = run_batch(run, context, runs), spent = elapsed;
    while (elapsed < 1e-3 && runs < (1L << 20)) {
        runs *= 2;
        elapsed = run_batch(run, context, runs);
        spent += elapsed;
    }
    double best = elapsed / (double)runs;
    for (int batch = 1; batch < STATS_MIN_BATCHES || spent < min_seconds; batch++) {
        elapsed = run_batch(run, context, runs);
        spent += elapsed;
        if (elapsed / (double)runs < best)
            best = elapsed / (double)runs;
    }
    return best;
}

static double best_time(timed_work *w, double min_seconds)
{
    return best_time_of(run_work, w, min_seconds);
}

/* The smaller of a time kept so far (round 0: none) and a new round's. */
static double best_of_rounds(int round, double kept, double seconds)
{
    return round == 0 || seconds < kept ? seconds : kept;
}

bool stats_time(const trace *t, const trace_options *options, double min_seconds,
                stats_table *table)
{
    double *scratch = malloc(cost_scratch_doubles(t) * sizeof(double));
    if (!scratch)
        return false;
    for (int round = 0; round < STATS_ROUNDS; round++)
        for (int s = 0; s < table->count; s++) {
            timed_work w = { t, options, &table->stages[s].stage, 1, scratch };
            table->stages[s].seconds = best_of_rounds(round, table->stages[s].seconds,
                                                      best_time(&w, min_seconds));
        }
    table->total.seconds = 0.0;
    for (int s = 0; s < table->count; s++)
        table->total.seconds += table->stages[s].seconds;
    free(scratch);
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
    number_write_count(value, buffer, size);
}

/* Prints text in a field of width columns, left- or right-aligned, with at least one space on
 * the side facing its neighbour even when the text is wider than the field. */
static void put_field(FILE *out, const char *text, int width, bool left)
{
    int pad = width - text_width(text);
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
    format_count(s->counts.multiplications, mults, sizeof mults);
    format_count(s->counts.additions, adds, sizeof adds);
    format_count(s->counts.exponentials, exps, sizeof exps);
    format_count(s->counts.divisions, divs, sizeof divs);
    if (derived)
        snprintf(held, sizeof held, "(derived)");
    else
        format_bytes(s->counts.bytes, held, sizeof held);
    format_seconds(s->seconds, time, sizeof time);
    const char *const fields[] = { name, shape, mults, adds, exps, divs, held, time };
    print_stats_line(out, fields);
}

/* The KV cache a model generating these tokens keeps: K and V, m rows of kv_heads·d_k doubles
 * each, against full multi-head attention's d_model columns (the same with kv_heads = heads). */
static void print_kv_cache(FILE *out, const trace *t)
{
    size_t rows = (size_t)t->m, kv = (size_t)t->kv_heads * (size_t)t->d_k;
    char cache[32], full[32];
    format_bytes(2 * rows * kv * sizeof(double), cache, sizeof cache);
    format_bytes(2 * rows * (size_t)t->d_model * sizeof(double), full, sizeof full);
    fprintf(out, "\nKV cache: K and V, %zu rows of %zu numbers each = %s", rows, kv, cache);
    if (t->kv_heads < t->heads)
        fprintf(out, ";\nfull multi-head attention would keep %zu numbers a row = %s (kv_heads "
                "%d of %d heads: 1/%d).\n", (size_t)t->d_model, full, t->kv_heads, t->heads,
                t->heads / t->kv_heads);
    else
        fprintf(out, " (full multi-head attention).\n");
}

/* "  W_K    4×2            8": a name, a shape and a count in columns. */
static void print_parameter_line(FILE *out, const char *name, const char *shape,
                                 const char *count)
{
    fputs(" ", out);
    put_field(out, name, 7, true);
    put_field(out, shape, 8, true);
    put_field(out, count, 10, false);
    fputs("\n", out);
}

/* The layer's parameters, one line each with its shape and count, and their total: what a
 * student compares with a model's published counts (3Blue1Brown's per-head and per-block
 * ones). */
static void print_parameters(FILE *out, const trace *t)
{
    unsigned long long total = 0;
    char count[32];
    fprintf(out, "\nParameters of the layer (what training learns):\n");
    for (int p = 0; p < PARAM_COUNT; p++) {
        unsigned long long n = cost_parameter_count(t, (param_id)p);
        if (n == 0)
            continue;
        const param_info *info = param_get((param_id)p);
        char shape[48];
        snprintf(shape, sizeof shape, "%d×%d", trace_axis_length(t, info->rows),
                 trace_axis_length(t, info->cols));
        format_count(n, count, sizeof count);
        print_parameter_line(out, info->name, shape, count);
        total += n;
    }
    format_count(total, count, sizeof count);
    print_parameter_line(out, "total", "", count);
}

/* A decode to time: tokens 0 … position − 1 decoded, the cache ready for token position. */
typedef struct {
    decode_state state;
    int position;
    const trace_options *options;
} timed_decode;

/* One token with the cache: its rows only, against the position cached keys and values. */
static void run_cached_token(void *context)
{
    timed_decode *d = context;
    d->state.length = d->position;
    decode_token(&d->state, d->options);
}

/* The same token without a cache: every row of the prefix 0 … position computed again. */
static void run_prefix(void *context)
{
    timed_decode *d = context;
    d->state.length = 0;
    while (d->state.length <= d->position)
        decode_token(&d->state, d->options);
}

/* Measures token `position` with the cache and by recomputing its prefix, into seconds[2]. */
static bool time_decode(const trace *t, const trace_options *options, double min_seconds,
                        int position, double seconds[2])
{
    timed_decode d = { .position = position, .options = options };
    if (!decode_begin(&d.state, t))
        return false;
    run_prefix(&d);
    for (int round = 0; round < STATS_ROUNDS; round++) {
        seconds[0] = best_of_rounds(round, seconds[0], best_time_of(run_cached_token, &d,
                                                                  min_seconds));
        seconds[1] = best_of_rounds(round, seconds[1], best_time_of(run_prefix, &d, min_seconds));
    }
    decode_free(&d.state);
    return true;
}

/* decode: true: the work of generating each token, with the cache (linear in t) and by
 * recomputing its prefix (quadratic), counted for every token and measured for the last. */
static int print_decode(FILE *out, const trace *t, const trace_options *options,
                        double min_seconds)
{
    double seconds[2];
    if (!time_decode(t, options, min_seconds, t->n - 1, seconds))
        return -1;
    fprintf(out, "\nDecoding with a KV cache: the multiplications of generating token t\n");
    fputs("    t  with the cache  recomputing the prefix\n", out);
    for (int p = 0; p < t->n; p++) {
        char cached[32], prefix[32];
        format_count(decode_token_multiplications(t, p), cached, sizeof cached);
        format_count(decode_prefix_multiplications(t, p), prefix, sizeof prefix);
        fprintf(out, "%5d", p);
        put_field(out, cached, 16, false);
        put_field(out, prefix, 24, false);
        fputc('\n', out);
    }
    char cached_time[32], prefix_time[32];
    format_seconds(seconds[0], cached_time, sizeof cached_time);
    format_seconds(seconds[1], prefix_time, sizeof prefix_time);
    fprintf(out, "Measured for the last token (t = %d): %s with the cache, %s recomputing "
            "the prefix.\nWith the cache each token adds one row of K and V and one score "
            "per cached key;\nwithout it every earlier row is computed again.\n", t->n - 1,
            cached_time, prefix_time);
    return 0;
}

/* The derived stages of t by name, from the node table: "scaled and masked". */
static void derived_names(const trace *t, char *out, size_t size)
{
    int count = 0, written = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        count += trace_has_stage(t, (stage_id)s) && stage_get((stage_id)s)->storage == STAGE_DERIVED;
    for (int s = 0, k = 0; s < STAGE_COUNT; s++) {
        if (!trace_has_stage(t, (stage_id)s) || stage_get((stage_id)s)->storage != STAGE_DERIVED)
            continue;
        k++;
        const char *joint = k == 1 ? "" : k == count ? " and " : ", ";
        size_t used = (size_t)written < size ? (size_t)written : size;
        written += snprintf(out + used, size - used, "%s%s", joint, stage_get((stage_id)s)->name);
    }
}

int stats_print(const trace *t, const trace_options *options, double min_seconds,
                const char *title, FILE *out)
{
    stats_table table;
    if (!stats_count(t, &table))
        return -1;
    /* the peak so far is what loading the lesson and computing the trace took; the timing's
     * scratch comes on top and is reported apart */
    size_t peak = stats_peak_memory();
    if (!stats_time(t, options, min_seconds, &table))
        return -1;
    char window[64] = "";  /* a window's size: each query sees itself and W − 1 keys before */
    if (t->in->mask == MASK_WINDOW)
        snprintf(window, sizeof window, " of W = %d keys", t->in->window);
    fprintf(out, "Cost of %s\nn = %d query tokens, m = %d key tokens, d_model = %d, "
            "%d head%s of d_k = %d, %s%s%s%s\n\n", title ? title : "the lesson", t->n, t->m,
            t->d_model, t->heads, t->heads == 1 ? "" : "s", t->d_k,
            trace_mask_name(t->in->mask), window, ", ", trace_scaling_words(t));
    static const char *const heading[] = { "stage", "shape", "multiplications", "additions",
                                           "exp", "÷", "held", "time" };
    print_stats_line(out, heading);
    for (int s = 0; s < table.count; s++) {
        const stats_stage *row = &table.stages[s];
        /* a derived stage holds nothing, but masked under a window holds its visible cells */
        bool derived = stage_get(row->stage)->storage == STAGE_DERIVED && row->counts.bytes == 0;
        print_stage_row(out, stage_get(row->stage)->name, row, derived);
    }
    print_stage_row(out, "total", &table.total, false);
    print_kv_cache(out, t);
    print_parameters(out, t);
    if (t->in->decode && decode_supported(t) && print_decode(out, t, options, min_seconds) != 0)
        return -1;
    char peak_text[32], scratch[32], derived[128] = "";
    format_bytes(peak, peak_text, sizeof peak_text);
    format_bytes(cost_scratch_doubles(t) * sizeof(double), scratch, sizeof scratch);
    derived_names(t, derived, sizeof derived);
    fprintf(out, "\nPeak memory of this process (max RSS) while loading and computing: %s;\n"
            "the timing above then wrote into %s of scratch besides.\n"
            "\nA dot product of k terms counts k multiplications and k − 1 additions (a\n"
            "subtraction counts as an addition). The stages %s are not stored:\n"
            "they are derived from the stages they read when shown, and their time is what\n"
            "deriving every cell once costs. Each time is the stage run again alone with the\n"
            "core's kernels, on the trace's memory and a scratch matrix already touched (no\n"
            "allocation and no page fault is timed): the best of %d rounds taken stage after\n"
            "stage, each the best of batches of runs repeated for at least %.0f ms.\n",
            peak_text, scratch, derived, STATS_ROUNDS, min_seconds * 1e3);
    if (t->in->norm != NORM_NONE)   /* cost_counts has no column for a root */
        fprintf(out, "The norm's square roots, one a row, are not counted.\n");
    if (t->in->target)   /* the backward pass adds each product into its gradient block */
        fprintf(out, "In the backward pass (the d_ stages) a product's cell of k terms counts k\n"
                "multiplications and k additions: its sum, and the addition into the gradient.\n");
    return ferror(out) ? -1 : 0;
}

/* The two parts --cost times apart, read from the node table: the projections, whose work
 * grows as n, and the attention proper, every stored per-head stage (scores, softmax, context),
 * whose work grows as n². */
enum { LINEAR = 0, QUADRATIC = 1, PARTS = 2 };

static bool in_part(const trace *t, stage_id stage, int part)
{
    const stage_info *info = stage_get(stage);
    if (!trace_has_stage(t, stage))
        return false;
    return part == LINEAR ? info->family == FAMILY_PROJECTION
                          : info->per_head && info->storage == STAGE_STORED;
}

/* The stages of a part, in table order, into stages; returns how many. */
static int part_stages(const trace *t, int part, stage_id stages[STAGE_COUNT])
{
    int count = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (in_part(t, (stage_id)s, part))
            stages[count++] = (stage_id)s;
    return count;
}

/* One size of --cost: for each part, its multiplications and its measured seconds. */
typedef struct {
    int n;
    tally multiplications[PARTS];
    double seconds[PARTS];
    size_t bytes;
} cost_row;

/* The multiplications of a part, from the counted table. */
static tally part_multiplications(const trace *t, const stats_table *table, int part)
{
    tally sum = 0;
    for (int s = 0; s < table->count; s++)
        if (in_part(t, table->stages[s].stage, part))
            sum += table->stages[s].counts.multiplications;
    return sum;
}

/* Computes the trace of one size once (allocating and touching its memory), then times each
 * part on it with best_time, into one scratch matrix allocated for the size. */
static bool measure(const attention_input *in, const trace_options *options,
                    double min_seconds, cost_row *row)
{
    trace t;
    if (trace_compute(in, options, &t, NULL) != TRACE_OK)
        return false;
    stats_table table;
    double *scratch = malloc(cost_scratch_doubles(&t) * sizeof(double));
    bool ok = scratch && stats_count(&t, &table);
    for (int round = 0; ok && round < STATS_ROUNDS; round++)
        for (int part = 0; part < PARTS; part++) {
            stage_id stages[STAGE_COUNT];
            timed_work w = { &t, options, stages, part_stages(&t, part, stages), scratch };
            row->multiplications[part] = part_multiplications(&t, &table, part);
            row->seconds[part] = best_of_rounds(round, row->seconds[part],
                                                best_time(&w, min_seconds));
        }
    free(scratch);
    trace_free(&t);
    row->bytes = trace_bytes_needed(in);
    return ok;
}

/* One line of the --cost table: n, then the multiplications of each part, the time of each
 * part and the memory, each with its ratio to the line before. */
enum { COST_FIELDS = 11 };
static void print_cost_line(FILE *out, const char *const fields[COST_FIELDS])
{
    static const int widths[COST_FIELDS] = { 6, 13, 7, 13, 7, 11, 7, 11, 7, 11, 7 };
    for (int f = 0; f < COST_FIELDS; f++)
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

/* Bars on a log₂ scale, so that a quadrupling (what doubling n does to the n² work) always
 * adds six marks, whatever the sizes. */
static void plot(FILE *out, const cost_row *rows, int count)
{
    fprintf(out, "\nTime of scores, softmax and context on a log scale (every ▮▮▮ more is "
            "twice the time,\nso ×4 adds six):\n");
    for (int r = 0; r < count; r++) {
        int marks = marks_for(rows[r].seconds[QUADRATIC], rows[0].seconds[QUADRATIC]);
        fprintf(out, "  n = %5d ", rows[r].n);
        for (int i = 0; i < marks; i++)
            fputs("▮", out);
        char time[32];
        format_seconds(rows[r].seconds[QUADRATIC], time, sizeof time);
        fprintf(out, " %s\n", time);
    }
}

static void print_cost_row(FILE *out, const cost_row *row, const cost_row *before)
{
    char counts[PARTS][32], times[PARTS][32], memory[32], ratios[5][16], size[16];
    for (int part = 0; part < PARTS; part++) {
        format_count(row->multiplications[part], counts[part], sizeof counts[part]);
        format_seconds(row->seconds[part], times[part], sizeof times[part]);
        format_ratio((double)row->multiplications[part],
                     before ? (double)before->multiplications[part] : 0, ratios[part],
                     sizeof ratios[part]);
        format_ratio(row->seconds[part], before ? before->seconds[part] : 0, ratios[2 + part],
                     sizeof ratios[2 + part]);
    }
    format_bytes(row->bytes, memory, sizeof memory);
    format_ratio((double)row->bytes, before ? (double)before->bytes : 0, ratios[4],
                 sizeof ratios[4]);
    snprintf(size, sizeof size, "%d", row->n);
    const char *const line[COST_FIELDS] = { size, counts[LINEAR], ratios[0], counts[QUADRATIC],
                                            ratios[1], times[LINEAR], ratios[2],
                                            times[QUADRATIC], ratios[3], memory, ratios[4] };
    print_cost_line(out, line);
}

/* The mean ratio per doubling of a part's time from row `from` to the last: the geometric mean
 * of the ratios in its column, (last / first)^(1 / doublings). */
static double ratio_per_doubling(const cost_row *rows, int from, int count, int part)
{
    return pow(rows[count - 1].seconds[part] / rows[from].seconds[part],
               1.0 / (double)(count - 1 - from));
}

/* What the table shows, in words: the counts' exact ratios, and the measured ratios computed
 * from the table itself (so the text cannot contradict it). */
static void summarize(FILE *out, const cost_row *rows, int count)
{
    fprintf(out, "\nCounted: doubling n doubles the projections' multiplications "
            "(4·n·d_model²) and\nquadruples those of QKᵀ and weights·V (2·n²·d_model): the "
            "×2.00 and ×4.00 of\nthe count columns are exact, on any machine.\n");
    if (count < 2)
        return;
    int late = 0;  /* the first row from n = 256 on, when it leaves two rows or more */
    while (late < count - 2 && rows[late].n < 256)
        late++;
    fprintf(out, "Measured here, per doubling of n on average (the geometric mean of the "
            "ratios above):\nscores, softmax and context ×%.2f from n = %d to %d",
            ratio_per_doubling(rows, 0, count, QUADRATIC), rows[0].n, rows[count - 1].n);
    if (late > 0)
        fprintf(out, " (×%.2f from n = %d)", ratio_per_doubling(rows, late, count, QUADRATIC),
                rows[late].n);
    fprintf(out, ";\nthe projections ×%.2f", ratio_per_doubling(rows, 0, count, LINEAR));
    if (late > 0)
        fprintf(out, " (×%.2f from n = %d)", ratio_per_doubling(rows, late, count, LINEAR),
                rows[late].n);
    fprintf(out, ". Times depend on the machine and\non what else runs on it: compare them "
            "only between runs on a quiet machine.\n");
}

/* Random sentences for --cost: one table of embeddings whose first n rows are the sentence of
 * n tokens, and the four weight matrices, drawn once from a fixed seed. */
typedef struct {
    double *embeddings;   /* (last, d_model) */
    double *weights;      /* W_Q, W_K, W_V, W_O: (d_model, d_model) each, one after another */
    const char **tokens;  /* (last), every one "w" */
    int d_model, heads;
} random_sentences;

static void sentences_free(random_sentences *s)
{
    free(s->embeddings);
    free(s->weights);
    free(s->tokens);
    *s = (random_sentences){ 0 };
}

/* False when out of memory (s is then empty). */
static bool sentences_make(random_sentences *s, int last, int d_model, int heads)
{
    size_t d = (size_t)d_model;
    *s = (random_sentences){ malloc((size_t)last * d * sizeof(double)),
                             malloc(4 * d * d * sizeof(double)),
                             malloc((size_t)last * sizeof(const char *)), d_model, heads };
    if (!s->embeddings || !s->weights || !s->tokens) {
        sentences_free(s);
        return false;
    }
    random_state state;
    random_seed(&state, 2024);
    random_fill(&state, RANDOM_NORMAL, 0, 1.0, s->embeddings, (size_t)last * d);
    random_fill(&state, RANDOM_XAVIER, 2 * d_model, 1.0, s->weights, 4 * d * d);
    for (int i = 0; i < last; i++)
        s->tokens[i] = "w";
    return true;
}

/* The sentence of the first n tokens, scaled, without a mask. */
static attention_input sentences_input(const random_sentences *s, int n)
{
    size_t dd = (size_t)s->d_model * (size_t)s->d_model;
    return (attention_input){
        .n_tokens = n, .tokens = s->tokens, .d_model = s->d_model, .heads = s->heads,
        .embeddings = s->embeddings, .W_Q = s->weights, .W_K = s->weights + dd,
        .W_V = s->weights + 2 * dd, .W_O = s->weights + 3 * dd, .mask = MASK_NONE,
        .scale = true,
    };
}

int stats_cost(int d_model, int heads, const trace_options *options, double min_seconds,
               FILE *out)
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
    random_sentences sentences;
    if (!sentences_make(&sentences, last, d_model, heads))
        return -1;
    fprintf(out, "How attention's cost grows with the sentence: d_model = %d, %d head%s of "
            "d_k = %d,\nrandom embeddings and weights, no mask. The projections (Q, K, V, "
            "output) and the\nattention proper (scores, softmax, context) are timed apart, "
            "each on a trace computed\nonce per size (no allocation or page fault is timed): "
            "the best of %d rounds, each the best\nof batches of runs repeated for at least "
            "%.0f ms.\n\n", d_model, heads, heads == 1 ? "" : "s", d_model / heads,
            STATS_ROUNDS, min_seconds * 1e3);
    static const char *const heading1[COST_FIELDS] = { "", "", "", "multiplications", "", "",
                                                       "", "time", "", "memory", "" };
    static const char *const heading2[COST_FIELDS] = { "n", "projections", "", "QKᵀ, W·V", "",
                                                       "projections", "", "attention", "",
                                                       "held", "" };
    print_cost_line(out, heading1);
    print_cost_line(out, heading2);
    cost_row rows[16];
    int count = 0, status = 0;
    for (int n = STATS_COST_FIRST_N; n <= last; n *= 2) {
        attention_input in = sentences_input(&sentences, n);
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
        if (!measure(&in, options, min_seconds, row)) {
            status = -1;
            break;
        }
        print_cost_row(out, row, count > 0 ? &rows[count - 1] : NULL);
        fflush(out);
        count++;
    }
    if (count > 0) {
        plot(out, rows, count);
        summarize(out, rows, count);
    }
    sentences_free(&sentences);
    return status == 0 && !ferror(out) ? 0 : -1;
}

/* One size of --cost --decode: the last token of n, with the cache and recomputing its
 * prefix: multiplications and measured seconds of each. */
typedef struct {
    int n;
    tally multiplications[2];
    double seconds[2];
} decode_row;

static bool measure_decode(const attention_input *in, const trace_options *options,
                           double min_seconds, decode_row *row)
{
    trace t;
    if (trace_compute(in, options, &t, NULL) != TRACE_OK)
        return false;
    row->multiplications[0] = decode_token_multiplications(&t, t.n - 1);
    row->multiplications[1] = decode_prefix_multiplications(&t, t.n - 1);
    bool ok = time_decode(&t, options, min_seconds, t.n - 1, row->seconds);
    trace_free(&t);
    return ok;
}

static void print_decode_row(FILE *out, const decode_row *row, const decode_row *before)
{
    char size[16], counts[2][32], times[2][32], ratios[4][16];
    snprintf(size, sizeof size, "%d", row->n);
    for (int way = 0; way < 2; way++) {
        format_count(row->multiplications[way], counts[way], sizeof counts[way]);
        format_seconds(row->seconds[way], times[way], sizeof times[way]);
        format_ratio((double)row->multiplications[way],
                     before ? (double)before->multiplications[way] : 0, ratios[2 * way],
                     sizeof ratios[2 * way]);
        format_ratio(row->seconds[way], before ? before->seconds[way] : 0, ratios[2 * way + 1],
                     sizeof ratios[2 * way + 1]);
    }
    const char *const line[9] = { size, counts[0], ratios[0], times[0], ratios[1], counts[1],
                                  ratios[2], times[1], ratios[3] };
    static const int widths[9] = { 6, 13, 7, 11, 7, 13, 7, 11, 7 };
    for (int f = 0; f < 9; f++)
        put_field(out, line[f], widths[f], false);
    fputc('\n', out);
}

int stats_cost_decode(int d_model, int heads, const trace_options *options, double min_seconds,
                      FILE *out)
{
    if (d_model < 1 || heads < 1 || d_model % heads != 0)
        return -1;
    size_t d = (size_t)d_model;
    int last = STATS_COST_DECODE_LAST_N;
    attention_input smallest = { .n_tokens = last, .d_model = d_model, .heads = heads,
                                 .mask = MASK_CAUSAL, .decode = true };
    if (trace_bytes_needed(&smallest) > TRACE_MAX_BYTES / 2 || 4 * d * d > TRACE_MAX_BYTES / 8) {
        fprintf(out, "(nothing computed: at d_model = %d the traces would be over the 1 GiB "
                "limit)\n", d_model);
        return ferror(out) ? -1 : 0;
    }
    random_sentences sentences;
    int status = sentences_make(&sentences, last, d_model, heads) ? 0 : -1;
    if (status == 0) {
        fprintf(out, "How generating one token grows with the sentence: d_model = %d, %d head%s, "
                "causal,\nrandom embeddings and weights. The last token of n tokens, with a KV "
                "cache (its own\nq, k and v rows, then scores and context against the n cached "
                "rows) and without one\n(every row of the prefix computed again), each the best "
                "of %d rounds of batches of runs\nrepeated for at least %.0f ms.\n\n", d_model,
                heads, heads == 1 ? "" : "s", STATS_ROUNDS, min_seconds * 1e3);
        static const char *const heading[9] = { "n", "mults", "", "time", "", "mults", "",
                                                "time", "" };
        static const int widths[9] = { 6, 13, 7, 11, 7, 13, 7, 11, 7 };
        fprintf(out, "%6s %-37s %-37s\n", "", "       with the KV cache",
                "     recomputing the prefix");
        for (int f = 0; f < 9; f++)
            put_field(out, heading[f], widths[f], false);
        fputc('\n', out);
    }
    decode_row rows[16];
    int count = 0;
    for (int n = STATS_COST_FIRST_N; status == 0 && n <= last; n *= 2) {
        attention_input in = sentences_input(&sentences, n);
        in.mask = MASK_CAUSAL;
        in.decode = true;
        rows[count] = (decode_row){ .n = n };
        if (!measure_decode(&in, options, min_seconds, &rows[count])) {
            status = -1;
            break;
        }
        print_decode_row(out, &rows[count], count > 0 ? &rows[count - 1] : NULL);
        fflush(out);
        count++;
    }
    if (status == 0 && count > 1) {
        double cached = pow(rows[count - 1].seconds[0] / rows[0].seconds[0], 1.0 / (count - 1));
        double prefix = pow(rows[count - 1].seconds[1] / rows[0].seconds[1], 1.0 / (count - 1));
        fprintf(out, "\nCounted: with the cache token t costs 4·d_model² + 2·(t + 1)·d_model "
                "multiplications,\nlinear in t (its projections dominate while t < 2·d_model); "
                "recomputing the prefix costs\nthe sum of that over every earlier token, "
                "quadratic in t (its ratios climb towards ×4).\nMeasured here, per doubling of "
                "n on average: ×%.2f with the cache, ×%.2f recomputing\nthe prefix. Times depend on "
                "the machine and on what else runs on it.\n", cached, prefix);
    }
    sentences_free(&sentences);
    return status == 0 && !ferror(out) ? 0 : -1;
}
