/* The counting formulas of --stats against counts worked out by hand for small shapes, the bytes
 * against trace_bytes_needed, and the table's rows against the pipeline walk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "fixtures.h"
#include "trace.h"
#include "stats.h"
#include "walk.h"

static const char *const tokens[] = { "a", "b", "c" };
static const char *const source_tokens[] = { "x", "y", "z" };

/* A trace of a small shape, made by set_up from the shape the test is registered with
 * (traced_test) and freed by tear_down. */
typedef struct {
    double embeddings[3 * 4], source[3 * 4], weights[4 * 4 * 4], norm[2 * 4];
    attention_input in;
    trace t;
} fixture;

/* n = 3, d_model = 4, 2 heads, causal, scaled, positional encoding */
static attention_input causal_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                        .heads = 2, .mask = MASK_CAUSAL, .positional = true,
                                        .scale = true };
/* 2 queries over 3 source tokens, d_model = 2, one head, no mask, no scaling */
static attention_input cross_shape = { .n_tokens = 2, .tokens = tokens, .n_source = 3,
                                       .source = source_tokens, .d_model = 2, .heads = 1,
                                       .mask = MASK_NONE, .scale = false };
/* the same, scaled */
static attention_input cross_scaled_shape = { .n_tokens = 2, .tokens = tokens, .n_source = 3,
                                              .source = source_tokens, .d_model = 2, .heads = 1,
                                              .mask = MASK_NONE, .scale = true };
/* the causal shape's softmax taken online, in tiles of 2 keys (2 tiles: keys 0–1 and 2) */
static attention_input online_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                        .heads = 2, .mask = MASK_CAUSAL, .scale = true,
                                        .online_softmax = true, .tile = 2 };
/* n = 3, d_model = 4, 2 heads, no mask, scaled */
static attention_input unmasked_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                          .heads = 2, .mask = MASK_NONE, .scale = true };

/* causal_shape with a loss: its target */
static const double target_cells[3 * 4] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
static attention_input loss_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                      .heads = 2, .mask = MASK_CAUSAL, .positional = true,
                                      .scale = true, .target = target_cells };

/* the loss shape with one key/value head (W_K, W_V of 4 × 2), a layer norm before attention
 * and the residual */
static attention_input norm_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                      .heads = 2, .kv_heads = 1, .mask = MASK_CAUSAL,
                                      .scale = true, .target = target_cells, .norm = NORM_LAYER,
                                      .norm_eps = 1e-5, .residual = true };
/* an RMS norm after the residual, without a loss */
static attention_input post_rms_shape = { .n_tokens = 3, .tokens = tokens, .d_model = 4,
                                          .heads = 2, .mask = MASK_NONE, .scale = true,
                                          .norm = NORM_RMS, .norm_post = true,
                                          .norm_eps = 1e-5, .residual = true };

/* *state is the shape on entry (cmocka's initial state), the fixture computed from it after. */
static int set_up(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->in = *(const attention_input *)*state;
    support_fill(f->embeddings, 12, 1);
    support_fill(f->source, 12, 2);
    support_fill(f->weights, 64, 3);
    int d = f->in.d_model;
    f->in.embeddings = f->embeddings;
    f->in.W_Q = f->weights;
    f->in.W_K = f->weights + d * d;
    f->in.W_V = f->weights + 2 * d * d;
    f->in.W_O = f->weights + 3 * d * d;
    if (f->in.source)
        f->in.source_embeddings = f->source;
    if (f->in.norm != NORM_NONE) {   /* a gain, and a layer norm's bias */
        support_fill(f->norm, 8, 4);
        f->in.gain = f->norm;
        f->in.norm_bias = f->in.norm == NORM_LAYER ? f->norm + 4 : NULL;
    }
    fixture_compute(&f->in, &f->t);
    *state = f;
    return 0;
}

static int tear_down(void **state)
{
    fixture *f = *state;
    trace_free(&f->t);
    free(f);
    return 0;
}

#define traced_test(test, shape) \
    cmocka_unit_test_prestate_setup_teardown(test, set_up, tear_down, &(shape))

