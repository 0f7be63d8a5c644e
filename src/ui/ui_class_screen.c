/* The classroom screen (ui_screen.h): a lesson screen wrapped with its class (ui_class.h). The
 * lesson screen draws and takes the keys; this screen adds what comes from the network, so the
 * main loop knows no more of a class than of any other screen. No curses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_screen.h"

#define CLASS_POLL_MS 30   /* in a class, the network is looked at this often */

typedef struct {
    ui_screen base;
    ui_screen *inner;            /* the lesson screen wrapped (its under stays NULL) */
    ui_view *v;                  /* its view, which the class reads and moves */
    ui_class *class;
    bool headless, follower;
    char said[200];              /* the class's words last put in the status line */
    long shown_seq;              /* the leader's place last reported as news, or -1 */
    double now;                  /* when the class was last polled */
} class_screen;

enum { BOX_TEXT = 128 * 1024 };   /* a roster of NET_MAX_FOLLOWERS lines fits */

static class_screen *class_of(ui_screen *s)
{
    return (class_screen *)s;
}

static const class_screen *class_const(const ui_screen *s)
{
    return (const class_screen *)s;
}

/* ---- the lesson screen's operations, with the class's rules about own moves ---- */

static void draw(ui_screen *s, const ui_style *st)
{
    ui_screen *inner = class_of(s)->inner;
    inner->ops->draw(inner, st);
}

/* A key or click the lesson screen had may put a follower on its own (ui_class_moved); not one
 * that closed the lesson, which leaves nothing to move. */
static ui_outcome moved(class_screen *cs, const ui_class_place *before, ui_outcome out)
{
    if (out.close == 0) ui_class_moved(cs->class, before, cs->v);
    return out;
}

/* A leader's box over the lesson: the class's results or its roster. */
static ui_outcome open_box(class_screen *cs, ui_action which)
{
    char *text = malloc(BOX_TEXT);
    ui_screen *box = NULL;
    if (text && which == UI_ACT_ROSTER && ui_class_roster_text(cs->class, cs->v, cs->now, text, BOX_TEXT))
        box = ui_text_screen_new(" roster ", text);
    else if (text && ui_class_results_text(cs->class, text, BOX_TEXT))
        box = ui_text_screen_new(" class results ", text);
    free(text);
    return (ui_outcome){0, box};
}

/* A leader's own keys: r (results), W (roster), and n past the last step, which shows the
 * results of the whole class rather than the leader's own score. */
static ui_action leader_key(const class_screen *cs, int k)
{
    const ui_view *v = cs->v;
    if (cs->follower) return UI_ACT_NONE;
    ui_action a = ui_key_action(k, ui_view_context(v), NULL);
    bool past_end = a == UI_ACT_NEXT && !v->off_script && !v->stepped_in
                    && v->step == v->walk.count - 1;
    return a == UI_ACT_RESULTS || a == UI_ACT_ROSTER ? a : past_end ? UI_ACT_RESULTS : UI_ACT_NONE;
}

static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    class_screen *cs = class_of(s);
    ui_action own = leader_key(cs, k);
    if (own != UI_ACT_NONE) return open_box(cs, own);
    ui_class_place before = ui_class_place_of(cs->v);
    return moved(cs, &before, cs->inner->ops->key(cs->inner, k, st));
}

static ui_outcome click(ui_screen *s, int x, int y)
{
    class_screen *cs = class_of(s);
    ui_class_place before = ui_class_place_of(cs->v);
    return moved(cs, &before, cs->inner->ops->click(cs->inner, x, y));
}

static bool follow(ui_screen *s, const ui_event *ev)
{
    ui_screen *inner = class_of(s)->inner;
    return inner->ops->follow(inner, ev);
}

static unsigned context(const ui_screen *s)
{
    const ui_screen *inner = class_const(s)->inner;
    return inner->ops->context(inner);
}

static const char *key_kind(const ui_screen *s, int k)
{
    const ui_screen *inner = class_const(s)->inner;
    return inner->ops->key_kind(inner, k);
}

static unsigned long scroll_mark(const ui_screen *s)
{
    const ui_screen *inner = class_const(s)->inner;
    return inner->ops->scroll_mark(inner);
}

/* The lesson first (it saves where the student stopped), then the class, which says bye. */
static void close_screen(ui_screen *s)
{
    class_screen *cs = class_of(s);
    cs->inner->ops->close(cs->inner);
    ui_class_close(cs->class);
    free(cs);
}

/* ---- the class ---- */

