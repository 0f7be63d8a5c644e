/* Shared by the cmocka tests: comparisons of number arrays that name the first difference, a
 * stream that captures what a function prints, and the timing the tests give --stats. */
#ifndef ATTNSTEP_TEST_SUPPORT_H
#define ATTNSTEP_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Fails the test, printing what, the index and both values of the first pair of numbers that
 * differ by more than tolerance (absolute). Infinities compare equal only to themselves. */
void support_assert_close(const char *what, const double *expected, const double *actual,
                          size_t count, double tolerance);

/* Fills count numbers in [-1, 1) from a fixed linear congruential sequence chosen by seed: test
 * inputs that are the same on every machine. */
void support_fill(double *x, size_t count, unsigned seed);

/* What a function writes to a FILE, kept in memory:
 *     support_capture c;
 *     print_something(support_capture_begin(&c));
 *     char *text = support_capture_end(&c);   // then free(text)
 * begin fails the test when the stream cannot be opened. */
typedef struct {
    FILE *stream;
    char *text;
    size_t size;
} support_capture;
FILE *support_capture_begin(support_capture *c);
/* Closes the stream and returns everything written to it (NUL-terminated; the caller frees). */
char *support_capture_end(support_capture *c);

/* The min_seconds the tests give stats_time, stats_print and stats_cost: the least there is
 * (STATS_MIN_BATCHES batches of a millisecond), since the tests check the text and the counts,
 * never how fast this machine is; the program's own default is STATS_MIN_SECONDS. */
#define SUPPORT_MIN_SECONDS 0.0

#endif
