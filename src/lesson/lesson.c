/* The lesson loader: checks a lesson's YAML tree against the format of lessons/README.md,
 * reporting every problem it can find, and turns a valid one into the core's attention_input. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lesson.h"
#include "lesson_diag.h"
#include "lesson_file.h"
#include "lesson_text.h"
#include "lesson_yaml.h"
#include "claim.h"
#include "numpy_random.h"
#include "random.h"

#define DEFAULT_TOLERANCE 0.005

/* X(ID, key) for each kind of mapping with fixed keys. */
#define TOP_KEYS(X) \
    X(TITLE, "title") X(ABOUT, "about") X(TOKENS, "tokens") X(EMBEDDINGS, "embeddings") \
    X(D_MODEL, "d_model") X(HEADS, "heads") X(W_Q, "W_Q") X(W_K, "W_K") X(W_V, "W_V") \
    X(W_O, "W_O") X(B_Q, "b_Q") X(B_K, "b_K") X(B_V, "b_V") X(B_O, "b_O") X(MASK, "mask") \
    X(POSITIONAL, "positional") X(SCALE, "scale") \
    X(SOURCE, "source") X(STEPS, "steps") X(ROPE_BASE, "rope_base") X(BIAS, "bias") \
    X(KV_HEADS, "kv_heads") X(SOFTMAX, "softmax") X(TILE, "tile") X(DECODE, "decode") \
    X(DRAW_ORDER, "draw_order")
#define RANDOM_KEYS(X) X(RANDOM, "random") X(SEED, "seed") X(SCALE, "scale")
#define MASK_KEYS(X) X(WINDOW, "window")
#define STEP_KEYS(X) \
    X(STAGE, "stage") X(HEAD, "head") X(FOCUS, "focus") X(SAY, "say") X(ASK, "ask") \
    X(CHOICES, "choices") X(ANSWER, "answer") X(TOLERANCE, "tolerance") X(EXPECT, "expect") \
    X(POSITION, "position")

#define TOP_ENUM(id, name) TOP_##id,
#define RANDOM_ENUM(id, name) RANDOM_##id,
#define MASK_ENUM(id, name) MASK_KEY_##id,
#define STEP_ENUM(id, name) STEP_##id,
#define KEY_NAME(id, name) name,
enum { TOP_KEYS(TOP_ENUM) TOP_COUNT };
enum { RANDOM_KEYS(RANDOM_ENUM) RANDOM_COUNT };
enum { MASK_KEYS(MASK_ENUM) MASK_KEY_COUNT };
enum { STEP_KEYS(STEP_ENUM) STEP_COUNT };
static const char *const top_keys[] = { TOP_KEYS(KEY_NAME) };
static const char *const random_keys[] = { RANDOM_KEYS(KEY_NAME) };
static const char *const mask_keys[] = { MASK_KEYS(KEY_NAME) };
static const char *const step_keys[] = { STEP_KEYS(KEY_NAME) };

/* How a matrix, a bias (a matrix of one row) or the set of embeddings is given. FORM_VECTOR is a
 * bias written as one list of numbers. */
typedef enum { FORM_IDENTITY, FORM_LIST, FORM_RANDOM, FORM_NUMPY, FORM_FILE, FORM_VECTOR }
    matrix_form;

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

/* The matrices and biases in numpy's default draw order; draw_order: names them. */
enum { DRAWN_EMBEDDINGS, DRAWN_FIRST_BIAS = 5, DRAWN_COUNT = 9 };
static const char *const drawn_names[DRAWN_COUNT] = {
    "embeddings", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O" };

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
    matrix_spec embeddings, W[4];
    matrix_spec b[4];         /* b_Q, b_K, b_V, b_O: given when keys[TOP_B_Q + i] >= 0 */
    mask_kind mask;
    int mask_node;
    int window;               /* for a window mask */
    bool positional, scale;
    bool rope, alibi;
    double rope_base;
    bool online_softmax;      /* softmax: online */
    int tile;                 /* its keys per tile; 0 when not given or invalid */
    bool decode;              /* decode: true */
    int n_steps;
    lesson_step *steps;
    int n_data_files;
    char *data_files[DRAWN_COUNT];  /* the data files read: embeddings, W_* and b_* at most */
    size_t max_bytes;         /* the most that the lesson and its trace may take together */
    bool allow_paths;         /* data files may be anywhere (lesson_options, --allow-paths) */
    bool structure_only;      /* check everything but build no matrix (lesson_load_summary) */
} checker;

/* ---- reporting helpers ---- */

static const lesson_node *node_at(const checker *c, int node) {
    return &c->t->nodes[node];
}

static bool failed(const checker *c) {
    return c->d->count > 0 || c->d->dropped > 0;
}

/* The escaped text of a scalar node, for a message; buffer holds LESSON_ESCAPED_MAX bytes. */
static const char *shown(const checker *c, int node, char *buffer) {
    return lesson_escape(lesson_node_text(c->t, node), node_at(c, node)->length, buffer);
}

#define REPORT(c, node, error, ...) \
    lesson_report((c)->d, node_at(c, node)->line, node_at(c, node)->col, \
                  LESSON_ERROR_##error, __VA_ARGS__)

static bool usable(const checker *c, int node) {
    return node >= 0 && node_at(c, node)->kind != LESSON_NODE_BAD;
}

/* Whether node is a non-null scalar; otherwise reports that `what` must be `expected`. */
static bool expect_scalar(checker *c, int node, const char *what, const char *expected) {
    if (!usable(c, node)) return false;
    if (node_at(c, node)->kind == LESSON_NODE_SCALAR && !lesson_node_is_null(c->t, node))
        return true;
    REPORT(c, node, WRONG_TYPE, what, expected, lesson_node_describe(c->t, node));
    return false;
}

static bool expect_kind(checker *c, int node, lesson_node_kind kind, const char *what,
                        const char *expected) {
    if (!usable(c, node)) return false;
    if (node_at(c, node)->kind == kind) return true;
    REPORT(c, node, WRONG_TYPE, what, expected, lesson_node_describe(c->t, node));
    return false;
}

/* Copies a scalar's text, or NULL when it is missing or not text (after reporting). */
static char *read_text(checker *c, int node, const char *what) {
    if (node < 0 || !expect_scalar(c, node, what, "text")) return NULL;
    return strdup(lesson_node_text(c->t, node));
}

/* ---- mappings with fixed keys ---- */

/* The one report of a word (the text of node) that is not one of words[]: the diagnostic item
 * says so, then "; did you mean 'X'?" follows when one of them is near the word, or else (for
 * a short fixed vocabulary) the hint `all` lists them. */
static void report_unknown(checker *c, lesson_diagnostic *item, int node,
                           const char *const *words, int count, lesson_hint_id all) {
    if (lesson_suggest(item, lesson_node_text(c->t, node), words, count)
        || all == LESSON_HINT_COUNT)
        return;
    char list[512] = "";
    for (int i = 0; i < count; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", words[i]);
    }
    lesson_hint(item, all, list);
}

static void report_unknown_key(checker *c, int key, const char *const *names, int count) {
    char key_shown[LESSON_ESCAPED_MAX];
    report_unknown(c, REPORT(c, key, UNKNOWN_KEY, shown(c, key, key_shown)), key, names, count,
                   LESSON_HINT_KEYS_HERE);
}

/* Finds the value of each of names[] in map (-1 when absent), reporting unknown keys. Keys that
 * are not text and repeated keys were reported while the tree was built. */
static void read_keys(checker *c, int map, const char *const *names, int count, int *values) {
    for (int i = 0; i < count; i++) values[i] = -1;
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        if (node_at(c, key)->kind == LESSON_NODE_SCALAR) {
            const char *text = lesson_node_text(c->t, key);
            int i = 0;
            while (i < count && strcmp(text, names[i]) != 0) i++;
            if (i == count) report_unknown_key(c, key, names, count);
            else if (values[i] < 0) values[i] = value;
        }
        key = lesson_node_next(c->t, value);
    }
}

static void require(checker *c, int map, int value, const char *name) {
    if (value < 0) REPORT(c, map, MISSING_KEY, name);
}

/* ---- numbers ---- */

/* A hint for text that is a number written with a decimal comma ("1,5"): the number with a
 * point instead. */
static void hint_decimal_comma(checker *c, lesson_diagnostic *item, int node) {
    const char *text = lesson_node_text(c->t, node), *comma = strchr(text, ',');
    double x = 0.0;
    if (!comma || strchr(comma + 1, ',') || node_at(c, node)->length >= LESSON_ESCAPED_MAX)
        return;
    char pointed[LESSON_ESCAPED_MAX], shown_text[LESSON_ESCAPED_MAX];
    snprintf(pointed, sizeof pointed, "%.*s.%s", (int)(comma - text), text, comma + 1);
    if (lesson_parse_number(pointed, &x) == LESSON_NUMBER_OK)
        lesson_hint(item, LESSON_HINT_DECIMAL_POINT,
                    lesson_escape(pointed, strlen(pointed), shown_text));
}

static bool read_number(checker *c, int node, const char *what, double *value) {
    if (!expect_scalar(c, node, what, "a number")) return false;
    double x = 0.0;
    char text[LESSON_ESCAPED_MAX];
    switch (lesson_parse_number(lesson_node_text(c->t, node), &x)) {
    case LESSON_NUMBER_OK:
        if (value) *value = x;
        return true;
    case LESSON_NUMBER_NONFINITE:
        REPORT(c, node, NOT_FINITE, what, shown(c, node, text));
        return false;
    case LESSON_NUMBER_RANGE:
        REPORT(c, node, OUT_OF_RANGE, what, shown(c, node, text));
        return false;
    default:
        hint_decimal_comma(c, REPORT(c, node, NOT_A_NUMBER, what, shown(c, node, text)), node);
        return false;
    }
}

/* A whole number from min to limit; past limit the message names the limit. */
static bool read_integer(checker *c, int node, const char *what, uint64_t min, uint64_t limit,
                         uint64_t *value) {
    if (!expect_scalar(c, node, what, "a whole number")) return false;
    char text[LESSON_ESCAPED_MAX];
    uint64_t x = 0;
    if (!lesson_parse_integer(lesson_node_text(c->t, node), min, UINT64_MAX, &x)) {
        REPORT(c, node, BAD_INTEGER, what, (unsigned long long)min, (unsigned long long)limit,
               shown(c, node, text));
        return false;
    }
    if (x > limit) {
        REPORT(c, node, OVER_LIMIT, what, (unsigned long long)x, (unsigned long long)limit);
        return false;
    }
    *value = x;
    return true;
}

/* Whether the flow list node mixes "1,5" and "1, 5" between its items: probable decimal
 * commas. */
static bool mixes_commas(const checker *c, int node) {
    bool tight = false, spaced = false;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        tight = tight || node_at(c, item)->comma == LESSON_COMMA_TIGHT;
        spaced = spaced || node_at(c, item)->comma == LESSON_COMMA_SPACED;
    }
    return tight && spaced;
}

