/* The loader's values: reporting at a node, mappings with fixed keys, numbers and lists of them,
 * words, tokens, and the forms of a matrix or bias (lists, {file:}, {random:}, numpy's draws). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_private.h"
#include "lesson_file.h"
#include "numpy_random.h"
#include "spelling.h"

#define RANDOM_KEYS(X) X(RANDOM, "random") X(SEED, "seed") X(SCALE, "scale")
#define RANDOM_ENUM(id, name) RANDOM_##id,
enum { RANDOM_KEYS(RANDOM_ENUM) RANDOM_COUNT };
static const char *const random_keys[] = { RANDOM_KEYS(KEY_NAME) };

/* The name of draw i (DRAWN_*): "embeddings", then the parameters' names. */
static const char *drawn_name(int i) {
    return i == DRAWN_EMBEDDINGS ? "embeddings" : param_get((param_id)(i - 1))->name;
}

/* ---- reporting helpers ---- */

/* The escaped text of a scalar node, for a message; buffer holds LESSON_ESCAPED_MAX bytes. */
const char *checker_shown(const checker *c, int node, char *buffer) {
    return lesson_escape(lesson_node_text(c->t, node), checker_node(c, node)->length, buffer);
}

/* Whether node is a non-null scalar; otherwise reports that `what` must be `expected`. */
/* Whether node is a mapping written in braces ({cat}): libyaml places a block mapping at its
 * first key, a flow mapping at its '{', before the first key. */
static bool in_braces(const checker *c, int node) {
    const lesson_node *map = checker_node(c, node);
    if (map->kind != LESSON_NODE_MAP) return false;
    if (map->count == 0) return true;
    const lesson_node *key = checker_node(c, node + 1);
    return key->line != map->line || key->col != map->col;
}

bool checker_expect_scalar(checker *c, int node, const char *what, const char *expected) {
    if (!checker_usable(c, node)) return false;
    if (checker_node(c, node)->kind == LESSON_NODE_SCALAR && !lesson_node_is_null(c->t, node))
        return true;
    lesson_diagnostic *item = REPORT(c, node, WRONG_TYPE, what, expected,
                                     lesson_node_describe(c->t, node));
    /* text written {cat} is a valid mapping to YAML: say why, in the author's words */
    if (strcmp(expected, "text") == 0 && in_braces(c, node))
        lesson_hint(item, LESSON_HINT_QUOTE_BRACES);
    return false;
}

bool checker_expect_kind(checker *c, int node, lesson_node_kind kind, const char *what,
                         const char *expected) {
    if (!checker_usable(c, node)) return false;
    if (checker_node(c, node)->kind == kind) return true;
    REPORT(c, node, WRONG_TYPE, what, expected, lesson_node_describe(c->t, node));
    return false;
}

/* Copies a scalar's text, or NULL when it is missing or not text (after reporting). */
char *checker_read_text(checker *c, int node, const char *what) {
    if (node < 0 || !checker_expect_scalar(c, node, what, "text")) return NULL;
    return strdup(lesson_node_text(c->t, node));
}

/* ---- mappings with fixed keys ---- */

/* The one report of a word (the text of node) that is not one of words[]: the diagnostic item
 * says so, then "; did you mean 'X'?" follows when one of them is near the word, or else (for
 * a short fixed vocabulary) the hint `all` lists them. */
