/* The fast kernels against plain textbook loops written here: every product (fused multiply-add
 * in k order, bit for bit) and the softmax on odd sizes (1, 3, 17, 65, 130) and on the edges of
 * the kernels' register tiles and cache blocks, on every path the processor has. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "kernels.h"
#include "textbook.h"
#include "trace.h"

#define TOLERANCE 1e-12

/* How the kernels run in the current group: the fastest code, the AVX2 code (the fastest too on a
 * processor without AVX-512), then the portable code. */
static kernels_config config;

static const int odd_sizes[] = { 1, 3, 17, 65, 130 };
#define ODD_COUNT (int)(sizeof odd_sizes / sizeof odd_sizes[0])

/* Fills count numbers in [-1, 1) from a fixed linear congruential sequence. */
static void fill(double *x, size_t count, unsigned seed)
{
    unsigned long long state = seed * 2654435761ULL + 7;
    for (size_t i = 0; i < count; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

static double *numbers(size_t count, unsigned seed)
{
    double *x = malloc((count ? count : 1) * sizeof *x);
    assert_non_null(x);
    fill(x, count, seed);
    return x;
}

/* Whether fast is slow to the bit; says where it is not. */
static void assert_bits_equal(const char *what, const double *slow, const double *fast,
                              size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (memcmp(&slow[i], &fast[i], sizeof slow[i]) != 0) {
            print_error("%s: cell %zu is %.17g, not the textbook's %.17g (path %s)\n", what, i,
                        fast[i], slow[i], kernels_path_name(&config));
            fail();
        }
}

/* textbook_gemm, remembered: each kernel group (fastest, AVX2, portable) checks the same
 * products of the same numbers, and the textbook loops (libm's fma, a call per step) were half
 * of this suite's time; a product is looked up by its shape and a hash of the cells it reads
 * and writes only the cells textbook_gemm writes, so the caller sees the very same result. */
typedef struct remembered {
    int rows, cols, inner;
    bool transposed;
    unsigned long long key;
    double *cells;            /* rows × cols, contiguous */
    struct remembered *next;
} remembered;
static remembered *products;

static unsigned long long hash_cells(unsigned long long h, const double *x, int rows, int cols,
                                     size_t stride)
{
    for (int i = 0; i < rows; i++) {
        const unsigned char *bytes = (const unsigned char *)(x + (size_t)i * stride);
        for (size_t b = 0; b < (size_t)cols * sizeof *x; b++)
            h = (h ^ bytes[b]) * 1099511628211ULL;  /* FNV-1a */
    }
    return h;
}

static void reference_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                           const double *B, size_t ldb, bool transposed, double *C, size_t ldc)
{
    unsigned long long key = hash_cells(14695981039346656037ULL, A, rows, inner, lda);
    key = transposed ? hash_cells(key, B, cols, inner, ldb) : hash_cells(key, B, inner, cols, ldb);
    remembered *r = products;
    while (r && !(r->rows == rows && r->cols == cols && r->inner == inner &&
                  r->transposed == transposed && r->key == key))
        r = r->next;
    if (!r) {
        r = calloc(1, sizeof *r);
        assert_non_null(r);
        *r = (remembered){ rows, cols, inner, transposed, key,
                           malloc((size_t)rows * (size_t)cols * sizeof *r->cells), products };
        assert_non_null(r->cells);
        textbook_gemm(rows, cols, inner, A, lda, B, ldb, transposed, r->cells, (size_t)cols);
        products = r;
    }
    for (int i = 0; i < rows; i++)
        memcpy(C + (size_t)i * ldc, r->cells + (size_t)i * (size_t)cols,
               (size_t)cols * sizeof *C);
}

static void forget_products(void)
{
    while (products) {
        remembered *next = products->next;
        free(products->cells);
        free(products);
        products = next;
    }
}

/* Runs kernels_gemm and the textbook on one shape, with padded strides (so the kernels must not
 * touch the padding), both B layouts; since both take fused steps in k order, the results (and
 * the padding) must agree bit for bit. */
static void check_gemm(int rows, int cols, int inner)
{
    for (int transposed = 0; transposed <= 1; transposed++) {
        size_t lda = (size_t)inner + 3, ldc = (size_t)cols + 2;
        size_t b_rows = transposed ? (size_t)cols : (size_t)inner;
        size_t ldb = (transposed ? (size_t)inner : (size_t)cols) + 1;
        double *A = numbers((size_t)rows * lda, 1), *B = numbers(b_rows * ldb, 2);
        double *fast = numbers((size_t)rows * ldc, 3), *slow = malloc((size_t)rows * ldc * sizeof *slow);
        assert_non_null(slow);
        memcpy(slow, fast, (size_t)rows * ldc * sizeof *slow); /* same padding in both */
        reference_gemm(rows, cols, inner, A, lda, B, ldb, transposed, slow, ldc);
        for (int threads = 1; threads <= 2; threads++) { /* large products split into two */
            kernels_config split = config;
            split.threads = threads;
            kernels_gemm(rows, cols, inner, A, lda, B, ldb, transposed, fast, ldc, &split);
            char what[96];
            snprintf(what, sizeof what, "gemm %dx%dx%d%s, %d threads", rows, inner, cols,
                     transposed ? " (B transposed)" : "", threads);
            assert_bits_equal(what, slow, fast, (size_t)rows * ldc);
        }
        free(A);
        free(B);
        free(fast);
        free(slow);
    }
}

static void test_gemm_odd_sizes(void **state)
{
    (void)state;
    for (int a = 0; a < ODD_COUNT; a++)
        for (int b = 0; b < ODD_COUNT; b++)
            for (int c = 0; c < ODD_COUNT; c++)
                check_gemm(odd_sizes[a], odd_sizes[b], odd_sizes[c]);
}

/* Shapes on either side of the 6×8 and 6×32 register tiles, the 96-row and 256-deep cache blocks
 * and the 512-column B block, rows that leave a last tile of one to five (the only A rows packed:
 * the others are read where they lie), and two large enough to be shared by threads. */
static void test_gemm_block_edges(void **state)
{
    (void)state;
    static const int shapes[][3] = {
        { 5, 7, 1 }, { 6, 8, 2 }, { 7, 9, 3 }, { 12, 16, 4 }, { 13, 17, 5 },
        { 95, 8, 255 }, { 96, 16, 256 }, { 97, 24, 257 }, { 191, 7, 511 }, { 192, 9, 512 },
        { 193, 5, 513 }, { 6, 511, 6 }, { 7, 512, 9 }, { 3, 513, 257 }, { 1, 1, 600 },
        { 100, 1, 1 }, { 1, 600, 1 }, { 6, 15, 7 }, { 6, 16, 8 }, { 11, 17, 31 },
        { 12, 31, 33 }, { 13, 32, 64 }, { 5, 33, 65 }, { 97, 527, 257 }, { 96, 528, 256 },
        { 6, 32, 1 }, { 7, 63, 31 }, { 11, 64, 300 }, { 101, 65, 257 }, { 18, 96, 40 },
        { 301, 203, 97 }, { 512, 64, 64 }, /* enough work to be split across two threads */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        check_gemm(shapes[s][0], shapes[s][1], shapes[s][2]);
}

/* The backward pass's product, out += A·B with A stored or transposed and B stored or
 * transposed, against its loop written out here (a fused sum from 0 per cell, then one
 * addition): every layout, padded strides (the padding untouched), an empty sum (out + 0, which
 * turns −0 into +0 as the loop does), one and two threads. */
static void check_add_product(int rows, int cols, int count)
{
    for (int layout = 0; layout < 4; layout++) {
        bool a_transposed = layout & 1, b_transposed = layout & 2;
        size_t lda = (size_t)(a_transposed ? rows : count) + 3;
        size_t ldb = (size_t)(b_transposed ? count : cols) + 1, ld_out = (size_t)cols + 2;
        size_t a_row = a_transposed ? 1 : lda, a_k = a_transposed ? lda : 1;
        size_t b_k = b_transposed ? 1 : ldb, b_col = b_transposed ? ldb : 1;
        size_t a_cells = lda * (size_t)(a_transposed ? count : rows) + 1;
        size_t b_cells = ldb * (size_t)(b_transposed ? cols : count) + 1;
        double *A = numbers(a_cells, 4), *B = numbers(b_cells, 5);
        double *slow = numbers((size_t)rows * ld_out, 6), *fast = malloc((size_t)rows * ld_out * sizeof *fast);
        assert_non_null(fast);
        slow[0] = -0.0;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                double total = 0.0;
                for (int k = 0; k < count; k++)
                    total = fma(A[(size_t)r * a_row + (size_t)k * a_k],
                                B[(size_t)k * b_k + (size_t)c * b_col], total);
                slow[(size_t)r * ld_out + (size_t)c] += total;
            }
        for (int threads = 1; threads <= 2; threads++) {
            fill(fast, (size_t)rows * ld_out, 6);
            fast[0] = -0.0;
            kernels_config split = config;
            split.threads = threads;
            kernels_add_product(fast, ld_out, rows, cols, count, A, a_row, a_k, B, b_k, b_col,
                                &split);
            char what[112];
            snprintf(what, sizeof what, "add_product %dx%dx%d%s%s, %d threads", rows, count, cols,
                     a_transposed ? " (A transposed)" : "", b_transposed ? " (B transposed)" : "",
                     threads);
            assert_bits_equal(what, slow, fast, (size_t)rows * ld_out);
        }
        free(A);
        free(B);
        free(fast);
        free(slow);
    }
}

static void test_add_product_is_the_fused_loop(void **state)
{
    (void)state;
    static const int shapes[][3] = {
        { 1, 1, 0 }, { 3, 5, 0 }, { 1, 1, 1 }, { 5, 7, 3 }, { 6, 32, 64 }, { 7, 33, 65 },
        { 13, 64, 257 }, { 97, 65, 31 }, { 64, 512, 64 }, { 512, 64, 64 },
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        check_add_product(shapes[s][0], shapes[s][1], shapes[s][2]);
}

static void test_matmul_is_the_contiguous_product(void **state)
{
    (void)state;
    int rows = 17, inner = 65, cols = 130;
    double *A = numbers((size_t)rows * (size_t)inner, 4), *B = numbers((size_t)inner * (size_t)cols, 5);
    double *fast = numbers((size_t)rows * (size_t)cols, 6), *slow = numbers((size_t)rows * (size_t)cols, 7);
    kernels_matmul(fast, A, B, rows, inner, cols, &config);
    reference_gemm(rows, cols, inner, A, (size_t)inner, B, (size_t)cols, false, slow, (size_t)cols);
    assert_bits_equal("matmul", slow, fast, (size_t)rows * (size_t)cols);
    free(A);
    free(B);
    free(fast);
    free(slow);
}

/* Scores and context of every head, against the fused loops of a textbook multi-head attention,
 * bit for bit. */
static void test_scores_and_context_per_head(void **state)
{
    (void)state;
    static const int d_ks[] = { 1, 3, 17, 64 };
    for (int a = 0; a < ODD_COUNT; a++)
        for (int b = 0; b < ODD_COUNT; b++)
            for (size_t c = 0; c < sizeof d_ks / sizeof d_ks[0]; c++) {
                int n = odd_sizes[a], m = odd_sizes[b], d_k = d_ks[c], heads = 3;
                int d = heads * d_k;
                size_t nm = (size_t)n * (size_t)m, size = nm > (size_t)n * (size_t)d_k ? nm
                                                           : (size_t)n * (size_t)d_k;
                double *Q = numbers((size_t)n * (size_t)d, 8), *K = numbers((size_t)m * (size_t)d, 9);
                double *V = numbers((size_t)m * (size_t)d, 10), *W = numbers(nm, 11);
                double *fast = numbers(size, 12), *slow = numbers(size, 13);
                for (int h = 0; h < heads; h++) {
                    int offset = h * d_k;
                    kernels_scores(fast, Q, K, n, m, d_k, d, offset, &config);
                    reference_gemm(n, m, d_k, Q + offset, (size_t)d, K + offset, (size_t)d, true,
                                  slow, (size_t)m);
                    assert_bits_equal("scores", slow, fast, nm);
                    kernels_context(fast, W, V, n, m, d_k, d, offset, &config);
                    reference_gemm(n, d_k, m, W, (size_t)m, V + offset, (size_t)d, false, slow,
                                  (size_t)d_k);
                    assert_bits_equal("context", slow, fast, (size_t)n * (size_t)d_k);
                }
                free(Q);
                free(K);
                free(V);
                free(W);
                free(fast);
                free(slow);
            }
}

static void check_softmax(const double *scores, int n, int m, const kernels_softmax_rule *rule,
                          const char *what)
{
    size_t nm = (size_t)n * (size_t)m;
    double *fast = numbers(nm, 14), *slow = numbers(nm, 15);
    kernels_softmax(fast, scores, n, m, rule, &config);
    textbook_softmax(slow, scores, n, m, rule);
    support_assert_close(what, slow, fast, nm, TOLERANCE);
    for (size_t at = 0; at < nm; at++)
        if (slow[at] == 0.0 && fast[at] != 0.0) {
            print_error("%s: cell %zu should be exactly 0, got %.17g\n", what, at, fast[at]);
            fail();
        }
    free(fast);
    free(slow);
}

static void test_softmax_every_mask_and_scale(void **state)
{
    (void)state;
    for (int a = 0; a < ODD_COUNT; a++)
        for (int b = 0; b < ODD_COUNT; b++) {
            int n = odd_sizes[a], m = odd_sizes[b];
            size_t nm = (size_t)n * (size_t)m;
            double *scores = numbers(nm, 16);
            for (size_t at = 0; at < nm; at++)
                scores[at] *= 40.0; /* a spread that makes the max shift matter */
            unsigned char *cells = malloc(nm);
            assert_non_null(cells);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++) /* every row keeps column i % m visible */
                    cells[(size_t)i * (size_t)m + (size_t)j] = (i * 7 + j * 3) % 5 != 0
                                                               || j == i % m;
            for (int scale = 0; scale <= 1; scale++) {
                kernels_softmax_rule none = { scale, sqrt(64.0), false, NULL };
                kernels_softmax_rule cells_rule = { scale, sqrt(17.0), false, cells };
                check_softmax(scores, n, m, &none, "softmax, no mask");
                check_softmax(scores, n, m, &cells_rule, "softmax, explicit mask");
                if (n <= m) { /* causal: row i sees 0 … i, so it needs m > i */
                    kernels_softmax_rule causal = { scale, sqrt(3.0), true, NULL };
                    check_softmax(scores, n, m, &causal, "softmax, causal mask");
                }
            }
            free(scores);
            free(cells);
        }
}

/* scaled = score / √d_k for every d_k up to 200: in a row [0, x] the weight of x is the logistic
 * of its scaled value. */
static void test_softmax_divides_by_sqrt_dk(void **state)
{
    (void)state;
    for (int d_k = 1; d_k <= 200; d_k++) {
        double scores[2] = { 0.0, -1.0 / 3.0 - d_k }, w[2];
        kernels_softmax_rule rule = { true, sqrt((double)d_k), false, NULL };
        kernels_softmax(w, scores, 1, 2, &rule, &config);
        double scaled = scores[1] / sqrt((double)d_k);
        double expected = exp(scaled) / (1.0 + exp(scaled));
        assert_true(fabs(w[1] - expected) <= 4e-16 * expected);
    }
}

/* The vector exponential across its whole range, through two-cell rows [0, x]: weight of x is
 * exp(x) / (1 + exp(x)); x below −745.2 (exp under half the smallest subnormal) gives 0. */
static void test_softmax_exponential_over_its_range(void **state)
{
    (void)state;
    for (double x = -760.0; x <= 0.0; x += 0.173) {
        double scores[2] = { 0.0, x }, w[2];
        kernels_softmax_rule rule = { false, sqrt(1.0), false, NULL };
        kernels_softmax(w, scores, 1, 2, &rule, &config);
        double e = exp(x), expected = e / (1.0 + e);
        double error = fabs(w[1] - expected);
        bool ok = error <= TOLERANCE
               && (expected < 1e-300 || error <= 4e-16 * expected) /* a few ulp while normal */
               && (expected != 0.0 || w[1] == 0.0);
        if (!ok) {
            print_error("x = %.17g: expected %.17g, got %.17g\n", x, expected, w[1]);
            fail();
        }
    }
}

/* Scores near 1000, far beyond where exp overflows (709.8), in rows no mask hides: only the
 * shift by the row max keeps the exponentials finite. Every row length from 1 to 9 and 17
 * (the vector body and its tail), unmasked, with an explicit mask and causal, scaled and not. */
static void test_softmax_of_huge_unmasked_scores(void **state)
{
    (void)state;
    static const int lengths[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 17 };
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        int m = lengths[l], n = m;
        size_t nm = (size_t)n * (size_t)m;
        double *scores = numbers(nm, 27);
        unsigned char *cells = malloc(nm);
        assert_non_null(cells);
        for (size_t at = 0; at < nm; at++) {
            scores[at] = 1000.0 + 30.0 * scores[at];  /* in [970, 1030) */
            cells[at] = at % 3 != 1 || at % (size_t)m == 0;  /* column 0 always visible */
        }
        for (int scale = 0; scale <= 1; scale++) {
            kernels_softmax_rule none = { scale, sqrt(1.0), false, NULL };
            kernels_softmax_rule some = { scale, sqrt(1.0), false, cells };
            kernels_softmax_rule causal = { scale, sqrt(1.0), true, NULL };
            check_softmax(scores, n, m, &none, "huge scores, no mask");
            check_softmax(scores, n, m, &some, "huge scores, explicit mask");
            check_softmax(scores, n, m, &causal, "huge scores, causal mask");
        }
        free(scores);
        free(cells);
    }
}

