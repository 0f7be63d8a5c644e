/* The one number formatter (number_write) on awkward values and every precision, and the one
 * width, control set and escaping function of src/text on CJK, combining marks, emoji,
 * controls, bidi and invalid UTF-8. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support.h"
#include "number.h"
#include "text.h"

static const char *write(double x, number_style style, int precision, int max_width)
{
    static char text[NUMBER_MAX];
    int length = number_write(x, &(number_format){ style, precision, max_width, false }, text,
                              sizeof text);
    assert_int_equal(length, (int)strlen(text));
    assert_true(length < NUMBER_MAX);
    return text;
}

/* The number a written text stands for ("−" read as '-'). */
static double read_back(const char *text)
{
    char copy[NUMBER_MAX];
    size_t used = 0;
    for (const char *c = text; *c && used + 1 < sizeof copy;) {
        if (strncmp(c, "\xe2\x88\x92", 3) == 0) {
            copy[used++] = '-';
            c += 3;
        } else {
            copy[used++] = *c++;
        }
    }
    copy[used] = '\0';
    char *end;
    double x = strtod(copy, &end);
    assert_true(*end == '\0');
    return x;
}

static void test_zero_and_negative_zero(void **state)
{
    (void)state;
    assert_string_equal(write(0.0, NUMBER_SHORT, 4, 0), "0.0");
    assert_string_equal(write(-0.0, NUMBER_SHORT, 4, 0), "0.0");
    assert_string_equal(write(0.0, NUMBER_FIXED, 4, 0), "0.0000");
    assert_string_equal(write(-0.0, NUMBER_FIXED, 4, 0), "0.0000");
    assert_string_equal(write(-1e-7, NUMBER_FIXED, 4, 0), "-1.000e-07");
    assert_string_equal(write(0.0, NUMBER_EXACT, 4, 0), "0");
}

static void test_infinities_and_nan(void **state)
{
    (void)state;
    assert_string_equal(write(-INFINITY, NUMBER_FIXED, 4, 0), "\xe2\x88\x92\xe2\x88\x9e");
    assert_string_equal(write(INFINITY, NUMBER_SHORT, 4, 0), "\xe2\x88\x9e");
    assert_string_equal(write(-INFINITY, NUMBER_EXACT, 4, 0), "-inf");
    assert_string_equal(write(INFINITY, NUMBER_EXACT, 4, 0), "inf");
    assert_string_equal(write(NAN, NUMBER_SHORT, 4, 0), "NaN");
    assert_string_equal(write(NAN, NUMBER_EXACT, 4, 0), "nan");
    assert_int_equal(number_columns(write(-INFINITY, NUMBER_FIXED, 4, 0)), 2);
    /* a width limit never touches ∞: there is nothing shorter to switch to */
    assert_string_equal(write(-INFINITY, NUMBER_FIXED, 4, 1), "\xe2\x88\x92\xe2\x88\x9e");
}

static void test_huge_and_tiny_use_the_exponent(void **state)
{
    (void)state;
    assert_string_equal(write(1e100, NUMBER_FIXED, 4, 0), "1.000e+100");
    assert_string_equal(write(1e100, NUMBER_SHORT, 4, 0), "1.0e+100");  /* one zero kept */
    assert_string_equal(write(1e308, NUMBER_FIXED, 4, 0), "1.000e+308");
    assert_string_equal(write(-1e308, NUMBER_FIXED, 4, 0), "-1.000e+308");
    assert_string_equal(write(5e-324, NUMBER_FIXED, 4, 0), "4.941e-324");
    assert_string_equal(write(2.2250738585072014e-308, NUMBER_FIXED, 2, 0), "2.2e-308");
    assert_string_equal(write(1e100, NUMBER_EXACT, 4, 0), "1e+100");
    assert_true(read_back(write(5e-324, NUMBER_EXACT, 0, 0)) == 5e-324);
    assert_true(read_back(write(-1e308, NUMBER_EXACT, 0, 0)) == -1e308);
}

/* Every precision: FIXED has exactly that many decimals, SHORT reads back within half a unit
 * of the last decimal, and both never show a number of magnitude ≥ 1e9 as an integer. */
static void test_every_precision(void **state)
{
    (void)state;
    const double values[] = { 0.6296, -2.5, 123.456789, 1e-3, 7e8, 3e9, -1e100, 5e-324 };
    for (int p = 0; p <= 17; p++) {
        for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
            double x = values[i];
            const char *fixed = write(x, NUMBER_FIXED, p, 0);
            double back = read_back(fixed);
            if (strchr(fixed, 'e')) {
                assert_true(fabs(back - x) <= fabs(x) * 0.5 * pow(10.0, -(p > 1 ? p - 1 : 0)));
            } else {
                const char *dot = strchr(fixed, '.');
                assert_int_equal(dot ? (int)strlen(dot + 1) : 0, p);
                assert_true(fabs(back - x) <= 0.5 * pow(10.0, -p) * (1 + 1e-9));
                assert_true(fabs(x) < 1e9);
            }
            double short_back = read_back(write(x, NUMBER_SHORT, p, 0));
            assert_true(fabs(short_back - x) <= fmax(fabs(back - x), fabs(x) * 1e-15) * 1.0001);
        }
    }
}

