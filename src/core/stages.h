/* The stages of multi-head scaled dot-product attention, as data: one row per stage is its whole
 * spec (name, shape, storage, and the functions that compute, read, explain, count and write its
 * formula). Every output, the UI, the walk and --stats read it; nothing else lists the stages. */
#ifndef ATTNSTEP_STAGES_H
#define ATTNSTEP_STAGES_H

#include <stdbool.h>

/* What a stage's rows or columns are indexed by. */
typedef enum {
    AXIS_TOKENS,      /* the query tokens, n of them */
    AXIS_SOURCE,      /* the key/value tokens, m of them (m = n, the same tokens, in self-attention) */
    AXIS_MODEL_DIMS,  /* dimensions 0 … d_model-1 */
    AXIS_KV_DIMS,     /* dimensions 0 … kv_heads·d_k − 1 of keys and values (d_model unless
                         grouped-query attention shares them between heads) */
    AXIS_HEAD_DIMS,   /* dimensions 0 … d_k-1, counted within the head */
    AXIS_TILES        /* the online softmax's tiles of keys, 0 … ⌈m / tile⌉ − 1 */
} stage_axis;

/* Where a stage's numbers live. */
typedef enum {
    STAGE_STORED,   /* in the trace's block for the stage: heads (if per head) × rows × cols */
    STAGE_DERIVED   /* computed from another stage's block when read (no memory of its own) */
} stage_storage;

/* X(ID, name, per_head, rows, cols, storage, read, compute, explain, cost, formula, inputs)
 *   name      the stage's name everywhere: JSON, --plain, --explain, the UI
 *   per_head  one matrix per head (true) or one for the whole layer (false)
 *   rows, cols  the axes of its matrix; the block of a stored stage holds
 *             (per_head ? heads : 1) × rows × cols doubles, row-major, head after head
 *   storage   STAGE_STORED or STAGE_DERIVED (scaled and masked: a cheap, exact function of
 *             scores, which keeps a 1024-token trace within memory)
 *   read      one cell's value (stage_functions.h): trace_read_stored for stored stages
 *   compute   writes one head's matrix (the whole matrix if not per head) from the stages
 *             before it: the forward pass, and --stats' timing into scratch memory
 *   explain   the arithmetic behind one cell (explain.c)
 *   cost      multiplications, additions, divisions and exponentials of the stage (cost.c)
 *   formula   writes the formula line from the lesson's configuration (formula.c)
 *   inputs    the stages or lesson data it reads; "A|B" when what it reads depends on the
 *             lesson: trace_stage_inputs names the last alternative the trace has
 * The functions are named here and declared from here (stage_functions.h), so a row naming a
 * function that does not exist fails to compile or link. */
#define STAGE_TABLE(X) \
    X(SOURCE_INPUT, "source_input", false, AXIS_SOURCE, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_source_input, explain_input, cost_input, formula_source_input, \
      "embeddings, positional encoding") \
    X(INPUT, "input", false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_input, explain_input, cost_input, formula_input, \
      "embeddings, positional encoding") \
    X(Q, "Q", false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_q, explain_q, cost_projection, formula_q, \
      "input, W_Q") \
    X(K, "K", false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      trace_read_stored, compute_k, explain_k, cost_projection, formula_k, \
      "input, W_K") \
    X(V, "V", false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      trace_read_stored, compute_v, explain_v, cost_projection, formula_v, \
      "input, W_V") \
    X(Q_ROTATED, "Q_rotated", false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_rotated, explain_rotated, cost_rotated, formula_q_rotated, \
      "Q, positions") \
    X(K_ROTATED, "K_rotated", false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      trace_read_stored, compute_rotated, explain_rotated, cost_rotated, formula_k_rotated, \
      "K, positions") \
    X(SCORES, "scores", true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      trace_read_stored, compute_scores, explain_scores, cost_scores, formula_scores, \
      "Q|Q_rotated, K|K_rotated") \
    X(SCALED, "scaled", true, AXIS_TOKENS, AXIS_SOURCE, STAGE_DERIVED, \
      trace_read_scaled, compute_derived, explain_scaled, cost_scaled, formula_scaled, \
      "scores") \
    X(BIASED, "biased", true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      trace_read_stored, compute_biased, explain_biased, cost_biased, formula_biased, \
      "scaled, ALiBi slopes") \
    X(MASKED, "masked", true, AXIS_TOKENS, AXIS_SOURCE, STAGE_DERIVED, \
      trace_read_masked, compute_derived, explain_masked, cost_nothing, formula_masked, \
      "scaled|biased, mask") \
    X(RUNNING_MAX, "running_max", true, AXIS_TOKENS, AXIS_TILES, STAGE_STORED, \
      trace_read_stored, compute_running_max, explain_running_max, cost_running_max, \
      formula_running_max, "masked, tile") \
    X(RUNNING_SUM, "running_sum", true, AXIS_TOKENS, AXIS_TILES, STAGE_STORED, \
      trace_read_stored, compute_running_sum, explain_running_sum, cost_running_sum, \
      formula_running_sum, "masked, running_max") \
    X(WEIGHTS, "weights", true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      trace_read_stored, compute_weights, explain_weights, cost_weights, formula_weights, \
      "masked") \
    X(CONTEXT, "context", true, AXIS_TOKENS, AXIS_HEAD_DIMS, STAGE_STORED, \
      trace_read_stored, compute_context, explain_context, cost_context, formula_context, \
      "weights, V") \
    X(CONCAT, "concat", false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_concat, explain_concat, cost_nothing, formula_concat, \
      "context of every head") \
    X(OUTPUT, "output", false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      trace_read_stored, compute_output, explain_output, cost_projection, formula_output, \
      "concat, W_O")

typedef enum {
#define STAGE_ENUM(id, name, per_head, rows, cols, storage, read, compute, explain, cost, \
                   formula, inputs) STAGE_##id,
    STAGE_TABLE(STAGE_ENUM)
#undef STAGE_ENUM
    STAGE_COUNT
} stage_id;

typedef struct {
    const char *name;
    bool per_head;
    stage_axis rows, cols;
    stage_storage storage;
    const char *inputs;
} stage_info;

/* The table entry of a stage; stage must be < STAGE_COUNT. */
const stage_info *stage_get(stage_id stage);

/* The stage called name (exact, case-sensitive), or STAGE_COUNT when there is none. */
stage_id stage_find(const char *name);

#endif
