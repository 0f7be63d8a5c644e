/* Fast kernels for the attention core: a cache-blocked, register-tiled matrix product (packed
 * panels, 6×8 or 6×16 tiles in vector registers, fused multiply-add; AVX2 or AVX-512 on x86-64,
 * NEON on AArch64) and the stable row softmax,
 * split by rows across threads when large. See kernels.h. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1  /* madvise's MADV_HUGEPAGE */
#endif
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kernels.h"

/* Every multiply-add that is meant to be fused is written as one (fma or an intrinsic); no other
 * a·b + c may be fused by the compiler, or the softmax would differ between the vector and the
 * portable code (GCC's -std=c11 already keeps contraction off; Clang needs telling). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Register tile: MR rows of A times nr columns of B (NR_AVX2 = 8 or NR_AVX512 = 16) are summed in
 * MR·nr/4 or MR·nr/8 vector accumulators: 12 registers of the 16 (AVX2) or 32 (AVX-512), leaving
 * room for two B vectors and one broadcast A value. The portable code uses 6×8 tiles. */
#define MR 6
#define NR_AVX2 8
#define NR_AVX512 16
#define NR_MAX NR_AVX512
/* Cache blocks: a KC×nr panel of packed B (16 or 32 KiB) stays in L1 while MC×KC of packed A
 * (192 KiB) streams from L2; NC columns at a time keep a KC×NC block of packed B (1 MiB) within
 * L2. */
#define KC 256
#define MC 96
#define NC 512
/* Large products and softmaxes are split by rows across up to this many threads. Below
 * SPLIT_WORK multiply-adds the calling thread works alone: starting a thread costs tens of µs. */
#define MAX_THREADS 8
#define SPLIT_WORK (1 << 21)

/* Four doubles as one value, for the softmax; GCC and Clang lower it to whatever vector width
 * the target has. v4i is the same 256 bits seen as integers (comparisons give all-ones or zero
 * lanes). */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));
typedef unsigned long long v4u __attribute__((vector_size(32)));

/* The vector code is compiled for x86-64's AVX2 (with FMA) and AVX-512 by target attributes and
 * chosen at run time (__builtin_cpu_supports): -O2 alone assumes only SSE2. Elsewhere, or on a
 * processor without them, the portable code runs: the same arithmetic, one fma() at a time. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute) \
    && !defined(KERNELS_PORTABLE_ONLY) /* -DKERNELS_PORTABLE_ONLY: build as for another processor */
#if __has_attribute(target)
#define KERNELS_X86
#endif
#endif
#ifdef KERNELS_X86
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#define AVX2_FMA __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f")))
#else
#define AVX2
#endif

/* AArch64 always has NEON (Advanced SIMD, with a fused multiply-add on two doubles): its code
 * needs no target attributes and no run-time check; config->portable still chooses the
 * portable code. */
#if defined(__aarch64__) && defined(__GNUC__) && !defined(KERNELS_PORTABLE_ONLY)
#define KERNELS_NEON
#include <arm_neon.h>
#endif

/* Which code computes the products: the results are the same bits on every one. */
typedef enum { PATH_PORTABLE, PATH_AVX2_FMA, PATH_AVX512, PATH_NEON } kernels_path;

static kernels_path product_path(const kernels_config *config)
{
    if (config && config->portable)
        return PATH_PORTABLE;
#ifdef KERNELS_X86
    /* (the softmax of both vector paths is the AVX2+FMA build; GCC's checks include the
     * operating system's support for the wider registers) */
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return PATH_PORTABLE;
    if (!(config && config->no_avx512) && __builtin_cpu_supports("avx512f"))
        return PATH_AVX512;
    return PATH_AVX2_FMA;
#elif defined(KERNELS_NEON)
    return PATH_NEON;
#else
    return PATH_PORTABLE;
#endif
}

const char *kernels_path_name(const kernels_config *config)
{
    static const char *const names[] = { "portable", "avx2+fma", "avx512", "neon" };
    return names[product_path(config)];
}

/* Whether the finite scan runs its vector build: the processor has AVX2 (or is AArch64, where
 * that build is NEON code) and the caller did not ask for the portable code. Its result does not
 * depend on it. */
static bool have_avx2(const kernels_config *config)
{
    if (config && config->portable)
        return false;
#ifdef KERNELS_X86
    return __builtin_cpu_supports("avx2");
#elif defined(KERNELS_NEON)
    return true;
#else
    return false;
#endif
}

/* memcpy, which compilers turn into one (unaligned) vector load or store, avoids both alignment
 * and strict-aliasing assumptions. */
#define LOAD(v, p) memcpy(&(v), (p), sizeof(v4d))
#define STORE(p, v) memcpy((p), &(v), sizeof(v4d))

