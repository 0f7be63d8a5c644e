/* ui_terminal_known: whether the terminal type has a terminfo entry the UI can draw with,
 * looked up apart from the rest of the UI because term.h defines macros (lines, columns, tab,
 * ...) that must not leak. */
#include "ui_curses.h"
#include <term.h>
#include <unistd.h>
#include "ui.h"

/* An entry without cursor addressing (cup) cannot place a cell: curses would scroll the
 * screen line after line into an unreadable stream, so such a terminal gets the plain trace,
 * as TERM=dumb does. */
bool ui_terminal_known(const char *term)
{
    int error = 0;
    TERMINAL *saved = cur_term;
    if (setupterm(term, STDOUT_FILENO, &error) != OK) return false;
    char *cup = tigetstr("cup");
    bool addressable = cup != NULL && cup != (char *)-1;
    del_curterm(set_curterm(saved));   /* the entry was only looked up */
    return addressable;
}