static void test_precision_outside_the_range_is_clamped(void **state)
{
    (void)state;
    assert_string_equal(write(0.5, NUMBER_FIXED, -3, 0), write(0.5, NUMBER_FIXED, 0, 0));
    char wide[NUMBER_MAX];
    snprintf(wide, sizeof wide, "%s", write(1.0 / 3, NUMBER_FIXED, 40, 0));
    assert_string_equal(wide, write(1.0 / 3, NUMBER_FIXED, 17, 0));
}

/* A width limit switches to the exponent form with fewer digits, never cuts: the number read
 * back stays within the precision the shorter form shows. */
static void test_max_width_switches_never_cuts(void **state)
{
    (void)state;
    assert_string_equal(write(123456.789, NUMBER_FIXED, 4, 0), "123456.7890");
    assert_string_equal(write(123456.789, NUMBER_FIXED, 4, 8), "1.23e+05");
    assert_string_equal(write(-1e100, NUMBER_FIXED, 4, 7), "-1e+100");
    for (int width = 1; width <= 12; width++) {
        const char *text = write(-123456.789, NUMBER_FIXED, 4, width);
        double back = read_back(text);
        assert_true(fabs(back + 123456.789) <= 123456.789 * 0.5);
        if (number_columns(text) > width)  /* only when even "-1e+05" is too wide */
            assert_string_equal(text, "-1e+05");
    }
}

static void test_buffer_too_small_reports_the_wanted_length(void **state)
{
    (void)state;
    char small[4];
    int wanted = number_write(1e100, &(number_format){ NUMBER_FIXED, 4, 0, false }, small,
                              sizeof small);
    assert_int_equal(wanted, (int)strlen("1.000e+100"));
    assert_string_equal(small, "1.0");
}

/* A count is written whole, grouped by three: never a decimal, never an exponent. */
static void test_counts_are_grouped_by_three(void **state)
{
    (void)state;
    static const struct { unsigned long long count; const char *text; } cases[] = {
        { 0, "0" }, { 999, "999" }, { 1000, "1,000" }, { 524288, "524,288" },
        { 8388608, "8,388,608" }, { 21474836480ULL, "21,474,836,480" },
        { 18446744073709551615ULL, "18,446,744,073,709,551,615" },
    };
    char text[NUMBER_MAX], small[4];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(number_write_count(cases[i].count, text, sizeof text),
                         (int)strlen(cases[i].text));
        assert_string_equal(text, cases[i].text);
    }
    assert_int_equal(number_write_count(1048576, small, sizeof small), 9);
    assert_string_equal(small, "1,0");
}

static void test_widths_of_characters(void **state)
{
    (void)state;
    assert_int_equal(text_char_width('a'), 1);
    assert_int_equal(text_char_width(0x732b), 2);    /* 猫, CJK */
    assert_int_equal(text_char_width(0xac00), 2);    /* 가, Hangul */
    assert_int_equal(text_char_width(0xff21), 2);    /* Ａ, fullwidth */
    assert_int_equal(text_char_width(0x0301), 0);    /* combining acute accent */
    assert_int_equal(text_char_width(0x200d), 0);    /* zero width joiner */
    assert_int_equal(text_char_width(0x1f600), 2);   /* 😀 */
    assert_int_equal(text_char_width(0x1f680), 2);   /* 🚀, outside the old hand-written ranges */
    assert_int_equal(text_char_width(0x1fa77), 2);   /* 🩷, Unicode 15 */
    assert_int_equal(text_char_width(0x00e9), 1);    /* é */
    assert_int_equal(text_char_width(0x2212), 1);    /* − */
    assert_int_equal(text_char_width(0x221e), 1);    /* ∞ */
    assert_int_equal(text_char_width(0x110000), 1);  /* past Unicode: never a crash */
}

static void test_widths_of_strings(void **state)
{
    (void)state;
    assert_int_equal(text_width(""), 0);
    assert_int_equal(text_width("cat"), 3);
    assert_int_equal(text_width("\xe7\x8c\xab\xe3\x81\x8c"), 4);  /* 猫が */
    assert_int_equal(text_width("e\xcc\x81t\xc3\xa9"), 3);        /* e + ́ t é */
    assert_int_equal(text_width("\xf0\x9f\x98\x80!"), 3);         /* 😀! */
    assert_int_equal(text_width("a\xffz"), 6);   /* an invalid byte is shown as \xff */
    assert_int_equal(text_width("\xe2\x88\x92\xe2\x88\x9e"), 2);  /* −∞ */
}