typedef struct {
    const double *base;
    size_t ld;
    bool transposed;  /* element (k, j) is base[j·ld + k] instead of base[k·ld + j] */
} matrix_b;

static double b_at(const matrix_b *b, int k, int j)
{
    return b->transposed ? b->base[(size_t)j * b->ld + (size_t)k]
                         : b->base[(size_t)k * b->ld + (size_t)j];
}

/* Copies rows [i0, i0+mc) × columns [p0, p0+kc) of A into tiles of MR rows, each stored column by
 * column (tile[p·MR + r]), so the kernel reads A sequentially; rows past the end are zero. */
static void pack_a(double *out, const double *A, size_t lda, int rows, int i0, int mc, int p0,
                   int kc)
{
    for (int t = 0; t < mc; t += MR, out += (size_t)MR * (size_t)kc) {
        const double *row[MR];
        int valid = 0;
        for (int r = 0; r < MR; r++)
            if (t + r < mc && i0 + t + r < rows)
                row[valid++] = A + (size_t)(i0 + t + r) * lda + (size_t)p0;
        /* written in the order the kernel reads, which keeps the stores sequential */
        for (int p = 0; p < kc; p++) {
            double *o = out + (size_t)p * MR;
            int r = 0;
            for (; r < valid; r++)
                o[r] = row[r][p];
            for (; r < MR; r++)
                o[r] = 0.0;
        }
    }
}

/* Copies rows [p0, p0+kc) × columns [j0, j0+nc) of B into panels of nr columns, each stored row by
 * row (panel[p·nr + c]); columns past the end are zero. */
static void pack_b(double *out, const matrix_b *b, int cols, int j0, int nc, int p0, int kc,
                   int nr)
{
    for (int t = 0; t < nc; t += nr, out += (size_t)nr * (size_t)kc) {
        int valid = nc - t < nr ? nc - t : nr;
        if (j0 + t + valid > cols)
            valid = cols - j0 - t;
        if (valid < nr)
            for (size_t x = 0; x < (size_t)nr * (size_t)kc; x++)
                out[x] = 0.0;
        if (b->transposed) /* B's columns are stored as rows: read each along p */
            for (int c = 0; c < valid; c++) {
                const double *src = b->base + (size_t)(j0 + t + c) * b->ld + (size_t)p0;
                for (int p = 0; p < kc; p++)
                    out[(size_t)p * (size_t)nr + (size_t)c] = src[p];
            }
        else
            for (int p = 0; p < kc; p++)
                memcpy(out + (size_t)p * (size_t)nr,
                       b->base + (size_t)(p0 + p) * b->ld + (size_t)(j0 + t),
                       (size_t)valid * sizeof *out);
    }
}

/* A register tile: C tile (MR×nr, row stride ldc) = (first ? 0 : C tile) + packed A tile · packed
 * B panel, over kc steps. Each cell's accumulator takes one fused multiply-add per step, acc =
 * fma(a[r,p], b[p,c], acc), in k order, from 0 or from what earlier k blocks left in C: the
 * textbook fused sum bit for bit, whichever tile computes it. */
typedef void tile_function(int kc, const double *a, const double *b, double *c, size_t ldc,
                           bool first);

/* The portable tile: one libm fma per step and cell (the hardware instruction where the processor
 * has one; glibc emulates it exactly, and slowly, where it has not). */
static void tile_portable(int kc, const double *a, const double *b, double *c, size_t ldc,
                          bool first)
{
    double acc[MR][NR_AVX2];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR_AVX2; j++)
            acc[r][j] = first ? 0.0 : c[(size_t)r * ldc + (size_t)j];
    for (int p = 0; p < kc; p++, a += MR, b += NR_AVX2)
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < NR_AVX2; j++)
                acc[r][j] = fma(a[r], b[j], acc[r][j]);
    for (int r = 0; r < MR; r++)
        memcpy(c + (size_t)r * ldc, acc[r], sizeof acc[r]);
}

#ifdef KERNELS_X86
/* 6×8 in twelve 4-double registers; the loops over rows are unrolled so each accumulator stays in
 * its register. */
