/* The model's keys of a lesson: d_model, heads, kv_heads, mask, positional, bias, softmax and
 * decode, and which stages a step may name given them. */
#include <stdlib.h>
#include <string.h>
#include "lesson_private.h"

#define MASK_KEYS(X) X(WINDOW, "window")
#define MASK_ENUM(id, name) MASK_KEY_##id,
enum { MASK_KEYS(MASK_ENUM) MASK_KEY_COUNT };
static const char *const mask_keys[] = { MASK_KEYS(KEY_NAME) };

/* ---- shapes ---- */

/* Columns of W_K and W_V, K and V: kv_heads · d_k with grouped-query attention, d_model
 * otherwise; -1 while unknown. */
int checker_kv_columns(const checker *c) {
    if (c->kv_heads == 0 || c->d_model < 1) return c->d_model;
    if (c->kv_heads < 0 || c->heads < 1) return -1;
    return c->d_model / c->heads * c->kv_heads;
}

/* ---- mask ---- */

static void check_mask_rows(checker *c, int node, int n, int m) {
    char label[] = "a mask row";
    int i = 0;
    for (int row = node + 1; row < lesson_node_next(c->t, node);
         row = lesson_node_next(c->t, row), i++) {
        if (!checker_expect_kind(c, row, LESSON_NODE_LIST, label, "a list of 0 and 1")) continue;
        if (checker_node(c, row)->count != m) {
            REPORT(c, row, WRONG_SIZE, label, m,
                   checker_noun(m, "cell (one per key)", "cells (one per key)"),
                   checker_node(c, row)->count);
            continue;
        }
        bool sees = false, valid = true;
        LESSON_FOR_EACH_CHILD(c->t, row, cell) {
            static const char *const bits[] = { "0", "1" };
            int bit = checker_read_word(c, cell, "a mask cell", bits, 2, "0 or 1");
            valid = valid && bit >= 0;
            sees = sees || bit == 1;
        }
        char text[LESSON_ESCAPED_MAX];
        if (valid && !sees && i < n)
            REPORT(c, row, MASK_ROW_HIDDEN,
                   lesson_escape(c->tokens.text[i], strlen(c->tokens.text[i]), text));
    }
}

/* mask: {window: W}: each query sees itself and the W − 1 keys before it. */
static void read_window(checker *c, int map) {
    int keys[MASK_KEY_COUNT];
    uint64_t window = 0;
    checker_read_keys(c, map, mask_keys, MASK_KEY_COUNT, keys);
    checker_require(c, map, keys[MASK_KEY_WINDOW], "window");
    if (keys[MASK_KEY_WINDOW] < 0
        || !checker_read_integer(c, keys[MASK_KEY_WINDOW], "window", 1, LESSON_MAX_TOKENS, &window))
        return;
    c->mask = MASK_WINDOW;
    c->window = (int)window;
    if (c->keys[TOP_SOURCE] >= 0) REPORT(c, map, SELF_ONLY, "a sliding window");
}

void checker_read_mask(checker *c, int node) {
    static const char *const words[] = { "none", "causal" };
    c->mask = MASK_NONE;
    c->mask_node = node;
    if (!checker_usable(c, node)) return;
    if (checker_node(c, node)->kind == LESSON_NODE_MAP) {
        read_window(c, node);
        return;
    }
    if (checker_node(c, node)->kind == LESSON_NODE_LIST) {
        c->mask = MASK_EXPLICIT;
        bool cross = c->keys[TOP_SOURCE] >= 0;
        if (!c->tokens.valid || (cross && !c->source.valid)) return;
        int n = c->tokens.count, m = cross ? c->source.count : n;
        if (checker_node(c, node)->count != n)
            REPORT(c, node, WRONG_SIZE, "mask", n,
                   checker_noun(n, "row (one per token)", "rows (one per token)"),
                   checker_node(c, node)->count);
        else
            check_mask_rows(c, node, n, m);
        return;
    }
    int word = checker_read_word(c, node, "mask", words, 2,
                                 "none, causal, {window: W} or a list of rows");
    if (word == 1) {
        c->mask = MASK_CAUSAL;
        if (c->keys[TOP_SOURCE] >= 0) REPORT(c, node, CAUSAL_CROSS, NULL);
    }
}

/* ---- the stages a step may name ---- */

bool checker_stage_listed(const checker *c, stage_id stage) {
    return c->loss || stage_get(stage)->presence != PRESENT_WITH_LOSS;
}

