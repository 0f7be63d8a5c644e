/* Comparison and capture helpers for the cmocka tests. */
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

void support_fill(double *x, size_t count, unsigned seed)
{
    unsigned long long state = seed * 2654435761ULL + 1;
    for (size_t i = 0; i < count; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

FILE *support_capture_begin(support_capture *c)
{
    *c = (support_capture){ NULL, NULL, 0 };
    c->stream = open_memstream(&c->text, &c->size);
    assert_non_null(c->stream);
    return c->stream;
}

char *support_capture_end(support_capture *c)
{
    fclose(c->stream);
    c->stream = NULL;
    return c->text;
}