/* How many units in the last place apart two positive doubles are. */
static double ulps_apart(double a, double b)
{
    double unit = nextafter(fmax(a, b), INFINITY) - fmax(a, b);
    return fabs(a - b) / unit;
}

/* The softmax's exponential itself, at 400,000 points over [−745.2, 0] and every tail length: within 2
 * ulp of libm's (glibc's exp is within 1 ulp of the correctly rounded one) while the result is
 * normal, within one subnormal step below, exactly 0 under −745.2 and for −∞; and, whatever the
 * path, the same bits as the portable code. */
static void test_exponential_within_two_ulp_on_every_path(void **state)
{
    (void)state;
    size_t count = 400003;
    double *x = malloc(count * sizeof *x), *e = malloc(count * sizeof *e);
    double *portable = malloc(count * sizeof *portable);
    assert_true(x && e && portable);
    for (size_t i = 0; i < count; i++)
        x[i] = -745.2 * (double)i / (double)(count - 1);
    x[count - 1] = -INFINITY;
    x[count - 2] = -745.3;
    kernels_exp_nonpositive(e, x, count, &config);
    kernels_exp_nonpositive(portable, x, count, &(kernels_config){ .portable = true });
    assert_memory_equal(e, portable, count * sizeof *e);
    double worst = 0.0;
    for (size_t i = 0; i < count - 2; i++) {
        double want = exp(x[i]);
        double apart = want >= 0x1p-1022 ? ulps_apart(want, e[i]) : fabs(want - e[i]) / 0x1p-1074;
        if (apart > worst)
            worst = apart;
    }
    if (worst > 2.0) {
        print_error("the exponential is %.2f ulp from libm's\n", worst);
        fail();
    }
    assert_true(e[count - 1] == 0.0 && e[count - 2] == 0.0);
    for (size_t tail = 1; tail <= 4; tail++) { /* out may be in; counts not a multiple of 4 */
        double y[4] = { -1.0, -2.0, -3.0, -4.0 };
        kernels_exp_nonpositive(y, y, tail, &config);
        for (size_t i = 0; i < 4; i++)
            assert_true(i < tail ? ulps_apart(y[i], exp(-(double)(i + 1))) <= 2.0
                                 : y[i] == -(double)(i + 1));
    }
    free(x);
    free(e);
    free(portable);
}