/* The class's words go in the status line unless a remark about the last key is there (one
 * that is the class's own last words is replaced). True when the line changed. */
static bool say_status(class_screen *cs)
{
    ui_view *v = cs->v;
    char said[sizeof cs->said];
    ui_class_status(cs->class, said, sizeof said);
    if (v->message[0] && strcmp(v->message, cs->said) != 0) return false;
    bool changed = strcmp(v->message, said) != 0;
    snprintf(v->message, sizeof v->message, "%s", said);
    snprintf(cs->said, sizeof cs->said, "%s", said);
    return changed;
}

/* Looks at the network, keeps the class's words in the status line, and ends the run when a
 * follower's class ended (headless, or refused). */
static bool poll(ui_screen *s, double now, ui_ending *ending)
{
    class_screen *cs = class_of(s);
    cs->now = now;
    bool changed = ui_class_poll(cs->class, cs->v, now);
    const lesson_edit *edits;
    int n_edits;
    if (ui_class_leader_edits(cs->class, &edits, &n_edits))   /* a follower: the leader's edits */
        changed |= ui_lesson_screen_take_edits(cs->inner, edits, n_edits);
    changed |= say_status(cs);
    exit_status why;
    char words[sizeof ending->why];
    if (ui_class_ended(cs->class, &why, words, sizeof words)
        && (cs->headless || why != EXIT_STATUS_OK)) {
        ending->ended = true;
        ending->status = why;
        snprintf(ending->why, sizeof ending->why, "%s", words);
    }
    return changed;
}

/* A follower's f follows the leader again, whatever screen is on top. */
static bool claim(ui_screen *s, int k, double now)
{
    class_screen *cs = class_of(s);
    return ui_class_key(cs->class, cs->v, k, now);
}

static bool ready(ui_screen *s, const ui_event *ev, double now)
{
    class_screen *cs = class_of(s);
    const ui_class *c = cs->class;
    int joined = ui_class_joined(c, now);
    switch (ev->key) {
    case UI_AWAIT_JOINED: return joined >= ev->x;
    case UI_AWAIT_SYNCED: return ui_class_synced(c, now) == joined;
    case UI_AWAIT_ANSWERED: return ui_class_answered(c, now) >= ev->x;
    case UI_AWAIT_HERE: return ui_class_synced(c, now) == ev->x;
    default: return ui_view_question_open(cs->v) && !ui_class_holds_answer(c);
    }
}

/* Each place of the leader's a follower takes is news (a headless follower dumps it). */
static bool news(ui_screen *s)
{
    class_screen *cs = class_of(s);
    long taken = ui_class_taken(cs->class);
    if (taken < 0 || taken == cs->shown_seq) return false;
    cs->shown_seq = taken;
    return true;
}

/* A follower's run outlasts its key script (a leader's ends with it). */
static bool outlasts_script(const ui_screen *s)
{
    return class_const(s)->follower;
}

/* One set for the leader and a follower: f is never a leader's key (ui_class_key), nor is
 * any place of a leader's news (it takes none). */
static const ui_screen_ops class_ops = {
    .overlay = false, .draw = draw, .key = key, .click = click, .follow = follow,
    .context = context, .key_kind = key_kind, .scroll_mark = scroll_mark, .close = close_screen,
    .poll_ms = CLASS_POLL_MS, .poll = poll, .claim = claim, .ready = ready, .news = news,
    .outlasts_script = outlasts_script,
};

ui_screen *ui_class_screen_new(ui_screen *inner, const ui_class_options *o,
                               unsigned long long hash, bool headless, exit_status *status)
{
    class_screen *cs = calloc(1, sizeof *cs);
    if (!cs) {
        fprintf(stderr, "attnstep: out of memory\n");
        *status = EXIT_STATUS_SOFTWARE;
    } else if (!(cs->class = ui_class_open(o, hash, status))) {
        free(cs);
        cs = NULL;
    }
    if (!cs) {
        inner->ops->close(inner);
        return NULL;
    }
    cs->base.ops = &class_ops;
    cs->inner = inner;
    cs->v = ui_lesson_screen_view(inner);
    cs->headless = headless;
    cs->follower = o->follow != NULL;
    cs->shown_seq = -1;
    if (o->lead) cs->v->class_context = UI_IN_LEAD;   /* the leader's keys and words (Esc reveals) */
    /* the class's words (the leader's code, the follower's state) take the status line at once:
       the lesson's opening remark (its warnings' count, for --check) would hold it until a key */
    cs->v->message[0] = '\0';
    return &cs->base;
}
