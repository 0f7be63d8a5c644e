/* Where a question's answer is written down in a text: a number near its value, or its choice
 * token in a sentence that names the question's focus row. Used by --check (no answer before its
 * question) and by the worksheet (answers blanked until the key). */
#ifndef ATTNSTEP_LESSON_ANSWER_H
#define ATTNSTEP_LESSON_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include "lesson.h"

typedef struct {
    bool numeric;
    double value;        /* the true value, for a numeric answer */
    double tolerance;    /* a written number within this of value gives it away */
    int decimals;        /* the precision asked (decimals of the key as written), or -1 */
    bool every_rounding; /* also any rounding of value to 1 … 4 decimals, and as a percentage
                            to 0 … 2 decimals (the worksheet's rule, stricter than --check's) */
    const char *token;   /* the right choice, for a choice answer */
    const char *row;     /* the focus row's label, or NULL: then the token alone gives it away */
    const char *sentence; /* the lesson's own sentence (its tokens joined by spaces), or NULL:
                             quoting it tells nothing */
} lesson_answer;

/* The first place in text at or after byte `from` that tells the answer: true with its byte
 * offset and length (the number, or the token in its sentence). */
bool lesson_answer_find(const lesson_answer *a, const char *text, size_t from, size_t *at,
                        size_t *length);

/* The number of decimals written in text ("0.63" → 2, "1" → 0), or -1 when it is no number. */
int lesson_answer_decimals(const char *text);

/* What question `asked` (after lesson_check: `answer: auto` taken) has as its answer: its focus
 * cell's true value, or its right choice with the focus row's label (written into row). Its
 * precision is the key's decimals, or what its tolerance allows (0.005: two decimals); a
 * numeric choice is accepted within half a unit of its last decimal. */
void lesson_answer_of(const trace *t, const lesson_step *asked, const char *sentence, char *row,
                      size_t size, lesson_answer *a);

/* The lesson's own sentence, its tokens joined by spaces (malloc'd; NULL when memory ran out). */
char *lesson_sentence(const lesson *l);

#endif