void checker_report_unknown(checker *c, lesson_diagnostic *item, int node,
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

/* Reports the unknown key at key; when it is a misspelling of one of names[] that the map lacks
 * (values[i] < 0), it is the root cause of that key's absence (lesson_explains). */
static void report_unknown_key(checker *c, int map, int key, const char *const *names, int count,
                               const int *values) {
    char key_shown[LESSON_ESCAPED_MAX];
    lesson_diagnostic *item = REPORT(c, key, UNKNOWN_KEY, checker_shown(c, key, key_shown));
    checker_report_unknown(c, item, key, names, count, LESSON_HINT_KEYS_HERE);
    const char *near = spelling_nearest(lesson_node_text(c->t, key), names, count);
    for (int i = 0; near && i < count; i++)
        if (names[i] == near && values[i] < 0)
            lesson_explains(item, checker_node(c, map)->line, checker_node(c, map)->col, near);
}

/* Finds the value of each of names[] in map (-1 when absent), then reports unknown keys (so that
 * a misspelt key is known to explain an absent one). Keys that are not text and repeated keys
 * were reported while the tree was built. */
void checker_read_keys(checker *c, int map, const char *const *names, int count, int *values) {
    for (int i = 0; i < count; i++) values[i] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int key = map + 1; key < lesson_node_next(c->t, map);) {
            int value = lesson_node_next(c->t, key);
            if (checker_node(c, key)->kind == LESSON_NODE_SCALAR) {
                const char *text = lesson_node_text(c->t, key);
                int i = 0;
                while (i < count && strcmp(text, names[i]) != 0) i++;
                if (i == count && pass == 1) report_unknown_key(c, map, key, names, count, values);
                else if (i < count && values[i] < 0) values[i] = value;
            }
            key = lesson_node_next(c->t, value);
        }
}

void checker_require(checker *c, int map, int value, const char *name) {
    if (value < 0) checker_follows(c, REPORT(c, map, MISSING_KEY, name), map, name);
}

void checker_follows(checker *c, lesson_diagnostic *item, int map, const char *key) {
    lesson_follows(item, checker_node(c, map)->line, checker_node(c, map)->col, key);
}

void checker_follow_from(checker *c, int map, const char *key) {
    lesson_follow_from(c->d, checker_node(c, map)->line, checker_node(c, map)->col, key);
}

void checker_follow_end(checker *c) {
    lesson_follow_from(c->d, 0, 0, NULL);
}

/* ---- numbers ---- */

/* A hint for text that is a number written with a decimal comma ("1,5"): the number with a
 * point instead. */
static void hint_decimal_comma(checker *c, lesson_diagnostic *item, int node) {
    const char *text = lesson_node_text(c->t, node), *comma = strchr(text, ',');
    double x = 0.0;
    if (!comma || strchr(comma + 1, ',') || checker_node(c, node)->length >= LESSON_ESCAPED_MAX)
        return;
    char pointed[LESSON_ESCAPED_MAX], shown_text[LESSON_ESCAPED_MAX];
    snprintf(pointed, sizeof pointed, "%.*s.%s", (int)(comma - text), text, comma + 1);
    if (lesson_parse_number(pointed, &x) == LESSON_NUMBER_OK)
        lesson_hint(item, LESSON_HINT_DECIMAL_POINT,
                    lesson_escape(pointed, strlen(pointed), shown_text));
}

bool checker_read_number(checker *c, int node, const char *what, double *value) {
    if (!checker_expect_scalar(c, node, what, "a number")) return false;
    double x = 0.0;
    char text[LESSON_ESCAPED_MAX];
    switch (lesson_parse_number(lesson_node_text(c->t, node), &x)) {
    case LESSON_NUMBER_OK:
        if (value) *value = x;
        return true;
    case LESSON_NUMBER_NONFINITE:
        REPORT(c, node, NOT_FINITE, what, checker_shown(c, node, text));
        return false;
    case LESSON_NUMBER_RANGE:
        REPORT(c, node, OUT_OF_RANGE, what, checker_shown(c, node, text));
        return false;
    case LESSON_NUMBER_TINY:
        REPORT(c, node, ROUNDS_TO_ZERO, what, checker_shown(c, node, text));
        return false;
    default:
        hint_decimal_comma(c, REPORT(c, node, NOT_A_NUMBER, what, checker_shown(c, node, text)),
                           node);
        return false;
    }
}

/* A number greater than 0 (an eps, a rate, a base): *value is left as it was otherwise. */
bool checker_read_positive(checker *c, int node, const char *what, double *value) {
    double x = 0.0;
    if (!checker_read_number(c, node, what, &x)) return false;
    if (!(x > 0.0)) {
        char text[LESSON_ESCAPED_MAX];
        REPORT(c, node, BAD_VALUE, what, "a number greater than 0", checker_shown(c, node, text));
        return false;
    }
    *value = x;
    return true;
}

