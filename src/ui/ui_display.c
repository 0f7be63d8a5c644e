/* The display keys of the screens that show lessons (the lesson screen and the comparison):
 * decimals, palette, step list, presentation and narration scroll, as one set of rules. */
#include <assert.h>
#include <stdio.h>
#include "ui_display.h"
#include "ui_util.h"

ui_style ui_display_style(ui_display *d, const ui_style *st)
{
    if (!d->set)
        *d = (ui_display){.set = true, .precision = st->precision, .palette = st->palette,
                          .present = st->present, .auto_precision = st->present};
    ui_style mine = *st;
    mine.precision = d->precision;
    mine.palette = d->palette;
    mine.present = d->present;   /* the matrix pane lays itself out to fill the room */
    return mine;
}

bool ui_display_key(ui_display *d, ui_action action, int arg, int shown, char *message,
                    size_t size)
{
    static const char *const palettes[] = {"viridis, and blue-orange for signed values",
                                           "inferno, and purple-green for signed values"};
    switch (action) {
    case UI_ACT_MORE_DECIMALS:
    case UI_ACT_FEWER_DECIMALS:
        d->precision = ui_clamp(shown + (action == UI_ACT_MORE_DECIMALS ? 1 : -1), 0, UI_MAX_DECIMALS);
        d->auto_precision = false;
        snprintf(message, size, "%d decimal%s", d->precision, d->precision == 1 ? "" : "s");
        return true;
    case UI_ACT_STEP_LIST:
        d->list = d->list_drawn ? UI_LIST_HIDDEN : UI_LIST_SHOWN;
        d->present = false;
        return true;
    case UI_ACT_PALETTE:
        d->palette = (d->palette + 1) % UI_PALETTE_COUNT;
        snprintf(message, size, "heatmap colours: %s", palettes[d->palette]);
        return true;
    case UI_ACT_NARRATION_SCROLL:
        d->narration_top += arg == 0 ? 1 : -1;   /* drawing keeps it within the text */
        return true;
    case UI_ACT_PRESENT:
        d->present = d->auto_precision = !d->present;
        snprintf(message, size, "presentation %s", d->present ? "on" : "off");
        return true;
    default:
        return false;
    }
}

void ui_display_narration_at(ui_display *d, unsigned long here)
{
    if (here != d->narration_of) d->narration_top = 0;
    d->narration_of = here;
}

void ui_display_scroll_note(const ui_display *d, int shown, int needed, int most,
                            const ui_style *st, char *text, size_t size)
{
    const ui_binding *b = NULL;
    int count;
    for (const ui_binding *all = ui_bindings(&count); count-- > 0; all++)
        if (all->action == UI_ACT_NARRATION_SCROLL) b = all;
    assert(b);
    char down[32], up[32];
    snprintf(text, size, " %d%s%d of %d \xc2\xb7 %s%s %s%s ", d->narration_top + 1,
             st->utf8 ? "\xe2\x80\x93" : "-", d->narration_top + shown, needed,
             ui_key_label(b->keys[0], st->utf8, down, sizeof down),
             d->narration_top < most ? (st->utf8 ? "\xe2\x86\x93" : "v") : "",
             ui_key_label(b->keys[1], st->utf8, up, sizeof up),
             d->narration_top > 0 ? (st->utf8 ? "\xe2\x86\x91" : "^") : "");
}
