/* The online softmax of one query row (online.h), as FlashAttention computes it: the trace
 * (compute.c) and decoding (decode.c) both call it, so their numbers agree to the bit. */
#include <math.h>
#include "online.h"

int online_tiles(const online_row *r)
{
    return (r->keys + r->tile - 1) / r->tile;
}

/* Keys [*first, *end) of tile b. */
static void tile_keys(const online_row *r, int b, int *first, int *end)
{
    *first = b * r->tile;
    long long end_of_tile = (long long)*first + r->tile;  /* tile may be as large as int */
    *end = end_of_tile < r->keys ? (int)end_of_tile : r->keys;
}

double online_exp(double x, const kernels_config *config)
{
    double y;
    kernels_exp_nonpositive(&y, &x, 1, config);
    return y;
}

void online_running_max(const online_row *r, double *max)
{
    double m = -INFINITY;
    for (int b = 0; b < online_tiles(r); b++) {
        int first, end;
        tile_keys(r, b, &first, &end);
        for (int j = first; j < end; j++) {
            double x = r->masked(r->row, j);
            m = x > m ? x : m;
        }
        max[b] = m;
    }
}

void online_tile(const online_row *r, const double *max, int b, double *sum, double *context,
                 const kernels_config *config)
{
    if (max[b] == -INFINITY)
        return;
    double rescale = online_exp((b > 0 ? max[b - 1] : -INFINITY) - max[b], config);
    *sum *= rescale;
    for (int c = 0; context && c < r->d_k; c++)
        context[c] *= rescale;
    int first, end;
    tile_keys(r, b, &first, &end);
    for (int j = first; j < end; j++) {
        double s = r->masked(r->row, j);
        if (s == -INFINITY)  /* a hidden key */
            continue;
        double p = online_exp(s - max[b], config);
        *sum += p;
        for (int c = 0; context && c < r->d_k; c++)
            context[c] = fma(p, r->v[(size_t)j * r->v_cols + (size_t)c], context[c]);
    }
}

double online_weight(double masked, double max, double sum, const kernels_config *config)
{
    return masked == -INFINITY ? 0.0 : online_exp(masked - max, config) / sum;
}

double online_context(const online_row *r, const double *max, double *context,
                      const kernels_config *config)
{
    double sum = 0.0;
    for (int c = 0; c < r->d_k; c++)
        context[c] = 0.0;
    for (int b = 0; b < online_tiles(r); b++)
        online_tile(r, max, b, &sum, context, config);
    for (int c = 0; c < r->d_k; c++)
        context[c] /= sum;
    return sum;
}
