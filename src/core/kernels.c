/* Fast kernels for the attention core: a cache-blocked, register-tiled matrix product (packed
 * panels, 6×8 tiles in vector registers) and the stable row softmax, split by rows across threads
 * when large. See kernels.h. */
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

/* Register tile: MR rows of A times NR columns of B are summed in MR·NR/4 vector accumulators
 * (12 of the 16 AVX registers, leaving room for two B vectors and one broadcast A value). */
#define MR 6
#define NR 8
/* Cache blocks: a KC×NR panel of packed B (16 KiB) stays in L1 while MC×KC of packed A (192 KiB)
 * streams from L2; NC columns at a time keep a KC×NC block of packed B (1 MiB) within L2. */
#define KC 256
#define MC 96
#define NC 512
/* Large products and softmaxes are split by rows across up to this many threads. Below
 * SPLIT_WORK multiply-adds the calling thread works alone: starting a thread costs tens of µs. */
#define MAX_THREADS 8
#define SPLIT_WORK (1 << 21)

/* Four doubles as one value; GCC and Clang lower it to whatever vector width the target has.
 * v4i is the same 256 bits seen as integers (comparisons give all-ones or zero lanes). */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));
typedef double v2d __attribute__((vector_size(16)));

/* Four-double vectors are only fast where the processor has 256-bit registers: on x86-64 with
 * AVX2 (checked at run time), the hot loops are compiled for it (-O2 alone assumes only SSE2,
 * where GCC's four-double code runs about 30 times slower). Elsewhere the portable versions run:
 * two-double vectors, native to SSE2 and NEON, and libm's exp. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#define KERNELS_X86
#endif
#endif
#if defined(KERNELS_X86) && defined(KERNELS_FMA)
/* -DKERNELS_FMA: fused multiply-add in the AVX2 versions, about 8% faster on the whole trace at
 * n = 512 on the machine of tests/BENCH.md, but each sum is then rounded differently from the
 * textbook loop (still within 1e-12) */
#define AVX2 __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
#elif defined(KERNELS_X86)
#define AVX2 __attribute__((target("avx2")))
#else
#define AVX2
#endif

/* Whether the AVX2 versions run: the processor has AVX2 and the caller did not ask for the
 * portable versions (the tests ask, to check those too). */
