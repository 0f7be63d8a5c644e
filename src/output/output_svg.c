/* --svg and --svg-dir: a step's matrix as a standalone SVG heatmap (heat.h's buckets and ramps,
 * RGB by xterm's palette, as the UI shows them at 256 colours), and a folder of them with an
 * index.html. Written through output.h's writers, so the first failure is remembered. */
#include "output_svg.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "heat.h"
#include "output.h"
#include "text.h"

/* Pixels: an estimate of a column of text at the cells' size (13), the cells, the margins. */
enum { CHAR_PX = 8, CELL_H = 28, MARGIN = 16, SWATCH_W = 40, SWATCH_H = 14, HEADER_H = 60 };

/* Where everything of one figure goes. */
typedef struct {
    const walk_step *step;
    int first_row, end_row, first_col, end_col;
    bool diverging, masked;   /* masked: some cell shown is masked (the legend's swatch) */
    double extent;       /* the ramp's ends (heat_extent): buckets a round step wide */
    heat_ramp ramp;
    int cell_w, row_label_w, band_h, x0, y0, width, height;
    bool rotate;              /* column labels at 45 degrees */
} figure;

/* Writes lesson text (or text that holds it) as XML character data or an attribute value. */
static void put_xml(output *o, const char *utf8, bool keep_lines)
{
    int length = text_escape_xml(utf8, keep_lines, NULL, 0);
    char *text = malloc((size_t)length + 1);
    if (!text) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    text_escape_xml(utf8, keep_lines, text, (size_t)length + 1);
    output_puts(o, text);
    free(text);
}

/* A label as shown: escaped (text_escape), and cut to OUTPUT_SVG_LABEL_MAX columns with "…"
 * when wider. Writes into buffer; returns its width in columns. */
static int shown_label(const char *label, char *buffer, size_t size)
{
    char escaped[512];
    text_escape(label, escaped, sizeof escaped);
    if (text_width(escaped) <= OUTPUT_SVG_LABEL_MAX) {
        snprintf(buffer, size, "%s", escaped);
        return text_width(escaped);
    }
    size_t at = 0;
    int width = 0;
    while (escaped[at]) {
        unsigned c;
        int bytes = text_decode(escaped + at, &c);
        int w = bytes ? text_char_width(c) : 4;
        if (width + w > OUTPUT_SVG_LABEL_MAX - 1) break;
        width += w;
        at += (size_t)(bytes ? bytes : 1);
    }
    snprintf(buffer, size, "%.*s\xe2\x80\xa6", (int)at, escaped);
    return width + 1;
}

static int axis_label(const trace *t, stage_axis axis, int i, char *buffer, size_t size)
{
    char raw[64];
    return shown_label(trace_axis_label(t, axis, i, raw, sizeof raw), buffer, size);
}

static void cell_text(const trace *t, const figure *f, int precision, int row, int col,
                      char *text, size_t size)
{
    const walk_step *s = f->step;
    number_format format = { NUMBER_FIXED, precision, 0, false };
    if (heat_masked(t, s->stage, row, col) && !(stage_get(s->stage)->flags & STAGE_HIDES))
        snprintf(text, size, "0");   /* a masked weight is exactly 0, as the UI writes it */
    else
        number_write(trace_value(t, s->stage, s->head, row, col), &format, text, size);
}

/* Measures the figure: the widest number and label, whether column labels must turn. */
static void lay_out(const trace *t, const walk_step *step, int precision, int palette,
                    figure *f)
{
    *f = (figure){ .step = step, .diverging = heat_diverging(step->stage) };
    f->ramp = heat_ramp_of(palette, true, f->diverging);
    walk_step_rows(t, step, &f->first_row, &f->end_row);
    walk_step_cols(t, step, &f->first_col, &f->end_col);
    double lo, hi;
    heat_range(t, step->stage, step->head, &lo, &hi);
    f->extent = heat_extent(fmax(fabs(lo), fabs(hi)), f->ramp.n, f->diverging);
    const stage_info *info = stage_get(step->stage);
    int number_w = 1, row_w = 1, col_w = 1;
    char text[NUMBER_MAX + 600];
    for (int r = f->first_row; r < f->end_row; r++) {
        int label_w = axis_label(t, info->rows, r, text, sizeof text);
        row_w = label_w > row_w ? label_w : row_w;
        for (int c = f->first_col; c < f->end_col; c++) {
            cell_text(t, f, precision, r, c, text, sizeof text);
            int w = text_width(text);
            number_w = w > number_w ? w : number_w;
            f->masked |= heat_masked(t, step->stage, r, c);
        }
    }
    for (int c = f->first_col; c < f->end_col; c++) {
        int w = axis_label(t, info->cols, c, text, sizeof text);
        col_w = w > col_w ? w : col_w;
    }
    f->cell_w = number_w * CHAR_PX + 16;
    f->cell_w = f->cell_w < 44 ? 44 : f->cell_w;
    f->rotate = col_w * CHAR_PX > f->cell_w - 6;
    f->band_h = f->rotate ? col_w * CHAR_PX * 71 / 100 + 14 : 22;
    f->row_label_w = row_w * CHAR_PX + 10;
    f->x0 = MARGIN + f->row_label_w;
    f->y0 = HEADER_H + f->band_h;
    int grid_right = f->x0 + (f->end_col - f->first_col) * f->cell_w;
    int legend_right = MARGIN + (f->ramp.n + 3) * SWATCH_W;
    f->width = (grid_right > legend_right ? grid_right : legend_right) + MARGIN
               + (f->rotate ? col_w * CHAR_PX * 71 / 100 : 0);
    f->height = f->y0 + (f->end_row - f->first_row) * CELL_H + 64;
}

