/* What the loader's files share: the checker (the state of one lesson being read and checked)
 * and the checker_ functions each file lends the others. Only src/lesson's files include it. */
#ifndef LESSON_PRIVATE_H
#define LESSON_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lesson.h"
#include "lesson_diag.h"
#include "lesson_text.h"
#include "lesson_yaml.h"
#include "random.h"
#include "train.h"

/* X(ID, key) for each top-level key of a lesson. */
#define TOP_KEYS(X) \
    X(TITLE, "title") X(ABOUT, "about") X(TOKENS, "tokens") X(EMBEDDINGS, "embeddings") \
    X(D_MODEL, "d_model") X(HEADS, "heads") X(W_Q, "W_Q") X(W_K, "W_K") X(W_V, "W_V") \
    X(W_O, "W_O") X(B_Q, "b_Q") X(B_K, "b_K") X(B_V, "b_V") X(B_O, "b_O") X(MASK, "mask") \
    X(POSITIONAL, "positional") X(SCALE, "scale") \
    X(SOURCE, "source") X(STEPS, "steps") X(ROPE_BASE, "rope_base") X(BIAS, "bias") \
    X(KV_HEADS, "kv_heads") X(SOFTMAX, "softmax") X(TILE, "tile") X(DECODE, "decode") \
    X(DRAW_ORDER, "draw_order") X(LOSS, "loss") X(TRAIN, "train") X(NORM, "norm") \
    X(RESIDUAL, "residual") X(DROPOUT, "dropout") X(CONTRIBUTIONS, "contributions")
#define TOP_ENUM(id, name) TOP_##id,
#define KEY_NAME(id, name) name,
enum { TOP_KEYS(TOP_ENUM) TOP_COUNT };

/* How a matrix, a bias (a matrix of one row) or the set of embeddings is given. FORM_VECTOR is a
 * bias written as one list of numbers. */
typedef enum { FORM_IDENTITY, FORM_LIST, FORM_RANDOM, FORM_NUMPY, FORM_FILE, FORM_VECTOR,
               FORM_TOKENS, FORM_CONSTANT }
    matrix_form;   /* FORM_TOKENS: a mapping with one row per token, as embeddings are written;
                      FORM_CONSTANT: every number `scale` (a norm's gain or bias not written) */

typedef struct {
    matrix_form form;
    int node;            /* the list, for FORM_LIST; the mapping, for the others */
    random_kind kind;
    uint64_t seed;
    double scale;
    double *values;      /* FORM_FILE and FORM_NUMPY: rows × cols given values, row-major (for
                            embeddings one row per token, then per source token) */
    int rows, cols;
} matrix_spec;

/* The matrices and biases in numpy's default draw order: the embeddings, then every parameter
 * in the parameter table's order (draw i > 0 is parameter i − 1); draw_order: names them. */
enum { DRAWN_EMBEDDINGS, DRAWN_COUNT = 1 + PARAM_COUNT };
/* The top-level keys of the parameters are in the parameter table's order; the table's last
 * two, the norm's gain and bias, are keys of `norm:` (checker_param_node). */
_Static_assert(TOP_B_O - TOP_W_Q == PARAM_B_O - PARAM_W_Q, "parameter keys in table order");
_Static_assert(PARAM_GAIN == PARAM_B_O + 1 && PARAM_NORM_BIAS == PARAM_COUNT - 1,
               "the norm's parameters last");

/* A token list as read: copies of the tokens, and the node each one was written in. */
typedef struct {
    bool valid;          /* given, and every token is usable */
    int count;           /* tokens stored in text */
    char **text;
    int *nodes;
    lesson_index first;  /* token → index of its first occurrence */
} token_list;

