/* The one number formatter: every number attnstep shows (tables, explanations, narration,
 * the UI, JSON and CSV) is written by number_write, so no view can disagree with another. */
#ifndef ATTNSTEP_NUMBER_H
#define ATTNSTEP_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    NUMBER_SHORT,  /* explanations and prose: `precision` decimals, trailing zeros trimmed but
                      one kept ("1.0", "0.6296") */
    NUMBER_FIXED,  /* table cells: exactly `precision` decimals, so decimal points line up */
    NUMBER_EXACT   /* JSON and CSV: 17 significant digits, which read back to the same double */
} number_style;

typedef struct {
    number_style style;
    int precision;  /* decimals for SHORT and FIXED, 0 … 17 */
    int max_width;  /* columns at most: a longer number switches to exponent form with fewer
                       digits (never cut); 0 for no limit */
    bool ascii;     /* "-inf" and "inf" rather than "−∞" and "∞" */
} number_format;

/* Enough bytes for any number number_write writes, its terminating NUL included. */
#define NUMBER_MAX 48

/* Writes x as f says, locale-independently ('.' is always the decimal point):
 *   - a value that the decimals would show as zero, or of magnitude 1e9 or more, in exponent
 *     form with precision significant digits ("1.000e+100", "4.941e-324"), never as a wrong or
 *     cut integer;
 *   - zero as "0.0" (SHORT) or "0.0000" (FIXED), never "-0.0";
 *   - ±∞ as "−∞" / "∞" (EXACT and ascii: "-inf" / "inf"), NaN as "NaN" ("nan").
 * Returns the length it wanted, as snprintf does; the result is never longer than
 * NUMBER_MAX - 1 bytes. */
int number_write(double x, const number_format *f, char *buffer, size_t size);

/* Writes a count (of operations, of parameters) whole, its digits grouped by three with commas,
 * "8,388,608", so it can be checked by hand and never reads as a decimal. Returns the length it
 * wanted, as snprintf. */
int number_write_count(unsigned long long count, char *buffer, size_t size);

/* Columns the number takes on screen: its length, with "−" and "∞" one column each. */
int number_columns(const char *number);

#endif