/* "weights = softmax(masked) · head 2 · token 3 of 6 (sat) · 1×3" */
static void put_caption(output *o, const figure *f)
{
    const trace *t = o->trace;
    char formula[400];
    trace_stage_formula(t, f->step->stage, formula, sizeof formula);
    output_puts(o, formula);   /* written by attnstep from the node table: no lesson text */
    if (stage_get(f->step->stage)->per_head && t->heads > 1)
        output_printf(o, " \xc2\xb7 head %d", f->step->head);
    if (f->step->position != WALK_WHOLE) {
        output_puts(o, " \xc2\xb7 ");
        output_printf(o, "token %d of %d (", f->step->position + 1, t->n);
        put_xml(o, t->in->tokens[f->step->position], false);
        output_putc(o, ')');
    }
    output_printf(o, " \xc2\xb7 %d\xc3\x97%d", f->end_row - f->first_row, f->end_col - f->first_col);
}

static void put_rgb(output *o, unsigned rgb)
{
    output_printf(o, "#%06x", rgb);
}

static void put_labels(output *o, const figure *f)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(f->step->stage);
    char shown[600], raw[64];
    for (int c = f->first_col; c < f->end_col; c++) {
        int x = f->x0 + (c - f->first_col) * f->cell_w + f->cell_w / 2, y = f->y0 - 8;
        axis_label(t, info->cols, c, shown, sizeof shown);
        if (f->rotate)
            output_printf(o, "<text class=\"col\" x=\"%d\" y=\"%d\" transform=\"rotate(-45 %d %d)\">", x, y, x, y);
        else
            output_printf(o, "<text class=\"col\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x, y);
        output_puts(o, "<title>");
        put_xml(o, trace_axis_label(t, info->cols, c, raw, sizeof raw), false);
        output_puts(o, "</title>");
        put_xml(o, shown, false);
        output_puts(o, "</text>\n");
    }
    for (int r = f->first_row; r < f->end_row; r++) {
        axis_label(t, info->rows, r, shown, sizeof shown);
        output_printf(o, "<text class=\"row\" x=\"%d\" y=\"%d\" text-anchor=\"end\"><title>",
                      f->x0 - 8, f->y0 + (r - f->first_row) * CELL_H + CELL_H / 2 + 5);
        put_xml(o, trace_axis_label(t, info->rows, r, raw, sizeof raw), false);
        output_puts(o, "</title>");
        put_xml(o, shown, false);
        output_puts(o, "</text>\n");
    }
}

/* One cell: its bucket's colour (or the mask's grey and a cross), its number, and its name
 * and value in data attributes, so a reader of the figure finds a cell by its indices. */
