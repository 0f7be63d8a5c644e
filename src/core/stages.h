/* The stages of multi-head scaled dot-product attention, as data.
 * This table is the spec: every output (plain, JSON, Markdown, UI) and the step list read it. */
#ifndef ATTNSTEP_STAGES_H
#define ATTNSTEP_STAGES_H

#include <stdbool.h>

/* What a stage's rows or columns are indexed by. */
typedef enum {
    AXIS_TOKENS,      /* the query tokens, n of them */
    AXIS_SOURCE,      /* the key/value tokens, m of them (m = n, the same tokens, in self-attention) */
    AXIS_MODEL_DIMS,  /* dimensions 0 … d_model-1 */
    AXIS_HEAD_DIMS    /* dimensions 0 … d_k-1, counted within the head */
} stage_axis;

/* X(ID, name, per_head, rows, cols, formula, inputs)
 *   name      the stage's name everywhere: JSON, --plain, --explain, the UI
 *   per_head  one matrix per head (true) or one for the whole layer (false)
 *   formula   how the stage is made, shown above its matrix
 *   inputs    the stages or lesson data it reads */
#define STAGE_TABLE(X) \
    X(SOURCE_INPUT, "source_input", false, AXIS_SOURCE, AXIS_MODEL_DIMS, \
      "source_input = embeddings(source) + PE", "embeddings, positional encoding") \
    X(INPUT,   "input",   false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      "input = embeddings + PE", "embeddings, positional encoding") \
    X(Q,       "Q",       false, AXIS_TOKENS, AXIS_MODEL_DIMS, "Q = input · W_Q", "input, W_Q") \
    X(K,       "K",       false, AXIS_SOURCE, AXIS_MODEL_DIMS, "K = input · W_K", "input, W_K") \
    X(V,       "V",       false, AXIS_SOURCE, AXIS_MODEL_DIMS, "V = input · W_V", "input, W_V") \
    X(SCORES,  "scores",  true,  AXIS_TOKENS, AXIS_SOURCE, "scores = Q_h · K_hᵀ", "Q, K") \
    X(SCALED,  "scaled",  true,  AXIS_TOKENS, AXIS_SOURCE, "scaled = scores / √d_k", "scores") \
    X(MASKED,  "masked",  true,  AXIS_TOKENS, AXIS_SOURCE, \
      "masked = scaled, hidden cells −∞", "scaled, mask") \
    X(WEIGHTS, "weights", true,  AXIS_TOKENS, AXIS_SOURCE, "weights = softmax(masked)", "masked") \
    X(CONTEXT, "context", true,  AXIS_TOKENS, AXIS_HEAD_DIMS, "context = weights · V_h", "weights, V") \
    X(CONCAT,  "concat",  false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      "concat = [context_1 … context_h]", "context of every head") \
    X(OUTPUT,  "output",  false, AXIS_TOKENS, AXIS_MODEL_DIMS, "output = concat · W_O", "concat, W_O")

typedef enum {
#define STAGE_ENUM(id, name, per_head, rows, cols, formula, inputs) STAGE_##id,
    STAGE_TABLE(STAGE_ENUM)
#undef STAGE_ENUM
    STAGE_COUNT
} stage_id;

typedef struct {
    const char *name;
    bool per_head;
    stage_axis rows, cols;
    const char *formula;
    const char *inputs;
} stage_info;

/* The table entry of a stage; stage must be < STAGE_COUNT. */
const stage_info *stage_get(stage_id stage);

/* The stage called name (exact, case-sensitive), or STAGE_COUNT when there is none. */
stage_id stage_find(const char *name);

#endif