static void test_control_set(void **state)
{
    (void)state;
    /* the zero-width and format characters joined the set in issue 26 */
    const unsigned controls[] = { 0x00, 0x1b, 0x0a, 0x7f, 0x85, 0x9b, 0x202e, 0x2066, 0x2069,
                                  0x200e, 0x200f, 0x061c, 0x200b, 0x200d, 0x2028, 0x2029,
                                  0xfeff, 0x2060, 0x2064, 0x206a, 0x206f, 0x180e, 0xfff9 };
    for (size_t i = 0; i < sizeof controls / sizeof *controls; i++)
        assert_true(text_is_control(controls[i]));
    /* ZWNJ stays: Persian spelling needs it */
    const unsigned shown[] = { ' ', 'a', 0xa0, 0xe9, 0x732b, 0x200c, 0x1f600, 0xe0000 - 1 };
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++)
        assert_false(text_is_control(shown[i]));
    assert_true(text_is_tag(0xe0001) && text_is_tag(0xe007f));
    assert_false(text_is_tag(0xe0080) || text_is_control(0xe0041));
}

/* Zero-width, format and tag characters are written as \u escapes (issue 26: they passed and
 * could glue "ana" and "bob" into one name that looks like another); a joiner between two
 * emoji, one picture, stays; ordinary text is unchanged. */
static void test_invisible_characters_escaped(void **state)
{
    (void)state;
    char out[128];
    text_escape("ana\xe2\x80\xa8\xe2\x80\xa8" "bob", out, sizeof out);
    assert_string_equal(out, "ana\\u2028\\u2028bob");
    text_escape("a\xe2\x80\x8b" "b\xe2\x80\x8d" "c\xef\xbb\xbf" "d", out, sizeof out);
    assert_string_equal(out, "a\\u200bb\\u200dc\\ufeffd");
    text_escape("flag\xf3\xa0\x81\xa7\xf3\xa0\x81\xbf", out, sizeof out);   /* U+E0067 U+E007F */
    assert_string_equal(out, "flag\\ue0067\\ue007f");
    text_escape("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", out, sizeof out);   /* 👩‍💻 */
    assert_string_equal(out, "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb");
    text_escape("\xe2\x80\x8d\xf0\x9f\x92\xbb", out, sizeof out);   /* a joiner first */
    assert_string_equal(out, "\\u200d\xf0\x9f\x92\xbb");
    /* the emoji ranges' ends: U+2600 and U+27BF (➿) join, U+25FF and U+27C0 beside them don't */
    text_escape("\xe2\x98\x80\xe2\x80\x8d\xe2\x9e\xbf", out, sizeof out);
    assert_string_equal(out, "\xe2\x98\x80\xe2\x80\x8d\xe2\x9e\xbf");
    text_escape("\xe2\x9e\xbf\xe2\x80\x8d\xf0\x9f\x92\xbb", out, sizeof out);
    assert_string_equal(out, "\xe2\x9e\xbf\xe2\x80\x8d\xf0\x9f\x92\xbb");
    text_escape("\xe2\x97\xbf\xe2\x80\x8d\xe2\x9e\xbf", out, sizeof out);
    assert_string_equal(out, "\xe2\x97\xbf\\u200d\xe2\x9e\xbf");
    text_escape("\xe2\x9e\xbf\xe2\x80\x8d\xe2\x9f\x80", out, sizeof out);
    assert_string_equal(out, "\xe2\x9e\xbf\\u200d\xe2\x9f\x80");
    text_escape("caf\xc3\xa9 \xe7\x8c\xab \xd9\x85\xe2\x80\x8c\xd9\x85", out, sizeof out);
    assert_string_equal(out, "caf\xc3\xa9 \xe7\x8c\xab \xd9\x85\xe2\x80\x8c\xd9\x85");
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(text_write_escaped(f, "x\xe2\x80\x8by", false), 0);
    rewind(f);
    char back[32] = "";
    assert_non_null(fgets(back, sizeof back, f));
    fclose(f);
    assert_string_equal(back, "x\\u200by");
}

static const char *escape(const char *utf8, bool keep_lines)
{
    static char text[256];
    int length = (keep_lines ? text_escape_lines : text_escape)(utf8, text, sizeof text);
    assert_int_equal(length, (int)strlen(text));
    return text;
}

