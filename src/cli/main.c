/* attnstep's command line: one table of options, from which getopt's list, the --help text (written
 * by help.c) and the dispatch are all made; it loads the lesson, computes the trace once and hands
 * it on. */
#define _XOPEN_SOURCE 700  /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exit_status.h"
#include "help.h"
#include "lesson.h"
#include "heat.h"
#include "lesson_edit.h"
#include "output.h"
#include "output_svg.h"
#include "stats.h"
#include "template.h"
#include "text.h"
#include "trace.h"
#include "ui.h"
#include "ui_progress.h"
#include "ui_reader.h"

#define ATTNSTEP_VERSION "0.1.0"

typedef struct options options;

enum { MAX_EDITS = 256 };   /* --set given at most this often */

/* What a mode does: with one lesson's trace, with the lesson files as given, or at once. */
typedef int trace_mode(const options *o, const lesson *l, const trace *t);
typedef int files_mode(const options *o, int count, char **paths);

typedef struct {
    trace_mode *with_trace;        /* modes that read one lesson's trace */
    files_mode *with_files;        /* --check (many lessons), --cost (none), the UI (one or none) */
    const output_format *format;   /* what write_format writes, for the whole-trace outputs */
    unsigned bit;                  /* the mode's bit in option_row.used_by */
    const char *name;              /* as messages name it: "--json", "the UI" */
} mode;

/* The bits of option_row.used_by: which modes an option changes anything in. */
enum {
    USES_PLAIN = 1u << 0, USES_JSON = 1u << 1, USES_MARKDOWN = 1u << 2, USES_CSV = 1u << 3,
    USES_EXPLAIN = 1u << 4, USES_STATS = 1u << 5, USES_CHECK = 1u << 6, USES_COST = 1u << 7,
    USES_UI = 1u << 8, USES_RESET = 1u << 9, USES_SVG = 1u << 10,
    USES_READER = 1u << 11, USES_EVERY_MODE = (1u << 12) - 1,
};

struct options {
    const mode *mode;      /* NULL until an option chooses one: the UI or the plain trace */
    const char *explain;   /* the cell of --explain */
    const char *csv_stage; /* the stage of --csv */
    const char *svg_stage; /* the stage of --svg */
    const char *svg_dir;   /* --svg-dir: the folder of every step's figure */
    int ramp;              /* --ramp: the figures' palette (heat_palette) */
    int head;              /* --head, 0 when not given */
    bool full;             /* --full: every term of --explain's sums */
    bool strict;           /* --strict: --check fails on warnings too */
    bool worksheet;        /* --worksheet: --markdown's questions without answers, then a key */
    bool decode;           /* --decode: --cost of generating one token, with a KV cache or not */
    int precision;
    bool precision_given;  /* --csv is exact unless --precision is given */
    int d_model, heads;    /* the shape of --cost */
    double timing_seconds; /* how long --stats and --cost measure each time, at least */
    unsigned long long given;  /* bit i: option_table[i] was on the command line */
    char writing[40];      /* what goes to stdout, for the message when it cannot be written */
    ui_options ui;
    char lesson_folders[3 * PATH_MAX + 16];  /* the picker's folders without ATTNSTEP_LESSONS */
    char state_dir[PATH_MAX];                /* where progress is kept (ui.state_dir) */
    const char *edits[MAX_EDITS];            /* --set, in order (ui.load.edits) */
};

/* The message and detail may echo an argument or a lesson's tokens: they go out escaped. */
static int usage_error(const char *message, const char *detail)
{
    fputs("attnstep: ", stderr);
    text_write_escaped(stderr, message, false);
    if (detail) {
        fputs(": ", stderr);
        text_write_escaped(stderr, detail, false);
    }
    fputs("\nTry 'attnstep --help' for more information.\n", stderr);
    return EXIT_STATUS_USAGE;
}

/* ---- the modes ---- */

/* Says that memory ran out while writing; a failed write (EXIT_STATUS_IO) is said once, by
 * close_stdout, whichever mode it was. */
static int written(int status)
{
    if (status == EXIT_STATUS_SOFTWARE)
        fprintf(stderr, "attnstep: out of memory while writing the output\n");
    return status;
}

/* What a stats function's -1 meant: a failed write shows on the stream, else memory ran out. */
static int stats_status(int result)
{
    if (result == 0)
        return EXIT_STATUS_OK;
    return written(ferror(stdout) ? EXIT_STATUS_IO : EXIT_STATUS_SOFTWARE);
}

static int write_figures(const options *o, const lesson *l, const trace *t);

/* --plain, --json, --markdown: the whole trace in the mode's format; --markdown --svg-dir
 * writes the figures first and links them. */
static int write_format(const options *o, const lesson *l, const trace *t)
{
    const output_format *format = o->worksheet ? &output_worksheet : o->mode->format;
    if (o->svg_dir && o->worksheet)   /* a figure shows the numbers a question asks for */
        return usage_error("--svg-dir would give a worksheet's answers away: leave out one of "
                           "them", NULL);
    if (o->svg_dir) {
        int status = write_figures(o, l, t);
        if (status != EXIT_STATUS_OK)
            return status;
    }
    return written(output_write_figured(format, l, t, o->precision, o->svg_dir, stdout));
}

/* The stage and head of --csv and --svg, or the usage error's status (else -1). */
static int matrix_named(const options *o, const trace *t, const char *option, const char *name,
                        stage_id *stage, int *head)
{
    char message[96];
    *stage = trace_find_stage(t->in, name);
    if (*stage == STAGE_COUNT) {   /* the words of --explain and claims, a near name offered */
        char why[1024];
        int length = snprintf(why, sizeof why, "%s: ", option);
        trace_stage_unknown(t, name, why + length, sizeof why - (size_t)length);
        return usage_error(why, NULL);
    }
    if (!trace_has_stage(t, *stage)) {
        char why[160];   /* the words the loader and claims use */
        int length = snprintf(why, sizeof why, "%s: ", option);
        trace_stage_absent(*stage, trace_stage_missing(t, *stage), why + length,
                           sizeof why - (size_t)length);
        return usage_error(why, NULL);
    }
    *head = o->head ? o->head : 1;
    if (stage_get(*stage)->per_head && *head > t->heads) {
        snprintf(message, sizeof message, "head %d does not exist: this lesson has %d head%s",
                 *head, t->heads, t->heads == 1 ? "" : "s");
        return usage_error(message, NULL);
    }
    if (!stage_get(*stage)->per_head)
        *head = 1;
    return -1;
}