/* Rows of four and more cells go through the vector passes; their sums must still be 1. */
static void test_softmax_rows_sum_to_one(void **state)
{
    (void)state;
    int n = 9, m = 130;
    double *scores = numbers((size_t)n * (size_t)m, 17), *w = numbers((size_t)n * (size_t)m, 18);
    for (int i = 0; i < n * m; i++)
        scores[i] *= 300.0 * (i % m);
    kernels_softmax_rule rule = { true, sqrt(64.0), true, NULL };
    kernels_softmax(w, scores, n, m, &rule, &config);
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int j = 0; j < m; j++)
            sum += w[i * m + j];
        assert_true(fabs(sum - 1.0) <= 1e-12);
        for (int j = i + 1; j < m; j++)
            assert_true(w[i * m + j] == 0.0);
    }
    free(scores);
    free(w);
}

/* The finite scan finds ±∞ and NaN at every place of arrays of every length up to 13 (the
 * vector body and its tail). */
static void test_all_finite_finds_any_non_finite_number(void **state)
{
    (void)state;
    static const double bad[] = { INFINITY, -INFINITY, NAN };
    for (size_t count = 1; count <= 13; count++) {
        double *x = numbers(count, 19);
        assert_true(kernels_all_finite(x, count, &config));
        for (size_t at = 0; at < count; at++)
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                double kept = x[at];
                x[at] = bad[b];
                assert_false(kernels_all_finite(x, count, &config));
                x[at] = kept;
            }
        assert_true(kernels_all_finite(x, count, &config));
        free(x);
    }
}

