/* Fast kernels for the attention core: the cache-blocked, register-tiled matrix product (packed
 * panels of B, A read where it lies, 6×8 or 6×32 tiles in vector registers, fused multiply-add;
 * AVX2 or AVX-512 on x86-64, NEON on AArch64), split by rows across threads when large, and the
 * one thread runner (the softmax is kernels_softmax.c). See kernels.h. */
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
#include "kernels_private.h"

/* Register tile: MR rows of A times nr columns of B (NR_AVX2 = 8 or NR_AVX512 = 32) are summed in
 * MR·nr/4 or MR·nr/8 vector accumulators: 12 registers of the 16 (AVX2) or 24 of the 32
 * (AVX-512), leaving room for the B vectors and one broadcast A value. The portable code uses
 * 6×8 tiles. */
#define MR 6
#define NR_AVX2 8
#define NR_AVX512 32
#define NR_MAX NR_AVX512
/* Cache blocks: a KC×nr panel of packed B (16 or 64 KiB) stays in L1 or streams from L2 while
 * the MC×KC block of A it multiplies (96 KiB) is read from L2; NC columns at a time keep a KC×NC
 * block of packed B (1 MiB) within L2. Measured on a Zen 5 core (L1 48 KiB, L2 1 MiB): KC = 128
 * or 512 were no faster. */
#define KC 256
#define MC 48
#define NC 512
/* Large products and softmaxes are split by rows across up to this many threads. Below
 * SPLIT_WORK multiply-adds the calling thread works alone: starting a thread costs tens of µs. */
#define MAX_THREADS 8
#define SPLIT_WORK (1 << 21)

kernels_path kernels_path_of(const kernels_config *config)
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
    return names[kernels_path_of(config)];
}

/* The left-hand matrix: element (r, k) is base[r·row + k·k_step] (a stored matrix: row = its
 * row stride, k_step = 1; a stored transpose: row = 1, k_step = its row stride). */
