/* Small helpers every file of the UI uses; no curses, no state. */
#ifndef ATTNSTEP_UI_UTIL_H
#define ATTNSTEP_UI_UTIL_H

/* The longest text a pane is drawn from (narration, an explanation), in bytes or wide
 * characters; longer text is cut. */
#define UI_TEXT_MAX 4096

#define UI_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static inline int ui_clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

#endif
