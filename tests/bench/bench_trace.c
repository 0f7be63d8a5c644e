/* Times the attention core on random inputs, for tests/bench/run.sh: `bench_trace N D_MODEL HEADS
 * REPEATS` prints the best and median seconds of the forward pass computed on memory already
 * allocated and touched (every stored stage run again, as --stats does, after a first trace and
 * a warm-up run), apart from them the best time of a whole trace_compute with its allocation and
 * its page faults (minor faults per trace), and the peak RSS once the trace is computed (before
 * the timing's scratch matrix), and the code the products ran on (path=avx512, avx2+fma or
 * portable) with the CPU time over the wall time of the timed runs (cores=, how many cores it
 * really had). ATTNSTEP_THREADS and
 * ATTNSTEP_PORTABLE set the core's options, as they do for attnstep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cost.h"
#include "kernels.h"
#include "random.h"
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

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_trace N D_MODEL HEADS REPEATS [positional]\n");
        return 64;
    }
    int n = atoi(argv[1]), d = atoi(argv[2]), heads = atoi(argv[3]), repeats = atoi(argv[4]);
    bool positional = argc > 5 && strcmp(argv[5], "positional") == 0;
    size_t nd = (size_t)n * (size_t)d, dd = (size_t)d * (size_t)d;
    double *embeddings = malloc(nd * sizeof(double));
    double *w = malloc(4 * dd * sizeof(double));
    const char **tokens = malloc((size_t)n * sizeof *tokens);
    if (!embeddings || !w || !tokens || repeats < 1)
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
    /* a whole trace_compute, each on fresh memory: allocation and page faults included */
    double alloc_best = 1e300, checksum = 0.0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    long faults = usage.ru_minflt;
    for (int r = 0; r < 3; r++) {
        trace t;
        double start = now();
        trace_status status = trace_compute(&in, &options, &t, NULL);
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
    /* the forward pass on one trace's memory, already touched: each stored stage again */
    trace t;
    if (trace_compute(&in, &options, &t, NULL) != TRACE_OK)
        return 70;
    getrusage(RUSAGE_SELF, &usage);   /* the peak of the program's own work: inputs and a trace */
    long peak_kb = usage.ru_maxrss;
    double *scratch = malloc(cost_scratch_doubles(&t) * sizeof(double));
    double *times = malloc((size_t)repeats * sizeof *times);
    if (!scratch || !times)
        return 70;
    double spent = 0.0, cpu_start = cpu_seconds(), wall_start = now();
    int done = 0;
    for (int r = -1; r < repeats || (spent < 0.05 && done < 1000); r++) {  /* r = -1: warm-up */
        double start = now();
        for (int s = 0; s < STAGE_COUNT; s++)
            if (trace_has_stage(&t, (stage_id)s) && stage_get((stage_id)s)->storage == STAGE_STORED)
                cost_run(&t, &options, (stage_id)s, scratch);
        double elapsed = now() - start;
        if (r < 0)
            continue;
        spent += elapsed;
        if (done < repeats)
            times[done++] = elapsed;
        else if (elapsed < times[0])
            times[0] = elapsed;   /* past REPEATS (under 50 ms in all): only a better best */
    }
    double cores = (cpu_seconds() - cpu_start) / (now() - wall_start);
    checksum = scratch[0] + trace_block(&t, STAGE_OUTPUT, 1)[nd - 1];
    qsort(times, (size_t)done, sizeof *times, by_value);
    kernels_config kernels = { .threads = options.threads, .portable = options.portable };
    printf("best_s=%.6f median_s=%.6f alloc_best_s=%.6f faults_per_trace=%.0f peak_rss_kb=%ld "
           "checksum=%.17g path=%s cores=%.2f\n", times[0], times[done / 2], alloc_best,
           faults_per_trace, peak_kb, checksum, kernels_path_name(&kernels), cores);
    free(scratch);
    trace_free(&t);
    free(times);
    free(embeddings);
    free(w);
    free(tokens);
    return 0;
}
