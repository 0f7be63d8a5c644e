/* Inputs the cmocka tests share, set up in one place: the hand-worked cat/sat example, token
 * labels, lessons and traces that must load and compute (a failure fails the test), and the
 * assertions on what the program would print of them. */
#ifndef ATTNSTEP_TEST_FIXTURES_H
#define ATTNSTEP_TEST_FIXTURES_H

#include "lesson.h"
#include "trace.h"

/* "a" … "h": the tokens of inputs of up to 8 words. */
extern const char *const fixture_labels[8];

/* The reference tutorial's example, known by hand: cat [1, 0.5] and sat [0, 1], identity
 * weights (d_model 2), one head, no mask, scaled scores. */
attention_input fixture_cat_sat(void);

/* Computes in into t with the default options; the test fails unless it succeeds. */
void fixture_compute(const attention_input *in, trace *t);

/* Loads text as the lesson "t.yaml"; the test fails unless it loads (its diagnostics are printed
 * then). Returns how many diagnostics (warnings) it gave. */
int fixture_load(const char *text, lesson *l);

/* Loads text as the lesson "t.yaml" and returns its status, whatever it is; the first
 * diagnostic's message (or "") goes into message. On LESSON_OK free l with lesson_free. */
lesson_status fixture_load_status(const char *text, lesson *l, char *message, size_t size);

/* Asserts that text is refused with a first message that contains expected. */
void fixture_refused(const char *text, const char *expected);

/* fixture_load, then fixture_compute of the lesson's input into t. */
void fixture_load_traced(const char *text, lesson *l, trace *t);

/* Asserts that the explanation of the cell spec names (at head, 4 decimals) is expected. */
void fixture_explains(const trace *t, const char *spec, int head, const char *expected);

/* Asserts that the diagnostics d, printed as the program prints them, are expected. */
void fixture_diagnostics_are(const lesson_diagnostics *d, const char *expected);

#endif
