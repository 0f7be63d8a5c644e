/* attnstep's command line: one table of options, from which getopt's list, the --help text and
 * the dispatch are all made; it loads the lesson, computes the trace once and hands it on. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exit_status.h"
#include "lesson.h"
#include "output.h"
#include "stats.h"
#include "template.h"
#include "text.h"
#include "trace.h"
#include "ui.h"

#define ATTNSTEP_VERSION "0.1.0"

typedef struct options options;

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
    USES_UI = 1u << 8, USES_EVERY_MODE = (1u << 9) - 1,
};

struct options {
    const mode *mode;      /* NULL until an option chooses one: the UI or the plain trace */
    const char *explain;   /* the cell of --explain */
    const char *csv_stage; /* the stage of --csv */
    int head;              /* --head, 0 when not given */
    int precision;
    bool precision_given;  /* --csv is exact unless --precision is given */
    int d_model, heads;    /* the shape of --cost */
    unsigned long long given;  /* bit i: option_table[i] was on the command line */
    char writing[40];      /* what goes to stdout, for the message when it cannot be written */
    ui_options ui;
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

/* --plain, --json, --markdown: the whole trace in the mode's format. */
static int write_format(const options *o, const lesson *l, const trace *t)
{
    return written(output_write(o->mode->format, l, t, o->precision, stdout));
}

static int write_csv(const options *o, const lesson *l, const trace *t)
{
    stage_id stage = stage_find(o->csv_stage);
    if (stage == STAGE_COUNT || !trace_has_stage(t, stage))
        return usage_error("--csv: no such stage in this lesson", o->csv_stage);
    int head = o->head ? o->head : 1;
    if (stage_get(stage)->per_head && head > t->heads) {
        char message[96];   /* as --explain says it */
        snprintf(message, sizeof message, "head %d does not exist: this lesson has %d head%s",
                 head, t->heads, t->heads == 1 ? "" : "s");
        return usage_error(message, NULL);
    }
    /* exact unless --precision asks for fewer digits */
    int precision = o->precision_given ? o->precision : -1;
    return written(output_write_matrix_at(o->mode->format, l, t, stage, head, precision, stdout));
}