/* The fixture set_up made, with the table of its counts. */
static fixture *counted(void **state, stats_table *table)
{
    fixture *f = *state;
    assert_true(stats_count(&f->t, table));
    return f;
}

/* The totals of every kind of work, each counted by hand for the test's shape (not added up
 * from the rows, which is how stats_count makes them). */
static void expect_total(const stats_table *table, unsigned long long mults,
                         unsigned long long adds, unsigned long long divs,
                         unsigned long long exps, size_t bytes)
{
    const cost_counts *c = &table->total.counts;
    assert_int_equal(table->total.stage, STAGE_COUNT);
    assert_int_equal(c->multiplications, mults);
    assert_int_equal(c->additions, adds);
    assert_int_equal(c->divisions, divs);
    assert_int_equal(c->exponentials, exps);
    assert_int_equal(c->bytes, bytes);
}

static const stats_stage *find(const stats_table *table, stage_id stage)
{
    for (int s = 0; s < table->count; s++)
        if (table->stages[s].stage == stage)
            return &table->stages[s];
    fail_msg("stage %s missing", stage_get(stage)->name);
    return NULL;
}

static void expect(const stats_table *table, stage_id stage, unsigned long long mults,
                   unsigned long long adds, unsigned long long divs, unsigned long long exps,
                   size_t bytes)
{
    const cost_counts *c = &find(table, stage)->counts;
    if (c->multiplications != mults || c->additions != adds || c->divisions != divs
        || c->exponentials != exps || c->bytes != bytes) {
        print_error("%s: expected ×%llu +%llu ÷%llu exp%llu %zu B, got ×%llu +%llu ÷%llu "
                    "exp%llu %zu B\n", stage_get(stage)->name, mults, adds, divs, exps, bytes,
                    c->multiplications, c->additions, c->divisions, c->exponentials, c->bytes);
        fail();
    }
}

/* n = 3 tokens, d_model = 4, 2 heads (d_k = 2), causal, scaled, positional encoding. Counted by
 * hand: a projection is 3·4 cells of 4-term dot products (48 ×, 36 +); scores are 2 heads of 3·3
 * cells of 2 terms (36 ×, 18 +); the causal mask leaves 1 + 2 + 3 = 6 visible cells per head, so
 * the softmax does 6 subtractions, 6 exp and 6 − 3 additions for the sums per head, and divides
 * all 9 cells; context is 2 heads of 3·2 cells of 3 terms (36 ×, 24 +). */
static void test_counts_of_a_causal_lesson(void **state)
{
    stats_table table;
    fixture *f = counted(state, &table);
    expect(&table, STAGE_INPUT, 0, 12, 0, 0, 96 + 96); /* input and the PE table */
    expect(&table, STAGE_Q, 48, 36, 0, 0, 96);
    expect(&table, STAGE_K, 48, 36, 0, 0, 96);
    expect(&table, STAGE_V, 48, 36, 0, 0, 96);
    expect(&table, STAGE_SCORES, 36, 18, 0, 0, 144);
    expect(&table, STAGE_SCALED, 0, 0, 18, 0, 0);
    expect(&table, STAGE_MASKED, 0, 0, 0, 0, 0);
    expect(&table, STAGE_WEIGHTS, 0, 2 * (6 + 3), 18, 12, 144);
    expect(&table, STAGE_CONTEXT, 36, 24, 0, 0, 96);
    expect(&table, STAGE_CONCAT, 0, 0, 0, 0, 96);
    expect(&table, STAGE_OUTPUT, 48, 36, 0, 0, 96);
    /* the totals from the shape: the four projections, then scores and context; the PE
     * additions, the projections' and the attention's; the scaling of 2·9 scores and the
     * softmax's 2·9 divisions; 2·6 exponentials; stored, at 8 bytes a number: 8 matrices of
     * 12 numbers (input, the PE table, Q, K, V, context's 2 heads of 3·2, concat, output) and
     * scores and weights, 2 heads of 3·3 each */
    expect_total(&table, 4 * 48 + 36 + 36, 12 + 4 * 36 + 18 + 2 * (6 + 3) + 24, 2 * 9 + 2 * 9,
                 2 * 6, (8 * 12 + 2 * 2 * 9) * 8);
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f->in));
    const stats_stage *scores = find(&table, STAGE_SCORES);
    assert_int_equal(scores->heads, 2);
    assert_int_equal(scores->rows, 3);
    assert_int_equal(scores->cols, 3);
}

