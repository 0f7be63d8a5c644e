/* The narration of the view's current step as text (ui_narration.c, no curses): what the lesson
 * screen's narration pane shows and what --reader says, one rule for both. */
#ifndef ATTNSTEP_UI_NARRATION_H
#define ATTNSTEP_UI_NARRATION_H

#include <stddef.h>
#include "number.h"
#include "ui_view.h"

/* The lesson's narration for the current step, or what the node table says about the stage; a
 * question waiting comes instead (its question, its choices one a line with `mark` before the
 * highlighted one, or "Your answer (two decimals, within ± 0.01 counts): " with the number
 * typed so far and `cursor`), and an answered one comes first with its verdict (its numbers as
 * f writes them). Off the script, where n and p lead back to it. The lesson opens with its
 * about: step 1 tells it first. Lesson text is copied as it is: the caller escapes it. Lines
 * are separated by '\n'; cut at size. */
void ui_narration_text(const ui_view *v, const number_format *f, const char *mark,
                       const char *cursor, char *text, size_t size);

#endif