static void test_escape(void **state)
{
    (void)state;
    assert_string_equal(escape("plain \xe7\x8c\xab e\xcc\x81 \xf0\x9f\x98\x80", false),
                        "plain \xe7\x8c\xab e\xcc\x81 \xf0\x9f\x98\x80");
    assert_string_equal(escape("a\x1b[2Jb", false), "a\\x1b[2Jb");
    assert_string_equal(escape("l1\nl2\t", false), "l1\\x0al2\\x09");
    assert_string_equal(escape("l1\nl2\t", true), "l1\nl2\\x09");
    assert_string_equal(escape("\xe2\x80\xae" "evil", false), "\\u202eevil");  /* RLO */
    assert_string_equal(escape("\xe2\x81\xa6x\xe2\x81\xa9", false), "\\u2066x\\u2069");
    assert_string_equal(escape("\xc2\x9b" "c", false), "\\u009bc");            /* C1 CSI */
    assert_string_equal(escape("bad\xff\xc3", false), "bad\\xff\\xc3");
    assert_string_equal(escape("\xed\xa0\x80", false), "\\xed\\xa0\\x80");     /* surrogate */
    assert_string_equal(escape("\xc0\xaf", false), "\\xc0\\xaf");              /* overlong */
    /* overlong in three and four bytes, of characters that have a shorter form: U+00AC (two
     * bytes) and U+20AC (three) */
    assert_string_equal(escape("\xe0\x82\xac", false), "\\xe0\\x82\\xac");
    assert_string_equal(escape("\xf0\x82\x82\xac", false), "\\xf0\\x82\\x82\\xac");
}

/* Markdown's line-start syntax escaped where a line starts, and only there: a narration
 * beginning "- " or "+ " would become a list, "1. " a numbered one. */
static const char *markdown(const char *text, bool keep_lines)
{
    static char out[128];
    int length = text_escape_markdown(text, keep_lines, out, sizeof out);
    assert_int_equal(length, (int)strlen(out));
    return out;
}

static void test_markdown_escapes_line_starts(void **state)
{
    (void)state;
    assert_string_equal(markdown("- not a list", false), "\\- not a list");
    assert_string_equal(markdown("+ nor this", false), "\\+ nor this");
    assert_string_equal(markdown("  - indented", false), "  \\- indented");
    assert_string_equal(markdown("1. first", false), "1\\. first");
    assert_string_equal(markdown("0. zeroth", false), "0\\. zeroth");   /* a list from 0 */
    assert_string_equal(markdown("9) ninth", false), "9\\) ninth");
    assert_string_equal(markdown("a - b + c", false), "a - b + c");
    assert_string_equal(markdown("one\n- two", true), "one\n\\- two");
}

/* JSON's \u escapes hold 16 bits: a character above U+FFFF is its UTF-16 surrogate pair, at
 * both ends of the range and for a tag character; the BMP keeps one escape. */
static void test_json_escape_surrogate_pairs(void **state)
{
    (void)state;
    char piece[16];
    assert_int_equal(text_json_escape(0x200b, piece, sizeof piece), 6);
    assert_string_equal(piece, "\\u200b");
    assert_int_equal(text_json_escape(0x10000, piece, sizeof piece), 12);
    assert_string_equal(piece, "\\ud800\\udc00");
    text_json_escape(0xe0041, piece, sizeof piece);
    assert_string_equal(piece, "\\udb40\\udc41");
    text_json_escape(0x1f680, piece, sizeof piece);   /* 🚀, as python's json.dumps writes it */
    assert_string_equal(piece, "\\ud83d\\ude80");
    text_json_escape(0x10ffff, piece, sizeof piece);
    assert_string_equal(piece, "\\udbff\\udfff");
}

static void test_escape_reports_the_length_and_never_overflows(void **state)
{
    (void)state;
    char small[5];
    assert_int_equal(text_escape("\x1b\x1b", small, sizeof small), 8);
    assert_string_equal(small, "\\x1b");
    assert_int_equal(text_escape("\x1b\x1b", NULL, 0), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_and_negative_zero),
        cmocka_unit_test(test_json_escape_surrogate_pairs),
        cmocka_unit_test(test_infinities_and_nan),
        cmocka_unit_test(test_huge_and_tiny_use_the_exponent),
        cmocka_unit_test(test_every_precision),
        cmocka_unit_test(test_precision_outside_the_range_is_clamped),
        cmocka_unit_test(test_max_width_switches_never_cuts),
        cmocka_unit_test(test_buffer_too_small_reports_the_wanted_length),
        cmocka_unit_test(test_counts_are_grouped_by_three),
        cmocka_unit_test(test_widths_of_characters),
        cmocka_unit_test(test_widths_of_strings),
        cmocka_unit_test(test_control_set),
        cmocka_unit_test(test_invisible_characters_escaped),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_escape_reports_the_length_and_never_overflows),
        cmocka_unit_test(test_markdown_escapes_line_starts),
    };
    return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
