/* The one way the UI's files include curses. curses.h declares a debugging function named
 * trace(), which would clash with the core's trace type, so it is renamed while included. */
#ifndef ATTNSTEP_UI_CURSES_H
#define ATTNSTEP_UI_CURSES_H

#define trace ui_curses_trace_function
#include <curses.h>
#undef trace

#endif
