/* The graph of multi-head scaled dot-product attention, as data: the node table (one row per
 * stage: its whole spec) and the parameter table (the lesson's learned matrices). Every pass,
 * output and view reads these rows; nothing else lists the stages or says which exist. */
#ifndef ATTNSTEP_STAGES_H
#define ATTNSTEP_STAGES_H

#include <stdbool.h>

/* What a stage's rows or columns (or a parameter's) are indexed by. */
typedef enum {
    AXIS_TOKENS,      /* the query tokens, n of them */
    AXIS_SOURCE,      /* the key/value tokens, m of them (m = n, the same tokens, in self-attention) */
    AXIS_MODEL_DIMS,  /* dimensions 0 … d_model-1 */
    AXIS_KV_DIMS,     /* dimensions 0 … kv_heads·d_k − 1 of keys and values (d_model unless
                         grouped-query attention shares them between heads) */
    AXIS_HEAD_DIMS,   /* dimensions 0 … d_k-1, counted within the head */
    AXIS_TILES,       /* the online softmax's tiles of keys, 0 … ⌈m / tile⌉ − 1 */
    AXIS_ONE          /* a single row: a bias is one row of numbers */
} stage_axis;
/* How many axes there are, for arrays indexed by axis (the last one plus one: the switches on
 * stage_axis stay exhaustive). */
#define STAGE_AXIS_COUNT (AXIS_ONE + 1)

/* Where a stage's numbers live. */
typedef enum {
    STAGE_STORED,   /* in the trace's block for the stage: heads (if per head) × rows × cols */
    STAGE_DERIVED   /* computed from another stage's block when read (no memory of its own) */
} stage_storage;

/* The family of a stage: the operations of one family live in one file of src/core/ops/, and
 * views group stages by family (a worksheet withholds a question's whole family). */
typedef enum {
    FAMILY_INPUT,       /* ops/input.c: embeddings and positional encoding */
    FAMILY_PROJECTION,  /* ops/projection.c: X · W (+ b) */
    FAMILY_POSITIONS,   /* ops/positions.c: RoPE's rotations */
    FAMILY_SCORES,      /* ops/scores.c: Q·Kᵀ, the scaling, ALiBi's bias */
    FAMILY_MASK,        /* ops/mask.c: hidden cells */
    FAMILY_SOFTMAX,     /* ops/softmax.c: the softmax, ordinary or online */
    FAMILY_CONTEXT,     /* ops/context.c: weights · V, the heads side by side */
    FAMILY_NORM,        /* ops/norm.c: layer norm (or RMS norm) and the residual x + attention */
    FAMILY_DROPOUT,     /* ops/dropout.c: the attention weights with dropout's mask, training */
    FAMILY_CONTRIBUTION, /* ops/contribution.c: what each head adds to output, and what each key
                            sends each query (Kobayashi et al. 2020's weighted norms) */
    FAMILY_LOSS         /* ops/loss.c: ½ Σ (output − target)² and its gradient */
} stage_family;

/* When a stage exists: always, or only when the lesson asks for what makes it. */
typedef enum {
    PRESENT_ALWAYS,
    PRESENT_WITH_SOURCE,   /* cross-attention: a lesson with `source:` */
    PRESENT_WITH_ROPE,     /* positional: rope */
    PRESENT_WITH_ALIBI,    /* bias: alibi */
    PRESENT_WITH_ONLINE,   /* softmax: online */
    PRESENT_WITH_LOSS,     /* loss: {target: …}: the loss and every gradient (a gradient row
                              exists only where what it is the gradient of exists too) */
    PRESENT_WITH_PRE_NORM, /* norm: {place: pre} (the default place): Q, K, V read normed */
    PRESENT_WITH_POST_NORM, /* norm: {place: post}: normed = norm(residual), the last node */
    PRESENT_WITH_RESIDUAL, /* residual: true: residual = input + output */
    PRESENT_WITH_DROPOUT,  /* dropout: {p: P, seed: S}: dropped = weights · keep / (1 − P) */
    PRESENT_WITH_CONTRIBUTIONS /* contributions: true: head_output and weighted_norms */
} stage_presence;

