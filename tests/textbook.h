/* The textbook loops of multi-head attention: the reference arithmetic the kernels must equal
 * (each dot product fused multiply-add in k order), written once for tests/test_kernels.c and
 * for the reference-loops row of `make bench` (tests/bench/bench_trace.c). Plain C and libm. */
#ifndef ATTNSTEP_TEXTBOOK_H
#define ATTNSTEP_TEXTBOOK_H

#include <stdbool.h>
#include <stddef.h>
#include "kernels.h"

/* C (rows×cols, row stride ldc) = A (rows×inner, row stride lda) · B, B inner×cols with row
 * stride ldb or, when b_transposed, stored as its transpose (cols×inner): each cell
 * `c = 0; for k in order: c = fma(a[i,k], b[k,j], c)`. */
void textbook_gemm(int rows, int cols, int inner, const double *A, size_t lda,
                   const double *B, size_t ldb, bool b_transposed, double *C, size_t ldc);

/* w (n×m) = the row softmax of s (n×m) read as the kernels' rule says (scaled by √d_k, hidden
 * cells −∞): libm's exp of each score less its row's max, over the row's sum in order. */
void textbook_softmax(double *w, const double *s, int n, int m, const kernels_softmax_rule *rule);

/* Self-attention without a mask, every block contiguous: input and the four weight matrices
 * read, the rest written. Q, K, V, concat, output are n×d_model; scores and weights are
 * heads × n × n, head after head. */
typedef struct {
    int n, d_model, heads;
    bool scale;                     /* scores / √d_k before the softmax */
    const double *input, *W_Q, *W_K, *W_V, *W_O;
    double *Q, *K, *V, *scores, *weights, *concat, *output;
} textbook_attention;

/* Every stage, by the loops above: Q, K, V = input · W; per head scores = Q_h · K_hᵀ, weights,
 * context = weights · V_h into the head's columns of concat; output = concat · W_O. */
void textbook_attention_compute(textbook_attention *a);

#endif
