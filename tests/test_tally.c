/* Unit tests of the leader's histogram of number answers (src/ui/ui_tally.c): the bins, the
 * outliers kept apart, equal answers, one answer, none, and the words of the status line, also
 * as a terminal without UTF-8 shows them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "ui_tally.h"
#include "ui_text.h"

static void test_two_camps(void **unused)
{
    (void)unused;
    double x[30];
    for (int i = 0; i < 30; i++) x[i] = i % 2 ? 0.5 : 0.63;
    ui_tally_histogram h;
    ui_tally_bin(x, 30, 0.63, 0.01, &h);
    assert_int_equal(h.n, 30);
    assert_int_equal(h.bins, UI_TALLY_BINS);
    assert_int_equal(h.below + h.above, 0);
    assert_true(h.lo == 0.5 && h.hi == 0.63 && h.median == 0.63);
    assert_int_equal(h.count[0], 15);
    assert_int_equal(h.count[UI_TALLY_BINS - 1], 15);   /* the largest is in the last bar */
    for (int i = 1; i < UI_TALLY_BINS - 1; i++) assert_int_equal(h.count[i], 0);
    char text[120];
    ui_tally_write(&h, true, text, sizeof text);
    assert_int_equal(h.right, 15);
    assert_string_equal(text, "0.5 ▕█    █▏ 0.63 · 15 right · median 0.63");
    ui_tally_write(&h, false, text, sizeof text);   /* room for the names still waited for */
    assert_string_equal(text, "0.5 ▕█    █▏ 0.63 · 15 right");
}

static void test_spread_and_heights(void **unused)
{
    (void)unused;
    /* 0 .. 5 with bar i holding i+1 answers at i: heights 1/6 .. 6/6 of ▁..█, rounded up */
    double x[21];
    int n = 0;
    for (int i = 0; i < 6; i++)
        for (int k = 0; k <= i; k++) x[n++] = i;
    ui_tally_histogram h;
    ui_tally_bin(x, n, NAN, 0, &h);
    for (int i = 0; i < 6; i++) assert_int_equal(h.count[i], i + 1);
    assert_int_equal(h.below + h.above, 0);
    char text[120];
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "0.0 ▕▂▃▄▆▇█▏ 5.0 · median 4.0");   /* number.c's short form */
}

static void test_outliers_are_counted_apart(void **unused)
{
    (void)unused;
    /* answers near 0.63, one typed as 63 and one as -1: the bars stay where the class is */
    double x[] = {0.61, 0.62, 0.63, 0.63, 0.63, 0.64, 0.65, 63, -1, 0.6};
    ui_tally_histogram h;
    ui_tally_bin(x, 10, 0.63, 0.015, &h);   /* 0.62 to 0.64 are right */
    assert_int_equal(h.below, 1);
    assert_int_equal(h.above, 1);
    assert_true(h.lo == 0.6 && h.hi == 0.65);
    int binned = 0;
    for (int i = 0; i < h.bins; i++) binned += h.count[i];
    assert_int_equal(binned, 8);
    char text[120];
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "1< 0.6 ▕▃▃▃█▃▃▏ 0.65 >1 · 5 right · median 0.63");
}

static void test_equal_answers_and_one(void **unused)
{
    (void)unused;
    double same[] = {0.63, 0.63, 0.63, 0.63}, one[] = {2.5};
    ui_tally_histogram h;
    char text[120];
    ui_tally_bin(same, 4, 0.63, 0.005, &h);
    assert_int_equal(h.bins, 1);
    assert_int_equal(h.count[0], 4);
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "all 0.63 · 4 right");
    ui_tally_bin(one, 1, 2, 0.1, &h);
    assert_int_equal(h.bins, 1);
    assert_int_equal(h.count[0], 1);
    ui_tally_write(&h, true, text, sizeof text);
    assert_int_equal(h.right, 0);
    assert_string_equal(text, "all 2.5 · 0 right");
    /* most equal, two far off: one bar, the others beside it */
    double most[] = {0.63, 0.63, 0.63, 0.63, 0.63, 0.63, 0.1, 9};
    ui_tally_bin(most, 8, NAN, 0, &h);
    assert_int_equal(h.bins, 1);
    assert_int_equal(h.count[0], 6);
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "1< 0.63 ▕█▏ >1 · median 0.63");
}

