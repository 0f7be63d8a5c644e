/* Issue 13's second part. The online softmax (FlashAttention's recurrence): running_max and
 * running_sum against the recurrence written here from its definition, the weights and context
 * it makes against the ordinary softmax, its explanations, and the loader's keys and refusals.
 * Decoding with a KV cache: every decoded row is the causal (or windowed) trace's, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "stage_functions.h"
#include "lesson.h"
#include "decode.h"
#include "stats.h"
#include "walk.h"
#include "number.h"

enum { N = 7, D = 4 };

typedef struct {
    double x[N * D], w[4][D * D], b[4][D];
    unsigned char cells[N * N];
    attention_input in;
} fixture;

/* n = N tokens, d_model = D, two heads, numbers from support_fill scaled up so the maxima move
 * from tile to tile; mask as given (an explicit one hides a scattered set, never a whole row). */
static void make_fixture(fixture *f, mask_kind mask, unsigned seed)
{
    support_fill(f->x, N * D, seed);
    for (int i = 0; i < N * D; i++)
        f->x[i] *= 3.0;
    for (int i = 0; i < 4; i++) {
        support_fill(f->w[i], D * D, seed + 1 + (unsigned)i);
        support_fill(f->b[i], D, seed + 5 + (unsigned)i);
    }
    for (int i = 0; i < N * N; i++)
        f->cells[i] = (i % 3 != 1) || i / N == i % N;
    f->in = (attention_input){ .n_tokens = N, .tokens = fixture_labels, .n_source = N, .d_model = D,
                               .heads = 2, .embeddings = f->x, .W_Q = f->w[0], .W_K = f->w[1],
                               .W_V = f->w[2], .W_O = f->w[3], .mask = mask, .scale = true,
                               .rope_base = 10000.0, .window = 2,
                               .mask_cells = mask == MASK_EXPLICIT ? f->cells : NULL };
}

/* The recurrence from its definition, for one head and row: m and l after each tile. */
static void recurrence(const trace *t, int head, int row, int tile, double *m, double *l)
{
    double max = -INFINITY, sum = 0.0;
    for (int b = 0, first = 0; first < t->m; b++, first += tile) {
        double new_max = max;
        for (int j = first; j < first + tile && j < t->m; j++)
            if (!trace_is_hidden(t, row, j))
                new_max = fmax(new_max, trace_value(t, STAGE_MASKED, head, row, j));
        if (new_max > -INFINITY) {
            sum *= exp(max - new_max);
            for (int j = first; j < first + tile && j < t->m; j++)
                if (!trace_is_hidden(t, row, j))
                    sum += exp(trace_value(t, STAGE_MASKED, head, row, j) - new_max);
        }
        max = new_max;
        m[b] = max;
        l[b] = sum;
    }
}

static void assert_near(double expected, double actual, double tolerance)
{
    if (isinf(expected)) {
        assert_true(expected == actual);
        return;
    }
    if (!(fabs(expected - actual) <= tolerance * fmax(1.0, fabs(expected)))) {
        fprintf(stderr, "expected %.17g, got %.17g\n", expected, actual);
        fail();
    }
}

/* Every mask, every tile size from one key to more than all of them: running_max and
 * running_sum follow the recurrence, the weights and context agree with the ordinary softmax
 * within 1e-12, and the trace's reported difference is that largest difference. */