/* The online softmax (FlashAttention's recurrence) on the causal shape, tiles of 2 keys, counted
 * from the recurrence as a reader would do it by hand: per head, row and tile the running max
 * is a comparison (no arithmetic) and the running sum is rescaled, l·exp(m_old − m_new): one
 * subtraction, one exp and one multiplication, 2 heads × 3 rows × 2 tiles = 12 of each; per
 * visible key (1 + 2 + 3 = 6 a head, 12 in all) the sum adds exp(s − m): one subtraction, one
 * exp, one addition. The weights then take exp(s − m) of each visible cell again (12
 * subtractions, 12 exp) and divide all 2·9 cells by the sum: no sums of their own. The running
 * max and sum are stored per head, row and tile: 2·3·2 numbers each. */
static void test_counts_of_the_online_softmax(void **state)
{
    stats_table table;
    fixture *f = counted(state, &table);
    expect(&table, STAGE_RUNNING_MAX, 0, 0, 0, 0, 2 * 3 * 2 * 8);
    expect(&table, STAGE_RUNNING_SUM, 12, 2 * 12 + 12, 0, 12 + 12, 2 * 3 * 2 * 8);
    expect(&table, STAGE_WEIGHTS, 0, 12, 18, 12, 144);
    expect(&table, STAGE_SCORES, 36, 18, 0, 0, 144);   /* as in the ordinary softmax */
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f->in));
}

/* Cross-attention: 2 queries over 3 source tokens, d_model = 2, one head, no mask, no scaling,
 * no positional encoding. K and V project 3 rows (12 ×, 6 +); scores are 2·3 cells of 2 terms;
 * all 6 cells visible: 6 subtractions and 2·(3 − 1) sum additions; context is 2·2 cells of 3
 * terms (12 ×, 8 +). */
static void test_counts_of_cross_attention(void **state)
{
    stats_table table;
    fixture *f = counted(state, &table);
    assert_int_equal(table.stages[0].stage, STAGE_SOURCE_INPUT);
    expect(&table, STAGE_SOURCE_INPUT, 0, 0, 0, 0, 48);
    expect(&table, STAGE_INPUT, 0, 0, 0, 0, 32);
    expect(&table, STAGE_Q, 8, 4, 0, 0, 32);
    expect(&table, STAGE_K, 12, 6, 0, 0, 48);
    expect(&table, STAGE_V, 12, 6, 0, 0, 48);
    expect(&table, STAGE_SCORES, 12, 6, 0, 0, 48);
    expect(&table, STAGE_SCALED, 0, 0, 0, 0, 0);
    expect(&table, STAGE_WEIGHTS, 0, 10, 6, 6, 48);
    expect(&table, STAGE_CONTEXT, 12, 8, 0, 0, 32);
    expect(&table, STAGE_CONCAT, 0, 0, 0, 0, 32);
    expect(&table, STAGE_OUTPUT, 8, 4, 0, 0, 32);
    /* the totals from the shape: Q and output project 2 rows, K and V 3 (2 terms a cell),
     * scores 2·3 cells and context 2·2 cells of 3 terms; 6 softmax subtractions, 2·2 sum
     * additions; 6 divisions and 6 exponentials; stored: the 3·2 source, K, V, scores and
     * weights, the 2·2 input, Q, context, concat (one head's, kept all the same) and output */
    expect_total(&table, 8 + 12 + 12 + 12 + 12 + 8, 4 + 6 + 6 + 6 + (6 + 4) + 8 + 4, 6, 6,
                 5 * 6 * 8 + 5 * 4 * 8);
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f->in));
}

