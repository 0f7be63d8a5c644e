/* --svg STAGE and --svg-dir DIR: a step's matrix as a standalone SVG heatmap, drawn by the
 * heatmap's one rule (heat.h: the UI's buckets, ramps and masked grey), and a folder of them,
 * one per step of the walk, with an index.html that shows them in order with the narration. */
#ifndef ATTNSTEP_OUTPUT_SVG_H
#define ATTNSTEP_OUTPUT_SVG_H

#include <stddef.h>
#include <stdio.h>
#include "exit_status.h"
#include "lesson.h"
#include "trace.h"
#include "walk.h"

typedef struct {
    int precision;   /* decimals of the cells (NUMBER_FIXED) */
    int palette;     /* heat_palette: the ramps (--ramp) */
} output_svg_options;

/* Labels wider than this many columns are cut to one less and "…" (the whole label stays in
 * the cell's tooltip); a column label wider than its cell is drawn rotated by 45 degrees. */
enum { OUTPUT_SVG_LABEL_MAX = 16 };

/* Writes the figure of one step: the rows and columns it shows (walk_step_rows, _cols: all of
 * them, or at a decoding step what decoding computes for its token), each cell coloured by its
 * bucket with its number at opts->precision, masked cells in the mask's grey with a cross and
 * their −∞ or 0, a legend with every bucket's edges, and the lesson's title and the stage's
 * formula as its caption. Every byte of lesson text goes through text_escape_xml. The stream
 * is flushed; returns EXIT_STATUS_OK, EXIT_STATUS_IO or EXIT_STATUS_SOFTWARE (no memory). */
exit_status output_svg_write(const lesson *l, const trace *t, const walk_step *step,
                             const output_svg_options *opts, FILE *stream);

/* The file name of step k (from 0) of walk w: its number from 1 (zero-padded to the digits of
 * the last step), its stage, and its head when the stage has one per head in a lesson of
 * several: "06-weights-head2.svg". Trusted text (numbers and the node table's names). Returns
 * the length it wanted (as snprintf). */
int output_svg_name(const trace *t, const walk *w, int k, char *buffer, size_t size);

/* Writes one figure per step of lesson_walk(l, t) into the folder dir (made when missing), and
 * dir/index.html: every step in order, its header, question and narration (escaped) and its
 * figure. On failure, the path that could not be written (or the folder) goes into failed
 * (size bytes) and EXIT_STATUS_IO or EXIT_STATUS_SOFTWARE is returned. */
exit_status output_svg_dir(const lesson *l, const trace *t, const output_svg_options *opts,
                           const char *dir, char *failed, size_t size);

#endif
