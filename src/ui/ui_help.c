/* The help overlay: every binding of the screen it covers, generated from the key table, in a
 * box whose descriptions wrap to its width and that scrolls when the screen is too short. */
#include "ui_curses.h"
#include <stdio.h>
#include <stdlib.h>
#include "ui_screen.h"
#include "ui_util.h"

/* The help is a box that scrolls (ui_scroller.c); top: its first line shown, when it is longer
 * than the screen. */
static ui_scroller *help_of(ui_screen *s)
{
    return (ui_scroller *)s;
}

/* Lines the help takes: each binding's description wrapped to help_w columns. */
static int help_lines(const ui_binding *b, int count, unsigned context, int help_w,
                      const ui_style *st)
{
    int lines = 0;
    for (int i = 0; i < count; i++)
        if (ui_binding_applies(&b[i], context)) lines += ui_clamp(ui_lines_needed(b[i].help, help_w, st), 1, 64);
    return lines;
}

static void draw(ui_screen *s, const ui_style *st)
{
    unsigned context = ui_screen_context_beneath(s);
    int *top = &help_of(s)->top;
    int count;
    const ui_binding *b = ui_bindings(&count);
    int keys_w = 1;
    for (int i = 0; i < count; i++) {
        char keys[96];
        ui_binding_keys(&b[i], st->utf8, keys, sizeof keys);
        if (ui_binding_applies(&b[i], context)) keys_w = ui_clamp(ui_width(keys, st), keys_w, 32);
    }
    int width = COLS - 2 < 100 ? COLS - 2 : 100;   /* wider only where the screen is */
    keys_w = keys_w < width / 3 ? keys_w : width / 3;
    /* descriptions wrap beside the keys, so nothing is cut at any width */
    int help_w = width - keys_w - 5, lines = help_lines(b, count, context, help_w, st);
    int height = LINES - 2 < lines + 4 ? LINES - 2 : lines + 4;
    int y0 = (LINES - height) / 2, x0 = (COLS - width) / 2, shown = height - 4;
    *top = ui_clamp(*top, 0, lines > shown ? lines - shown : 0);
    help_of(s)->page = shown;
    ui_draw_box(y0, x0, height, width, st);
    ui_put(y0, x0 + 2, width - 4, " keys ", st, A_BOLD, 0);
    for (int i = 0, line = 0; i < count && line < *top + shown; i++) {
        if (!ui_binding_applies(&b[i], context)) continue;
        int n = ui_clamp(ui_lines_needed(b[i].help, help_w, st), 1, 64);
        int first = *top > line ? *top - line : 0;   /* lines of it scrolled off the top */
        if (first < n) {
            int y = y0 + 1 + line + first - *top, room = ui_clamp(shown - (line + first - *top), 0, n - first);
            char keys[96], cut[128];
            ui_binding_keys(&b[i], st->utf8, keys, sizeof keys);
            ui_cut_text(keys, keys_w, st, cut, sizeof cut);
            if (first == 0) ui_put(y, x0 + 2, keys_w, cut, st, A_BOLD, 0);
            ui_put_wrapped_from(y, x0 + 3 + keys_w, help_w, room, first, b[i].help, st, A_NORMAL);
        }
        line += n;
    }
    char footer[128] = "any key closes this help";
    if (lines > shown) ui_scroller_hint(st, footer, sizeof footer);   /* the help scrolls */
    ui_put(y0 + height - 2, x0 + 2, width - 4, footer, st, A_BOLD, 0);
}

static void close_screen(ui_screen *s)
{
    free(help_of(s));
}

/* The move keys scroll the help, a line or a page; any other key or a click closes it. */
static const ui_screen_ops help_ops = {
    .overlay = true, .draw = draw, .key = ui_scroller_key, .click = ui_scroller_click,
    .context = ui_screen_context_beneath, .key_kind = ui_scroller_key_kind, .close = close_screen,
};

ui_screen *ui_help_screen_new(void)
{
    ui_scroller *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->base.ops = &help_ops;
    h->kind = "help-key";
    return &h->base;
}