/* One row per stage of the pipeline walk, in its order, each name once. */
static void test_rows_follow_the_walk(void **state)
{
    stats_table table;
    fixture *f = counted(state, &table);
    int present = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        present += trace_has_stage(&f->t, (stage_id)s);
    int with_loss = 0;   /* the loss and the gradients: the fixture has no target */
    for (int s = 0; s < STAGE_COUNT; s++)
        with_loss += stage_get((stage_id)s)->presence == PRESENT_WITH_LOSS;
    /* all but source_input, RoPE's, ALiBi's, the online softmax's, the norm's and the
     * residual's (normed twice: before Q and after the residual), dropout's two, the two of
     * contributions, and the loss's */
    assert_int_equal(present, STAGE_COUNT - 6 - 3 - 4 - with_loss);
    assert_int_equal(table.count, present);
    walk w;
    assert_true(walk_build(&w, &f->t, NULL, 0));
    int row = 0;
    for (int k = 0; k < w.count; k++)
        if (w.steps[k].head == 1)
            assert_int_equal(table.stages[row++].stage, w.steps[k].stage);
    assert_int_equal(row, table.count);
    walk_free(&w);
}

/* Doubling n quadruples the multiplications of scores and context, exactly. */
static void test_doubling_n_quadruples_the_attention_work(void **state)
{
    (void)state;
    int d = 8, heads = 2;
    double *embeddings = malloc(64 * (size_t)d * sizeof(double));
    double *weights = malloc(4 * (size_t)d * (size_t)d * sizeof(double));
    const char **labels = malloc(64 * sizeof *labels);
    assert_non_null(embeddings);
    assert_non_null(weights);
    assert_non_null(labels);
    support_fill(embeddings, 64 * (size_t)d, 4);
    support_fill(weights, 4 * (size_t)d * (size_t)d, 5);
    for (int i = 0; i < 64; i++)
        labels[i] = "w";
    unsigned long long before = 0, projections_before = 0;
    for (int n = 4; n <= 64; n *= 2) {
        attention_input in = { .n_tokens = n, .tokens = labels, .d_model = d, .heads = heads,
                               .embeddings = embeddings, .W_Q = weights,
                               .W_K = weights + d * d, .W_V = weights + 2 * d * d,
                               .W_O = weights + 3 * d * d, .mask = MASK_NONE, .scale = true };
        trace t;
        fixture_compute(&in, &t);
        stats_table table;
        assert_true(stats_count(&t, &table));
        unsigned long long quadratic = find(&table, STAGE_SCORES)->counts.multiplications
                                     + find(&table, STAGE_CONTEXT)->counts.multiplications;
        unsigned long long projections = find(&table, STAGE_Q)->counts.multiplications;
        assert_int_equal(quadratic, 2ULL * (unsigned long long)(n * n * d));
        if (before) {
            assert_int_equal(quadratic, 4 * before);
            assert_int_equal(projections, 2 * projections_before);
        }
        before = quadratic;
        projections_before = projections;
        trace_free(&t);
    }
    free(embeddings);
    free(weights);
    free(labels);
}

/* Every stage gets a time, and so does the total, which is at least the longest stage's (the
 * timing leaves the counts as they were). */
static void test_times_are_measured(void **state)
{
    stats_table table;
    fixture *f = counted(state, &table);
    stats_table counts_only = table;
    assert_true(stats_time(&f->t, NULL, SUPPORT_MIN_SECONDS, &table));
    for (int s = 0; s < table.count; s++) {
        assert_true(table.stages[s].seconds > 0.0 && table.stages[s].seconds < 1.0);
        assert_true(table.total.seconds >= table.stages[s].seconds);
        assert_memory_equal(&table.stages[s].counts, &counts_only.stages[s].counts,
                            sizeof(cost_counts));
    }
    assert_true(table.total.seconds < 1.0);
    assert_memory_equal(&table.total.counts, &counts_only.total.counts, sizeof(cost_counts));
    assert_true(stats_peak_memory() > 0);
}

