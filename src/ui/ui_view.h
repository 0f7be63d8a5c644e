/* The view model of one lesson (ui_view.c): where the user is on the lesson's walk (walk.h,
 * the one step order and numbering of every view), the selected cell, stepping in and out, and
 * the questions. No curses, so the tests drive it directly; it only reads what the core
 * computed. */
#ifndef ATTNSTEP_UI_VIEW_H
#define ATTNSTEP_UI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "lesson.h"
#include "number.h"
#include "trace.h"
#include "ui_keys.h"
#include "walk.h"

/* Where a step's question stands. Right or wrong is judged from the answer given whenever it
 * is shown, so a reload that changes the lesson's answer judges again. */
typedef enum {
    UI_Q_NONE,        /* the step asks nothing */
    UI_Q_OPEN,        /* asked and waiting: the stage's numbers and narration are hidden */
    UI_Q_ANSWERED,    /* answered (given_choice or given_number); counts in the score */
    UI_Q_REVEALED     /* skipped (its own key, Esc; or the leader revealed it): shown, not
                         scored. Moving away never skips: the question stays asked */
} ui_question;

/* What the UI keeps about one step of the walk (ui_view's state[k] goes with walk.steps[k]). */
typedef struct {
    ui_question question;
    int given_choice;           /* UI_Q_ANSWERED with choices: the index picked */
    double given_number;        /* UI_Q_ANSWERED, numeric: the number typed */
} ui_step_state;

/* The finite extremes of one stage and head (for the legend and the width of the numbers),
 * measured for every matrix by ui_view_init: a 1024-token stage is a million cells, too many
 * to scan on a keypress. */
typedef struct {
    double lo, hi;
    bool known;   /* measured (false: an edit changed the matrix since; measured when shown) */
} ui_range;

typedef struct {
    const trace *t;
    const trace *ranges_of;     /* the trace the extremes are measured on (t, but not a trained
                                   step's, which the lesson screen points t at) */
    const lesson *lesson;       /* borrowed: the lesson whose narration the walk tells, or NULL */
    walk walk;                  /* the script: the steps, in order; step k is "step k+1" */
    ui_step_state *state;       /* (walk.count) parallel to walk.steps */
    bool *reached;              /* (walk.count) step k's question was shown while open: it
                                   waits for its answer, and no key goes past it
                                   (ui_view_waiting) */
    walk pipeline;              /* every stage and head once, in pipeline order: what the step
                                   list opens off the script */
    ui_range *range;            /* (pipeline.count) parallel to pipeline.steps */
    int step;                   /* the current step of the script, index into walk.steps; off
                                   the script, the step that was left */
    int shown;                  /* the matrix on screen, index into pipeline.steps */
    walk_step off_step;         /* off the script, pipeline.steps[shown] as shown: at the left
                                   step's token in decoding (walk_step_off) */
    bool off_script;            /* showing pipeline.steps[shown] without narration, not a step */
    bool before_step;           /* off the script with no step left yet (opened there by --at):
                                   n and p go to step itself, not to the one after */
    int row, col;               /* the selected cell */
    unsigned class_context;     /* UI_IN_LEAD for a class's leader (ui_class.c), else 0:
                                   added to ui_view_context, for the leader's own keys */
    bool stepped_in;            /* filling the stage: cells after the selected one are hidden */
    bool heat_weights;          /* weights on the sequential ramp (default on) */
    bool heat_signed;           /* other matrices on the diverging ramp (default off) */
    int top, left;              /* first visible row and column of the matrix */
    int page_cols;              /* how many columns the matrix showed when last drawn
                                   (ui_view_scroll): what a page move moves */
    char message[200];          /* a one-off remark for the status line, "" for none */
    int label_w[STAGE_AXIS_COUNT];  /* widest label of each axis, 0 until first drawn: the
                                   labels of 1024 tokens are too many to measure on every key */
    int pick;                   /* an open choice question: the highlighted choice, -1 none */
    char typed[24];             /* an open numeric question: what has been typed */
    char reload_error[1024];    /* why the lesson's file did not reload (escaped, whole: its
                                   did-you-mean and hint), or "" */
    const struct ui_edit *edits;  /* what if? (ui_edit.h): the edits made here, whose changed
                                   cells the matrix marks; NULL without any */
} ui_view;

/* Builds the view on lesson_walk(l, t) (l NULL: the pipeline walk, no narration), and
 * measures every step's extremes (a scan of each stored matrix, once, at load). t and l's
 * narration are borrowed. Returns false when out of memory. */
bool ui_view_init(ui_view *v, const trace *t, const lesson *l);
void ui_view_free(ui_view *v);

/* The matrix on screen: the current step of the script, or off it the stage and head opened. */
const walk_step *ui_view_current(const ui_view *v);
/* The extremes of the matrix on screen. */
const ui_range *ui_view_range(const ui_view *v);
/* Step k's narration item (its say, focus and question), or NULL. */
const lesson_step *ui_view_item(const ui_view *v, int k);
/* The narration item on screen: the current step's, NULL off the script. */
const lesson_step *ui_view_here(const ui_view *v);
/* Step k's narration focus, when it has one inside the stage's matrix. */
bool ui_view_focus(const ui_view *v, int k, int *row, int *col);
/* The part of the matrix on screen: ui_view_rows rows from ui_view_first_row, ui_view_cols
 * columns from ui_view_first_col (indices into the stage's matrix, as v->row and v->col are).
 * All of it, or at a decoding step what decoding computes for its token (walk_step_rows,
 * walk_step_cols): its row, the cache's rows, the keys up to it. */