/* A whole number from min to limit; past limit the message names the limit. */
bool checker_read_integer(checker *c, int node, const char *what, uint64_t min, uint64_t limit,
                          uint64_t *value) {
    if (!checker_expect_scalar(c, node, what, "a whole number")) return false;
    char text[LESSON_ESCAPED_MAX];
    uint64_t x = 0;
    if (!lesson_parse_integer(lesson_node_text(c->t, node), min, UINT64_MAX, &x)) {
        REPORT(c, node, BAD_INTEGER, what, (unsigned long long)min, (unsigned long long)limit,
               checker_shown(c, node, text));
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
        tight = tight || checker_node(c, item)->comma == LESSON_COMMA_TIGHT;
        spaced = spaced || checker_node(c, item)->comma == LESSON_COMMA_SPACED;
    }
    return tight && spaced;
}

/* The list as it was probably meant, each tight comma a decimal point: "[1.5, 0.5]"; false when
 * that reading is not one number per group either ("1,5,2"). out holds LESSON_ESCAPED_MAX. */
static bool decimal_reading(const checker *c, int node, char *out) {
    char raw[LESSON_ESCAPED_MAX] = "[";
    int in_group = 0;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        bool tight = checker_node(c, item)->comma == LESSON_COMMA_TIGHT;
        in_group = tight ? in_group + 1 : 1;
        if (in_group > 2 || checker_node(c, item)->kind != LESSON_NODE_SCALAR) return false;
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
    while (checker_node(c, item)->comma != LESSON_COMMA_TIGHT) item = lesson_node_next(c->t, item);
    char meant[LESSON_ESCAPED_MAX];
    lesson_diagnostic *d = lesson_report(c->d, checker_node(c, item)->line,
                                         checker_node(c, item)->col - 1,
                                         LESSON_ERROR_DECIMAL_COMMAS, what);
    if (decimal_reading(c, node, meant)) lesson_hint(d, LESSON_HINT_DECIMAL_POINT, meant);
    else lesson_hint(d, LESSON_HINT_SEPARATE_NUMBERS);
}

/* The noun for count things, as a diagnostic writes it after the count: "1 number",
 * "2 numbers". */
const char *checker_noun(int count, const char *one, const char *many) {
    return count == 1 ? one : many;
}

/* Reads a list of numbers into values (when not NULL). expected < 0 accepts any length; when
 * `most` is not NULL, expected is the length most of the lists that are `most` have, which a
 * hint then says. Returns the length found, or -1 when node is not a usable list. */
int checker_read_vector(checker *c, int node, int expected, const char *what, const char *most,
                        double *values) {
    if (!checker_expect_kind(c, node, LESSON_NODE_LIST, what, "a list of numbers")) return -1;
    if (mixes_commas(c, node)) {
        report_decimal_commas(c, node, what);
        return -1;
    }
    int count = checker_node(c, node)->count;
    const char *numbers = checker_noun(expected, "number", "numbers");
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
        checker_read_number(c, item, what, values ? &values[i] : NULL);
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
        bool list = checker_usable(c, v) && checker_node(c, v)->kind == LESSON_NODE_LIST
                 && checker_node(c, v)->count > 0 && !mixes_commas(c, v);
        lengths[i] = list ? checker_node(c, v)->count : -1;
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
int checker_read_word(checker *c, int node, const char *what, const char *const *words, int count,
                      const char *expected) {
    if (!checker_expect_scalar(c, node, what, expected)) return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(lesson_node_text(c->t, node), words[i]) == 0) return i;
    char text[LESSON_ESCAPED_MAX];
    checker_report_unknown(c, REPORT(c, node, BAD_VALUE, what, expected,
                                     checker_shown(c, node, text)), node,
                           words, count, LESSON_HINT_COUNT);
    return -1;
}

bool checker_read_bool(checker *c, int node, const char *what, bool fallback) {
    static const char *const words[] = { "false", "true", "False", "True", "FALSE", "TRUE" };
    if (node < 0) return fallback;
    int i = checker_read_word(c, node, what, words, 6, "true or false");
    return i < 0 ? fallback : i % 2 == 1;
}

