/* The kernels' elementwise work: the stable row softmax with its own exponential, and the scan
 * for non-finite numbers. One body of vector code (kernels_rows.h), built once per path: eight
 * lanes for AVX-512, four for AVX2 with FMA, NEON and the portable code, with the same
 * operations in the same order per lane, so every path gives the same bits. See kernels.h. */
#include <math.h>
#include <string.h>
#include "kernels_private.h"

/* Four and eight doubles as one value: GCC and Clang lower v4d to one AVX2 register or two SSE2
 * or NEON ones, v8d to one AVX-512 register (v8d is built for AVX-512 only: without it GCC
 * splits its comparisons lane by lane). v4i, v8i are the same bits seen as integers (comparisons
 * give all-ones or zero lanes). The row sums keep four lanes (v4d), the order they always had. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));
typedef unsigned long long v4u __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8i __attribute__((vector_size(64)));
typedef unsigned long long v8u __attribute__((vector_size(64)));

/* memcpy, which compilers turn into vector loads and stores, avoids both alignment and
 * strict-aliasing assumptions. */
#define LOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define STORE(p, v) memcpy((p), &(v), sizeof(v))

/* How a build computes a fused multiply-add: a constant in each build, so the branches fold. */
typedef enum { FUSED_LIBM, FUSED_AVX2, FUSED_AVX512, FUSED_NEON } fused_kind;

#ifdef KERNELS_X86
/* *p = *p · *r + *c rounded once, by the FMA instruction: eight lanes (AVX-512) or four (AVX2).
 * Not always_inline: the other builds name them too (in a branch they never take), where they
 * cannot be inlined. Vectors go by pointer, which keeps the calling convention out of it. */
AVX512 static inline void fused8_avx512(v8d *p, const v8d *r, const v8d *c)
{
    *p = _mm512_fmadd_pd(*p, *r, *c);
}

AVX2_FMA static inline void fused4_avx2(v4d *p, const v4d *r, const v4d *c)
{
    *p = _mm256_fmadd_pd(*p, *r, *c);
}
#endif

/* *p = *p · *r + *c rounded once, eight lanes: the FMA instruction of AVX-512, else libm's fma,
 * lane by lane; the same bits either way. */
static inline __attribute__((always_inline))
void fused8(v8d *p, const v8d *r, const v8d *c, fused_kind kind)
{
#ifdef KERNELS_X86
    if (kind == FUSED_AVX512) {
        fused8_avx512(p, r, c);
        return;
    }
#endif
    (void)kind;
    for (int lane = 0; lane < 8; lane++)
        (*p)[lane] = fma((*p)[lane], (*r)[lane], (*c)[lane]);
}

/* The same on four lanes: AVX2's instruction, two NEON ones (vfmaq_f64(c, p, r) = c + p·r), or
 * libm's fma. */
static inline __attribute__((always_inline))
void fused4(v4d *p, const v4d *r, const v4d *c, fused_kind kind)
{
#ifdef KERNELS_X86
    if (kind == FUSED_AVX2) {
        fused4_avx2(p, r, c);
        return;
    }
#endif
#ifdef KERNELS_NEON
    if (kind == FUSED_NEON) {
        double pl[4], rl[4], cl[4];
        memcpy(pl, p, sizeof pl);
        memcpy(rl, r, sizeof rl);
        memcpy(cl, c, sizeof cl);
        for (int half = 0; half < 4; half += 2)
            vst1q_f64(pl + half, vfmaq_f64(vld1q_f64(cl + half), vld1q_f64(pl + half),
                                           vld1q_f64(rl + half)));
        memcpy(p, pl, sizeof pl);
        return;
    }
#endif
    (void)kind;
    for (int lane = 0; lane < 4; lane++)
        (*p)[lane] = fma((*p)[lane], (*r)[lane], (*c)[lane]);
}

/* The body, four lanes wide, then eight. */
#define VEC v4d
#define VECI v4i
#define VECU v4u
#define LANES 4
#define W(name) name##_4
#define FUSED fused4
#include "kernels_rows.h"
#undef VEC
#undef VECI
#undef VECU
#undef LANES
#undef W
#undef FUSED
#ifdef KERNELS_X86
#define VEC v8d
#define VECI v8i
#define VECU v8u
#define LANES 8
#define W(name) name##_8
#define FUSED fused8
#include "kernels_rows.h"
#undef VEC
#undef VECI
#undef VECU
#undef LANES
#undef W
#undef FUSED
#endif

/* One build of the elementwise kernels per path: the same source at the path's width, the
 * target's instructions. */
typedef struct {
    double (*scale_max)(double *w, const double *s, int count, bool scale, double divisor);
    void (*exp_normalise)(double *w, int m, double row_max);
    void (*exp_array)(double *out, const double *in, size_t count);
    bool (*all_finite)(const double *x, size_t count);
} row_kernels;