static void put_cell(output *o, const figure *f, int row, int col)
{
    const trace *t = o->trace;
    const walk_step *s = f->step;
    int x = f->x0 + (col - f->first_col) * f->cell_w, y = f->y0 + (row - f->first_row) * CELL_H;
    double value = trace_value(t, s->stage, s->head, row, col);
    bool masked = heat_masked(t, s->stage, row, col);
    heat_colour colour = masked ? heat_mask(true) : (heat_colour){ 231, 0 };   /* white */
    if (!masked && isfinite(value))
        colour = f->ramp.colours[heat_bucket(heat_position(value, f->diverging, f->extent),
                                             f->ramp.n)];
    char text[NUMBER_MAX];
    cell_text(t, f, o->precision, row, col, text, sizeof text);
    output_printf(o, "<g class=\"%s\" data-row=\"%d\" data-col=\"%d\">"
                  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"",
                  masked ? "cell masked" : "cell", row, col, x, y, f->cell_w - 1, CELL_H - 1);
    put_rgb(o, heat_rgb(colour.bg));
    output_puts(o, "\"/>");
    if (masked)   /* the UI's ╳: masked is no small value */
        output_printf(o, "<path d=\"M%d %dL%d %dM%d %dL%d %d\" stroke=\"#8a8a8a\" stroke-width=\"1\"/>",
                      x + 4, y + 4, x + f->cell_w - 5, y + CELL_H - 5, x + f->cell_w - 5, y + 4,
                      x + 4, y + CELL_H - 5);
    output_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"", x + f->cell_w / 2,
                  y + CELL_H / 2 + 5);
    put_rgb(o, heat_rgb(colour.fg));
    output_printf(o, "\"%s>%s</text></g>\n", masked || !isfinite(value) ? " font-weight=\"bold\"" : "",
                  text);
}

/* The ramp's swatches with the value at every bucket edge under them, at most two decimals
 * (as the UI's legend), and the masked cells' swatch when there are any. */
static void put_legend(output *o, const figure *f)
{
    int y = f->y0 + (f->end_row - f->first_row) * CELL_H + 18;
    number_format edge = { NUMBER_SHORT, o->precision < 2 ? o->precision : 2, 0, false };
    output_puts(o, "<g class=\"legend\">\n");
    for (int i = 0; i <= f->ramp.n; i++) {
        int x = MARGIN + 16 + i * SWATCH_W;
        if (i < f->ramp.n) {
            output_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"", x, y,
                          SWATCH_W, SWATCH_H);
            put_rgb(o, heat_rgb(f->ramp.colours[i].bg));
            output_puts(o, "\"/>\n");
        }
        char number[NUMBER_MAX];
        number_write(heat_edge(i, f->ramp.n, f->diverging, f->extent), &edge, number, sizeof number);
        output_printf(o, "<text class=\"edge\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                      x, y + SWATCH_H + 13, number);
    }
    if (f->masked) {
        int x = MARGIN + 16 + (f->ramp.n + 1) * SWATCH_W;
        output_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"", x, y,
                      SWATCH_W, SWATCH_H);
        put_rgb(o, heat_rgb(heat_mask(true).bg));
        output_printf(o, "\"/>\n<text class=\"edge\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
                      "masked</text>\n", x + SWATCH_W / 2, y + SWATCH_H + 13);
    }
    output_puts(o, "</g>\n");
}

static void put_figure(output *o, const walk_step *step, int palette)
{
    figure f;
    lay_out(o->trace, step, o->precision, palette, &f);
    output_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
                  "font-size=\"13\">\n<title>", f.width, f.height, f.width, f.height);
    put_xml(o, o->lesson->title, false);
    output_puts(o, ": ");
    put_caption(o, &f);
    output_printf(o, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
                  "<text class=\"title\" x=\"%d\" y=\"26\" font-size=\"16\" font-weight=\"bold\">",
                  f.width, f.height, MARGIN);
    put_xml(o, o->lesson->title, false);
    output_printf(o, "</text>\n<text class=\"formula\" x=\"%d\" y=\"46\">", MARGIN);
    put_caption(o, &f);
    output_puts(o, "</text>\n");
    put_labels(o, &f);
    for (int r = f.first_row; r < f.end_row; r++)
        for (int c = f.first_col; c < f.end_col; c++)
            put_cell(o, &f, r, c);
    put_legend(o, &f);
    output_puts(o, "</svg>\n");
}

static exit_status finish(output *o)
{
    if (o->status == EXIT_STATUS_OK && (fflush(o->stream) != 0 || ferror(o->stream)))
        output_fail(o, EXIT_STATUS_IO);
    return o->status;
}

exit_status output_svg_write(const lesson *l, const trace *t, const walk_step *step,
                             const output_svg_options *opts, FILE *stream)
{
    output o = { .lesson = l, .trace = t, .precision = opts->precision, .stream = stream,
                 .status = EXIT_STATUS_OK };
    put_figure(&o, step, opts->palette);
    return finish(&o);
}

