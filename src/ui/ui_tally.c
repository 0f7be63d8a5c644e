/* The leader's histogram of a number question's answers (ui_tally.h): Tukey's fences for the
 * outliers, equal bins between the least and largest answer within them, and its words. */
#include "ui_tally.h"
#include "number.h"
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bar of x in [lo, hi] (lo < hi) cut in bins equal parts; hi falls in the last. Halved
 * first, so that answers near ±DBL_MAX (finite, so allowed) do not overflow to inf − inf. */
static int bin_of(double x, double lo, double hi, int bins)
{
    int i = (int)floor((x / 2 - lo / 2) / (hi / 2 - lo / 2) * bins);
    return i < 0 ? 0 : i >= bins ? bins - 1 : i;
}

/* A hair of slack for the double that is the tolerance itself: 0.63 − 0.62 is 0.010000000000000009 in
 * binary, and "within 0.01" means it (lesson_check allows as much). */
bool ui_tally_within(double given, double truth, double tolerance)
{
    return fabs(given - truth) <= tolerance * (1.0 + 1e-9) + 1e-15;
}

enum { MOST_DECIMALS = 9 };

int ui_tally_decimals(double tolerance)
{
    double half = 0.5;
    for (int d = 0; d < MOST_DECIMALS; d++, half /= 10)
        if (ui_tally_within(half, 0, tolerance)) return d;
    return MOST_DECIMALS;
}

void ui_tally_precision(double tolerance, char *text, size_t size)
{
    static const char *const words[] = {"a whole number", "one decimal", "two decimals",
                                        "three decimals", "four decimals", "five decimals"};
    int d = ui_tally_decimals(tolerance);
    if (tolerance <= 0) snprintf(text, size, "exactly");
    else if (d < (int)(sizeof words / sizeof words[0])) snprintf(text, size, "%s", words[d]);
    else snprintf(text, size, "%d decimals", d);
}

void ui_tally_bin(double *numbers, int n, double key, double tolerance, ui_tally_histogram *h)
{
    memset(h, 0, sizeof *h);
    h->right = isnan(key) ? -1 : 0;
    if (n <= 0) return;
    for (int i = 0; i < n; i++) {
        assert(isfinite(numbers[i]));
        if (!isnan(key) && ui_tally_within(numbers[i], key, tolerance)) h->right++;
    }
    qsort(numbers, (size_t)n, sizeof *numbers, compare_doubles);
    h->n = n;
    h->median = numbers[n / 2];
    double q1 = numbers[n / 4], q3 = numbers[3 * n / 4], spread = 1.5 * (q3 - q1);
    int first = 0, last = n - 1;   /* the answers within the fences */
    while (numbers[first] < q1 - spread) first++;
    while (numbers[last] > q3 + spread) last--;
    h->below = first;
    h->above = n - 1 - last;
    h->lo = numbers[first];
    h->hi = numbers[last];
    h->bins = h->hi > h->lo ? UI_TALLY_BINS : 1;
    for (int i = first; i <= last; i++)
        h->count[h->bins == 1 ? 0 : bin_of(numbers[i], h->lo, h->hi, h->bins)]++;
}

/* Every number here is written by the one formatter (number.h), as the view writes the
 * follower's own answer: a histogram's edges and median to EDGE_DECIMALS decimals, the numbers
 * given to GIVEN_DECIMALS, enough that two answers a student types do not read alike (trailing
 * zeros dropped: 0.63, 0.7, 2.0). */
enum { EDGE_DECIMALS = 4, GIVEN_DECIMALS = 6 };
typedef struct { char text[NUMBER_MAX]; } written;
static written write_number(double x, int decimals)
{
    written w;
    number_format f = {.style = NUMBER_SHORT, .precision = decimals};
    number_write(x, &f, w.text, sizeof w.text);
    return w;
}

/* Heights: a space for an empty bar, then ▁ … █ against the tallest. */
static const char *const bars[] = {" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                   "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                   "\xe2\x96\x87", "\xe2\x96\x88"};
enum { LEVELS = sizeof bars / sizeof bars[0] - 1 };

/* Appends to text at *used, as snprintf does, but a cut text ends on a whole UTF-8 character
 * (then *used is size: nothing more is added). */
static void put(char *text, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size) return;
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(text + *used, size - *used, format, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < size - *used) {
        *used += (size_t)n;
        return;
    }
    size_t end = size - 1;   /* cut: drop a last character missing some of its bytes */
    size_t start = end;
    while (start > 0 && ((unsigned char)text[start - 1] & 0xC0) == 0x80) start--;
    if (start > 0 && (unsigned char)text[start - 1] >= 0xC0) {
        unsigned char lead = (unsigned char)text[start - 1];
        size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (end - (start - 1) < length) text[start - 1] = '\0';
    }
    *used = size;
}