/* --svg-dir DIR: every step's figure and index.html; a folder or file that cannot be written
 * is named. */
static int write_figures(const options *o, const lesson *l, const trace *t)
{
    char failed[4200];
    int error = 0;
    errno = 0;
    exit_status status = output_svg_dir(l, t, &(output_svg_options){ o->precision, o->ramp },
                                        o->svg_dir, failed, sizeof failed);
    error = errno;
    if (status == EXIT_STATUS_IO) {
        fputs("attnstep: --svg-dir: cannot write ", stderr);
        text_write_escaped(stderr, failed, false);
        fprintf(stderr, "%s%s\n", error ? ": " : "", error ? strerror(error) : "");
    }
    return written(status);
}

/* --svg N: the figure of step N of the walk (from 1, as --svg-dir numbers its files), the rows
 * and columns it shows: at a decoding step what decoding computes for its token. */
static int write_svg_step(const options *o, const lesson *l, const trace *t, long number)
{
    walk w;
    if (!lesson_walk(l, t, &w))
        return written(EXIT_STATUS_SOFTWARE);
    if (number < 1 || number > w.count) {
        char message[96];
        snprintf(message, sizeof message, "--svg: step %ld does not exist: this lesson has "
                 "steps 1 to %d", number, w.count);
        walk_free(&w);
        return usage_error(message, NULL);
    }
    exit_status status = output_svg_write(l, t, &w.steps[number - 1],
                                          &(output_svg_options){ o->precision, o->ramp }, stdout);
    walk_free(&w);
    return written(status);
}

/* --svg STAGE: one figure on standard output (the whole matrix, as --csv); --svg N: step N's. */
static int write_svg(const options *o, const lesson *l, const trace *t)
{
    if (o->svg_stage == NULL)
        return write_figures(o, l, t);
    if (o->svg_dir)
        return usage_error("--svg writes one figure to standard output: leave out --svg-dir, "
                           "which writes every step's", NULL);
    char *end;
    long number = strtol(o->svg_stage, &end, 10);
    if (end != o->svg_stage && *end == '\0')
        return write_svg_step(o, l, t, number);
    stage_id stage;
    int head, status = matrix_named(o, t, "--svg", o->svg_stage, &stage, &head);
    if (status >= 0)
        return status;
    walk_step step = { stage, head, WALK_WHOLE, -1, 0 };
    return written(output_svg_write(l, t, &step, &(output_svg_options){ o->precision, o->ramp },
                                    stdout));
}

static int write_csv(const options *o, const lesson *l, const trace *t)
{
    stage_id stage;
    int head, status = matrix_named(o, t, "--csv", o->csv_stage, &stage, &head);
    if (status >= 0)
        return status;
    /* exact unless --precision asks for fewer digits */
    int precision = o->precision_given ? o->precision : -1;
    return written(output_write_matrix_at(o->mode->format, l, t, stage, head, precision, stdout));
}

/* --reader: the lesson as plain lines, commands from standard input (a prompt at a terminal). */
static int run_reader(const options *o, const lesson *l, const trace *t)
{
    const char *prompt = isatty(STDIN_FILENO) ? UI_READER_PROMPT : NULL;
    return written(ui_reader_run(l, t, o->precision, stdin, stdout, prompt));
}

static int write_explanation(const options *o, const lesson *l, const trace *t)
{
    (void)l;
    trace_cell cell;
    char error[512];
    if (!trace_cell_parse(t, o->explain, o->head ? o->head : 1, &cell, error, sizeof error))
        return usage_error(error, NULL);
    int (*explain)(const trace *, const trace_cell *, int, char *, size_t) =
        o->full ? trace_cell_explain_full : trace_cell_explain;
    int length = explain(t, &cell, o->precision, NULL, 0);
    char *text = malloc((size_t)length + 1);
    if (!text)
        return written(EXIT_STATUS_SOFTWARE);
    explain(t, &cell, o->precision, text, (size_t)length + 1);
    /* the explanation names the cell by its tokens, which are lesson text */
    text_write_escaped(stdout, text, true);
    putchar('\n');
    free(text);
    return EXIT_STATUS_OK;   /* close_stdout finds a failed write */
}

static int write_stats(const options *o, const lesson *l, const trace *t)
{
    int length = text_escape(l->title, NULL, 0);
    char *title = malloc((size_t)length + 1);  /* the title is lesson text: escaped */
    if (!title)
        return written(EXIT_STATUS_SOFTWARE);
    text_escape(l->title, title, (size_t)length + 1);
    int printed = stats_print(t, &o->ui.compute, o->timing_seconds, title, stdout);
    free(title);
    return stats_status(printed);
}

/* The exit status of a lesson that did not load, its diagnostics printed (a lesson without
 * them ran out of memory before it could say so: that is said). */
static int load_failure(const char *path, lesson_status loaded, lesson_diagnostics *diagnostics)
{
    lesson_diagnostics_print(diagnostics, stderr);
    if (diagnostics->count == 0) {
        text_write_escaped(stderr, path, false);
        fputs(": error: not enough memory to load this lesson\n", stderr);
    }
    lesson_diagnostics_free(diagnostics);
    return loaded == LESSON_UNREADABLE ? EXIT_STATUS_NO_INPUT
         : loaded == LESSON_NO_MEMORY ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_DATA;
}

static int load_traced(const options *o, const char *path, bool checking, lesson *l, trace *t);

/* Each lesson loaded, computed and checked against its numbers (lesson_check), with warnings. */
static int check_lessons(const options *o, int count, char **paths)
{
    if (count == 0)
        return usage_error("--check needs a lesson", NULL);
    int status = EXIT_STATUS_OK;
    for (int i = 0; i < count; i++) {
        lesson l;
        trace t;
        int one = load_traced(o, paths[i], true, &l, &t);
        if (one == EXIT_STATUS_OK) {
            trace_free(&t);
            lesson_free(&l);
        } else if (status != EXIT_STATUS_SOFTWARE
                   && (status == EXIT_STATUS_OK || one == EXIT_STATUS_NO_INPUT
                       || one == EXIT_STATUS_SOFTWARE)) {
            /* the most serious status wins: no memory, then an unreadable file, then errors */
            status = one;
        }
    }
    return status;
}

static int show_cost(const options *o, int count, char **paths)
{
    (void)paths;
    if (count)
        return usage_error("--cost makes its own sentences and takes no lesson", NULL);
    if (o->d_model % o->heads != 0)
        return usage_error("--heads must divide --d-model", NULL);
    int (*cost)(int, int, const trace_options *, double, FILE *) = o->decode ? stats_cost_decode
                                                                              : stats_cost;
    return stats_status(cost(o->d_model, o->heads, &o->ui.compute, o->timing_seconds, stdout));
}