static void test_online_matches_ordinary(void **state)
{
    (void)state;
    mask_kind masks[] = { MASK_NONE, MASK_CAUSAL, MASK_WINDOW, MASK_EXPLICIT };
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++)
        for (int tile = 1; tile <= N + 1; tile++) {
            fixture f;
            make_fixture(&f, masks[k], 7 + (unsigned)k);
            trace ordinary, online;
            fixture_compute(&f.in, &ordinary);
            assert_false(trace_has_stage(&ordinary, STAGE_RUNNING_SUM));
            assert_true(trace_online_difference(&ordinary) == 0.0);
            f.in.online_softmax = true;
            f.in.tile = tile;
            fixture_compute(&f.in, &online);
            int tiles = (N + tile - 1) / tile;
            assert_int_equal(trace_cols(&online, STAGE_RUNNING_MAX), tiles);
            double largest = 0.0;
            for (int h = 1; h <= 2; h++)
                for (int i = 0; i < N; i++) {
                    double m[N + 1], l[N + 1];
                    recurrence(&online, h, i, tile, m, l);
                    for (int b = 0; b < tiles; b++) {
                        assert_true(m[b] == trace_value(&online, STAGE_RUNNING_MAX, h, i, b));
                        assert_near(l[b], trace_value(&online, STAGE_RUNNING_SUM, h, i, b), 1e-14);
                    }
                    for (int j = 0; j < N; j++) {
                        double a = trace_value(&ordinary, STAGE_WEIGHTS, h, i, j),
                               b = trace_value(&online, STAGE_WEIGHTS, h, i, j);
                        largest = fmax(largest, fabs(a - b));
                        assert_true(trace_is_hidden(&online, i, j) ? b == 0.0 : b > 0.0);
                    }
                    for (int c = 0; c < online.d_k; c++) {
                        double a = trace_value(&ordinary, STAGE_CONTEXT, h, i, c),
                               b = trace_value(&online, STAGE_CONTEXT, h, i, c);
                        largest = fmax(largest, fabs(a - b));
                    }
                }
            assert_true(largest <= 1e-12);
            assert_true(trace_online_difference(&online) == largest);
            trace_free(&ordinary);
            trace_free(&online);
        }
}

/* A row that has seen only hidden keys keeps m = −∞ and l = 0: under a window of 2 the last
 * row's first tiles of 2 are all hidden. */
static void test_hidden_tiles_keep_minus_infinity(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_WINDOW, 3);
    f.in.online_softmax = true;
    f.in.tile = 2;
    trace t;
    fixture_compute(&f.in, &t);
    for (int b = 0; b < 2; b++) {
        assert_true(trace_value(&t, STAGE_RUNNING_MAX, 1, N - 1, b) == -INFINITY);
        assert_true(trace_value(&t, STAGE_RUNNING_SUM, 1, N - 1, b) == 0.0);
    }
    assert_true(isfinite(trace_value(&t, STAGE_RUNNING_MAX, 1, N - 1, 2)));
    assert_true(trace_value(&t, STAGE_RUNNING_SUM, 1, N - 1, 2) >= 1.0);
    char text[2048];
    trace_cell_explain(&t, &(trace_cell){ STAGE_RUNNING_SUM, 1, N - 1, 0 }, 4, text,
                       sizeof text);
    assert_non_null(strstr(text, "running_max is −∞"));
    trace_cell_explain(&t, &(trace_cell){ STAGE_RUNNING_MAX, 1, N - 1, 1 }, 4, text,
                       sizeof text);
    assert_non_null(strstr(text, "every key of the tile is hidden"));
    trace_free(&t);
}

/* A running_sum cell after the first tile shows the rescale factor with its numbers; a weight
 * names the last tile's running max and sum. */
static void test_explanations(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_NONE, 5);
    f.in.online_softmax = true;
    f.in.tile = 3;
    trace t;
    fixture_compute(&f.in, &t);
    char text[4096], factor[64];
    trace_cell_explain(&t, &(trace_cell){ STAGE_RUNNING_SUM, 2, 4, 1 }, 4, text, sizeof text);
    assert_non_null(strstr(text, "running_sum[e,1] (head 2) = running_sum[e,0] × exp("
                                 "running_max[e,0] − running_max[e,1])"));
    assert_non_null(strstr(text, "(the rescale factor exp("));
    double rescale = exp(trace_value(&t, STAGE_RUNNING_MAX, 2, 4, 0)
                         - trace_value(&t, STAGE_RUNNING_MAX, 2, 4, 1));
    number_write(rescale, &(number_format){ NUMBER_SHORT, 4, 0, false }, factor, sizeof factor);
    strcat(factor, " (the rescale factor");
    assert_non_null(strstr(text, factor));
    assert_non_null(strstr(text, "over masked[e,d…f]"));
    trace_cell_explain(&t, &(trace_cell){ STAGE_WEIGHTS, 1, 0, 6 }, 4, text, sizeof text);
    assert_non_null(strstr(text, "/ running_sum[a,2]"));
    trace_free(&t);
}