AVX2_FMA static void tile_avx2_fma(int kc, const double *a, const double *b, double *c,
                                   size_t ldc, bool first)
{
    __m256d acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + (size_t)r * ldc);
        acc[r][1] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + (size_t)r * ldc + 4);
    }
    for (int p = 0; p < kc; p++, a += MR, b += NR_AVX2) {
        __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            __m256d x = _mm256_broadcast_sd(a + r);
            acc[r][0] = _mm256_fmadd_pd(x, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_pd(x, b1, acc[r][1]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        _mm256_storeu_pd(c + (size_t)r * ldc, acc[r][0]);
        _mm256_storeu_pd(c + (size_t)r * ldc + 4, acc[r][1]);
    }
}

/* 6×16 in twelve 8-double registers, the same way. */
AVX512 static void tile_avx512(int kc, const double *a, const double *b, double *c, size_t ldc,
                               bool first)
{
    __m512d acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? _mm512_setzero_pd() : _mm512_loadu_pd(c + (size_t)r * ldc);
        acc[r][1] = first ? _mm512_setzero_pd() : _mm512_loadu_pd(c + (size_t)r * ldc + 8);
    }
    for (int p = 0; p < kc; p++, a += MR, b += NR_AVX512) {
        __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            __m512d x = _mm512_set1_pd(a[r]);
            acc[r][0] = _mm512_fmadd_pd(x, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_pd(x, b1, acc[r][1]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        _mm512_storeu_pd(c + (size_t)r * ldc, acc[r][0]);
        _mm512_storeu_pd(c + (size_t)r * ldc + 8, acc[r][1]);
    }
}
#endif

#ifdef KERNELS_NEON
/* 6×8 in twenty-four 2-double registers of the 32, with four B vectors and A's six values in
 * three more; each step multiplies B by one lane of A's (vfmaq_laneq_f64: acc + b·a[lane] with
 * one rounding, the same as fma(a, b, acc) since the product commutes exactly). */
static void tile_neon(int kc, const double *a, const double *b, double *c, size_t ldc,
                      bool first)
{
    float64x2_t acc[MR][4];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++)
            acc[r][q] = first ? vdupq_n_f64(0.0) : vld1q_f64(c + (size_t)r * ldc + 2 * q);
    for (int p = 0; p < kc; p++, a += MR, b += NR_AVX2) {
        float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4),
                    b3 = vld1q_f64(b + 6);
        float64x2_t a01 = vld1q_f64(a), a23 = vld1q_f64(a + 2), a45 = vld1q_f64(a + 4);
#define NEON_ROW(r, pair, lane)                                     \
        acc[r][0] = vfmaq_laneq_f64(acc[r][0], b0, pair, lane);     \
        acc[r][1] = vfmaq_laneq_f64(acc[r][1], b1, pair, lane);     \
        acc[r][2] = vfmaq_laneq_f64(acc[r][2], b2, pair, lane);     \
        acc[r][3] = vfmaq_laneq_f64(acc[r][3], b3, pair, lane);
        NEON_ROW(0, a01, 0)
        NEON_ROW(1, a01, 1)
        NEON_ROW(2, a23, 0)
        NEON_ROW(3, a23, 1)
        NEON_ROW(4, a45, 0)
        NEON_ROW(5, a45, 1)
#undef NEON_ROW
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++)
            vst1q_f64(c + (size_t)r * ldc + 2 * q, acc[r][q]);
}
#endif

/* A path's tile and its width. */
typedef struct {
    tile_function *tile;
    int nr;
} tile_kind;

static tile_kind tile_of(kernels_path path)
{
#ifdef KERNELS_X86
    if (path == PATH_AVX512)
        return (tile_kind){ tile_avx512, NR_AVX512 };
    if (path == PATH_AVX2_FMA)
        return (tile_kind){ tile_avx2_fma, NR_AVX2 };
#endif
#ifdef KERNELS_NEON
    if (path == PATH_NEON)
        return (tile_kind){ tile_neon, NR_AVX2 };
#endif
    (void)path;
    return (tile_kind){ tile_portable, NR_AVX2 };
}

/* The doubles a packed block of nc columns and kc rows takes: whole panels of nr columns. */
static size_t packed_b_size(int nc, int kc, int nr)
{
    return ((size_t)nc + (size_t)nr - 1) / (size_t)nr * (size_t)nr * (size_t)kc;
}

/* Every block of B, packed once, in the order gemm_chunk reads them: for each NC-wide column
 * block, each KC-deep row block, as panels of nr columns (see pack_b). */
static void pack_all_b(double *out, const matrix_b *b, int cols, int inner, int nr)
{
    for (int jc = 0; jc < cols; jc += NC) {
        int nc = cols - jc < NC ? cols - jc : NC;
        for (int pc = 0; pc < inner; pc += KC) {
            int kc = inner - pc < KC ? inner - pc : KC;
            pack_b(out, b, cols, jc, nc, pc, kc, nr);
            out += packed_b_size(nc, kc, nr);
        }
    }
}

/* Rows [ic, ic + mc) of C (mc ≤ MC) from packed B (bpack, as pack_all_b writes it for kind's
 * width), packing A's rows into apack (MC×KC rounded up to whole tiles). inner ≥ 1; the first
 * k block writes C, the later ones add to it. */