typedef struct {
    const double *base;
    size_t row, k_step;
} matrix_a;

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
static void pack_a(double *out, const matrix_a *a, int rows, int i0, int mc, int p0, int kc)
{
    for (int t = 0; t < mc; t += MR, out += (size_t)MR * (size_t)kc) {
        const double *row[MR];
        int valid = 0;
        for (int r = 0; r < MR; r++)
            if (t + r < mc && i0 + t + r < rows)
                row[valid++] = a->base + (size_t)(i0 + t + r) * a->row + (size_t)p0 * a->k_step;
        /* written in the order the kernel reads, which keeps the stores sequential */
        for (int p = 0; p < kc; p++) {
            double *o = out + (size_t)p * MR;
            int r = 0;
            for (; r < valid; r++)
                o[r] = row[r][(size_t)p * a->k_step];
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

/* A register tile: C tile (MR×nr, row stride ldc) = (first ? 0 : C tile) + A tile · packed B
 * panel, over kc steps, where A's element (r, p) is a[r·a_row + p·a_k]: A read where it lies
 * (a_row = its row stride, a_k = 1), or a packed tile (1, MR). Each cell's accumulator takes one
 * fused multiply-add per step, acc = fma(a[r,p], b[p,c], acc), in k order, from 0 or from what
 * earlier k blocks left in C: the textbook fused sum bit for bit, whichever tile computes it. */
typedef void tile_function(int kc, const double *a, size_t a_row, size_t a_k, const double *b,
                           double *c, size_t ldc, bool first);

/* The portable tile: one libm fma per step and cell (the hardware instruction where the processor
 * has one; glibc emulates it exactly, and slowly, where it has not). */
static void tile_portable(int kc, const double *a, size_t a_row, size_t a_k, const double *b,
                          double *c, size_t ldc, bool first)
{
    double acc[MR][NR_AVX2];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR_AVX2; j++)
            acc[r][j] = first ? 0.0 : c[(size_t)r * ldc + (size_t)j];
    for (int p = 0; p < kc; p++, a += a_k, b += NR_AVX2)
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < NR_AVX2; j++)
                acc[r][j] = fma(a[(size_t)r * a_row], b[j], acc[r][j]);
    for (int r = 0; r < MR; r++)
        memcpy(c + (size_t)r * ldc, acc[r], sizeof acc[r]);
}

#ifdef KERNELS_X86
/* 6×8 in twelve 4-double registers; the loops over rows are unrolled so each accumulator stays in
 * its register. */
AVX2_FMA static void tile_avx2_fma(int kc, const double *a, size_t a_row, size_t a_k,
                                   const double *b, double *c, size_t ldc, bool first)
{
    __m256d acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + (size_t)r * ldc);
        acc[r][1] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + (size_t)r * ldc + 4);
    }
    for (int p = 0; p < kc; p++, a += a_k, b += NR_AVX2) {
        __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            __m256d x = _mm256_broadcast_sd(a + (size_t)r * a_row);
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

/* 6×32 in twenty-four 8-double registers of the 32, with four B vectors: 24 independent
 * accumulators keep both FMA pipes busy through the FMA's latency, and each step's ten loads
 * (four of B, six broadcasts of A) feed 24 FMAs. */
#define AVX512_VECTORS (NR_AVX512 / 8)
AVX512 static void tile_avx512(int kc, const double *a, size_t a_row, size_t a_k,
                               const double *b, double *c, size_t ldc, bool first)
{
    __m512d acc[MR][AVX512_VECTORS];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < AVX512_VECTORS; q++)
            acc[r][q] = first ? _mm512_setzero_pd() : _mm512_loadu_pd(c + (size_t)r * ldc + 8 * q);
    for (int p = 0; p < kc; p++, a += a_k, b += NR_AVX512) {
        __m512d bv[AVX512_VECTORS];
#pragma GCC unroll 4
        for (int q = 0; q < AVX512_VECTORS; q++)
            bv[q] = _mm512_loadu_pd(b + 8 * q);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            __m512d x = _mm512_set1_pd(a[(size_t)r * a_row]);
#pragma GCC unroll 4
            for (int q = 0; q < AVX512_VECTORS; q++)
                acc[r][q] = _mm512_fmadd_pd(x, bv[q], acc[r][q]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < AVX512_VECTORS; q++)
            _mm512_storeu_pd(c + (size_t)r * ldc + 8 * q, acc[r][q]);
}
#endif

#ifdef KERNELS_NEON
/* 6×8 in twenty-four 2-double registers of the 32, with four B vectors; each step multiplies B
 * by one of A's numbers (vfmaq_n_f64: acc + b·a with one rounding, the same as fma(a, b, acc)
 * since the product commutes exactly). */
static void tile_neon(int kc, const double *a, size_t a_row, size_t a_k, const double *b,
                      double *c, size_t ldc, bool first)
{
    float64x2_t acc[MR][4];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++)
            acc[r][q] = first ? vdupq_n_f64(0.0) : vld1q_f64(c + (size_t)r * ldc + 2 * q);
    for (int p = 0; p < kc; p++, a += a_k, b += NR_AVX2) {
        float64x2_t bv[4] = { vld1q_f64(b), vld1q_f64(b + 2), vld1q_f64(b + 4), vld1q_f64(b + 6) };
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            double x = a[(size_t)r * a_row];
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                acc[r][q] = vfmaq_n_f64(acc[r][q], bv[q], x);
        }
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
 * width). The tiles read A where it lies: its rows are contiguous, so each tile's six rows stream
 * through the caches as a packed copy would, and copying them first cost more than it saved.
 * Only a last tile of fewer than MR rows is packed (into apack, MR×KC, zero-padded), so no tile
 * reads past A's last row. inner ≥ 1; the first k block writes C, the later ones add to it. */
