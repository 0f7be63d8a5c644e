/* The textbook loops of multi-head attention (textbook.h): slow on purpose, one line of
 * arithmetic per step, the definition the kernels are held to. */
#include <math.h>
#include "textbook.h"

void textbook_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                   const double *B, size_t ldb, bool b_transposed, double *C, size_t ldc)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double sum = 0.0;
            for (int k = 0; k < inner; k++) {
                double b = b_transposed ? B[(size_t)j * ldb + (size_t)k]
                                        : B[(size_t)k * ldb + (size_t)j];
                sum = fma(A[(size_t)i * lda + (size_t)k], b, sum);
            }
            C[(size_t)i * ldc + (size_t)j] = sum;
        }
}

void textbook_softmax(double *w, const double *s, int n, int m, const kernels_softmax_rule *rule)
{
    for (int i = 0; i < n; i++) {
        double max = -INFINITY;
        for (int j = 0; j < m; j++) {
            size_t at = (size_t)i * (size_t)m + (size_t)j;
            bool hidden = rule->causal ? j > i : rule->allowed && rule->allowed[at] == 0;
            w[at] = hidden ? -INFINITY : rule->scale ? s[at] / rule->divisor : s[at];
            if (w[at] > max)
                max = w[at];
        }
        double sum = 0.0;
        for (int j = 0; j < m; j++) {
            size_t at = (size_t)i * (size_t)m + (size_t)j;
            w[at] = w[at] == -INFINITY ? 0.0 : exp(w[at] - max);
            sum += w[at];
        }
        for (int j = 0; j < m; j++)
            w[(size_t)i * (size_t)m + (size_t)j] /= sum;
    }
}

void textbook_attention_compute(textbook_attention *a)
{
    int n = a->n, d = a->d_model, d_k = a->d_model / a->heads;
    size_t ld = (size_t)d, nn = (size_t)n * (size_t)n;
    textbook_gemm(n, d, d, a->input, ld, a->W_Q, ld, false, a->Q, ld);
    textbook_gemm(n, d, d, a->input, ld, a->W_K, ld, false, a->K, ld);
    textbook_gemm(n, d, d, a->input, ld, a->W_V, ld, false, a->V, ld);
    kernels_softmax_rule rule = { .scale = a->scale, .divisor = sqrt((double)d_k) };
    for (int h = 0; h < a->heads; h++) {
        size_t offset = (size_t)h * (size_t)d_k;
        double *scores = a->scores + (size_t)h * nn, *weights = a->weights + (size_t)h * nn;
        textbook_gemm(n, n, d_k, a->Q + offset, ld, a->K + offset, ld, true, scores, (size_t)n);
        textbook_softmax(weights, scores, n, n, &rule);
        textbook_gemm(n, d_k, n, weights, (size_t)n, a->V + offset, ld, false, a->concat + offset,
                      ld);
    }
    textbook_gemm(n, d, d, a->concat, ld, a->W_O, ld, false, a->output, ld);
}
