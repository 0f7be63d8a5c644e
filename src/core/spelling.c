/* "Did you mean": the nearest word by edit distance (see spelling.h). */
#include <stdbool.h>
#include <string.h>
#include "spelling.h"

/* Optimal-string-alignment distance (a swap of neighbours costs 1), or a large number when
 * either word is too long to be worth comparing. */
static int edit_distance(const char *a, const char *b)
{
    enum { MAX = 32 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAX || lb > MAX) return 1000;
    int d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]
                && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/* Whether a and b differ at most in the case of ASCII letters ("Sat" and "sat"). */
static bool same_but_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

const char *spelling_nearest(const char *word, const char *const *words, int count)
{
    const char *best = NULL;
    int best_distance = 0;
    for (int i = 0; i < count; i++)
        if (same_but_case(word, words[i])) return words[i];  /* nearer than any other */
    for (int i = 0; i < count; i++) {
        int distance = edit_distance(word, words[i]);
        int allowed = (int)strlen(words[i]) / 3;
        if (allowed < 1) allowed = 1;
        /* Not a word that shares nothing with this one ('x' for 'y', '2' for '1'). */
        int shorter = (int)(strlen(word) < strlen(words[i]) ? strlen(word) : strlen(words[i]));
        if (distance >= shorter) continue;
        if (distance <= allowed && (!best || distance < best_distance)) {
            best = words[i];
            best_distance = distance;
        }
    }
    return best;
}
