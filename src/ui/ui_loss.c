/* The loss curve (ui_loss.h): the loss after each training update as bars of eighths
 * (U+2581 … U+2588), '#', ':' and '.' in ASCII, one column a step. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "number.h"
#include "ui_loss.h"

/* Appends to out[*used …) as snprintf, counting what it wanted past the end too. */
static void add(char *out, size_t size, int *used, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    size_t at = (size_t)*used < size ? (size_t)*used : size;
    int wrote = vsnprintf(out ? out + at : NULL, out ? size - at : 0, format, args);
    va_end(args);
    *used += wrote > 0 ? wrote : 0;
}

static const char *number(double x, char *buffer)
{
    number_write(x, &(number_format){ NUMBER_SHORT, 4, 0, false }, buffer, NUMBER_MAX);
    return buffer;
}

/* The step column c of cols shows: every step when they fit, else steps spread evenly. */
static int step_of(int c, int cols, int count)
{
    return cols >= count ? c : (int)lround((double)c * (count - 1) / (cols - 1));
}

/* Eighths of the curve's height a loss fills: 1 (the lowest) … UI_LOSS_ROWS · 8 (the highest). */
static int eighths_of(double loss, double lo, double hi)
{
    int top = UI_LOSS_ROWS * 8;
    if (!(hi > lo))
        return top / 2;
    return 1 + (int)lround((loss - lo) / (hi - lo) * (top - 1));
}

/* One cell of a bar that fills `eighths`, on the row `from_bottom` rows above the axis. */
static const char *cell(int eighths, int from_bottom, bool utf8)
{
    static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
                                          "\u2586", "\u2587", "\u2588" };
    static const char *const ascii[] = { " ", ".", ".", ".", ":", ":", ":", ":", "#" };
    int part = eighths - from_bottom * 8;
    part = part < 0 ? 0 : part > 8 ? 8 : part;
    return utf8 ? blocks[part] : ascii[part];
}

int ui_loss_curve(const double *loss, int count, int mark, int width, bool utf8, char *out,
                  size_t size)
{
    int used = 0;
    char a[NUMBER_MAX], b[NUMBER_MAX], c[NUMBER_MAX];
    if (size > 0 && out)
        out[0] = '\0';
    if (count < 1)
        return 0;
    double lo = loss[0], hi = loss[0];
    for (int k = 1; k < count; k++)
        lo = fmin(lo, loss[k]), hi = fmax(hi, loss[k]);
    add(out, size, &used, "loss %s at step 0, %s at step %d; here (step %d): %s\n",
        number(loss[0], a), number(loss[count - 1], b), count - 1, mark, number(loss[mark], c));
    int label = (int)strlen(number(hi, a)) > (int)strlen(number(lo, b)) ? (int)strlen(a)
                                                                         : (int)strlen(b);
    int cols = width - label - 2;
    cols = cols < 2 ? 2 : cols > count ? count : cols;
    const char *rule = utf8 ? "\u2502" : "|";
    for (int r = UI_LOSS_ROWS - 1; r >= 0; r--) {
        const char *edge = r == UI_LOSS_ROWS - 1 ? number(hi, a) : r == 0 ? number(lo, a) : "";
        add(out, size, &used, "%*s %s", label, edge, rule);
        for (int col = 0; col < cols; col++)
            add(out, size, &used, "%s", cell(eighths_of(loss[step_of(col, cols, count)], lo, hi),
                                              r, utf8));
        add(out, size, &used, "\n");
    }
    int marked = 0;   /* the column showing the step nearest to mark */
    for (int col = 1; col < cols; col++)
        if (abs(step_of(col, cols, count) - mark) < abs(step_of(marked, cols, count) - mark))
            marked = col;
    add(out, size, &used, "%*s  %*s^\n", label, "", marked, "");
    add(out, size, &used, "%*s  0%*d", label, "", cols - 1, count - 1);
    return used;
}
