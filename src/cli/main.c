/* attnstep's command line: picks the output (interactive UI, --plain, --json, --explain,
 * --check), loads the lesson, computes the trace once and hands it to that reader. */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace.h"
#include "lesson.h"
#include "output.h"
#include "stats.h"
#include "template.h"
#include "ui.h"

#define ATTNSTEP_VERSION "0.1.0"

/* Exit statuses, as sysexits.h names them; README's "Exit status" lists the same. */
typedef enum {
    EXIT_OK = 0,
    EXIT_USAGE = 64,     /* bad command line */
    EXIT_DATA = 65,      /* a lesson with errors, or a trace that overflowed */
    EXIT_NO_INPUT = 66,  /* a lesson file that cannot be read */
    EXIT_SOFTWARE = 70,  /* an internal error (out of memory, …) */
    EXIT_IO = 74         /* output could not be written */
} exit_status;

typedef enum { MODE_AUTO, MODE_PLAIN, MODE_JSON, MODE_MARKDOWN, MODE_CSV, MODE_EXPLAIN,
               MODE_CHECK, MODE_STATS, MODE_COST } mode;

typedef struct {
    mode mode;
    const char *explain;   /* the cell of --explain */
    const char *csv_stage; /* the stage of --csv */
    int head;              /* --head, 0 when not given */
    int precision;
    int d_model, heads;    /* the shape of --cost */
    ui_options ui;
} options;

static const char usage_text[] =
    "Usage: attnstep [OPTION]... [LESSON]\n"
    "Step through multi-head self-attention, one stage at a time.\n"
    "\n"
    "  (no option)            open LESSON in the interactive UI (the lesson picker without\n"
    "                         LESSON); when output is not a terminal, print the plain trace\n"
    "  --plain                every stage as a labelled text table, with the narration\n"
    "  --json                 every intermediate as JSON, numbers bit-exact\n"
    "  --markdown             a handout: narration, every stage as a Markdown table\n"
    "  --csv STAGE            one stage's matrix as CSV (with --head for per-head stages)\n"
    "  --explain 'STAGE[ROW,COL]'\n"
    "                         the arithmetic of one cell; ROW and COL are token names or\n"
    "                         0-based indices, e.g. --explain 'weights[cat,sat]'\n"
    "  --check LESSON...      validate lessons only; print every problem found\n"
    "  --template             print a commented starter lesson\n"
    "  --stats LESSON         what each stage costs: multiplications, additions, memory,\n"
    "                         measured time, then the totals and the peak memory\n"
    "  --cost                 how the cost grows with the sentence: n = 16, 32, … 2048\n"
    "                         random tokens, measured, with a plot\n"
    "  --d-model D, --heads H the shape --cost uses (default 64 and 4)\n"
    "  --head H               the head for --explain, --csv and --at (from 1; default 1)\n"
    "  --at 'STAGE[ROW,COL]'  open the UI at that stage and cell\n"
    "  --precision N          decimals shown (0-17, default 4)\n"
    "  --color=WHEN           colours in the UI: auto (default), always, never\n"
    "  --keys FILE            headless UI: read keys from FILE, dump screens as text\n"
    "  --screen COLSxROWS     headless UI screen size (default 80x24)\n"
    "  --help-keys            list the keys of the interactive UI\n"
    "  -h, --help             show this help\n"
    "  -V, --version          show the version\n"
    "\n"
    "Exit status: 0 ok, 64 bad command line, 65 lesson with errors, 66 unreadable lesson,\n"
    "70 internal error, 74 output error.\n";

static int usage_error(const char *message, const char *detail)
{
    fprintf(stderr, "attnstep: %s%s%s\nTry 'attnstep --help' for more information.\n",
            message, detail ? ": " : "", detail ? detail : "");
    return EXIT_USAGE;
}

