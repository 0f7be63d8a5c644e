/* The leader's tally of a number question as a histogram (issue #14): the answers binned
 * between the least and the largest, outliers counted apart, and the words of the status line.
 * Pure (libc and libm only), so it is unit-tested without a terminal. */
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

#endif