/* --reset [LESSON...]: forgets the progress kept of every lesson, or of those given. */
static int reset_progress(const options *o, int count, char **paths)
{
    const char *dir = o->ui.state_dir;
    char error[PATH_MAX + 128];
    if (!dir) {
        fprintf(stderr, "attnstep: --reset: neither XDG_STATE_HOME nor HOME names a folder, so "
                "no progress is kept\n");
        return EXIT_STATUS_USAGE;
    }
    int status = EXIT_STATUS_OK;
    for (int i = 0; i < (count ? count : 1); i++) {
        const char *lesson_path = count ? paths[i] : NULL;
        int removed = ui_progress_reset(dir, lesson_path, error, sizeof error);
        if (removed < 0) {   /* the error names the state folder: the environment's text */
            fputs("attnstep: --reset: ", stderr);
            text_write_escaped(stderr, error, false);
            fputc('\n', stderr);
            return EXIT_STATUS_IO;
        }
        if (lesson_path && removed == 0 && access(lesson_path, F_OK) != 0) {
            fputs("attnstep: --reset: ", stderr);
            text_write_escaped(stderr, lesson_path, false);
            fputs(": no such lesson, and no progress kept for it\n", stderr);
            status = EXIT_STATUS_NO_INPUT;
        } else if (lesson_path) {
            text_write_escaped(stdout, lesson_path, false);
            printf(": %s\n", removed ? "progress cleared" : "no progress was kept");
        } else {
            printf("progress cleared: %d lesson%s (", removed, removed == 1 ? "" : "s");
            text_write_escaped(stdout, dir, false);   /* XDG_STATE_HOME or HOME, as given */
            fputs(")\n", stdout);
        }
    }
    return status;
}

static bool ui_usable(const options *o, char *why, size_t size);

/* --replay plays on the terminal, or headless (its file is the key script too) without one;
 * --keys already names the keys, so the two are refused together. */
static bool place_replay(const options *o, ui_options *ui)
{
    if (!ui->replay) return true;
    if (ui->key_script) {
        usage_error("--replay and --keys both give the keys", "choose one");
        return false;
    }
    char why[128];
    if (!ui_usable(o, why, sizeof why)) ui->key_script = ui->replay;
    return true;
}

/* A class (--lead, --follow) is one lesson on one screen; its other options need it. */
static bool class_allowed(const ui_options *ui, int count)
{
    const ui_class_options *c = &ui->class;
    const char *problem = c->lead && c->follow ? "--lead and --follow: choose one"
        : (c->lead || c->follow) && count != 1 ? "--lead and --follow take one lesson"
        : (c->lead || c->follow) && ui->compare_path ? "a class shows one lesson, not --compare"
        : c->listen && !c->lead ? "--listen goes with --lead"
        : c->name && !c->follow ? "--name goes with --follow"
        : c->key && !c->follow ? "--key goes with --follow"
        : (c->per_address || c->encrypt) && !c->lead ? "--per-address and --encrypt go with --lead"
        : c->code && !c->lead && !c->follow ? "--code goes with --lead or --follow" : NULL;
    if (problem) usage_error(problem, NULL);
    return problem == NULL;
}

static int run_ui(const options *o, int count, char **paths)
{
    if (o->ui.train_step >= 0)   /* a lesson screen moves along training with < and > */
        return usage_error("--train-step goes with --compare",
                           "in the lesson itself, < and > move along the training steps");
    ui_options ui = o->ui;
    ui.lesson_path = count ? paths[0] : NULL;
    if (!place_replay(o, &ui) || !class_allowed(&ui, count)) return EXIT_STATUS_USAGE;
    return ui_run(&ui);
}

/* --compare A B: the UI with two lessons side by side, A leading; it has no text form, so
 * without a terminal (or --keys) it is refused rather than drawn into a file. */
static int run_compare(const options *o, int count, char **paths)
{
    char *self[2];
    if (count == 1 && (o->ui.load.n_edits > 0 || o->ui.train_step >= 0)) {
        /* a lesson against its edited or trained self */
        self[0] = self[1] = paths[0];
        paths = self;
        count = 2;
    }
    if (count != 2)
        return usage_error("--compare takes two lessons", count < 2 ? "too few" : "too many");
    char why[128];
    if (!o->ui.key_script && !o->ui.replay && !ui_usable(o, why, sizeof why))
        return usage_error("--compare shows the interactive UI and needs a terminal (or --keys)",
                           why);
    ui_options ui = o->ui;
    ui.compare_path = paths[1];
    if (!place_replay(o, &ui) || !class_allowed(&ui, 1)) return EXIT_STATUS_USAGE;
    ui.lesson_path = paths[0];
    ui.compare_path = paths[1];
    return ui_run(&ui);
}

static const mode mode_plain = { write_format, NULL, &output_plain, USES_PLAIN, "--plain" };
static const mode mode_json = { write_format, NULL, &output_json, USES_JSON, "--json" };
static const mode mode_markdown = { write_format, NULL, &output_markdown, USES_MARKDOWN,
                                    "--markdown" };
static const mode mode_csv = { write_csv, NULL, &output_csv, USES_CSV, "--csv" };
static const mode mode_svg = { write_svg, NULL, NULL, USES_SVG, "--svg" };
static const mode mode_reader = { run_reader, NULL, NULL, USES_READER, "--reader" };
static const mode mode_explain = { write_explanation, NULL, NULL, USES_EXPLAIN, "--explain" };
static const mode mode_stats = { write_stats, NULL, NULL, USES_STATS, "--stats" };
static const mode mode_check = { NULL, check_lessons, NULL, USES_CHECK, "--check" };
static const mode mode_cost = { NULL, show_cost, NULL, USES_COST, "--cost" };
static const mode mode_ui = { NULL, run_ui, NULL, USES_UI, "the interactive UI" };
/* the comparison is the UI: the UI's options apply to it */
static const mode mode_compare = { NULL, run_compare, NULL, USES_UI, "--compare" };
static const mode mode_reset = { NULL, reset_progress, NULL, USES_RESET, "--reset" };

/* ---- the settings ---- */

/* Parses a whole decimal number in [low, high]; false for anything else. */
static bool parse_int(const char *text, int low, int high, int *value)
{
    char *end;
    errno = 0;
    long parsed = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno || parsed < low || parsed > high)
        return false;
    *value = (int)parsed;
    return true;
}