/* ---- tokens ---- */

static bool add_token(checker *c, token_list *list, const char *text, size_t length, int node,
                      const char *what) {
    if (length == 0 && lesson_node_is_null(c->t, node) && checker_node(c, node)->length > 1) {
        char shown[LESSON_ESCAPED_MAX];   /* null, Null or NULL (not ~): a word, read as empty */
        checker_shown(c, node, shown);
        lesson_hint(REPORT(c, node, NULL_TOKEN, shown, what), LESSON_HINT_QUOTE_WORD, shown);
        return false;
    }
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
        if (!checker_usable(c, item)) { ok = false; continue; }
        if (checker_node(c, item)->kind != LESSON_NODE_SCALAR) {
            REPORT(c, item, WRONG_TYPE, "a token", "text", lesson_node_describe(c->t, item));
            ok = false;
            continue;
        }
        /* A YAML null (nothing, or ~) is no word at all: report it as an empty token. */
        size_t length = lesson_node_is_null(c->t, item) ? 0 : checker_node(c, item)->length;
        ok = add_token(c, list, lesson_node_text(c->t, item), length, item, what) && ok;
    }
    return ok;
}

/* Reads `tokens` or `source`: a list, or one string split on spaces. */
void checker_read_tokens(checker *c, int node, token_list *list, const char *what) {
    if (!checker_usable(c, node)) return;
    const lesson_node *n = checker_node(c, node);
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

void checker_token_list_free(token_list *list) {
    for (int i = 0; list->text && i < list->count; i++) free(list->text[i]);
    free(list->text);
    free(list->nodes);
    lesson_index_free(&list->first);
}

/* Numbers every distinct token, tokens first and then source, in order of first appearance. */
bool checker_index_distinct(checker *c) {
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
    checker_read_keys(c, map, random_keys, RANDOM_COUNT, keys);
    *spec = (matrix_spec){ .form = FORM_RANDOM, .node = map, .scale = 1.0 };
    bool ok = keys[RANDOM_RANDOM] >= 0;
    checker_require(c, map, keys[RANDOM_RANDOM], "random");
    int kind = keys[RANDOM_RANDOM] < 0 ? -1
             : checker_read_word(c, keys[RANDOM_RANDOM], "random", kinds, 3,
                                 "normal, xavier or numpy");
    ok = kind >= 0 && ok;
    spec->kind = kind == 1 ? RANDOM_XAVIER : RANDOM_NORMAL;
    if (kind == 2) spec->form = FORM_NUMPY;
    if (keys[RANDOM_SEED] >= 0)
        ok = checker_read_integer(c, keys[RANDOM_SEED], "seed", 0,
                                  spec->form == FORM_NUMPY ? UINT32_MAX : UINT64_MAX,
                                  &spec->seed) && ok;
    if (keys[RANDOM_SCALE] >= 0)
        ok = checker_read_number(c, keys[RANDOM_SCALE], "scale", &spec->scale) && ok;
    return ok;
}

/* Whether a mapping has the key `word` (with a plain word as value unless any_value): the random
 * form (`random`) or the file form (`file`). Among embeddings a token called "random" or "file"
 * has a list as value; a matrix has no tokens, so there any value is the form's, to report. */
static bool has_form_key(const checker *c, int map, const char *word, bool any_value) {
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        if (checker_node(c, key)->kind == LESSON_NODE_SCALAR
            && strcmp(lesson_node_text(c->t, key), word) == 0)
            return any_value || checker_node(c, value)->kind == LESSON_NODE_SCALAR;
        key = lesson_node_next(c->t, value);
    }
    return false;
}

static bool is_random_form(const checker *c, int map) {
    return has_form_key(c, map, "random", false);
}

/* A mapping meant as {file: ...} or {random: ...} with its form's key misspelt ({flie: w.npy},
 * {randon: numpy}): reports that key with its did-you-mean, the one cause of everything else
 * that reading it as written would report, and returns true. Among embeddings (word_values) only
 * a key whose value is a plain word counts, as a token's value is a list. */
