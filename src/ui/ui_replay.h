/* The clock of a recorded demo replaying at its pace (--replay): how long the wait under way
 * has left at the chosen speed, paused or not. Pure: the caller passes the time; no curses. */
#ifndef ATTNSTEP_UI_REPLAY_H
#define ATTNSTEP_UI_REPLAY_H

#include <stdbool.h>
#include "ui_keys.h"

#define UI_REPLAY_MIN_SPEED (-3)   /* 1/8 as fast as recorded */
#define UI_REPLAY_MAX_SPEED 3      /* 8 times as fast */

typedef struct {
    int speed;          /* the speed is 2^speed, from UI_REPLAY_MIN_SPEED to _MAX_SPEED */
    bool paused;
    bool waiting;       /* a wait is under way */
    double left;        /* the wait's recorded seconds still to play, as of `mark` */
    double mark;        /* when `left` was taken (seconds, any monotonic clock) */
} ui_replay;

/* At speed 1, running, no wait under way. */
void ui_replay_init(ui_replay *r);

/* Starts a wait of ms recorded milliseconds at time now. */
void ui_replay_wait(ui_replay *r, int ms, double now);

/* Real seconds until the wait under way ends at this speed: 0 when none is under way or it
 * is over, a negative number while paused (it never ends by itself). */
double ui_replay_left(const ui_replay *r, double now);

/* Ends the wait under way (its time came). */
void ui_replay_done(ui_replay *r);

/* Applies UI_ACT_REPLAY_PAUSE (pause or resume), _FASTER or _SLOWER at time now, keeping what
 * is left of the wait in recorded time. True when anything changed (the speed is bounded). */
bool ui_replay_act(ui_replay *r, ui_action action, double now);

/* The speed as a factor: 0.125 to 8. */
double ui_replay_speed(const ui_replay *r);

#endif