/* What makes stage exist that the configuration read so far lacks ("positional: rope", a
 * gradient row's "loss", or the node or bias it is the gradient of: "b_Q"), or NULL. */
static const char *stage_missing(const checker *c, stage_id stage) {
    const stage_info *info = stage_get(stage);
    attention_input model = checker_model(c);
    if (info->presence == PRESENT_WITH_SOURCE)
        return c->keys[TOP_SOURCE] < 0 ? "source" : NULL;
    if (!trace_presence_met(&model, info->presence)) return stage_presence_key(info->presence);
    if (info->of.kind == READ_NODE) return stage_missing(c, (stage_id)info->of.id);
    if (info->of.kind == READ_PARAM && !checker_param_given(c, (param_id)info->of.id))
        return param_get((param_id)info->of.id)->name;
    return NULL;
}

stage_id checker_read_stage(checker *c, int node) {
    if (!checker_expect_scalar(c, node, "stage", "a stage name")) return STAGE_COUNT;
    const char *name = lesson_node_text(c->t, node);
    attention_input model = checker_model(c);
    stage_id stage = trace_find_stage(&model, name);
    if (stage != STAGE_COUNT) {
        /* the node table's presence rule, against the configuration read so far */
        const char *missing = stage_missing(c, stage);
        if (!missing) return stage;
        char why[128];
        trace_stage_absent(stage, missing, why, sizeof why);
        REPORT(c, node, STAGE_ABSENT, why);
        return STAGE_COUNT;
    }
    /* the names a lesson may write: the loss's and the gradients' only with a loss */
    const char *names[STAGE_COUNT];
    char text[LESSON_ESCAPED_MAX];
    int count = 0;
    for (int i = 0; i < STAGE_COUNT; i++)
        if (checker_stage_listed(c, (stage_id)i) && (int)stage_find(stage_get((stage_id)i)->name) == i)
            names[count++] = stage_get((stage_id)i)->name;   /* a shared name once */
    checker_report_unknown(c, REPORT(c, node, UNKNOWN_STAGE, checker_shown(c, node, text)), node,
                           names, count, LESSON_HINT_STAGES_ARE);
    return STAGE_COUNT;
}

/* ---- sizes, positions, softmax and decoding ---- */

void checker_read_sizes(checker *c) {
    uint64_t value = 0;
    if (c->keys[TOP_D_MODEL] >= 0
        && checker_read_integer(c, c->keys[TOP_D_MODEL], "d_model", 1, LESSON_MAX_D_MODEL, &value))
        c->d_model = (int)value;
    c->heads = 1;
    if (c->keys[TOP_HEADS] >= 0)
        c->heads = checker_read_integer(c, c->keys[TOP_HEADS], "heads", 1, LESSON_MAX_HEADS, &value)
                 ? (int)value : -1;
}

/* "1, 2 or 4": the numbers of heads that divide d_model, within the limit on heads. */
static void list_divisors(int d_model, char *out, size_t size) {
    int count = 0, last = 0;
    out[0] = '\0';
    for (int h = 1; h <= d_model && h <= LESSON_MAX_HEADS; h++) {
        if (d_model % h != 0) continue;
        if (last) {
            size_t used = strlen(out);
            snprintf(out + used, size - used, "%s%d", count > 1 ? ", " : "", last);
        }
        last = h;
        count++;
    }
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%d", count > 1 ? " or " : "", last);
}

void checker_check_heads(checker *c) {
    int node = c->keys[TOP_HEADS];
    if (node >= 0 && c->heads > 0 && c->d_model > 0 && c->d_model % c->heads != 0) {
        char divisors[512];
        list_divisors(c->d_model, divisors, sizeof divisors);
        lesson_hint(REPORT(c, node, HEADS_DIVIDE, c->heads, c->d_model), LESSON_HINT_USE_HEADS,
                    divisors);
        c->heads = -1;
    }
    if (c->d_model > LESSON_MAX_D_MODEL) {
        REPORT(c, c->keys[TOP_EMBEDDINGS], OVER_LIMIT, "d_model", (unsigned long long)c->d_model,
               (unsigned long long)LESSON_MAX_D_MODEL);
    }
}

