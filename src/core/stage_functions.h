/* The operations that the node table's rows name (stages.h), declared from the table itself, and
 * the table of them. For the core's own files: other layers use trace.h and cost.h. */
#ifndef ATTNSTEP_STAGE_FUNCTIONS_H
#define ATTNSTEP_STAGE_FUNCTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include "cost.h"
#include "kernels.h"
#include "trace.h"

/* An append-only text buffer that, like snprintf, counts what it could not hold; numbers are
 * written with `precision` decimals; long sums are shortened unless `full`. It also keeps the
 * names one explanation's format arguments take (explain_row_label, explain_source_label): a
 * ring of EXPLAIN_NAMES_KEPT buffers in the caller's explain_text, not a static one, so that the
 * core keeps no writable state and two explanations never share a buffer. */
enum { EXPLAIN_NAMES_KEPT = 8, EXPLAIN_NAME_MAX = 80 };
typedef struct {
    char *buffer;
    size_t size, length;
    int precision;
    bool full;
    char names[EXPLAIN_NAMES_KEPT][EXPLAIN_NAME_MAX];   /* zero-initialised with the rest */
    int next_name;
} explain_text;

/* The rows a forward operation writes: query rows [first, end) of its matrix, and of a stage
 * whose rows are the keys the same rows (self-attention) or every key (a whole pass); the
 * keys known are keys 0 … keys − 1 (every key in a whole pass, the cache's keys 0 … end − 1
 * when decoding token end − 1). trace_span_whole gives the whole pass. */
typedef struct {
    int first, end;
    int keys;
} trace_span;

/* The whole pass over t: every row, every key; and whether a span is it. */
trace_span trace_span_whole(const trace *t);
bool trace_span_is_whole(const trace *t, const trace_span *span);

/* Rows [*first, *end) of stage that span covers. */
void trace_span_rows(const trace *t, stage_id stage, const trace_span *span, int *first,
                     int *end);

/* The value of one cell of stage (head from 1, 1 for a stage not per head). */
typedef double stage_read_fn(const trace *t, stage_id stage, int head, int row, int col);
/* Writes span's rows of the matrix of stage at head (the whole stage if not per head) into out
 * (the matrix's first cell), reading only the trace's blocks of earlier stages and its input. */
typedef void stage_forward_fn(const trace *t, stage_id stage, int head, double *out,
                              const trace_span *span, const kernels_config *config);
/* Adds into out (the matrix of the gradient of stage's input number `input`, an index into its
 * row's inputs: at `head` when that input is per head, else its one matrix) what stage's own
 * gradient (its gradient row's block) sends that input back through stage's forward operation.
 * Only for the whole pass: a trace with a loss does not decode. */
typedef void stage_backward_fn(const trace *t, stage_id stage, int input, int head, double *out,
                               const kernels_config *config);
/* Writes " = …" after the cell's name: how the cell was made. Returns whether the cell's value
 * should follow (false for a cell whose explanation already ends in its value, e.g. hidden). */
typedef bool stage_explain_fn(explain_text *out, const trace *t, const trace_cell *cell);
/* Adds the stage's arithmetic, over all its heads, to counts. */
typedef void stage_cost_fn(const trace *t, stage_id stage, cost_counts *counts);
/* Writes the stage's formula line for this trace's configuration, as snprintf. */
typedef int stage_formula_fn(const trace *t, stage_id stage, char *buffer, size_t size);

#define STAGE_DECLARE(id, name, family, presence, per_head, rows, cols, storage, flags, inputs, \
                      of, beside, read, forward, backward, explain, cost, formula) \
    stage_read_fn read; stage_forward_fn forward; stage_backward_fn backward; \
    stage_explain_fn explain; stage_cost_fn cost; stage_formula_fn formula;
STAGE_TABLE(STAGE_DECLARE)
#undef STAGE_DECLARE

typedef struct {
    stage_read_fn *read;
    stage_forward_fn *forward;
    stage_backward_fn *backward;
    stage_explain_fn *explain;
    stage_cost_fn *cost;
    stage_formula_fn *formula;
} stage_functions;

/* The functions of a stage's row; stage must be < STAGE_COUNT. */
const stage_functions *stage_functions_get(stage_id stage);

/* The one arithmetic of a projection, wherever one is computed (the projections' forward, decoding's rows):
 * out (rows × cols) = from (rows × d_model) · weights (d_model × cols), each cell the fused
 * dot product in k order (kernels_matmul), then, when bias is not NULL, + bias[col] as one more
 * rounded addition. Without a bias nothing is added. */
void trace_project(double *out, const double *from, int rows, int d_model,
                   const double *weights, const double *bias, int cols,
                   const kernels_config *config);

/* Whether input `in` of a forward row is what a gradient row's `of` names, as t reads it (a
 * node through its `instead`): the test trace_gradient_readers makes of each input. */
bool trace_reads_gradient_of(const trace *t, const stage_input *in, const stage_input *of);

/* The forward rows of t that read what gradient row `gradient` is the gradient of, each with the
 * index of that input, in table order (at most STAGE_COUNT · STAGE_MAX_INPUTS): the one list
 * forward_gradient sums the backward of and cost_gradient counts. Returns how many. */
typedef struct { stage_id reader; int input; } trace_gradient_reader;
int trace_gradient_readers(const trace *t, stage_id gradient, trace_gradient_reader *out);

/* The matrix at head (1 for a stage not per head) of ∂loss/∂stage: its gradient row's block
 * (stage_gradient), which must exist in t. */
const double *trace_gradient_of(const trace *t, stage_id stage, int head);

/* The one scaling rule (ops/scores.c): what scores are divided by, √d_k (1 with scale: false),
 * and a score so scaled. */
double trace_score_divisor(const trace *t);
double trace_scale_score(const trace *t, double score);

/* ALiBi's bias of cell (row, col) at head, before it is subtracted: m_h · |row − col|. */
double trace_alibi_bias(const trace *t, int head, int row, int col);

/* Bytes of the positional-encoding table (0 without positional encoding). */
size_t trace_positional_bytes(const trace *t);

/* Bytes of the window mask's visible cells, one per query and key, which the trace allocates
 * beside its blocks for the softmax's rule (0 without a window mask). */
size_t trace_mask_bytes(const trace *t);

/* The kernels' configuration for options (NULL: the defaults). */
kernels_config trace_kernels_config(const trace_options *options);

#endif
