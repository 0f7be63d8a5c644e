/* ui_terminal_known: whether the terminal type has a terminfo entry, looked up apart from the
 * rest of the UI because term.h defines macros (lines, columns, tab, ...) that must not leak. */
#include "ui_curses.h"
#include <term.h>
#include <unistd.h>
#include "ui.h"

bool ui_terminal_known(const char *term)
{
    int error = 0;
    TERMINAL *saved = cur_term;
    if (setupterm(term, STDOUT_FILENO, &error) != OK) return false;
    del_curterm(set_curterm(saved));   /* the entry was only looked up */
    return true;
}
