/* Times the attention core on random inputs, for tests/bench/run.sh: `bench_trace N D_MODEL HEADS
 * REPEATS [positional] [reference]` prints the best and median seconds of the forward pass computed
 * on memory already allocated and touched (every stored stage run again, as --stats does, after a
 * first trace and a warm-up run), apart from them the best time of a whole trace_compute with its
 * allocation and its page faults (minor faults per trace), and the peak RSS once the trace is
 * computed (before the timing's scratch matrix), and the code the products ran on (path=avx512,
 * avx2+fma, neon or portable) with the CPU time over the wall time of the timed runs (cores=, how many
 * cores it really had). ATTNSTEP_THREADS and ATTNSTEP_PORTABLE set the core's options, as they do
 * for attnstep.
 * With `reference`, the same forward pass by the textbook loops of tests/textbook.c (the ones
 * tests/test_kernels.c holds the kernels to, and holds to the trace): best and median seconds on
 * its own blocks, already touched, the peak RSS with them, and the largest difference of its
 * output from the core's trace (max_output_diff=, rounding only: the loops' products are the
 * kernels' to the bit, their exp is libm's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cost.h"
#include "kernels.h"
#include "random.h"
#include "textbook.h"
#include "trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (every thread), in seconds. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What is timed: the core's stored stages on a trace's memory, or the textbook loops. */
typedef struct {
    trace *t;
    const trace_options *options;
    double *scratch;
    textbook_attention *textbook;   /* the reference loops instead, when not NULL */
} work;

static void run_once(const work *w)
{
    if (w->textbook) {
        textbook_attention_compute(w->textbook);
        return;
    }
    for (int s = 0; s < STAGE_COUNT; s++)
        if (trace_has_stage(w->t, (stage_id)s) && stage_get((stage_id)s)->storage == STAGE_STORED)
            cost_run(w->t, w->options, (stage_id)s, w->scratch);
}

/* A warm-up run, then REPEATS timed runs and more (up to 1000) until 50 ms are spent, where only a
 * better best counts. Writes the best and median seconds and the CPU time over the wall time. */
static bool time_work(const work *w, int repeats, double *best, double *median, double *cores)
{
    double *times = malloc((size_t)repeats * sizeof *times);
    if (!times)
        return false;
    double spent = 0.0, cpu_start = cpu_seconds(), wall_start = now();
    int done = 0;
    for (int r = -1; r < repeats || (spent < 0.05 && done < 1000); r++) {  /* r = -1: warm-up */
        double start = now();
        run_once(w);
        double elapsed = now() - start;
        if (r < 0)
            continue;
        spent += elapsed;
        if (done < repeats)
            times[done++] = elapsed;
        else if (elapsed < times[0])
            times[0] = elapsed;   /* past REPEATS (under 50 ms in all): only a better best */
    }
    *cores = (cpu_seconds() - cpu_start) / (now() - wall_start);
    qsort(times, (size_t)done, sizeof *times, by_value);
    *best = times[0];
    *median = times[done / 2];
    free(times);
    return true;
}