void ui_tally_write(const ui_tally_histogram *h, bool median, char *text, size_t size)
{
    assert(size > 0);
    text[0] = '\0';
    if (h->n == 0) return;
    size_t used = 0;
    if (h->bins == 1 && !h->below && !h->above) {
        put(text, size, &used, "all %s", write_number(h->lo, EDGE_DECIMALS).text);
        if (h->right >= 0) put(text, size, &used, " \xc2\xb7 %d right", h->right);
        return;
    }
    int top = 1;
    for (int i = 0; i < h->bins; i++) top = h->count[i] > top ? h->count[i] : top;
    if (h->below) put(text, size, &used, "%d< ", h->below);
    put(text, size, &used, "%s \xe2\x96\x95", write_number(h->lo, EDGE_DECIMALS).text);
    for (int i = 0; i < h->bins; i++)   /* any answer makes a bar of at least ▁ */
        put(text, size, &used, "%s", bars[(h->count[i] * LEVELS + top - 1) / top]);
    put(text, size, &used, "\xe2\x96\x8f");
    if (h->bins > 1) put(text, size, &used, " %s", write_number(h->hi, EDGE_DECIMALS).text);
    if (h->above) put(text, size, &used, " >%d", h->above);
    if (h->right >= 0) put(text, size, &used, " \xc2\xb7 %d right", h->right);
    if (median)
        put(text, size, &used, " \xc2\xb7 median %s", write_number(h->median, EDGE_DECIMALS).text);
}

/* ---- results ---- */

int ui_tally_result_right(const ui_tally_result *r)
{
    if (r->n_choices > 0) return r->right_choice > 0 ? r->choices[r->right_choice] : -1;
    if (isnan(r->truth)) return -1;
    int right = 0;
    for (int i = 0; i < r->n_numbers; i++) right += ui_tally_within(r->numbers[i], r->truth, r->tolerance);
    return right;
}

/* "right 3/5" or "answered 5/6" when the key is not known. */
static void put_score(const ui_tally_result *r, char *text, size_t size, size_t *used)
{
    int right = ui_tally_result_right(r);
    if (right >= 0) put(text, size, used, "right %d/%d", right, r->answered);
    else put(text, size, used, "answered %d/%d", r->answered, r->joined);
}

/* How many of the sorted numbers from i on equal numbers[i]. */
static int run_at(const double *numbers, int n, int i)
{
    int run = 1;
    while (i + run < n && numbers[i + run] == numbers[i]) run++;
    return run;
}

/* The numbers given, each once with its count, the most given first (then the least value):
 * "0.63 ×3, 0.62 ×1". Sorts r->numbers. */
static void put_numbers(ui_tally_result *r, char *text, size_t size, size_t *used)
{
    qsort(r->numbers, (size_t)r->n_numbers, sizeof *r->numbers, compare_doubles);
    int listed = 0, next_count = INT_MAX;
    while (listed < r->n_numbers) {   /* one pass per count, from the largest down */
        int best = 0;
        for (int i = 0, run; i < r->n_numbers; i += run) {
            run = run_at(r->numbers, r->n_numbers, i);
            if (run < next_count && run > best) best = run;
        }
        for (int i = 0, run; i < r->n_numbers; i += run) {
            run = run_at(r->numbers, r->n_numbers, i);
            if (run != best) continue;
            put(text, size, used, "%s%s \xc3\x97%d", listed ? ", " : "",
                write_number(r->numbers[i], GIVEN_DECIMALS).text, run);
            listed += run;
        }
        next_count = best;
    }
}

static void put_choice_counts(const ui_tally_result *r, char *text, size_t size, size_t *used)
{
    const char *separator = "";
    for (int i = 1; i <= r->n_choices && i <= UI_TALLY_MAX_CHOICE; i++)
        if (r->choices[i]) {
            put(text, size, used, "%s%d\xc3\x97%d", separator, i, r->choices[i]);
            separator = " ";
        }
}

void ui_tally_result_line(ui_tally_result *r, char *text, size_t size)
{
    assert(size > 0);
    size_t used = 0;
    text[0] = '\0';
    put_score(r, text, size, &used);
    if (r->answered == 0) return;
    put(text, size, &used, " \xc2\xb7 ");
    if (r->n_choices > 0) put_choice_counts(r, text, size, &used);
    else put_numbers(r, text, size, &used);
}

/* One result's lines in the box. */
static void put_result(ui_tally_result *r, char *text, size_t size, size_t *used)
{
    int right = ui_tally_result_right(r);
    put(text, size, used, "step %d \xc2\xb7 answered %d of %d", r->step + 1, r->answered, r->joined);
    if (right >= 0) put(text, size, used, " \xc2\xb7 right %d", right);
    put(text, size, used, " \xc2\xb7 skipped %d\n", r->joined > r->answered ? r->joined - r->answered : 0);
    for (int i = 1; i <= r->n_choices && i <= UI_TALLY_MAX_CHOICE; i++)
        put(text, size, used, "  %d \xc3\x97%-3d %s%s\n", i, r->choices[i], r->choice_text[i - 1],
            i == r->right_choice ? "  \xe2\x9c\x93" : "");
    if (r->n_choices > 0 || r->n_numbers == 0) return;
    char histogram[160];
    ui_tally_histogram h;
    double *copy = malloc((size_t)r->n_numbers * sizeof *copy);   /* binning sorts its input */
    if (copy) {
        memcpy(copy, r->numbers, (size_t)r->n_numbers * sizeof *copy);
        ui_tally_bin(copy, r->n_numbers, r->truth, r->tolerance, &h);
        ui_tally_write(&h, true, histogram, sizeof histogram);
        put(text, size, used, "  %s\n", histogram);
        free(copy);
    }
    put(text, size, used, "  ");
    put_numbers(r, text, size, used);
    put(text, size, used, "\n");
}

void ui_tally_results_text(ui_tally_result *const *results, int count, char *text, size_t size)
{
    assert(size > 0);
    size_t used = 0;
    text[0] = '\0';
    if (count == 0) put(text, size, &used, "no question has been asked in this class yet\n");
    for (int i = 0; i < count; i++) put_result(results[i], text, size, &used);
}