typedef struct {
    const lesson_tree *t;
    const char *data;         /* the file's text (NUL-terminated at data[size]), for places */
    size_t size;
    lesson_cursor place;      /* where the last text's place was found: texts are met in the
                                 file's order, so finding each from there keeps loads linear */
    lesson_diagnostics *d;
    int keys[TOP_COUNT];
    token_list tokens, source;
    /* distinct tokens, tokens first then source, in order of first appearance */
    const char **all_tokens;  /* tokens then source */
    lesson_index distinct;    /* over all_tokens */
    int *distinct_of;         /* (n + m) the distinct number of each of all_tokens */
    int n_distinct;
    const char **distinct_text;  /* each distinct token */
    int *distinct_node;       /* where each distinct token first appears */
    int *distinct_vector;     /* the node of its embedding, or -1 */
    int d_model;              /* -1 while unknown */
    int heads;                /* -1 when invalid */
    int kv_heads;             /* 0 when not given, -1 when invalid */
    matrix_spec embeddings;
    matrix_spec params[PARAM_COUNT];  /* by the core's parameter table; an optional one (a
                                         bias) is given when keys[TOP_W_Q + p] >= 0 */
    mask_kind mask;
    int mask_node;
    int window;               /* for a window mask */
    bool positional, scale;
    bool rope, alibi;
    double rope_base;
    bool online_softmax;      /* softmax: online */
    int tile;                 /* its keys per tile; 0 when not given or invalid */
    bool decode;              /* decode: true */
    norm_kind norm;           /* norm: {kind: …}; NORM_NONE without it or when unusable */
    bool norm_post;           /* norm: {place: post} */
    double norm_eps;          /* norm: {eps: …}, 1e-5 by default */
    int norm_gain, norm_bias; /* the nodes of norm's gain: and bias:, or -1 */
    bool residual;            /* residual: true */
    bool dropout;             /* a usable dropout: {p, seed} was read */
    double dropout_p;         /* its p, 0 ≤ p < 1 */
    uint64_t dropout_seed;    /* its seed */
    bool contributions;       /* contributions: true */
    matrix_spec target;       /* loss: {target: …}, when keys[TOP_LOSS] >= 0 and it is usable */
    bool loss;                /* a usable loss: {target: …} was read */
    train_config train;       /* train: {steps, learning_rate, params}; steps 0 without it */
    int n_steps;
    lesson_step *steps;
    int n_data_files;
    char *data_files[DRAWN_COUNT + 1];  /* the data files read: embeddings, W_* and b_*, the
                                           loss's target at most */
    size_t max_bytes;         /* the most that the lesson and its trace may take together */
    bool allow_paths;         /* data files may be anywhere (lesson_options, --allow-paths) */
    bool structure_only;      /* check everything but build no matrix (lesson_load_summary) */
} checker;

/* Where parameter p is written (-1: not written): W_Q … b_O at the top, gain and bias in norm:. */
static inline int checker_param_node(const checker *c, param_id p) {
    return p == PARAM_GAIN ? c->norm_gain : p == PARAM_NORM_BIAS ? c->norm_bias
                                                                 : c->keys[TOP_W_Q + p];
}

/* Whether the lesson has parameter p: a weight always, a bias when written, the gain with any
 * norm and the bias with a layer norm (ones and zeros unless written). */
static inline bool checker_param_given(const checker *c, param_id p) {
    if (p == PARAM_GAIN) return c->norm != NORM_NONE;
    if (p == PARAM_NORM_BIAS) return c->norm == NORM_LAYER;
    return !param_get(p)->optional || c->keys[TOP_W_Q + p] >= 0;
}

/* ---- reporting (here, as every file reads nodes and reports through them) ---- */

static inline const lesson_node *checker_node(const checker *c, int node) {
    return &c->t->nodes[node];
}

static inline bool checker_failed(const checker *c) {
    return lesson_error_count(c->d) > 0;   /* a note fails nothing */
}

static inline bool checker_usable(const checker *c, int node) {
    return node >= 0 && checker_node(c, node)->kind != LESSON_NODE_BAD;
}

