/* The one rule for naming a token (token_name.h): its name when it is written once, its name and
 * position always, and the refusal of a repeated token's plain name with its positions. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "token_name.h"
#include "ops/ops.h"   /* explain_put: the core's one writer of text into a buffer */

/* Longer names name no token: a lesson's tokens are at most 256 bytes. */
enum { NAME_MAX_BYTES = 320, POSITIONS_LISTED = 6 };

static const char *array_label(const void *tokens, int i)
{
    return ((const char *const *)tokens)[i];
}

token_axis token_axis_of(const char *const *tokens, int count)
{
    return (token_axis){ tokens, count, array_label, NULL };
}

/* The positions of name, at most max of them into out; how many there are in all. */
static int positions_of(const token_axis *axis, const char *name, int *out, int max)
{
    if (axis->positions)
        return axis->positions(axis->tokens, name, out, max);
    int found = 0;
    for (int i = 0; i < axis->count; i++)
        if (strcmp(axis->label(axis->tokens, i), name) == 0 && found++ < max)
            out[found - 1] = i;
    return found;
}

/* name[0, length) as a string in buffer, or false when it is too long to name a token. */
static bool copy_name(const char *name, size_t length, char *buffer)
{
    if (length >= NAME_MAX_BYTES || memchr(name, '\0', length))
        return false;
    memcpy(buffer, name, length);
    buffer[length] = '\0';
    return true;
}

/* "dog@6": the token at position 6 when it is a dog. */
static bool find_at(const token_axis *axis, const char *name, size_t length, int *index)
{
    size_t at = length;
    while (at > 0 && name[at - 1] != '@')
        at--;
    if (at == 0)
        return false;
    size_t digits = length - at;
    if (digits == 0 || digits > 9 || strspn(name + at, "0123456789") < digits)
        return false;
    int position = atoi(name + at);
    if (position >= axis->count)
        return false;
    const char *label = axis->label(axis->tokens, position);
    if (strlen(label) != at - 1 || strncmp(label, name, at - 1) != 0)
        return false;
    *index = position;
    return true;
}

token_name_status token_name_find(const token_axis *axis, const char *name, size_t length,
                                  int *index)
{
    char copy[NAME_MAX_BYTES];
    if (!copy_name(name, length, copy))
        return TOKEN_NAME_NONE;
    int first[2];
    int count = positions_of(axis, copy, first, 2);
    if (count == 1) {
        *index = first[0];
        return TOKEN_NAME_FOUND;
    }
    if (count > 1)
        return TOKEN_NAME_REPEATED;
    return find_at(axis, name, length, index) ? TOKEN_NAME_FOUND : TOKEN_NAME_NONE;
}

int token_name_refusal(const token_axis *axis, const char *name, size_t length, char *buffer,
                       size_t size)
{
    char copy[NAME_MAX_BYTES] = "";
    int at[POSITIONS_LISTED];
    int count = copy_name(name, length, copy) ? positions_of(axis, copy, at, POSITIONS_LISTED)
                                              : 0;
    int listed = count < POSITIONS_LISTED ? count : POSITIONS_LISTED;
    explain_text out = { .buffer = buffer, .size = size };
    if (size)
        buffer[0] = '\0';
    explain_put(&out, "'%s' appears at positions", copy);
    for (int i = 0; i < listed; i++)
        explain_put(&out, "%s %d", i == 0 ? "" : i + 1 == count ? " and" : ",", at[i]);
    if (count > listed)
        explain_put(&out, " and %d more", count - listed);
    /* two or three to choose from are named; more are shown by the first three */
    int named = count <= 3 ? count : 3;
    explain_put(&out, ": write ");
    for (int i = 0; i < named; i++)
        explain_put(&out, "%s%s@%d", i == 0 ? "" : i + 1 == count ? " or " : ", ", copy, at[i]);
    if (count > named)
        explain_put(&out, " or another %s@POSITION", copy);   /* "a@0, a@2, a@3 or another a@POSITION" */
    return out.length > (size_t)INT_MAX ? -1 : (int)out.length;
}