static long peak_rss_kb(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

/* The textbook loops on blocks of their own (touched by the warm-up run), then the core's trace
 * of the same input, to say how far apart their outputs are. */
static int time_reference(const attention_input *in, const trace_options *options, int repeats)
{
    size_t nd = (size_t)in->n_tokens * (size_t)in->d_model;
    size_t nn = (size_t)in->heads * (size_t)in->n_tokens * (size_t)in->n_tokens;
    double *blocks = calloc(5 * nd + 2 * nn, sizeof(double));
    if (!blocks)
        return 70;
    textbook_attention a = {
        .n = in->n_tokens, .d_model = in->d_model, .heads = in->heads, .scale = in->scale,
        .input = in->embeddings, .W_Q = in->W_Q, .W_K = in->W_K, .W_V = in->W_V, .W_O = in->W_O,
        .Q = blocks, .K = blocks + nd, .V = blocks + 2 * nd, .concat = blocks + 3 * nd,
        .output = blocks + 4 * nd, .scores = blocks + 5 * nd, .weights = blocks + 5 * nd + nn,
    };
    work w = { .textbook = &a };
    double best, median, cores;
    if (!time_work(&w, repeats, &best, &median, &cores))
        return 70;
    long peak_kb = peak_rss_kb();
    trace t;
    if (trace_compute(in, options, &t, NULL) != TRACE_OK)
        return 70;
    const double *output = trace_block(&t, STAGE_OUTPUT, 1);
    double diff = 0.0;
    for (size_t i = 0; i < nd; i++)
        diff = fmax(diff, fabs(output[i] - a.output[i]));
    printf("best_s=%.6f median_s=%.6f peak_rss_kb=%ld max_output_diff=%.3g cores=%.2f "
           "path=textbook\n", best, median, peak_kb, diff, cores);
    trace_free(&t);
    free(blocks);
    return 0;
}

/* The core: whole trace_computes on fresh memory (allocation and page faults included), then the
 * stored stages again on one trace's memory, already touched. */
static int time_core(const attention_input *in, const trace_options *options, int repeats)
{
    double alloc_best = 1e300;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    long faults = usage.ru_minflt;
    for (int r = 0; r < 3; r++) {
        trace t;
        double start = now();
        trace_status status = trace_compute(in, options, &t, NULL);
        double elapsed = now() - start;
        if (status != TRACE_OK) {
            fprintf(stderr, "bench_trace: %s\n", trace_status_message(status));
            return 70;
        }
        alloc_best = elapsed < alloc_best ? elapsed : alloc_best;
        trace_free(&t);
    }
    getrusage(RUSAGE_SELF, &usage);
    double faults_per_trace = (double)(usage.ru_minflt - faults) / 3.0;
    trace t;
    if (trace_compute(in, options, &t, NULL) != TRACE_OK)
        return 70;
    long peak_kb = peak_rss_kb();   /* the peak of the program's own work: inputs and a trace */
    double *scratch = malloc(cost_scratch_doubles(&t) * sizeof(double));
    work w = { .t = &t, .options = options, .scratch = scratch };
    double best, median, cores;
    if (!scratch || !time_work(&w, repeats, &best, &median, &cores))
        return 70;
    size_t nd = (size_t)in->n_tokens * (size_t)in->d_model;
    double checksum = scratch[0] + trace_block(&t, STAGE_OUTPUT, 1)[nd - 1];
    kernels_config kernels = { .threads = options->threads, .portable = options->portable };
    printf("best_s=%.6f median_s=%.6f alloc_best_s=%.6f faults_per_trace=%.0f peak_rss_kb=%ld "
           "checksum=%.17g path=%s cores=%.2f\n", best, median, alloc_best, faults_per_trace,
           peak_kb, checksum, kernels_path_name(&kernels), cores);
    free(scratch);
    trace_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    bool positional = false, reference = false;
    for (int i = 5; i < argc; i++) {
        positional = positional || strcmp(argv[i], "positional") == 0;
        reference = reference || strcmp(argv[i], "reference") == 0;
    }
    if (argc < 5 || argc - 5 != positional + reference || (positional && reference)) {
        fprintf(stderr, "usage: bench_trace N D_MODEL HEADS REPEATS [positional | reference]\n");
        return 64;
    }
    int n = atoi(argv[1]), d = atoi(argv[2]), heads = atoi(argv[3]), repeats = atoi(argv[4]);
    if (n < 1 || d < 1 || heads < 1 || d % heads != 0 || repeats < 1) {
        fprintf(stderr, "bench_trace: N, D_MODEL, HEADS and REPEATS from 1, HEADS dividing D_MODEL\n");
        return 64;
    }
    size_t nd = (size_t)n * (size_t)d, dd = (size_t)d * (size_t)d;
    double *embeddings = malloc(nd * sizeof(double));
    double *w = malloc(4 * dd * sizeof(double));
    const char **tokens = malloc((size_t)n * sizeof *tokens);
    if (!embeddings || !w || !tokens)
        return 70;
    random_state rng;
    random_seed(&rng, 42);
    random_fill(&rng, RANDOM_NORMAL, 0, 1.0, embeddings, nd);
    random_fill(&rng, RANDOM_XAVIER, 2 * d, 1.0, w, 4 * dd);
    for (int i = 0; i < n; i++)
        tokens[i] = "t";
    attention_input in = {
        .n_tokens = n, .tokens = tokens, .d_model = d, .heads = heads, .embeddings = embeddings,
        .W_Q = w, .W_K = w + dd, .W_V = w + 2 * dd, .W_O = w + 3 * dd, .mask = MASK_NONE,
        .positional = positional, .scale = true,
    };
    const char *threads = getenv("ATTNSTEP_THREADS"), *portable = getenv("ATTNSTEP_PORTABLE");
    trace_options options = { threads ? atoi(threads) : 0,
                              portable && *portable && strcmp(portable, "0") != 0 };
    int status = reference ? time_reference(&in, &options, repeats)
                           : time_core(&in, &options, repeats);
    free(embeddings);
    free(w);
    free(tokens);
    return status;
}