/* The core refuses a tile below 1. */
static void test_core_refuses_empty_tiles(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_NONE, 1);
    f.in.online_softmax = true;
    f.in.tile = 0;
    trace t;
    assert_int_equal(trace_compute(&f.in, NULL, &t, NULL), TRACE_ERROR_SHAPE);
}

/* ---- decoding with a KV cache ---- */

static void assert_same_bits(double expected, double actual)
{
    if (memcmp(&expected, &actual, sizeof expected) != 0) {
        fprintf(stderr, "expected %.17g, decoded %.17g\n", expected, actual);
        fail();
    }
}

/* Decodes every token of f's input and holds each row to the trace's, bit for bit: the q, k
 * and v rows (turned, with RoPE), in each head the scores and weights of the keys in the cache
 * (the trace's later weights are exactly 0), running_max and running_sum over the cache's tiles
 * (with the online softmax) and the context row, the concat and output rows. */
static void check_decode(const attention_input *in, const trace_options *options)
{
    trace t;
    assert_int_equal(trace_compute(in, options, &t, NULL), TRACE_OK);
    assert_true(decode_supported(&t));
    decode_state d;
    assert_true(decode_begin(&d, &t));
    stage_id rows[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_Q_ROTATED, STAGE_K_ROTATED,
                        STAGE_RUNNING_MAX, STAGE_RUNNING_SUM, STAGE_CONTEXT, STAGE_CONCAT,
                        STAGE_OUTPUT };
    for (int p = 0; p < t.n; p++) {
        decode_token(&d, options);
        assert_int_equal(d.length, p + 1);
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
            if (!trace_has_stage(&t, rows[k]))
                continue;
            bool tiles = stage_get(rows[k])->cols == AXIS_TILES;
            int cols = tiles ? p / t.in->tile + 1 : trace_cols(&t, rows[k]);
            for (int h = 1; h <= (stage_get(rows[k])->per_head ? t.heads : 1); h++)
                for (int c = 0; c < cols; c++)
                    assert_same_bits(trace_value(&t, rows[k], h, p, c),
                                     decode_value(&d, rows[k], h, p, c));
        }
        for (int h = 1; h <= t.heads; h++)
            for (int j = 0; j < t.n; j++) {
                if (j <= p)
                    assert_same_bits(trace_value(&t, STAGE_SCORES, h, p, j),
                                     decode_value(&d, STAGE_SCORES, h, p, j));
                assert_same_bits(trace_value(&t, STAGE_WEIGHTS, h, p, j),
                                 j <= p ? decode_value(&d, STAGE_WEIGHTS, h, p, j) : 0.0);
            }
    }
    decode_free(&d);
    trace_free(&t);
}

/* Under a causal mask and a window, with and without ALiBi, scaling, shared key/value heads,
 * RoPE, the online softmax (tiles of 2 and of 3 keys: several tiles per row, the last one cut
 * short) and biases (b_Q, b_K, b_V, b_O), on the vector and the portable code: the decoded rows
 * are the trace's. */
static void test_decode_is_the_causal_trace(void **state)
{
    (void)state;
    static const trace_options fast = { 1, false }, portable = { 1, true };
    for (int variant = 0; variant < 192; variant++) {
        fixture f;
        make_fixture(&f, variant % 2 ? MASK_WINDOW : MASK_CAUSAL, 40 + (unsigned)variant);
        f.in.alibi = variant / 2 % 2;
        f.in.scale = variant / 4 % 2;
        f.in.kv_heads = variant / 8 % 2 ? 1 : 0;
        f.in.rope = variant / 16 % 2;
        f.in.online_softmax = variant / 32 % 3 > 0;  /* 0: ordinary; 1: tiles of 2; 2: of 3 */
        f.in.tile = variant / 32 % 3 + 1;
        if (f.in.kv_heads == 1) {  /* W_K and W_V read as d_model × d_k */
            f.in.W_K = f.w[1];
            f.in.W_V = f.w[2];
        }
        if (variant / 96) {  /* b_K and b_V have kv_heads · d_k numbers: the first ones */
            f.in.b_Q = f.b[0];
            f.in.b_K = f.b[1];
            f.in.b_V = f.b[2];
            f.in.b_O = f.b[3];
        }
        check_decode(&f.in, &fast);
        check_decode(&f.in, &portable);
    }
}

