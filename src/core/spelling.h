/* "Did you mean": the nearest of a list of words to a mistyped one, shared by the loader's
 * diagnostics and the cell language of --at, --explain and claims. Pure. */
#ifndef ATTNSTEP_SPELLING_H
#define ATTNSTEP_SPELLING_H

/* The word of words[0 … count-1] nearest to word: one that differs only in the case of ASCII
 * letters, else the first nearest in edit distance (within a third of its length, and sharing
 * some letters with word), or NULL when none is near. */
const char *spelling_nearest(const char *word, const char *const *words, int count);

#endif
