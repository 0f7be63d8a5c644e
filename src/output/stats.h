/* What attention costs: per stage, the multiplications, additions and bytes of a trace and its
 * measured time (`--stats`), and how they grow with the sentence length (`--cost`). */
#ifndef ATTNSTEP_STATS_H
#define ATTNSTEP_STATS_H

#include <stdbool.h>
#include <stdio.h>
#include "cost.h"
#include "trace.h"

/* One stage, over all its heads. A dot product of k terms counts k multiplications and k − 1
 * additions; "other" work is counted apart: divisions and exponentials. */
typedef struct {
    stage_id stage;
    int heads;                          /* matrices in the stage: t->heads if per head, else 1 */
    int rows, cols;                     /* of one matrix */
    cost_counts counts;                 /* from the stage's row (cost.h); additions include
                                           subtractions */
    double seconds;                     /* measured by stats_time, all heads; 0 before */
} stats_stage;

typedef struct {
    int count;                          /* stages present, in step-list order */
    stats_stage stages[STAGE_COUNT];
    stats_stage total;                  /* sums; total.stage is STAGE_COUNT */
} stats_table;

/* Fills table with the counts and bytes of every stage of t (each from its stage-table row),
 * one entry per stage of the pipeline walk (the heads of a per-head stage together). The bytes
 * add up to trace_bytes_needed. Returns false when out of memory. */
bool stats_count(const trace *t, stats_table *table);

/* Measures each stage by running its row's compute function again, alone, on the trace's own
 * blocks into scratch memory, with the kernels as options say (NULL: defaults), and stores the
 * seconds (and their total) in table. Derived stages are timed as reading every cell. Each time
 * is taken on memory already allocated and touched (a first run warms it up), as the best of
 * batches of runs repeated for at least min_seconds (STATS_MIN_SECONDS unless
 * ATTNSTEP_TIMING_MS says otherwise; and STATS_MIN_BATCHES batches), the best of STATS_ROUNDS
 * rounds taken stage after stage. Returns false when the scratch memory cannot be had. */
bool stats_time(const trace *t, const trace_options *options, double min_seconds,
                stats_table *table);

/* The process's peak resident memory so far, in bytes (getrusage's ru_maxrss). */
size_t stats_peak_memory(void);

/* `--stats`: the table of t (counted and timed as stats_time does, for min_seconds), then the
 * totals and the peak memory. title names the lesson. Returns 0, or -1 when out of memory or
 * when writing fails. */
int stats_print(const trace *t, const trace_options *options, double min_seconds,
                const char *title, FILE *out);

/* `--cost`: computes traces of random sentences of n = 16, 32, … 2048 tokens at d_model and
 * heads, and prints how multiplications, time and memory grow, with a plot. Stops, with a
 * note, before a size whose trace would exceed TRACE_MAX_BYTES. Returns 0, or -1 when the
 * shape is impossible, memory runs out or writing fails. options as for trace_compute;
 * min_seconds as for stats_time. */
int stats_cost(int d_model, int heads, const trace_options *options, double min_seconds,
               FILE *out);

/* `--cost --decode`: for n = 16, 32, … STATS_COST_DECODE_LAST_N random tokens under a causal
 * mask, the multiplications and measured time of generating the last token with a KV cache
 * (linear in n) and by recomputing its prefix (quadratic), with their ratios per doubling.
 * Returns 0, or -1 when the shape is impossible, memory runs out or writing fails. */
int stats_cost_decode(int d_model, int heads, const trace_options *options, double min_seconds,
                      FILE *out);

/* How long each time of --stats and --cost is measured for, at least, unless the caller says
 * otherwise (main: ATTNSTEP_TIMING_MS; the tests make it tiny, to check the text and not the
 * machine), and in how many batches: long enough that the best batch is stable from one run to
 * the next. */
#define STATS_MIN_SECONDS 0.05
#define STATS_MIN_BATCHES 3
/* Every time is taken in this many rounds, in turn with the other times of its table, and the
 * best round kept: a stretch of other work on a shared machine then slows one round of each
 * time, not every batch of one of them. */
#define STATS_ROUNDS 3

/* The n of --cost's rows: 16 doubled up to 2048; the shape when --d-model and --heads are not
 * given (small enough that the n² part dominates from a few hundred tokens on). */
#define STATS_COST_FIRST_N 16
#define STATS_COST_LAST_N 2048
#define STATS_COST_D_MODEL 64
#define STATS_COST_HEADS 4
#define STATS_COST_DECODE_LAST_N 1024

#endif