/* Splitting the rows across threads must not change a single bit, whatever the count. */
static void test_threads_do_not_change_results(void **state)
{
    (void)state;
    int rows = 301, cols = 203, inner = 97;
    double *A = numbers((size_t)rows * (size_t)inner, 21), *B = numbers((size_t)inner * (size_t)cols, 22);
    double *scores = numbers((size_t)rows * (size_t)rows, 23);
    double *C[3], *W[3];
    kernels_softmax_rule rule = { true, sqrt(64.0), true, NULL };
    for (int t = 0; t < 3; t++) {
        kernels_config threads = config;
        threads.threads = t + 1;
        assert_int_equal(kernels_threads(&threads), t + 1);
        C[t] = numbers((size_t)rows * (size_t)cols, 24);
        W[t] = numbers((size_t)rows * (size_t)rows, 25);
        kernels_matmul(C[t], A, B, rows, inner, cols, &threads);
        kernels_softmax(W[t], scores, rows, rows, &rule, &threads);
    }
    kernels_config defaults = { .threads = 0 };
    assert_true(kernels_threads(&defaults) >= 1 && kernels_threads(NULL) <= 8);
    for (int t = 1; t < 3; t++) {
        assert_memory_equal(C[0], C[t], (size_t)rows * (size_t)cols * sizeof(double));
        assert_memory_equal(W[0], W[t], (size_t)rows * (size_t)rows * sizeof(double));
    }
    for (int t = 0; t < 3; t++) {
        free(C[t]);
        free(W[t]);
    }
    free(A);
    free(B);
    free(scores);
}