/* positional: none, sinusoidal or rope, and rope_base: with rope. */
void checker_read_positional(checker *c) {
    static const char *const words[] = { "none", "sinusoidal", "rope" };
    int node = c->keys[TOP_POSITIONAL], base = c->keys[TOP_ROPE_BASE];
    int word = node >= 0 ? checker_read_word(c, node, "positional", words, 3,
                                             "none, sinusoidal or rope") : 0;
    c->positional = word == 1;
    c->rope = word == 2;
    c->rope_base = 10000.0;
    if (base >= 0 && !c->rope)
        REPORT(c, base - 1, NEEDS, "rope_base", "'positional: rope'");
    else if (base >= 0)
        checker_read_positive(c, base, "rope_base", &c->rope_base);
    int d_k = c->d_model > 0 && c->heads > 0 ? c->d_model / c->heads : 0;
    if (c->rope && d_k % 2 != 0) {
        lesson_diagnostic *item = REPORT(c, node, ROPE_ODD_D_K, d_k);
        for (int h = 1; h <= c->d_model && h <= LESSON_MAX_HEADS; h++)
            if (c->d_model % h == 0 && (c->d_model / h) % 2 == 0) {
                lesson_hint(item, LESSON_HINT_EVEN_D_K, h);
                break;
            }
    }
}

/* bias: none or alibi (self-attention only). */
void checker_read_bias(checker *c) {
    static const char *const words[] = { "none", "alibi" };
    int node = c->keys[TOP_BIAS];
    c->alibi = node >= 0 && checker_read_word(c, node, "bias", words, 2, "none or alibi") == 1;
    if (c->alibi && c->keys[TOP_SOURCE] >= 0) REPORT(c, node, SELF_ONLY, "bias: alibi");
}

/* norm: {kind: layer | rms, place: pre | post, eps: E, gain: […], bias: […]} (gain and bias are
 * read with the biases, checker_read_bias_vector) and residual: true. A post-norm normalises
 * input + output, PyTorch's Post-LN norm(x + attention(x)), so it needs the residual. */
void checker_read_norm(checker *c) {
    static const char *const names[] = { "kind", "place", "eps", "gain", "bias" };
    static const char *const kinds[] = { "layer", "rms" }, *const places[] = { "pre", "post" };
    int node = c->keys[TOP_NORM], values[5] = { -1, -1, -1, -1, -1 };
    c->norm = NORM_NONE, c->norm_post = false, c->norm_eps = 1e-5;
    c->norm_gain = c->norm_bias = -1;
    c->residual = checker_read_bool(c, c->keys[TOP_RESIDUAL], "residual", false);
    if (!checker_usable(c, node)
        || !checker_expect_kind(c, node, LESSON_NODE_MAP, "norm",
                                "a mapping {kind: layer, place: pre, eps: 1e-5}"))
        return;
    checker_read_keys(c, node, names, 5, values);
    int kind = values[0] >= 0 ? checker_read_word(c, values[0], "norm: kind", kinds, 2,
                                                  "layer or rms") : 0;
    int place = values[1] >= 0 ? checker_read_word(c, values[1], "norm: place", places, 2,
                                                   "pre or post") : 0;
    bool usable = kind >= 0 && place >= 0;
    if (values[2] >= 0) checker_read_positive(c, values[2], "norm: eps", &c->norm_eps);
    if (kind == 1 && values[4] >= 0) REPORT(c, values[4] - 1, RMS_BIAS, NULL);
    if (place == 1 && !c->residual)
        REPORT(c, values[1], NEEDS, "norm: {place: post}",
               "'residual: true' beside it: a post-norm normalises input + output, as PyTorch's "
               "Post-LN norm(x + attention(x))");
    if (c->keys[TOP_SOURCE] >= 0) REPORT(c, node - 1, SELF_ONLY, "norm");
    if (!usable) return;
    c->norm = kind == 1 ? NORM_RMS : NORM_LAYER, c->norm_post = place == 1;
    c->norm_gain = values[3], c->norm_bias = kind == 1 ? -1 : values[4];
}

/* dropout: {p: P, seed: S}: training mode's dropout of the weights, p from 0 up to (not
 * including) 1, the keep mask drawn from the seed (trace_dropout_draw); and contributions:
 * true, the stages head_output and weighted_norms. */
