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

typedef struct {
    double embeddings[3 * 4], source[3 * 4], weights[4 * 4 * 4];
    attention_input in;
    trace t;
} fixture;

static void compute(fixture *f)
{
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
    fixture_compute(&f->in, &f->t);
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
    (void)state;
    fixture f = { .in = { .n_tokens = 3, .tokens = tokens, .d_model = 4, .heads = 2,
                          .mask = MASK_CAUSAL, .positional = true, .scale = true } };
    compute(&f);
    stats_table table;
    assert_true(stats_count(&f.t, &table));
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
    assert_int_equal(table.total.counts.multiplications, 48 * 4 + 36 + 36);
    assert_int_equal(table.total.counts.additions, 12 + 36 * 4 + 18 + 18 + 24);
    assert_int_equal(table.total.counts.bytes, 1056);
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f.in));
    const stats_stage *scores = find(&table, STAGE_SCORES);
    assert_int_equal(scores->heads, 2);
    assert_int_equal(scores->rows, 3);
    assert_int_equal(scores->cols, 3);
    trace_free(&f.t);
}

/* Cross-attention: 2 queries over 3 source tokens, d_model = 2, one head, no mask, no scaling,
 * no positional encoding. K and V project 3 rows (12 ×, 6 +); scores are 2·3 cells of 2 terms;
 * all 6 cells visible: 6 subtractions and 2·(3 − 1) sum additions; context is 2·2 cells of 3
 * terms (12 ×, 8 +). */
static void test_counts_of_cross_attention(void **state)
{
    (void)state;
    fixture f = { .in = { .n_tokens = 2, .tokens = tokens, .n_source = 3, .source = source_tokens,
                          .d_model = 2, .heads = 1, .mask = MASK_NONE, .scale = false } };
    compute(&f);
    stats_table table;
    assert_true(stats_count(&f.t, &table));
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
    expect(&table, STAGE_OUTPUT, 8, 4, 0, 0, 32);
    assert_int_equal(table.total.counts.bytes, trace_bytes_needed(&f.in));
    trace_free(&f.t);
}

/* One row per stage of the pipeline walk, in its order, each name once. */
static void test_rows_follow_the_walk(void **state)
{
    (void)state;
    fixture f = { .in = { .n_tokens = 3, .tokens = tokens, .d_model = 4, .heads = 2,
                          .mask = MASK_NONE, .scale = true } };
    compute(&f);
    stats_table table;
    assert_true(stats_count(&f.t, &table));
    int present = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        present += trace_has_stage(&f.t, (stage_id)s);
    /* all but source_input, RoPE's, ALiBi's and the online softmax's */
    assert_int_equal(present, STAGE_COUNT - 6);
    assert_int_equal(table.count, present);
    walk w;
    assert_true(walk_build(&w, &f.t, NULL, 0));
    int row = 0;
    for (int k = 0; k < w.count; k++)
        if (w.steps[k].head == 1)
            assert_int_equal(table.stages[row++].stage, w.steps[k].stage);
    assert_int_equal(row, table.count);
    walk_free(&w);
    trace_free(&f.t);
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

static void test_times_are_measured_and_add_up(void **state)
{
    (void)state;
    fixture f = { .in = { .n_tokens = 3, .tokens = tokens, .d_model = 4, .heads = 2,
                          .mask = MASK_CAUSAL, .positional = true, .scale = true } };
    compute(&f);
    stats_table table;
    assert_true(stats_count(&f.t, &table));
    assert_true(stats_time(&f.t, NULL, &table));
    double sum = 0.0;
    for (int s = 0; s < table.count; s++) {
        assert_true(table.stages[s].seconds > 0.0 && table.stages[s].seconds < 1.0);
        sum += table.stages[s].seconds;
    }
    assert_true(fabs(sum - table.total.seconds) <= 1e-12);
    assert_true(stats_peak_memory() > 0);
    trace_free(&f.t);
}

/* The printed table: every stage name of the lesson starts exactly one line, then the total. */
static void test_printed_table_names_each_stage_once(void **state)
{
    (void)state;
    fixture f = { .in = { .n_tokens = 2, .tokens = tokens, .n_source = 3, .source = source_tokens,
                          .d_model = 2, .heads = 1, .mask = MASK_NONE, .scale = true } };
    compute(&f);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(stats_print(&f.t, NULL, "test lesson", out), 0);
    fclose(out);
    assert_non_null(strstr(text, "Cost of test lesson\n"));
    for (int s = 0; s < STAGE_COUNT; s++) {
        char start[32];
        snprintf(start, sizeof start, "\n%s ", stage_get((stage_id)s)->name);
        const char *first = strstr(text, start);
        if (!trace_has_stage(&f.t, (stage_id)s)) {
            assert_null(first);
            continue;
        }
        assert_non_null(first);
        assert_null(strstr(first + 1, start));
    }
    assert_non_null(strstr(text, "\ntotal "));
    assert_non_null(strstr(text, "Peak memory"));
    free(text);
    trace_free(&f.t);
}

static void test_cost_refuses_what_exceeds_the_limit(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(stats_cost(20000, 8, NULL, out), 0);
    assert_int_equal(stats_cost(10, 3, NULL, out), -1); /* heads must divide d_model */
    fclose(out);
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
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(stats_cost(8, 2, NULL, out), 0);
    fclose(out);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_of_a_causal_lesson),
        cmocka_unit_test(test_counts_of_cross_attention),
        cmocka_unit_test(test_rows_follow_the_walk),
        cmocka_unit_test(test_doubling_n_quadruples_the_attention_work),
        cmocka_unit_test(test_times_are_measured_and_add_up),
        cmocka_unit_test(test_printed_table_names_each_stage_once),
        cmocka_unit_test(test_cost_refuses_what_exceeds_the_limit),
        cmocka_unit_test(test_cost_states_the_ratio_of_its_own_table),
    };
    return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