static bool set_head(options *o, const char *arg) { return parse_int(arg, 1, 1 << 20, &o->head); }
static bool set_precision(options *o, const char *arg)
{
    o->precision_given = true;
    return parse_int(arg, 0, 17, &o->precision);
}
static bool set_d_model(options *o, const char *arg)
{
    return parse_int(arg, 1, 4096, &o->d_model);
}
static bool set_heads(options *o, const char *arg) { return parse_int(arg, 1, 4096, &o->heads); }
static bool set_at(options *o, const char *arg) { o->ui.at = arg; return true; }
static bool set_train_step(options *o, const char *arg)
{
    return parse_int(arg, 0, TRAIN_MAX_STEPS, &o->ui.train_step);
}
static bool set_keys(options *o, const char *arg) { o->ui.key_script = arg; return true; }
static bool set_replay(options *o, const char *arg) { o->ui.replay = arg; return true; }
static bool set_record(options *o, const char *arg) { o->ui.record = arg; return true; }
static bool set_lead(options *o, const char *arg) { (void)arg; o->ui.class.lead = true; return true; }
static bool set_listen(options *o, const char *arg) { o->ui.class.listen = arg; return true; }
static bool set_follow(options *o, const char *arg) { o->ui.class.follow = arg; return true; }
static bool set_code(options *o, const char *arg) { o->ui.class.code = arg; return true; }
static bool set_name(options *o, const char *arg) { o->ui.class.name = arg; return true; }
static bool set_key(options *o, const char *arg) { o->ui.class.key = arg; return true; }
static bool set_encrypt(options *o, const char *arg) { (void)arg; o->ui.class.encrypt = true; return true; }
static bool set_per_address(options *o, const char *arg)
{
    return parse_int(arg, 1, 1000, &o->ui.class.per_address);
}
static bool set_present(options *o, const char *arg) { (void)arg; o->ui.present = true; return true; }
static bool set_explain(options *o, const char *arg) { o->explain = arg; return true; }
static bool set_csv(options *o, const char *arg) { o->csv_stage = arg; return true; }
static bool set_svg(options *o, const char *arg) { o->svg_stage = arg; return true; }
static bool set_svg_dir(options *o, const char *arg) { o->svg_dir = arg; return true; }
static bool set_ramp(options *o, const char *arg)
{
    o->ramp = heat_palette_find(arg);
    return o->ramp >= 0;
}
static bool set_full(options *o, const char *arg) { (void)arg; o->full = true; return true; }
static bool set_strict(options *o, const char *arg) { (void)arg; o->strict = true; return true; }
static bool set_decode(options *o, const char *arg) { (void)arg; o->decode = true; return true; }
/* --set NAME[ROW,COL]=VALUE: kept as written; the lesson it names checks it (lesson_edit.h). */
static bool set_edit(options *o, const char *arg)
{
    if (o->ui.load.n_edits >= MAX_EDITS)
        return false;
    o->edits[o->ui.load.n_edits++] = arg;
    o->ui.load.edits = o->edits;
    return true;
}
static bool set_worksheet(options *o, const char *arg)
{
    (void)arg;
    o->worksheet = true;
    return true;
}

/* A load option: every mode loads through load_traced or the UI, which both pass it down. */
static bool set_allow_paths(options *o, const char *arg)
{
    (void)arg;
    o->ui.load.allow_paths = true;
    return true;
}

static bool set_color(options *o, const char *arg)
{
    static const char *const names[] = {
        [UI_COLOR_AUTO] = "auto", [UI_COLOR_ALWAYS] = "always", [UI_COLOR_NEVER] = "never",
    };
    for (int i = 0; i < 3; i++)
        if (strcmp(arg, names[i]) == 0) {
            o->ui.color = (ui_color)i;
            return true;
        }
    return false;
}

static bool set_screen(options *o, const char *arg)
{
    char extra;
    int *cols = &o->ui.screen_cols, *rows = &o->ui.screen_rows;
    return sscanf(arg, "%dx%d%c", cols, rows, &extra) == 2 && *cols >= 1 && *cols <= 1000
        && *rows >= 1 && *rows <= 1000;
}

/* ---- what prints and leaves at once ---- */

static void print_help(const char *arg);  /* after the table, which it hands to help.c */
static void print_version(const char *arg) { (void)arg; puts("attnstep " ATTNSTEP_VERSION); }
/* Line by line: a write that fails leaves the lines after it buffered, so that close_stdout's
 * second flush can say why (one fputs longer than stdio's buffer would leave nothing to flush). */
static void print_template(const char *arg)
{
    (void)arg;
    for (const char *line = template_lesson; *line;) {
        size_t length = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
        fwrite(line, 1, length, stdout);
        line += length;
    }
}

/* ---- the one table of options ---- */

/* Its rows look alike by design (duplicates reports two of them): each row is data, not logic. */
typedef struct {
    const char *name;
    int short_name;                          /* 'h', 'V', or 0 */
    int has_arg;                             /* getopt's no_, required_ or optional_argument */
    const char *usage;                       /* "--csv STAGE": how --help shows it, or NULL */
    const char *help;                        /* its lines in --help ('\n' between lines) */
    const mode *mode;                        /* the mode it chooses, or NULL */
    bool (*set)(options *o, const char *arg);  /* the setting it parses, or NULL */
    const char *refusal;                     /* set's message for a bad argument */
    void (*print)(const char *arg);          /* what it prints before leaving, or NULL */
    unsigned used_by;                        /* USES_ bits of the modes it changes anything in */
} option_row;

