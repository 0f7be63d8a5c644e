/* Times the kernels alone at the shapes of one attention layer, for tests/bench/run.sh and for
 * tuning them: `bench_kernels N D_MODEL HEADS` prints one line per kernel, key=value: its best
 * seconds over repeated runs on memory already touched, and its GFLOP/s (two flops per fused
 * multiply-add; the softmax counts none, its rate is given in exponentials per second).
 * ATTNSTEP_THREADS and ATTNSTEP_PORTABLE choose the kernels' options as they do for attnstep; a
 * fourth argument `avx2` runs the AVX2 code where the processor has AVX-512 (kernels_config's
 * no_avx512), to time the path of AVX2-only processors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    int n, d, heads, d_k;
    double *x, *w, *q, *k, *scores, *weights, *context;
    kernels_config config;
} layer;

typedef void kernel_run(const layer *l);

static void run_projection(const layer *l)
{
    kernels_matmul(l->q, l->x, l->w, l->n, l->d, l->d, &l->config);
}

static void run_scores(const layer *l)
{
    for (int h = 0; h < l->heads; h++)
        kernels_scores(l->scores, l->q, l->k, l->n, l->n, l->d_k, l->d, h * l->d_k, &l->config);
}

static void run_softmax(const layer *l)
{
    kernels_softmax_rule rule = { .scale = true, .divisor = 8.0 };
    for (int h = 0; h < l->heads; h++)
        kernels_softmax(l->weights, l->scores, l->n, l->n, &rule, &l->config);
}

static void run_context(const layer *l)
{
    for (int h = 0; h < l->heads; h++)
        kernels_context(l->context + (size_t)h * (size_t)l->n * (size_t)l->d_k, l->weights, l->k,
                        l->n, l->n, l->d_k, l->d, h * l->d_k, &l->config);
}

/* The best of runs repeated for at least 0.2 s (at least 5), after a warm-up. */
static double best_time(kernel_run *run, const layer *l)
{
    double best = 1e300, spent = 0.0;
    run(l);
    for (int r = 0; r < 5 || spent < 0.2; r++) {
        double start = now();
        run(l);
        double t = now() - start;
        spent += t;
        best = t < best ? t : best;
    }
    return best;
}

static double *filled(size_t count, double scale)
{
    double *x = malloc(count * sizeof *x);
    if (x)
        for (size_t i = 0; i < count; i++)
            x[i] = scale * (double)((i * 2654435761u) % 1000u) / 1000.0 - scale / 2;
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "avx2") == 0)) {
        fprintf(stderr, "usage: bench_kernels N D_MODEL HEADS [avx2]\n");
        return 64;
    }
    layer l = { .n = atoi(argv[1]), .d = atoi(argv[2]), .heads = atoi(argv[3]) };
    if (l.n < 1 || l.d < 1 || l.heads < 1 || l.d % l.heads != 0) {
        fprintf(stderr, "bench_kernels: N, D_MODEL, HEADS from 1, HEADS dividing D_MODEL\n");
        return 64;
    }
    l.d_k = l.d / l.heads;
    const char *threads = getenv("ATTNSTEP_THREADS"), *portable = getenv("ATTNSTEP_PORTABLE");
    l.config = (kernels_config){ threads ? atoi(threads) : 0,
                                 portable && *portable && strcmp(portable, "0") != 0, argc == 5 };
    size_t nd = (size_t)l.n * (size_t)l.d, nn = (size_t)l.n * (size_t)l.n;
    l.x = filled(nd, 2.0), l.w = filled((size_t)l.d * (size_t)l.d, 0.1), l.q = filled(nd, 1.0);
    l.k = filled(nd, 1.0), l.scores = filled(nn, 4.0), l.weights = filled(nn, 1.0);
    l.context = filled(nd, 1.0);
    if (!l.x || !l.w || !l.q || !l.k || !l.scores || !l.weights || !l.context)
        return 70;
    double n = l.n, d = l.d;
    struct {
        const char *name;
        kernel_run *run;
        double fmas;   /* fused multiply-adds (or, for the softmax, exponentials) a run */
    } kernels[] = {
        { "projection", run_projection, n * d * d },
        { "scores", run_scores, n * n * d },
        { "softmax", run_softmax, n * n * l.heads },
        { "context", run_context, n * n * d },
    };
    printf("path=%s threads=%d\n", kernels_path_name(&l.config), kernels_threads(&l.config));
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        double t = best_time(kernels[k].run, &l);
        if (kernels[k].run == run_softmax)
            printf("kernel=%s best_s=%.6f gexp_per_s=%.3f\n", kernels[k].name, t,
                   kernels[k].fmas / t * 1e-9);
        else
            printf("kernel=%s best_s=%.6f gflops=%.1f\n", kernels[k].name, t,
                   2.0 * kernels[k].fmas / t * 1e-9);
    }
    free(l.x), free(l.w), free(l.q), free(l.k), free(l.scores), free(l.weights), free(l.context);
    return 0;
}