/* The list as it was probably meant, each tight comma a decimal point: "[1.5, 0.5]"; false when
 * that reading is not one number per group either ("1,5,2"). out holds LESSON_ESCAPED_MAX. */
static bool decimal_reading(const checker *c, int node, char *out) {
    char raw[LESSON_ESCAPED_MAX] = "[";
    int in_group = 0;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        bool tight = node_at(c, item)->comma == LESSON_COMMA_TIGHT;
        in_group = tight ? in_group + 1 : 1;
        if (in_group > 2 || node_at(c, item)->kind != LESSON_NODE_SCALAR) return false;
        size_t used = strlen(raw);
        snprintf(raw + used, sizeof raw - used, "%s%s",
                 item == node + 1 ? "" : tight ? "." : ", ", lesson_node_text(c->t, item));
    }
    size_t used = strlen(raw);
    snprintf(raw + used, sizeof raw - used, "]");
    lesson_escape(raw, strlen(raw), out);
    return true;
}

/* Reports probable decimal commas in the list node, at its first tight comma. */
static void report_decimal_commas(checker *c, int node, const char *what) {
    int item = node + 1;
    while (node_at(c, item)->comma != LESSON_COMMA_TIGHT) item = lesson_node_next(c->t, item);
    char meant[LESSON_ESCAPED_MAX];
    lesson_diagnostic *d = lesson_report(c->d, node_at(c, item)->line, node_at(c, item)->col - 1,
                                         LESSON_ERROR_DECIMAL_COMMAS, what);
    if (decimal_reading(c, node, meant)) lesson_hint(d, LESSON_HINT_DECIMAL_POINT, meant);
    else lesson_hint(d, LESSON_HINT_SEPARATE_NUMBERS);
}

/* The noun for count things, as a diagnostic writes it after the count: "1 number",
 * "2 numbers". */
static const char *noun(int count, const char *one, const char *many) {
    return count == 1 ? one : many;
}

/* Reads a list of numbers into values (when not NULL). expected < 0 accepts any length; when
 * `most` is not NULL, expected is the length most of the lists that are `most` have, which a
 * hint then says. Returns the length found, or -1 when node is not a usable list. */
static int read_vector(checker *c, int node, int expected, const char *what, const char *most,
                       double *values) {
    if (!expect_kind(c, node, LESSON_NODE_LIST, what, "a list of numbers")) return -1;
    if (mixes_commas(c, node)) {
        report_decimal_commas(c, node, what);
        return -1;
    }
    int count = node_at(c, node)->count;
    const char *numbers = noun(expected, "number", "numbers");
    if (count == 0) {
        lesson_diagnostic *d = REPORT(c, node, EMPTY_LIST, what);
        if (most && expected > 0) lesson_hint(d, LESSON_HINT_MOST_HAVE, most, expected, numbers);
        return 0;
    }
    if (expected >= 0 && count != expected) {
        lesson_diagnostic *d = REPORT(c, node, WRONG_SIZE, what, expected, numbers, count);
        if (most) lesson_hint(d, LESSON_HINT_MOST_HAVE, most, expected, numbers);
        values = NULL;
    }
    int i = 0;
    for (int item = node + 1; item < lesson_node_next(c->t, node);
         item = lesson_node_next(c->t, item), i++)
        read_number(c, item, what, values ? &values[i] : NULL);
    return count;
}

static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The first index of sorted[0 … count-1] whose value is not below value (above, when after). */
static int bound(const int *sorted, int count, int value, bool after) {
    int low = 0, high = count;
    while (low < high) {
        int middle = low + (high - low) / 2;
        if (sorted[middle] < value || (after && sorted[middle] == value)) low = middle + 1;
        else high = middle;
    }
    return low;
}

/* How many of sorted[0 … count-1] equal value: two binary searches, so that 200000 vectors of
 * one length take no quadratic time. */
static int occurrences(const int *sorted, int count, int value) {
    return bound(sorted, count, value, true) - bound(sorted, count, value, false);
}

/* The length most of the lists vectors[0 … count-1] have (of equally common lengths, the first
 * one's, and then *most is false), so that the one odd vector is blamed whichever it is; -1
 * when none is a non-empty list of numbers. */
static int common_length(const checker *c, const int *vectors, int count, bool *most) {
    int *lengths = malloc((size_t)(count > 0 ? count : 1) * sizeof *lengths);
    int *sorted = malloc((size_t)(count > 0 ? count : 1) * sizeof *sorted);
    int n = 0, best = -1, best_count = 0;
    *most = false;
    for (int i = 0; lengths && sorted && i < count; i++) {
        int v = vectors[i];
        bool list = usable(c, v) && node_at(c, v)->kind == LESSON_NODE_LIST
                 && node_at(c, v)->count > 0 && !mixes_commas(c, v);
        lengths[i] = list ? node_at(c, v)->count : -1;
        if (list) sorted[n++] = lengths[i];
    }
    if (lengths && sorted) qsort(sorted, (size_t)n, sizeof *sorted, compare_ints);
    for (int i = 0; lengths && sorted && i < count; i++) {
        int times = lengths[i] < 0 ? 0 : occurrences(sorted, n, lengths[i]);
        if (times > best_count) {
            best = lengths[i];
            best_count = times;
            *most = true;
        } else if (times == best_count && lengths[i] != best) {
            *most = false;
        }
    }
    free(lengths);
    free(sorted);
    return best;
}

/* ---- the words of fixed vocabularies ---- */

/* Index of the scalar node's text in words[], or -1 after reporting. */
static int read_word(checker *c, int node, const char *what, const char *const *words, int count,
                     const char *expected) {
    if (!expect_scalar(c, node, what, expected)) return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(lesson_node_text(c->t, node), words[i]) == 0) return i;
    char text[LESSON_ESCAPED_MAX];
    report_unknown(c, REPORT(c, node, BAD_VALUE, what, expected, shown(c, node, text)), node,
                   words, count, LESSON_HINT_COUNT);
    return -1;
}

static bool read_bool(checker *c, int node, const char *what, bool fallback) {
    static const char *const words[] = { "false", "true", "False", "True", "FALSE", "TRUE" };
    if (node < 0) return fallback;
    int i = read_word(c, node, what, words, 6, "true or false");
    return i < 0 ? fallback : i % 2 == 1;
}

/* ---- tokens ---- */

static bool add_token(checker *c, token_list *list, const char *text, size_t length, int node,
                      const char *what) {
    if (length == 0) {
        REPORT(c, node, EMPTY_TOKEN, what);
        return false;
    }
    if (length > LESSON_MAX_TOKEN_BYTES) {
        REPORT(c, node, TOKEN_TOO_LONG, length);
        return false;
    }
    char *copy = malloc(length + 1);
    if (!copy) return false;
    memcpy(copy, text, length);
    copy[length] = '\0';
    list->text[list->count] = copy;
    list->nodes[list->count++] = node;
    return true;
}

/* What separates the words of a one-string sentence: spaces, and tabs or line breaks, which a
 * block scalar may bring in. */
#define WORD_BREAKS " \t\r\n"

static int count_words(const char *text) {
    int words = 0;
    for (const char *p = text; *p; p++)
        if (!strchr(WORD_BREAKS, *p) && (p == text || strchr(WORD_BREAKS, p[-1]))) words++;
    return words;
}

static bool split_sentence(checker *c, int node, token_list *list, const char *what) {
    const char *p = lesson_node_text(c->t, node);
    bool ok = true;
    while (*p) {
        p += strspn(p, WORD_BREAKS);
        size_t length = strcspn(p, WORD_BREAKS);
        if (length > 0) ok = add_token(c, list, p, length, node, what) && ok;
        p += length;
    }
    return ok;
}

static bool read_token_items(checker *c, int node, token_list *list, const char *what) {
    bool ok = true;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        if (!usable(c, item)) { ok = false; continue; }
        if (node_at(c, item)->kind != LESSON_NODE_SCALAR) {
            REPORT(c, item, WRONG_TYPE, "a token", "text", lesson_node_describe(c->t, item));
            ok = false;
            continue;
        }
        /* A YAML null (nothing, or ~) is no word at all: report it as an empty token. */
        size_t length = lesson_node_is_null(c->t, item) ? 0 : node_at(c, item)->length;
        ok = add_token(c, list, lesson_node_text(c->t, item), length, item, what) && ok;
    }
    return ok;
}

/* Reads `tokens` or `source`: a list, or one string split on spaces. */
static void read_tokens(checker *c, int node, token_list *list, const char *what) {
    if (!usable(c, node)) return;
    const lesson_node *n = node_at(c, node);
    bool sentence = n->kind == LESSON_NODE_SCALAR && !lesson_node_is_null(c->t, node);
    if (!sentence && n->kind != LESSON_NODE_LIST) {
        REPORT(c, node, WRONG_TYPE, what, "a list of tokens or one sentence",
               lesson_node_describe(c->t, node));
        return;
    }
    int count = sentence ? count_words(lesson_node_text(c->t, node)) : n->count;
    if (count == 0) {
        REPORT(c, node, EMPTY_LIST, what);
        return;
    }
    if (count > LESSON_MAX_TOKENS) {
        const char *name = list == &c->source ? "the number of source tokens"
                                              : "the number of tokens";
        REPORT(c, node, OVER_LIMIT, name, (unsigned long long)count,
               (unsigned long long)LESSON_MAX_TOKENS);
        return;
    }
    list->text = calloc((size_t)count, sizeof *list->text);
    list->nodes = calloc((size_t)count, sizeof *list->nodes);
    if (!list->text || !list->nodes) return;
    bool ok = sentence ? split_sentence(c, node, list, what)
                       : read_token_items(c, node, list, what);
    list->valid = ok && lesson_index_build(&list->first, (const char *const *)list->text,
                                           list->count);
}

static void token_list_free(token_list *list) {
    for (int i = 0; list->text && i < list->count; i++) free(list->text[i]);
    free(list->text);
    free(list->nodes);
    lesson_index_free(&list->first);
}

/* Numbers every distinct token, tokens first and then source, in order of first appearance. */
static bool index_distinct(checker *c) {
    int n = c->tokens.count, m = c->source.valid ? c->source.count : 0;
    /* calloc: with malloc, GCC 12 warns (wrongly) that the index may read unset entries */
    c->all_tokens = calloc((size_t)(n + m), sizeof *c->all_tokens);
    c->distinct_of = malloc((size_t)(n + m) * sizeof *c->distinct_of);
    c->distinct_text = malloc((size_t)(n + m) * sizeof *c->distinct_text);
    c->distinct_node = malloc((size_t)(n + m) * sizeof *c->distinct_node);
    c->distinct_vector = malloc((size_t)(n + m) * sizeof *c->distinct_vector);
    if (!c->all_tokens || !c->distinct_of || !c->distinct_text || !c->distinct_node
        || !c->distinct_vector)
        return false;
    for (int i = 0; i < n + m; i++)
        c->all_tokens[i] = i < n ? c->tokens.text[i] : c->source.text[i - n];
    if (!lesson_index_build(&c->distinct, c->all_tokens, n + m)) return false;
    for (int i = 0; i < n + m; i++) {
        int first = lesson_index_first(&c->distinct, c->all_tokens[i]);
        if (first < i) {
            c->distinct_of[i] = c->distinct_of[first];
            continue;
        }
        int id = c->distinct_of[i] = c->n_distinct++;
        c->distinct_text[id] = c->all_tokens[i];
        c->distinct_node[id] = i < n ? c->tokens.nodes[i] : c->source.nodes[i - n];
        c->distinct_vector[id] = -1;
    }
    return true;
}