static const option_row option_table[] = {
    { "plain", 0, no_argument, NULL,
      "every stage as a labelled text table, with the narration", &mode_plain, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "json", 0, no_argument, NULL,
      "every intermediate as JSON, numbers bit-exact", &mode_json, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "markdown", 0, no_argument, NULL,
      "a handout: narration, every stage as a Markdown table", &mode_markdown, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "worksheet", 0, no_argument, NULL,
      "with --markdown: the questions without their answers or the\n"
      "tables that give them away, then an answer key", NULL, set_worksheet, NULL, NULL,
      USES_MARKDOWN },
    { "csv", 0, required_argument, "--csv STAGE",
      "one stage's matrix as CSV (with --head for per-head stages)", &mode_csv, set_csv, NULL,
      NULL, USES_EVERY_MODE },
    { "svg", 0, required_argument, "--svg STAGE|N",
      "one stage's matrix as an SVG heatmap (with --head, --precision\n"
      "and --ramp): labels, numbers, legend, formula and title; N: step N\n"
      "of the walk as --svg-dir draws it (a decoding step: its token's rows)", &mode_svg,
      set_svg, NULL,
      NULL, USES_EVERY_MODE },
    { "svg-dir", 0, required_argument, "--svg-dir DIR",
      "an SVG figure of every step into DIR, with an index.html in\n"
      "order with the narration; with --markdown, linked from the handout", NULL,
      set_svg_dir, NULL, NULL, USES_SVG | USES_MARKDOWN },
    { "ramp", 0, required_argument, "--ramp NAME",
      "the figures' colours, as the UI's c key offers them: viridis\n"
      "(default, blue-orange for signed values) or inferno (purple-green)", NULL, set_ramp,
      "--ramp takes viridis or inferno", NULL, USES_SVG },
    { "reader", 0, no_argument, "--reader LESSON",
      "the lesson as plain lines for screen readers and braille: one\n"
      "command a line on standard input (next, step N, cell NAME, why,\n"
      "answer X, help...)", &mode_reader, NULL, NULL, NULL, USES_EVERY_MODE },
    { "explain", 0, required_argument, "--explain 'STAGE[ROW,COL]'",
      "the arithmetic of one cell; ROW and COL are token names or\n"
      "0-based indices, e.g. --explain 'weights[cat,sat]'", &mode_explain, set_explain, NULL,
      NULL, USES_EVERY_MODE },
    { "full", 0, no_argument, NULL,
      "with --explain: every term of a long sum, not only the largest", NULL, set_full, NULL,
      NULL, USES_EXPLAIN },
    { "check", 0, no_argument, "--check LESSON...",
      "validate lessons and prove their answers, expect: claims and\n"
      "live numbers; print every problem found (warnings only: exit 0;\n"
      "66 if any is unreadable, else 65 if any has errors)", &mode_check, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "strict", 0, no_argument, NULL,
      "with --check: warnings fail too (exit 65)", NULL, set_strict, NULL, NULL, USES_CHECK },
    { "allow-paths", 0, no_argument, NULL,
      "let a lesson's {file: ...} read files outside its folder\n"
      "(absolute paths, '..', links leading out)", NULL, set_allow_paths, NULL, NULL,
      USES_EVERY_MODE & ~(USES_COST | USES_RESET) },
    { "set", 0, required_argument, "--set 'NAME[ROW,COL]=VALUE'",
      "what if? change one number of the lesson before computing, as\n"
      "if its file said so: embeddings[TOKEN,COL], source_embeddings,\n"
      "target, W_Q...W_O[ROW,COL], b_Q...b_O[COL] (0-based; repeatable)",
      NULL, set_edit, "--set is given more than 256 times", NULL,
      USES_EVERY_MODE & ~(USES_COST | USES_RESET) },
    { "template", 0, no_argument, NULL,
      "print a commented starter lesson", NULL, NULL, NULL, print_template, USES_EVERY_MODE },
    { "stats", 0, no_argument, "--stats LESSON",
      "what each stage costs: multiplications, additions, memory,\n"
      "measured time, then the totals and the peak memory", &mode_stats, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "cost", 0, no_argument, NULL,
      "how the cost grows with the sentence: n = 16, 32, … 2048\n"
      "random tokens, measured, with a plot", &mode_cost, NULL, NULL, NULL, USES_EVERY_MODE },
    { "decode", 0, no_argument, NULL,
      "with --cost: generating one token with a KV cache (linear in n)\n"
      "against recomputing its prefix (quadratic), n = 16 … 1024", NULL, set_decode, NULL,
      NULL, USES_COST },
    { "d-model", 0, required_argument, "--d-model D, --heads H",
      "the shape --cost uses (default 64 and 4)", NULL, set_d_model,
      "--d-model takes a number from 1 to 4096", NULL, USES_COST },
    { "heads", 0, required_argument, "",
      NULL, NULL, set_heads, "--heads takes a number from 1 to 4096", NULL, USES_COST },
    { "head", 0, required_argument, "--head H",
      "the head for --explain, --csv, --svg and --at (from 1; default 1)", NULL, set_head,
      "--head takes a head number from 1", NULL, USES_EXPLAIN | USES_CSV | USES_SVG | USES_UI },
    { "at", 0, required_argument, "--at 'STAGE[ROW,COL]'",
      "open the UI at that cell (the script's step on it, else its stage)", NULL, set_at,
      NULL, NULL, USES_UI },
    { "precision", 0, required_argument, "--precision N",
      "decimals in --plain, --markdown, --explain, --svg, --reader\n"
      "and the UI (0-17, default 4); --json writes every digit, and\n"
      "--csv unless --precision is given", NULL, set_precision,
      "--precision takes a number from 0 to 17", NULL,
      USES_PLAIN | USES_MARKDOWN | USES_EXPLAIN | USES_CSV | USES_SVG | USES_READER | USES_UI },
    { "color", 0, required_argument, "--color=WHEN, --colour=WHEN",
      "colours in the UI: auto (default), always, never", NULL, set_color,
      "--color takes auto, always or never", NULL, USES_UI },
    { "colour", 0, required_argument, "", NULL, NULL, set_color,
      "--colour takes auto, always or never", NULL, USES_UI },
    { "present", 0, no_argument, "--present",
      "the UI for a projector: no step list, a larger matrix, the\n"
      "most decimals that fit (P switches it in the UI)", NULL, set_present, NULL, NULL,
      USES_UI },
    { "compare", 0, no_argument, "--compare A B",
      "the UI with two lessons side by side: the same step of both,\n"
      "moving together, the cells that differ marked", &mode_compare, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "train-step", 0, required_argument, "--train-step N",
      "with --compare: B at its weights after N training updates\n"
      "(0 to its train: steps); with one lesson, it against itself:\n"
      "step 0 beside step N", NULL, set_train_step,
      "--train-step takes a whole number from 0 to 100000", NULL, USES_UI },
    { "reset", 0, no_argument, "--reset [LESSON...]",
      "forget the progress the UI kept (answers, score, the step\n"
      "left): of every lesson, or of the lessons given", &mode_reset, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "keys", 0, required_argument, "--keys FILE",
      "headless UI: read keys from FILE, dump screens as text", NULL, set_keys, NULL, NULL,
      USES_UI },
    { "record", 0, required_argument, "--record FILE",
      "write the keys of this run to FILE as a key script with the\n"
      "time between them, for --replay", NULL, set_record, NULL, NULL, USES_UI },
    { "replay", 0, required_argument, "--replay FILE",
      "play a recording (--record) at its pace: space pauses, + and -\n"
      "change the speed, q hands over", NULL, set_replay, NULL, NULL, USES_UI },
    { "lead", 0, no_argument, "--lead LESSON",
      "teach a class: print a class code and a port, and send where\n"
      "you are in the lesson to every student who follows", NULL, set_lead, NULL, NULL, USES_UI },
    { "listen", 0, required_argument, "--listen ADDR:PORT",
      "with --lead: where to listen (default 127.0.0.1:7340; port 0:\n"
      "any free one)", NULL, set_listen, NULL, NULL, USES_UI },
    { "follow", 0, required_argument, "--follow HOST:PORT LESSON",
      "follow a class: show the leader's step on your own screen\n"
      "(any key that moves you puts you on your own; f follows again)", NULL, set_follow,
      NULL, NULL, USES_UI },
    { "code", 0, required_argument, "--code CODE",
      "the class code (16 hex digits): a follower's, or a leader's\n"
      "to start again with the same class", NULL, set_code, NULL, NULL, USES_UI },
    { "name", 0, required_argument, "--name NAME",
      "with --follow: the name the leader sees (default: student)", NULL, set_name, NULL,
      NULL, USES_UI },
    { "key", 0, required_argument, "--key KEY",
      "with --follow: the leader's key (64 hex digits, as it printed\n"
      "it), needed for a leader on another machine: the class is\n"
      "encrypted, and only that leader is heard", NULL, set_key, NULL, NULL, USES_UI },
    { "per-address", 0, required_argument, "--per-address N",
      "with --lead: followers admitted from one address (default 4)", NULL,
      set_per_address, "--per-address takes a whole number from 1 to 1000", NULL, USES_UI },
    { "encrypt", 0, no_argument, NULL,
      "with --lead: encrypt on loopback too (any other address always is)", NULL,
      set_encrypt, NULL, NULL, USES_UI },
    { "screen", 0, required_argument, "--screen COLSxROWS",
      "headless UI screen size (default 80x24)", NULL, set_screen,
      "--screen takes COLSxROWS, e.g. 80x24", NULL, USES_UI },
    { "help-keys", 0, optional_argument, NULL,
      "list the keys of the interactive UI", NULL, NULL, NULL, help_print_keys, USES_EVERY_MODE },
    { "help", 'h', optional_argument, "-h, --help", "show this help", NULL, NULL, NULL,
      print_help, USES_EVERY_MODE },
    { "version", 'V', no_argument, "-V, --version", "show the version", NULL, NULL, NULL,
      print_version, USES_EVERY_MODE },
};
enum { OPTION_COUNT = (int)(sizeof option_table / sizeof option_table[0]) };
_Static_assert(OPTION_COUNT <= 64, "options.given has one bit per option");

