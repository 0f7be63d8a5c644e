/* --help, --help=man and --help-keys[=man]: the help and the manual page's OPTIONS, ENVIRONMENT,
 * EXIT STATUS and KEYS, written from main's option table and the tables here. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "help.h"
#include "stages.h"
#include "ui.h"

/* Every environment variable attnstep heeds (main.c's read_environment reads them), for --help
 * and the manual page. */
static const struct {
    const char *name, *help;
} environment_table[] = {
    { "ATTNSTEP_LESSONS", "the folders the lesson picker lists, ':' between them; unset or "
      "empty: the lessons installed beside the program, then those of the PREFIX it was built "
      "with, then ./lessons" },
    { "ATTNSTEP_THREADS", "threads for the core's large products and softmaxes (at most 8); "
      "unset or 0: one per processor; no number depends on it" },
    { "ATTNSTEP_PORTABLE", "set and not 0: never the vector code (AVX-512, AVX2 with FMA, NEON); "
      "every number is the same to the bit, only slower" },
    { "ATTNSTEP_KEY_TIMES", "a file the UI appends the time of every key to (for make bench)" },
    { "ATTNSTEP_TIMING_MS", "how many milliseconds --stats and --cost measure each time for, at "
      "least (0 to 60000; unset: 50); the tests make it small, to check the text quickly" },
    { "NO_COLOR", "set and not empty: the UI draws without colour unless --color=always" },
    { "LANG, LC_ALL", "a locale that is not UTF-8 makes the UI draw in ASCII; numbers always "
      "read and print with a '.'" },
    { "XDG_STATE_HOME", "the UI keeps each lesson's progress (answers, score, the step left) "
      "in its attnstep folder; unset or not an absolute path: ~/.local/state/attnstep" },
    { "HOME", "the home folder, for ~/.local/state/attnstep when XDG_STATE_HOME is unset; "
      "with neither, progress is not kept" },
    { "TERM", "the terminal type; unset or dumb: the plain trace instead of the UI" },
    { "PATH", "where attnstep finds its own file, to find the lessons installed beside it, when "
      "neither /proc/self/exe nor argv[0] says" },
};

/* Every exit status, for --help (short) and the manual page (long). */
static const struct {
    const char *code, *help, *man;
} exit_table[] = {
    { "0", "ok", "Success; for --check, every lesson is good." },
    { "64", "bad command line", "Bad command line: an unknown option, a bad argument, no such "
      "stage, cell or head." },
    { "65", "lesson with errors", "The lesson has errors (a data file it names that is missing, "
      "unreadable or not a regular file among them), or its trace overflowed; for --check, "
      "some lesson has errors and every lesson file could be read." },
    { "66", "unreadable lesson", "A lesson (or key script) cannot be read; for --check, any file "
      "that cannot be read makes it 66, even when others have errors." },
    { "70", "internal error", "Internal error: out of memory, or no terminal for the UI." },
    { "74", "output error", "The output could not be written (a full disk, a closed pipe)." },
    { "130", "Ctrl-C", "Interrupted by Ctrl-C (SIGINT): the UI restores the terminal and exits "
      "with 128 + the signal's number; the other modes are stopped by the signal, which the "
      "shell reports as the same number." },
    { "143", "SIGTERM", "Terminated by SIGTERM, as above." },
    { "129", "SIGHUP", "The terminal hung up (SIGHUP), as above." },
};

/* Writes one --help entry: NAME in the first column, then text wrapped at 79 columns beside it
 * (on a line of its own first when NAME is wider than its column). */
static void print_wrapped(const char *name, const char *text)
{
    int column = printf("  %-23s", name);
    if (column > 25) {
        printf("\n%25s", "");
        column = 25;
    }
    while (*text) {
        size_t word = strcspn(text, " ");
        if (column > 25 && column + 1 + (int)word > 79) {
            printf("\n%25s", "");
            column = 25;
        } else if (column > 25) {
            putchar(' ');
            column++;
        }
        column += printf("%.*s", (int)word, text);
        text += word + (text[word] == ' ');
    }
    putchar('\n');
}

/* Writes text for troff: '-' as \-, '\' as \e, a character beyond ASCII as \[uXXXX] (troff
 * reads bytes, not UTF-8), and a line never starting with '.' or '\''. */