static void gemm_chunk(int ic, int mc, int cols, int inner, const matrix_a *a,
                       const double *bpack, double *C, size_t ldc, double *apack, int rows,
                       tile_kind kind)
{
    double edge[MR * NR_MAX] = { 0 };
    int width = kind.nr, whole = mc / MR * MR;  /* rows in full tiles */
    for (int jc = 0; jc < cols; jc += NC) {
        int nc = cols - jc < NC ? cols - jc : NC;
        for (int pc = 0; pc < inner; pc += KC) {
            int kc = inner - pc < KC ? inner - pc : KC;
            if (whole < mc)
                pack_a(apack, a, rows, ic + whole, mc - whole, pc, kc);
            /* every tile, B panel outermost so it stays in cache; partial tiles at the edges go
             * through a full-size scratch tile */
            for (int jr = 0; jr < nc; jr += width) {
                const double *bp = bpack + (size_t)jr * (size_t)kc;
                int nr = nc - jr < width ? nc - jr : width;
                for (int ir = 0; ir < mc; ir += MR) {
                    int mr = mc - ir < MR ? mc - ir : MR;
                    bool packed = ir >= whole;
                    const double *ap = packed ? apack
                                              : a->base + (size_t)(ic + ir) * a->row
                                                    + (size_t)pc * a->k_step;
                    double *c = C + (size_t)(ic + ir) * ldc + (size_t)(jc + jr);
                    bool full = mr == MR && nr == width;
                    double *target = full ? c : edge;
                    size_t ld = full ? ldc : (size_t)width;
                    for (int r = 0; r < mr && pc > 0 && !full; r++)
                        memcpy(edge + r * width, c + (size_t)r * ldc, (size_t)nr * sizeof *c);
                    kind.tile(kc, ap, packed ? 1 : a->row, packed ? MR : a->k_step, bp, target, ld,
                              pc == 0);
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
static void gemm_plain(int rows, int cols, int inner, const matrix_a *a, const matrix_b *b,
                       double *C, size_t ldc)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < inner; k++) {
            double x = a->base[(size_t)i * a->row + (size_t)k * a->k_step];
            for (int j = 0; j < cols; j++) {
                double *c = C + (size_t)i * ldc + (size_t)j;
                *c = fma(x, b_at(b, k, j), *c);
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

/* (kernels_private.h) The helpers are detached threads; the threshold is SPLIT_WORK. */
void kernels_run_shared(void (*work)(void *, int, double *), void *job, int chunks,
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
    matrix_a a;
    const double *bpack;
    double *C;
    size_t ldc;
    tile_kind kind;
} gemm_job;

static void gemm_work(void *argument, int chunk, double *apack)
{
    const gemm_job *g = argument;
    int ic = chunk * MC, mc = g->rows - ic < MC ? g->rows - ic : MC;
    gemm_chunk(ic, mc, g->cols, g->inner, &g->a, g->bpack, g->C, g->ldc, apack, g->rows, g->kind);
}

/* C (rows×cols, row stride ldc) = a · b, each cell the fused sum in k order from 0. */
static void gemm(int rows, int cols, int inner, const matrix_a *a, const matrix_b *b, double *C,
                 size_t ldc, const kernels_config *config)
{
    if (rows < 1 || cols < 1)
        return;
    if (inner < 1) { /* an empty sum */
        for (int i = 0; i < rows; i++)
            memset(C + (size_t)i * ldc, 0, (size_t)cols * sizeof *C);
        return;
    }
    /* B is packed once, whole (inner × cols rounded up to whole panels), for every thread; each
     * thread packs a last partial tile of A's rows into its apack */
    tile_kind kind = tile_of(kernels_path_of(config));
    size_t kc = (size_t)(inner < KC ? inner : KC);
    size_t a_bytes = round_up(MR * kc * sizeof(double), 64);
    size_t b_bytes = round_up(round_up((size_t)cols, (size_t)kind.nr) * (size_t)inner * sizeof(double), 64);
    double *bpack = aligned_alloc(64, b_bytes), *apack = aligned_alloc(64, a_bytes);
    if (bpack && apack) {
        pack_all_b(bpack, b, cols, inner, kind.nr);
        gemm_job g = { rows, cols, inner, *a, bpack, C, ldc, kind };
        kernels_run_shared(gemm_work, &g, (rows + MC - 1) / MC, apack, a_bytes,
                           (double)rows * (double)cols * (double)inner, config);
    } else { /* out of memory for packing: the plain loops need none */
        for (int i = 0; i < rows; i++)
            memset(C + (size_t)i * ldc, 0, (size_t)cols * sizeof *C);
        gemm_plain(rows, cols, inner, a, b, C, ldc);
    }
    free(apack);
    free(bpack);
}

void kernels_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                  const double *B, size_t ldb, bool b_transposed, double *C, size_t ldc,
                  const kernels_config *config)
{
    matrix_a a = { A, lda, 1 };
    matrix_b b = { B, ldb, b_transposed };
    gemm(rows, cols, inner, &a, &b, C, ldc, config);
}

void kernels_add_product(double *out, size_t ld_out, int rows, int cols, int count,
                         const double *a, size_t a_row, size_t a_k,
                         const double *b, size_t b_k, size_t b_col, const kernels_config *config)
{
    if (rows < 1 || cols < 1)
        return;
    matrix_a left = { a, a_row, a_k };
    matrix_b right = { b, b_col == 1 ? b_k : b_col, b_col != 1 };
    size_t cells = (size_t)rows * (size_t)cols;
    double *sums = b_col == 1 || b_k == 1 ? malloc(cells * sizeof *sums) : NULL;
    if (sums)
        gemm(rows, cols, count, &left, &right, sums, (size_t)cols, config);
    for (size_t r = 0; r < (size_t)rows; r++)
        for (size_t c = 0; c < (size_t)cols; c++) {
            double total = 0.0;
            if (sums)
                total = sums[r * (size_t)cols + c];
            else /* B strided both ways (no caller has one), or no memory: the loop itself */
                for (size_t k = 0; k < (size_t)count; k++)
                    total = fma(a[r * a_row + k * a_k], b[k * b_k + c * b_col], total);
            out[r * ld_out + c] += total;
        }
    free(sums);
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