#define ROW_KERNELS(suffix, attributes, kind, width)                                       \
    attributes static double scale_max_##suffix(double *w, const double *s, int count,       \
                                                bool scale, double divisor)                 \
    {                                                                                       \
        return scale_max_##width(w, s, count, scale, divisor);                              \
    }                                                                                       \
    attributes static void exp_normalise_##suffix(double *w, int m, double row_max)          \
    {                                                                                       \
        exp_normalise_##width(w, m, row_max, kind);                                         \
    }                                                                                       \
    attributes static void exp_array_##suffix(double *out, const double *in, size_t count)   \
    {                                                                                       \
        exp_array_##width(out, in, count, kind);                                            \
    }                                                                                       \
    attributes static bool all_finite_##suffix(const double *x, size_t count)               \
    {                                                                                       \
        return all_finite_##width(x, count);                                                \
    }                                                                                       \
    static const row_kernels row_kernels_##suffix = {                                        \
        scale_max_##suffix, exp_normalise_##suffix, exp_array_##suffix, all_finite_##suffix, \
    };

ROW_KERNELS(portable, , FUSED_LIBM, 4)
#ifdef KERNELS_X86
ROW_KERNELS(avx2, AVX2_FMA, FUSED_AVX2, 4)
ROW_KERNELS(avx512, AVX512, FUSED_AVX512, 8)
#endif
#ifdef KERNELS_NEON
ROW_KERNELS(neon, , FUSED_NEON, 4)
#endif

/* The build that config's path runs (the finite scan needs only AVX2, which both x86 vector
 * paths have). */
static const row_kernels *row_kernels_for(const kernels_config *config)
{
    switch (kernels_path_of(config)) {
#ifdef KERNELS_X86
    case PATH_AVX512:
        return &row_kernels_avx512;
    case PATH_AVX2_FMA:
        return &row_kernels_avx2;
#endif
#ifdef KERNELS_NEON
    case PATH_NEON:
        return &row_kernels_neon;
#endif
    default:
        return &row_kernels_portable;
    }
}

void kernels_exp_nonpositive(double *out, const double *in, size_t count,
                             const kernels_config *config)
{
    row_kernels_for(config)->exp_array(out, in, count);
}

bool kernels_all_finite(const double *x, size_t count, const kernels_config *config)
{
    return row_kernels_for(config)->all_finite(x, count);
}

typedef struct {
    double *weights;
    const double *scores;
    int n, m;
    const kernels_softmax_rule *rule;
    const row_kernels *code;
} softmax_job;

/* Rows in one chunk of a softmax: enough to make taking a chunk cheap beside computing it. */
#define SOFTMAX_ROWS 8

/* One chunk of rows of a softmax, row by row: the scaled scores into weights with their max,
 * hidden cells −∞ (so their exponential is exactly 0), then the row's stable softmax. A causal
 * row scales only the cells it sees; a row under an allowed mask is scaled whole, masked, and
 * its max taken again over what it sees. */
static void softmax_work(void *argument, int chunk, double *scratch)
{
    (void)scratch;
    const softmax_job *x = argument;
    const kernels_softmax_rule *rule = x->rule;
    const row_kernels *code = x->code;
    int row0 = chunk * SOFTMAX_ROWS, m = x->m;
    int end = x->n - row0 < SOFTMAX_ROWS ? x->n : row0 + SOFTMAX_ROWS;
    for (int i = row0; i < end; i++) {
        double *w = x->weights + (size_t)i * (size_t)m;
        const double *s = x->scores + (size_t)i * (size_t)m;
        const unsigned char *allowed = rule->causal ? NULL : rule->allowed;
        int seen = rule->causal && i + 1 < m ? i + 1 : m;
        double row_max = code->scale_max(w, s, seen, rule->scale, rule->divisor);
        for (int j = seen; j < m; j++)
            w[j] = -INFINITY;
        if (allowed) {
            for (int j = 0; j < m; j++)
                if (allowed[(size_t)i * (size_t)m + (size_t)j] == 0)
                    w[j] = -INFINITY;
            row_max = code->scale_max(w, w, m, false, 1.0);
        }
        code->exp_normalise(w, m, row_max);
    }
}

void kernels_softmax(double *weights, const double *scores, int n, int m,
                     const kernels_softmax_rule *rule, const kernels_config *config)
{
    softmax_job job = { weights, scores, n, m, rule, row_kernels_for(config) };
    /* an exponential costs about as much as twenty multiply-adds */
    kernels_run_shared(softmax_work, &job, (n + SOFTMAX_ROWS - 1) / SOFTMAX_ROWS, NULL, 0,
                       20.0 * (double)n * (double)m, config);
}