static bool misspelt_form(checker *c, int map, bool word_values) {
    static const char *const forms[] = { "file", "random" };
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        const char *text = checker_node(c, key)->kind == LESSON_NODE_SCALAR
                         ? lesson_node_text(c->t, key) : NULL;
        bool word = checker_node(c, value)->kind == LESSON_NODE_SCALAR;
        if (text && (word || !word_values) && strcmp(text, "file") != 0
            && strcmp(text, "random") != 0 && spelling_nearest(text, forms, 2)) {
            char shown[LESSON_ESCAPED_MAX];
            lesson_suggest(REPORT(c, key, UNKNOWN_KEY, checker_shown(c, key, shown)), text,
                           forms, 2);
            return true;
        }
        key = lesson_node_next(c->t, value);
    }
    return false;
}

/* Reads {file: NAME.npy|NAME.csv} for `what` into spec, checking the file's shape against
 * rows × cols (either may be -1: not known yet, then taken from the file). A bias is one row
 * of cols (rows = 1), which a file may hold as 1-D (cols,), one row, or one column (cols, 1),
 * as np.savetxt writes a 1-D array. */
static bool read_file_form(checker *c, int map, const char *what, int rows, int cols,
                           const char *needs, bool bias, matrix_spec *spec) {
    static const char *const keys_here[] = { "file" };
    int name_node = -1;
    checker_read_keys(c, map, keys_here, 1, &name_node);
    *spec = (matrix_spec){ .form = FORM_FILE, .node = map, .scale = 1.0 };
    char *name = checker_read_text(c, name_node, "file");
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
        char need[160], header_shown[LESSON_ESCAPED_MAX];
        snprintf(need, sizeof need, "%s %s", want, needs);
        lesson_diagnostic *item = REPORT(c, name_node, FILE_SHAPE, what, name_shown, has, what,
                                         need);
        /* the header guess is the likely cause when the file is that one row short */
        if (m.header[0] && rows == m.rows + 1 && (cols < 0 || m.cols == cols))
            lesson_hint(item, LESSON_HINT_CSV_HEADER_READ,
                        lesson_escape(m.header, strlen(m.header), header_shown));
        free(m.values);
        return false;
    }
    if (m.header[0]) {   /* a guess the author should see: a mistyped row would be dropped */
        char header_shown[LESSON_ESCAPED_MAX];
        lesson_escape(m.header, strlen(m.header), header_shown);
        lesson_diagnostic *note = lesson_report_note(c->d, checker_node(c, name_node)->line,
            checker_node(c, name_node)->col, LESSON_ERROR_CSV_HEADER, what, name_shown,
            header_shown);
        lesson_hint(note, LESSON_HINT_CSV_ROW);
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
    snprintf(label, size, "the embedding of '%s'", checker_shown(c, key, text));
}

/* The nodes of the children of node (every value, for a mapping), in a new array; NULL when
 * out of memory. */
