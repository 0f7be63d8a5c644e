/* Shared by the cmocka tests: comparisons of number arrays that name the first difference. */
#ifndef ATTNSTEP_TEST_SUPPORT_H
#define ATTNSTEP_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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

#endif