int ui_view_rows(const ui_view *v);
int ui_view_cols(const ui_view *v);
int ui_view_first_row(const ui_view *v);
int ui_view_first_col(const ui_view *v);

/* Goes to step `step` of the script (clamped), as it is told (the keys go through
 * ui_view_apply, which holds at the question waiting). Leaving a step whose question is open
 * leaves it open: coming back finds it asked, unanswered. */
void ui_view_goto(ui_view *v, int step);
/* The question waiting: the first step whose question was shown and is still open, or -1. The
 * keys never go past it, so that nothing after it answers it: not to a later step (n, G: they
 * stop at it), nor off the script to its own matrix (that opens the question itself) or to a
 * matrix after its stage in the pipeline (refused, with a message); earlier steps, earlier
 * stages and the other heads of its stage stay open to look at. */
int ui_view_waiting(const ui_view *v);
/* Whether showing script step index (off_script: the pipeline's matrix index) would go past
 * the question waiting. */
bool ui_view_passes_waiting(const ui_view *v, bool off_script, int index);
/* Records the question waiting (and any after it) as skipped: a follower taken past it by the
 * leader, who has revealed it to the class. */
void ui_view_skip_waiting(ui_view *v);
/* Opens a stage and head as the step list does (held by the question waiting as the keys
 * are): off the script, without narration (the step
 * left stays v->step, and n goes on to the one after it); back on the script when it is the
 * step left's own stage and head, or when a step at that stage and head shows the same token
 * being decoded (Tab at a decoding step); on the walk itself when the lesson has no script. */
void ui_view_open_stage(ui_view *v, stage_id stage, int head);
/* Opens at a cell (as from --at): the first script step at its stage, head and focus, else the
 * first at its stage and head, else its stage off the script; the cell is selected. A question
 * there is opened, never answered. False when the trace has no such stage and head. */
bool ui_view_open_at(ui_view *v, const trace_cell *cell);

/* What an action asks of the screen showing the view. */
typedef enum {
    UI_VIEW_STAY,         /* done; the lesson goes on */
    UI_VIEW_SCORE,        /* past the last step of a lesson with answers: show the score */
    UI_VIEW_LEAVE,        /* quit with nothing answered */
    UI_VIEW_SCORE_LEAVE   /* quit: the score first, then leave */
} ui_view_outcome;

ui_view_outcome ui_view_apply(ui_view *v, ui_action action, int arg);

/* What a key does here, as a word for ATTNSTEP_KEY_TIMES (ui.h lists them): "move-down",
 * "stage-next", "cell-next", "question", "none", ... */
const char *ui_view_key_kind(const ui_view *v, int key);

/* Rebuilds the view on a reloaded lesson and its trace, keeping the place by name: the stage,
 * head and ordinal of the current step (or, off the script, the stage and head), the selected
 * cell by its row and column labels (the same token, the same repeat of it; else the index,
 * clamped), the display toggles and the answers given to questions that are still asked the
 * same way. False when out of memory (v is then unchanged). */
bool ui_view_rebuild(ui_view *v, const trace *t, const lesson *l);

/* After an edit recomputed t (the same lesson, its numbers changed from stage `from` on): the
 * view shows t, in the same place, and the extremes of the stages from `from` on are measured
 * again when shown. Nothing else of the view depends on the numbers: the walk, the questions
 * and their answers stay (each is judged when shown). */
void ui_view_numbers_changed(ui_view *v, const trace *t, stage_id from);

/* Questions: the key context of the current step (UI_IN_CHOICE or UI_IN_NUMBER while its
 * question waits, else UI_IN_LESSON); the score (skipped: questions revealed unanswered); and the one-line verdict of a step's answered
 * or revealed question, with its numbers read from the trace and written as f says, e.g.
 * "Not quite: the answer is animal (0.8485); street gets 0.0696" ("" when there is none). */
unsigned ui_view_context(const ui_view *v);
/* Step's number question: the true value it is judged against (the focus cell's, in full; the
 * lesson's number without a focus) and its tolerance (ui_tally_within is the rule, here and
 * in the leader's tally). False when the step asks no number. */
bool ui_view_number_key(const ui_view *v, int step, double *truth, double *tolerance);
/* The precision a number question asks and its tolerance, as the question bar states them:
 * "two decimals, within ± 0.01 counts", "exactly" ("" when step asks no number). The verdict
 * gives the true value and the tolerance: "Right: cat gives 0.6296 of its attention to cat;
 * 0.62 is within ± 0.01", "Not quite: …; 0.5 is not within ± 0.01", "Answer: … (within ±
 * 0.01 counts)". */
void ui_view_precision(const ui_view *v, int step, const number_format *f, char *text,
                       size_t size);
bool ui_view_question_open(const ui_view *v);
void ui_view_score(const ui_view *v, int *right, int *asked, int *questions);
int ui_view_skipped(const ui_view *v);
void ui_view_verdict(const ui_view *v, int step, const number_format *f, char *text,
                     size_t size);
/* Skips the current step's open question: it is revealed, not scored. */
void ui_view_reveal(ui_view *v);

/* Whether the selected cell and its row and column are marked: not while a question is open,
 * where the marks would point at its answer. */
bool ui_view_marks_selection(const ui_view *v);
/* Whether a cell is shown (stepping in hides the cells after the selected one). */
bool ui_view_is_filled(const ui_view *v, int row, int col);
/* Whether the current stage is drawn as a heatmap. */
bool ui_view_heatmap(const ui_view *v);
/* Scrolls so the selected cell is among the visible rows and columns; while a question is
 * open, to the top left corner instead (the selection would point at the answer). */
void ui_view_scroll(ui_view *v, int visible_rows, int visible_cols);

#endif
