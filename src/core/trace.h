/* The attention core: multi-head scaled dot-product attention with every intermediate kept.
 * Pure: plain structs in, plain structs out; no I/O, no globals. Matrices are row-major doubles. */
#ifndef ATTNSTEP_TRACE_H
#define ATTNSTEP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "stages.h"

typedef enum {
    MASK_NONE,      /* every query sees every key */
    MASK_CAUSAL,    /* query i sees keys 0 … i (self-attention only) */
    MASK_EXPLICIT,  /* the lesson's own 0/1 matrix */
    MASK_WINDOW     /* query i sees keys j with i − window < j ≤ i (self-attention only) */
} mask_kind;

/* How positions enter: added to the embeddings (sinusoidal), or rotating each head's query
 * and key pairs (RoPE, RoFormer): Q_rotated and K_rotated, which the scores then read. */
typedef enum {
    POSITIONAL_NONE,
    POSITIONAL_SINUSOIDAL,
    POSITIONAL_ROPE
} positional_kind;

/* The normalisation of a layer (norm: {kind: …}): none, layer norm (torch.nn.LayerNorm: the
 * mean subtracted, divided by √(biased variance + eps)) or RMS norm (torch.nn.RMSNorm: divided
 * by √(mean of squares + eps)), then times the gain and plus the bias (layer norm only). */
typedef enum {
    NORM_NONE,
    NORM_LAYER,
    NORM_RMS
} norm_kind;

/* What the core computes from. The caller owns every array; the core only reads them.
 * n = n_tokens query tokens, m = n_source key/value tokens (m = n and source = NULL in
 * self-attention). */
typedef struct {
    int n_tokens;
    const char *const *tokens;          /* (n) labels of the query rows, as written */
    int n_source;
    const char *const *source;          /* (m) labels of the key rows; NULL in self-attention */
    int d_model;
    int heads;                          /* divides d_model; d_k = d_model / heads */
    const double *embeddings;           /* (n, d_model) one row per token, repeats repeated */
    const double *source_embeddings;    /* (m, d_model); NULL in self-attention */
    /* The parameters (stages.h's parameter table), by name or by id: W_Q and W_O (d_model,
     * d_model), W_K and W_V (d_model, kv_heads · d_k); biases added to every row of Q, K, V and
     * output: (d_model), (kv_heads · d_k), (kv_heads · d_k), (d_model); a NULL bias = no bias,
     * and then no addition at all (not a + 0), so every number is as without. */
    union {
        struct {
            const double *W_Q, *W_K, *W_V, *W_O;
            const double *b_Q, *b_K, *b_V, *b_O;
            const double *gain, *norm_bias;   /* (d_model) the norm's; NULL without a norm */
        };
        const double *params[PARAM_COUNT];
    };
    mask_kind mask;
    const unsigned char *mask_cells;    /* (n, m) 1 = may attend, 0 = hidden; NULL unless MASK_EXPLICIT */
    bool positional;                    /* add the sinusoidal positional encoding */
    bool scale;                         /* divide scores by √d_k */
    bool rope;                          /* rotate Q and K by position (RoPE); d_k must be even,
                                           and positional must be false */
    double rope_base;                   /* RoPE's base (10000 in RoFormer and LLaMA); > 0 */
    bool alibi;                         /* ALiBi: the stage `biased` = scaled − m_h·|i − j|
                                           (self-attention only) */
    int window;                         /* for MASK_WINDOW: how many keys a query sees (≥ 1) */
    int kv_heads;                       /* grouped-query attention: heads of keys and values, a
                                           divisor of heads (1: multi-query); 0 means heads */
    bool online_softmax;                /* FlashAttention's online softmax: keys in tiles, the
                                           stages running_max and running_sum, and weights and
                                           context made from the recurrence */
    int tile;                           /* with online_softmax: keys per tile (≥ 1) */
    bool decode;                        /* decoding with a KV cache (decode.h): causal or window
                                           mask, self-attention */
    const double *target;               /* (n, d_model) the loss's target, or NULL: without it
                                           there is no loss and no gradient. With it, the stage
                                           loss = ½ Σ (output − target)² and every gradient row
                                           (stages.h) are computed after the forward pass; a
                                           lesson that decodes has none */
    norm_kind norm;                     /* the stage normed, or NORM_NONE; self-attention only;
                                           needs gain, and an RMS norm no norm_bias */
    bool norm_post;                     /* normed = norm(residual), after it (Post-LN, needs
                                           residual); false: normed = norm(input), which Q, K
                                           and V read (Pre-LN) */
    double norm_eps;                    /* added to the variance (mean square) before its
                                           root: > 0 and finite */
    bool residual;                      /* the stage residual = input + output */
    bool dropout;                       /* the stage dropped: training mode's dropout of the
                                           weights (the ordinary softmax only) */
    double dropout_p;                   /* its probability of dropping a weight, 0 ≤ p < 1 */
    uint64_t dropout_seed;              /* the seed its keep mask is drawn from */
    bool contributions;                 /* the stages head_output and weighted_norms */
} attention_input;