/* The distinct number of a token, or -1 when it is not in the lesson. */
static int distinct_id(const checker *c, const char *token) {
    int first = lesson_index_first(&c->distinct, token);
    return first < 0 ? -1 : c->distinct_of[first];
}

/* ---- embeddings and matrices ---- */

/* Reads {random: normal|xavier|numpy, seed: N, scale: S}. numpy's legacy seeds are 32-bit. */
static bool read_random(checker *c, int map, matrix_spec *spec) {
    static const char *const kinds[] = { "normal", "xavier", "numpy" };
    int keys[RANDOM_COUNT];
    read_keys(c, map, random_keys, RANDOM_COUNT, keys);
    *spec = (matrix_spec){ .form = FORM_RANDOM, .node = map, .scale = 1.0 };
    bool ok = keys[RANDOM_RANDOM] >= 0;
    require(c, map, keys[RANDOM_RANDOM], "random");
    int kind = keys[RANDOM_RANDOM] < 0 ? -1
             : read_word(c, keys[RANDOM_RANDOM], "random", kinds, 3, "normal, xavier or numpy");
    ok = kind >= 0 && ok;
    spec->kind = kind == 1 ? RANDOM_XAVIER : RANDOM_NORMAL;
    if (kind == 2) spec->form = FORM_NUMPY;
    if (keys[RANDOM_SEED] >= 0)
        ok = read_integer(c, keys[RANDOM_SEED], "seed", 0,
                          spec->form == FORM_NUMPY ? UINT32_MAX : UINT64_MAX, &spec->seed) && ok;
    if (keys[RANDOM_SCALE] >= 0)
        ok = read_number(c, keys[RANDOM_SCALE], "scale", &spec->scale) && ok;
    return ok;
}

/* Whether a mapping has the key `word` (with a plain word as value unless any_value): the random
 * form (`random`) or the file form (`file`). Among embeddings a token called "random" or "file"
 * has a list as value; a matrix has no tokens, so there any value is the form's, to report. */
static bool has_form_key(const checker *c, int map, const char *word, bool any_value) {
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        if (node_at(c, key)->kind == LESSON_NODE_SCALAR
            && strcmp(lesson_node_text(c->t, key), word) == 0)
            return any_value || node_at(c, value)->kind == LESSON_NODE_SCALAR;
        key = lesson_node_next(c->t, value);
    }
    return false;
}

static bool is_random_form(const checker *c, int map) {
    return has_form_key(c, map, "random", false);
}

/* Reads {file: NAME.npy|NAME.csv} for `what` into spec, checking the file's shape against
 * rows × cols (either may be -1: not known yet, then taken from the file). A bias is one row
 * of cols (rows = 1), which a file may hold as 1-D (cols,), one row, or one column (cols, 1),
 * as np.savetxt writes a 1-D array. */
static bool read_file_form(checker *c, int map, const char *what, int rows, int cols,
                           const char *needs, bool bias, matrix_spec *spec) {
    static const char *const keys_here[] = { "file" };
    int name_node = -1;
    read_keys(c, map, keys_here, 1, &name_node);
    *spec = (matrix_spec){ .form = FORM_FILE, .node = map, .scale = 1.0 };
    char *name = read_text(c, name_node, "file");
    if (!name) return false;
    char problem[512], name_shown[LESSON_ESCAPED_MAX];
    lesson_file_matrix m;
    char **opened = &c->data_files[c->n_data_files];
    assert(c->n_data_files < (int)(sizeof c->data_files / sizeof c->data_files[0]));
    lesson_file_status status = lesson_file_read(c->d->path ? c->d->path : "", name,
                                                 c->allow_paths, &m, opened, problem,
                                                 sizeof problem);
    if (status == LESSON_FILE_OK) c->n_data_files++;
    lesson_escape(name, strlen(name), name_shown);
    free(name);
    if (status != LESSON_FILE_OK) {
        lesson_diagnostic *item = REPORT(c, name_node, DATA_FILE, what, name_shown, problem);
        if (status == LESSON_FILE_REFUSED) lesson_hint(item, LESSON_HINT_ALLOW_PATHS);
        return false;
    }
    if (bias && m.cols == 1 && m.rows == cols) {  /* a column: the same numbers as one row */
        m.cols = m.rows;
        m.rows = 1;
    }
    if ((rows >= 0 && m.rows != rows) || (cols >= 0 && m.cols != cols)) {
        char has[64], want[64];
        lesson_file_shape(&m, has, sizeof has);
        if (bias)
            snprintf(want, sizeof want, "(%d,)", cols);
        else
            snprintf(want, sizeof want, "(%d, %d)", rows >= 0 ? rows : m.rows,
                     cols >= 0 ? cols : m.cols);
        char need[160];
        snprintf(need, sizeof need, "%s %s", want, needs);
        REPORT(c, name_node, FILE_SHAPE, what, name_shown, has, what, need);
        free(m.values);
        return false;
    }
    spec->values = m.values;
    spec->rows = m.rows;
    spec->cols = m.cols;
    return true;
}

/* The rows of embeddings given as a whole matrix (a file, or numpy's draws): one per token, then
 * one per source token. */
static int position_rows(const checker *c) {
    return c->tokens.count + (c->keys[TOP_SOURCE] >= 0 ? c->source.count : 0);
}

static void embedding_label(const checker *c, int key, char *label, size_t size) {
    char text[LESSON_ESCAPED_MAX];
    snprintf(label, size, "the embedding of '%s'", shown(c, key, text));
}

/* The nodes of the children of node (every value, for a mapping), in a new array; NULL when
 * out of memory. */
static int *children(const checker *c, int node, int *count) {
    bool map = node_at(c, node)->kind == LESSON_NODE_MAP;
    int n = node_at(c, node)->count, *nodes = malloc((size_t)(n > 0 ? n : 1) * sizeof *nodes);
    *count = 0;
    int i = 0;
    LESSON_FOR_EACH_CHILD(c->t, node, child)
        if (nodes && (!map || i++ % 2 == 1)) nodes[(*count)++] = child;
    return nodes;
}

/* Reads the token → vector map. Without d_model given, d_model is the length most vectors
 * have, so that a short vector is blamed itself even when it comes first. */
static void read_embedding_map(checker *c, int map) {
    c->embeddings.form = FORM_LIST;
    bool most = false;
    if (c->d_model < 0) {
        int count = 0, *vectors = children(c, map, &count);
        if (vectors) c->d_model = common_length(c, vectors, count, &most);
        free(vectors);
    }
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        char label[LESSON_ESCAPED_MAX + 32];
        embedding_label(c, key, label, sizeof label);
        read_vector(c, value, c->d_model, label, most ? "embeddings" : NULL, NULL);
        int id = node_at(c, key)->kind == LESSON_NODE_SCALAR
               ? distinct_id(c, lesson_node_text(c->t, key)) : -1;
        if (id >= 0 && c->distinct_vector[id] < 0) c->distinct_vector[id] = value;
        key = lesson_node_next(c->t, value);
    }
    for (int id = 0; id < c->n_distinct; id++) {
        char text[LESSON_ESCAPED_MAX];
        const char *token = c->distinct_text[id];
        if (c->distinct_vector[id] < 0)
            REPORT(c, c->distinct_node[id], NO_EMBEDDING,
                   lesson_escape(token, strlen(token), text));
    }
}

static void read_embeddings(checker *c, int node) {
    if (!usable(c, node)) return;
    if (node_at(c, node)->kind != LESSON_NODE_MAP) {
        REPORT(c, node, WRONG_TYPE, "embeddings",
               "a mapping from each token to its vector, {random: ...} or {file: ...}",
               lesson_node_describe(c->t, node));
        return;
    }
    if (has_form_key(c, node, "file", false)) {
        const char *needs = c->keys[TOP_SOURCE] >= 0
            ? "(one row per token, then one per source token; d_model columns)"
            : "(one row per token; d_model columns)";
        if (read_file_form(c, node, "embeddings", position_rows(c), c->d_model, needs, false,
                           &c->embeddings) && c->d_model < 0)
            c->d_model = c->embeddings.cols;
        return;
    }
    if (!is_random_form(c, node)) {
        read_embedding_map(c, node);
        return;
    }
    if (read_random(c, node, &c->embeddings) && c->d_model < 0
        && c->keys[TOP_D_MODEL] < 0)
        REPORT(c, node, NEEDS_D_MODEL, NULL);
}

/* Reads W_Q, W_K, W_V or W_O: identity, a list of rows, or the random form. */
/* Columns of W_K and W_V, K and V: kv_heads · d_k with grouped-query attention, d_model
 * otherwise; -1 while unknown. */
static int kv_columns(const checker *c) {
    if (c->kv_heads == 0 || c->d_model < 1) return c->d_model;
    if (c->kv_heads < 0 || c->heads < 1) return -1;
    return c->d_model / c->heads * c->kv_heads;
}

/* A matrix of d_model rows and `cols` columns (-1: unknown). */
static void read_matrix(checker *c, int node, const char *name, int cols, matrix_spec *spec) {
    static const char *const words[] = { "identity" };
    *spec = (matrix_spec){ .form = FORM_IDENTITY, .node = node };
    if (!usable(c, node)) return;
    const char *expected = "identity, a list of rows, {random: ...} or {file: ...}";
    switch (node_at(c, node)->kind) {
    case LESSON_NODE_MAP:
        if (has_form_key(c, node, "file", true))
            read_file_form(c, node, name, c->d_model, cols,
                           cols == c->d_model ? "(d_model × d_model)"
                                              : "(d_model × kv_heads·d_k)", false, spec);
        else
            read_random(c, node, spec);
        return;
    case LESSON_NODE_SCALAR:
        read_word(c, node, name, words, 1, expected);
        return;
    default:
        break;
    }
    spec->form = FORM_LIST;
    int rows = node_at(c, node)->count;
    if (rows > 0 && node_at(c, node + 1)->kind == LESSON_NODE_SCALAR) {
        /* A flat list of numbers: one message rather than one per number. */
        REPORT(c, node, WRONG_TYPE, name, "a list of rows (each a list of numbers)",
               "a flat list");
        return;
    }
    if (c->d_model >= 0 && rows != c->d_model)
        REPORT(c, node, WRONG_SIZE, name, c->d_model,
               noun(c->d_model, "row (d_model)", "rows (d_model)"), rows);
    char label[64];
    snprintf(label, sizeof label, "a row of %s", name);
    /* Without d_model, rows must at least agree with one another: the odd one is blamed. */
    int width = c->d_model >= 0 ? cols : -1, count = 0, *vectors = NULL;
    bool most = false;
    if (width < 0 && (vectors = children(c, node, &count)) != NULL)
        width = common_length(c, vectors, count, &most);
    free(vectors);
    LESSON_FOR_EACH_CHILD(c->t, node, row)
        read_vector(c, row, width, label, most ? "rows" : NULL, NULL);
}