/* The work of one token with the cache grows by a constant per token (linear); without it, by
 * a growing amount (quadratic). */
static void test_decode_counts(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_CAUSAL, 2);
    trace t;
    fixture_compute(&f.in, &t);
    /* q, k, v and output: 4 · 4 · 4 multiplications; scores and context: 2 heads × 2 × d_k = 8
     * per cached key */
    assert_int_equal(decode_token_multiplications(&t, 0), 64 + 8);
    assert_int_equal(decode_token_multiplications(&t, 5), 64 + 6 * 8);
    assert_int_equal(decode_prefix_multiplications(&t, 2), 3 * 64 + (1 + 2 + 3) * 8);
    trace_free(&t);
    f.in.rope = true;   /* turning q and k: 2 multiplications for each of their 4 + 4 numbers */
    fixture_compute(&f.in, &t);
    assert_int_equal(decode_token_multiplications(&t, 5), 64 + 16 + 6 * 8);
    fixture cross;
    make_fixture(&cross, MASK_NONE, 2);
    trace unmasked;
    fixture_compute(&cross.in, &unmasked);
    assert_false(decode_supported(&unmasked));
    trace_free(&unmasked);
    trace_free(&t);
}

/* The time axis: for each token its q, k, v, each head's scores, weights and context, and its
 * output, all at its position; K and V show the cache (rows 0 … p), the others row p. */
static void test_decode_walk(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_CAUSAL, 4);
    f.in.decode = true;
    trace t;
    fixture_compute(&f.in, &t);
    walk w;
    assert_true(walk_build_decode(&w, &t));
    assert_int_equal(w.count, N * (3 + 3 * 2 + 1));
    stage_id order[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_SCORES, STAGE_WEIGHTS, STAGE_CONTEXT,
                         STAGE_SCORES, STAGE_WEIGHTS, STAGE_CONTEXT, STAGE_OUTPUT };
    for (int k = 0; k < w.count; k++) {
        const walk_step *step = &w.steps[k];
        assert_int_equal(step->stage, order[k % 10]);
        assert_int_equal(step->position, k / 10);
        assert_int_equal(step->head, k % 10 >= 6 && k % 10 <= 8 ? 2 : 1);
        int first, end;
        walk_step_rows(&t, step, &first, &end);
        bool cache = step->stage == STAGE_K || step->stage == STAGE_V;
        assert_int_equal(first, cache ? 0 : step->position);
        assert_int_equal(end, step->position + 1);
        assert_false(walk_repeats_matrix(&w, k));
    }
    walk_free(&w);
    trace_free(&t);
    /* with RoPE, the turned Q and K (the cache of turned keys) after V; with the online
     * softmax, running_max and running_sum between scores and weights, over the cache's tiles */
    f.in.rope = true;
    f.in.online_softmax = true;
    f.in.tile = 3;
    fixture_compute(&f.in, &t);
    assert_true(walk_build_decode(&w, &t));
    assert_int_equal(w.count, N * (5 + 5 * 2 + 1));
    stage_id modern[] = { STAGE_Q, STAGE_K, STAGE_V, STAGE_Q_ROTATED, STAGE_K_ROTATED,
                          STAGE_SCORES, STAGE_RUNNING_MAX, STAGE_RUNNING_SUM, STAGE_WEIGHTS,
                          STAGE_CONTEXT, STAGE_SCORES, STAGE_RUNNING_MAX, STAGE_RUNNING_SUM,
                          STAGE_WEIGHTS, STAGE_CONTEXT, STAGE_OUTPUT };
    for (int k = 0; k < w.count; k++) {
        const walk_step *step = &w.steps[k];
        assert_int_equal(step->stage, modern[k % 16]);
        assert_int_equal(step->position, k / 16);
        assert_int_equal(step->head, k % 16 >= 10 && k % 16 <= 14 ? 2 : 1);
        int first, end;
        walk_step_rows(&t, step, &first, &end);
        bool cache = step->stage == STAGE_K || step->stage == STAGE_V
                     || step->stage == STAGE_K_ROTATED;
        assert_int_equal(first, cache ? 0 : step->position);
        walk_step_cols(&t, step, &first, &end);
        bool tiles = step->stage == STAGE_RUNNING_MAX || step->stage == STAGE_RUNNING_SUM;
        if (tiles)
            assert_int_equal(end, step->position / 3 + 1);
    }
    walk_step whole = { STAGE_SCORES, 1, WALK_WHOLE, -1, 0 };
    int first, end;
    walk_step_rows(&t, &whole, &first, &end);
    assert_true(first == 0 && end == N);
    walk_free(&w);
    trace_free(&t);
}