static void gemm_chunk(int ic, int mc, int cols, int inner, const double *A, size_t lda,
                       const double *bpack, double *C, size_t ldc, double *apack, int rows,
                       tile_kind kind)
{
    double edge[MR * NR_MAX] = { 0 };
    int width = kind.nr;
    for (int jc = 0; jc < cols; jc += NC) {
        int nc = cols - jc < NC ? cols - jc : NC;
        for (int pc = 0; pc < inner; pc += KC) {
            int kc = inner - pc < KC ? inner - pc : KC;
            /* pass 1: pack A's block, which the kernel then reads from L2 */
            pack_a(apack, A, lda, rows, ic, mc, pc, kc);
            /* pass 2: every tile, B panel outermost so it stays in L1; partial tiles at the
             * edges go through a full-size scratch tile */
            for (int jr = 0; jr < nc; jr += width) {
                const double *bp = bpack + (size_t)jr * (size_t)kc;
                int nr = nc - jr < width ? nc - jr : width;
                for (int ir = 0; ir < mc; ir += MR) {
                    const double *ap = apack + (size_t)ir * (size_t)kc;
                    int mr = mc - ir < MR ? mc - ir : MR;
                    double *c = C + (size_t)(ic + ir) * ldc + (size_t)(jc + jr);
                    bool full = mr == MR && nr == width;
                    double *target = full ? c : edge;
                    size_t ld = full ? ldc : (size_t)width;
                    for (int r = 0; r < mr && pc > 0 && !full; r++)
                        memcpy(edge + r * width, c + (size_t)r * ldc, (size_t)nr * sizeof *c);
                    kind.tile(kc, ap, bp, target, ld, pc == 0);
                    if (full)
                        continue;
                    for (int r = 0; r < mr; r++)
                        memcpy(c + (size_t)r * ldc, edge + r * width, (size_t)nr * sizeof *c);
                }
            }
            bpack += packed_b_size(nc, kc, width);
        }
    }
}

/* The same product without packing, for when the packing buffers cannot be allocated: C starts
 * at 0 and each cell takes its fused steps in k order. */
static void gemm_plain(int rows, int cols, int inner, const double *A, size_t lda,
                       const matrix_b *b, double *C, size_t ldc)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < inner; k++) {
            double a = A[(size_t)i * lda + (size_t)k];
            for (int j = 0; j < cols; j++) {
                double *c = C + (size_t)i * ldc + (size_t)j;
                *c = fma(a, b_at(b, k, j), *c);
            }
        }
}

static size_t round_up(size_t x, size_t unit)
{
    return (x + unit - 1) / unit * unit;
}

int kernels_threads(const kernels_config *config)
{
    long count = config && config->threads > 0 ? config->threads : sysconf(_SC_NPROCESSORS_ONLN);
    return count < 1 ? 1 : count > MAX_THREADS ? MAX_THREADS : (int)count;
}

/* A job that threads share: each worker takes the next chunk under the lock until none are left,
 * so a helper thread that the machine is too busy to run simply takes no chunk, and the calling
 * thread waits only for chunks that a helper has begun. The job lives on the heap and the last of
 * its users frees it, so a helper that starts late never touches freed memory. */
typedef struct {
    void (*work)(void *job, int chunk, double *scratch);
    void *job;
    int chunks;
    size_t scratch_bytes;
    pthread_mutex_t lock;
    pthread_cond_t finished;  /* signalled when done reaches chunks */
    int next;                 /* the next chunk to take */
    int done;                 /* chunks finished */
    int users;                /* the caller and the helpers not yet finished with the job */
} shared_job;

/* The next chunk to compute, or -1 when all are taken; counts the previous one as done. */
static int next_chunk(shared_job *j, bool finished_one)
{
    pthread_mutex_lock(&j->lock);
    if (finished_one && ++j->done == j->chunks)
        pthread_cond_signal(&j->finished);
    int chunk = j->next < j->chunks ? j->next++ : -1;
    pthread_mutex_unlock(&j->lock);
    return chunk;
}

static void release(shared_job *j)
{
    pthread_mutex_lock(&j->lock);
    bool last = --j->users == 0;
    pthread_mutex_unlock(&j->lock);
    if (last) {
        pthread_mutex_destroy(&j->lock);
        pthread_cond_destroy(&j->finished);
        free(j);
    }
}

/* Takes chunks until none are left. */
static void take_chunks(shared_job *j, double *scratch)
{
    for (int chunk = next_chunk(j, false); chunk >= 0; chunk = next_chunk(j, true))
        j->work(j->job, chunk, scratch);
}

static void *helper(void *argument)
{
    shared_job *j = argument;
    /* a helper without scratch memory leaves the chunks to the others */
    double *scratch = j->scratch_bytes ? aligned_alloc(64, j->scratch_bytes) : NULL;
    if (scratch || !j->scratch_bytes)
        take_chunks(j, scratch);
    free(scratch);
    release(j);
    return NULL;
}

