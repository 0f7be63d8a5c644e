/* The interactive terminal UI (ncursesw): step through a lesson's trace like a debugger.
 * The only module, with its ui_*.c siblings, that includes curses. */
#ifndef ATTNSTEP_UI_H
#define ATTNSTEP_UI_H

#include <stdbool.h>
#include <stdio.h>
#include "lesson.h"
#include "trace.h"
#include "ui_class.h"

typedef enum { UI_COLOR_AUTO, UI_COLOR_ALWAYS, UI_COLOR_NEVER } ui_color;

typedef struct {
    const char *lesson_path;   /* the lesson to open; NULL opens the lesson picker */
    const char *compare_path;  /* --compare: the second lesson, beside lesson_path, or NULL */
    int train_step;            /* --train-step N: with --compare, the second lesson at its
                                  weights after N training updates; -1 when not given */
    const char *at;            /* --at 'STAGE[ROW,COL]': open at that stage and cell, or NULL */
    int head;                  /* --head: the head to open at (from 1), 0 when not given */
    ui_color color;            /* --color */
    int precision;             /* decimals shown in cells and explanations (negative: 4) */
    bool present;              /* --present: lessons open in the presentation preset */
    /* Headless mode for tests: keys are read from key_script (one key name per line) and the
     * screen is drawn in memory at screen_cols x screen_rows (80x24 when 0), then dumped as
     * text to stdout wherever the script says "dump" and at its end. NULL for a real terminal.
     * Script lines: a printable character; space, enter, tab, btab, up, down, left, right,
     * pgup, pgdn, home, end, backspace, esc, f1, ctrl-l; "resize COLSxROWS"; "click COL ROW";
     * "dump"; "clears" (writes how many times the terminal has been cleared so far, which a
     * full redraw does); "reload" (look at the lesson file now) and "reload FILE" (as if the
     * lesson file had just been saved with FILE's text); "wait MS" (skipped here; --replay waits
     * it); "await …" (a class's script waits for its followers or its leader); blank lines and
     * "# comments".
     * tests/screens/README has the details. */
    const char *key_script;
    int screen_cols, screen_rows;
    /* --replay FILE: a key script (a recording) played at its pace, its "wait MS" lines waited:
     * on the terminal, where space pauses, + and - change the speed and q hands over (the
     * keys of UI_IN_REPLAY), and where the recording's resizes and dumps are left out; or
     * headless when key_script is FILE too (no terminal), waiting but with no keys. NULL: none.
     * --record FILE: every key, click and resize the run handles is written to FILE as a
     * key script, each after "wait MS", the time since the one before (0 ms waits left out);
     * the key that ends the run is not written, so a replay ends on the last screen. */
    const char *replay, *record;
    /* --lead, --follow and their options (ui_class.h); a class needs a lesson, not the
     * picker or --compare. With a key script, "await joined N" and "await synced" wait for
     * the class, and a follower goes on after its script, dumping the screen each time it
     * takes the leader's place, until the leader says bye. */
    ui_class_options class;
    /* What main read from the environment (the UI reads none itself). */
    trace_options compute;       /* ATTNSTEP_THREADS, ATTNSTEP_PORTABLE: how lessons are computed */
    lesson_options load;         /* how lessons are loaded: --allow-paths */
    const char *lesson_folders;  /* ATTNSTEP_LESSONS: the picker's folders, or NULL */
    const char *key_times;       /* ATTNSTEP_KEY_TIMES: the timing file below, or NULL */
    const char *term;            /* TERM, named when the terminal cannot be started */
    const char *state_dir;       /* where progress is kept (ui_progress_dir: XDG_STATE_HOME or
                                    HOME), or NULL when neither names a folder */
} ui_options;

/* Timings, for `make bench`: when the environment variable ATTNSTEP_KEY_TIMES names a file,
 * ui_run appends to it one line per key handled in a lesson, "KEY<TAB>KIND<TAB>MICROSECONDS":
 * the key's ASCII name (as in --help-keys), what it did (move-left, move-down, move-up,
 * move-right, stage-next, stage-prev, stage-open (] or [: a stage off the script), head,
 * step-in, cell-next, cell-prev, step-out, heatmap, first, last, help, help-key (a key
 * while the help is shown), redraw, quit (to the score), question (a key of a waiting
 * question), display (+ - L c J K P: how the lesson is shown), edit (= u U and the keys
 * of the edit line: what if?), none (an unbound key);
 * "+scroll" appended when the
 * matrix scrolled), and the CLOCK_MONOTONIC wall time from the key being read to the end of
 * drawing its frame, refresh() included (headless: curses' update of its virtual screen and
 * the escape codes written to /dev/null). A key that quits has no line.
 * Before them comes "first-frame<TAB>-<TAB>MICROSECONDS<TAB>SECONDS.MICROS": from ui_run's
 * entry (so loading and tracing the lesson are counted, exec and main's option parsing are not)
 * to the first frame refreshed, then the CLOCK_REALTIME of that frame, from which a launcher
 * that noted the time it started the process (bash's $EPOCHREALTIME) gets the whole start-up.
 * Nothing drawn changes; a line is written (through stdio's buffer) after its time is taken,
 * never within a timed span. */

/* Runs the UI until the user quits. Returns the process exit status (exit_status.h):
 * EXIT_STATUS_OK, EXIT_STATUS_USAGE (bad --at, --head or key script), EXIT_STATUS_DATA (bad
 * lesson), EXIT_STATUS_NO_INPUT (unreadable lesson or key script), EXIT_STATUS_SOFTWARE (no
 * terminal or no memory), or 128+N after signal N (Ctrl-C 130, SIGTERM 143, SIGHUP 129). The
 * terminal is restored on every path out, fatal errors and signals included. */
int ui_run(const ui_options *options);

/* Whether curses knows the terminal type term (its terminfo entry is found) and the entry can
 * address the cursor (cup): main falls back
 * to the plain trace, with a note, when it does not, as it does for TERM=dumb. */
bool ui_terminal_known(const char *term);

/* Writes every key binding of the UI, one per line under a heading for where it applies, with
 * ASCII key names: plain text ("  n Space PgDn      next step") for --help-keys, or troff
 * (".TP" / ".B \"n Space PgDn\"" / "next step", headings as ".SS") for the man page. */
void ui_print_keys(FILE *stream, bool man);

#endif