/* --stats of a decoding lesson with one key/value head of two: the KV cache against full
 * multi-head attention, and one row per token of the work with and without the cache. */
static void test_stats_of_decoding(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_CAUSAL, 9);
    f.in.kv_heads = 1;
    f.in.decode = true;
    trace t;
    fixture_compute(&f.in, &t);
    support_capture capture;
    assert_int_equal(stats_print(&t, NULL, SUPPORT_MIN_SECONDS, "decoding",
                                 support_capture_begin(&capture)), 0);
    char *text = support_capture_end(&capture);
    /* 7 rows of K and V, 2 numbers each: 2 × 7 × 2 × 8 bytes; full: 4 numbers a row */
    assert_non_null(strstr(text, "KV cache: K and V, 7 rows of 2 numbers each = 224 B;\n"
                                 "full multi-head attention would keep 4 numbers a row = 448 B "
                                 "(kv_heads 1 of 2 heads: 1/2)."));
    char row[128];
    for (int p = 0; p < N; p++) {
        snprintf(row, sizeof row, "\n%5d%16llu%24llu\n", p, decode_token_multiplications(&t, p),
                 decode_prefix_multiplications(&t, p));
        assert_non_null(strstr(text, row));
    }
    assert_non_null(strstr(text, "Measured for the last token (t = 6): "));
    free(text);
    trace_free(&t);
}

/* --cost --decode on a small shape: one row per n from 16 to the last, the counted work of one
 * token growing less than twice per doubling with the cache and more than twice without. */
static void test_cost_of_decoding(void **state)
{
    (void)state;
    support_capture capture;
    assert_int_equal(stats_cost_decode(8, 2, NULL, SUPPORT_MIN_SECONDS,
                                       support_capture_begin(&capture)), 0);
    char *text = support_capture_end(&capture);
    int rows = 0;
    for (const char *line = text; line; line = strchr(line, '\n')) {
        line += *line == '\n';
        int n;
        char cached[16], prefix[16];
        if (sscanf(line, "%d %*s %15s %*s %*s %*s %*s %15s", &n, cached, prefix) == 3 && n > 16) {
            size_t times = strlen("×");
            assert_true(strncmp(cached, "×", times) == 0 && strncmp(prefix, "×", times) == 0);
            double with_cache = atof(cached + times), without = atof(prefix + times);
            assert_true(with_cache > 1.0 && with_cache < 2.0);
            assert_true(without > 2.0 && without < 4.0);
            rows++;
        }
    }
    assert_int_equal(rows, 6);  /* n = 32 … 1024 after n = 16 */
    assert_non_null(strstr(text, "Measured here, per doubling of n on average: ×"));
    free(text);
}

#define TOKENS \
    "title: t\n" \
    "tokens: [a, b, a, c]\n" \
    "embeddings:\n" \
    "  a: [1, 0]\n" \
    "  b: [0, 1]\n" \
    "  c: [1, 1]\n"