void checker_read_dropout(checker *c) {
    static const char *const names[] = { "p", "seed" };
    int node = c->keys[TOP_DROPOUT], values[2] = { -1, -1 };
    c->dropout = false, c->dropout_p = 0.0, c->dropout_seed = 0;
    c->contributions = checker_read_bool(c, c->keys[TOP_CONTRIBUTIONS], "contributions", false);
    if (!checker_usable(c, node)
        || !checker_expect_kind(c, node, LESSON_NODE_MAP, "dropout",
                                "a mapping {p: 0.1, seed: 7}"))
        return;
    checker_read_keys(c, node, names, 2, values);
    checker_require(c, node, values[0], "p");
    checker_require(c, node, values[1], "seed");
    bool usable = values[0] >= 0 && values[1] >= 0;
    if (values[0] >= 0) {
        if (!checker_read_number(c, values[0], "dropout: p", &c->dropout_p)) usable = false;
        else if (!(c->dropout_p >= 0.0 && c->dropout_p < 1.0)) {
            char text[LESSON_ESCAPED_MAX];
            REPORT(c, values[0], BAD_VALUE, "dropout: p",
                   "a number from 0 up to (not including) 1, the chance of dropping a weight",
                   checker_shown(c, values[0], text));
            usable = false;
        }
    }
    if (values[1] >= 0
        && !checker_read_integer(c, values[1], "dropout: seed", 0, UINT64_MAX, &c->dropout_seed))
        usable = false;
    if (c->online_softmax) {
        REPORT(c, node - 1, NEEDS, "dropout",
               "the ordinary softmax: the online one makes its context without a matrix of "
               "weights to drop");
        usable = false;
    }
    c->dropout = usable;
}

/* softmax: ordinary or online, and tile: B (keys per tile), which online needs and nothing
 * else takes. */
void checker_read_softmax(checker *c) {
    static const char *const words[] = { "ordinary", "online" };
    int node = c->keys[TOP_SOFTMAX], tile = c->keys[TOP_TILE];
    c->online_softmax = node >= 0
        && checker_read_word(c, node, "softmax", words, 2, "ordinary or online") == 1;
    c->tile = 0;
    uint64_t value = 0;
    if (tile >= 0 && !c->online_softmax)
        REPORT(c, tile - 1, NEEDS, "tile", "'softmax: online'");
    else if (c->online_softmax && tile < 0)
        REPORT(c, node - 1, NEEDS, "softmax: online", "'tile: B', the keys per tile");
    else if (tile >= 0 && checker_read_integer(c, tile, "tile", 1, LESSON_MAX_TOKENS, &value))
        c->tile = (int)value;
}

/* Whether an explicit mask (checked: one row per token, cells 0 and 1) is the causal one, each
 * row seeing the keys up to its own: the same as 'mask: causal'. */
static bool mask_is_causal(const checker *c) {
    if (c->mask != MASK_EXPLICIT || !c->tokens.valid || c->keys[TOP_SOURCE] >= 0
        || checker_failed(c))
        return false;
    int i = 0;
    for (int row = c->mask_node + 1; row < lesson_node_next(c->t, c->mask_node);
         row = lesson_node_next(c->t, row), i++) {
        int j = 0;
        LESSON_FOR_EACH_CHILD(c->t, row, cell)
            if ((lesson_node_text(c->t, cell)[0] == '1') != (j++ <= i)) return false;
    }
    return true;
}

/* decode: true (decoding with a KV cache): each new token sees only the tokens before it, so
 * a causal or window mask, in self-attention. */
void checker_read_decode(checker *c) {
    int node = c->keys[TOP_DECODE];
    c->decode = checker_read_bool(c, node, "decode", false);
    if (!c->decode) return;
    if (mask_is_causal(c)) c->mask = MASK_CAUSAL;   /* decoding needs to know it is causal */
    if (c->keys[TOP_SOURCE] >= 0)
        REPORT(c, node, SELF_ONLY, "decode: true");
    else if (c->mask != MASK_CAUSAL && c->mask != MASK_WINDOW)
        REPORT(c, node - 1, NEEDS, "decode: true", "'mask: causal' or 'mask: {window: W}' (or "
               "its rows written out): a token being generated sees only the tokens before it");
}

void checker_read_loss(checker *c) {
    static const char *const names[] = { "target" };
    int node = c->keys[TOP_LOSS], target = -1;
    if (!checker_usable(c, node)
        || !checker_expect_kind(c, node, LESSON_NODE_MAP, "loss", "a mapping {target: ...}"))
        return;
    checker_read_keys(c, node, names, 1, &target);
    checker_require(c, node, target, "target");
    if (c->decode) REPORT(c, node - 1, LOSS_DECODES, NULL);
    c->loss = target >= 0 && checker_read_target(c, target, &c->target) && !c->decode;
}

/* kv_heads: G key/value heads shared by heads / G query heads each (grouped-query attention;
 * 1 is multi-query). */
