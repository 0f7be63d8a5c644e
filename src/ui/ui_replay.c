/* The clock of a replayed demo (ui_replay.h): recorded time left in a wait, scaled by the
 * speed, frozen while paused. */
#include "ui_replay.h"
#include <assert.h>
#include <math.h>

void ui_replay_init(ui_replay *r)
{
    *r = (ui_replay){.speed = 0};
}

double ui_replay_speed(const ui_replay *r)
{
    return ldexp(1.0, r->speed);
}

/* Recorded seconds of the wait still to play at time now. */
static double recorded_left(const ui_replay *r, double now)
{
    if (!r->waiting) return 0;
    if (r->paused) return r->left;
    double left = r->left - (now - r->mark) * ui_replay_speed(r);
    return left > 0 ? left : 0;
}

void ui_replay_wait(ui_replay *r, int ms, double now)
{
    assert(ms >= 0);
    r->waiting = true;
    r->left = ms / 1000.0;
    r->mark = now;
}

double ui_replay_left(const ui_replay *r, double now)
{
    if (r->waiting && r->paused) return -1;
    return recorded_left(r, now) / ui_replay_speed(r);
}

void ui_replay_done(ui_replay *r)
{
    r->waiting = false;
    r->left = 0;
}

bool ui_replay_act(ui_replay *r, ui_action action, double now)
{
    /* what is left is taken at the old speed before anything changes */
    r->left = recorded_left(r, now);
    r->mark = now;
    switch (action) {
    case UI_ACT_REPLAY_PAUSE:
        r->paused = !r->paused;
        return true;
    case UI_ACT_REPLAY_FASTER:
        if (r->speed >= UI_REPLAY_MAX_SPEED) return false;
        r->speed++;
        return true;
    case UI_ACT_REPLAY_SLOWER:
        if (r->speed <= UI_REPLAY_MIN_SPEED) return false;
        r->speed--;
        return true;
    default:
        return false;
    }
}