/* Runs work(job, chunk, scratch) for every chunk on the calling thread (whose scratch is given)
 * and, when the job is worth it (amount ≥ SPLIT_WORK multiply-adds or the like), on up to
 * kernels_threads(config) − 1 detached helpers, each with scratch_bytes of its own. Every chunk
 * is computed the same way whichever thread takes it, so results do not depend on the split. */
static void run_shared(void (*work)(void *, int, double *), void *job, int chunks,
                       double *scratch, size_t scratch_bytes, double amount,
                       const kernels_config *config)
{
    int helpers = amount >= SPLIT_WORK ? kernels_threads(config) - 1 : 0;
    if (helpers > chunks - 1)
        helpers = chunks - 1;
    shared_job *j = helpers > 0 ? malloc(sizeof *j) : NULL;
    pthread_attr_t attributes;
    if (j && (pthread_attr_init(&attributes) != 0
              || pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED) != 0)) {
        free(j);
        j = NULL;
    }
    if (!j) {
        for (int chunk = 0; chunk < chunks; chunk++)
            work(job, chunk, scratch);
        return;
    }
    *j = (shared_job){ .work = work, .job = job, .chunks = chunks,
                       .scratch_bytes = scratch_bytes, .users = 1 };
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->finished, NULL);
    for (int i = 0; i < helpers; i++) {
        pthread_t thread;
        pthread_mutex_lock(&j->lock);
        j->users++;
        pthread_mutex_unlock(&j->lock);
        if (pthread_create(&thread, &attributes, helper, j) != 0)
            release(j);  /* counted as a user but never started */
    }
    pthread_attr_destroy(&attributes);
    take_chunks(j, scratch);
    /* every chunk is taken; wait for those a helper is still computing */
    pthread_mutex_lock(&j->lock);
    while (j->done < chunks)
        pthread_cond_wait(&j->finished, &j->lock);
    pthread_mutex_unlock(&j->lock);
    release(j);
}

typedef struct {
    int rows, cols, inner;
    const double *A;
    size_t lda;
    const double *bpack;
    double *C;
    size_t ldc;
    tile_kind kind;
} gemm_job;

static void gemm_work(void *argument, int chunk, double *apack)
{
    const gemm_job *g = argument;
    int ic = chunk * MC, mc = g->rows - ic < MC ? g->rows - ic : MC;
    gemm_chunk(ic, mc, g->cols, g->inner, g->A, g->lda, g->bpack, g->C, g->ldc, apack, g->rows,
               g->kind);
}

void kernels_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                  const double *B, size_t ldb, bool b_transposed, double *C, size_t ldc,
                  const kernels_config *config)
{
    if (rows < 1 || cols < 1)
        return;
    if (inner < 1) { /* an empty sum */
        for (int i = 0; i < rows; i++)
            memset(C + (size_t)i * ldc, 0, (size_t)cols * sizeof *C);
        return;
    }
    matrix_b b = { B, ldb, b_transposed };
    /* B is packed once, whole (inner × cols rounded up to whole panels), for every thread; the
     * calling thread packs A's blocks into apack */
    tile_kind kind = tile_of(product_path(config));
    size_t kc = (size_t)(inner < KC ? inner : KC);
    size_t a_bytes = round_up(round_up(MC, MR) * kc * sizeof(double), 64);
    size_t b_bytes = round_up(round_up((size_t)cols, (size_t)kind.nr) * (size_t)inner * sizeof(double), 64);
    double *bpack = aligned_alloc(64, b_bytes), *apack = aligned_alloc(64, a_bytes);
    if (bpack && apack) {
        pack_all_b(bpack, &b, cols, inner, kind.nr);
        gemm_job g = { rows, cols, inner, A, lda, bpack, C, ldc, kind };
        run_shared(gemm_work, &g, (rows + MC - 1) / MC, apack, a_bytes,
                   (double)rows * (double)cols * (double)inner, config);
    } else { /* out of memory for packing: the plain loops need none */
        for (int i = 0; i < rows; i++)
            memset(C + (size_t)i * ldc, 0, (size_t)cols * sizeof *C);
        gemm_plain(rows, cols, inner, A, lda, &b, C, ldc);
    }
    free(apack);
    free(bpack);
}

void kernels_matmul(double *C, const double *A, const double *B, int rows, int inner, int cols,
                    const kernels_config *config)
{
    kernels_gemm(rows, cols, inner, A, (size_t)inner, B, (size_t)cols, false, C, (size_t)cols,
                 config);
}

void kernels_scores(double *scores, const double *Q, const double *K, int n, int m, int d_k,
                    int ld, int offset, const kernels_config *config)
{
    /* Q_h · K_hᵀ: K_h's rows are the columns of the product, so B is read transposed */
    kernels_gemm(n, m, d_k, Q + offset, (size_t)ld, K + offset, (size_t)ld, true, scores,
                 (size_t)m, config);
}