/* The huge-page advice never changes memory, whatever the block's size and alignment. */
static void test_huge_page_advice_keeps_contents(void **state)
{
    (void)state;
    static const size_t sizes[] = { 1, 4096, (size_t)2 << 20, ((size_t)5 << 20) + 24 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t count = sizes[s] / sizeof(double) + 1;
        double *x = numbers(count, 26), *copy = numbers(count, 26);
        kernels_prefer_huge_pages(x + 1, (count - 1) * sizeof(double));
        kernels_prefer_huge_pages(x, count * sizeof(double));
        assert_memory_equal(x, copy, count * sizeof(double));
        free(x);
        free(copy);
    }
}

/* Every test once more on the AVX2 code and on the portable code. */
/* The textbook forward pass (tests/textbook.c, which `make bench` times as the reference loops)
 * is the core's trace: every product to the bit, the softmax and what follows it within
 * 1e-12 (the textbook takes libm's exp, the kernels their own). */
static void test_textbook_attention_is_the_trace(void **state)
{
    (void)state;
    enum { N = 13, D = 12, HEADS = 3 };
    static const char *tokens[N];
    for (int i = 0; i < N; i++)
        tokens[i] = "t";
    double *input = numbers(N * D, 17), *W = numbers(4 * D * D, 18);
    double *blocks = numbers(5 * N * D + 2 * HEADS * N * N, 19);
    textbook_attention a = {
        .n = N, .d_model = D, .heads = HEADS, .scale = true, .input = input, .W_Q = W,
        .W_K = W + D * D, .W_V = W + 2 * D * D, .W_O = W + 3 * D * D, .Q = blocks,
        .K = blocks + N * D, .V = blocks + 2 * N * D, .concat = blocks + 3 * N * D,
        .output = blocks + 4 * N * D, .scores = blocks + 5 * N * D,
        .weights = blocks + 5 * N * D + HEADS * N * N,
    };
    textbook_attention_compute(&a);
    attention_input in = {
        .n_tokens = N, .tokens = tokens, .d_model = D, .heads = HEADS, .embeddings = input,
        .W_Q = a.W_Q, .W_K = a.W_K, .W_V = a.W_V, .W_O = a.W_O, .mask = MASK_NONE, .scale = true,
    };
    trace_options options = { .threads = 1, .portable = config.portable };
    trace t;
    assert_int_equal(trace_compute(&in, &options, &t, NULL), TRACE_OK);
    assert_bits_equal("Q", a.Q, trace_block(&t, STAGE_Q, 1), N * D);
    assert_bits_equal("K", a.K, trace_block(&t, STAGE_K, 1), N * D);
    assert_bits_equal("V", a.V, trace_block(&t, STAGE_V, 1), N * D);
    for (int h = 1; h <= HEADS; h++) {
        assert_bits_equal("scores", a.scores + (h - 1) * N * N, trace_block(&t, STAGE_SCORES, h),
                          N * N);
        support_assert_close("weights", a.weights + (h - 1) * N * N,
                             trace_block(&t, STAGE_WEIGHTS, h), N * N, TOLERANCE);
    }
    support_assert_close("concat", a.concat, trace_block(&t, STAGE_CONCAT, 1), N * D, TOLERANCE);
    support_assert_close("output", a.output, trace_block(&t, STAGE_OUTPUT, 1), N * D, TOLERANCE);
    trace_free(&t);
    free(input);
    free(W);
    free(blocks);
}