/* Every intermediate of one forward pass. The stored stages live in one allocation, one block
 * per stage, sized from the node table (stages.h): block[s] holds (per_head ? heads : 1)
 * matrices of trace_rows × trace_cols doubles, row-major, head after head:
 *   source_input (m, d_model)      input   (n, d_model)       Q (n, d_model)
 *   K, V         (m, d_model)      scores, weights (heads, n, m)
 *   context      (heads, n, d_k)   concat, output (n, d_model)
 * block[s] is NULL for a stage derived when read (scaled, masked: exact functions of scores)
 * and for a stage the trace lacks (source_input in self-attention, where K and V read input).
 * Read them through trace_block and trace_value rather than these fields. */
typedef struct {
    const attention_input *in;  /* borrowed: must outlive the trace */
    int n, m, d_model, heads, d_k;
    int kv_heads;                /* heads of K and V: heads, or fewer, shared (GQA) */
    double *memory;              /* the one allocation: the positional table, then the blocks */
    double *positional;          /* (max(n, m), d_model) PE[pos, i], or NULL without positional
                                    encoding */
    double *block[STAGE_COUNT];  /* each stored stage's matrices, as above */
    unsigned char *visible;      /* (n, m) 1 = may attend, for a window mask (the softmax's
                                    rule reads cells); NULL otherwise */
} trace;

/* How trace_compute runs. NULL means the defaults (all zero). Neither changes a bit: every dot
 * product is fused multiply-add in k order and the softmax's exponential is the kernels' own, on
 * the vector and the portable code alike (kernels.h; tests/test_paths.c compares them). */
typedef struct {
    int threads;    /* threads for large products and softmaxes; 0 = the online processors */
    bool portable;  /* never the vector code (AVX-512, AVX2+FMA), even where the processor has it */
} trace_options;

typedef enum {
    TRACE_OK,
    TRACE_ERROR_SHAPE,        /* sizes that make no sense (heads not dividing d_model, …) */
    TRACE_ERROR_MASK_ROW,     /* a query row whose mask hides every key */
    TRACE_ERROR_TOO_LARGE,    /* more memory than TRACE_MAX_BYTES */
    TRACE_ERROR_NO_MEMORY,
    TRACE_ERROR_OVERFLOW      /* a stage produced a non-finite number */
} trace_status;

#define TRACE_MAX_BYTES ((size_t)1 << 30)

/* Extra detail for a failed trace_compute: where it happened. */
typedef struct {
    trace_status status;
    stage_id stage;     /* for TRACE_ERROR_OVERFLOW and TRACE_ERROR_MASK_ROW */
    int head, row, col; /* head from 1; row, col from 0; -1 where it does not apply */
    size_t bytes;       /* for TRACE_ERROR_TOO_LARGE: what the trace would need */
} trace_failure;

/* The message for a status, e.g. "the trace would need more memory than allowed". */
const char *trace_status_message(trace_status status);

/* A trace with the sizes of in and no memory (no block, no positional table): enough for the
 * node table's shapes and cost operations, which read sizes and the mask's rule, never a
 * number (cost_stage_at counts a lesson's layer at another length with one). */
trace trace_shape(const attention_input *in);

/* Bytes the trace of in would hold (its blocks and positional table, and a window mask's
 * visible cells), or SIZE_MAX when that does not fit in size_t. */
size_t trace_bytes_needed(const attention_input *in);

/* Computes every stage. On success returns TRACE_OK and fills out (free with trace_free);
 * otherwise out is left empty and failure (if not NULL) says what and where. */
