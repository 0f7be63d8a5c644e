/* The one number formatter (number.h). Lives in the core because explanations write numbers;
 * every other layer calls it too. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "number.h"

int number_columns(const char *number)
{
    int columns = 0;
    for (const unsigned char *c = (const unsigned char *)number; *c; c++)
        columns += (*c & 0xC0) != 0x80;  /* count characters, not the bytes of − and ∞ */
    return columns;
}

static void trim_zeros(char *dot, char *end)
{
    /* trailing zeros after the point go, one digit stays: "0.5000" → "0.5", "1.0000" → "1.0" */
    char *last = end - 1;
    while (last > dot + 1 && *last == '0')
        last--;
    memmove(last + 1, end, strlen(end) + 1);
}

/* Exponent form with `decimals` digits after the mantissa's point; SHORT trims its zeros. */
static void write_exponent(double x, int decimals, bool trim, char *out, size_t size)
{
    snprintf(out, size, "%.*e", decimals, x);
    char *dot = strchr(out, '.'), *e = strchr(out, 'e');
    if (trim && dot && e)
        trim_zeros(dot, e);
}

static void write_decimal(double x, const number_format *f, char *out, size_t size)
{
    snprintf(out, size, "%.*f", f->precision, x);
    char *dot = strchr(out, '.');
    if (f->style == NUMBER_SHORT) {
        if (dot)
            trim_zeros(dot, out + strlen(out));
        else
            strncat(out, ".0", size - strlen(out) - 1);
    }
    /* a tiny negative number rounded to zero shows no sign */
    if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1))
        memmove(out, out + 1, strlen(out));
}

static void write_special(double x, const number_format *f, char *out, size_t size)
{
    bool ascii = f->ascii || f->style == NUMBER_EXACT;
    if (isnan(x))
        snprintf(out, size, "%s", ascii ? "nan" : "NaN");
    else if (x < 0)
        snprintf(out, size, "%s", ascii ? "-inf" : "\xe2\x88\x92\xe2\x88\x9e");
    else
        snprintf(out, size, "%s", ascii ? "inf" : "\xe2\x88\x9e");
}

int number_write(double x, const number_format *f, char *buffer, size_t size)
{
    char text[NUMBER_MAX];
    int precision = f->precision < 0 ? 0 : f->precision > 17 ? 17 : f->precision;
    bool trim = f->style == NUMBER_SHORT;
    if (!isfinite(x))
        write_special(x, f, text, sizeof text);
    else if (f->style == NUMBER_EXACT)
        snprintf(text, sizeof text, "%.17g", x);
    else if (x != 0.0 && (fabs(x) >= 1e9 || fabs(x) < 0.5 * pow(10.0, -precision)))
        write_exponent(x, precision > 0 ? precision - 1 : 0, trim, text, sizeof text);
    else
        write_decimal(x, &(number_format){ f->style, precision, 0, f->ascii }, text, sizeof text);
    /* too wide: exponent form with fewer and fewer digits, down to "1e+100" */
    for (int decimals = precision > 0 ? precision - 1 : 0;
         f->max_width > 0 && isfinite(x) && number_columns(text) > f->max_width && decimals >= 0;
         decimals--)
        write_exponent(x, decimals, trim, text, sizeof text);
    return snprintf(buffer, size, "%s", text);
}

int number_write_count(unsigned long long count, char *buffer, size_t size)
{
    char digits[32], text[NUMBER_MAX];
    int length = snprintf(digits, sizeof digits, "%llu", count), at = 0;
    for (int i = 0; i < length; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            text[at++] = ',';
        text[at++] = digits[i];
    }
    text[at] = '\0';
    return snprintf(buffer, size, "%s", text);
}