/* ---- biases ---- */

static const char *const bias_names[4] = { "b_Q", "b_K", "b_V", "b_O" };
static const char *const biased_stages[4] = { "Q", "K", "V", "output" };

/* Numbers in bias i (b_Q, b_K, b_V, b_O): the columns of its stage (-1 while unknown). */
static int bias_length(const checker *c, int i) {
    return i == 1 || i == 2 ? kv_columns(c) : c->d_model;
}

/* Why bias i has bias_length numbers, for a message: "d_model = 4" or "kv_heads × d_k =
 * 1 × 2 = 2". */
static void bias_why(const checker *c, int i, char *out, size_t size) {
    int length = bias_length(c, i);
    if (length == c->d_model)
        snprintf(out, size, "d_model = %d", length);
    else
        snprintf(out, size, "kv_heads × d_k = %d × %d = %d", c->kv_heads, c->d_model / c->heads,
                 length);
}

/* The hint of a bias of the wrong length: what it is added to and why it has that many. */
static void hint_bias_length(const checker *c, lesson_diagnostic *item, int i) {
    char why[96];
    bias_why(c, i, why, sizeof why);
    lesson_hint(item, LESSON_HINT_BIAS_LENGTH, bias_names[i], biased_stages[i], why);
}

/* Reads b_Q, b_K, b_V or b_O (i = 0 … 3): a list of numbers, {random: ...} or {file: ...};
 * absent, the stage has no bias (nothing is added, not a zero). */
static void read_bias_vector(checker *c, int i) {
    int node = c->keys[TOP_B_Q + i], length = bias_length(c, i);
    matrix_spec *spec = &c->b[i];
    const char *name = bias_names[i];
    *spec = (matrix_spec){ .form = FORM_VECTOR, .node = node, .rows = 1, .cols = length };
    if (!usable(c, node)) return;
    const char *expected = "a list of numbers (one per column), {random: ...} or {file: ...}";
    if (node_at(c, node)->kind == LESSON_NODE_MAP) {
        char needs[160], why[96];
        bias_why(c, i, why, sizeof why);
        snprintf(needs, sizeof needs, "(one number per column of %s: %s)", biased_stages[i],
                 why);
        if (has_form_key(c, node, "file", true))
            read_file_form(c, node, name, 1, length, needs, true, spec);
        else
            read_random(c, node, spec);
        return;
    }
    if (node_at(c, node)->kind != LESSON_NODE_LIST
        || (node_at(c, node)->count > 0 && node_at(c, node + 1)->kind != LESSON_NODE_SCALAR)) {
        REPORT(c, node, WRONG_TYPE, name, expected,
               node_at(c, node)->kind == LESSON_NODE_LIST ? "a list of rows"
                                                          : lesson_node_describe(c->t, node));
        return;
    }
    int count = node_at(c, node)->count;
    if (length >= 0 && count > 0 && count != length) {
        hint_bias_length(c, REPORT(c, node, WRONG_SIZE, name, length, "numbers", count), i);
        return;
    }
    read_vector(c, node, -1, name, NULL, NULL);
}

/* ---- numpy's draws ---- */

static matrix_spec *drawn_spec(checker *c, int i) {
    return i == DRAWN_EMBEDDINGS ? &c->embeddings
         : i < DRAWN_FIRST_BIAS ? &c->W[i - 1] : &c->b[i - DRAWN_FIRST_BIAS];
}

/* The shape numpy draws matrix or bias i in: randn(rows, cols), a bias as randn(cols), which
 * draws the same numbers as randn(1, cols). */
static void drawn_shape(const checker *c, int i, int *rows, int *cols) {
    if (i == DRAWN_EMBEDDINGS) {
        *rows = position_rows(c);
        *cols = c->d_model;
    } else if (i < DRAWN_FIRST_BIAS) {
        *rows = c->d_model;
        *cols = i == 2 || i == 3 ? kv_columns(c) : c->d_model;
    } else {
        *rows = 1;
        *cols = bias_length(c, i - DRAWN_FIRST_BIAS);
    }
}

/* Reads draw_order: into order (the indices of drawn_names), returning how many; without it,
 * the default order. It must name each matrix drawn with `random: numpy` once, and no other. */
static int read_draw_order(checker *c, int node, int *order) {
    if (node < 0) {
        for (int i = 0; i < DRAWN_COUNT; i++) order[i] = i;
        return DRAWN_COUNT;
    }
    if (!expect_kind(c, node, LESSON_NODE_LIST, "draw_order", "a list of matrix names"))
        return 0;
    int count = 0;
    bool listed[DRAWN_COUNT] = { false };
    char message[128];
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        int i = read_word(c, item, "a name in draw_order", drawn_names, DRAWN_COUNT,
                          "embeddings, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V or b_O");
        if (i < 0) continue;
        if (listed[i] || drawn_spec(c, i)->form != FORM_NUMPY) {
            snprintf(message, sizeof message, listed[i] ? "'%s' is listed twice"
                     : "'%s' is not drawn with 'random: numpy'", drawn_names[i]);
            REPORT(c, item, DRAW_ORDER, message);
            continue;
        }
        listed[i] = true;
        order[count++] = i;
    }
    for (int i = 0; i < DRAWN_COUNT; i++) {
        if (listed[i] || drawn_spec(c, i)->form != FORM_NUMPY) continue;
        snprintf(message, sizeof message, "'%s' is drawn with 'random: numpy' but not listed",
                 drawn_names[i]);
        REPORT(c, node, DRAW_ORDER, message);
    }
    return count;
}

/* Draws every `random: numpy` matrix in the draw order, as one numpy program that seeds once
 * and calls randn for each in turn would: matrices with the same seed continue one stream. */
static void draw_numpy(checker *c, const int *order, int count) {
    numpy_random_state *streams = malloc(DRAWN_COUNT * sizeof *streams);
    uint64_t seeds[DRAWN_COUNT];
    int n_streams = 0;
    for (int k = 0; streams && k < count; k++) {
        matrix_spec *spec = drawn_spec(c, order[k]);
        if (spec->form != FORM_NUMPY) continue;
        int s = 0;
        while (s < n_streams && seeds[s] != spec->seed) s++;
        if (s == n_streams) {
            seeds[n_streams++] = spec->seed;
            numpy_random_seed(&streams[s], (uint32_t)spec->seed);
        }
        drawn_shape(c, order[k], &spec->rows, &spec->cols);
        size_t values = (size_t)spec->rows * (size_t)spec->cols;
        spec->values = malloc(values * sizeof *spec->values);
        if (!spec->values) break;
        numpy_random_fill(&streams[s], spec->scale, spec->values, values);
    }
    bool drawn = streams != NULL;
    for (int k = 0; k < count; k++)
        drawn = drawn && (drawn_spec(c, order[k])->form != FORM_NUMPY
                          || drawn_spec(c, order[k])->values);
    if (!drawn) REPORT(c, 0, NO_MEMORY, NULL);
    free(streams);
}

/* ---- mask ---- */