trace_status trace_compute(const attention_input *in, const trace_options *options, trace *out,
                           trace_failure *failure);

/* The forward runner, in three pieces for the passes that need them apart (decoding, a
 * changed number): trace_prepare checks in and allocates out's blocks without computing any
 * (failure as trace_compute's); trace_forward computes query rows [first, end) of every stage
 * from `from` on, in table order, reading what earlier stages hold (decoding token p is
 * first = p, end = p + 1, on a self-attention trace whose rows 0 … p − 1 are computed);
 * trace_recompute runs every row from `from` on (STAGE_COUNT: none) again after the caller changed a number that
 * `from` is the first stage to read (stage_first_reader), and checks for overflow. The result
 * is bit for bit what trace_compute of the changed input gives. trace_compute is trace_prepare,
 * then trace_forward over every row from the first stage, then the overflow check. */
trace_status trace_prepare(const attention_input *in, trace *out, trace_failure *failure);
void trace_forward(trace *t, stage_id from, int first, int end, const trace_options *options);
trace_status trace_recompute(trace *t, stage_id from, const trace_options *options,
                             trace_failure *failure);

/* One changed matrix the stages read: a parameter or data (kind, id) and, for a parameter, the
 * column changed (-1: any or all of it). */
typedef struct {
    read_kind kind;
    int id;
    int col;
} trace_change;

/* trace_recompute after the count changes, doing only the work they reach: each stored stage
 * from the first that reads one of them, and of a per-head stage only the heads reached. A
 * column of W_Q or b_Q reaches the head whose d_k columns it is; one of W_K, W_V, b_K, b_V the
 * heads of its key/value group; anything else every head. A stage with STAGE_HEAD_COLUMNS
 * changes in the heads its inputs changed in, as does a per-head stage (each computes head h
 * from head h of what it reads: the rule this relies on); any other stage, and every gradient
 * row, changes whole once anything it reads changed. Bit for bit trace_recompute's result
 * (test_a_change_recomputes_only_the_heads_it_reaches); trace_recompute's whole runner when
 * the bookkeeping's memory is not there. */
trace_status trace_recompute_changes(trace *t, const trace_change *changes, int count,
                                     const trace_options *options, trace_failure *failure);

/* The first stage in table order that reads input `id` of this kind (READ_PARAM: a param_id;
 * READ_DATA: a data_id; READ_NODE: a stage_id), among those t has; STAGE_COUNT if none. */
stage_id trace_first_reader(const trace *t, read_kind kind, int id);

void trace_free(trace *t);

/* The loss ½ Σ (output − target)² of a trace whose input has a target (its stage of family
 * FAMILY_LOSS); NAN without one. */
double trace_loss(const trace *t);

/* Whether a stage exists in this trace: its row's presence rule (source_input only in
 * cross-attention). */
bool trace_has_stage(const trace *t, stage_id stage);

/* The stage called name that in has (of the rows sharing a name, the present one), else
 * stage_find's; STAGE_COUNT when no row is called name. */
stage_id trace_find_stage(const attention_input *in, const char *name);

/* Whether a stage of this presence exists for in. */
bool trace_presence_met(const attention_input *in, stage_presence presence);

/* The formula of a stage as this trace computes it, written from the lesson's configuration
 * ("K = source_input · W_K" in cross-attention, "input = embeddings" without positional
 * encoding). Returns the length it wanted, as snprintf. */
int trace_stage_formula(const trace *t, stage_id stage, char *buffer, size_t size);

/* What a stage reads in this trace, from its row's `inputs` ("Q_rotated, K_rotated" for scores
 * under RoPE, "biased, mask" for masked under ALiBi): an item "A|B" of the row names the last
 * of its alternatives that is a stage the trace has (else the first). Returns the length it
 * wanted, as snprintf. */
int trace_stage_inputs(const trace *t, stage_id stage, char *buffer, size_t size);

/* The node stage's input number `index` (0-based, counting only node inputs) reads in this
 * trace: the input's `instead` when the trace has it, else its stage; STAGE_COUNT when the row
 * has no such input. */
stage_id trace_stage_node_input(const trace *t, stage_id stage, int index);

/* The parameter input number `index` (0-based, counting only parameter inputs) of stage, or
 * PARAM_COUNT when the row has none. */
param_id trace_stage_param_input(stage_id stage, int index);