/* Parses a whole decimal number in [low, high]; false for anything else. */
static bool parse_int(const char *text, int low, int high, int *value)
{
    char *end;
    long parsed = strtol(text, &end, 10);
    if (end == text || *end != '\0' || parsed < low || parsed > high)
        return false;
    *value = (int)parsed;
    return true;
}

static bool parse_color(const char *text, ui_color *color)
{
    static const char *const names[] = {
        [UI_COLOR_AUTO] = "auto", [UI_COLOR_ALWAYS] = "always", [UI_COLOR_NEVER] = "never",
    };
    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            *color = (ui_color)i;
            return true;
        }
    return false;
}

static bool parse_screen(const char *text, int *cols, int *rows)
{
    char extra;
    return sscanf(text, "%dx%d%c", cols, rows, &extra) == 2 && *cols >= 1 && *cols <= 1000
        && *rows >= 1 && *rows <= 1000;
}

enum { OPTION_PLAIN = 256, OPTION_JSON, OPTION_MARKDOWN, OPTION_CSV, OPTION_EXPLAIN,
       OPTION_CHECK, OPTION_TEMPLATE, OPTION_HEAD, OPTION_AT, OPTION_PRECISION, OPTION_COLOR,
       OPTION_KEYS, OPTION_SCREEN, OPTION_HELP_KEYS, OPTION_STATS, OPTION_COST, OPTION_D_MODEL,
       OPTION_HEADS };

static const struct option long_options[] = {
    { "plain", no_argument, NULL, OPTION_PLAIN },
    { "json", no_argument, NULL, OPTION_JSON },
    { "markdown", no_argument, NULL, OPTION_MARKDOWN },
    { "csv", required_argument, NULL, OPTION_CSV },
    { "template", no_argument, NULL, OPTION_TEMPLATE },
    { "explain", required_argument, NULL, OPTION_EXPLAIN },
    { "check", no_argument, NULL, OPTION_CHECK },
    { "head", required_argument, NULL, OPTION_HEAD },
    { "at", required_argument, NULL, OPTION_AT },
    { "precision", required_argument, NULL, OPTION_PRECISION },
    { "color", required_argument, NULL, OPTION_COLOR },
    { "colour", required_argument, NULL, OPTION_COLOR },
    { "keys", required_argument, NULL, OPTION_KEYS },
    { "screen", required_argument, NULL, OPTION_SCREEN },
    { "help-keys", optional_argument, NULL, OPTION_HELP_KEYS },
    { "stats", no_argument, NULL, OPTION_STATS },
    { "cost", no_argument, NULL, OPTION_COST },
    { "d-model", required_argument, NULL, OPTION_D_MODEL },
    { "heads", required_argument, NULL, OPTION_HEADS },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

static bool set_mode(options *o, mode m)
{
    if (o->mode != MODE_AUTO && o->mode != m)
        return false;
    o->mode = m;
    return true;
}

static mode mode_of_option(int option)
{
    switch (option) {
    case OPTION_PLAIN: return MODE_PLAIN;
    case OPTION_JSON: return MODE_JSON;
    case OPTION_MARKDOWN: return MODE_MARKDOWN;
    case OPTION_CSV: return MODE_CSV;
    case OPTION_EXPLAIN: return MODE_EXPLAIN;
    case OPTION_STATS: return MODE_STATS;
    case OPTION_COST: return MODE_COST;
    default: return MODE_CHECK;
    }
}

/* Returns -1 when parsing went well, else the exit status to leave with. */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){ .mode = MODE_AUTO, .precision = 4, .d_model = STATS_COST_D_MODEL,
                    .heads = STATS_COST_HEADS,
                    .ui = { .color = UI_COLOR_AUTO, .screen_cols = 80, .screen_rows = 24 } };
    int c;
    while ((c = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        case 'V': puts("attnstep " ATTNSTEP_VERSION); return EXIT_OK;
        case OPTION_PLAIN: case OPTION_JSON: case OPTION_MARKDOWN: case OPTION_CSV:
        case OPTION_CHECK: case OPTION_EXPLAIN: case OPTION_STATS: case OPTION_COST:
            if (!set_mode(o, mode_of_option(c)))
                return usage_error("choose one of --plain, --json, --markdown, --csv, --explain, "
                                   "--check, --stats and --cost", NULL);
            if (c == OPTION_EXPLAIN)
                o->explain = optarg;
            if (c == OPTION_CSV)
                o->csv_stage = optarg;
            break;
        case OPTION_TEMPLATE: fputs(template_lesson, stdout); return EXIT_OK;
        case OPTION_HELP_KEYS:  /* --help-keys=man writes troff for the manual page */
            ui_print_keys(stdout, optarg && strcmp(optarg, "man") == 0);
            return EXIT_OK;
        case OPTION_HEAD:
            if (!parse_int(optarg, 1, 1 << 20, &o->head))
                return usage_error("--head takes a head number from 1", optarg);
            break;
        case OPTION_AT: o->ui.at = optarg; break;
        case OPTION_PRECISION:
            if (!parse_int(optarg, 0, 17, &o->precision))
                return usage_error("--precision takes a number from 0 to 17", optarg);
            break;
        case OPTION_COLOR:
            if (!parse_color(optarg, &o->ui.color))
                return usage_error("--color takes auto, always or never", optarg);
            break;
        case OPTION_KEYS: o->ui.key_script = optarg; break;
        case OPTION_D_MODEL:
            if (!parse_int(optarg, 1, 4096, &o->d_model))
                return usage_error("--d-model takes a number from 1 to 4096", optarg);
            break;
        case OPTION_HEADS:
            if (!parse_int(optarg, 1, 4096, &o->heads))
                return usage_error("--heads takes a number from 1 to 4096", optarg);
            break;
        case OPTION_SCREEN:
            if (!parse_screen(optarg, &o->ui.screen_cols, &o->ui.screen_rows))
                return usage_error("--screen takes COLSxROWS, e.g. 80x24", optarg);
            break;
        default: return usage_error("unknown option", NULL);
        }
    }
    o->ui.head = o->head;
    o->ui.precision = o->precision;
    return -1;
}

