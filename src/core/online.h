/* The online softmax (FlashAttention's recurrence) of one query row, tile by tile: the one
 * arithmetic of the trace's running_max, running_sum, weights and context under
 * `softmax: online` (compute.c) and of decoding a token with them (decode.c). */
#ifndef ATTNSTEP_ONLINE_H
#define ATTNSTEP_ONLINE_H

#include <stddef.h>
#include "kernels.h"

/* One query row: its masked scores (−∞ for a hidden key) read through `masked`, the keys
 * [0, keys) in tiles of `tile` (tile b holds keys b·tile … min((b + 1)·tile, keys) − 1), and
 * for the context the values: row j of them at v + j·v_cols, d_k numbers. */
typedef struct {
    double (*masked)(const void *row, int key);
    const void *row;
    int keys, tile;
    const double *v;
    size_t v_cols;
    int d_k;
} online_row;

/* Tiles the row's keys make: ⌈keys / tile⌉. */
int online_tiles(const online_row *r);

/* exp(x) for x ≤ 0 (or −∞) by the softmax's own exponential, so both softmaxes share one. */
double online_exp(double x, const kernels_config *config);

/* m after each tile, max[0 … online_tiles − 1]: m_t = max(m_{t−1}, the largest masked score of
 * tile t), −∞ while only hidden keys were seen. */
void online_running_max(const online_row *r, double *max);

/* Tile b of the recurrence, with max from online_running_max: rescales *sum (and the d_k
 * numbers of context, when it is not NULL) by exp(m_{b−1} − m_b), then adds exp(s_j − m_b) for
 * each visible key of the tile (times v_j, by fused multiply-add, to context). A row whose
 * maximum is still −∞ has seen no visible key and keeps l = 0. */
void online_tile(const online_row *r, const double *max, int b, double *sum, double *context,
                 const kernels_config *config);

/* The weight of a key, exp(s_j − m_T) / l_T with the last tile's m and l (0 for a hidden key,
 * whose masked score is −∞). */
double online_weight(double masked, double max, double sum, const kernels_config *config);

/* The row's context: the recurrence over every tile into context (d_k numbers), divided by
 * l_T once at the end; returns l_T. */
double online_context(const online_row *r, const double *max, double *context,
                      const kernels_config *config);

#endif
