/* Comparison helpers for the cmocka tests. */
#include <math.h>
#include <stdio.h>
#include "support.h"

void support_assert_close(const char *what, const double *expected, const double *actual,
                          size_t count, double tolerance)
{
    for (size_t i = 0; i < count; i++) {
        double e = expected[i], a = actual[i];
        bool same = isinf(e) || isinf(a) ? e == a : fabs(e - a) <= tolerance;
        if (!same) {
            print_error("%s: first difference at index %zu: expected %.17g, got %.17g "
                        "(tolerance %g)\n", what, i, e, a, tolerance);
            fail();
        }
    }
}