static int check_lessons(int count, char **paths)
{
    int status = EXIT_OK;
    for (int i = 0; i < count; i++) {
        lesson l;
        lesson_diagnostics diagnostics;
        lesson_status loaded = lesson_load(paths[i], &l, &diagnostics);
        if (loaded == LESSON_OK) {
            lesson_free(&l);
            continue;
        }
        lesson_diagnostics_print(&diagnostics, stderr);
        lesson_diagnostics_free(&diagnostics);
        if (status != EXIT_NO_INPUT)
            status = loaded == LESSON_UNREADABLE ? EXIT_NO_INPUT : EXIT_DATA;
    }
    return status;
}

static int report_trace_failure(const char *path, const trace *t, const trace_failure *f)
{
    fprintf(stderr, "%s: error: %s", path, trace_status_message(f->status));
    if (f->status == TRACE_ERROR_OVERFLOW) {
        const stage_info *info = stage_get(f->stage);
        char buffer[32];
        fprintf(stderr, " in %s[%s,%s]", info->name,
                trace_axis_label(t, info->rows, f->row, buffer, sizeof buffer),
                trace_axis_label(t, info->cols, f->col, buffer, sizeof buffer));
        if (f->head > 0)
            fprintf(stderr, " of head %d", f->head);
    }
    fputc('\n', stderr);
    return f->status == TRACE_ERROR_NO_MEMORY ? EXIT_SOFTWARE : EXIT_DATA;
}

static int explain_cell(const options *o, const trace *t)
{
    trace_cell cell;
    char error[512];
    if (!trace_cell_parse(t, o->explain, o->head ? o->head : 1, &cell, error, sizeof error))
        return usage_error(error, NULL);
    int length = trace_cell_explain(t, &cell, o->precision, NULL, 0);
    char *text = malloc((size_t)length + 1);
    if (!text)
        return EXIT_SOFTWARE;
    trace_cell_explain(t, &cell, o->precision, text, (size_t)length + 1);
    puts(text);
    free(text);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
}