void kernels_context(double *context, const double *weights, const double *V, int n, int m,
                     int d_k, int ld, int offset, const kernels_config *config)
{
    kernels_gemm(n, d_k, m, weights, (size_t)m, V + offset, (size_t)ld, false, context,
                 (size_t)d_k, config);
}

#ifdef KERNELS_X86
/* *p = *p · *r + *c rounded once, four lanes, by the FMA instruction. Not always_inline: the
 * portable build of the softmax names it too (in a branch it never takes), where it cannot be
 * inlined. Vectors go by pointer, which keeps the calling convention out of it. */
AVX2_FMA static inline void fused4_fma(v4d *p, const v4d *r, const v4d *c)
{
    *p = _mm256_fmadd_pd(*p, *r, *c);
}
#endif

/* *p = *p · *r + *c rounded once, four lanes: the FMA instruction when hardware (a constant in
 * each build), else libm's fma, lane by lane; the same bits either way. */
static inline __attribute__((always_inline))
void fused4(v4d *p, const v4d *r, const v4d *c, bool hardware)
{
#ifdef KERNELS_X86
    if (hardware) {
        fused4_fma(p, r, c);
        return;
    }
#endif
#ifdef KERNELS_NEON
    if (hardware) { /* two NEON registers of two lanes: vfmaq_f64(c, p, r) = c + p·r */
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
    (void)hardware;
    for (int lane = 0; lane < 4; lane++)
        (*p)[lane] = fma((*p)[lane], (*r)[lane], (*c)[lane]);
}

/* exp(x) for x ≤ 0, four at a time; x < −745.2 (below the smallest subnormal, and −∞) gives 0.
 * x = k·ln 2 + r with |r| ≤ ln 2 / 2, exp(r) by its Taylor series to r¹³ (the next term is below
 * 2⁻⁵⁶ of the result) in fused Horner steps, then 2^k built in the exponent field. 2^k is applied
 * in two halves so that results in the subnormal range still scale exactly until the final
 * rounding. Within 2 ulp of the correctly rounded exp (tests/test_kernels.c checks it against
 * libm's). Every step is an IEEE operation with one rounding, so it gives the same bits wherever
 * it runs: the portable softmax runs this very code (hardware false), not libm's exp, so a
 * trace's weights do not depend on the processor. */
static inline __attribute__((always_inline))
void exp_nonpositive(v4d *out, const v4d *in, bool hardware)
{
    const double log2e = 0x1.71547652b82fep0, shifter = 0x1.8p52;
    /* ln 2 split so that k·ln2_hi is exact for |k| < 2^21 (Cody and Waite's reduction) */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    /* 1/13!, 1/12!, …, 1/2!, 1, 1: the Taylor coefficients, highest first, each in four lanes
     * (so that each step reads its vector straight from memory) */
#define SPLAT(c) { (c), (c), (c), (c) }
    static const v4d taylor[] = {
        SPLAT(1.0 / 6227020800.0), SPLAT(1.0 / 479001600.0), SPLAT(1.0 / 39916800.0),
        SPLAT(1.0 / 3628800.0), SPLAT(1.0 / 362880.0), SPLAT(1.0 / 40320.0),
        SPLAT(1.0 / 5040.0), SPLAT(1.0 / 720.0), SPLAT(1.0 / 120.0), SPLAT(1.0 / 24.0),
        SPLAT(1.0 / 6.0), SPLAT(0.5), SPLAT(1.0), SPLAT(1.0),
    };
#undef SPLAT
    v4d x = *in;
    v4i underflow = x < -745.2;
    x = (v4d)((v4i)x & ~underflow); /* 0 in those lanes: −∞ would make NaN on the way */
    /* k = round(x / ln 2), by adding 1.5·2^52 so the rounding happens in the addition */
    v4d t = x * log2e + shifter;
    v4d k = t - shifter;
    v4d r = (x - k * ln2_hi) - k * ln2_lo;
    v4d p = taylor[0];
#pragma GCC unroll 16
    for (size_t i = 1; i < sizeof taylor / sizeof taylor[0]; i++)
        fused4(&p, &r, &taylor[i], hardware);
    /* the low bits of t hold k; 2^k1 · 2^k2 with k1 = ⌊k/2⌋ keeps both factors normal (k is in
     * [−1075, 0]: the shift is done on k + 2048, non-negative, which needs no arithmetic shift,
     * an instruction AVX2 lacks). Unsigned lanes: the same bits as two's complement, and a NaN
     * lane's nonsense wraps around instead of overflowing. */
    v4d shift = { shifter, shifter, shifter, shifter };
    v4u ki = (v4u)t - (v4u)shift;
    v4u k1 = ((ki + 2048) >> 1) - 1024, k2 = ki - k1;
    v4d scale1 = (v4d)((k1 + 1023) << 52), scale2 = (v4d)((k2 + 1023) << 52);
    v4d result = p * scale1 * scale2;
    *out = (v4d)((v4i)result & ~underflow);
}

/* One row's softmax, for MASK_NONE rows and for rows whose hidden cells are already −∞ in w.
 * w holds the masked, scaled scores on entry and the weights on return. Written once and
 * compiled twice (softmax_row_avx2, softmax_row_portable): the same operations in the same order,
 * so the same bits. */
static inline __attribute__((always_inline)) void softmax_row(double *w, int m, bool hardware)
{
    int j = 0;
    /* pass 1: the row max (four running maxima, then the largest of them: max is exact, so the
     * order does not matter) */
    double row_max = -INFINITY;
    if (m >= 4) {
        v4d best;
        LOAD(best, w);
        for (j = 4; j + 4 <= m; j += 4) {
            v4d x;
            LOAD(x, w + j);
            v4i greater = x > best;
            best = (v4d)(((v4i)x & greater) | ((v4i)best & ~greater));
        }
        for (int lane = 0; lane < 4; lane++)
            row_max = best[lane] > row_max ? best[lane] : row_max;
    }
    for (; j < m; j++)
        row_max = w[j] > row_max ? w[j] : row_max;
    /* pass 2: exponentials shifted by the row max (the stability trick: the largest is exp(0) =
     * 1 and none overflows; the shift cancels in the ratio); hidden cells, −∞, give exactly 0 */
    v4d sums = { 0.0, 0.0, 0.0, 0.0 };
    for (j = 0; j + 4 <= m; j += 4) {
        v4d x, e;
        LOAD(x, w + j);
        x -= row_max;
        exp_nonpositive(&e, &x, hardware);
        STORE(w + j, e);
        sums += e;
    }
    if (j < m) {
        v4d x = { -INFINITY, -INFINITY, -INFINITY, -INFINITY }, e;
        memcpy(&x, w + j, (size_t)(m - j) * sizeof *w);
        x -= row_max;
        exp_nonpositive(&e, &x, hardware);
        memcpy(w + j, &e, (size_t)(m - j) * sizeof *w);
        sums += e;
    }
    double sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    /* pass 3: normalise (a division, as the textbook writes it, not a multiplication by 1/sum) */
    for (j = 0; j + 4 <= m; j += 4) {
        v4d x;
        LOAD(x, w + j);
        x /= sum;
        STORE(w + j, x);
    }
    for (; j < m; j++)
        w[j] /= sum;
}

/* Every score of every row, scaled: score / divisor, the core's own rule with the divisor it
 * gives (√d_k), bit-for-bit as the core divides; IEEE division is exact-rounded in vectors too.
 * When the divisor is a power of two (d_k = 1, 4, 16, 64, …) its reciprocal is exact, and x · (1/2^e)
 * is the same real number as x / 2^e, so rounded the same: the much cheaper multiplication. */
static inline __attribute__((always_inline))
void scale_rows(double *w, const double *s, size_t count, bool scale, double divisor)
{
    size_t j = 0;
    if (!scale) {
        memcpy(w, s, count * sizeof *w);
        return;
    }
    int exponent;
    if (frexp(divisor, &exponent) == 0.5) {
        double reciprocal = 1.0 / divisor;
        for (; j + 4 <= count; j += 4) {
            v4d x;
            LOAD(x, s + j);
            x *= reciprocal;
            STORE(w + j, x);
        }
        for (; j < count; j++)
            w[j] = s[j] * reciprocal;
        return;
    }
    for (; j + 4 <= count; j += 4) {
        v4d x;
        LOAD(x, s + j);
        x /= divisor;
        STORE(w + j, x);
    }
    for (; j < count; j++)
        w[j] = s[j] / divisor;
}

#ifdef KERNELS_X86
AVX2_FMA static void softmax_row_avx2(double *w, int m)
{
    softmax_row(w, m, true);
}
#endif

#ifdef KERNELS_NEON
static void softmax_row_neon(double *w, int m)
{
    softmax_row(w, m, true);
}
#endif

static void softmax_row_portable(double *w, int m)
{
    softmax_row(w, m, false);
}

AVX2 static void scale_rows_avx2(double *w, const double *s, size_t count, bool scale,
                                 double divisor)
{
    scale_rows(w, s, count, scale, divisor);
}

static void scale_rows_portable(double *w, const double *s, size_t count, bool scale,
                                double divisor)
{
    scale_rows(w, s, count, scale, divisor);
}

/* The exponential over an array, four at a time (the tail padded with −∞); built twice, as the
 * softmax is. */
static inline __attribute__((always_inline))
void exp_array(double *out, const double *in, size_t count, bool hardware)
{
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        v4d x, e;
        LOAD(x, in + i);
        exp_nonpositive(&e, &x, hardware);
        STORE(out + i, e);
    }
    if (i < count) {
        v4d x = { -INFINITY, -INFINITY, -INFINITY, -INFINITY }, e;
        memcpy(&x, in + i, (count - i) * sizeof *in);
        exp_nonpositive(&e, &x, hardware);
        memcpy(out + i, &e, (count - i) * sizeof *out);
    }
}