static void check_mask_rows(checker *c, int node, int n, int m) {
    char label[] = "a mask row";
    int i = 0;
    for (int row = node + 1; row < lesson_node_next(c->t, node);
         row = lesson_node_next(c->t, row), i++) {
        if (!expect_kind(c, row, LESSON_NODE_LIST, label, "a list of 0 and 1")) continue;
        if (node_at(c, row)->count != m) {
            REPORT(c, row, WRONG_SIZE, label, m,
                   noun(m, "cell (one per key)", "cells (one per key)"), node_at(c, row)->count);
            continue;
        }
        bool sees = false, valid = true;
        LESSON_FOR_EACH_CHILD(c->t, row, cell) {
            static const char *const bits[] = { "0", "1" };
            int bit = read_word(c, cell, "a mask cell", bits, 2, "0 or 1");
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
    read_keys(c, map, mask_keys, MASK_KEY_COUNT, keys);
    require(c, map, keys[MASK_KEY_WINDOW], "window");
    if (keys[MASK_KEY_WINDOW] < 0
        || !read_integer(c, keys[MASK_KEY_WINDOW], "window", 1, LESSON_MAX_TOKENS, &window))
        return;
    c->mask = MASK_WINDOW;
    c->window = (int)window;
    if (c->keys[TOP_SOURCE] >= 0) REPORT(c, map, SELF_ONLY, "a sliding window");
}

static void read_mask(checker *c, int node) {
    static const char *const words[] = { "none", "causal" };
    c->mask = MASK_NONE;
    c->mask_node = node;
    if (!usable(c, node)) return;
    if (node_at(c, node)->kind == LESSON_NODE_MAP) {
        read_window(c, node);
        return;
    }
    if (node_at(c, node)->kind == LESSON_NODE_LIST) {
        c->mask = MASK_EXPLICIT;
        bool cross = c->keys[TOP_SOURCE] >= 0;
        if (!c->tokens.valid || (cross && !c->source.valid)) return;
        int n = c->tokens.count, m = cross ? c->source.count : n;
        if (node_at(c, node)->count != n)
            REPORT(c, node, WRONG_SIZE, "mask", n,
                   noun(n, "row (one per token)", "rows (one per token)"), node_at(c, node)->count);
        else
            check_mask_rows(c, node, n, m);
        return;
    }
    int word = read_word(c, node, "mask", words, 2,
                         "none, causal, {window: W} or a list of rows");
    if (word == 1) {
        c->mask = MASK_CAUSAL;
        if (c->keys[TOP_SOURCE] >= 0) REPORT(c, node, CAUSAL_CROSS, NULL);
    }
}

/* ---- steps ---- */

/* Labels along an axis: tokens resolve to their first occurrence, and any axis takes a 0-based
 * index. Returns the index, -1 when there is no such label, -2 when the axis is unknown. */
static int resolve_label(const checker *c, stage_axis axis, const char *text) {
    bool cross = c->keys[TOP_SOURCE] >= 0, tokens = axis == AXIS_TOKENS || axis == AXIS_SOURCE;
    const token_list *list = axis == AXIS_SOURCE && cross ? &c->source : &c->tokens;
    int d_k = c->heads > 0 && c->d_model > 0 ? c->d_model / c->heads : -1;
    const token_list *keys = cross ? &c->source : &c->tokens;
    int tiles = c->tile > 0 && keys->valid ? (keys->count + c->tile - 1) / c->tile : -1;
    int count = axis == AXIS_MODEL_DIMS ? c->d_model
              : axis == AXIS_KV_DIMS ? kv_columns(c)
              : axis == AXIS_HEAD_DIMS ? d_k
              : axis == AXIS_TILES ? tiles
              : list->valid ? list->count : -1;
    if (count < 0) return -2;
    if (tokens) {
        int at = lesson_index_first(&list->first, text);
        if (at >= 0) return at;
    }
    uint64_t index = 0;
    return lesson_parse_integer(text, 0, (uint64_t)count - 1, &index) ? (int)index : -1;
}

static int read_focus_part(checker *c, int node, stage_id stage, bool row) {
    const stage_info *info = stage_get(stage);
    const char *what = row ? "a focus row" : "a focus column";
    if (!expect_scalar(c, node, what, "a token or an index")) return -1;
    stage_axis axis = row ? info->rows : info->cols;
    int at = resolve_label(c, axis, lesson_node_text(c->t, node));
    char text[LESSON_ESCAPED_MAX];
    if (at != -1) return at;
    lesson_diagnostic *item = REPORT(c, node, BAD_FOCUS, row ? "row" : "column",
                                     shown(c, node, text), row ? "row" : "column", info->name);
    const token_list *list = axis == AXIS_SOURCE && c->keys[TOP_SOURCE] >= 0 ? &c->source
                                                                             : &c->tokens;
    if (axis == AXIS_TOKENS || axis == AXIS_SOURCE)
        report_unknown(c, item, node, (const char *const *)list->text, list->count,
                       LESSON_HINT_COUNT);
    return at;
}

static void read_focus(checker *c, int node, lesson_step *step) {
    if (!expect_kind(c, node, LESSON_NODE_LIST, "focus", "a list [row, column]")) return;
    if (node_at(c, node)->count != 2) {
        REPORT(c, node, WRONG_SIZE, "focus", 2, "items [row, column]", node_at(c, node)->count);
        return;
    }
    if (step->stage == STAGE_COUNT) return;
    int row = node + 1, col = lesson_node_next(c->t, row);
    step->focus_row = read_focus_part(c, row, step->stage, true);
    step->focus_col = read_focus_part(c, col, step->stage, false);
}

static stage_id read_stage(checker *c, int node) {
    if (!expect_scalar(c, node, "stage", "a stage name")) return STAGE_COUNT;
    const char *name = lesson_node_text(c->t, node);
    stage_id stage = stage_find(name);
    if (stage == STAGE_SOURCE_INPUT && c->keys[TOP_SOURCE] < 0) {
        REPORT(c, node, NO_SOURCE_STAGE, NULL);
        return STAGE_COUNT;
    }
    const char *needs = (stage == STAGE_Q_ROTATED || stage == STAGE_K_ROTATED) && !c->rope
                        ? "positional: rope" : stage == STAGE_BIASED && !c->alibi
                        ? "bias: alibi"
                        : (stage == STAGE_RUNNING_MAX || stage == STAGE_RUNNING_SUM)
                          && !c->online_softmax ? "softmax: online" : NULL;
    if (needs) {
        REPORT(c, node, STAGE_NEEDS, name, needs);
        return STAGE_COUNT;
    }
    if (stage != STAGE_COUNT) return stage;
    const char *names[STAGE_COUNT];
    char text[LESSON_ESCAPED_MAX];
    for (int i = 0; i < STAGE_COUNT; i++) names[i] = stage_get((stage_id)i)->name;
    report_unknown(c, REPORT(c, node, UNKNOWN_STAGE, shown(c, node, text)), node, names,
                   STAGE_COUNT, LESSON_HINT_STAGES_ARE);
    return STAGE_COUNT;
}

/* A head names one of a per-head stage's matrices; on a stage that is one matrix for all heads
 * it would be shown in one view and dropped in another, so it is refused. */
static void read_head(checker *c, int node, lesson_step *step) {
    uint64_t head = 0;
    if (!read_integer(c, node, "head", 1, LESSON_MAX_HEADS, &head)) return;
    step->head = (int)head;
    if (c->heads > 0 && step->head > c->heads)
        REPORT(c, node, NO_SUCH_HEAD, step->head, c->heads);
    if (step->stage == STAGE_COUNT || stage_get(step->stage)->per_head) return;
    char list[256] = "";
    for (int s = 0; s < STAGE_COUNT; s++)
        if (stage_get((stage_id)s)->per_head)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                     stage_get((stage_id)s)->name);
    REPORT(c, node, HEAD_NOT_PER_HEAD, stage_get(step->stage)->name, list);
    step->head = 0;
}

/* ---- text with live numbers, and claims ---- */

static lesson_place place_of(const checker *c, int node) {
    return (lesson_place){ node_at(c, node)->line, node_at(c, node)->col };
}

static size_t offset_of(const checker *c, int node) {
    return lesson_position_offset(c->data, c->size, node_at(c, node)->line, node_at(c, node)->col);
}

/* Where each placeholder of a text is written: found as written in the file between the text's
 * value and the next node; a placeholder the file writes otherwise (folded across lines, or
 * with escapes in a quoted string) is placed at the value itself. */
static void read_written(checker *c, int node, lesson_written *w) {
    w->at = place_of(c, node);
    const char *text = lesson_node_text(c->t, node);
    size_t from = offset_of(c, node);
    size_t bound = node + 1 < c->t->n_nodes ? offset_of(c, node + 1) : c->size;
    size_t open = 0, length = 0, count = 0;
    for (size_t at = 0; claim_placeholder_find(text, at, &open, &length); at = open + length)
        count++;
    if (count == 0 || !(w->marks = calloc(count, sizeof *w->marks))) return;
    for (size_t at = 0; claim_placeholder_find(text, at, &open, &length); at = open + length) {
        lesson_place *mark = &w->marks[w->count++];
        *mark = w->at;
        for (size_t i = from; i + length <= bound; i++)
            if (memcmp(c->data + i, text + open, length) == 0) {
                lesson_offset_position(c->data, c->size, i, &mark->line, &mark->col);
                from = i + length;
                break;
            }
    }
}

static char *read_written_text(checker *c, int node, const char *what, lesson_written *w) {
    char *text = read_text(c, node, what);
    if (text) read_written(c, node, w);
    return text;
}

static void add_claim(checker *c, int node, lesson_step *step) {
    char *text = read_text(c, node, "a claim");
    if (!text) return;
    step->expect[step->n_expect++] = (lesson_claim){ text, place_of(c, node) };
}

/* expect: one claim, or a list of them. */
static void read_expect(checker *c, int node, lesson_step *step) {
    if (!usable(c, node)) return;
    bool list = node_at(c, node)->kind == LESSON_NODE_LIST;
    int count = list ? node_at(c, node)->count : 1;
    if (list && count == 0) {
        REPORT(c, node, EMPTY_LIST, "expect");
        return;
    }
    step->expect = calloc((size_t)count, sizeof *step->expect);
    if (!step->expect) return;
    if (!list) {
        add_claim(c, node, step);
        return;
    }
    LESSON_FOR_EACH_CHILD(c->t, node, item)
        add_claim(c, item, step);
}

/* ---- questions ---- */

static void read_choices(checker *c, int node, lesson_step *step) {
    if (!expect_kind(c, node, LESSON_NODE_LIST, "choices", "a list of answers")) return;
    if (node_at(c, node)->count == 0) {
        REPORT(c, node, EMPTY_LIST, "choices");
        return;
    }
    step->choices = calloc((size_t)node_at(c, node)->count, sizeof *step->choices);
    if (!step->choices) return;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        char *choice = read_text(c, item, "a choice");
        if (choice) step->choices[step->n_choices++] = choice;
    }
}

static void read_answer(checker *c, int node, bool with_choices, lesson_step *step) {
    if (with_choices && !step->choices) return;  /* the choices themselves were wrong */
    step->answer_at = place_of(c, node);
    if (node_at(c, node)->kind == LESSON_NODE_SCALAR) {
        step->answer_text = strdup(lesson_node_text(c->t, node));
        /* auto: lesson_check takes it from the trace (unless a choice is called "auto") */
        step->answer_auto = strcmp(step->answer_text, "auto") == 0;
        for (int i = 0; step->answer_auto && i < step->n_choices; i++)
            step->answer_auto = strcmp(step->choices[i], "auto") != 0;
        if (step->answer_auto) return;
    }
    if (with_choices) {
        if (!expect_scalar(c, node, "answer", "one of the choices")) return;
        for (int i = 0; i < step->n_choices && step->answer_choice < 0; i++)
            if (strcmp(step->choices[i], lesson_node_text(c->t, node)) == 0)
                step->answer_choice = i;
        char text[LESSON_ESCAPED_MAX];
        if (step->answer_choice < 0) REPORT(c, node, NOT_A_CHOICE, shown(c, node, text));
        return;
    }
    read_number(c, node, "answer", &step->answer);
}

/* ask, choices, answer and tolerance: a question asked before the step's stage is shown. */
static void read_question(checker *c, const int *keys, lesson_step *step) {
    step->ask = read_written_text(c, keys[STEP_ASK], "ask", &step->ask_written);
    if (keys[STEP_ASK] >= 0) step->ask_at = place_of(c, keys[STEP_ASK] - 1);
    if (keys[STEP_CHOICES] >= 0) read_choices(c, keys[STEP_CHOICES], step);
    if (keys[STEP_ANSWER] >= 0) read_answer(c, keys[STEP_ANSWER], keys[STEP_CHOICES] >= 0, step);
    if (keys[STEP_ASK] < 0) {
        int parts[] = { STEP_CHOICES, STEP_ANSWER, STEP_TOLERANCE };
        for (int i = 0; i < 3; i++)
            if (keys[parts[i]] >= 0)
                REPORT(c, keys[parts[i]] - 1, NEEDS, step_keys[parts[i]], "'ask'");
        return;
    }
    if (keys[STEP_ANSWER] < 0) REPORT(c, keys[STEP_ASK] - 1, NEEDS, "ask", "'answer'");
    if (keys[STEP_TOLERANCE] < 0) return;
    if (keys[STEP_CHOICES] >= 0) {
        REPORT(c, keys[STEP_TOLERANCE] - 1, NEEDS, "tolerance",
               "a numeric answer, without 'choices'");
    } else if (read_number(c, keys[STEP_TOLERANCE], "tolerance", &step->tolerance)
               && step->tolerance < 0) {
        char text[LESSON_ESCAPED_MAX];
        REPORT(c, keys[STEP_TOLERANCE], BAD_VALUE, "tolerance", "a number of at least 0",
               shown(c, keys[STEP_TOLERANCE], text));
    }
}

/* position: the token a decoding lesson's step shows being generated (a word, its first
 * occurrence, or an index from 0): the step then shows only the rows and columns decoding
 * computes for that token (walk_step_rows), as the decode walk does. */
static void read_position(checker *c, int node, lesson_step *step) {
    if (!expect_scalar(c, node, "position", "a token or an index")) return;
    if (!c->decode) {
        REPORT(c, node - 1, NEEDS, "position", "'decode: true': only a decoding lesson has a "
               "token being generated");
        return;
    }
    if (!c->tokens.valid) return;
    int at = resolve_label(c, AXIS_TOKENS, lesson_node_text(c->t, node));
    if (at >= 0) {
        step->token = at + 1;
        return;
    }
    char text[LESSON_ESCAPED_MAX];
    report_unknown(c, REPORT(c, node, BAD_POSITION, shown(c, node, text), c->tokens.count - 1),
                   node, (const char *const *)c->tokens.text, c->tokens.count, LESSON_HINT_COUNT);
}