/* A parameter's numbers as the lesson gives them (NULL for an optional one it lacks). */
const double *trace_param(const trace *t, param_id param);

/* Bytes the stored matrices of a stage take, over all its heads (0 for a derived stage or one
 * the trace lacks). With the positional table, they add up to trace_bytes_needed. */
size_t trace_stage_bytes(const trace *t, stage_id stage);

/* The length of an axis in this trace (n, m, d_model, …; 1 for AXIS_ONE), and in the trace
 * that in would make (for a parameter's shape before any trace exists). */
int trace_axis_length(const trace *t, stage_axis axis);
int trace_input_axis_length(const attention_input *in, stage_axis axis);

/* Rows and columns of a stage's matrix. */
int trace_rows(const trace *t, stage_id stage);
int trace_cols(const trace *t, stage_id stage);

/* The value of one cell. head counts from 1 and is ignored by stages that are not per head;
 * hidden cells of masked are -INFINITY. */
double trace_value(const trace *t, stage_id stage, int head, int row, int col);

/* The stored matrix of a stage at head (trace_rows × trace_cols, row-major), or NULL for the
 * stages derived when shown (scaled, masked): for readers that scan a whole stage. */
const double *trace_block(const trace *t, stage_id stage, int head);

/* The key/value group (from 1) that query head `head` (from 1) reads: consecutive heads share
 * one, heads / kv_heads of them each, as repeat_kv lays them out. */
int trace_kv_group(const trace *t, int head);

/* Tiles of keys the online softmax walks: ⌈m / tile⌉ (0 without the online softmax). */
int trace_tile_count(const trace *t);

/* Keys [*first, *end) of tile b of the online softmax. */
void trace_tile_keys(const trace *t, int b, int *first, int *end);

/* The largest difference between the weights and context the online softmax's recurrence made
 * and those of the ordinary softmax over the same scores, over every head and cell (0 without
 * the online softmax; −1 when out of memory). The recurrence is exact in real numbers, so only
 * rounding separates them: tests hold it below 1e-12. */
double trace_online_difference(const trace *t);

/* How positions enter this input. */
positional_kind trace_positional_kind(const attention_input *in);

/* The positional kind's word, as a lesson writes it: "none", "sinusoidal" or "rope". */
const char *trace_positional_word(positional_kind kind);

/* ALiBi's slope m_h of head (from 1) among heads: 2^(−8h/heads) when heads is a power of two;
 * otherwise the slopes of the largest power of two p below heads, then every other slope of
 * 2p heads (Press et al., 2022). */
double trace_alibi_slope(int head, int heads);

/* RoPE's angle for the pair (2p, 2p+1) of a head's d_k columns at position pos:
 * pos · base^(−2p/d_k). */
double trace_rope_angle(const trace *t, int pos, int pair);

/* One row of Q or K (cols = heads or key groups of d_k columns each) turned by RoPE at position
 * pos: each pair (2p, 2p+1) of each head by trace_rope_angle(t, pos, p). The one rotation of
 * Q_rotated, K_rotated and of decoding a token; out may not alias from. */
void trace_rope_rotate(const trace *t, int pos, const double *from, double *out, int cols);

/* The scaling rule in words for a summary line: "scores scaled by 1/√d_k", or "scores not
 * scaled (scale: false)" (ops/scores.c, beside the rule itself). */
const char *trace_scaling_words(const trace *t);

/* The mask's name in prose: "no mask", "causal mask" or "lesson's mask". */
const char *trace_mask_name(mask_kind mask);

/* Whether cell (row, col) is hidden by the mask (always false without a mask). */
bool trace_is_hidden(const trace *t, int row, int col);

/* Dropout's draw for cell (row, col) of head (ops/dropout.c): the uniforms of xoshiro256**
 * seeded by splitmix64 (random.h, as `random:` matrices are drawn) with dropout_seed + 2^32 · r,
 * r = (head − 1) · n + row the row's number counted head after head (modulo 2^64), one a key in
 * order; the cell is kept when its draw is ≥ p. trace_dropout_keeps is that test; t must have
 * dropout. */
double trace_dropout_draw(const trace *t, int head, int row, int col);
bool trace_dropout_keeps(const trace *t, int head, int row, int col);

