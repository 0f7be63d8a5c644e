/* The score box: shown over a lesson at its end (stepping past the last step) or on quit, once
 * a question has been answered; one key dismisses it. */
#include "ui_curses.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_screen.h"
#include "ui_util.h"

typedef struct {
    ui_screen base;
    const ui_view *v;            /* the lesson's view, for its score */
    bool leaving;                /* it came from quit: dismissing it leaves the lesson */
} summary_screen;

static const summary_screen *summary_of(const ui_screen *s)
{
    return (const summary_screen *)s;
}

static void draw(ui_screen *s, const ui_style *st)
{
    const summary_screen *box = summary_of(s);
    int right, asked, questions;
    char line[128], hint[128], quit[32];
    ui_view_score(box->v, &right, &asked, &questions);
    int skipped = ui_view_skipped(box->v);
    snprintf(line, sizeof line, "You answered %d of %d question%s right", right, asked,
             asked == 1 ? "" : "s");
    if (skipped > 0) {   /* a question left open counts as skipped, never as answered */
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "; skipped %d", skipped);
    }
    if (box->leaving) snprintf(hint, sizeof hint, "any key leaves the lesson");
    else snprintf(hint, sizeof hint, "%s leaves the lesson, any other key stays",
                  ui_action_key(UI_ACT_QUIT, UI_IN_LESSON, st->utf8, quit, sizeof quit));
    int w = ui_width(line, st) > ui_width(hint, st) ? ui_width(line, st) : ui_width(hint, st);
    int width = ui_clamp(w + 6, 10, COLS), y = (LINES - 5) / 2, x = (COLS - width) / 2;
    ui_draw_box(y, x, 5, width, st);
    ui_put(y, x + 2, width - 4, " the end ", st, A_BOLD, 0);
    ui_field(y + 1, x + 1, width - 2, line, st, A_BOLD, 0, UI_CENTER);
    ui_field(y + 3, x + 1, width - 2, hint, st, A_DIM, 0, UI_CENTER);
}

/* Any key dismisses the score; after quit, or on the quit key, the lesson goes too. */
static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    (void)st;
    ui_action action = ui_key_action(k, ui_screen_context_beneath(s), NULL);
    return (ui_outcome){summary_of(s)->leaving || action == UI_ACT_QUIT ? 2 : 1, NULL};
}

/* Clicks wait for a key. */
static ui_outcome click(ui_screen *s, int x, int y)
{
    (void)s, (void)x, (void)y;
    return UI_STAY;
}

/* Timed as the lesson beneath would time the key. */
static const char *key_kind(const ui_screen *s, int k)
{
    return s->under->ops->key_kind ? s->under->ops->key_kind(s->under, k) : NULL;
}

static void close_screen(ui_screen *s)
{
    free((summary_screen *)s);
}

static const ui_screen_ops summary_ops = {
    .overlay = true, .draw = draw, .key = key, .click = click, .context = ui_screen_context_beneath,
    .key_kind = key_kind, .close = close_screen,
};

ui_screen *ui_summary_screen_new(const ui_view *v, bool leaving)
{
    summary_screen *box = calloc(1, sizeof *box);
    if (!box) return NULL;
    *box = (summary_screen){{&summary_ops, NULL}, v, leaving};
    return &box->base;
}