/* Properties views read, as flags. */
enum {
    STAGE_HEAD_COLUMNS = 1,  /* its columns are the heads' d_k columns side by side (separators) */
    STAGE_DECODED = 2,       /* a decoding walk shows it at every token (it makes that token's
                                rows); the stages read on the way (scaled, masked) are not shown */
    STAGE_MONOTONE = 4,      /* derived: each cell an increasing function of the same cell of
                                its first input, so their extremes sit at the same cells */
    STAGE_HIDES = 8,         /* cells the mask hides are −∞ in it */
    STAGE_ATTENTION = 16,    /* each row is a query's attention over the keys (0 … 1, summing
                                to 1): shown unsigned, read as "gives 0.8 of its attention" */
    STAGE_GRADIENT = 32      /* ∂loss/∂ of a node or parameter (its row's `of`): the backward
                                pass, after the loss; views show its size (largest |cell|, norm) */
};

/* The learned parameters: P(ID, name, rows, cols, optional). A bias is one row; gain and bias
 * are the layer norm's (norm: {gain: …, bias: …}), present whenever the lesson has a norm
 * (ones and zeros by default; an RMS norm has no bias). */
#define PARAM_TABLE(P) \
    P(W_Q, "W_Q", AXIS_MODEL_DIMS, AXIS_MODEL_DIMS, false) \
    P(W_K, "W_K", AXIS_MODEL_DIMS, AXIS_KV_DIMS, false) \
    P(W_V, "W_V", AXIS_MODEL_DIMS, AXIS_KV_DIMS, false) \
    P(W_O, "W_O", AXIS_MODEL_DIMS, AXIS_MODEL_DIMS, false) \
    P(B_Q, "b_Q", AXIS_ONE, AXIS_MODEL_DIMS, true) \
    P(B_K, "b_K", AXIS_ONE, AXIS_KV_DIMS, true) \
    P(B_V, "b_V", AXIS_ONE, AXIS_KV_DIMS, true) \
    P(B_O, "b_O", AXIS_ONE, AXIS_MODEL_DIMS, true) \
    P(GAIN, "gain", AXIS_ONE, AXIS_MODEL_DIMS, true) \
    P(NORM_BIAS, "bias", AXIS_ONE, AXIS_MODEL_DIMS, true)

typedef enum {
#define PARAM_ENUM(id, name, rows, cols, optional) PARAM_##id,
    PARAM_TABLE(PARAM_ENUM)
#undef PARAM_ENUM
    PARAM_COUNT
} param_id;

typedef struct {
    const char *name;
    stage_axis rows, cols;
    bool optional;  /* NULL in the input means the lesson has none (then nothing is added) */
} param_info;

/* What a node reads besides other nodes, named in "made from" lines. */
typedef enum {
    DATA_EMBEDDINGS,   /* the lesson's embeddings of the query tokens */
    DATA_SOURCE_EMBEDDINGS, /* the embeddings of the source's tokens (cross-attention) */
    DATA_POSITIONAL,   /* the sinusoidal positional encoding */
    DATA_POSITIONS,    /* token positions (RoPE's angles) */
    DATA_SLOPES,       /* ALiBi's slopes */
    DATA_MASK,         /* the mask */
    DATA_TILE,         /* the online softmax's tile size */
    DATA_TARGET,       /* the loss's target (n, d_model) */
    DATA_DROPOUT,      /* dropout's keep mask, drawn from its seed (trace_dropout_keeps) */
    DATA_COUNT
} data_id;

/* One input of a node. */
typedef enum {
    READ_NONE,       /* the end of a row's inputs */
    READ_NODE,       /* stage `id` (or `instead`, when the trace has it: scores read Q_rotated
                        under RoPE; else `otherwise`, when the trace has that), the same head */
    READ_EVERY_HEAD, /* stage `id`, every head of it (concat) */
    READ_PARAM,      /* parameter `id` (named only when the lesson gives it) */
    READ_DATA        /* data_id `id` */
} read_kind;