/* How many keys query row sees: the count of cells trace_is_hidden leaves, counted from the
 * rule itself for none, causal and a window (so counting a layer at 4096 tokens costs no
 * 4096² loop). */
int trace_visible_keys(const trace *t, int row);

/* Label of row or column index i along an axis: a token, or the dimension number as text.
 * Dimension labels are written into buffer; token labels point into the input. */
const char *trace_axis_label(const trace *t, stage_axis axis, int i, char *buffer, size_t size);

/* One cell of one stage. */
typedef struct {
    stage_id stage;
    int head;       /* from 1; 1 for stages that are not per head */
    int row, col;   /* from 0 */
} trace_cell;

/* The name of index i along an axis wherever a cell or a term is named: its label, and for a
 * token written more than once along the axis "@" and its 0-based position ("dog@6"), so the
 * name finds one cell. Returns buffer (or the label itself when it needs no buffer). */
const char *trace_axis_name(const trace *t, stage_axis axis, int i, char *buffer, size_t size);

/* Why a lesson lacks stage, the one sentence every place says it in: "stage 'biased' exists
 * only with 'bias: alibi'"; missing is the key it lacks (NULL: the stage's own presence key). */
void trace_stage_absent(stage_id stage, const char *missing, char *out, size_t size);

/* The one sentence for a stage name that names no stage of t: "unknown stage 'weigths'; did
 * you mean 'weights'? (stages: input Q …)", the nearest of t's stages suggested. */
void trace_stage_unknown(const trace *t, const char *name, char *out, size_t size);

/* The key whose absence leaves stage out of t (for a gradient, what its node lacks: 'rope' for
 * d_Q_rotated), for trace_stage_absent's missing; NULL when t has the stage. */
const char *trace_stage_missing(const trace *t, stage_id stage);

/* What trace_axis_find returns for the plain name of a token written more than once. */
#define TRACE_NAME_REPEATED (-2)

/* The index a row or column name names along an axis, by the rule of trace_cell_parse
 * (token_name.h: a token written once by its name, any token as "dog@6"; a 0-based index);
 * -1 when it names none; TRACE_NAME_REPEATED for the plain name of a repeated token, with
 * error saying which to write ("'dog' appears at positions 2 and 6: write dog@2 or dog@6"). */
int trace_axis_find(const trace *t, stage_axis axis, const char *name, size_t length,
                    char *error, size_t error_size);

/* Columns per group of a stage whose columns are the heads' side by side (STAGE_HEAD_COLUMNS:
 * d_k), or 0 when its columns are not shown in groups (one head, or another stage). K and V under
 * grouped-query attention are grouped by key group, one group too when every head shares it. */
int trace_column_group_width(const trace *t, stage_id stage);

/* The label over column group g (from 0) of such a stage: "head 2", or where grouped-query
 * attention shares the group among heads "group 1 (heads 1–2)" (brief: "heads 1–2", for a
 * narrow column). Returns buffer. */
const char *trace_column_group_label(const trace *t, stage_id stage, int group, bool brief,
                                     char *buffer, size_t size);

/* Parses "STAGE[ROW,COL]" where ROW and COL are named as trace_axis_find reads them: a token
 * written once by its name, any token by its name and 0-based position ("dog@6", as
 * trace_axis_name writes a repeated token), or 0-based indices; the plain name of a repeated
 * token is refused with its positions. head is the head to use for per-head stages (from 1).
 * Returns true and fills cell, or false with a one-line reason in error. */
bool trace_cell_parse(const trace *t, const char *spec, int head, trace_cell *cell,
                      char *error, size_t error_size);

/* Writes the arithmetic that made a cell, e.g.
 *   scores[cat,sat] = q_cat · k_sat = (1.0 × 0.0) + (0.5 × 1.0) = 0.5
 * with numbers to `precision` decimals (trailing zeros trimmed). A sum of more than six terms
 * shows its four terms of largest magnitude, in their order, then what it left out:
 *   "… + … 5 more terms, each |term| < 0.0005 …". Returns the length it wanted (as snprintf). */
int trace_cell_explain(const trace *t, const trace_cell *cell, int precision,
                       char *buffer, size_t size);

/* The same with every term of every sum written out (--explain --full, the UI's sum pane). */
int trace_cell_explain_full(const trace *t, const trace_cell *cell, int precision,
                            char *buffer, size_t size);

#endif