static int write_csv(const options *o, const lesson *l, const trace *t)
{
    stage_id stage = stage_find(o->csv_stage);
    if (stage == STAGE_COUNT || !trace_has_stage(t, stage))
        return usage_error("--csv: no such stage in this lesson", o->csv_stage);
    int head = o->head ? o->head : 1;
    if (stage_get(stage)->per_head && head > t->heads)
        return usage_error("--head: this lesson has fewer heads", NULL);
    return output_write_matrix(&output_csv, l, t, stage, head, stdout) == 0 ? EXIT_OK : EXIT_IO;
}

static int write_trace(const options *o, const lesson *l, const trace *t)
{
    if (o->mode == MODE_EXPLAIN)
        return explain_cell(o, t);
    if (o->mode == MODE_CSV)
        return write_csv(o, l, t);
    if (o->mode == MODE_STATS)
        return stats_print(t, NULL, l->title, stdout) == 0 ? EXIT_OK : EXIT_IO;
    const output_format *format = o->mode == MODE_JSON ? &output_json
                                : o->mode == MODE_MARKDOWN ? &output_markdown : &output_plain;
    return output_write(format, l, t, o->precision, stdout) == 0 ? EXIT_OK : EXIT_IO;
}

/* Loads, computes and writes one lesson non-interactively. */
static int run_batch(const options *o, const char *path)
{
    lesson l;
    lesson_diagnostics diagnostics;
    lesson_status loaded = lesson_load(path, &l, &diagnostics);
    if (loaded != LESSON_OK) {
        lesson_diagnostics_print(&diagnostics, stderr);
        lesson_diagnostics_free(&diagnostics);
        return loaded == LESSON_UNREADABLE ? EXIT_NO_INPUT : EXIT_DATA;
    }
    trace t;
    trace_failure failure;
    int status;
    if (trace_compute(&l.input, NULL, &t, &failure) != TRACE_OK) {
        /* the failure names cells by the input's labels, which outlive the failed trace */
        trace labels = { .in = &l.input, .n = l.input.n_tokens, .d_model = l.input.d_model };
        status = report_trace_failure(path, &labels, &failure);
    } else {
        status = write_trace(o, &l, &t);
        trace_free(&t);
    }
    lesson_free(&l);
    return status;
}

static bool terminal_usable(void)
{
    const char *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && term && *term
        && strcmp(term, "dumb") != 0;
}

int main(int argc, char **argv)
{
    /* UTF-8 and the user's language, but numbers always read and print with a '.' */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    int files = argc - optind;
    if (o.mode == MODE_CHECK)
        return files ? check_lessons(files, argv + optind) : usage_error("--check needs a lesson", NULL);
    if (o.mode == MODE_COST) {
        if (files)
            return usage_error("--cost makes its own sentences and takes no lesson", NULL);
        if (o.d_model % o.heads != 0)
            return usage_error("--heads must divide --d-model", NULL);
        return stats_cost(o.d_model, o.heads, NULL, stdout) == 0 ? EXIT_OK : EXIT_SOFTWARE;
    }
    if (files > 1)
        return usage_error("one lesson at a time (--check takes several)", NULL);
    if (o.mode == MODE_AUTO && (o.ui.key_script || terminal_usable())) {
        o.ui.lesson_path = files ? argv[optind] : NULL;
        return ui_run(&o.ui);
    }
    if (!files)
        return usage_error(o.mode == MODE_AUTO ? "no lesson given, and output is not a terminal "
                           "for the lesson picker" : "no lesson given", NULL);
    if (o.mode == MODE_AUTO && isatty(STDOUT_FILENO))
        fputs("attnstep: this terminal cannot run the interactive UI (TERM is unset or dumb); "
              "printing the plain trace\n", stderr);
    return run_batch(&o, argv[optind]);
}
