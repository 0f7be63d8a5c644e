/* How a token is named wherever a cell is named (--explain, claims, placeholders, a step's focus
 * and answer): the one rule, shared by the core's cell names and the loader's. Pure. */
#ifndef ATTNSTEP_TOKEN_NAME_H
#define ATTNSTEP_TOKEN_NAME_H

#include <stddef.h>

/* The tokens along one axis, as the caller keeps them: how many, token i, and the positions of
 * one name. positions writes at most max of name's positions, in order, into out and returns
 * how many there are in all; NULL reads label by label (the loader's sorted index is faster). */
typedef struct {
    const void *tokens;
    int count;
    const char *(*label)(const void *tokens, int i);
    int (*positions)(const void *tokens, const char *name, int *out, int max);
} token_axis;

/* A plain array of count token strings. */
token_axis token_axis_of(const char *const *tokens, int count);

typedef enum {
    TOKEN_NAME_FOUND,     /* *index is the token */
    TOKEN_NAME_NONE,      /* no token is so named */
    TOKEN_NAME_REPEATED   /* the plain name of a token written more than once: refused, as it
                             could be either (token_name_refusal says which to write) */
} token_name_status;

/* Reads name[0, length): a token written once by its name, any token by its name, "@" and its
 * 0-based position ("dog@6", as trace_axis_name writes a repeated token; a token with an "@" of
 * its own is found by its name first). A 0-based index is the caller's rule, not read here. */
token_name_status token_name_find(const token_axis *axis, const char *name, size_t length,
                                  int *index);

/* Why the plain name of a repeated token is refused, with what to write instead:
 * "'dog' appears at positions 2 and 6: write dog@2 or dog@6". Returns the length it wanted. */
int token_name_refusal(const token_axis *axis, const char *name, size_t length, char *buffer,
                       size_t size);

#endif
