/* The classroom in the UI (ui_class.h): the leader's place sent as a state message, a
 * follower's view moved to the leader's place, and the words of the status line. */
#include "ui_class.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net.h"
#include "text.h"
#include "ui_keys.h"

struct ui_class {
    net_leader *leader;
    net_follower *follower;
    int port;
    uint64_t code, hash;
    char address[300];          /* what a follower connects to (for its status line) */
    bool following;             /* a follower that shows the leader's place */
    bool has_state;             /* a follower that has heard one */
    net_message state;          /* the leader's last place */
    uint32_t applied;           /* the seq of the state taken into the view */
    bool applied_any;
    net_follower_status status;
    int joined, synced;         /* the leader's last counts */
    bool counts_changed;
};

/* 16 hex digits (either case) into code; false for anything else. */
static bool parse_code(const char *text, uint64_t *code)
{
    size_t n = strlen(text);
    if (n != NET_HEX_DIGITS || strspn(text, "0123456789abcdefABCDEF") != n) return false;
    *code = strtoull(text, NULL, 16);
    return true;
}

static ui_class *fail(ui_class *c, exit_status *status, exit_status why, const char *what,
                      const char *error)
{
    fputs("attnstep: ", stderr);
    text_write_escaped(stderr, what, false);
    fputs(": ", stderr);
    text_write_escaped(stderr, error, false);
    fputc('\n', stderr);
    *status = why;
    ui_class_close(c);
    return NULL;
}

ui_class *ui_class_open(const ui_class_options *o, unsigned long long hash, exit_status *status)
{
    char error[300];
    ui_class *c = calloc(1, sizeof *c);
    if (!c) return fail(c, status, EXIT_STATUS_SOFTWARE, "--lead", "out of memory");
    c->hash = hash;
    if (o->code && !parse_code(o->code, &c->code))
        return fail(c, status, EXIT_STATUS_USAGE, "--code", "a class code is 16 hex digits, "
                    "as the leader printed it");
    if (o->lead) {
        if (!o->code && !net_class_code(&c->code, error, sizeof error))
            return fail(c, status, EXIT_STATUS_SOFTWARE, "--lead", error);
        c->leader = net_leader_open(o->listen, c->code, hash, &c->port, error, sizeof error);
        if (!c->leader)
            return fail(c, status, strncmp(error, "--listen", 8) == 0 ? EXIT_STATUS_USAGE
                                                                    : EXIT_STATUS_SOFTWARE,
                        "--lead", error);
        fprintf(stderr, "attnstep: leading on %s, port %d, class code %016" PRIx64 "\n"
                "attnstep: students run: attnstep --follow HOST:%d --code %016" PRIx64
                " LESSON\n", o->listen ? o->listen : "127.0.0.1", c->port, c->code, c->port,
                c->code);
        fflush(stderr);
        return c;
    }
    if (!o->code)
        return fail(c, status, EXIT_STATUS_USAGE, "--follow", "needs the class code (--code)");
    c->follower = net_follower_open(o->follow, c->code, hash, o->name ? o->name : "student",
                                    error, sizeof error);
    if (!c->follower) return fail(c, status, EXIT_STATUS_USAGE, "--follow", error);
    snprintf(c->address, sizeof c->address, "%s", o->follow);
    c->following = true;
    return c;
}

void ui_class_close(ui_class *c)
{
    if (!c) return;
    net_leader_close(c->leader);
    net_follower_close(c->follower);
    free(c);
}

/* ---- the leader ---- */

/* Where v is, as a state message: a step of the script, or past the script's steps the
 * pipeline's matrix shown off it (both sides have the same lesson, so the same walks). */
static net_message place_message(const ui_view *v)
{
    const walk_step *here = ui_view_current(v);
    net_message m = {.type = NET_STATE, .row = (uint32_t)v->row, .col = (uint32_t)v->col,
                     .head = here->head > 0 ? here->head : 1};
    m.step = (uint32_t)(v->off_script ? v->walk.count + v->shown : v->step);
    ui_question q = v->off_script ? UI_Q_NONE : v->state[v->step].question;
    m.question = q == UI_Q_OPEN ? NET_QUESTION_OPEN
               : q == UI_Q_NONE ? NET_QUESTION_NONE : NET_QUESTION_REVEALED;
    return m;
}

static bool lead(ui_class *c, const ui_view *v, double now)
{
    net_message m = place_message(v);
    net_leader_set_state(c->leader, &m, now);
    bool changed = net_leader_poll(c->leader, now);
    c->joined = net_leader_joined(c->leader, now);
    c->synced = net_leader_synced(c->leader, now);
    return changed;
}