static int write_explanation(const options *o, const lesson *l, const trace *t)
{
    (void)l;
    trace_cell cell;
    char error[512];
    if (!trace_cell_parse(t, o->explain, o->head ? o->head : 1, &cell, error, sizeof error))
        return usage_error(error, NULL);
    int length = trace_cell_explain(t, &cell, o->precision, NULL, 0);
    char *text = malloc((size_t)length + 1);
    if (!text)
        return written(EXIT_STATUS_SOFTWARE);
    trace_cell_explain(t, &cell, o->precision, text, (size_t)length + 1);
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
    int printed = stats_print(t, &o->ui.compute, title, stdout);
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

static int check_lessons(const options *o, int count, char **paths)
{
    (void)o;
    if (count == 0)
        return usage_error("--check needs a lesson", NULL);
    int status = EXIT_STATUS_OK;
    for (int i = 0; i < count; i++) {
        lesson l;
        lesson_diagnostics diagnostics;
        lesson_status loaded = lesson_load(paths[i], &l, &diagnostics);
        if (loaded == LESSON_OK) {
            lesson_free(&l);
            continue;
        }
        int failed = load_failure(paths[i], loaded, &diagnostics);
        /* the most serious status wins: no memory, then an unreadable file, then errors */
        if (status != EXIT_STATUS_SOFTWARE && (status != EXIT_STATUS_NO_INPUT
                                               || failed == EXIT_STATUS_SOFTWARE))
            status = failed;
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
    return stats_status(stats_cost(o->d_model, o->heads, &o->ui.compute, stdout));
}

static int run_ui(const options *o, int count, char **paths)
{
    ui_options ui = o->ui;
    ui.lesson_path = count ? paths[0] : NULL;
    return ui_run(&ui);
}

static const mode mode_plain = { write_format, NULL, &output_plain, USES_PLAIN, "--plain" };
static const mode mode_json = { write_format, NULL, &output_json, USES_JSON, "--json" };
static const mode mode_markdown = { write_format, NULL, &output_markdown, USES_MARKDOWN,
                                    "--markdown" };
static const mode mode_csv = { write_csv, NULL, &output_csv, USES_CSV, "--csv" };
static const mode mode_explain = { write_explanation, NULL, NULL, USES_EXPLAIN, "--explain" };
static const mode mode_stats = { write_stats, NULL, NULL, USES_STATS, "--stats" };
static const mode mode_check = { NULL, check_lessons, NULL, USES_CHECK, "--check" };
static const mode mode_cost = { NULL, show_cost, NULL, USES_COST, "--cost" };
static const mode mode_ui = { NULL, run_ui, NULL, USES_UI, "the interactive UI" };

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
static bool set_keys(options *o, const char *arg) { o->ui.key_script = arg; return true; }
static bool set_explain(options *o, const char *arg) { o->explain = arg; return true; }
static bool set_csv(options *o, const char *arg) { o->csv_stage = arg; return true; }

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

static void print_usage(void);
static void print_help(const char *arg) { (void)arg; print_usage(); }
static void print_version(const char *arg) { (void)arg; puts("attnstep " ATTNSTEP_VERSION); }
static void print_template(const char *arg) { (void)arg; fputs(template_lesson, stdout); }
/* --help-keys=man writes troff for the manual page */
static void print_keys(const char *arg) { ui_print_keys(stdout, arg && strcmp(arg, "man") == 0); }

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
    { "csv", 0, required_argument, "--csv STAGE",
      "one stage's matrix as CSV (with --head for per-head stages)", &mode_csv, set_csv, NULL,
      NULL, USES_EVERY_MODE },
    { "explain", 0, required_argument, "--explain 'STAGE[ROW,COL]'",
      "the arithmetic of one cell; ROW and COL are token names or\n"
      "0-based indices, e.g. --explain 'weights[cat,sat]'", &mode_explain, set_explain, NULL,
      NULL, USES_EVERY_MODE },
    { "check", 0, no_argument, "--check LESSON...",
      "validate lessons only; print every problem found", &mode_check, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "template", 0, no_argument, NULL,
      "print a commented starter lesson", NULL, NULL, NULL, print_template, USES_EVERY_MODE },
    { "stats", 0, no_argument, "--stats LESSON",
      "what each stage costs: multiplications, additions, memory,\n"
      "measured time, then the totals and the peak memory", &mode_stats, NULL, NULL, NULL,
      USES_EVERY_MODE },
    { "cost", 0, no_argument, NULL,
      "how the cost grows with the sentence: n = 16, 32, … 2048\n"
      "random tokens, measured, with a plot", &mode_cost, NULL, NULL, NULL, USES_EVERY_MODE },
    { "d-model", 0, required_argument, "--d-model D, --heads H",
      "the shape --cost uses (default 64 and 4)", NULL, set_d_model,
      "--d-model takes a number from 1 to 4096", NULL, USES_COST },
    { "heads", 0, required_argument, "",
      NULL, NULL, set_heads, "--heads takes a number from 1 to 4096", NULL, USES_COST },
    { "head", 0, required_argument, "--head H",
      "the head for --explain, --csv and --at (from 1; default 1)", NULL, set_head,
      "--head takes a head number from 1", NULL, USES_EXPLAIN | USES_CSV | USES_UI },
    { "at", 0, required_argument, "--at 'STAGE[ROW,COL]'",
      "open the UI at that stage and cell", NULL, set_at, NULL, NULL, USES_UI },
    { "precision", 0, required_argument, "--precision N",
      "decimals shown (0-17, default 4; --csv is exact without it)", NULL, set_precision,
      "--precision takes a number from 0 to 17", NULL,
      USES_PLAIN | USES_MARKDOWN | USES_EXPLAIN | USES_CSV | USES_UI },
    { "color", 0, required_argument, "--color=WHEN",
      "colours in the UI: auto (default), always, never", NULL, set_color,
      "--color takes auto, always or never", NULL, USES_UI },
    { "colour", 0, required_argument, "", NULL, NULL, set_color,
      "--colour takes auto, always or never", NULL, USES_UI },
    { "keys", 0, required_argument, "--keys FILE",
      "headless UI: read keys from FILE, dump screens as text", NULL, set_keys, NULL, NULL,
      USES_UI },
    { "screen", 0, required_argument, "--screen COLSxROWS",
      "headless UI screen size (default 80x24)", NULL, set_screen,
      "--screen takes COLSxROWS, e.g. 80x24", NULL, USES_UI },
    { "help-keys", 0, optional_argument, NULL,
      "list the keys of the interactive UI", NULL, NULL, NULL, print_keys, USES_EVERY_MODE },
    { "help", 'h', no_argument, "-h, --help", "show this help", NULL, NULL, NULL, print_help,
      USES_EVERY_MODE },
    { "version", 'V', no_argument, "-V, --version", "show the version", NULL, NULL, NULL,
      print_version, USES_EVERY_MODE },
};
enum { OPTION_COUNT = (int)(sizeof option_table / sizeof option_table[0]) };
_Static_assert(OPTION_COUNT <= 64, "options.given has one bit per option");

/* Writes --help from the table: each option's usage (or --NAME) and its help lines. */
static void print_usage(void)
{
    printf("Usage: attnstep [OPTION]... [LESSON]\n"
           "Step through multi-head self-attention, one stage at a time.\n\n"
           "  (no option)            open LESSON in the interactive UI (the lesson picker without\n"
           "                         LESSON); when output is not a terminal, print the plain trace\n");
    for (int i = 0; i < OPTION_COUNT; i++) {
        const option_row *row = &option_table[i];
        if (!row->help)
            continue;  /* shown beside another option's usage */
        char usage[64];
        if (row->usage)
            snprintf(usage, sizeof usage, "%s", row->usage);
        else
            snprintf(usage, sizeof usage, "--%s", row->name);
        const char *line = row->help;
        bool first = true;
        for (;;) {
            const char *end = strchr(line, '\n');
            int length = end ? (int)(end - line) : (int)strlen(line);
            /* a usage wider than its column goes on a line of its own */
            if (first && strlen(usage) > 22)
                printf("  %s\n%25s%.*s\n", usage, "", length, line);
            else
                printf("  %-23s%.*s\n", first ? usage : "", length, line);
            first = false;
            if (!end)
                break;
            line = end + 1;
        }
    }
    printf("\nExit status: 0 ok, 64 bad command line, 65 lesson with errors, 66 unreadable lesson,\n"
           "70 internal error, 74 output error.\n");
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
                    .ui = { .color = UI_COLOR_AUTO, .screen_cols = 80, .screen_rows = 24 } };
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

/* Loads, computes and hands one lesson's trace to a mode. */
static int run_with_trace(const options *o, const char *path)
{
    lesson l;
    lesson_diagnostics diagnostics;
    lesson_status loaded = lesson_load(path, &l, &diagnostics);
    if (loaded != LESSON_OK)
        return load_failure(path, loaded, &diagnostics);
    trace t;
    trace_failure failure;
    int status;
    if (trace_compute(&l.input, &o->ui.compute, &t, &failure) != TRACE_OK) {
        /* the failure names cells by the input's labels, which outlive the failed trace */
        trace labels = { .in = &l.input, .n = l.input.n_tokens, .d_model = l.input.d_model };
        status = report_trace_failure(path, &labels, &failure);
    } else {
        status = o->mode->with_trace(o, &l, &t);
        trace_free(&t);
    }
    lesson_free(&l);
    return status;
}

/* Every environment variable attnstep heeds, read here once and handed down as options:
 * ATTNSTEP_THREADS (threads for the kernels; unset or 0: every core), ATTNSTEP_PORTABLE (set and
 * not "0": never the AVX2 code), NO_COLOR (no colour unless --color=always), ATTNSTEP_LESSONS
 * (the picker's folders), ATTNSTEP_KEY_TIMES (the UI's timing file, for make bench). */
static void read_environment(options *o)
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
    if (no_color && *no_color && o->ui.color == UI_COLOR_AUTO)
        o->ui.color = UI_COLOR_NEVER;
    o->ui.lesson_folders = getenv("ATTNSTEP_LESSONS");
    o->ui.key_times = getenv("ATTNSTEP_KEY_TIMES");
    o->ui.term = getenv("TERM");
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
    bool ui = o->ui.key_script || ui_usable(o, why, sizeof why);
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
    int error = status == EXIT_STATUS_IO ? errno : 0;  /* the mode stopped at the failure */
    bool failed = status == EXIT_STATUS_IO || ferror(stdout);
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
    read_environment(o);
    int files = argc - optind;
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