static void test_none_and_a_short_buffer(void **unused)
{
    (void)unused;
    ui_tally_histogram h;
    char text[12] = "x";
    ui_tally_bin(NULL, 0, NAN, 0, &h);
    assert_int_equal(h.n, 0);
    assert_int_equal(h.bins, 0);
    assert_int_equal(h.right, -1);   /* no key known */
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "");
    double x[] = {1, 2, 3, 4};
    ui_tally_bin(x, 4, NAN, 0, &h);
    ui_tally_write(&h, true, text, sizeof text);   /* cut, never past the end */
    assert_string_equal(text, "1.0 ▕█ ");   /* the next █ would need bytes 12 to 14 of 11 */
    ui_tally_write(&h, true, text, 9);   /* room for 8 bytes: the first █ is left out whole */
    assert_string_equal(text, "1.0 ▕");
}

/* Answers near ±DBL_MAX are finite, so they are binned without overflowing. */
static void test_extremes(void **unused)
{
    (void)unused;
    double x[] = {-1e308, 1e308};
    ui_tally_histogram h;
    ui_tally_bin(x, 2, NAN, 0, &h);
    assert_int_equal(h.bins, UI_TALLY_BINS);
    assert_int_equal(h.count[0], 1);
    assert_int_equal(h.count[UI_TALLY_BINS - 1], 1);
    assert_int_equal(h.below + h.above, 0);
    char text[120];
    ui_tally_write(&h, false, text, sizeof text);   /* in exponent form, never cut */
    assert_string_equal(text, "-1.0e+308 ▕█    █▏ 1.0e+308");
}

/* Without UTF-8 the painter spells each bar in one ASCII column, so the line keeps its width. */
static void test_ascii_spelling(void **unused)
{
    (void)unused;
    double x[] = {0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 5, 5, 5, 5, 5, 5, 5};
    ui_tally_histogram h;
    char text[120];
    ui_tally_bin(x, 18, NAN, 0, &h);
    ui_tally_write(&h, true, text, sizeof text);
    assert_string_equal(text, "0.0 ▕█ ▁▁ █▏ 5.0 · median 3.0");
    wchar_t utf8[120], ascii[120];
    size_t n = ui_text_widen(text, true, utf8, 120);
    assert_int_equal(ui_text_widen(text, false, ascii, 120), n);
    assert_true(wcscmp(ascii, L"0.0 |# __ #| 5.0 * median 3.0") == 0);
}

/* Issue 24: the tally judges as the UI does (ui_tally_within), against the true value: 0.62 is
 * right for 0.6296 at ± 0.01; 0.64 is not. A difference that is the tolerance but for the
 * binary rounding counts as within. The precision a tolerance asks for, in words. */
static void test_true_value_and_precision(void **unused)
{
    (void)unused;
    double x[] = {0.62, 0.64, 0.63, 0.5};
    ui_tally_histogram h;
    ui_tally_bin(x, 4, 0.6296, 0.01, &h);
    assert_int_equal(h.right, 2);   /* 0.62 and 0.63 */
    assert_true(ui_tally_within(0.62, 0.6296, 0.01));
    assert_false(ui_tally_within(0.64, 0.6296, 0.01));
    assert_true(ui_tally_within(0.62, 0.63, 0.01));   /* 0.010000000000000009 apart: within */
    assert_false(ui_tally_within(-0.43, -0.4375, 0.005));
    assert_int_equal(ui_tally_decimals(0.005), 2);
    assert_int_equal(ui_tally_decimals(0.01), 2);
    assert_int_equal(ui_tally_decimals(0.05), 1);
    assert_int_equal(ui_tally_decimals(0.5), 0);
    char text[32];
    ui_tally_precision(0.01, text, sizeof text);
    assert_string_equal(text, "two decimals");
    ui_tally_precision(0.5, text, sizeof text);
    assert_string_equal(text, "a whole number");
    ui_tally_precision(0, text, sizeof text);
    assert_string_equal(text, "exactly");
}