static void put_troff(const char *text)
{
    if (*text == '.' || *text == '\'')
        fputs("\\&", stdout);
    for (; *text; text++) {
        unsigned char byte = (unsigned char)*text;
        if (byte >= 0xc0) {  /* a UTF-8 sequence: its lead byte, then 10xxxxxx bytes */
            int extra = byte >= 0xf0 ? 3 : byte >= 0xe0 ? 2 : 1;
            unsigned code = byte & (0x3fu >> extra);
            for (; extra > 0 && (text[1] & 0xc0) == 0x80; extra--)
                code = code << 6 | (unsigned)(*++text & 0x3f);
            printf("\\[u%04X]", code);
        } else if (*text == '-')
            fputs("\\-", stdout);
        else if (*text == '\\')
            fputs("\\e", stdout);
        else if (*text == '\n')
            putchar(' ');
        else
            putchar(*text);
    }
}

/* Writes a --help text as a sentence for troff: a capital first, a full stop last. */
static void put_sentence(const char *help)
{
    char text[512];
    snprintf(text, sizeof text, "%s", help);
    text[0] = (char)toupper((unsigned char)text[0]);
    put_troff(text);
    putchar('.');
}

/* Where an option's detail names every stage: put_detail writes the node table's names there,
 * so that the list cannot go stale. */
#define STAGE_LIST "@STAGE_LIST@"

/* The manual page's longer word on an option, where its --help line is not the whole story. */
static const struct {
    const char *name, *text;
} option_details[] = {
    { "plain", "Each question comes with its answer, and each cell the narration focuses on with "
      "its worked arithmetic." },
    { "json", "Numbers have 17 significant digits, so they read back to the same doubles; the "
      "hidden cells of masked are null; --precision does not apply." },
    { "csv", "STAGE is a stage name as --json writes it, of a stage the lesson has (one of "
      STAGE_LIST "). Numbers have 17 significant digits whatever --precision says. A per-head "
      "stage needs --head beyond head 1; a head the lesson does not have exits 64." },
    { "explain", "A token written more than once is named with its 0-based position, as dog@6; "
      "its plain name is refused with the positions to choose from." },
    { "check", "Each problem is printed as path:line:col: error: message; a YAML syntax error "
      "stops the reading of its file, so no other problem of that file is reported, before or "
      "after it. Every weight matrix is made (random ones drawn) and the trace is computed, to "
      "prove the lesson's claims, answers and live numbers against it: a lesson with d_model "
      "4096 holds four 4096 x 4096 matrices of doubles, 512 MiB, and takes a second or two." },
    { "allow-paths", "Without it, a lesson whose {file: NAME} is an absolute path, climbs out of "
      "the lesson's folder with .., or is a symbolic link leading out is refused (exit 65), so "
      "that a downloaded lesson cannot read other files. It applies to every lesson loaded, "
      "the UI's picker too." },
    { "keys", "For tests and for scripted demonstrations; the format is under KEY SCRIPTS." },
    { "record", "Each key, click and resize handled is written as a line of KEY SCRIPTS, after "
      "a line wait MS with the milliseconds since the one before (none when under one); the "
      "key that ends the run is left out, so a replay ends on the last screen. Works with "
      "--keys and --replay too. A file that cannot be written exits 74." },
    { "replay", "Each wait MS line of FILE is waited, at the speed chosen (1/8 to 8 times "
      "as recorded); the recording's resizes are left out, as the terminal keeps its size. "
      "Other keys are ignored until the recording ends or q stops it; then the lesson is "
      "yours. Without a terminal it runs headless like --keys, waiting. Not with --keys (64)." },
    { "lead", "Followers join with the class code and their own copy of the lesson, which must "
      "be the same text (its hash is compared). The leader listens on loopback unless --listen "
      "names an address; it never waits for a follower, and a follower that falls behind gets "
      "the latest place. Quitting tells the followers; a leader started again with the same "
      "--listen and --code gets its class back by itself." },
    { "follow", "The leader's step, head, selected cell and open question are shown at this "
      "terminal's own size and colours. A follower that loses the leader joins again by itself. "
      "A different lesson is refused naming both hashes (exit 65); a wrong code exits 64." },
    { "help-keys", "--help-keys=man writes them as troff, for the KEYS section of this page." },
    { "help", "--help=man writes the OPTIONS, ENVIRONMENT and EXIT STATUS sections of this page "
      "as troff." },
};

