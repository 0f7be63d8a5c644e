/* The heatmap's one rule, shared by the UI's matrix pane and the SVG figures: the colour ramps
 * (as terminal colour numbers, and as RGB through xterm's 256-colour palette), the position of
 * a value on its ramp, its bucket and the buckets' edges, and the masked cells' grey. Pure. */
#ifndef ATTNSTEP_HEAT_H
#define ATTNSTEP_HEAT_H

#include <stdbool.h>
#include "trace.h"

/* Palettes, both readable with the common colour-vision deficiencies: viridis for weights with
 * a blue-orange diverging ramp for signed values (the default), or inferno with purple-green. */
typedef enum { HEAT_VIRIDIS, HEAT_INFERNO, HEAT_PALETTE_COUNT } heat_palette;

/* The eight terminal colours, numbered as ANSI (and curses' COLOR_ constants) number them. */
enum { HEAT_BLACK, HEAT_RED, HEAT_GREEN, HEAT_YELLOW, HEAT_BLUE, HEAT_MAGENTA, HEAT_CYAN,
       HEAT_WHITE };

/* A bucket's colours: background and text, terminal colour numbers (0-255 on a 256-colour
 * ramp, HEAT_BLACK … HEAT_WHITE on an 8-colour one). */
typedef struct { short bg, fg; } heat_colour;

/* A ramp, dark to light: n buckets, bucket i holding positions [i/n, (i+1)/n). */
typedef struct { const heat_colour *colours; int n; } heat_ramp;

/* The ramp of a palette (clamped to a known one) in 256 colours or 8, sequential for weights
 * (0 … 1) or diverging for signed values (0 in the light middle bucket). */
heat_ramp heat_ramp_of(int palette, bool colors256, bool diverging);

/* The masked cells' grey, a colour no ramp uses. */
heat_colour heat_mask(bool colors256);

/* A palette's name, "viridis" or "inferno" (--ramp), and the palette of a name, or -1. */
const char *heat_palette_name(int palette);
int heat_palette_find(const char *name);

/* Whether a stage is shown on the diverging ramp: everything but the attention weights. */
bool heat_diverging(stage_id stage);

/* The position 0…1 of x on its ramp: a weight as it is (clamped), a signed value with 0 in the
 * middle and ±absmax at the ends. */
double heat_position(double x, bool diverging, double extent);

/* The bucket (0 … n-1) of a position 0…1 on a ramp of n colours: bucket i holds [i/n,
 * (i+1)/n), so the legend's edges are exact and equal-looking values share a colour. */
int heat_bucket(double position, int n);

/* The value at the lower edge of bucket i of n (i = n: the top of the ramp). */
double heat_edge(int i, int n, bool diverging, double extent);

/* The smallest round step (1, 2 or 5 × 10^k) whose n buckets cover span; 0 for an empty or
 * non-finite span. */
double heat_round_step(double span, int n);

/* The ends of a ramp of n buckets for a matrix whose largest |cell| is absmax: ±(n/2 round
 * steps) on the diverging ramp, so its buckets are a round step wide with 0 in the middle
 * bucket; 1 (the weights' 0 … 1) on the sequential one. */
double heat_extent(double absmax, int n, bool diverging);

/* The RGB (0xRRGGBB) of a colour number of xterm's 256-colour palette: the 16 system colours,
 * the 6×6×6 cube and the grey ramp, as xterm defines them. */
unsigned heat_rgb(int colour);

/* Whether a cell is one the mask hides, in a stage that shows it (STAGE_HIDES: −∞ there;
 * STAGE_ATTENTION: a weight of exactly 0): marked as masked, never coloured as a value. */
bool heat_masked(const trace *t, stage_id stage, int row, int col);

/* The finite extremes of a stage's matrix at a head, hidden cells left out where the stage
 * hides them (STAGE_HIDES); both 0 when no cell is finite. */
void heat_range(const trace *t, stage_id stage, int head, double *lo, double *hi);

#endif