/* ---- a follower ---- */

/* Takes the leader's place into v; false for a place this lesson does not have (then nothing
 * changes). */
static bool take_place(ui_view *v, const net_message *m)
{
    int step = (int)m->step, count = v->walk.count;
    if (m->step >= (uint32_t)(count + v->pipeline.count)) return false;
    if (step < count) {
        if (v->off_script || v->step != step) ui_view_goto(v, step);
    } else {
        const walk_step *s = &v->pipeline.steps[step - count];
        if (!v->off_script || v->shown != step - count) ui_view_open_stage(v, s->stage, s->head);
    }
    if (!ui_view_question_open(v)) {   /* an open question keeps its cell unmarked */
        v->row = m->row < (uint32_t)ui_view_rows(v) ? (int)m->row : v->row;
        v->col = m->col < (uint32_t)ui_view_cols(v) ? (int)m->col : v->col;
    }
    if (m->question == NET_QUESTION_REVEALED) ui_view_reveal(v);
    return true;
}

static bool follow(ui_class *c, ui_view *v, double now)
{
    net_message m;
    bool fresh;
    net_follower_status before = c->status;
    c->status = net_follower_poll(c->follower, now, &m, &fresh);
    bool changed = c->status != before;
    if (fresh) {
        c->state = m;
        c->has_state = true;
    }
    if (c->following && c->has_state && (!c->applied_any || c->state.seq != c->applied)) {
        if (take_place(v, &c->state)) changed = true;
        c->applied = c->state.seq;
        c->applied_any = true;
        net_follower_at(c->follower, c->applied);
    }
    return changed;
}

bool ui_class_poll(ui_class *c, ui_view *v, double now)
{
    return c->leader ? lead(c, v, now) : follow(c, v, now);
}

bool ui_class_key(ui_class *c, ui_view *v, int key, double now)
{
    if (!c->follower || ui_key_action(key, UI_IN_CLASS, NULL) != UI_ACT_FOLLOW
        || ui_view_question_open(v))   /* a typed answer may hold the key */
        return false;
    c->following = true;
    c->applied_any = false;   /* take the leader's place now, whatever was taken before */
    follow(c, v, now);
    return true;
}

ui_class_place ui_class_place_of(const ui_view *v)
{
    return (ui_class_place){v->step, v->shown, v->row, v->col, v->off_script};
}

void ui_class_moved(ui_class *c, const ui_class_place *before, const ui_view *v)
{
    ui_class_place now = ui_class_place_of(v);
    if (c->follower && memcmp(&now, before, sizeof now) != 0) c->following = false;
}

void ui_class_status(const ui_class *c, char *text, size_t size)
{
    if (c->leader)
        snprintf(text, size, "leading · code %016" PRIx64 " · port %d · %d joined, %d here",
                 c->code, c->port, c->joined, c->synced);
    else if (c->status == NET_FOLLOWER_LEFT)
        snprintf(text, size, "the leader has left — on your own");
    else if (c->status != NET_FOLLOWER_JOINED)
        snprintf(text, size, "joining %s…", c->address);
    else
        snprintf(text, size, c->following ? "following" : "on your own — f to follow");
}

long ui_class_taken(const ui_class *c)
{
    return c->applied_any ? (long)c->applied : -1;
}

int ui_class_joined(const ui_class *c, double now)
{
    return c->leader ? net_leader_joined(c->leader, now) : -1;
}

int ui_class_synced(const ui_class *c, double now)
{
    return c->leader ? net_leader_synced(c->leader, now) : -1;
}

bool ui_class_ended(const ui_class *c, exit_status *status, char *message, size_t size)
{
    if (!c->follower) return false;
    if (c->status == NET_FOLLOWER_LEFT) {
        snprintf(message, size, "the leader has left");
        *status = EXIT_STATUS_OK;
        return true;
    }
    if (c->status != NET_FOLLOWER_REFUSED) return false;
    net_reason reason;
    uint64_t leader_hash;
    net_follower_refusal(c->follower, &reason, &leader_hash);
    *status = reason == NET_REFUSE_HASH ? EXIT_STATUS_DATA : EXIT_STATUS_USAGE;
    if (reason == NET_REFUSE_HASH)
        snprintf(message, size, "--follow: the leader's lesson is not this one: its text has "
                 "hash %016" PRIx64 ", this lesson's %016" PRIx64 " (open the same file)",
                 leader_hash, c->hash);
    else
        snprintf(message, size, "--follow: the leader refused: %s",
                 reason == NET_REFUSE_CODE ? "wrong class code"
                 : reason == NET_REFUSE_FULL ? "the class is full" : "that name");
    return true;
}