typedef struct {
    read_kind kind;
    int id;
    int instead;     /* READ_NODE: the stage read instead when present, or -1 */
    int otherwise;   /* READ_NODE: the stage read instead when present and `instead` is not (K
                        reads normed under a pre-norm, source_input in cross-attention), or -1;
                        never 0, the table's first row: an input written without it reads as
                        none (test_every_stage_row_is_complete holds every row to -1 or more) */
} stage_input;

#define STAGE_MAX_INPUTS 4
#define NODE(id) { READ_NODE, STAGE_##id, -1, -1 }
#define NODE_OR(id, other) { READ_NODE, STAGE_##id, STAGE_##other, -1 }
#define NODE_OR2(id, other, third) { READ_NODE, STAGE_##id, STAGE_##other, STAGE_##third }
#define EVERY_HEAD(id) { READ_EVERY_HEAD, STAGE_##id, -1, -1 }
#define PARAM(id) { READ_PARAM, PARAM_##id, -1, -1 }
#define DATA(id) { READ_DATA, DATA_##id, -1, -1 }
#define INPUTS(...) { __VA_ARGS__ }
/* The node a row is shown beside (the UI's pair key toggles between them): weighted_norms
 * beside weights, what each key sends beside the share it gets; BESIDE_NONE for most rows. */
#define BESIDE(id) STAGE_##id
#define BESIDE_NONE (-1)
/* What a gradient row is the gradient of (a forward row: OF_NONE). */
#define OF_NONE { READ_NONE, -1, -1, -1 }
#define OF(id) NODE(id)
#define OF_PARAM(id) PARAM(id)

/* The node table. X(ID, name, family, presence, per_head, rows, cols, storage, flags, inputs,
 *                   of, beside, read, forward, backward, explain, cost, formula)
 *   name      the stage's name everywhere: JSON, --plain, --explain, the UI
 *   family    its operations' file (ops/) and its group in views
 *   presence  when it exists (trace_has_stage, the loader's "exists only with")
 *   per_head  one matrix per head (true) or one for the whole layer (false)
 *   rows, cols  the axes of its matrix; the block of a stored stage holds
 *             (per_head ? heads : 1) × rows × cols doubles, row-major, head after head
 *   storage   STAGE_STORED or STAGE_DERIVED (scaled and masked: a cheap, exact function of
 *             scores, which keeps a 1024-token trace within memory)
 *   flags     STAGE_HEAD_COLUMNS, STAGE_DECODED, STAGE_MONOTONE, STAGE_HIDES, STAGE_ATTENTION
 *   inputs    the nodes, parameters and data it reads, in order (the first node input is
 *             what a derived stage is a function of; a projection reads a node, a weight and
 *             its optional bias)
 *   of        a gradient row's node or parameter (OF(Q), OF_PARAM(W_Q)): the row is ∂loss/∂ of
 *             it, of its shape, present when it and the loss are; OF_NONE for a forward row
 *   beside    the node this one is shown beside (BESIDE(WEIGHTS)), which the UI's pair key
 *             toggles to and back (stage_pair); BESIDE_NONE for most rows
 *   read      one cell's value (stage_functions.h): trace_read_stored for stored stages
 *   forward   writes rows [first, end) of one head's matrix (the whole matrix if not per head)
 *             from the stages before it: the forward runner (trace_forward), decoding one row
 *             at a time, and --stats' timing into scratch memory; a gradient row's is
 *             forward_gradient, the backward pass into its block (below)
 *   backward  beside forward, as llm.c pairs them: adds to the gradient of the row's input
 *             number i (an index into `inputs`: a node or a parameter) what the row's own
 *             gradient sends it, the vector-Jacobian product of the forward operation
 *   explain   the arithmetic behind one cell
 *   cost      multiplications, additions, divisions and exponentials of the stage
 *   formula   writes the formula line from the lesson's configuration
 * The rows are in an order where every stage comes after what it reads, so the table order is
 * the forward order; the loss follows the last forward node and the gradient rows follow it in
 * the backward order (each after the gradients of everything that reads its node, as llm.c's
 * gpt2_backward runs), so one runner in table order makes the forward and the backward pass.
 * A gradient row's forward_gradient zeroes its block and then asks every forward row the trace
 * has that reads its node (or parameter) for that input's `backward`: the gradient of a node
 * read twice (input by Q, K and V) is the sum of what each reader sends. The functions are
 * declared from the table (stage_functions.h), so a row naming a function that does not exist
 * fails to compile. */