/* Writes an option's detail for troff, with the node table's names where it says STAGE_LIST. */
static void put_detail(const char *text)
{
    const char *mark = strstr(text, STAGE_LIST);
    if (!mark) {
        put_troff(text);
        return;
    }
    char before[512];
    snprintf(before, sizeof before, "%.*s", (int)(mark - text), text);
    put_troff(before);
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (stage_find(stage_get((stage_id)s)->name) != (stage_id)s)
            continue;   /* a name two rows share (normed), once */
        fputs(s == 0 ? "" : ", ", stdout);
        put_troff(stage_get((stage_id)s)->name);
    }
    put_troff(mark + strlen(STAGE_LIST));
}

/* Writes the OPTIONS, ENVIRONMENT and EXIT STATUS sections of the manual page from the tables:
 * each option's usage and its --help text, then its detail. */
static void print_manual(const help_option *options, int count)
{
    printf(".SH OPTIONS\n");
    for (int i = 0; i < count; i++) {
        const help_option *row = &options[i];
        if (!row->help)
            continue;  /* named in another option's usage */
        char usage[64];
        snprintf(usage, sizeof usage, row->usage ? "%s" : "--%s",
                 row->usage ? row->usage : row->name);
        printf(".TP\n");
        for (const char *word = usage; *word;) {  /* options in bold, their arguments in italics */
            size_t length = strcspn(word, " =,");
            char text[64];
            snprintf(text, sizeof text, "%.*s", (int)length, word);
            fputs(word[0] == '-' ? "\\fB" : "\\fI", stdout);
            put_troff(text);
            fputs("\\fR", stdout);
            word += length;
            size_t gap = strspn(word, " =,");
            printf("%.*s", (int)gap, word);
            word += gap;
        }
        putchar('\n');
        put_sentence(row->help);
        for (size_t d = 0; d < sizeof option_details / sizeof option_details[0]; d++)
            if (strcmp(option_details[d].name, row->name) == 0) {
                putchar(' ');
                put_detail(option_details[d].text);
            }
        putchar('\n');
    }
    printf(".SH ENVIRONMENT\nattnstep reads these once, when it starts.\n");
    for (size_t i = 0; i < sizeof environment_table / sizeof environment_table[0]; i++) {
        printf(".TP\n.B ");
        put_troff(environment_table[i].name);
        putchar('\n');
        put_sentence(environment_table[i].help);
        putchar('\n');
    }
    printf(".SH \"EXIT STATUS\"\n");
    for (size_t i = 0; i < sizeof exit_table / sizeof exit_table[0]; i++) {
        printf(".TP\n.B %s\n", exit_table[i].code);
        put_troff(exit_table[i].man);
        putchar('\n');
    }
}

/* Writes --help from the tables: each option's usage (or --NAME) and its help lines. */
static void print_usage(const help_option *options, int count)
{
    printf("Usage: attnstep [OPTION]... [LESSON]\n"
           "Step through multi-head self-attention, one stage at a time.\n\n"
           "  (no option)            open LESSON in the interactive UI (the lesson picker without\n"
           "                         LESSON); when output is not a terminal, print the plain trace\n");
    for (int i = 0; i < count; i++) {
        const help_option *row = &options[i];
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
    printf("\nEnvironment:\n");
    for (size_t i = 0; i < sizeof environment_table / sizeof environment_table[0]; i++)
        print_wrapped(environment_table[i].name, environment_table[i].help);
    printf("\nExit status:");
    int column = 12;
    for (size_t i = 0; i < sizeof exit_table / sizeof exit_table[0]; i++) {
        char item[96];
        int length = snprintf(item, sizeof item, " %s %s%s", exit_table[i].code,
                              exit_table[i].help, i + 1 < sizeof exit_table / sizeof exit_table[0]
                                                      ? "," : ".");
        if (column + length > 79) {
            printf("\n ");
            column = 1;
        }
        fputs(item, stdout);
        column += length;
    }
    putchar('\n');
}

void help_print(const help_option *options, int count, const char *arg)
{
    if (arg && strcmp(arg, "man") == 0)
        print_manual(options, count);
    else
        print_usage(options, count);
}

void help_print_keys(const char *arg)
{
    ui_print_keys(stdout, arg && strcmp(arg, "man") == 0);
}
