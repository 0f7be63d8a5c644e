/* What if? in the UI (issue 29): `=` opens an edit line on the number behind the selected cell
 * (an input cell: its embedding; a cell of a stage that reads a parameter: that parameter, whose
 * cells the arrows then walk; near the loss: the target), Enter changes it in the open lesson
 * (lesson_edit.h, the one place an edit is applied) and recomputes from the first stage that
 * reads it (trace_recompute), u undoes the last edit and U all of them. The numbers before the
 * first edit are kept (ui_edit.was) so that every cell an edit changed can be marked with its
 * old value, and the lesson's claims are checked again, so that one the edit made false is
 * shown as such. No curses: the tests drive it directly. */
#ifndef ATTNSTEP_UI_EDIT_H
#define ATTNSTEP_UI_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include "lesson_edit.h"
#include "number.h"
#include "ui_lesson.h"
#include "ui_view.h"

typedef struct {
    lesson_edit e;   /* what was set */
    double was;      /* the number it replaced */
} ui_edit_done;

/* A claim of the lesson that the edits made false: the line it is written on, and why. */
typedef struct {
    int line;
    char text[400];
} ui_edit_false;

typedef struct ui_edit {
    bool open;                 /* the edit line is open */
    lesson_edit target;        /* the number it edits (target.value unused) */
    char typed[32];            /* the new value as typed so far */
    bool replace;              /* the next character typed replaces typed (the value shown) */
    ui_edit_done *done;        /* (count) the edits applied, oldest first: the first
                                  from_leader a class's leader's (ui_edit_take_leader), the
                                  rest this screen's own, what u and U undo */
    int count, capacity, from_leader;
    trace was;                 /* the numbers before the first edit (blocks only; was.memory is
                                  its own copy, NULL until an edit is made) */
    const trace *on;           /* the trace those edits changed (a trained step's is another) */
    ui_edit_false *untrue;     /* (n_untrue) the claims the edits made false */
    int n_untrue;
} ui_edit;

/* Opens the edit line on the selected cell of v's matrix, with its number's current value
 * typed; false, with message saying why, while a question is open (editing would show its
 * answer) or where no number of the lesson lies behind the cell. */
bool ui_edit_begin(ui_edit *ed, const ui_opened *o, ui_view *v);

/* A key of the open edit line: UI_ACT_TYPE (arg indexes UI_EDIT_CHARS), UI_ACT_ERASE,
 * UI_ACT_MOVE (another cell of the same parameter), UI_ACT_ANSWER (apply), UI_ACT_SKIP (close). */
#define UI_EDIT_CHARS "0123456789.-e"
void ui_edit_key(ui_edit *ed, ui_opened *o, ui_view *v, ui_action action, int arg);

/* Undoes the last edit of this screen's own (all of them with every), recomputing as an edit
 * does; the leader's edits stay (only the leader undoes them). */
void ui_edit_undo(ui_edit *ed, ui_opened *o, ui_view *v, bool every);

/* In a class (issue 29): the cells the edits held changed, each once with its last value, in
 * the order of their last edits (so that applied in order they give these numbers, a token's
 * one vector written at two rows included), into out (max of them); returns how many there
 * are (more than max when they do not all fit). What a leader sends its class. */
int ui_edit_cells(const ui_edit *ed, lesson_edit *out, int max);

/* A follower: the leader's edits (count of them, each checked against the lesson by
 * lesson_edit_make) in place of those held before, the follower's own edits applied again on
 * top (a cell both edit shows the follower's number; its u and U undo only its own), one
 * recomputation from the first stage any of them reads. The numbers before the first edit are
 * the lesson as written, so every cell either changed is marked. False when these are the
 * edits held already (nothing done). */
bool ui_edit_take_leader(ui_edit *ed, ui_opened *o, ui_view *v, const lesson_edit *edits,
                         int count);

/* The edit line: "embeddings[bank,0] = 0.75_ (now 0; Enter sets it, Esc leaves it)". */
void ui_edit_line(const ui_edit *ed, const ui_opened *o, const number_format *f, char *text,
                  size_t size);

/* Whether a cell of stage at head differs from before the first edit, and its old value. */
bool ui_edit_changed(const ui_edit *ed, const trace *t, stage_id stage, int head, int row,
                     int col, double *was);

/* The claims the edits made false among those of narration item `item` (NULL: none), one a
 * line: "this lesson says weights[bank,river] ≈ 0.6488: now false (weights[bank,river] is …)". */
void ui_edit_untrue(const ui_edit *ed, const lesson_step *item, char *text, size_t size);

/* M: the lesson's parameters (every row of the table it has) and, with a loss, its target, as
 * matrices, each to 12 rows and 10 columns ("…" for the rest), a cell an edit changed marked
 * with • (~ in ASCII). A new text (free it), or NULL when out of memory. */
#define UI_EDIT_SHOWN_ROWS 12
#define UI_EDIT_SHOWN_COLS 10
char *ui_edit_parameters(const ui_edit *ed, const ui_opened *o, const number_format *f,
                         bool utf8);

/* w: writes the lesson with the edits made (lesson_edit_write) to a new file beside it,
 * NAME-whatif.yaml (NAME-whatif-2.yaml … when that exists: never over a file), atomically (a
 * temporary beside it, then linked under its name); message says where, or why not. */
void ui_edit_write(const ui_edit *ed, const ui_opened *o, ui_view *v);

void ui_edit_free(ui_edit *ed);

#endif