/* Issue 25: a question's result after the reveal, in the status line and in the results box. */
static void test_results_that_stay(void **state)
{
    (void)state;
    double numbers[] = {0.7, 0.63, 0.62, 0.63, 0.63};
    ui_tally_result number = {.step = 8, .joined = 6, .answered = 5, .numbers = numbers,
                              .n_numbers = 5, .truth = 0.6296, .tolerance = 0.005};
    char line[200], box[1000];
    assert_int_equal(ui_tally_result_right(&number), 3);
    ui_tally_result_line(&number, line, sizeof line);
    assert_string_equal(line, "right 3/5 · 0.63 ×3, 0.62 ×1, 0.7 ×1");
    number.truth = NAN;   /* the lesson does not know the key */
    ui_tally_result_line(&number, line, sizeof line);
    assert_string_equal(line, "answered 5/6 · 0.63 ×3, 0.62 ×1, 0.7 ×1");
    /* the numbers as given, by number.c: two that differ in their fifth decimal are told
     * apart, a whole number is written as a number ("2.0") */
    double typed[] = {0.62951, 0.62953, 2};
    ui_tally_result given = {.step = 8, .joined = 3, .answered = 3, .numbers = typed,
                             .n_numbers = 3, .truth = 0.6296, .tolerance = 0.005};
    ui_tally_result_line(&given, line, sizeof line);
    assert_string_equal(line, "right 2/3 · 0.62951 ×1, 0.62953 ×1, 2.0 ×1");
    number.truth = 0.6296;
    static const char *const texts[] = {"cat", "sat", "mat"};
    ui_tally_result choice = {.step = 4, .joined = 31, .answered = 30, .n_choices = 3,
                              .choice_text = texts, .choices = {0, 20, 10, 0}, .right_choice = 1};
    ui_tally_result_line(&choice, line, sizeof line);
    assert_string_equal(line, "right 20/30 · 1×20 2×10");
    ui_tally_result *all[] = {&choice, &number};
    ui_tally_results_text(all, 2, box, sizeof box);
    assert_string_equal(box,
        "step 5 · answered 30 of 31 · right 20 · skipped 1\n"
        "  1 ×20  cat  ✓\n"
        "  2 ×10  sat\n"
        "  3 ×0   mat\n"
        "step 9 · answered 5 of 6 · right 3 · skipped 1\n"
        "  1< 0.63 ▕█▏ >1 · 3 right · median 0.63\n"   /* Tukey's fences: two outliers */
        "  0.63 ×3, 0.62 ×1, 0.7 ×1\n");
    ui_tally_results_text(all, 0, box, sizeof box);
    assert_string_equal(box, "no question has been asked in this class yet\n");
    /* cut short, on a whole character: "×" is two bytes */
    ui_tally_result_line(&number, line, 16);
    assert_string_equal(line, "right 3/5 · 0.");
    ui_tally_result_line(&number, line, 19);
    assert_string_equal(line, "right 3/5 · 0.63 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_camps),
        cmocka_unit_test(test_spread_and_heights),
        cmocka_unit_test(test_outliers_are_counted_apart),
        cmocka_unit_test(test_equal_answers_and_one),
        cmocka_unit_test(test_none_and_a_short_buffer),
        cmocka_unit_test(test_ascii_spelling),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_true_value_and_precision),
        cmocka_unit_test(test_results_that_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
