/* Unit tests of the figures' pure pieces (issue 30): text_escape_xml, the heatmap's one rule
 * (src/core/heat.c: buckets, edges, masked cells, xterm's RGB) and the figures' file names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "fixtures.h"
#include "heat.h"
#include "output_svg.h"
#include "text.h"
#include "walk.h"

static void xml_is(const char *utf8, bool keep_lines, const char *expected)
{
    char buffer[256];
    int wanted = text_escape_xml(utf8, keep_lines, buffer, sizeof buffer);
    assert_string_equal(buffer, expected);
    assert_int_equal(wanted, (int)strlen(expected));
}

static void test_xml_escapes_markup_quotes_and_controls(void **unused)
{
    (void)unused;
    xml_is("<s> & \"q\" 'a'", false, "&lt;s&gt; &amp; &quot;q&quot; &apos;a&apos;");
    xml_is("\x1b[31mred\x07", false, "\\x1b[31mred\\x07");
    xml_is("a\xe2\x80\xae" "b", false, "a\\u202eb");            /* an override, visible */
    xml_is("\xff<", false, "\\xff&lt;");                        /* an invalid byte */
    xml_is("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe7\x8c\xab", false,
           "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe7\x8c\xab");    /* RTL and CJK as they are */
    xml_is("one\ntwo", true, "one\ntwo");
    xml_is("one\ntwo", false, "one\\x0atwo");
}

static void test_xml_reports_the_length_and_never_overflows(void **unused)
{
    (void)unused;
    char small[6];
    assert_int_equal(text_escape_xml("<<<", false, small, sizeof small), 12);
    assert_string_equal(small, "&lt;&");
    assert_int_equal(text_escape_xml("&", false, NULL, 0), 5);
}

static void test_buckets_and_edges(void **unused)
{
    (void)unused;
    heat_ramp seq = heat_ramp_of(HEAT_VIRIDIS, true, false), div = heat_ramp_of(HEAT_VIRIDIS, true, true);
    assert_int_equal(seq.n, 10);
    assert_int_equal(div.n, 11);
    assert_int_equal(heat_bucket(heat_position(1.0, false, 0), seq.n), 9);
    assert_int_equal(heat_bucket(heat_position(0.0999, false, 0), seq.n), 0);
    assert_int_equal(heat_bucket(heat_position(0.1, false, 0), seq.n), 1);
    assert_int_equal(heat_bucket(heat_position(-2.0, true, 2.0), div.n), 0);
    assert_int_equal(heat_bucket(heat_position(0.0, true, 2.0), div.n), 5);   /* 0 in the middle */
    assert_true(heat_edge(0, div.n, true, 2.0) == -2.0 && heat_edge(div.n, div.n, true, 2.0) == 2.0);
    assert_true(fabs(heat_edge(3, seq.n, false, 0) - 0.3) < 1e-15);
    /* a palette out of range falls back to the default, as the UI's style does */
    assert_ptr_equal(heat_ramp_of(7, true, false).colours, seq.colours);
    assert_int_equal(heat_palette_find("inferno"), HEAT_INFERNO);
    assert_int_equal(heat_palette_find("rainbow"), -1);
}

static void test_xterm_rgb(void **unused)
{
    (void)unused;
    assert_int_equal(heat_rgb(0), 0x000000);
    assert_int_equal(heat_rgb(15), 0xffffff);
    assert_int_equal(heat_rgb(16), 0x000000);
    assert_int_equal(heat_rgb(220), 0xffd700);
    assert_int_equal(heat_rgb(53), 0x5f005f);
    assert_int_equal(heat_rgb(231), 0xffffff);
    assert_int_equal(heat_rgb(238), 0x444444);
    assert_int_equal(heat_rgb(255), 0xeeeeee);
}

static const char *const causal =
    "title: t\ntokens: [a, b, c]\nd_model: 2\nheads: 2\nmask: causal\n"
    "embeddings: {a: [1, 0], b: [0, 1], c: [1, 1]}\n";

static void test_masked_cells_and_range(void **unused)
{
    (void)unused;
    lesson l;
    trace t;
    fixture_load_traced(causal, &l, &t);
    stage_id weights = stage_find("weights"), masked = stage_find("masked"), scores = stage_find("scores");
    assert_true(heat_masked(&t, weights, 0, 1) && heat_masked(&t, masked, 0, 2));
    assert_false(heat_masked(&t, weights, 1, 0));
    assert_false(heat_masked(&t, scores, 0, 1));   /* scores are computed before the mask */
    double lo, hi;
    heat_range(&t, masked, 1, &lo, &hi);
    assert_true(isfinite(lo) && isfinite(hi) && lo <= hi);
    assert_true(heat_diverging(scores) && !heat_diverging(weights));
    walk w;
    assert_true(walk_build_pipeline(&w, &t));
    char name[96];
    int k = walk_find(&w, weights, 2);
    output_svg_name(&t, &w, k, name, sizeof name);
    char expected[96];
    snprintf(expected, sizeof expected, "%02d-weights-head2.svg", k + 1);
    assert_string_equal(name, expected);
    output_svg_name(&t, &w, 0, name, sizeof name);
    assert_string_equal(name, "01-input.svg");
    walk_free(&w);
    trace_free(&t);
    lesson_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xml_escapes_markup_quotes_and_controls),
        cmocka_unit_test(test_xml_reports_the_length_and_never_overflows),
        cmocka_unit_test(test_buckets_and_edges),
        cmocka_unit_test(test_xterm_rgb),
        cmocka_unit_test(test_masked_cells_and_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