static int use_portable(void **state)
{
    (void)state;
    config = (kernels_config){ .portable = true };
    return 0;
}

static int use_avx2(void **state)
{
    (void)state;
    config = (kernels_config){ .no_avx512 = true };
    return 0;
}

static int use_fastest(void **state)
{
    (void)state;
    config = (kernels_config){ .threads = 0 };
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_odd_sizes),
        cmocka_unit_test(test_gemm_block_edges),
        cmocka_unit_test(test_matmul_is_the_contiguous_product),
        cmocka_unit_test(test_add_product_is_the_fused_loop),
        cmocka_unit_test(test_scores_and_context_per_head),
        cmocka_unit_test(test_softmax_every_mask_and_scale),
        cmocka_unit_test(test_softmax_divides_by_sqrt_dk),
        cmocka_unit_test(test_softmax_exponential_over_its_range),
        cmocka_unit_test(test_softmax_rows_sum_to_one),
        cmocka_unit_test(test_softmax_of_huge_unmasked_scores),
        cmocka_unit_test(test_exponential_within_two_ulp_on_every_path),
        cmocka_unit_test(test_all_finite_finds_any_non_finite_number),
        cmocka_unit_test(test_threads_do_not_change_results),
        cmocka_unit_test(test_huge_page_advice_keeps_contents),
        cmocka_unit_test(test_textbook_attention_is_the_trace),
    };
    int failed = cmocka_run_group_tests_name("fastest kernels", tests, use_fastest, NULL);
    /* the AVX2 group where it is other code than the fastest: on a processor without AVX-512
       (and on AArch64, where both are NEON) it would run the same code again */
    kernels_config fastest = { .threads = 0 }, avx2 = { .no_avx512 = true };
    if (strcmp(kernels_path_name(&fastest), kernels_path_name(&avx2)) != 0)
        failed += cmocka_run_group_tests_name("AVX2 kernels", tests, use_avx2, use_fastest);
    else
        printf("AVX2 kernels: the fastest kernels' code (%s) here, tested above\n",
               kernels_path_name(&avx2));
    failed += cmocka_run_group_tests_name("portable kernels", tests, use_portable, use_fastest);
    forget_products();
    return failed;
}