/* The printed table: every stage name of the lesson starts exactly one line, then the total. */
static void test_printed_table_names_each_stage_once(void **state)
{
    fixture *f = *state;
    support_capture capture;
    assert_int_equal(stats_print(&f->t, NULL, SUPPORT_MIN_SECONDS, "test lesson",
                                 support_capture_begin(&capture)), 0);
    char *text = support_capture_end(&capture);
    assert_non_null(strstr(text, "Cost of test lesson\n"));
    for (int s = 0; s < STAGE_COUNT; s++) {
        char start[32];
        snprintf(start, sizeof start, "\n%s ", stage_get((stage_id)s)->name);
        const char *first = strstr(text, start);
        if (!trace_has_stage(&f->t, (stage_id)s)) {
            assert_null(first);
            continue;
        }
        assert_non_null(first);
        assert_null(strstr(first + 1, start));
    }
    assert_non_null(strstr(text, "\ntotal "));
    assert_non_null(strstr(text, "Peak memory"));
    /* the timing said as it was asked for */
    assert_non_null(strstr(text, "of batches of runs repeated for at least 0 ms.\n"));
    free(text);
}

static void test_cost_refuses_what_exceeds_the_limit(void **state)
{
    (void)state;
    support_capture capture;
    FILE *out = support_capture_begin(&capture);
    assert_int_equal(stats_cost(20000, 8, NULL, SUPPORT_MIN_SECONDS, out), 0);
    /* heads must divide d_model */
    assert_int_equal(stats_cost(10, 3, NULL, SUPPORT_MIN_SECONDS, out), -1);
    char *text = support_capture_end(&capture);
    assert_non_null(strstr(text, "nothing computed"));
    free(text);
}

/* Seconds from a time as --cost writes it ("8.41 µs", "137 ms", "1.59 s", "850 ns"). */
static double seconds_of(const char *number, const char *unit)
{
    double value = atof(number);
    if (strcmp(unit, "s") == 0)
        return value;
    if (strcmp(unit, "ms") == 0)
        return value * 1e-3;
    if (strcmp(unit, "µs") == 0)
        return value * 1e-6;
    assert_string_equal(unit, "ns");
    return value * 1e-9;
}

/* The ratio --cost states for the attention's time is the one its own figures give: the
 * geometric mean per doubling from the first size to the last, read back from the plot's times
 * (each rounded to three digits, hence the 2 % allowed). */
static void test_cost_states_the_ratio_of_its_own_table(void **state)
{
    (void)state;
    support_capture capture;
    assert_int_equal(stats_cost(8, 2, NULL, SUPPORT_MIN_SECONDS, support_capture_begin(&capture)),
                     0);
    char *text = support_capture_end(&capture);
    double first = 0.0, last = 0.0;
    int sizes = 0;
    for (const char *line = strstr(text, "\n  n = "); line; line = strstr(line + 1, "\n  n = ")) {
        const char *end = strchr(line + 1, '\n');
        char number[32], unit[8];
        const char *space = end - 1;
        while (*space != ' ')
            space--;
        snprintf(unit, sizeof unit, "%.*s", (int)(end - space - 1), space + 1);
        const char *before = space - 1;
        while (*before != ' ')
            before--;
        snprintf(number, sizeof number, "%.*s", (int)(space - before - 1), before + 1);
        last = seconds_of(number, unit);
        if (sizes++ == 0)
            first = last;
    }
    assert_int_equal(sizes, 8);  /* n = 16 … 2048 */
    const char *stated = strstr(text, "scores, softmax and context ×");
    assert_non_null(stated);
    double ratio = atof(stated + strlen("scores, softmax and context ×"));
    double from_table = pow(last / first, 1.0 / 7.0);
    if (fabs(ratio / from_table - 1.0) > 0.02)
        fail_msg("--cost states ×%.2f per doubling, its figures give ×%.3f", ratio, from_table);
    assert_non_null(strstr(stated, "from n = 16 to 2048"));
    /* the counts' ratios are exact, and said to be */
    assert_non_null(strstr(text, "×4.00 of\nthe count columns are exact"));
    free(text);
}