int output_svg_name(const trace *t, const walk *w, int k, char *buffer, size_t size)
{
    const walk_step *s = &w->steps[k];
    int digits = snprintf(NULL, 0, "%d", w->count);
    char head[24] = "";
    if (stage_get(s->stage)->per_head && t->heads > 1)
        snprintf(head, sizeof head, "-head%d", s->head);
    return snprintf(buffer, size, "%0*d-%s%s.svg", digits < 2 ? 2 : digits, k + 1,
                    stage_get(s->stage)->name, head);
}

/* index.html's section for step k: its header, question and narration, and its figure. */
static void put_index_step(output *o, const walk *w, int k)
{
    const walk_step *s = &w->steps[k];
    char name[96], formula[400];
    output_svg_name(o->trace, w, k, name, sizeof name);
    trace_stage_formula(o->trace, s->stage, formula, sizeof formula);
    output_printf(o, "<section id=\"step-%d\">\n<h2>%d. %s", k + 1, k + 1, formula);
    if (stage_get(s->stage)->per_head && o->trace->heads > 1)
        output_printf(o, " \xc2\xb7 head %d", s->head);
    output_puts(o, "</h2>\n");
    const lesson_step *item = lesson_narration(o->lesson, s);
    if (item && item->ask) {
        output_puts(o, "<p class=\"ask\">");
        put_xml(o, item->ask, false);
        output_puts(o, "</p>\n");
    }
    if (item && item->say) {
        output_puts(o, "<p class=\"say\" style=\"white-space: pre-line\">");
        put_xml(o, item->say, true);
        output_puts(o, "</p>\n");
    }
    output_printf(o, "<img src=\"%s\" alt=\"step %d: %s\"/>\n</section>\n", name, k + 1,
                  stage_get(s->stage)->name);
}

static exit_status write_index(const lesson *l, const trace *t, const walk *w, FILE *stream)
{
    output o = { .lesson = l, .trace = t, .stream = stream, .status = EXIT_STATUS_OK };
    output_puts(&o, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\"/>\n<title>");
    put_xml(&o, l->title, false);
    output_puts(&o, "</title>\n</head>\n<body>\n<h1>");
    put_xml(&o, l->title, false);
    output_puts(&o, "</h1>\n");
    for (int k = 0; k < w->count && o.status == EXIT_STATUS_OK; k++)
        put_index_step(&o, w, k);
    output_puts(&o, "</body>\n</html>\n");
    return finish(&o);
}

/* Opens dir/name for writing; NULL with the path in failed. */
static FILE *open_in(const char *dir, const char *name, char *failed, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *stream = fopen(path, "w");
    if (!stream)
        snprintf(failed, size, "%s", path);
    return stream;
}

/* Writes one file by `write`, closing it; the path goes into failed when anything failed. */
static exit_status write_file(const char *dir, const char *name, char *failed, size_t size,
                              exit_status (*write)(void *, FILE *), void *context)
{
    FILE *stream = open_in(dir, name, failed, size);
    if (!stream)
        return EXIT_STATUS_IO;
    exit_status status = write(context, stream);
    if (fclose(stream) != 0 && status == EXIT_STATUS_OK)
        status = EXIT_STATUS_IO;
    if (status != EXIT_STATUS_OK)
        snprintf(failed, size, "%s/%s", dir, name);
    return status;
}

typedef struct {
    const lesson *l;
    const trace *t;
    const walk *w;
    const output_svg_options *opts;
    int k;
} dir_job;

static exit_status write_step_file(void *context, FILE *stream)
{
    const dir_job *job = context;
    return output_svg_write(job->l, job->t, &job->w->steps[job->k], job->opts, stream);
}

static exit_status write_index_file(void *context, FILE *stream)
{
    const dir_job *job = context;
    return write_index(job->l, job->t, job->w, stream);
}

exit_status output_svg_dir(const lesson *l, const trace *t, const output_svg_options *opts,
                           const char *dir, char *failed, size_t size)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(failed, size, "%s", dir);
        return EXIT_STATUS_IO;
    }
    walk w;
    if (!lesson_walk(l, t, &w))
        return EXIT_STATUS_SOFTWARE;
    dir_job job = { l, t, &w, opts, 0 };
    exit_status status = EXIT_STATUS_OK;
    for (; job.k < w.count && status == EXIT_STATUS_OK; job.k++) {
        char name[96];
        output_svg_name(t, &w, job.k, name, sizeof name);
        status = write_file(dir, name, failed, size, write_step_file, &job);
    }
    if (status == EXIT_STATUS_OK)
        status = write_file(dir, "index.html", failed, size, write_index_file, &job);
    walk_free(&w);
    return status;
}