static int *children(const checker *c, int node, int *count) {
    bool map = checker_node(c, node)->kind == LESSON_NODE_MAP;
    int n = checker_node(c, node)->count, *nodes = malloc((size_t)(n > 0 ? n : 1) * sizeof *nodes);
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
        checker_read_vector(c, value, c->d_model, label, most ? "embeddings" : NULL, NULL);
        int id = checker_node(c, key)->kind == LESSON_NODE_SCALAR
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

void checker_read_embeddings(checker *c, int node) {
    if (!checker_usable(c, node)) return;
    if (checker_node(c, node)->kind != LESSON_NODE_MAP) {
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
        if (!misspelt_form(c, node, true)) read_embedding_map(c, node);
        return;
    }
    if (read_random(c, node, &c->embeddings) && c->d_model < 0
        && c->keys[TOP_D_MODEL] < 0)
        REPORT(c, node, NEEDS_D_MODEL, NULL);
}

/* Reads W_Q, W_K, W_V or W_O: identity, a list of rows, or the random form; a matrix of
 * d_model rows and `cols` columns (-1: unknown). */
void checker_read_matrix(checker *c, int node, const char *name, int cols, matrix_spec *spec) {
    static const char *const words[] = { "identity" };
    *spec = (matrix_spec){ .form = FORM_IDENTITY, .node = node };
    if (!checker_usable(c, node)) return;
    const char *expected = "identity, a list of rows, {random: ...} or {file: ...}";
    switch (checker_node(c, node)->kind) {
    case LESSON_NODE_MAP:
        if (has_form_key(c, node, "file", true))
            read_file_form(c, node, name, c->d_model, cols,
                           cols == c->d_model ? "(d_model × d_model)"
                                              : "(d_model × kv_heads·d_k)", false, spec);
        else if (is_random_form(c, node) || !misspelt_form(c, node, false))
            read_random(c, node, spec);
        return;
    case LESSON_NODE_SCALAR:
        checker_read_word(c, node, name, words, 1, expected);
        return;
    default:
        break;
    }
    spec->form = FORM_LIST;
    int rows = checker_node(c, node)->count;
    if (rows > 0 && checker_node(c, node + 1)->kind == LESSON_NODE_SCALAR) {
        /* A flat list of numbers: one message rather than one per number. */
        REPORT(c, node, WRONG_TYPE, name, "a list of rows (each a list of numbers)",
               "a flat list");
        return;
    }
    if (c->d_model >= 0 && rows != c->d_model)
        REPORT(c, node, WRONG_SIZE, name, c->d_model,
               checker_noun(c->d_model, "row (d_model)", "rows (d_model)"), rows);
    char label[64];
    snprintf(label, sizeof label, "a row of %s", name);
    /* Without d_model, rows must at least agree with one another: the odd one is blamed. */
    int width = c->d_model >= 0 ? cols : -1, count = 0, *vectors = NULL;
    bool most = false;
    if (width < 0 && (vectors = children(c, node, &count)) != NULL)
        width = common_length(c, vectors, count, &most);
    free(vectors);
    LESSON_FOR_EACH_CHILD(c->t, node, row)
        checker_read_vector(c, row, width, label, most ? "rows" : NULL, NULL);
}

/* ---- the loss's target ---- */

/* The target as a mapping, one row per token as embeddings are written: every query token
 * needs its row, and every key must be one of them. */
static bool read_target_rows_by_token(checker *c, int map, matrix_spec *spec) {
    bool ok = true;
    *spec = (matrix_spec){ .form = FORM_TOKENS, .node = map };
    for (int key = map + 1; key < lesson_node_next(c->t, map);) {
        int value = lesson_node_next(c->t, key);
        char text[LESSON_ESCAPED_MAX], label[LESSON_ESCAPED_MAX + 32];
        snprintf(label, sizeof label, "the target of '%s'", checker_shown(c, key, text));
        ok = checker_read_vector(c, value, c->d_model, label, NULL, NULL) >= 0 && ok;
        if (lesson_index_first(&c->tokens.first, lesson_node_text(c->t, key)) < 0) {
            REPORT(c, key, TARGET_NOT_TOKEN, text);
            ok = false;
        }
        key = lesson_node_next(c->t, value);
    }
    for (int i = 0; i < c->tokens.count; i++)
        if (lesson_index_first(&c->tokens.first, c->tokens.text[i]) == i
            && checker_target_row(c, spec, c->tokens.text[i]) < 0) {
            char text[LESSON_ESCAPED_MAX];
            REPORT(c, map, NO_TARGET_ROW,
                   lesson_escape(c->tokens.text[i], strlen(c->tokens.text[i]), text));
            ok = false;
        }
    return ok;
}

int checker_target_row(const checker *c, const matrix_spec *spec, const char *token) {
    for (int key = spec->node + 1; key < lesson_node_next(c->t, spec->node);) {
        int value = lesson_node_next(c->t, key);
        if (checker_node(c, key)->kind == LESSON_NODE_SCALAR
            && strcmp(lesson_node_text(c->t, key), token) == 0)
            return value;
        key = lesson_node_next(c->t, value);
    }
    return -1;
}

bool checker_read_target(checker *c, int node, matrix_spec *spec) {
    const char *what = "the loss's target";
    int n = c->tokens.count;
    *spec = (matrix_spec){ .form = FORM_LIST, .node = node };
    if (!checker_usable(c, node) || c->d_model < 1 || !c->tokens.valid) return false;
    lesson_node_kind kind = checker_node(c, node)->kind;
    if (kind == LESSON_NODE_MAP && has_form_key(c, node, "file", true))
        return read_file_form(c, node, what, n, c->d_model,
                              "(one row per token; d_model columns)", false, spec);
    if (kind == LESSON_NODE_MAP) return read_target_rows_by_token(c, node, spec);
    if (kind != LESSON_NODE_LIST) {
        REPORT(c, node, WRONG_TYPE, what,
               "a list of rows, a mapping from each token to its row, or {file: ...}",
               lesson_node_describe(c->t, node));
        return false;
    }
    int rows = checker_node(c, node)->count;
    if (rows != n) {
        REPORT(c, node, WRONG_SIZE, what, n, checker_noun(n, "row (one per token)",
                                                          "rows (one per token)"), rows);
        return false;
    }
    bool ok = true;
    LESSON_FOR_EACH_CHILD(c->t, node, row)
        ok = checker_read_vector(c, row, c->d_model, "a row of the loss's target", NULL, NULL) >= 0
             && ok;
    return ok;
}

/* ---- biases ---- */

int checker_param_columns(const checker *c, param_id p) {
    return param_get(p)->cols == AXIS_KV_DIMS ? checker_kv_columns(c) : c->d_model;
}

/* The stage bias p is added to ("Q" for b_Q), from the node table. */
static const char *biased_stage(param_id p) {
    return stage_get(stage_param_reader(p))->name;
}

/* Why bias p has its number of columns, for a message: "d_model = 4" or "kv_heads × d_k =
 * 1 × 2 = 2". */
static void bias_why(const checker *c, param_id p, char *out, size_t size) {
    int length = checker_param_columns(c, p);
    if (length == c->d_model)
        snprintf(out, size, "d_model = %d", length);
    else
        snprintf(out, size, "kv_heads × d_k = %d × %d = %d", c->kv_heads, c->d_model / c->heads,
                 length);
}

/* The hint of a bias of the wrong length: what it is added to and why it has that many. */
static void hint_bias_length(const checker *c, lesson_diagnostic *item, param_id p) {
    char why[96];
    bias_why(c, p, why, sizeof why);
    lesson_hint(item, p == PARAM_GAIN ? LESSON_HINT_GAIN_LENGTH : LESSON_HINT_BIAS_LENGTH,
                param_get(p)->name, biased_stage(p), why);
}

/* Reads bias p (b_Q, b_K, b_V or b_O): a list of numbers, {random: ...} or {file: ...};
 * absent, the stage has no bias (nothing is added, not a zero). */
void checker_read_bias_vector(checker *c, param_id p) {
    int node = checker_param_node(c, p), length = checker_param_columns(c, p);
    matrix_spec *spec = &c->params[p];
    const char *name = param_get(p)->name;
    *spec = (matrix_spec){ .form = FORM_VECTOR, .node = node, .rows = 1, .cols = length };
    if (node < 0 && checker_param_given(c, p))   /* a norm's: the gain ones, the bias zeros */
        *spec = (matrix_spec){ .form = FORM_CONSTANT, .node = -1, .rows = 1, .cols = length,
                               .scale = p == PARAM_GAIN ? 1.0 : 0.0 };
    if (!checker_usable(c, node)) return;
    const char *expected = "a list of numbers (one per column), {random: ...} or {file: ...}";
    if (checker_node(c, node)->kind == LESSON_NODE_MAP) {
        char needs[160], why[96];
        bias_why(c, p, why, sizeof why);
        snprintf(needs, sizeof needs, "(one number per column of %s: %s)", biased_stage(p),
                 why);
        if (has_form_key(c, node, "file", true))
            read_file_form(c, node, name, 1, length, needs, true, spec);
        else if (is_random_form(c, node) || !misspelt_form(c, node, false))
            read_random(c, node, spec);
        return;
    }
    if (checker_node(c, node)->kind != LESSON_NODE_LIST
        || (checker_node(c, node)->count > 0
            && checker_node(c, node + 1)->kind != LESSON_NODE_SCALAR)) {
        REPORT(c, node, WRONG_TYPE, name, expected,
               checker_node(c, node)->kind == LESSON_NODE_LIST ? "a list of rows"
                                                               : lesson_node_describe(c->t, node));
        return;
    }
    int count = checker_node(c, node)->count;
    if (length >= 0 && count > 0 && count != length) {
        hint_bias_length(c, REPORT(c, node, WRONG_SIZE, name, length, "numbers", count), p);
        return;
    }
    checker_read_vector(c, node, -1, name, NULL, NULL);
}

/* ---- numpy's draws ---- */

matrix_spec *checker_drawn_spec(checker *c, int i) {
    return i == DRAWN_EMBEDDINGS ? &c->embeddings : &c->params[i - 1];
}

/* The shape numpy draws matrix or bias i in: randn(rows, cols), a bias as randn(cols), which
 * draws the same numbers as randn(1, cols). */
static void drawn_shape(const checker *c, int i, int *rows, int *cols) {
    if (i == DRAWN_EMBEDDINGS) {
        *rows = position_rows(c);
        *cols = c->d_model;
    } else {
        param_id p = (param_id)(i - 1);
        *rows = param_get(p)->rows == AXIS_ONE ? 1 : c->d_model;
        *cols = checker_param_columns(c, p);
    }
}

/* Reads draw_order: into order (the indices of drawn_names), returning how many; without it,
 * the default order. It must name each matrix drawn with `random: numpy` once, and no other. */
int checker_read_draw_order(checker *c, int node, int *order) {
    if (node < 0) {
        for (int i = 0; i < DRAWN_COUNT; i++) order[i] = i;
        return DRAWN_COUNT;
    }
    if (!checker_expect_kind(c, node, LESSON_NODE_LIST, "draw_order", "a list of matrix names"))
        return 0;
    int count = 0;
    bool listed[DRAWN_COUNT] = { false };
    char message[128], expected[128] = "";
    const char *names[DRAWN_COUNT];
    for (int i = 0; i < DRAWN_COUNT; i++) {
        names[i] = drawn_name(i);
        size_t used = strlen(expected);
        snprintf(expected + used, sizeof expected - used, "%s%s", names[i],
                 i + 2 < DRAWN_COUNT ? ", " : i + 2 == DRAWN_COUNT ? " or " : "");
    }
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        int i = checker_read_word(c, item, "a name in draw_order", names, DRAWN_COUNT, expected);
        if (i < 0) continue;
        if (listed[i] || checker_drawn_spec(c, i)->form != FORM_NUMPY) {
            snprintf(message, sizeof message, listed[i] ? "'%s' is listed twice"
                     : "'%s' is not drawn with 'random: numpy'", names[i]);
            REPORT(c, item, DRAW_ORDER, message);
            continue;
        }
        listed[i] = true;
        order[count++] = i;
    }
    for (int i = 0; i < DRAWN_COUNT; i++) {
        if (listed[i] || checker_drawn_spec(c, i)->form != FORM_NUMPY) continue;
        snprintf(message, sizeof message, "'%s' is drawn with 'random: numpy' but not listed",
                 names[i]);
        REPORT(c, node, DRAW_ORDER, message);
    }
    return count;
}

/* Draws every `random: numpy` matrix in the draw order, as one numpy program that seeds once
 * and calls randn for each in turn would: matrices with the same seed continue one stream. */
void checker_draw_numpy(checker *c, const int *order, int count) {
    numpy_random_state *streams = malloc(DRAWN_COUNT * sizeof *streams);
    uint64_t seeds[DRAWN_COUNT];
    int n_streams = 0;
    for (int k = 0; streams && k < count; k++) {
        matrix_spec *spec = checker_drawn_spec(c, order[k]);
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
        drawn = drawn && (checker_drawn_spec(c, order[k])->form != FORM_NUMPY
                          || checker_drawn_spec(c, order[k])->values);
    if (!drawn) REPORT(c, 0, NO_MEMORY, NULL);
    free(streams);
}