static void test_lesson_keys(void **state)
{
    (void)state;
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(TOKENS "softmax: online\ntile: 3\nsteps:\n"
                                         "  - stage: running_sum\n    focus: [c, 1]\n", &l,
                                         message, sizeof message), LESSON_OK);
    assert_true(l.input.online_softmax);
    assert_int_equal(l.input.tile, 3);
    assert_int_equal(l.steps[0].focus_col, 1);
    lesson_free(&l);
    assert_int_equal(fixture_load_status(TOKENS "softmax: ordinary\n", &l, message,
                                         sizeof message), LESSON_OK);
    assert_false(l.input.online_softmax);
    lesson_free(&l);
    fixture_refused(TOKENS "softmax: flash\n", "softmax must be ordinary or online, not 'flash'");
    fixture_refused(TOKENS "tile: 2\n", "'tile' needs 'softmax: online'");
    fixture_refused(TOKENS "softmax: online\n", "'softmax: online' needs 'tile: B'");
    fixture_refused(TOKENS "softmax: online\ntile: 0\n", "tile must be a whole number from 1");
    fixture_refused(TOKENS "steps:\n  - stage: running_max\n",
                    "stage 'running_max' exists only with 'softmax: online'");
    fixture_refused(TOKENS "softmax: online\ntile: 3\nsteps:\n  - stage: running_sum\n"
                    "    focus: [c, 2]\n", "focus column '2' is not one of the columns");
}

/* A decoding lesson's walk: without a script it is the time axis (walk_build_decode); a script
 * step with position: shows that token's part of its stage, in a word or an index; a step
 * without one shows the whole matrix. */
static void test_decoding_walk_from_a_lesson(void **state)
{
    (void)state;
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(TOKENS "mask: causal\ndecode: true\n", &l, message,
                                         sizeof message), LESSON_OK);
    trace t;
    fixture_compute(&l.input, &t);
    walk w, decode;
    assert_true(lesson_walk(&l, &t, &w));
    assert_true(walk_build_decode(&decode, &t));
    assert_int_equal(w.count, decode.count);
    assert_int_equal(w.count, 4 * 7);
    for (int k = 0; k < w.count; k++)
        assert_memory_equal(&w.steps[k], &decode.steps[k], sizeof w.steps[k]);
    walk_free(&w);
    walk_free(&decode);
    assert_true(walk_build_pipeline(&w, &t));   /* --json and --csv keep whole matrices */
    for (int k = 0; k < w.count; k++)
        assert_int_equal(w.steps[k].position, WALK_WHOLE);
    walk_free(&w);
    trace_free(&t);
    lesson_free(&l);

    assert_int_equal(fixture_load_status(TOKENS "mask: causal\ndecode: true\nsteps:\n"
                          "  - stage: scores\n    position: b\n    focus: [b, a@0]\n"
                          "  - stage: V\n    position: 2\n    focus: [b, 1]\n"
                          "  - stage: weights\n", &l, message, sizeof message), LESSON_OK);
    assert_int_equal(l.steps[0].token, 2);
    assert_int_equal(l.steps[1].token, 3);
    assert_int_equal(l.steps[2].token, 0);
    fixture_compute(&l.input, &t);
    assert_true(lesson_walk(&l, &t, &w));
    assert_int_equal(w.count, 3);
    int expect_position[] = { 1, 2, WALK_WHOLE };
    int expect_rows[][2] = { { 1, 2 }, { 0, 3 }, { 0, 4 } };
    int expect_cols[][2] = { { 0, 2 }, { 0, 2 }, { 0, 4 } };
    for (int k = 0; k < 3; k++) {
        int first, end;
        assert_int_equal(w.steps[k].position, expect_position[k]);
        assert_int_equal(w.steps[k].narration, k);
        walk_step_rows(&t, &w.steps[k], &first, &end);
        assert_true(first == expect_rows[k][0] && end == expect_rows[k][1]);
        walk_step_cols(&t, &w.steps[k], &first, &end);
        assert_true(first == expect_cols[k][0] && end == expect_cols[k][1]);
    }
    walk_free(&w);
    /* a mark with a token on a trace that does not decode is not placed (the loader refuses
     * it: 'position' needs 'decode: true') */
    attention_input in = l.input;
    in.decode = false;
    trace plain;
    fixture_compute(&in, &plain);
    walk_mark marks[] = { { STAGE_SCORES, 0, 2, 0 }, { STAGE_OUTPUT, 0, 0, 0 } };
    assert_true(walk_build(&w, &plain, marks, 2));
    assert_int_equal(w.count, 1);
    assert_int_equal(w.steps[0].stage, STAGE_OUTPUT);
    walk_free(&w);
    trace_free(&plain);
    trace_free(&t);
    lesson_free(&l);
    fixture_refused(TOKENS "mask: causal\nsteps:\n  - stage: Q\n    position: a\n",
                    "'position' needs 'decode: true'");
    fixture_refused(TOKENS "mask: causal\ndecode: true\nsteps:\n  - stage: Q\n    position: 4\n",
                    "position '4' is not one of the tokens (a token, or an index from 0 to 3)");
    fixture_refused(TOKENS "mask: causal\ndecode: true\nsteps:\n  - stage: K\n"
                    "    position: b\n    focus: [c, 0]\n",
                    "the focus is not shown at this position: at position 'b', stage 'K' shows "
                    "the cache's rows up to that token");
}