#define STAGE_TABLE(X) \
    X(SOURCE_INPUT, "source_input", FAMILY_INPUT, PRESENT_WITH_SOURCE, false, AXIS_SOURCE, \
      AXIS_MODEL_DIMS, STAGE_STORED, 0, INPUTS(DATA(SOURCE_EMBEDDINGS), DATA(POSITIONAL)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_input, backward_nothing, \
      explain_input, cost_input, formula_input) \
    X(INPUT, "input", FAMILY_INPUT, PRESENT_ALWAYS, false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      STAGE_STORED, 0, INPUTS(DATA(EMBEDDINGS), DATA(POSITIONAL)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_input, backward_nothing, \
      explain_input, cost_input, formula_input) \
    X(NORMED, "normed", FAMILY_NORM, PRESENT_WITH_PRE_NORM, false, AXIS_TOKENS, \
      AXIS_MODEL_DIMS, STAGE_STORED, STAGE_DECODED, \
      INPUTS(NODE(INPUT), PARAM(GAIN), PARAM(NORM_BIAS)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_normed, backward_normed, \
      explain_normed, cost_normed, formula_normed) \
    X(Q, "Q", FAMILY_PROJECTION, PRESENT_ALWAYS, false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      STAGE_STORED, STAGE_HEAD_COLUMNS | STAGE_DECODED, \
      INPUTS(NODE_OR(INPUT, NORMED), PARAM(W_Q), PARAM(B_Q)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_projection, backward_projection, \
      explain_projection, cost_projection, \
      formula_projection) \
    X(K, "K", FAMILY_PROJECTION, PRESENT_ALWAYS, false, AXIS_SOURCE, AXIS_KV_DIMS, \
      STAGE_STORED, STAGE_HEAD_COLUMNS | STAGE_DECODED, \
      INPUTS(NODE_OR2(INPUT, SOURCE_INPUT, NORMED), PARAM(W_K), PARAM(B_K)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_projection, backward_projection, \
      explain_projection, cost_projection, \
      formula_projection) \
    X(V, "V", FAMILY_PROJECTION, PRESENT_ALWAYS, false, AXIS_SOURCE, AXIS_KV_DIMS, \
      STAGE_STORED, STAGE_HEAD_COLUMNS | STAGE_DECODED, \
      INPUTS(NODE_OR2(INPUT, SOURCE_INPUT, NORMED), PARAM(W_V), PARAM(B_V)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_projection, backward_projection, \
      explain_projection, cost_projection, \
      formula_projection) \
    X(Q_ROTATED, "Q_rotated", FAMILY_POSITIONS, PRESENT_WITH_ROPE, false, AXIS_TOKENS, \
      AXIS_MODEL_DIMS, STAGE_STORED, STAGE_DECODED, INPUTS(NODE(Q), DATA(POSITIONS)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_rotated, backward_rotated, \
      explain_rotated, cost_rotated, formula_rotated) \
    X(K_ROTATED, "K_rotated", FAMILY_POSITIONS, PRESENT_WITH_ROPE, false, AXIS_SOURCE, \
      AXIS_KV_DIMS, STAGE_STORED, STAGE_DECODED, INPUTS(NODE(K), DATA(POSITIONS)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_rotated, backward_rotated, \
      explain_rotated, cost_rotated, formula_rotated) \
    X(SCORES, "scores", FAMILY_SCORES, PRESENT_ALWAYS, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_STORED, STAGE_DECODED, INPUTS(NODE_OR(Q, Q_ROTATED), NODE_OR(K, K_ROTATED)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_scores, backward_scores, \
      explain_scores, cost_scores, formula_scores) \
    X(SCALED, "scaled", FAMILY_SCORES, PRESENT_ALWAYS, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_DERIVED, STAGE_MONOTONE, INPUTS(NODE(SCORES)), \
      OF_NONE, BESIDE_NONE, trace_read_scaled, forward_derived, backward_scaled, \
      explain_scaled, cost_scaled, formula_scaled) \
    X(BIASED, "biased", FAMILY_SCORES, PRESENT_WITH_ALIBI, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_STORED, 0, INPUTS(NODE(SCALED), DATA(SLOPES)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_biased, backward_biased, \
      explain_biased, cost_biased, formula_biased) \
    X(MASKED, "masked", FAMILY_MASK, PRESENT_ALWAYS, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_DERIVED, STAGE_MONOTONE | STAGE_HIDES, INPUTS(NODE_OR(SCALED, BIASED), DATA(MASK)), \
      OF_NONE, BESIDE_NONE, trace_read_masked, forward_derived, backward_masked, \
      explain_masked, cost_nothing, formula_masked) \
    X(RUNNING_MAX, "running_max", FAMILY_SOFTMAX, PRESENT_WITH_ONLINE, true, AXIS_TOKENS, \
      AXIS_TILES, STAGE_STORED, STAGE_DECODED, INPUTS(NODE(MASKED), DATA(TILE)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_running_max, backward_nothing, \
      explain_running_max, cost_running_max, \
      formula_running_max) \
    X(RUNNING_SUM, "running_sum", FAMILY_SOFTMAX, PRESENT_WITH_ONLINE, true, AXIS_TOKENS, \
      AXIS_TILES, STAGE_STORED, STAGE_DECODED, INPUTS(NODE(MASKED), NODE(RUNNING_MAX)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_running_sum, backward_nothing, \
      explain_running_sum, cost_running_sum, \
      formula_running_sum) \
    X(WEIGHTS, "weights", FAMILY_SOFTMAX, PRESENT_ALWAYS, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_STORED, STAGE_DECODED | STAGE_ATTENTION, INPUTS(NODE(MASKED)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_weights, backward_weights, \
      explain_weights, cost_weights, formula_weights) \
    X(DROPPED, "dropped", FAMILY_DROPOUT, PRESENT_WITH_DROPOUT, true, AXIS_TOKENS, AXIS_SOURCE, \
      STAGE_STORED, STAGE_DECODED, INPUTS(NODE(WEIGHTS), DATA(DROPOUT)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_dropped, backward_dropped, \
      explain_dropped, cost_dropped, formula_dropped) \
    X(ROW_SUMS, "row_sums", FAMILY_DROPOUT, PRESENT_WITH_DROPOUT, true, AXIS_TOKENS, AXIS_ONE, \
      STAGE_DERIVED, 0, INPUTS(NODE(DROPPED)), \
      OF_NONE, BESIDE_NONE, trace_read_row_sums, forward_derived, backward_nothing, \
      explain_row_sums, cost_row_sums, formula_row_sums) \
    X(WEIGHTED_NORMS, "weighted_norms", FAMILY_CONTRIBUTION, PRESENT_WITH_CONTRIBUTIONS, true, \
      AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, STAGE_DECODED, \
      INPUTS(NODE_OR(WEIGHTS, DROPPED), NODE(V), PARAM(W_O)), \
      OF_NONE, BESIDE(WEIGHTS), trace_read_stored, forward_weighted_norms, backward_nothing, \
      explain_weighted_norms, cost_weighted_norms, formula_weighted_norms) \
    X(CONTEXT, "context", FAMILY_CONTEXT, PRESENT_ALWAYS, true, AXIS_TOKENS, AXIS_HEAD_DIMS, \
      STAGE_STORED, STAGE_DECODED, INPUTS(NODE_OR(WEIGHTS, DROPPED), NODE(V)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_context, backward_context, \
      explain_context, cost_context, formula_context) \
    X(CONCAT, "concat", FAMILY_CONTEXT, PRESENT_ALWAYS, false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      STAGE_STORED, STAGE_HEAD_COLUMNS, INPUTS(EVERY_HEAD(CONTEXT)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_concat, backward_concat, \
      explain_concat, cost_nothing, formula_concat) \
    X(HEAD_OUTPUT, "head_output", FAMILY_CONTRIBUTION, PRESENT_WITH_CONTRIBUTIONS, true, \
      AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, STAGE_DECODED, \
      INPUTS(NODE(CONTEXT), PARAM(W_O)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_head_output, backward_nothing, \
      explain_head_output, cost_head_output, formula_head_output) \
    X(OUTPUT, "output", FAMILY_PROJECTION, PRESENT_ALWAYS, false, AXIS_TOKENS, AXIS_MODEL_DIMS, \
      STAGE_STORED, STAGE_DECODED, INPUTS(NODE(CONCAT), PARAM(W_O), PARAM(B_O)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_projection, backward_projection, \
      explain_projection, cost_projection, \
      formula_projection) \
    X(RESIDUAL, "residual", FAMILY_NORM, PRESENT_WITH_RESIDUAL, false, AXIS_TOKENS, \
      AXIS_MODEL_DIMS, STAGE_STORED, STAGE_DECODED, INPUTS(NODE(INPUT), NODE(OUTPUT)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_residual, backward_residual, \
      explain_residual, cost_residual, formula_residual) \
    X(NORMED_POST, "normed", FAMILY_NORM, PRESENT_WITH_POST_NORM, false, AXIS_TOKENS, \
      AXIS_MODEL_DIMS, STAGE_STORED, STAGE_DECODED, \
      INPUTS(NODE(RESIDUAL), PARAM(GAIN), PARAM(NORM_BIAS)), \
      OF_NONE, BESIDE_NONE, trace_read_stored, forward_normed, backward_normed, \
      explain_normed, cost_normed, formula_normed) \
    X(LOSS, "loss", FAMILY_LOSS, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_ONE, STAGE_STORED, 0, \
      INPUTS(NODE_OR2(OUTPUT, NORMED_POST, RESIDUAL), DATA(TARGET)), OF_NONE, \
      BESIDE_NONE, trace_read_stored, forward_loss, backward_loss, explain_loss, cost_loss, \
      formula_loss) \
    X(D_NORMED_POST, "d_normed", FAMILY_NORM, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(NORMED_POST), DATA(TARGET)), OF(NORMED_POST), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_output, \
      cost_gradient, formula_gradient) \
    X(D_RESIDUAL, "d_residual", FAMILY_NORM, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(RESIDUAL, D_NORMED_POST), DATA(TARGET)), OF(RESIDUAL), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_output, \
      cost_gradient, formula_gradient) \
    X(D_OUTPUT, "d_output", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(OUTPUT, D_RESIDUAL), DATA(TARGET)), OF(OUTPUT), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_output, \
      cost_gradient, formula_gradient) \
    X(D_W_O, "d_W_O", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_MODEL_DIMS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(CONCAT), NODE(D_OUTPUT)), OF_PARAM(W_O), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weight, \
      cost_gradient, formula_gradient) \
    X(D_B_O, "d_b_O", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_OUTPUT)), OF_PARAM(B_O), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_bias, \
      cost_gradient, formula_gradient) \
    X(D_CONCAT, "d_concat", FAMILY_CONTEXT, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, INPUTS(NODE(D_OUTPUT), PARAM(W_O)), OF(CONCAT), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_projected, \
      cost_gradient, formula_gradient) \
    X(D_CONTEXT, "d_context", FAMILY_CONTEXT, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_HEAD_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_CONCAT)), OF(CONTEXT), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_context, \
      cost_gradient, formula_gradient) \
    X(D_DROPPED, "d_dropped", FAMILY_DROPOUT, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_CONTEXT), NODE(V)), OF(DROPPED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weights, \
      cost_gradient, formula_gradient) \
    X(D_WEIGHTS, "d_weights", FAMILY_SOFTMAX, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(D_CONTEXT, D_DROPPED), NODE_OR(V, DROPPED)), \
      OF(WEIGHTS), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weights, \
      cost_gradient, formula_gradient) \
    X(D_V, "d_V", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, INPUTS(NODE_OR(WEIGHTS, DROPPED), NODE(D_CONTEXT)), \
      OF(V), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_values, \
      cost_gradient, formula_gradient) \
    X(D_W_V, "d_W_V", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_MODEL_DIMS, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR2(INPUT, SOURCE_INPUT, NORMED), NODE(D_V)), OF_PARAM(W_V), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weight, \
      cost_gradient, formula_gradient) \
    X(D_B_V, "d_b_V", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_V)), OF_PARAM(B_V), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_bias, \
      cost_gradient, formula_gradient) \
    X(D_MASKED, "d_masked", FAMILY_MASK, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(WEIGHTS), NODE(D_WEIGHTS)), OF(MASKED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_masked, \
      cost_gradient, formula_gradient) \
    X(D_BIASED, "d_biased", FAMILY_SCORES, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_MASKED), DATA(MASK)), OF(BIASED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_gradient, \
      cost_gradient, formula_gradient) \
    X(D_SCALED, "d_scaled", FAMILY_SCORES, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(D_MASKED, D_BIASED), DATA(MASK)), OF(SCALED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_gradient, \
      cost_gradient, formula_gradient) \
    X(D_SCORES, "d_scores", FAMILY_SCORES, PRESENT_WITH_LOSS, \
      true, AXIS_TOKENS, AXIS_SOURCE, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_SCALED)), OF(SCORES), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_scores, \
      cost_gradient, formula_gradient) \
    X(D_Q_ROTATED, "d_Q_rotated", FAMILY_POSITIONS, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, INPUTS(NODE(D_SCORES), NODE(K_ROTATED)), OF(Q_ROTATED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_query, \
      cost_gradient, formula_gradient) \
    X(D_K_ROTATED, "d_K_rotated", FAMILY_POSITIONS, PRESENT_WITH_LOSS, \
      false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, INPUTS(NODE(D_SCORES), NODE(Q_ROTATED)), OF(K_ROTATED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_key, \
      cost_gradient, formula_gradient) \
    X(D_Q, "d_Q", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, \
      INPUTS(NODE_OR(D_SCORES, D_Q_ROTATED), NODE_OR(K, D_Q_ROTATED)), OF(Q), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_query, \
      cost_gradient, formula_gradient) \
    X(D_W_Q, "d_W_Q", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_MODEL_DIMS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(INPUT, NORMED), NODE(D_Q)), OF_PARAM(W_Q), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weight, \
      cost_gradient, formula_gradient) \
    X(D_B_Q, "d_b_Q", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_Q)), OF_PARAM(B_Q), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_bias, \
      cost_gradient, formula_gradient) \
    X(D_K, "d_K", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_SOURCE, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT | STAGE_HEAD_COLUMNS, \
      INPUTS(NODE_OR(D_SCORES, D_K_ROTATED), NODE_OR(Q, D_K_ROTATED)), OF(K), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_key, \
      cost_gradient, formula_gradient) \
    X(D_W_K, "d_W_K", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_MODEL_DIMS, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR2(INPUT, SOURCE_INPUT, NORMED), NODE(D_K)), OF_PARAM(W_K), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_weight, \
      cost_gradient, formula_gradient) \
    X(D_B_K, "d_b_K", FAMILY_PROJECTION, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_KV_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_K)), OF_PARAM(B_K), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_bias, \
      cost_gradient, formula_gradient) \
    X(D_NORMED, "d_normed", FAMILY_NORM, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_Q), NODE(D_K), NODE(D_V)), OF(NORMED), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_projected, \
      cost_gradient, formula_gradient) \
    X(D_GAIN, "d_gain", FAMILY_NORM, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(D_NORMED, D_NORMED_POST), NODE_OR(NORMED, NORMED_POST)), \
      OF_PARAM(GAIN), BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, \
      explain_d_gain, cost_gradient, formula_gradient) \
    X(D_NORM_BIAS, "d_bias", FAMILY_NORM, PRESENT_WITH_LOSS, \
      false, AXIS_ONE, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(D_NORMED, D_NORMED_POST)), OF_PARAM(NORM_BIAS), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_bias, \
      cost_gradient, formula_gradient) \
    X(D_INPUT, "d_input", FAMILY_INPUT, PRESENT_WITH_LOSS, \
      false, AXIS_TOKENS, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE_OR(D_Q, D_NORMED), NODE_OR(D_K, D_NORMED), \
      NODE_OR(D_V, D_NORMED), NODE(D_RESIDUAL)), OF(INPUT), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_projected, \
      cost_gradient, formula_gradient) \
    X(D_SOURCE_INPUT, "d_source_input", FAMILY_INPUT, PRESENT_WITH_LOSS, \
      false, AXIS_SOURCE, AXIS_MODEL_DIMS, STAGE_STORED, \
      STAGE_GRADIENT, INPUTS(NODE(D_K), NODE(D_V)), OF(SOURCE_INPUT), \
      BESIDE_NONE, trace_read_stored, forward_gradient, backward_nothing, explain_d_projected, \
      cost_gradient, formula_gradient)

