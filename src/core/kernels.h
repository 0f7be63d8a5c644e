/* Fast double-precision kernels for the attention core: cache-blocked matrix products and the
 * stable row softmax, bit-for-bit the textbook loops the tests keep (tests/test_kernels.c). */
#ifndef ATTNSTEP_KERNELS_H
#define ATTNSTEP_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

/* How the kernels run; results never depend on it, to the bit. Every kernel takes one (NULL =
 * defaults). The products run vector code with fused multiply-add where the processor has it
 * (x86-64: AVX-512, else AVX2 with FMA, chosen at run time; AArch64: NEON, always there), and
 * the softmax the build for the same code (kernels_softmax.c); elsewhere, or with portable set,
 * the portable code runs: the same arithmetic with libm's fma() (the hardware instruction where
 * there is one, an exact and slow emulation where there is not) and the same exponential. */
typedef struct {
    int threads;     /* threads a large product or softmax is split across; 0 = the online
                        processors; 1 keeps all work on the calling thread */
    bool portable;   /* never the vector code */
    bool no_avx512;  /* the AVX2 code even where the processor has AVX-512 (the tests compare
                        every path) */
} kernels_config;

/* The code the products run on this processor under config: "avx512", "avx2+fma", "neon" or
 * "portable" (a static string, for benchmarks and reports; results never depend on it). */
const char *kernels_path_name(const kernels_config *config);

/* The threads config asks for, or the online processors; at least 1, at most 8. Results do not
 * depend on it: each cell is computed the same way by whichever thread. */
int kernels_threads(const kernels_config *config);

/* C (rows×cols, row stride ldc) = A (rows×inner, row stride lda) · B. B is inner×cols with row
 * stride ldb, or, when b_transposed, B's transpose is what is stored: cols×inner, row stride ldb.
 * Every cell is summed over k = 0, 1, … in order, each step one fused multiply-add (a single
 * rounding, as IEEE 754 defines it), so the result is bit-for-bit the textbook loop
 * `c = 0; for k: c = fma(a[i,k], b[k,j], c)` on every machine and path. */
void kernels_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                  const double *B, size_t ldb, bool b_transposed, double *C, size_t ldc,
                  const kernels_config *config);

/* out (rows×cols, row stride ld_out) += A·B over count terms, where A's element (r, k) is
 * a[r·a_row + k·a_k] (a stored matrix or its transpose) and B's element (k, c) is
 * b[k·b_k + c·b_col]: each cell's sum is taken from 0, one fused multiply-add a term in k order,
 * then added to out as one more rounded addition; bit-for-bit the loop `total = 0; for k: total =
 * fma(a(r,k), b(k,c), total); out[r][c] += total` on every path. Vector code when one of b_k and
 * b_col is 1 (the backward pass's products), that loop otherwise. */
void kernels_add_product(double *out, size_t ld_out, int rows, int cols, int count,
                         const double *a, size_t a_row, size_t a_k,
                         const double *b, size_t b_k, size_t b_col, const kernels_config *config);

/* C (rows×cols) = A (rows×inner) · B (inner×cols), all contiguous: the core's matmul. */
void kernels_matmul(double *C, const double *A, const double *B, int rows, int inner, int cols,
                    const kernels_config *config);

/* One head's scores (n×m, contiguous) = Q_h · K_hᵀ. Q has n rows and K has m rows, both of row
 * stride ld (d_model); the head reads d_k columns starting at column offset. */
void kernels_scores(double *scores, const double *Q, const double *K, int n, int m, int d_k,
                    int ld, int offset, const kernels_config *config);

/* One head's context (n×d_k, contiguous) = weights (n×m, contiguous) · V_h, where V has m rows
 * of stride ld and the head reads d_k columns starting at column offset. */
void kernels_context(double *context, const double *weights, const double *V, int n, int m,
                     int d_k, int ld, int offset, const kernels_config *config);

/* How the softmax reads a score: the core's own semantics, so that what it shows as `scaled`
 * and `masked` is bit-for-bit what the softmax read. Hidden cells are −∞, so their weight is
 * exactly 0. */
typedef struct {
    bool scale;                       /* scaled = score / divisor, else scaled = score */
    double divisor;                   /* the core's scaling rule's (trace_score_divisor) */
    bool causal;                      /* row i hides the columns after i */
    const unsigned char *allowed;     /* (n, m), 1 = may attend, 0 = hidden; NULL = all visible
                                         (read only when causal is false) */
} kernels_softmax_rule;

/* weights (n×m) = row softmax of the masked, scaled scores (n×m), both contiguous. Every row must
 * have at least one visible cell (the core checks that before computing). weights may not alias
 * scores. The exponential is the kernels' own (within 2 ulp of the correctly rounded exp, the
 * same bits on every path); sums and the division are plain IEEE operations. */
void kernels_softmax(double *weights, const double *scores, int n, int m,
                     const kernels_softmax_rule *rule, const kernels_config *config);

/* out[i] = exp(in[i]) for in[i] ≤ 0 (or −∞), by the softmax's own exponential, so that the tests
 * can hold it to its contract: within 2 ulp of the correctly rounded exp, 0 below −745.2, and the
 * same bits on every path. out may be in. */
void kernels_exp_nonpositive(double *out, const double *in, size_t count,
                             const kernels_config *config);

/* Whether every one of the count numbers at x is finite (no ±∞, no NaN): a fast scan, so that
 * the core walks cell by cell only to name an overflow it knows is there. */
bool kernels_all_finite(const double *x, size_t count, const kernels_config *config);

/* Asks the system (Linux: madvise MADV_HUGEPAGE) to back a large, freshly allocated block with
 * huge pages, before it is first written: a 2 MiB page costs one page fault where 4 KiB pages
 * cost 512, which is a large share of computing a 1024-token trace once. Blocks under 2 MiB and
 * systems without the advice are left alone; the contents are never changed. */
void kernels_prefer_huge_pages(void *memory, size_t bytes);

#endif