static bool have_avx2(const kernels_config *config)
{
    if (config && config->portable)
        return false;
#ifdef KERNELS_X86
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* memcpy, which compilers turn into one (unaligned) vector load or store, avoids both alignment
 * and strict-aliasing assumptions. */
#define LOAD(v, p) memcpy(&(v), (p), sizeof(v4d))
#define STORE(p, v) memcpy((p), &(v), sizeof(v4d))
#define LOAD2(v, p) memcpy(&(v), (p), sizeof(v2d))
#define STORE2(p, v) memcpy((p), &(v), sizeof(v2d))

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

/* Copies rows [p0, p0+kc) × columns [j0, j0+nc) of B into panels of NR columns, each stored row by
 * row (panel[p·NR + c]); columns past the end are zero. */
static void pack_b(double *out, const matrix_b *b, int cols, int j0, int nc, int p0, int kc)
{
    for (int t = 0; t < nc; t += NR, out += (size_t)NR * (size_t)kc) {
        int valid = nc - t < NR ? nc - t : NR;
        if (j0 + t + valid > cols)
            valid = cols - j0 - t;
        if (valid < NR)
            for (size_t x = 0; x < (size_t)NR * (size_t)kc; x++)
                out[x] = 0.0;
        if (b->transposed) /* B's columns are stored as rows: read each along p */
            for (int c = 0; c < valid; c++) {
                const double *src = b->base + (size_t)(j0 + t + c) * b->ld + (size_t)p0;
                for (int p = 0; p < kc; p++)
                    out[(size_t)p * NR + (size_t)c] = src[p];
            }
        else if (valid == NR) /* a constant size, which compilers copy inline */
            for (int p = 0; p < kc; p++)
                memcpy(out + (size_t)p * NR, b->base + (size_t)(p0 + p) * b->ld + (size_t)(j0 + t),
                       NR * sizeof *out);
        else
            for (int p = 0; p < kc; p++)
                memcpy(out + (size_t)p * NR, b->base + (size_t)(p0 + p) * b->ld + (size_t)(j0 + t),
                       (size_t)valid * sizeof *out);
    }
}

/* C tile (MR×NR, row stride ldc) = (first ? 0 : C tile) + packed A tile · packed B panel, over
 * kc steps. Each accumulator adds one product per step, in k order, from 0 or from what earlier
 * k blocks left in C, so the sum is the textbook one bit for bit (no fused multiply-add:
 * -std=c11 leaves contraction off). */
static inline __attribute__((always_inline))
void tile_kernel(int kc, const double *a, const double *b, double *c, size_t ldc, bool first)
{
    v4d c00 = { 0 }, c01 = { 0 }, c10 = { 0 }, c11 = { 0 }, c20 = { 0 }, c21 = { 0 };
    v4d c30 = { 0 }, c31 = { 0 }, c40 = { 0 }, c41 = { 0 }, c50 = { 0 }, c51 = { 0 };
    if (!first) {
        LOAD(c00, c + 0 * ldc); LOAD(c01, c + 0 * ldc + 4);
        LOAD(c10, c + 1 * ldc); LOAD(c11, c + 1 * ldc + 4);
        LOAD(c20, c + 2 * ldc); LOAD(c21, c + 2 * ldc + 4);
        LOAD(c30, c + 3 * ldc); LOAD(c31, c + 3 * ldc + 4);
        LOAD(c40, c + 4 * ldc); LOAD(c41, c + 4 * ldc + 4);
        LOAD(c50, c + 5 * ldc); LOAD(c51, c + 5 * ldc + 4);
    }
    for (int p = 0; p < kc; p++, a += MR, b += NR) {
        v4d b0, b1;
        LOAD(b0, b);
        LOAD(b1, b + 4);
        c00 += a[0] * b0; c01 += a[0] * b1;
        c10 += a[1] * b0; c11 += a[1] * b1;
        c20 += a[2] * b0; c21 += a[2] * b1;
        c30 += a[3] * b0; c31 += a[3] * b1;
        c40 += a[4] * b0; c41 += a[4] * b1;
        c50 += a[5] * b0; c51 += a[5] * b1;
    }
    STORE(c + 0 * ldc, c00); STORE(c + 0 * ldc + 4, c01);
    STORE(c + 1 * ldc, c10); STORE(c + 1 * ldc + 4, c11);
    STORE(c + 2 * ldc, c20); STORE(c + 2 * ldc + 4, c21);
    STORE(c + 3 * ldc, c30); STORE(c + 3 * ldc + 4, c31);
    STORE(c + 4 * ldc, c40); STORE(c + 4 * ldc + 4, c41);
    STORE(c + 5 * ldc, c50); STORE(c + 5 * ldc + 4, c51);
}

/* The same tile with two-double vectors, four columns at a time, so that twelve accumulators fit
 * the sixteen registers of SSE2 (or NEON); the same sums in the same order. Written out a second
 * time on purpose: the twelve named accumulators are what keeps each in a register, and a macro
 * generic over the vector width would hide exactly that (test_kernels holds both to the
 * textbook loop, bit for bit). */
static inline __attribute__((always_inline))
void tile_kernel_portable(int kc, const double *a, const double *b, double *c, size_t ldc,
                          bool first)
{
    for (int half = 0; half < NR; half += 4) {
        const double *ap = a, *bp = b + half;
        double *cp = c + half;
        v2d c00 = { 0 }, c01 = { 0 }, c10 = { 0 }, c11 = { 0 }, c20 = { 0 }, c21 = { 0 };
        v2d c30 = { 0 }, c31 = { 0 }, c40 = { 0 }, c41 = { 0 }, c50 = { 0 }, c51 = { 0 };
        if (!first) {
            LOAD2(c00, cp + 0 * ldc); LOAD2(c01, cp + 0 * ldc + 2);
            LOAD2(c10, cp + 1 * ldc); LOAD2(c11, cp + 1 * ldc + 2);
            LOAD2(c20, cp + 2 * ldc); LOAD2(c21, cp + 2 * ldc + 2);
            LOAD2(c30, cp + 3 * ldc); LOAD2(c31, cp + 3 * ldc + 2);
            LOAD2(c40, cp + 4 * ldc); LOAD2(c41, cp + 4 * ldc + 2);
            LOAD2(c50, cp + 5 * ldc); LOAD2(c51, cp + 5 * ldc + 2);
        }
        for (int p = 0; p < kc; p++, ap += MR, bp += NR) {
            v2d b0, b1;
            LOAD2(b0, bp);
            LOAD2(b1, bp + 2);
            c00 += ap[0] * b0; c01 += ap[0] * b1;
            c10 += ap[1] * b0; c11 += ap[1] * b1;
            c20 += ap[2] * b0; c21 += ap[2] * b1;
            c30 += ap[3] * b0; c31 += ap[3] * b1;
            c40 += ap[4] * b0; c41 += ap[4] * b1;
            c50 += ap[5] * b0; c51 += ap[5] * b1;
        }
        STORE2(cp + 0 * ldc, c00); STORE2(cp + 0 * ldc + 2, c01);
        STORE2(cp + 1 * ldc, c10); STORE2(cp + 1 * ldc + 2, c11);
        STORE2(cp + 2 * ldc, c20); STORE2(cp + 2 * ldc + 2, c21);
        STORE2(cp + 3 * ldc, c30); STORE2(cp + 3 * ldc + 2, c31);
        STORE2(cp + 4 * ldc, c40); STORE2(cp + 4 * ldc + 2, c41);
        STORE2(cp + 5 * ldc, c50); STORE2(cp + 5 * ldc + 2, c51);
    }
}

/* Every block of B, packed once, in the order gemm_chunk reads them: for each NC-wide column
 * block, each KC-deep row block, as panels of NR columns (see pack_b). */
static void pack_all_b(double *out, const matrix_b *b, int cols, int inner)
{
    for (int jc = 0; jc < cols; jc += NC) {
        int nc = cols - jc < NC ? cols - jc : NC;
        for (int pc = 0; pc < inner; pc += KC) {
            int kc = inner - pc < KC ? inner - pc : KC;
            pack_b(out, b, cols, jc, nc, pc, kc);
            out += ((size_t)nc + NR - 1) / NR * NR * (size_t)kc;
        }
    }
}

/* Rows [ic, ic + mc) of C (mc ≤ MC) from packed B (bpack, as pack_all_b writes it), packing A's
 * rows into apack (MC×KC rounded up to whole tiles). inner ≥ 1; the first k block writes C, the
 * later ones add to it. */
static inline __attribute__((always_inline))
void gemm_chunk(int ic, int mc, int cols, int inner, const double *A, size_t lda,
                const double *bpack, double *C, size_t ldc, double *apack, int rows, bool wide)
{
    double edge[MR * NR] = { 0 };
    for (int jc = 0; jc < cols; jc += NC) {
        int nc = cols - jc < NC ? cols - jc : NC;
        for (int pc = 0; pc < inner; pc += KC) {
            int kc = inner - pc < KC ? inner - pc : KC;
            /* pass 1: pack A's block, which the kernel then reads from L2 */
            pack_a(apack, A, lda, rows, ic, mc, pc, kc);
            /* pass 2: every tile, B panel outermost so it stays in L1; partial tiles at the
             * edges go through a full-size scratch tile */
            for (int jr = 0; jr < nc; jr += NR) {
                const double *bp = bpack + (size_t)jr * (size_t)kc;
                int nr = nc - jr < NR ? nc - jr : NR;
                for (int ir = 0; ir < mc; ir += MR) {
                    const double *ap = apack + (size_t)ir * (size_t)kc;
                    int mr = mc - ir < MR ? mc - ir : MR;
                    double *c = C + (size_t)(ic + ir) * ldc + (size_t)(jc + jr);
                    bool full = mr == MR && nr == NR;
                    double *target = full ? c : edge;
                    size_t ld = full ? ldc : NR;
                    for (int r = 0; r < mr && pc > 0 && !full; r++)
                        memcpy(edge + r * NR, c + (size_t)r * ldc, (size_t)nr * sizeof *c);
                    if (wide)
                        tile_kernel(kc, ap, bp, target, ld, pc == 0);
                    else
                        tile_kernel_portable(kc, ap, bp, target, ld, pc == 0);
                    if (full)
                        continue;
                    for (int r = 0; r < mr; r++)
                        memcpy(c + (size_t)r * ldc, edge + r * NR, (size_t)nr * sizeof *c);
                }
            }
            bpack += ((size_t)nc + NR - 1) / NR * NR * (size_t)kc;
        }
    }
}

AVX2 static void gemm_chunk_avx2(int ic, int mc, int cols, int inner, const double *A,
                                 size_t lda, const double *bpack, double *C, size_t ldc,
                                 double *apack, int rows)
{
    gemm_chunk(ic, mc, cols, inner, A, lda, bpack, C, ldc, apack, rows, true);
}

static void gemm_chunk_portable(int ic, int mc, int cols, int inner, const double *A,
                                size_t lda, const double *bpack, double *C, size_t ldc,
                                double *apack, int rows)
{
    gemm_chunk(ic, mc, cols, inner, A, lda, bpack, C, ldc, apack, rows, false);
}

/* The same product without packing, for when the packing buffers cannot be allocated. */
static void gemm_plain(int rows, int cols, int inner, const double *A, size_t lda,
                       const matrix_b *b, double *C, size_t ldc)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < inner; k++) {
            double a = A[(size_t)i * lda + (size_t)k];
            for (int j = 0; j < cols; j++)
                C[(size_t)i * ldc + (size_t)j] += a * b_at(b, k, j);
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
    bool wide;  /* AVX2 is there */
} gemm_job;