void checker_read_kv_heads(checker *c) {
    int node = c->keys[TOP_KV_HEADS];
    uint64_t value = 0;
    c->kv_heads = 0;
    if (node < 0) return;
    if (!checker_read_integer(c, node, "kv_heads", 1, LESSON_MAX_HEADS, &value)) {
        c->kv_heads = -1;
        return;
    }
    c->kv_heads = (int)value;
    if (c->heads > 0 && c->heads % c->kv_heads != 0) {
        char divisors[512];
        list_divisors(c->heads, divisors, sizeof divisors);
        lesson_hint(REPORT(c, node, KV_HEADS_DIVIDE, c->kv_heads, c->heads), LESSON_HINT_USE_HEADS,
                    divisors);
        c->kv_heads = -1;
    }
}

/* Identity (given, or by default) only fits a square W_K or W_V. */
void checker_check_kv_identity(checker *c, param_id p) {
    int cols = checker_param_columns(c, p);
    const char *name = param_get(p)->name;
    if (c->params[p].form != FORM_IDENTITY || cols < 1 || cols == c->d_model) return;
    int node = c->keys[TOP_W_Q + p] >= 0 ? c->keys[TOP_W_Q + p] : c->keys[TOP_KV_HEADS];
    lesson_hint(REPORT(c, node, IDENTITY_NOT_SQUARE, name, c->kv_heads, cols,
                       checker_noun(cols, "column", "columns"), c->d_model),
                LESSON_HINT_KV_MATRIX, name, c->d_model, checker_noun(c->d_model, "row", "rows"),
                cols,
                checker_noun(cols, "number", "numbers"));
}

/* One name of train: params into c->train.trains: a weight or bias the lesson gives, once. */
static void read_trained_param(checker *c, int node, const char *const *names) {
    if (checker_expect_scalar(c, node, "a name in train: params", "a weight or bias")
        && strcmp(lesson_node_text(c->t, node), "embeddings") == 0) {
        REPORT(c, node, TRAIN_EMBEDDINGS, NULL);
        return;
    }
    int p = checker_read_word(c, node, "a name in train: params", names, PARAM_COUNT,
                              "a weight or bias (W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O)");
    if (p < 0) return;
    if (!checker_param_given(c, (param_id)p))
        REPORT(c, node, TRAIN_ABSENT, names[p], names[p]);
    else if (c->train.trains[p])
        REPORT(c, node, TRAIN_TWICE, names[p]);
    c->train.trains[p] = true;
}

/* params: a list of names; without it, every weight and every bias the lesson gives. */
static void read_trained_params(checker *c, int node) {
    const char *names[PARAM_COUNT];
    for (int p = 0; p < PARAM_COUNT; p++) {
        names[p] = param_get((param_id)p)->name;
        c->train.trains[p] = node < 0 && checker_param_given(c, (param_id)p);
    }
    if (node < 0 || !checker_expect_kind(c, node, LESSON_NODE_LIST, "train: params",
                                         "a list of weights and biases ([W_Q, W_K])"))
        return;
    if (lesson_node_next(c->t, node) == node + 1) REPORT(c, node, EMPTY_LIST, "train: params");
    LESSON_FOR_EACH_CHILD(c->t, node, item) read_trained_param(c, item, names);
}

void checker_read_train(checker *c) {
    static const char *const names[] = { "steps", "learning_rate", "params" };
    int node = c->keys[TOP_TRAIN], values[3] = { -1, -1, -1 };
    uint64_t steps = 0;
    double rate = 0.0;
    if (!checker_usable(c, node)
        || !checker_expect_kind(c, node, LESSON_NODE_MAP, "train",
                                "a mapping {steps: N, learning_rate: η}"))
        return;
    if (c->keys[TOP_LOSS] < 0)
        REPORT(c, node - 1, NEEDS, "train",
               "'loss: {target: ...}' beside it: training lowers the loss");
    checker_read_keys(c, node, names, 3, values);
    checker_require(c, node, values[0], "steps");
    checker_require(c, node, values[1], "learning_rate");
    bool counted = values[0] >= 0 && checker_read_integer(c, values[0], "train: steps", 1,
                                                          TRAIN_MAX_STEPS, &steps);
    bool rated = values[1] >= 0
                 && checker_read_positive(c, values[1], "train: learning_rate", &rate);
    read_trained_params(c, values[2]);
    if (counted && rated && c->loss)
        c->train.steps = (int)steps, c->train.learning_rate = rate;
}
