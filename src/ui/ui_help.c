/* The help overlay: every binding of the screen it covers, generated from the key table, in a
 * box whose descriptions wrap to its width and that scrolls when the screen is too short. */
#include "ui_curses.h"
#include <stdio.h>
#include <stdlib.h>
#include "ui_screen.h"
#include "ui_util.h"

typedef struct {
    ui_screen base;
    int top;                     /* its first line shown, when it is longer than the screen */
} help_screen;

static help_screen *help_of(ui_screen *s)
{
    return (help_screen *)s;
}

/* Lines the help takes: each binding's description wrapped to help_w columns. */
static int help_lines(const ui_binding *b, int count, unsigned context, int help_w,
                      const ui_style *st)
{
    int lines = 0;
    for (int i = 0; i < count; i++)
        if (b[i].contexts & context) lines += ui_clamp(ui_lines_needed(b[i].help, help_w, st), 1, 64);
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
        if (b[i].contexts & context) keys_w = ui_clamp(ui_width(keys, st), keys_w, 32);
    }
    int width = COLS - 2 < 100 ? COLS - 2 : 100;   /* wider only where the screen is */
    keys_w = keys_w < width / 3 ? keys_w : width / 3;
    /* descriptions wrap beside the keys, so nothing is cut at any width */
    int help_w = width - keys_w - 5, lines = help_lines(b, count, context, help_w, st);
    int height = LINES - 2 < lines + 4 ? LINES - 2 : lines + 4;
    int y0 = (LINES - height) / 2, x0 = (COLS - width) / 2, shown = height - 4;
    *top = ui_clamp(*top, 0, lines > shown ? lines - shown : 0);
    ui_draw_box(y0, x0, height, width, st);
    ui_put(y0, x0 + 2, width - 4, " keys ", st, A_BOLD, 0);
    for (int i = 0, line = 0; i < count && line < *top + shown; i++) {
        if (!(b[i].contexts & context)) continue;
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
    char footer[128] = "any key closes this help", up[32], down[32];
    if (lines > shown)   /* too many lines for this screen: the help scrolls */
        snprintf(footer, sizeof footer, "%s %s scroll, any other key closes",
                 ui_key_label(UI_KEY(KEY_DOWN), st->utf8, down, sizeof down),
                 ui_key_label(UI_KEY(KEY_UP), st->utf8, up, sizeof up));
    ui_put(y0 + height - 2, x0 + 2, width - 4, footer, st, A_BOLD, 0);
}

/* The up and down keys (of the lesson's and the picker's bindings) scroll the help; any other
 * key closes it. */
static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    (void)st;
    int arg = 0;
    int *top = &help_of(s)->top;
    ui_action action = ui_key_action(k, UI_IN_LESSON | UI_IN_PICKER, &arg);
    if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_DOWN) (*top)++;
    else if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_UP) *top = *top > 0 ? *top - 1 : 0;
    else return (ui_outcome){1, NULL};
    return UI_STAY;
}

/* A click anywhere closes the help, like a key. */
static ui_outcome click(ui_screen *s, int x, int y)
{
    (void)s, (void)x, (void)y;
    return (ui_outcome){1, NULL};
}

/* Keys on the help are timed where the screen beneath times its keys. */
static const char *key_kind(const ui_screen *s, int k)
{
    const ui_screen *under = s->under;
    return under->ops->key_kind && under->ops->key_kind(under, k) ? "help-key" : NULL;
}

static void close_screen(ui_screen *s)
{
    free(help_of(s));
}

static const ui_screen_ops help_ops = {
    .overlay = true, .draw = draw, .key = key, .click = click, .context = ui_screen_context_beneath,
    .key_kind = key_kind, .close = close_screen,
};

ui_screen *ui_help_screen_new(void)
{
    help_screen *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->base.ops = &help_ops;
    return &h->base;
}