/* A focus at a position must be a cell that the step shows (walk_step_rows, walk_step_cols):
 * the token's own row, or a row of the cache; a key column up to the token. */
static void check_focus_shown(checker *c, int node, int position, const lesson_step *step) {
    if (step->token == 0 || step->focus_row < 0 || step->focus_col < 0
        || walk_position_shows(step->stage, step->token - 1, c->tile, step->focus_row,
                               step->focus_col))
        return;
    const stage_info *info = stage_get(step->stage);
    char text[LESSON_ESCAPED_MAX];
    REPORT(c, node, FOCUS_NOT_SHOWN, shown(c, position, text), info->name,
           info->rows == AXIS_SOURCE ? "the cache's rows up to that token" : "only that token's row",
           info->cols == AXIS_SOURCE ? ", and the keys up to it"
           : info->cols == AXIS_TILES ? ", and the tiles of the keys up to it" : "");
}

static void read_step(checker *c, int node, lesson_step *step) {
    *step = (lesson_step){ .stage = STAGE_COUNT, .focus_row = -1, .focus_col = -1,
                           .answer_choice = -1, .tolerance = DEFAULT_TOLERANCE,
                           .line = node_at(c, node)->line };
    if (!expect_kind(c, node, LESSON_NODE_MAP, "a step", "a mapping (stage:, say:, ...)")) return;
    int keys[STEP_COUNT];
    read_keys(c, node, step_keys, STEP_COUNT, keys);
    require(c, node, keys[STEP_STAGE], "stage");
    if (keys[STEP_STAGE] >= 0) step->stage = read_stage(c, keys[STEP_STAGE]);
    if (keys[STEP_HEAD] >= 0) read_head(c, keys[STEP_HEAD], step);
    if (keys[STEP_POSITION] >= 0) read_position(c, keys[STEP_POSITION], step);
    if (keys[STEP_FOCUS] >= 0) read_focus(c, keys[STEP_FOCUS], step);
    if (keys[STEP_FOCUS] >= 0 && keys[STEP_POSITION] >= 0)
        check_focus_shown(c, keys[STEP_FOCUS], keys[STEP_POSITION], step);
    step->say = read_written_text(c, keys[STEP_SAY], "say", &step->say_written);
    read_question(c, keys, step);
    if (keys[STEP_EXPECT] >= 0) read_expect(c, keys[STEP_EXPECT], step);
}

static void read_steps(checker *c, int node) {
    if (node < 0 || !expect_kind(c, node, LESSON_NODE_LIST, "steps", "a list of steps")) return;
    int count = node_at(c, node)->count;
    if (count == 0) return;
    c->steps = calloc((size_t)count, sizeof *c->steps);
    if (!c->steps) return;
    LESSON_FOR_EACH_CHILD(c->t, node, item)
        read_step(c, item, &c->steps[c->n_steps++]);
}

/* ---- the whole lesson ---- */

