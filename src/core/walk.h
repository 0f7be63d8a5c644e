/* The walk: the one order in which every view (the UI, --plain, --markdown, --json, --csv,
 * --stats and --at) visits a trace, and so the one numbering of its steps. */
#ifndef ATTNSTEP_WALK_H
#define ATTNSTEP_WALK_H

#include <stdbool.h>
#include "trace.h"

/* The whole matrix of a step, as opposed to one position along a time axis. */
#define WALK_WHOLE (-1)

/* One step: a matrix of the trace, and the narration item shown with it. */
typedef struct {
    stage_id stage;
    int head;       /* from 1; 1 for a stage that is one matrix for all heads */
    int position;   /* WALK_WHOLE, or for a step of decoding (walk_build_decode) the token
                       being generated, from 0 */
    int narration;  /* index of the narration item told at this step, or -1 */
    int train_step; /* the training axis: the trace at the weights after this many updates of
                       the lesson's train: (0: the lesson's own weights) */
} walk_step;

/* Where a narration item asks to be told: a stage, a head from 1 (0 when it names none, which
 * means the first head), and in a decoding lesson a token from 1 (0 when it names none: the
 * whole matrix; token k is the step's position k − 1). The loader refuses a head on a stage
 * that is not per head, and a token outside 1 … n or in a lesson that does not decode. */
typedef struct {
    stage_id stage;
    int head;
    int token;
    int train_step; /* a script step's train_step: k, 0 … the lesson's steps (0: none) */
} walk_mark;

typedef struct {
    walk_step *steps;  /* (count) in order; step k is numbered k + 1 in every view */
    int count;
} walk;

/* Builds the walk of t. With marks (the author's script), one step per mark in the author's
 * order, narration i at mark i: a script may revisit a stage or a head, and shows nothing it
 * does not name. Without marks, the time axis of decoding (walk_build_decode) when t decodes
 * (t->in->decode), else the pipeline (walk_build_pipeline). Marks naming a stage the
 * trace lacks or a head it does not have are not placed (the loader never lets them through).
 * Returns false when out of memory (w is then empty). Free with walk_free. */
bool walk_build(walk *w, const trace *t, const walk_mark *marks, int n_marks);

/* walk_build for a lesson that trains for train_steps updates (0: none): a script's steps at
 * their marks' train_step; without a script, the pipeline at step 0 and then the training
 * axis, the loss after each update k = 1 … train_steps (each a step of the loss's stage at
 * train_step k). */
bool walk_build_trained(walk *w, const trace *t, const walk_mark *marks, int n_marks,
                        int train_steps);

/* Every stage the trace has, in stage-table order, each head of a per-head stage in turn, with
 * no narration: the walk of a lesson without a script, of --json and --csv, and the list a
 * student picks from off the script. */
bool walk_build_pipeline(walk *w, const trace *t);

/* The time axis of decoding with a KV cache (t->in->decode): for each token p in order, its q,
 * k and v rows (K and V showing the cache growing to p + 1 rows; with RoPE, then Q_rotated and
 * K_rotated, the cache of turned keys), in each head its scores, running_max and running_sum
 * (with the online softmax), weights and context rows, then its output row; every step at
 * position p. Returns false when out of memory. */
bool walk_build_decode(walk *w, const trace *t);

/* The matrix a view shows off its walk, the pipeline's whole step `whole`, after leaving step
 * `left`: placed at left's position when left is a step of decoding and whole's stage is one
 * decoding computes at each token (STAGE_DECODED), so that it shows only what a KV cache has
 * there (the token's own row, the cache's rows up to it); otherwise whole itself. */
walk_step walk_step_off(const walk_step *whole, const walk_step *left);

/* The rows of its stage a step shows, [*first, *end): every row for WALK_WHOLE; at position p,
 * the cache's rows 0 … p of a stage whose rows are the keys (K, V, K_rotated), and row p of
 * any other stage. */
void walk_step_rows(const trace *t, const walk_step *step, int *first, int *end);

/* The columns of its stage a step shows, [*first, *end): at position p, the keys the cache
 * holds, 0 … p, of a stage whose columns are the keys (scores, weights: the decoder never
 * computes a later key's column), and the tiles of those keys, 0 … p / tile, of running_max
 * and running_sum; every column otherwise. */
void walk_step_cols(const trace *t, const walk_step *step, int *first, int *end);

/* Whether a step of stage at a position (from 0; WALK_WHOLE: every cell) shows the cell (row,
 * col), by the rule of walk_step_rows and walk_step_cols, for a caller without a trace (tile:
 * the online softmax's keys per tile, read only for its tiles' columns). */
bool walk_position_shows(stage_id stage, int position, int tile, int row, int col);

void walk_free(walk *w);

/* The first step showing stage at head (any head for a stage that is not per head), or -1. */
int walk_find(const walk *w, stage_id stage, int head);

/* Whether step k shows the same matrix as step k - 1 (a second narration item at one stage
 * and head): a text output then writes the narration without the table again. */
bool walk_repeats_matrix(const walk *w, int k);

#endif