/* The backward pass of loss_shape (n = m = 3, d_model = 4, 2 heads of d_k = 2, causal: 6 of a
 * head's 9 cells visible), counted by hand from the backward operations. A product's cell of k
 * terms counts k multiplications and k additions (its fused sum, and the addition into the
 * gradient block). */
static void test_counts_of_the_backward_pass(void **state)
{
    stats_table table;
    counted(state, &table);
    expect(&table, STAGE_D_OUTPUT, 0, 2 * 12, 0, 0, 96);         /* output − target, += */
    expect(&table, STAGE_D_W_O, 48, 48, 0, 0, 128);              /* concatᵀ · d_output: 4×4 of 3 */
    expect(&table, STAGE_D_CONCAT, 48, 48, 0, 0, 96);            /* d_output · W_Oᵀ: 3×4 of 4 */
    expect(&table, STAGE_D_CONTEXT, 0, 2 * 6, 0, 0, 96);         /* each head's 3×2 columns */
    expect(&table, STAGE_D_WEIGHTS, 2 * 18, 2 * 18, 0, 0, 144);  /* d_C · Vᵀ: 3×3 of 2, a head */
    expect(&table, STAGE_D_V, 2 * 18, 2 * 18, 0, 0, 96);         /* weightsᵀ · d_C: 3×2 of 3 */
    expect(&table, STAGE_D_W_V, 48, 48, 0, 0, 128);
    /* a head: each row's Σ_k w·d_w (3 × 3), then each of the 6 visible cells w·(d_w − Σ), += */
    expect(&table, STAGE_D_MASKED, 2 * (9 + 6), 2 * (9 + 12), 0, 0, 144);
    expect(&table, STAGE_D_SCALED, 0, 2 * 6, 0, 0, 144);         /* the visible cells pass */
    expect(&table, STAGE_D_SCORES, 0, 2 * 9, 2 * 9, 0, 144);     /* ÷ √d_k, every cell */
    expect(&table, STAGE_D_Q, 2 * 18, 2 * 18, 0, 0, 96);         /* d_S · K: 3×2 of 3, a head */
    expect(&table, STAGE_D_W_Q, 48, 48, 0, 0, 128);
    expect(&table, STAGE_D_K, 2 * 18, 2 * 18, 0, 0, 96);         /* d_Sᵀ · Q */
    expect(&table, STAGE_D_W_K, 48, 48, 0, 0, 128);
    expect(&table, STAGE_D_INPUT, 3 * 48, 3 * 48, 0, 0, 96);     /* from Q, K and V: 3×4 of 4 */
    /* about twice the forward's multiplications (Q, K, V, output 48 each; scores, context 36) */
    unsigned long long forward = 0, backward = 0;
    for (int r = 0; r < table.count; r++) {
        const stats_stage *row = &table.stages[r];
        bool gradient = stage_get(row->stage)->flags & STAGE_GRADIENT;
        *(gradient ? &backward : &forward) += row->counts.multiplications;
    }
    assert_int_equal(backward, 558);
    assert_true(backward > 2 * (forward - 12) && backward < 3 * forward);  /* the loss's 12 */
}

/* The norm and the residual of norm_shape (n = 3, d_model = 4, a layer norm), counted by hand.
 * A row's statistics: the mean's 4 additions and a division, 4 subtractions, 4 fused
 * multiply-adds and a division for the variance, eps's addition: ×4 +13 ÷2. normed: 3 rows of
 * those, then each of 12 cells centred, divided, times the gain, plus the bias. */