/* --help, and with --help=man the manual page's OPTIONS, ENVIRONMENT and EXIT STATUS in troff:
 * help.c writes them from what the table says of each option. */
static void print_help(const char *arg)
{
    help_option rows[OPTION_COUNT];
    for (int i = 0; i < OPTION_COUNT; i++)
        rows[i] = (help_option){ option_table[i].name, option_table[i].usage, option_table[i].help };
    help_print(rows, OPTION_COUNT, arg);
}

/* "choose one of --plain, --json, … and --cost": every option of the table that picks a mode. */
static const char *one_mode_only(char *text, size_t size)
{
    int count = 0, written_count = 0;
    for (int i = 0; i < OPTION_COUNT; i++)
        count += option_table[i].mode != NULL;
    size_t used = (size_t)snprintf(text, size, "choose one of");
    for (int i = 0; i < OPTION_COUNT && used < size; i++)
        if (option_table[i].mode) {
            written_count++;
            used += (size_t)snprintf(text + used, size - used, "%s--%s",
                                     written_count == 1 ? " " : written_count == count ? " and "
                                                                                       : ", ",
                                     option_table[i].name);
        }
    return text;
}

/* An option the chosen mode does nothing with is a mistake to say, not to pass over: the user
 * expected it to change something. The plain trace printed because the UI cannot run accepts
 * the UI's options too. Returns -1, or the usage error's status. */
static int refuse_ignored(const options *o, bool fallback)
{
    unsigned modes = o->mode->bit | (fallback ? USES_UI : 0);
    for (int i = 0; i < OPTION_COUNT; i++) {
        unsigned used_by = option_table[i].used_by;
        if (!(o->given >> i & 1) || (used_by & modes))
            continue;
        char message[128];
        snprintf(message, sizeof message, "--%s does nothing with %s", option_table[i].name,
                 o->mode->name);
        return usage_error(message, NULL);
    }
    return -1;
}

/* Returns -1 when parsing went well, else the exit status to leave with. */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){ .precision = 4, .d_model = STATS_COST_D_MODEL, .heads = STATS_COST_HEADS,
                    .timing_seconds = STATS_MIN_SECONDS,
                    .ui = { .color = UI_COLOR_AUTO, .screen_cols = 80, .screen_rows = 24,
                            .train_step = -1 } };
    struct option long_options[OPTION_COUNT + 1];
    for (int i = 0; i < OPTION_COUNT; i++)
        long_options[i] = (struct option){ option_table[i].name, option_table[i].has_arg, NULL, i };
    long_options[OPTION_COUNT] = (struct option){ NULL, 0, NULL, 0 };
    int c;
    while ((c = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
        for (int i = 0; i < OPTION_COUNT; i++)
            if (option_table[i].short_name && option_table[i].short_name == c)
                c = i;
        if (c < 0 || c >= OPTION_COUNT)
            return usage_error("unknown option", NULL);
        const option_row *row = &option_table[c];
        o->given |= 1ull << c;
        if (row->print || row->mode)
            snprintf(o->writing, sizeof o->writing, "the output of --%s", row->name);
        if (row->print) {
            row->print(optarg);
            return EXIT_STATUS_OK;
        }
        char message[256];
        if (row->mode && o->mode && o->mode != row->mode)
            return usage_error(one_mode_only(message, sizeof message), NULL);
        if (row->mode)
            o->mode = row->mode;
        if (row->set && !row->set(o, optarg))
            return usage_error(row->refusal, optarg);
    }
    o->ui.head = o->head;
    o->ui.precision = o->precision;
    return -1;
}

/* ---- one lesson, computed once ---- */

