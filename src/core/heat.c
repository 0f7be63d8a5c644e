/* The heatmap's ramps, buckets and edges (heat.h): one copy for the UI and the SVG figures. */
#include "heat.h"
#include <math.h>
#include <string.h>

#define HEAT_COUNT(a) ((int)(sizeof (a) / sizeof (a)[0]))
#define RAMP(a) {a, HEAT_COUNT(a)}

/* (background, text), dark to light, approximated in xterm's 256 colours, and an 8-colour
 * version of each; both palettes stay ordered by lightness for the common colour-vision
 * deficiencies. */
static const heat_colour viridis256[] = {{53, 15}, {54, 15}, {61, 15}, {24, 15}, {30, 15},
                                         {36, 0},  {71, 0},  {113, 0}, {148, 0}, {220, 0}};
static const heat_colour blue_orange256[] = {{18, 15}, {25, 15}, {32, 15}, {75, 0}, {153, 0},
                                             {255, 0}, {223, 0}, {215, 0}, {208, 0},
                                             {166, 15}, {130, 15}};
static const heat_colour inferno256[] = {{16, 15}, {53, 15}, {89, 15}, {125, 15}, {161, 15},
                                         {167, 0}, {202, 0}, {208, 0}, {220, 0}, {229, 0}};
static const heat_colour purple_green256[] = {{54, 15}, {97, 15}, {140, 0}, {183, 0},
                                              {225, 0}, {255, 0}, {194, 0}, {151, 0},
                                              {108, 0}, {65, 15}, {22, 15}};
static const heat_colour viridis8[] = {{HEAT_BLUE, HEAT_WHITE}, {HEAT_CYAN, HEAT_BLACK},
                                       {HEAT_GREEN, HEAT_BLACK}, {HEAT_YELLOW, HEAT_BLACK},
                                       {HEAT_WHITE, HEAT_BLACK}};
static const heat_colour blue_orange8[] = {{HEAT_BLUE, HEAT_WHITE}, {HEAT_CYAN, HEAT_BLACK},
                                           {HEAT_WHITE, HEAT_BLACK},
                                           {HEAT_YELLOW, HEAT_BLACK}, {HEAT_RED, HEAT_WHITE}};
static const heat_colour inferno8[] = {{HEAT_BLACK, HEAT_WHITE}, {HEAT_MAGENTA, HEAT_WHITE},
                                       {HEAT_RED, HEAT_WHITE}, {HEAT_YELLOW, HEAT_BLACK},
                                       {HEAT_WHITE, HEAT_BLACK}};
static const heat_colour purple_green8[] = {{HEAT_MAGENTA, HEAT_WHITE},
                                            {HEAT_RED, HEAT_WHITE}, {HEAT_WHITE, HEAT_BLACK},
                                            {HEAT_CYAN, HEAT_BLACK},
                                            {HEAT_GREEN, HEAT_BLACK}};
/* [palette][256 colours?][diverging?] */
static const heat_ramp ramps[HEAT_PALETTE_COUNT][2][2] = {
    [HEAT_VIRIDIS] = {{RAMP(viridis8), RAMP(blue_orange8)},
                      {RAMP(viridis256), RAMP(blue_orange256)}},
    [HEAT_INFERNO] = {{RAMP(inferno8), RAMP(purple_green8)},
                      {RAMP(inferno256), RAMP(purple_green256)}},
};
static const char *const palette_names[HEAT_PALETTE_COUNT] = {"viridis", "inferno"};

heat_ramp heat_ramp_of(int palette, bool colors256, bool diverging)
{
    int p = palette >= 0 && palette < HEAT_PALETTE_COUNT ? palette : HEAT_VIRIDIS;
    return ramps[p][colors256][diverging];
}

heat_colour heat_mask(bool colors256)
{
    return colors256 ? (heat_colour){238, 15} : (heat_colour){HEAT_BLACK, HEAT_WHITE};
}

const char *heat_palette_name(int palette)
{
    return palette_names[palette >= 0 && palette < HEAT_PALETTE_COUNT ? palette : 0];
}

int heat_palette_find(const char *name)
{
    for (int p = 0; p < HEAT_PALETTE_COUNT; p++)
        if (strcmp(name, palette_names[p]) == 0) return p;
    return -1;
}

bool heat_diverging(stage_id stage)
{
    return !(stage_get(stage)->flags & STAGE_ATTENTION);
}

double heat_position(double x, bool diverging, double absmax)
{
    if (!diverging) return x < 0 ? 0 : x > 1 ? 1 : x;
    return absmax > 0 ? (x / absmax + 1) / 2 : 0.5;
}

int heat_bucket(double position, int n)
{
    int i = (int)floor(position * n);
    return i < 0 ? 0 : i > n - 1 ? n - 1 : i;
}

double heat_edge(int i, int n, bool diverging, double absmax)
{
    double position = (double)i / n;
    return diverging ? (2 * position - 1) * absmax : position;
}

double heat_round_step(double span, int n)
{
    if (!(span > 0) || n < 1 || !isfinite(span)) return 0;
    double least = span / n, decade = pow(10, floor(log10(least)));
    static const double mantissas[] = {1, 2, 5, 10};
    for (size_t i = 0; i < sizeof mantissas / sizeof mantissas[0]; i++)
        if (least <= mantissas[i] * decade * (1 + 1e-9))   /* a hair over, from rounding */
            return mantissas[i] * decade;
    return 10 * decade;
}

double heat_extent(double absmax, int n, bool diverging)
{
    return diverging ? heat_round_step(2 * absmax, n) * n / 2 : 1;
}

unsigned heat_rgb(int colour)
{
    static const unsigned system[16] = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee,
                                        0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000,
                                        0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff,
                                        0xffffff};
    static const unsigned level[6] = {0, 95, 135, 175, 215, 255};
    if (colour < 0 || colour > 255) return 0;
    if (colour < 16) return system[colour];
    if (colour >= 232) {
        unsigned grey = 8 + 10 * (unsigned)(colour - 232);
        return grey << 16 | grey << 8 | grey;
    }
    int c = colour - 16;
    return level[c / 36] << 16 | level[c / 6 % 6] << 8 | level[c % 6];
}

bool heat_masked(const trace *t, stage_id stage, int row, int col)
{
    return (stage_get(stage)->flags & (STAGE_HIDES | STAGE_ATTENTION)) && trace_is_hidden(t, row, col);
}

void heat_range(const trace *t, stage_id stage, int head, double *lo, double *hi)
{
    bool masking = (stage_get(stage)->flags & STAGE_HIDES) && t->in->mask != MASK_NONE;
    double least = INFINITY, most = -INFINITY;
    for (int r = 0; r < trace_rows(t, stage); r++)
        for (int c = 0; c < trace_cols(t, stage); c++) {
            double x = trace_value(t, stage, head, r, c);
            if (!isfinite(x) || (masking && trace_is_hidden(t, r, c))) continue;
            least = fmin(least, x);
            most = fmax(most, x);
        }
    *lo = isfinite(least) ? least : 0;
    *hi = isfinite(most) ? most : 0;
}