static void test_counts_of_the_norm(void **state)
{
    stats_table table;
    counted(state, &table);
    expect(&table, STAGE_NORMED, 3 * 4 + 12, 3 * 13 + 2 * 12, 3 * 2 + 12, 0, 96);
    expect(&table, STAGE_RESIDUAL, 0, 12, 0, 0, 96);              /* input + output */
    expect(&table, STAGE_D_RESIDUAL, 0, 2 * 12, 0, 0, 96);        /* residual − target, += */
    expect(&table, STAGE_D_OUTPUT, 0, 12, 0, 0, 96);              /* d_residual passed on */
    /* d_Q · W_Qᵀ (3×4 of 4 terms), d_K · W_Kᵀ and d_V · W_Vᵀ (3×4 of 2) */
    expect(&table, STAGE_D_NORMED, 48 + 2 * 24, 48 + 2 * 24, 0, 0, 96);
    /* the statistics again, then a cell's x̂ (centring, division), × d_normed, += */
    expect(&table, STAGE_D_GAIN, 3 * 4 + 12, 3 * 13 + 2 * 12, 3 * 2 + 12, 0, 32);
    expect(&table, STAGE_D_NORM_BIAS, 0, 12, 0, 0, 32);           /* column sums */
    /* through the norm: the statistics; per row the two means' divisions; per cell g and
     * g·x̂ (2 ×, Σg and the fused sum's +, x̂'s centring and ÷) and the input's gradient (g, x̂
     * and x̂ · mean: 2 ×; centring twice, a subtraction and += ; x̂'s and the root's ÷); and the
     * residual's 12 additions */
    expect(&table, STAGE_D_INPUT, 3 * 4 + 12 * 4, 3 * 13 + 12 * 7 + 12, 3 * 2 + 3 * 2 + 12 * 3,
           0, 96);
}

/* The parameters --stats lists, each counted from its shape by hand: W_Q and W_O 4 × 4, W_K and
 * W_V 4 × 2 (one key/value head of d_k = 2), the norm's gain and bias 4 each; an RMS norm has
 * a gain and no bias. */
static void test_parameter_counts(void **state)
{
    fixture *f = *state;
    unsigned long long expected[PARAM_COUNT] = { [PARAM_W_Q] = 16, [PARAM_W_K] = 8,
                                                 [PARAM_W_V] = 8, [PARAM_W_O] = 16,
                                                 [PARAM_GAIN] = 4, [PARAM_NORM_BIAS] = 4 };
    if (f->in.norm == NORM_RMS)
        expected[PARAM_W_K] = expected[PARAM_W_V] = 16, expected[PARAM_NORM_BIAS] = 0;
    for (int p = 0; p < PARAM_COUNT; p++)
        assert_int_equal(cost_parameter_count(&f->t, (param_id)p), expected[p]);
    support_capture capture;
    assert_int_equal(stats_print(&f->t, NULL, SUPPORT_MIN_SECONDS, "norm",
                                 support_capture_begin(&capture)), 0);
    char *text = support_capture_end(&capture);
    assert_non_null(strstr(text, f->in.norm == NORM_RMS ? "\n W_K    4×4             16\n"
                                                        : "\n W_K    4×2              8\n"));
    assert_non_null(strstr(text, f->in.norm == NORM_RMS ? "\n total                  68\n"
                                                        : "\n total                  56\n"));
    assert_true((strstr(text, "\n bias ") != NULL) == (f->in.norm == NORM_LAYER));
    assert_non_null(strstr(text, "square roots"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        traced_test(test_counts_of_a_causal_lesson, causal_shape),
        traced_test(test_counts_of_cross_attention, cross_shape),
        traced_test(test_counts_of_the_online_softmax, online_shape),
        traced_test(test_rows_follow_the_walk, unmasked_shape),
        cmocka_unit_test(test_doubling_n_quadruples_the_attention_work),
        traced_test(test_times_are_measured, causal_shape),
        traced_test(test_printed_table_names_each_stage_once, cross_scaled_shape),
        cmocka_unit_test(test_cost_refuses_what_exceeds_the_limit),
        cmocka_unit_test(test_cost_states_the_ratio_of_its_own_table),
        traced_test(test_counts_of_the_backward_pass, loss_shape),
        traced_test(test_counts_of_the_norm, norm_shape),
        traced_test(test_parameter_counts, norm_shape),
        traced_test(test_parameter_counts, post_rms_shape),
    };
    return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