static int report_trace_failure(const char *path, const trace *t, const trace_failure *f)
{
    text_write_escaped(stderr, path, false);
    fprintf(stderr, ": error: %s", trace_status_message(f->status));
    if (f->status == TRACE_ERROR_OVERFLOW) {
        const stage_info *info = stage_get(f->stage);
        char row[32], col[32];
        fprintf(stderr, " in %s[", info->name);
        text_write_escaped(stderr, trace_axis_label(t, info->rows, f->row, row, sizeof row), false);
        fputc(',', stderr);
        text_write_escaped(stderr, trace_axis_label(t, info->cols, f->col, col, sizeof col), false);
        fputc(']', stderr);
        if (f->head > 0)
            fprintf(stderr, " of head %d", f->head);
    }
    fputc('\n', stderr);
    return f->status == TRACE_ERROR_NO_MEMORY ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_DATA;
}

/* The note after a failure that training met: which run met it. */
static void report_training(const char *path, const train_config *config)
{
    char rate[NUMBER_MAX];
    number_write(config->learning_rate, &(number_format){ NUMBER_SHORT, 6, 0, false }, rate,
                 sizeof rate);
    text_write_escaped(stderr, path, false);
    fprintf(stderr, ": note: while training (train: %d steps, learning_rate %s); a smaller "
            "learning_rate may converge\n", config->steps, rate);
}

/* Trains a lesson that says train: once, so that an overflow on the way is refused as a
 * forward pass's is (the views train again from the lesson when they show training). */
static trace_status train_once(const options *o, const lesson *l, trace_failure *failure)
{
    if (!train_active(&l->input, &l->train))
        return TRACE_OK;
    train_run run;
    trace_status status = train_compute(&l->input, &l->train, l->train.steps, &o->ui.compute,
                                        &run, failure);
    if (status == TRACE_OK)
        train_free(&run);
    return status;
}

/* Loads, computes and checks one lesson against its numbers (lesson_check: answers, claims,
 * live numbers; warnings only when checking). On EXIT_STATUS_OK l and t are filled (free them);
 * otherwise every problem went to standard error and nothing is left to free. */
static int load_traced(const options *o, const char *path, bool checking, lesson *l, trace *t)
{
    lesson_diagnostics diagnostics;
    lesson_status loaded = lesson_load_with(path, &o->ui.load, l, &diagnostics);
    if (loaded != LESSON_OK)
        return load_failure(path, loaded, &diagnostics);
    char why[1200];
    if (lesson_edits_apply(l, o->ui.load.edits, o->ui.load.n_edits, why, sizeof why)
        != LESSON_EDIT_OK) {
        lesson_free(l);
        return usage_error("--set", why);
    }
    trace_failure failure;
    bool computed = trace_compute(&l->input, &o->ui.compute, t, &failure) == TRACE_OK;
    bool training = computed && train_once(o, l, &failure) != TRACE_OK;
    if (training)
        trace_free(t);
    if (!computed || training) {
        /* the failure names cells by the input's labels, which outlive the failed trace */
        trace labels = { .in = &l->input, .n = l->input.n_tokens, .d_model = l->input.d_model };
        int status = report_trace_failure(path, &labels, &failure);
        if (training)
            report_training(path, &l->train);
        lesson_free(l);
        return status;
    }
    lesson_status checked = lesson_check(l, t, checking, &diagnostics);
    if (checked != LESSON_OK && !checking && o->ui.load.n_edits > 0) {
        /* what if?: the lesson's claims and answers an edit made false are said, and the
         * numbers follow the edit; --check refuses them, as it would the file so edited */
        for (int i = 0; i < diagnostics.count; i++)
            diagnostics.items[i].severity = LESSON_SEVERITY_WARNING;
        checked = LESSON_OK;
    }
    bool warned = false;
    for (int i = 0; i < diagnostics.count; i++)
        warned |= diagnostics.items[i].severity == LESSON_SEVERITY_WARNING;
    lesson_diagnostics_print(&diagnostics, stderr);
    lesson_diagnostics_free(&diagnostics);
    if (checked == LESSON_OK && !(checking && o->strict && warned))
        return EXIT_STATUS_OK;
    trace_free(t);
    lesson_free(l);
    return EXIT_STATUS_DATA;
}

/* Loads, computes and hands one lesson's trace to a mode. */
static int run_with_trace(const options *o, const char *path)
{
    lesson l;
    trace t;
    int status = load_traced(o, path, false, &l, &t);
    if (status != EXIT_STATUS_OK)
        return status;
    status = o->mode->with_trace(o, &l, &t);
    trace_free(&t);
    lesson_free(&l);
    return status;
}

/* The folder built in for the installed lessons (make install's PREFIX when attnstep was built):
 * the last resort when the lessons are not beside the program. */
#ifndef ATTNSTEP_LESSON_DIR
#define ATTNSTEP_LESSON_DIR "/usr/local/share/attnstep/lessons"
#endif

/* The running program's file into path: /proc/self/exe (Linux), else argv[0] as a path, else
 * argv[0] looked up on PATH. False when none gives an existing file. */
static bool program_path(const char *argv0, char *path)
{
    ssize_t length = readlink("/proc/self/exe", path, PATH_MAX - 1);
    if (length > 0) {
        path[length] = '\0';
        return true;
    }
    if (strchr(argv0, '/'))
        return realpath(argv0, path) != NULL;
    const char *search = getenv("PATH");
    for (const char *dir = search; dir && *dir;) {
        size_t n = strcspn(dir, ":");
        char candidate[PATH_MAX];
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, n ? dir : ".", argv0);
        if (access(candidate, X_OK) == 0 && realpath(candidate, path))
            return true;
        dir += n + (dir[n] == ':');
    }
    return false;
}

/* The picker's folders when ATTNSTEP_LESSONS is unset: the lessons installed beside the program
 * (<prefix>/bin/attnstep finds <prefix>/share/attnstep/lessons, so an installed tree works
 * wherever it is put), then the folder built in, then ./lessons (a source checkout). */
static const char *default_lesson_folders(options *o, const char *argv0)
{
    char program[PATH_MAX], beside[PATH_MAX + 32] = "";
    if (program_path(argv0, program)) {
        char *slash = strrchr(program, '/');
        *slash = '\0';
        char relative[PATH_MAX + 32];
        snprintf(relative, sizeof relative, "%s/../share/attnstep/lessons", program);
        if (!realpath(relative, beside))
            beside[0] = '\0';   /* not installed beside the program */
    }
    snprintf(o->lesson_folders, sizeof o->lesson_folders, "%s%s%s:lessons", beside,
             *beside ? ":" : "", ATTNSTEP_LESSON_DIR);
    return o->lesson_folders;
}