static void gemm_work(void *argument, int chunk, double *apack)
{
    const gemm_job *g = argument;
    int ic = chunk * MC, mc = g->rows - ic < MC ? g->rows - ic : MC;
    if (g->wide)
        gemm_chunk_avx2(ic, mc, g->cols, g->inner, g->A, g->lda, g->bpack, g->C, g->ldc, apack,
                        g->rows);
    else
        gemm_chunk_portable(ic, mc, g->cols, g->inner, g->A, g->lda, g->bpack, g->C, g->ldc,
                            apack, g->rows);
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
    size_t kc = (size_t)(inner < KC ? inner : KC);
    size_t a_bytes = round_up(round_up(MC, MR) * kc * sizeof(double), 64);
    size_t b_bytes = round_up(round_up((size_t)cols, NR) * (size_t)inner * sizeof(double), 64);
    double *bpack = aligned_alloc(64, b_bytes), *apack = aligned_alloc(64, a_bytes);
    if (bpack && apack) {
        pack_all_b(bpack, &b, cols, inner);
        gemm_job g = { rows, cols, inner, A, lda, bpack, C, ldc, have_avx2(config) };
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

/* exp(x) for x ≤ 0, four at a time; x < −745.2 (below the smallest subnormal, and −∞) gives 0.
 * x = k·ln 2 + r with |r| ≤ ln 2 / 2, exp(r) by its Taylor series to r¹³ (the next term is below
 * 2⁻⁵⁶ of the result), then 2^k built in the exponent field. 2^k is applied in two halves so that
 * results in the subnormal range still scale exactly until the final rounding. Within 2 ulp of
 * the correctly rounded exp. */
static inline __attribute__((always_inline)) void exp_nonpositive(v4d *out, const v4d *in)
{
    const double log2e = 0x1.71547652b82fep0, shifter = 0x1.8p52;
    /* ln 2 split so that k·ln2_hi is exact for |k| < 2^21 (Cody and Waite's reduction) */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    v4d x = *in;
    v4i underflow = x < -745.2;
    x = (v4d)((v4i)x & ~underflow); /* 0 in those lanes: −∞ would make NaN on the way */
    /* k = round(x / ln 2), by adding 1.5·2^52 so the rounding happens in the addition */
    v4d t = x * log2e + shifter;
    v4d k = t - shifter;
    v4d r = (x - k * ln2_hi) - k * ln2_lo;
    v4d p = r * (1.0 / 6227020800.0) + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* the low bits of t hold k; 2^k1 · 2^k2 with k1 = ⌊k/2⌋ keeps both factors normal */
    v4d shift = { shifter, shifter, shifter, shifter };
    v4i ki = (v4i)t - (v4i)shift;
    v4i k1 = ki >> 1, k2 = ki - k1;
    v4d scale1 = (v4d)((k1 + 1023) << 52), scale2 = (v4d)((k2 + 1023) << 52);
    v4d result = p * scale1 * scale2;
    *out = (v4d)((v4i)result & ~underflow);
}

/* One row's softmax, for MASK_NONE rows and for rows whose hidden cells are already −∞ in w.
 * w holds the masked, scaled scores on entry and the weights on return. */
AVX2 static void softmax_row_avx2(double *w, int m)
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
        exp_nonpositive(&e, &x);
        STORE(w + j, e);
        sums += e;
    }
    if (j < m) {
        v4d x = { -INFINITY, -INFINITY, -INFINITY, -INFINITY }, e;
        memcpy(&x, w + j, (size_t)(m - j) * sizeof *w);
        x -= row_max;
        exp_nonpositive(&e, &x);
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

/* Every score of every row, scaled: the core's score / sqrt(d_k), which sqrt's correct rounding
 * makes bit-for-bit the same as its own; IEEE division is exact-rounded in vectors too. */
AVX2 static void scale_rows_avx2(double *w, const double *s, size_t count, bool scale,
                                 double divisor)
{
    size_t j = 0;
    if (!scale) {
        memcpy(w, s, count * sizeof *w);
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

/* The same row one number at a time, with libm's exp: for processors without AVX2. */
static void softmax_row_portable(double *w, int m)
{
    /* pass 1: the row max */
    double row_max = -INFINITY;
    for (int j = 0; j < m; j++)
        row_max = w[j] > row_max ? w[j] : row_max;
    /* pass 2: exponentials shifted by the row max (the stability trick, as above); hidden
     * cells, −∞, give exactly 0 */
    double sum = 0.0;
    for (int j = 0; j < m; j++) {
        w[j] = w[j] == -INFINITY ? 0.0 : exp(w[j] - row_max);
        sum += w[j];
    }
    /* pass 3: normalise */
    for (int j = 0; j < m; j++)
        w[j] /= sum;
}

static void scale_rows_portable(double *w, const double *s, size_t count, bool scale,
                                double divisor)
{
    for (size_t j = 0; j < count; j++)
        w[j] = scale ? s[j] / divisor : s[j];
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
    bool wide;  /* AVX2 is there */
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
                                                    sqrt((double)rule->d_k));
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
        (wide ? softmax_row_avx2 : softmax_row_portable)(w, x->m);
    }
}

void kernels_softmax(double *weights, const double *scores, int n, int m,
                     const kernels_softmax_rule *rule, const kernels_config *config)
{
    softmax_job job = { weights, scores, n, m, rule, have_avx2(config) };
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
