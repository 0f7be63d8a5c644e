/* The loss curve of a lesson's training as lines of text (ui_loss.c): block characters, or
 * ASCII when the locale cannot show UTF-8. No curses, so the tests read it directly. */
#ifndef ATTNSTEP_UI_LOSS_H
#define ATTNSTEP_UI_LOSS_H

#include <stdbool.h>
#include <stddef.h>

/* Rows of the curve itself (each eight levels high with block characters). */
#define UI_LOSS_ROWS 8

/* Writes into out (of size, always terminated) the curve of loss[0 … count − 1] (the loss
 * after k updates at k), at most width columns wide: a line saying where it starts, ends and
 * stands at step `mark`, UI_LOSS_ROWS rows of bars (one column a step, or steps sampled evenly
 * when there are more than columns; the highest loss at the top, the lowest at the bottom),
 * a caret under the column of `mark`, and the steps at both ends. Numbers are number.h's.
 * Returns the length it wanted, as snprintf. */
int ui_loss_curve(const double *loss, int count, int mark, int width, bool utf8, char *out,
                  size_t size);

#endif