typedef enum {
#define STAGE_ENUM(id, name, family, presence, per_head, rows, cols, storage, flags, inputs, \
                   of, beside, read, forward, backward, explain, cost, formula) STAGE_##id,
    STAGE_TABLE(STAGE_ENUM)
#undef STAGE_ENUM
    STAGE_COUNT
} stage_id;

typedef struct {
    const char *name;
    stage_family family;
    stage_presence presence;
    bool per_head;
    stage_axis rows, cols;
    stage_storage storage;
    unsigned flags;
    stage_input inputs[STAGE_MAX_INPUTS];  /* READ_NONE after the last */
    stage_input of;     /* a gradient row's node or parameter; READ_NONE for a forward row */
    int beside;         /* the stage_id this row is shown beside, or -1 */
} stage_info;

/* The table entry of a stage; stage must be < STAGE_COUNT. */
const stage_info *stage_get(stage_id stage);

/* The stage called name (exact, case-sensitive), or STAGE_COUNT when there is none. Two rows
 * share a name when they are one node in two places that never meet (normed before Q under a
 * pre-norm, after the residual under a post-norm): this gives the first; trace_find_stage
 * (trace.h) the one an input has. */
stage_id stage_find(const char *name);

/* The lesson key that makes a stage of this presence exist ("positional: rope"), or NULL for
 * PRESENT_ALWAYS. */
const char *stage_presence_key(stage_presence presence);

/* The table entry of a parameter; param must be < PARAM_COUNT. */
const param_info *param_get(param_id param);

/* Whether stage reads input `id` of this kind (READ_NODE: a stage_id, read one head at a time,
 * every head, or instead of another; READ_PARAM: a param_id; READ_DATA: a data_id). */
bool stage_reads(stage_id stage, read_kind kind, int id);

/* The gradient row of a node (READ_NODE: a stage_id) or a parameter (READ_PARAM: a
 * param_id), ∂loss/∂ of it, or STAGE_COUNT when it has none. */
stage_id stage_gradient(read_kind kind, int id);

/* The node stage is shown beside: its row's `beside`, else the row whose `beside` names it;
 * STAGE_COUNT when it pairs with none. */
stage_id stage_pair(stage_id stage);

/* The stage that computes with parameter param (Q for W_Q and b_Q, output for W_O: not
 * head_output and weighted_norms, which read W_O to show what output is made of), or
 * STAGE_COUNT. */
stage_id stage_param_reader(param_id param);

/* The name of a data input ("embeddings", "ALiBi slopes"). */
const char *stage_data_name(data_id data);

#endif