/* The online softmax's context, counted as it is computed: a fused multiply-add of d_k numbers
 * per visible key, d_k multiplications per row and tile (the rescale) and d_k divisions per row
 * (by l_T), instead of the ordinary product's m terms per cell. */
static void test_cost_of_online_context(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_CAUSAL, 5);
    trace t;
    fixture_compute(&f.in, &t);
    cost_counts ordinary = { 0 };
    cost_stage(&t, STAGE_CONTEXT, &ordinary);
    /* 2 heads × 7 rows × d_k 2 cells of 7 terms */
    assert_int_equal(ordinary.multiplications, 28 * 7);
    assert_int_equal(ordinary.additions, 28 * 6);
    assert_int_equal(ordinary.divisions, 0);
    trace_free(&t);
    f.in.online_softmax = true;
    f.in.tile = 2;
    fixture_compute(&f.in, &t);
    cost_counts online = { 0 };
    cost_stage(&t, STAGE_CONTEXT, &online);
    /* 2 heads × 28 visible keys (causal, 7 tokens) × d_k 2, plus 2 heads × 7 rows × 4 tiles × 2
     * rescales; 2 heads × 7 rows × 2 divisions */
    assert_int_equal(online.multiplications, 2 * 28 * 2 + 2 * 7 * 4 * 2);
    assert_int_equal(online.additions, 2 * 28 * 2);
    assert_int_equal(online.divisions, 2 * 7 * 2);
    trace_free(&t);
}

/* The window's visible cells (one byte per query and key, allocated beside the blocks) are in
 * trace_bytes_needed, so the 1 GiB rule counts them, and --stats shows them with masked; the
 * stages' bytes still add up to it. */
static void test_bytes_of_a_window(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_WINDOW, 6);
    trace t;
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_mask_bytes(&t), N * N);
    size_t blocks = trace_positional_bytes(&t);
    for (int s = 0; s < STAGE_COUNT; s++)
        blocks += trace_stage_bytes(&t, (stage_id)s);
    assert_int_equal(trace_bytes_needed(&f.in), blocks + N * N);
    stats_table table;
    assert_true(stats_count(&t, &table));
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f.in));
    cost_counts masked;
    cost_stage(&t, STAGE_MASKED, &masked);
    assert_int_equal(masked.bytes, N * N);
    /* --stats names the window's size and shows its cells held by masked */
    support_capture capture;
    assert_int_equal(stats_print(&t, NULL, SUPPORT_MIN_SECONDS, "a window",
                                 support_capture_begin(&capture)), 0);
    char *text = support_capture_end(&capture);
    assert_non_null(strstr(text, "d_k = 2, sliding window of W = 2 keys, scores scaled by 1/√d_k\n"));
    assert_non_null(strstr(text, "\nmasked "));
    assert_non_null(strstr(strstr(text, "\nmasked "), " 49 B "));
    free(text);
    trace_free(&t);
    make_fixture(&f, MASK_CAUSAL, 6);   /* the causal rule needs no cells */
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_mask_bytes(&t), 0);
    trace_free(&t);
}