/* Every environment variable attnstep heeds (help.c's environment_table says what each does; a
 * new one goes there too, or tests/check_docs.sh fails), read here once and handed down as
 * options; PATH only through default_lesson_folders, LANG and LC_ALL through setlocale. */
static void read_environment(options *o, const char *argv0)
{
    const char *threads = getenv("ATTNSTEP_THREADS");
    const char *portable = getenv("ATTNSTEP_PORTABLE");
    const char *no_color = getenv("NO_COLOR");
    if (threads && *threads && !parse_int(threads, 0, 1 << 16, &o->ui.compute.threads)) {
        fputs("attnstep: ATTNSTEP_THREADS=", stderr);
        text_write_escaped(stderr, threads, false);
        fputs(" is not a number; using every core\n", stderr);
    }
    o->ui.compute.portable = portable && *portable && strcmp(portable, "0") != 0;
    const char *timing = getenv("ATTNSTEP_TIMING_MS");
    int timing_ms;
    if (timing && *timing) {
        if (parse_int(timing, 0, 60000, &timing_ms)) {
            o->timing_seconds = timing_ms * 1e-3;
        } else {
            fputs("attnstep: ATTNSTEP_TIMING_MS=", stderr);
            text_write_escaped(stderr, timing, false);
            fprintf(stderr, " is not a number of milliseconds from 0 to 60000; using %.0f\n",
                    STATS_MIN_SECONDS * 1e3);
        }
    }
    if (no_color && *no_color && o->ui.color == UI_COLOR_AUTO)
        o->ui.color = UI_COLOR_NEVER;
    const char *folders = getenv("ATTNSTEP_LESSONS");
    o->ui.lesson_folders = folders && *folders ? folders : default_lesson_folders(o, argv0);
    o->ui.key_times = getenv("ATTNSTEP_KEY_TIMES");
    o->ui.term = getenv("TERM");
    o->ui.state_dir = ui_progress_dir(getenv("XDG_STATE_HOME"), getenv("HOME"), o->state_dir,
                                      sizeof o->state_dir) ? o->state_dir : NULL;
}

/* Whether the interactive UI can run here; when it cannot, why goes into `why`. */
static bool ui_usable(const options *o, char *why, size_t size)
{
    const char *term = o->ui.term;
    if (!isatty(STDOUT_FILENO))
        snprintf(why, size, "standard output is not a terminal");
    else if (!isatty(STDIN_FILENO))
        snprintf(why, size, "standard input is not a terminal");
    else if (!term || !*term || strcmp(term, "dumb") == 0)
        snprintf(why, size, "TERM is unset or dumb");
    else if (!ui_terminal_known(term)) {
        char shown[64];
        text_escape(term, shown, sizeof shown);
        snprintf(why, size, "TERM=%s is a terminal type curses does not know", shown);
    } else
        return true;
    return false;
}

/* Without a mode: the UI on a terminal (or with a key script), else the plain trace, with a
 * note saying why when the output is a terminal that expected the UI. */
static const mode *default_mode(options *o, int files)
{
    char why[160];
    bool ui = o->ui.key_script || o->ui.replay || ui_usable(o, why, sizeof why);
    snprintf(o->writing, sizeof o->writing, ui ? "the UI's screens" : "the plain trace");
    if (ui)
        return &mode_ui;
    if (files && isatty(STDOUT_FILENO))
        fprintf(stderr, "attnstep: this terminal cannot run the interactive UI (%s); "
                "printing the plain trace\n", why);
    return &mode_plain;
}

/* Flushes and closes stdout, so that no failed write passes unseen (a full disk, a closed
 * stdout): it is said once, naming what was being written, and the status becomes 74. */
static int close_stdout(int status, const char *writing)
{
    /* 74 with stdout unharmed: a file of the mode's own could not be written (--record,
     * --reset), and the mode said so */
    bool said = status == EXIT_STATUS_IO && !ferror(stdout) && fflush(stdout) == 0;
    int error = status == EXIT_STATUS_IO && !said ? errno : 0;  /* the mode stopped at the failure */
    bool failed = (status == EXIT_STATUS_IO && !said) || ferror(stdout);
    if (failed && !error) {
        /* a printer that went on after a failed write (--help is longer than stdio's buffer):
         * the unwritten part is still buffered, and writing it again says why */
        clearerr(stdout);
        if (fflush(stdout) != 0)
            error = errno;
    }
    if (fflush(stdout) != 0 && !failed) {
        error = errno;
        failed = true;
    }
    if (fclose(stdout) != 0 && !failed) {
        error = errno;
        failed = true;
    }
    if (!failed)
        return status;
    fprintf(stderr, "attnstep: cannot write %s to standard output%s%s\n",
            *writing ? writing : "the output", error ? ": " : "", error ? strerror(error) : "");
    return EXIT_STATUS_IO;
}

/* A closed stdin, stdout or stderr is held by /dev/null opened for reading, so that no file
 * the program opens takes its number, and every write to a closed stdout fails (EBADF) and
 * is reported like any failed write. */
static void hold_closed_streams(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int held = open("/dev/null", O_RDONLY);
            if (held >= 0 && held != fd) {
                dup2(held, fd);
                close(held);
            }
        }
}

static int run(int argc, char **argv, options *o);

int main(int argc, char **argv)
{
    /* UTF-8 and the user's language, but numbers always read and print with a '.' */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    hold_closed_streams();
    options o;
    int status = run(argc, argv, &o);
    return close_stdout(status, o.writing);
}

/* Parses the command line and runs the mode it chooses; returns the exit status. */
static int run(int argc, char **argv, options *o)
{
    int status = parse_options(argc, argv, o);
    if (status >= 0)
        return status;
    read_environment(o, argv[0]);
    int files = argc - optind;
    if (!o->mode && o->svg_dir)   /* --svg-dir alone: the figures */
        o->mode = &mode_svg;
    bool chosen = o->mode != NULL;
    if (!chosen)
        o->mode = default_mode(o, files);
    status = refuse_ignored(o, !chosen && o->mode != &mode_ui);
    if (status >= 0)
        return status;
    if (o->mode->with_files && (o->mode != &mode_ui || files <= 1))
        return o->mode->with_files(o, files, argv + optind);
    if (files > 1)
        return usage_error("one lesson at a time (--check takes several)", NULL);
    if (!files)
        return usage_error(chosen ? "no lesson given" : "no lesson given, and output is not a "
                           "terminal for the lesson picker", NULL);
    return run_with_trace(o, argv[optind]);
}
