/* The loss curve's text (ui_loss.c): the highest loss fills its column, the lowest one eighth,
 * ASCII without UTF-8, a caret under the step marked, steps sampled when there are more than
 * columns, and a flat curve at half height. */
#include <string.h>
#include "support.h"
#include "ui_loss.h"

/* Line `index` (from 0) of text into line. */
static void line_of(const char *text, int index, char *line, size_t size)
{
    for (; index > 0 && text; index--)
        text = strchr(text, '\n') ? strchr(text, '\n') + 1 : NULL;
    assert_non_null(text);
    size_t length = strcspn(text, "\n");
    assert_true(length < size);
    memcpy(line, text, length);
    line[length] = '\0';
}

static void test_ascii_bars_and_the_mark(void **state)
{
    (void)state;
    const double loss[] = { 4.0, 2.0, 1.0, 0.0 };
    char text[2048], line[256];
    ui_loss_curve(loss, 4, 2, 40, false, text, sizeof text);
    line_of(text, 0, line, sizeof line);
    assert_string_equal(line, "loss 4.0 at step 0, 0.0 at step 3; here (step 2): 1.0");
    line_of(text, 1, line, sizeof line);          /* the top row: only step 0 reaches it */
    assert_string_equal(line, "4.0 |#   ");
    line_of(text, UI_LOSS_ROWS, line, sizeof line);  /* the bottom row: every step has a bar */
    assert_string_equal(line, "0.0 |###.");        /* the lowest: one eighth */
    line_of(text, UI_LOSS_ROWS + 1, line, sizeof line);
    assert_string_equal(line, "       ^");         /* under step 2 */
    line_of(text, UI_LOSS_ROWS + 2, line, sizeof line);
    assert_string_equal(line, "     0  3");
    assert_null(strchr(text, '\xe2'));             /* no UTF-8 at all */
}

static void test_blocks_in_utf8(void **state)
{
    (void)state;
    const double loss[] = { 1.0, 0.0 };
    char text[2048], line[256];
    ui_loss_curve(loss, 2, 0, 40, true, text, sizeof text);
    line_of(text, UI_LOSS_ROWS, line, sizeof line);
    assert_string_equal(line, "0.0 \u2502\u2588\u2581");  /* full, and the lowest one eighth */
    line_of(text, 1, line, sizeof line);
    assert_string_equal(line, "1.0 \u2502\u2588 ");
}

static void test_more_steps_than_columns_are_sampled(void **state)
{
    (void)state;
    double loss[101];
    for (int k = 0; k <= 100; k++)
        loss[k] = 100 - k;
    char text[4096], line[512];
    ui_loss_curve(loss, 101, 100, 30, false, text, sizeof text);
    line_of(text, UI_LOSS_ROWS, line, sizeof line);
    assert_int_equal((int)strlen(line), 30);      /* the width asked, labels included */
    line_of(text, UI_LOSS_ROWS + 1, line, sizeof line);
    assert_int_equal((int)strlen(line), 30);      /* the caret under the last column */
    assert_int_equal(line[29], '^');
}

static void test_a_flat_curve_stands_at_half_height(void **state)
{
    (void)state;
    const double loss[] = { 0.5, 0.5, 0.5 };
    char text[2048], line[256];
    ui_loss_curve(loss, 3, 1, 40, false, text, sizeof text);
    line_of(text, UI_LOSS_ROWS / 2, line, sizeof line);       /* the row above half: empty */
    assert_string_equal(line, "    |   ");
    line_of(text, UI_LOSS_ROWS / 2 + 1, line, sizeof line);   /* the row below: full */
    assert_string_equal(line, "    |###");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_bars_and_the_mark),
        cmocka_unit_test(test_blocks_in_utf8),
        cmocka_unit_test(test_more_steps_than_columns_are_sampled),
        cmocka_unit_test(test_a_flat_curve_stands_at_half_height),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
