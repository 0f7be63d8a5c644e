/* The boxes over a screen that scroll (the help overlay and the sum pane): one way to move
 * them with keys, to close them with any other key or a click, and to say so in their footer. */
#include "ui_curses.h"
#include <stdio.h>
#include "ui_screen.h"

static ui_scroller *scroller_of(ui_screen *s)
{
    return (ui_scroller *)s;
}

/* Down and up move a line, next and previous (n Space PgDn, p PgUp) a page, in the bindings
 * of a lesson and of the picker; any other key closes the box. The box's draw keeps top at or
 * before its last page. */
ui_outcome ui_scroller_key(ui_screen *s, int k, const ui_style *st)
{
    (void)st;
    ui_scroller *b = scroller_of(s);
    int arg = 0, page = b->page > 0 ? b->page : 1;
    ui_action action = ui_key_action(k, UI_IN_LESSON | UI_IN_PICKER, &arg);
    if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_DOWN) b->top++;
    else if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_UP) b->top--;
    else if (action == UI_ACT_NEXT) b->top += page;
    else if (action == UI_ACT_PREV) b->top -= page;
    else return (ui_outcome){1, NULL};
    if (b->top < 0) b->top = 0;
    return UI_STAY;
}

/* A click anywhere closes the box, like a key. */
ui_outcome ui_scroller_click(ui_screen *s, int x, int y)
{
    (void)s, (void)x, (void)y;
    return (ui_outcome){1, NULL};
}

/* Keys on the box are timed where the screen beneath times its keys, under the box's word. */
const char *ui_scroller_key_kind(const ui_screen *s, int k)
{
    const ui_screen *under = s->under;
    return under->ops->key_kind && under->ops->key_kind(under, k) ? ((const ui_scroller *)s)->kind
                                                                  : NULL;
}

void ui_scroller_hint(const ui_style *st, char *text, size_t size)
{
    char up[32], down[32];
    snprintf(text, size, "%s %s scroll, any other key closes",
             ui_key_label(UI_KEY(KEY_DOWN), st->utf8, down, sizeof down),
             ui_key_label(UI_KEY(KEY_UP), st->utf8, up, sizeof up));
}