#ifdef KERNELS_X86
AVX2_FMA static void exp_array_avx2(double *out, const double *in, size_t count)
{
    exp_array(out, in, count, true);
}
#endif

#ifdef KERNELS_NEON
static void exp_array_neon(double *out, const double *in, size_t count)
{
    exp_array(out, in, count, true);
}
#endif

void kernels_exp_nonpositive(double *out, const double *in, size_t count,
                             const kernels_config *config)
{
#ifdef KERNELS_X86
    if (product_path(config) != PATH_PORTABLE) {
        exp_array_avx2(out, in, count);
        return;
    }
#endif
#ifdef KERNELS_NEON
    if (product_path(config) != PATH_PORTABLE) {
        exp_array_neon(out, in, count);
        return;
    }
#endif
    (void)config;
    exp_array(out, in, count, false);
}

static bool all_finite_portable(const double *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

typedef struct {
    double *weights;
    const double *scores;
    int n, m;
    const kernels_softmax_rule *rule;
    bool wide;  /* AVX2 and FMA (or NEON) are there */
} softmax_job;

/* Rows in one chunk of a softmax: enough to make taking a chunk cheap beside computing it. */
#define SOFTMAX_ROWS 8

/* One chunk of rows of a softmax. */
static void softmax_work(void *argument, int chunk, double *scratch)
{
    (void)scratch;
    const softmax_job *x = argument;
    const kernels_softmax_rule *rule = x->rule;
    int row0 = chunk * SOFTMAX_ROWS;
    int rows = x->n - row0 < SOFTMAX_ROWS ? x->n - row0 : SOFTMAX_ROWS;
    size_t row = (size_t)x->m, first = (size_t)row0 * row;
    /* pass 1: the masked, scaled scores of the rows, kept in weights for the row passes */
    bool wide = x->wide;
    (wide ? scale_rows_avx2 : scale_rows_portable)(x->weights + first, x->scores + first,
                                                    (size_t)rows * row, rule->scale,
                                                    rule->divisor);
    for (int i = row0; i < row0 + rows; i++) {
        double *w = x->weights + (size_t)i * row;
        /* pass 2: hidden cells become −∞, so their exponential is exactly 0 */
        if (rule->causal)
            for (int j = i + 1; j < x->m; j++)
                w[j] = -INFINITY;
        else if (rule->allowed)
            for (int j = 0; j < x->m; j++)
                if (rule->allowed[(size_t)i * row + (size_t)j] == 0)
                    w[j] = -INFINITY;
        /* pass 3: the row's stable softmax */
#ifdef KERNELS_X86
        (wide ? softmax_row_avx2 : softmax_row_portable)(w, x->m);
#elif defined(KERNELS_NEON)
        (wide ? softmax_row_neon : softmax_row_portable)(w, x->m);
#else
        softmax_row_portable(w, x->m);
#endif
    }
}

void kernels_softmax(double *weights, const double *scores, int n, int m,
                     const kernels_softmax_rule *rule, const kernels_config *config)
{
    softmax_job job = { weights, scores, n, m, rule, product_path(config) != PATH_PORTABLE };
    /* an exponential costs about as much as twenty multiply-adds */
    run_shared(softmax_work, &job, (n + SOFTMAX_ROWS - 1) / SOFTMAX_ROWS, NULL, 0,
               20.0 * (double)n * (double)m, config);
}

/* The sum of x·0 over an array is 0 when every x is finite and NaN as soon as one is ±∞ or NaN. */
AVX2 static bool all_finite_avx2(const double *x, size_t count)
{
    v4d acc = { 0.0, 0.0, 0.0, 0.0 };
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        v4d v;
        LOAD(v, x + i);
        acc += v * 0.0;
    }
    double tail = 0.0;
    for (; i < count; i++)
        tail += x[i] * 0.0;
    return (acc[0] + acc[1] + acc[2] + acc[3] + tail) == 0.0;
}

bool kernels_all_finite(const double *x, size_t count, const kernels_config *config)
{
    return have_avx2(config) ? all_finite_avx2(x, count) : all_finite_portable(x, count);
}

void kernels_prefer_huge_pages(void *memory, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    /* only whole pages inside the block may be advised; a failure just leaves small pages */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start = (uintptr_t)memory;
    uintptr_t first = (start + page - 1) / page * page, end = (start + bytes) / page * page;
    if (bytes >= ((size_t)2 << 20) && end > first)
        madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)memory;
    (void)bytes;
#endif
}