#define REPORT(c, node, error, ...) \
    lesson_report((c)->d, checker_node(c, node)->line, checker_node(c, node)->col, \
                  LESSON_ERROR_##error, __VA_ARGS__)

/* ---- lesson_values.c ---- */

/* The escaped text of a scalar node, for a message; buffer holds LESSON_ESCAPED_MAX bytes. */
const char *checker_shown(const checker *c, int node, char *buffer);
/* Whether node is a non-null scalar; otherwise reports that `what` must be `expected`. */
bool checker_expect_scalar(checker *c, int node, const char *what, const char *expected);
/* Whether node is of kind; otherwise reports that `what` must be `expected`. */
bool checker_expect_kind(checker *c, int node, lesson_node_kind kind, const char *what,
                         const char *expected);
/* Copies a scalar's text, or NULL when it is missing or not text (after reporting). */
char *checker_read_text(checker *c, int node, const char *what);
/* Adds to item that node's word is not one of words[]: "did you mean", or else the hint all. */
void checker_report_unknown(checker *c, lesson_diagnostic *item, int node,
                            const char *const *words, int count, lesson_hint_id all);
/* Finds the value of each of names[] in map (-1 when absent), reporting unknown keys. */
void checker_read_keys(checker *c, int map, const char *const *names, int count, int *values);
/* Reports that map lacks the key name when value < 0 (a report that a misspelling of the key
 * explains, and that is then dropped). */
void checker_require(checker *c, int map, int value, const char *name);
/* Marks item (NULL is ignored) as following from the absence of `key` (a key table's string) in
 * map, so that a misspelling of that key drops it (lesson_follows). */
void checker_follows(checker *c, lesson_diagnostic *item, int map, const char *key);
/* Every problem reported until checker_follow_end follows from the absence of key in map. */
void checker_follow_from(checker *c, int map, const char *key);
void checker_follow_end(checker *c);
/* Reads a finite number into *value (when not NULL); false after reporting. */
bool checker_read_number(checker *c, int node, const char *what, double *value);
/* Reads a number greater than 0 into *value; false after reporting. */
bool checker_read_positive(checker *c, int node, const char *what, double *value);
/* Reads a whole number from min to limit into *value; false after reporting. */
bool checker_read_integer(checker *c, int node, const char *what, uint64_t min, uint64_t limit,
                          uint64_t *value);
/* The noun for count things, as a diagnostic writes it after the count. */
const char *checker_noun(int count, const char *one, const char *many);
/* Reads a list of numbers into values (when not NULL); the length found, or -1 (see the file). */
int checker_read_vector(checker *c, int node, int expected, const char *what, const char *most,
                        double *values);
/* Index of the scalar node's text in words[], or -1 after reporting. */
int checker_read_word(checker *c, int node, const char *what, const char *const *words, int count,
                      const char *expected);
/* true or false (any YAML spelling); fallback when node < 0 or after reporting. */
bool checker_read_bool(checker *c, int node, const char *what, bool fallback);
/* Reads `tokens` or `source` into list: a list, or one string split on spaces. */
void checker_read_tokens(checker *c, int node, token_list *list, const char *what);
void checker_token_list_free(token_list *list);
/* Numbers every distinct token, tokens first and then source; false when out of memory. */
bool checker_index_distinct(checker *c);
/* Reads embeddings: a token → vector map, {random: ...} or {file: ...}. */
void checker_read_embeddings(checker *c, int node);
/* Reads W_Q, W_K, W_V or W_O into spec: d_model rows and cols columns (-1: unknown). */
void checker_read_matrix(checker *c, int node, const char *name, int cols, matrix_spec *spec);
/* Columns of parameter p: its stage's columns, d_model or kv_heads · d_k (-1 while unknown). */
int checker_param_columns(const checker *c, param_id p);
/* The model's configuration as read so far (sizes, mask, positions, softmax, decoding), as the
 * core's input without tokens or numbers: for the node table's presence rules. */
attention_input checker_model(const checker *c);
/* Reads bias p (an optional parameter: b_Q, b_K, b_V or b_O) from its key, if given. */
void checker_read_bias_vector(checker *c, param_id p);
/* The spec of drawn matrix i (DRAWN_EMBEDDINGS, W_Q … W_O, b_Q … b_O). */
matrix_spec *checker_drawn_spec(checker *c, int i);
/* Reads draw_order: into order, returning how many; without it, the default order. */
int checker_read_draw_order(checker *c, int node, int *order);
/* Draws every `random: numpy` matrix of order[0 … count-1], as numpy would in that order. */
void checker_draw_numpy(checker *c, const int *order, int count);

/* ---- lesson_config.c ---- */

/* Columns of W_K and W_V, K and V: kv_heads · d_k, or d_model; -1 while unknown. */
int checker_kv_columns(const checker *c);
/* Reads mask: none, causal, {window: W} or a list of rows (checked against the tokens). */
void checker_read_mask(checker *c, int node);
/* Reads a step's stage, refusing one the lesson's keys do not give it; STAGE_COUNT if none. */
stage_id checker_read_stage(checker *c, int node);
/* Reads d_model and heads (heads is 1 when absent, -1 when invalid). */
void checker_read_sizes(checker *c);
/* Reports heads that do not divide d_model, and a d_model over the limit. */
void checker_check_heads(checker *c);
/* Reads positional: and rope_base:. */
void checker_read_positional(checker *c);
/* Reads bias: none or alibi. */
void checker_read_bias(checker *c);
/* Reads softmax: and tile:. */
void checker_read_softmax(checker *c);
/* norm: {kind, place, eps, gain, bias} and residual: true. */
void checker_read_norm(checker *c);
/* dropout: {p: P, seed: S} (after checker_read_softmax: the online softmax has no weights to
 * drop) and contributions: true. */
void checker_read_dropout(checker *c);
/* Reads decode:, which needs a causal or window mask (so after checker_read_mask). */
void checker_read_decode(checker *c);
/* loss: {target: MATRIX}: one row of d_model numbers per token, as a list of rows, {file: …}
 * or a mapping from each token to its row (lesson_values.c reads the matrix); refused in a
 * lesson that decodes. */
void checker_read_loss(checker *c);
/* train: {steps: N, learning_rate: η, params: [W_Q, …]}: needs the loss (so after
 * checker_read_loss); params defaults to every weight and bias the lesson gives. */
void checker_read_train(checker *c);
/* Whether a message that lists stages names stage: the loss's and the gradients' only in a
 * lesson with a loss. */
bool checker_stage_listed(const checker *c, stage_id stage);
/* Reads the loss's target matrix (n rows of d_model) at node into spec; false after
 * reporting. */
bool checker_read_target(checker *c, int node, matrix_spec *spec);
/* The node of token's row in a target written as a mapping (FORM_TOKENS), or -1. */
int checker_target_row(const checker *c, const matrix_spec *spec, const char *token);
/* Reads kv_heads: (0 when absent, -1 when invalid). */
void checker_read_kv_heads(checker *c);
/* Reports an identity weight p (W_K, W_V) that grouped heads make not square. */
void checker_check_kv_identity(checker *c, param_id p);

/* ---- lesson_script.c ---- */

/* Where each live-number placeholder of the text at node is written in the file, into w. */
void checker_read_written(checker *c, int node, lesson_written *w);
/* Reads steps: into c->steps (after every model key, which a step is checked against). */
void checker_read_steps(checker *c, int node);
/* Frees what a step holds (not the step itself). */
void checker_free_step(lesson_step *step);

/* ---- lesson_build.c ---- */

/* Builds the lesson l from a checker that found no problem: its tokens, matrices, mask and
 * attention_input, within c->max_bytes; LESSON_INVALID after reporting otherwise. */
lesson_status checker_build(checker *c, int root, lesson *l);

#endif