static void read_sizes(checker *c) {
    uint64_t value = 0;
    if (c->keys[TOP_D_MODEL] >= 0
        && read_integer(c, c->keys[TOP_D_MODEL], "d_model", 1, LESSON_MAX_D_MODEL, &value))
        c->d_model = (int)value;
    c->heads = 1;
    if (c->keys[TOP_HEADS] >= 0)
        c->heads = read_integer(c, c->keys[TOP_HEADS], "heads", 1, LESSON_MAX_HEADS, &value)
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

static void check_heads(checker *c) {
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
static void read_positional(checker *c) {
    static const char *const words[] = { "none", "sinusoidal", "rope" };
    int node = c->keys[TOP_POSITIONAL], base = c->keys[TOP_ROPE_BASE];
    int word = node >= 0 ? read_word(c, node, "positional", words, 3,
                                     "none, sinusoidal or rope") : 0;
    c->positional = word == 1;
    c->rope = word == 2;
    c->rope_base = 10000.0;
    if (base >= 0 && !c->rope) {
        REPORT(c, base - 1, NEEDS, "rope_base", "'positional: rope'");
    } else if (base >= 0 && read_number(c, base, "rope_base", &c->rope_base)
               && !(c->rope_base > 0.0)) {
        char text[LESSON_ESCAPED_MAX];
        REPORT(c, base, BAD_VALUE, "rope_base", "a number greater than 0", shown(c, base, text));
    }
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
static void read_bias(checker *c) {
    static const char *const words[] = { "none", "alibi" };
    int node = c->keys[TOP_BIAS];
    c->alibi = node >= 0 && read_word(c, node, "bias", words, 2, "none or alibi") == 1;
    if (c->alibi && c->keys[TOP_SOURCE] >= 0) REPORT(c, node, SELF_ONLY, "bias: alibi");
}

/* softmax: ordinary or online, and tile: B (keys per tile), which online needs and nothing
 * else takes. */
static void read_softmax(checker *c) {
    static const char *const words[] = { "ordinary", "online" };
    int node = c->keys[TOP_SOFTMAX], tile = c->keys[TOP_TILE];
    c->online_softmax = node >= 0
        && read_word(c, node, "softmax", words, 2, "ordinary or online") == 1;
    c->tile = 0;
    uint64_t value = 0;
    if (tile >= 0 && !c->online_softmax)
        REPORT(c, tile - 1, NEEDS, "tile", "'softmax: online'");
    else if (c->online_softmax && tile < 0)
        REPORT(c, node - 1, NEEDS, "softmax: online", "'tile: B', the keys per tile");
    else if (tile >= 0 && read_integer(c, tile, "tile", 1, LESSON_MAX_TOKENS, &value))
        c->tile = (int)value;
}

/* decode: true (decoding with a KV cache): each new token sees only the tokens before it, so
 * a causal or window mask, in self-attention. */
static void read_decode(checker *c) {
    int node = c->keys[TOP_DECODE];
    c->decode = read_bool(c, node, "decode", false);
    if (!c->decode) return;
    if (c->keys[TOP_SOURCE] >= 0)
        REPORT(c, node, SELF_ONLY, "decode: true");
    else if (c->mask != MASK_CAUSAL && c->mask != MASK_WINDOW)
        REPORT(c, node - 1, NEEDS, "decode: true", "'mask: causal' or 'mask: {window: W}': a "
               "token being generated sees only the tokens before it");
}

/* kv_heads: G key/value heads shared by heads / G query heads each (grouped-query attention;
 * 1 is multi-query). */
static void read_kv_heads(checker *c) {
    int node = c->keys[TOP_KV_HEADS];
    uint64_t value = 0;
    c->kv_heads = 0;
    if (node < 0) return;
    if (!read_integer(c, node, "kv_heads", 1, LESSON_MAX_HEADS, &value)) {
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
static void check_kv_identity(checker *c, int i, const char *name) {
    int cols = kv_columns(c);
    if (c->W[i].form != FORM_IDENTITY || cols < 1 || cols == c->d_model) return;
    int node = c->keys[TOP_W_Q + i] >= 0 ? c->keys[TOP_W_Q + i] : c->keys[TOP_KV_HEADS];
    lesson_hint(REPORT(c, node, IDENTITY_NOT_SQUARE, name, c->kv_heads, cols,
                       noun(cols, "column", "columns"), c->d_model),
                LESSON_HINT_KV_MATRIX, name, c->d_model, noun(c->d_model, "row", "rows"), cols,
                noun(cols, "number", "numbers"));
}

static void check_lesson(checker *c, int root) {
    int *k = c->keys;
    read_keys(c, root, top_keys, TOP_COUNT, k);
    require(c, root, k[TOP_TITLE], "title");
    require(c, root, k[TOP_TOKENS], "tokens");
    require(c, root, k[TOP_EMBEDDINGS], "embeddings");
    if (k[TOP_TITLE] >= 0) expect_scalar(c, k[TOP_TITLE], "title", "text");
    if (k[TOP_ABOUT] >= 0) expect_scalar(c, k[TOP_ABOUT], "about", "text");
    read_tokens(c, k[TOP_TOKENS], &c->tokens, "tokens");
    if (k[TOP_SOURCE] >= 0) read_tokens(c, k[TOP_SOURCE], &c->source, "source");
    read_sizes(c);
    if (c->tokens.valid && (k[TOP_SOURCE] < 0 || c->source.valid) && !index_distinct(c)) return;
    if (k[TOP_EMBEDDINGS] >= 0) read_embeddings(c, k[TOP_EMBEDDINGS]);
    check_heads(c);
    const char *names[] = { "W_Q", "W_K", "W_V", "W_O" };
    read_kv_heads(c);
    for (int i = 0; i < 4; i++)
        read_matrix(c, k[TOP_W_Q + i], names[i], i == 1 || i == 2 ? kv_columns(c) : c->d_model,
                    &c->W[i]);
    check_kv_identity(c, 1, "W_K");
    check_kv_identity(c, 2, "W_V");
    for (int i = 0; i < 4; i++)
        read_bias_vector(c, i);
    read_mask(c, k[TOP_MASK]);
    read_positional(c);
    read_bias(c);
    read_softmax(c);
    read_decode(c);
    c->scale = read_bool(c, k[TOP_SCALE], "scale", true);
    read_steps(c, k[TOP_STEPS]);
    int order[DRAWN_COUNT], drawn = read_draw_order(c, k[TOP_DRAW_ORDER], order);
    if (!failed(c) && c->d_model > 0 && c->tokens.valid && !c->structure_only)
        draw_numpy(c, order, drawn);
}

/* ---- building a valid lesson ---- */

static void fill_matrix(checker *c, const matrix_spec *spec, int rows, int cols, double *values) {
    size_t count = (size_t)rows * (size_t)cols;
    if (spec->form == FORM_FILE || spec->form == FORM_NUMPY) {
        assert(spec->values && (size_t)spec->rows * (size_t)spec->cols == count);
        memcpy(values, spec->values, count * sizeof *values);
    } else if (spec->form == FORM_RANDOM) {
        random_state state;
        random_seed(&state, spec->seed);
        /* xavier's a = √(3 / d_model) for every matrix, as lessons/README.md defines it */
        random_fill(&state, spec->kind, 2 * c->d_model, spec->scale, values, count);
    } else if (spec->form == FORM_VECTOR) {
        read_vector(c, spec->node, cols, "", NULL, values);
    } else if (spec->form == FORM_LIST) {
        int r = 0;
        for (int row = spec->node + 1; row < lesson_node_next(c->t, spec->node);
             row = lesson_node_next(c->t, row), r++)
            read_vector(c, row, cols, "", NULL, values + (size_t)r * (size_t)cols);
    } else {
        memset(values, 0, count * sizeof *values);
        for (int i = 0; i < rows && i < cols; i++)
            values[(size_t)i * (size_t)cols + (size_t)i] = 1.0;
    }
}

/* One row per token (repeats repeated) from one vector per distinct token. */
static double *expand_rows(const double *vectors, const int *ids, int count, int d) {
    double *rows = malloc((size_t)count * (size_t)d * sizeof *rows);
    if (!rows) return NULL;
    for (int i = 0; i < count; i++)
        memcpy(rows + (size_t)i * (size_t)d, vectors + (size_t)ids[i] * (size_t)d,
               (size_t)d * sizeof *rows);
    return rows;
}

/* Embeddings given as a whole matrix: the first rows are the tokens', the rest the source's. */
static bool build_position_embeddings(checker *c, lesson *l) {
    size_t d = (size_t)c->d_model, n = (size_t)l->n_tokens, m = (size_t)l->n_source;
    const double *values = c->embeddings.values;
    l->embeddings = malloc(n * d * sizeof *l->embeddings);
    if (l->embeddings) memcpy(l->embeddings, values, n * d * sizeof *values);
    if (!l->source) return l->embeddings != NULL;
    l->source_embeddings = malloc(m * d * sizeof *l->source_embeddings);
    if (l->source_embeddings) memcpy(l->source_embeddings, values + n * d, m * d * sizeof *values);
    return l->embeddings && l->source_embeddings;
}

static bool build_embeddings(checker *c, lesson *l) {
    if (c->embeddings.form == FORM_FILE || c->embeddings.form == FORM_NUMPY)
        return build_position_embeddings(c, l);
    int d = c->d_model;
    double *vectors = malloc((size_t)c->n_distinct * (size_t)d * sizeof *vectors);
    if (!vectors) return false;
    if (c->embeddings.form == FORM_RANDOM) {
        fill_matrix(c, &c->embeddings, c->n_distinct, d, vectors);
    } else {
        for (int id = 0; id < c->n_distinct; id++)
            read_vector(c, c->distinct_vector[id], d, "", NULL,
                        vectors + (size_t)id * (size_t)d);
    }
    bool cross = c->keys[TOP_SOURCE] >= 0;
    l->embeddings = expand_rows(vectors, c->distinct_of, l->n_tokens, d);
    if (cross)
        l->source_embeddings = expand_rows(vectors, c->distinct_of + l->n_tokens, l->n_source, d);
    free(vectors);
    return l->embeddings && (!cross || l->source_embeddings);
}

/* The mask as cells, for explicit and causal masks alike (readers need not know the rule);
 * the core itself is given cells only for an explicit mask. */
static bool build_mask(checker *c, lesson *l) {
    if (c->mask == MASK_NONE) return true;
    int n = l->n_tokens, m = l->source ? l->n_source : n;
    l->mask_cells = malloc((size_t)n * (size_t)m);
    if (!l->mask_cells) return false;
    if (c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW) {
        unsigned char *cell = l->mask_cells;
        int window = c->mask == MASK_WINDOW ? c->window : n;
        for (int row = 0; row < n; row++)
            for (int col = 0; col < m; col++) *cell++ = col <= row && col > row - window;
        return true;
    }
    size_t i = 0;
    for (int row = c->mask_node + 1; row < lesson_node_next(c->t, c->mask_node);
         row = lesson_node_next(c->t, row))
        LESSON_FOR_EACH_CHILD(c->t, row, cell)
            l->mask_cells[i++] = lesson_node_text(c->t, cell)[0] == '1';
    return true;
}

static void take_tokens(token_list *list, char ***text, int *count) {
    *text = list->text;
    *count = list->count;
    list->text = NULL;
    list->count = 0;
}

/* Fills input's sizes and flags (the pointers come with the storage). */
static void describe_input(const checker *c, lesson *l) {
    bool cross = l->source != NULL;
    l->input = (attention_input){
        .n_tokens = l->n_tokens, .tokens = (const char *const *)l->tokens,
        .n_source = cross ? l->n_source : l->n_tokens,
        .source = cross ? (const char *const *)l->source : NULL,
        .d_model = c->d_model, .heads = c->heads, .mask = c->mask,
        .positional = c->positional, .scale = c->scale, .rope = c->rope,
        .rope_base = c->rope_base, .alibi = c->alibi, .window = c->window,
        .kv_heads = c->kv_heads, .online_softmax = c->online_softmax, .tile = c->tile,
        .decode = c->decode };
}

/* "1.5 GiB", "256 KiB": the largest binary unit the amount reaches, one decimal unless whole. */
static void format_bytes(size_t bytes, char *out, size_t size) {
    static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    double amount = (double)bytes;
    int unit = 0;
    while (amount >= 1024 && unit < 4) amount /= 1024, unit++;
    snprintf(out, size, amount == (double)(long long)amount ? "%.0f %s" : "%.1f %s", amount,
             units[unit]);
}

/* Everything loading the lesson and computing its trace allocate: the trace, and the lesson's
 * own matrices (the distinct embeddings and their rows per token, the four weights, the
 * mask), counted before any of them is allocated or drawn. */
static size_t bytes_needed(const checker *c, const lesson *l) {
    size_t d = (size_t)c->d_model, n = (size_t)l->n_tokens;
    size_t m = l->source ? (size_t)l->n_source : n;
    size_t doubles = ((size_t)c->n_distinct + n + (l->source ? m : 0)) * d + 4 * d * d
                   + 4 * d;  /* the biases, at most d each */
    size_t own = doubles * sizeof(double) + (c->mask != MASK_NONE ? n * m : 0);
    size_t computed = trace_bytes_needed(&l->input);
    return computed > SIZE_MAX - own ? SIZE_MAX : computed + own;
}

static lesson_status build(checker *c, int root, lesson *l) {
    if (c->d_model < 1 || c->heads < 1) {
        /* Every way to get here should have been reported; never build from unknown sizes. */
        REPORT(c, root, NEEDS_D_MODEL, NULL);
        return LESSON_INVALID;
    }
    if (!c->tokens.valid || (c->keys[TOP_SOURCE] >= 0 && !c->source.valid) || !c->distinct_of) {
        REPORT(c, root, NO_MEMORY, NULL);  /* the only way to an unusable list without a report */
        return LESSON_INVALID;
    }
    take_tokens(&c->tokens, &l->tokens, &l->n_tokens);
    if (c->keys[TOP_SOURCE] >= 0) take_tokens(&c->source, &l->source, &l->n_source);
    describe_input(c, l);
    size_t bytes = bytes_needed(c, l);
    if (bytes > c->max_bytes) {
        char need[32], limit[32], amount[80];
        format_bytes(bytes, need, sizeof need);
        format_bytes(c->max_bytes, limit, sizeof limit);
        snprintf(amount, sizeof amount, "%s; the limit is %s", need, limit);
        REPORT(c, root, TRACE_TOO_LARGE, amount);
        return LESSON_INVALID;
    }
    int d = c->d_model;
    double **W[] = { &l->W_Q, &l->W_K, &l->W_V, &l->W_O };
    bool ok = c->structure_only || (build_embeddings(c, l) && build_mask(c, l));
    for (int i = 0; ok && !c->structure_only && i < 4; i++) {
        int cols = i == 1 || i == 2 ? kv_columns(c) : d;
        *W[i] = malloc((size_t)d * (size_t)cols * sizeof **W[i]);
        ok = *W[i] != NULL;
        if (ok) fill_matrix(c, &c->W[i], d, cols, *W[i]);
    }
    double **b[] = { &l->b_Q, &l->b_K, &l->b_V, &l->b_O };
    for (int i = 0; ok && i < 4; i++) {
        if (c->keys[TOP_B_Q + i] < 0) continue;
        int cols = bias_length(c, i);
        *b[i] = malloc((size_t)cols * sizeof **b[i]);
        ok = *b[i] != NULL;
        if (ok) fill_matrix(c, &c->b[i], 1, cols, *b[i]);
    }
    if (!ok) {
        REPORT(c, root, NO_MEMORY, NULL);
        return LESSON_INVALID;
    }
    l->title = strdup(lesson_node_text(c->t, c->keys[TOP_TITLE]));
    if (c->keys[TOP_ABOUT] >= 0) {
        l->about = strdup(lesson_node_text(c->t, c->keys[TOP_ABOUT]));
        read_written(c, c->keys[TOP_ABOUT], &l->about_written);
    }
    l->steps = c->steps;
    l->n_steps = c->n_steps;
    c->steps = NULL;
    c->n_steps = 0;
    /* Out of memory here, the lesson still loads; only following its data files is lost. */
    if (c->n_data_files > 0 && (l->data_files = malloc((size_t)c->n_data_files
                                                       * sizeof *l->data_files)) != NULL) {
        memcpy(l->data_files, c->data_files, (size_t)c->n_data_files * sizeof *l->data_files);
        l->n_data_files = c->n_data_files;
        c->n_data_files = 0;
    }
    describe_input(c, l);
    l->input.embeddings = l->embeddings;
    l->input.source_embeddings = l->source_embeddings;
    l->input.W_Q = l->W_Q;
    l->input.W_K = l->W_K;
    l->input.W_V = l->W_V;
    l->input.W_O = l->W_O;
    l->input.b_Q = l->b_Q;
    l->input.b_K = l->b_K;
    l->input.b_V = l->b_V;
    l->input.b_O = l->b_O;
    l->input.mask_cells = c->mask == MASK_EXPLICIT ? l->mask_cells : NULL;
    return LESSON_OK;
}

static void free_step(lesson_step *step) {
    free(step->say);
    free(step->ask);
    free(step->answer_text);
    for (int i = 0; i < step->n_expect; i++) free(step->expect[i].text);
    free(step->expect);
    free(step->say_written.marks);
    free(step->ask_written.marks);
    for (int i = 0; i < step->n_choices; i++) free(step->choices[i]);
    free(step->choices);
}

static void checker_free(checker *c) {
    token_list_free(&c->tokens);
    token_list_free(&c->source);
    lesson_index_free(&c->distinct);
    free(c->all_tokens);
    free(c->distinct_of);
    free(c->distinct_text);
    free(c->distinct_node);
    free(c->distinct_vector);
    for (int i = 0; i < c->n_steps; i++) free_step(&c->steps[i]);
    free(c->steps);
    for (int i = 0; i < DRAWN_COUNT; i++) free(drawn_spec(c, i)->values);
    for (int i = 0; i < c->n_data_files; i++) free(c->data_files[i]);
}

static lesson_status check_and_build(const lesson_tree *tree, const char *data, size_t size,
                                     lesson *out, lesson_diagnostics *d,
                                     const lesson_options *options, bool structure_only) {
    if (tree->nodes[0].kind != LESSON_NODE_MAP) {
        lesson_report(d, tree->nodes[0].line, tree->nodes[0].col, LESSON_ERROR_NOT_A_LESSON,
                      lesson_node_describe(tree, 0));
        return LESSON_INVALID;
    }
    checker c = { .t = tree, .data = data, .size = size, .d = d, .d_model = -1,
                  .mask_node = -1,
                  .max_bytes = options->max_bytes ? options->max_bytes : LESSON_MAX_BYTES,
                  .allow_paths = options->allow_paths, .structure_only = structure_only };
    check_lesson(&c, 0);
    lesson_status status = failed(&c) ? LESSON_INVALID : build(&c, 0, out);
    checker_free(&c);
    return status;
}

/* ---- entry points ---- */

static void report_text_problem(lesson_diagnostics *d, const char *data, size_t size) {
    size_t offset = 0;
    unsigned value = 0;
    lesson_text_status status = lesson_check_text(data, size, &offset, &value);
    if (status == LESSON_TEXT_OK) return;
    int line = 0, col = 0;
    lesson_offset_position(data, size, offset, &line, &col);
    char name[16];
    snprintf(name, sizeof name, value < 0x80 ? "\\x%02x" : "\\u%04x", value);
    if (status == LESSON_TEXT_NUL) lesson_report(d, line, col, LESSON_ERROR_NUL_BYTE);
    else if (status == LESSON_TEXT_UTF8) lesson_report(d, line, col, LESSON_ERROR_BAD_UTF8, value);
    else lesson_report(d, line, col, LESSON_ERROR_CONTROL_CHAR, name);
}

static lesson_status load_text(const char *data, size_t size, const lesson_options *options,
                               bool structure_only, lesson *out, lesson_diagnostics *d) {
    report_text_problem(d, data, size);
    if (d->count > 0) return LESSON_INVALID;
    lesson_tree tree;
    lesson_status status = lesson_tree_parse(data, size, &tree, d)
                         ? check_and_build(&tree, data, size, out, d, options, structure_only)
                         : LESSON_INVALID;
    lesson_tree_free(&tree);
    return status;
}

static void start(const char *path, lesson *out, lesson_diagnostics *d) {
    *out = (lesson){ 0 };
    *d = (lesson_diagnostics){ .path = strdup(path ? path : "") };
}

/* The messages of the diagnostics table, to know the report of memory running out. */
#define ERROR_FORMAT(id, format) format,
static const char *const error_formats[] = { LESSON_ERROR_TABLE(ERROR_FORMAT) };

/* Memory ran out when it was reported, or when a failed lesson has no report at all (every
 * other failure reports itself; only a report that could not be allocated goes missing). */
static bool out_of_memory(const lesson_diagnostics *d) {
    if (d->count == 0 && d->dropped == 0) return true;
    for (int i = 0; i < d->count; i++)
        if (strcmp(d->items[i].message, error_formats[LESSON_ERROR_NO_MEMORY]) == 0) return true;
    return false;
}

static lesson_status finish(lesson_status status, const char *path, lesson *out,
                            lesson_diagnostics *d) {
    if (status == LESSON_INVALID && out_of_memory(d)) status = LESSON_NO_MEMORY;
    lesson_report_finish(d);
    if (status == LESSON_OK && d->count == 0) {
        out->path = strdup(path ? path : "");
        free(d->path);
        *d = (lesson_diagnostics){ 0 };
        return LESSON_OK;
    }
    lesson_free(out);
    return status == LESSON_OK ? LESSON_INVALID : status;
}

lesson_status lesson_load_buffer(const char *path, const char *data, size_t size,
                                 lesson *out, lesson_diagnostics *diagnostics) {
    return lesson_load_buffer_with(path, data, size, NULL, out, diagnostics);
}

lesson_status lesson_load_buffer_within(const char *path, const char *data, size_t size,
                                        size_t max_bytes, lesson *out,
                                        lesson_diagnostics *diagnostics) {
    lesson_options options = { .max_bytes = max_bytes };
    return lesson_load_buffer_with(path, data, size, &options, out, diagnostics);
}

/* lesson_load_buffer_with; structure_only checks the lesson without building its matrices. */
static lesson_status load_buffer(const char *path, const char *data, size_t size,
                                 const lesson_options *options, bool structure_only,
                                 lesson *out, lesson_diagnostics *diagnostics) {
    static const lesson_options defaults = { 0 };
    if (!options) options = &defaults;
    start(path, out, diagnostics);
    if (size > LESSON_MAX_FILE_BYTES || size == 0) {
        lesson_report(diagnostics, 0, 0, size ? LESSON_ERROR_FILE_TOO_LARGE
                                              : LESSON_ERROR_FILE_EMPTY);
        return finish(LESSON_INVALID, path, out, diagnostics);
    }
    /* The checks below read data as a NUL-terminated string, so work on a terminated copy. */
    char *copy = malloc(size + 1);
    lesson_status status = LESSON_INVALID;
    if (copy) {
        memcpy(copy, data, size);
        copy[size] = '\0';
        status = load_text(copy, size, options, structure_only, out, diagnostics);
        lesson_diagnostics_quote(diagnostics, copy, size);
        if (status == LESSON_OK) {
            out->text = copy;  /* kept, so that checks after loading can quote it too */
            out->text_size = size;
        } else {
            free(copy);
        }
    } else {
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_NO_MEMORY);
    }
    return finish(status, path, out, diagnostics);
}

lesson_status lesson_load_buffer_with(const char *path, const char *data, size_t size,
                                      const lesson_options *options, lesson *out,
                                      lesson_diagnostics *diagnostics) {
    return load_buffer(path, data, size, options, false, out, diagnostics);
}

/* What a file that is not regular is, for the message that refuses it. */
static const char *not_regular(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory, not a regular file";
    if (S_ISFIFO(mode)) return "it is a FIFO, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
    if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
    return "it is not a regular file";
}

/* O_NONBLOCK: opening a FIFO without a writer (or a device) must not wait; fstat then refuses
 * it before any read, which could wait forever or never end (/dev/zero). */
FILE *lesson_open_regular(const char *path, const char **why) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { *why = strerror(errno); return NULL; }
    return lesson_fdopen_regular(fd, why);
}

FILE *lesson_fdopen_regular(int fd, const char **why) {
    struct stat sb;
    const char *refusal = fstat(fd, &sb) != 0 ? strerror(errno)
                        : !S_ISREG(sb.st_mode) ? not_regular(sb.st_mode) : NULL;
    if (refusal) {
        *why = refusal;
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags != -1) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *file = fdopen(fd, "rb");
    if (!file) { *why = strerror(errno); close(fd); }
    return file;
}

/* Reads at most LESSON_MAX_FILE_BYTES + 1 bytes: enough to know a file is too large without
 * reading all of it. Returns the bytes read, or NULL with *why saying why not. */
static char *read_file(const char *path, size_t *size, const char **why) {
    FILE *file = lesson_open_regular(path, why);
    if (!file) return NULL;
    char *data = malloc(LESSON_MAX_FILE_BYTES + 2);
    errno = 0;
    size_t got = data ? fread(data, 1, LESSON_MAX_FILE_BYTES + 1, file) : 0;
    int error = !data ? ENOMEM : ferror(file) ? (errno ? errno : EIO) : 0;
    fclose(file);
    if (error) {
        free(data);
        *why = strerror(error);
        return NULL;
    }
    data[got] = '\0';
    *size = got;
    return data;
}

lesson_status lesson_load(const char *path, lesson *out, lesson_diagnostics *diagnostics) {
    return lesson_load_with(path, NULL, out, diagnostics);
}

/* lesson_load_with; structure_only checks the lesson without building its matrices. */
static lesson_status load_file(const char *path, const lesson_options *options,
                               bool structure_only, lesson *out,
                               lesson_diagnostics *diagnostics) {
    size_t size = 0;
    const char *why = NULL;
    char *data = read_file(path, &size, &why);
    if (!data) {
        start(path, out, diagnostics);
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_CANNOT_READ, why);
        return LESSON_UNREADABLE;
    }
    lesson_status status = load_buffer(path, data, size, options, structure_only, out,
                                       diagnostics);
    free(data);
    return status;
}

lesson_status lesson_load_with(const char *path, const lesson_options *options, lesson *out,
                               lesson_diagnostics *diagnostics) {
    return load_file(path, options, false, out, diagnostics);
}

/* Every check of lesson_load runs (the same diagnostics), but no matrix is drawn, read into
 * place or allocated, so a lesson of d_model 4096 is summed up in the time of reading its
 * text. Only an about with live numbers, in a lesson small enough to trace, loads in full. */
lesson_status lesson_load_summary(const char *path, const lesson_options *options,
                                  lesson_summary *out, lesson_diagnostics *diagnostics) {
    lesson l;
    *out = (lesson_summary){ 0 };
    lesson_status status = load_file(path, options, true, &l, diagnostics);
    if (status != LESSON_OK) return status;
    bool live = l.about && strchr(l.about, '{')
             && trace_bytes_needed(&l.input) <= LESSON_ABOUT_TRACE_MAX;
    out->title = l.title;
    out->about = l.about;
    l.title = l.about = NULL;
    lesson_free(&l);
    lesson full;
    lesson_diagnostics ignored;
    if (live && lesson_load_with(path, options, &full, &ignored) == LESSON_OK) {
        char *shown = lesson_about_shown(&full);
        if (shown) { free(out->about); out->about = shown; }
        lesson_free(&full);
    } else if (live) {
        lesson_diagnostics_free(&ignored);
    }
    if (!out->title) {
        lesson_summary_free(out);
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_NO_MEMORY);
        return LESSON_NO_MEMORY;
    }
    return LESSON_OK;
}

void lesson_summary_free(lesson_summary *summary) {
    free(summary->title);
    free(summary->about);
    *summary = (lesson_summary){ 0 };
}

bool lesson_walk(const lesson *l, const trace *t, walk *w) {
    walk_mark *marks = calloc(l->n_steps > 0 ? (size_t)l->n_steps : 1, sizeof *marks);
    if (!marks) { *w = (walk){ NULL, 0 }; return false; }
    for (int i = 0; i < l->n_steps; i++)
        marks[i] = (walk_mark){ l->steps[i].stage, l->steps[i].head, l->steps[i].token };
    bool built = walk_build(w, t, marks, l->n_steps);
    free(marks);
    return built;
}

const lesson_step *lesson_narration(const lesson *l, const walk_step *step) {
    if (step->narration < 0) return NULL;
    assert(step->narration < l->n_steps);
    return &l->steps[step->narration];
}

void lesson_free(lesson *l) {
    free(l->path);
    free(l->text);
    free(l->title);
    free(l->about);
    free(l->about_written.marks);
    for (int i = 0; l->tokens && i < l->n_tokens; i++) free(l->tokens[i]);
    free(l->tokens);
    for (int i = 0; l->source && i < l->n_source; i++) free(l->source[i]);
    free(l->source);
    for (int i = 0; l->steps && i < l->n_steps; i++) free_step(&l->steps[i]);
    free(l->steps);
    free(l->embeddings);
    free(l->source_embeddings);
    free(l->W_Q);
    free(l->W_K);
    free(l->W_V);
    free(l->W_O);
    free(l->b_Q);
    free(l->b_K);
    free(l->b_V);
    free(l->b_O);
    free(l->mask_cells);
    for (int i = 0; i < l->n_data_files; i++) free(l->data_files[i]);
    free(l->data_files);
    *l = (lesson){ 0 };
}