/* What a stage reads follows the lesson, from the row's alternatives: the UI's "made from" and
 * the worksheet's withholding read it. */
static void test_inputs_follow_the_lesson(void **state)
{
    (void)state;
    fixture f;
    make_fixture(&f, MASK_CAUSAL, 7);
    trace t;
    char text[64];
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_stage_inputs(&t, STAGE_SCORES, text, sizeof text), 4);
    assert_string_equal(text, "Q, K");
    trace_stage_inputs(&t, STAGE_MASKED, text, sizeof text);
    assert_string_equal(text, "scaled, mask");
    trace_stage_inputs(&t, STAGE_CONTEXT, text, sizeof text);
    assert_string_equal(text, "weights, V");
    trace_free(&t);
    f.in.rope = true;
    f.in.alibi = true;
    fixture_compute(&f.in, &t);
    assert_int_equal(trace_stage_inputs(&t, STAGE_SCORES, NULL, 0), 20);
    assert_int_equal(trace_stage_inputs(&t, STAGE_SCORES, text, 8), 20);   /* cut, as snprintf */
    assert_string_equal(text, "Q_rotat");
    trace_stage_inputs(&t, STAGE_SCORES, text, sizeof text);
    assert_string_equal(text, "Q_rotated, K_rotated");
    trace_stage_inputs(&t, STAGE_MASKED, text, sizeof text);
    assert_string_equal(text, "biased, mask");
    trace_free(&t);
}

/* The number of diagnostics lesson_check gives text (with warnings) that contain `words`. */
static int checked(const char *text, const char *words)
{
    lesson l;
    char message[512];
    assert_int_equal(fixture_load_status(text, &l, message, sizeof message), LESSON_OK);
    trace t;
    fixture_compute(&l.input, &t);
    lesson_diagnostics d;
    lesson_check(&l, &t, true, &d);
    int count = 0;
    for (int i = 0; i < d.count; i++)
        count += strstr(d.items[i].message, words) != NULL;
    lesson_diagnostics_free(&d);
    trace_free(&t);
    lesson_free(&l);
    return count;
}

/* A question is given away by an earlier step that shows its focus cell: at a decoding step,
 * only the token's part is shown, so an earlier token's row of the same stage gives nothing. */
static void test_questions_at_positions(void **state)
{
    (void)state;
    static const char *const earlier[] = { "    position: b\n", "    position: 3\n", "" };
    static const int leaks[] = { 0, 1, 1 };   /* row b; row c (index 3), the question's; all */
    for (int i = 0; i < 3; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s  - stage: scores\n%s  - stage: scores\n"
                 "    position: c\n    focus: [c, a@0]\n    ask: Which key?\n"
                 "    choices: [a, b, c]\n    answer: auto\n",
                 TOKENS "mask: causal\ndecode: true\nsteps:\n", earlier[i]);
        assert_int_equal(checked(text, "already on screen"), leaks[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_online_matches_ordinary),
        cmocka_unit_test(test_hidden_tiles_keep_minus_infinity),
        cmocka_unit_test(test_explanations),
        cmocka_unit_test(test_core_refuses_empty_tiles),
        cmocka_unit_test(test_lesson_keys),
        cmocka_unit_test(test_decode_is_the_causal_trace),
        cmocka_unit_test(test_decode_counts),
        cmocka_unit_test(test_decode_walk),
        cmocka_unit_test(test_decoding_walk_from_a_lesson),
        cmocka_unit_test(test_stats_of_decoding),
        cmocka_unit_test(test_cost_of_decoding),
        cmocka_unit_test(test_cost_of_online_context),
        cmocka_unit_test(test_bytes_of_a_window),
        cmocka_unit_test(test_inputs_follow_the_lesson),
        cmocka_unit_test(test_questions_at_positions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
