/* The leader's tally of a number question as a histogram (issue #14): the answers binned
 * between the least and the largest, outliers counted apart, and the words of the status line.
 * Pure (libc, libm and the core's number formatter, which writes every number here: edges and
 * medians to 4 decimals, the numbers given to 6, trailing zeros dropped), so it is unit-tested
 * without a terminal. */
#ifndef ATTNSTEP_UI_TALLY_H
#define ATTNSTEP_UI_TALLY_H

#include <stdbool.h>
#include <stddef.h>

enum { UI_TALLY_BINS = 6 };   /* as many bars as fit the status line at 80 columns */

typedef struct {
    int n;                /* answers binned, outliers included */
    int bins;             /* bars used: UI_TALLY_BINS, or 1 when the binned answers are equal */
    double lo, hi;        /* the least and largest answer binned; bar i covers
                             [lo + i·w, lo + (i+1)·w) with w = (hi − lo) / bins, the last one
                             closed */
    int count[UI_TALLY_BINS];
    int below, above;     /* outliers: answers beyond 1.5 interquartile ranges of the middle
                             half (Tukey's fences), left out of the bars so one typo does not
                             squash every other answer into one bar */
    double median;        /* of every answer */
    int right;            /* answers within the tolerance of the key; -1: no key known */
} ui_tally_histogram;

/* The one rule a number answer is judged by, in the UI (ui_view) and in the leader's tally
 * (issue 24): right when within tolerance of the true value, the trace's own cell, never a
 * rounded key (0.62 is right for 0.6296 at ± 0.01, though the key says 0.63). */
bool ui_tally_within(double given, double truth, double tolerance);
/* The decimals a tolerance asks for: the fewest whose half unit it covers (± 0.005 and ± 0.01:
 * two; ± 0.05: one; ± 0.5: none), and their words ("two decimals", "a whole number",
 * "exactly" for a tolerance of 0). */
int ui_tally_decimals(double tolerance);
void ui_tally_precision(double tolerance, char *text, size_t size);

/* Bins n answers (finite: the transport refuses NaN and infinities; asserted) and counts those
 * within tolerance of key, the true value (ui_tally_within, as a follower's answer is judged),
 * unless key is NaN (the leader's
 * lesson does not know it). Sorts numbers in place. n = 0 gives an empty histogram (bins 0). */
void ui_tally_bin(double *numbers, int n, double key, double tolerance, ui_tally_histogram *h);

/* The histogram in words for the status line (UTF-8; the painter spells it in ASCII without
 * UTF-8): "0.5 ▕█    █▏ 0.63 · 15 right · median 0.63": the least binned answer, one bar per
 * bin, its height (▁ to █) its count against the tallest, a space for none, the largest, the
 * answers within the key's tolerance (when the key is known: never the key itself, as the
 * leader's screen may be projected), the median (if asked: at 80 columns it gives way to the
 * names still waited for); with outliers "2< 0.5 ▕…▏ 0.63 >1"; when every
 * binned answer is the same "all 0.63" (or "0.63 ▕█▏" around outliers). Always NUL-terminated;
 * cut at size. */
void ui_tally_write(const ui_tally_histogram *h, bool median, char *text, size_t size);

/* ---- a question's result, kept by the leader from its opening to the end of the class ---- */

enum { UI_TALLY_MAX_CHOICE = 9 };

typedef struct {
    int step;                    /* the script step, from 0 */
    int joined, answered;        /* followers in the class, and of them those who answered */
    int n_choices;               /* the question's choices; 0: a number question */
    const char *const *choice_text;   /* borrowed: (n_choices) the choices as written */
    int choices[UI_TALLY_MAX_CHOICE + 1];   /* how many chose 1 … n_choices */
    int right_choice;            /* 1 … n_choices, or 0 when the lesson does not know it */
    double *numbers;             /* the caller's: (n_numbers) the numbers typed; sorted here */
    int n_numbers;
    double truth, tolerance;     /* a number question's true value (NaN: not known) */
} ui_tally_result;

/* How many answered right (ui_tally_within for numbers), or -1 when the key is not known. */
int ui_tally_result_right(const ui_tally_result *r);

/* The result in one line for the status line after the reveal: "right 3/5 · 0.63 ×3, 0.62 ×1,
 * 0.7 ×1" (right of answered, then each number given, the most given first) or "right 8/12 ·
 * 1×8 2×4"; "answered 5/6 · …" when the key is not known. Cut on a whole character. */
void ui_tally_result_line(ui_tally_result *r, char *text, size_t size);

/* The class's results box: for each of count results (in the order given) a heading "step 5 ·
 * answered 30 of 31 · right 20 · skipped 1" ("skipped": in the class, not answered), then its
 * counts: one line per choice ("  1 ×20  cat  ✓" for the right one) or the histogram
 * (ui_tally_write, with the median) and the numbers given with their counts. Lines end with
 * '\n'; "no question has been asked in this class yet" for count 0. Cut on a whole character. */
void ui_tally_results_text(ui_tally_result *const *results, int count, char *text, size_t size);

#endif
