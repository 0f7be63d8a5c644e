/* Times the attention core's full trace (trace_compute) on random inputs, for tests/bench/run.sh:
 * `bench_trace N D_MODEL HEADS REPEATS` prints the best and median seconds and the peak RSS.
 * ATTNSTEP_THREADS and ATTNSTEP_PORTABLE set the core's options, as they do for attnstep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "trace.h"
#include "random.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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
    double *times = malloc((size_t)repeats * sizeof *times);
    double checksum = 0.0;
    for (int r = 0; r < repeats; r++) {
        trace t;
        trace_failure failure;
        double start = now();
        trace_status status = trace_compute(&in, &options, &t, &failure);
        times[r] = now() - start;
        if (status != TRACE_OK) {
            fprintf(stderr, "bench_trace: %s\n", trace_status_message(status));
            return 70;
        }
        const double *output = trace_block(&t, STAGE_OUTPUT, 1);
        checksum = output[0] + output[nd - 1];
        trace_free(&t);
    }
    qsort(times, (size_t)repeats, sizeof *times, by_value);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("best_s=%.6f median_s=%.6f peak_rss_kb=%ld checksum=%.17g\n", times[0],
           times[repeats / 2], usage.ru_maxrss, checksum);
    free(times);
    free(embeddings);
    free(w);
    free(tokens);
    return 0;
}
