/* ui_run: opens the lesson (or the picker) and runs the key loop, on the real terminal or, for
 * tests, on an in-memory screen fed by a key script; the terminal is restored on every way out. */
#include "ui_curses.h"
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "exit_status.h"
#include "text.h"
#include "ui_internal.h"

#define DEFAULT_PRECISION 4
#define INPUT_WAIT_MS 250   /* how long a read waits before looking at pending signals */

typedef struct {
    ui_style st;
    int precision;
    bool headless;
    SCREEN *screen;
    FILE *term_out, *term_in;    /* headless: the in-memory screen writes to /dev/null */
    ui_event *script;
    int script_len, script_pos, dumps;
    int instant_failures;        /* reads that failed at once, in a row */
    bool stop;                   /* input ended or a signal came: leave every loop */
    FILE *key_times;             /* $ATTNSTEP_KEY_TIMES opened for appending, or NULL */
    double started;              /* CLOCK_MONOTONIC seconds at ui_run's entry */
    bool first_frame_timed;
} session;

/* Set from signal handlers: the signal to re-raise once the terminal is restored. */
static volatile sig_atomic_t pending_signal;
static volatile sig_atomic_t curses_active;

static void restore_terminal(void)
{
    if (curses_active) {
        curses_active = 0;
        endwin();
    }
}

static void on_stop_signal(int sig)
{
    pending_signal = sig;
}

/* A crash must not leave the terminal raw; endwin is not async-signal-safe, but the process is
 * about to die anyway and a usable shell is worth the risk. */
static void on_fatal_signal(int sig)
{
    restore_terminal();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    static const int fatals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    static bool registered;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;   /* no SA_RESTART: a blocked read returns at once */
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) sigaction(stops[i], &sa, NULL);
    sa.sa_handler = on_fatal_signal;
    for (size_t i = 0; i < sizeof fatals / sizeof fatals[0]; i++) sigaction(fatals[i], &sa, NULL);
    if (!registered) registered = atexit(restore_terminal) == 0;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- timing (ATTNSTEP_KEY_TIMES, described in ui.h) ---- */

static long long micros_since(double start)
{
    return llround((now_seconds() - start) * 1e6);
}

/* Called after every frame is drawn and refreshed: the first one is the start-up figure. */
static void time_first_frame(session *s)
{
    if (!s->key_times || s->first_frame_timed) return;
    s->first_frame_timed = true;
    /* the wall clock too, so that whoever started the process can count from its launch */
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    fprintf(s->key_times, "first-frame\t-\t%lld\t%lld.%06ld\n", micros_since(s->started),
            (long long)wall.tv_sec, wall.tv_nsec / 1000);
}

/* What a lesson key does, as a word for the timings (the same key may move or scroll). */
static const char *key_kind(const ui_view *v, int key)
{
    static const char *const moves[] = {"move-left", "move-down", "move-up", "move-right"};
    int arg = 0;
    if (v->help) return "help-key";
    ui_action action = ui_key_action(key, ui_view_context(v), &arg);
    switch (action) {
    case UI_ACT_MOVE: return moves[arg % 4];
    case UI_ACT_NEXT: return v->stepped_in ? "cell-next" : "stage-next";
    case UI_ACT_PREV: return v->stepped_in ? "cell-prev" : "stage-prev";
    case UI_ACT_FIRST: return "first";
    case UI_ACT_LAST: return "last";
    case UI_ACT_HEAD_NEXT: case UI_ACT_HEAD_PREV: case UI_ACT_HEAD_NUMBER: return "head";
    case UI_ACT_STEP_IN: return v->stepped_in ? "cell-next" : "step-in";
    case UI_ACT_STEP_OUT: return "step-out";
    case UI_ACT_HEATMAP: return "heatmap";
    case UI_ACT_HELP: return "help";
    case UI_ACT_REDRAW: return "redraw";
    case UI_ACT_QUIT: return "quit";
    case UI_ACT_NONE: return "none";
    default: return "question";
    }
}

/* ---- headless screens ---- */

/* Line-drawing characters of the alternate character set, read back as ASCII. */
static wchar_t acs_as_ascii(wchar_t c)
{
    return c == 'q' ? L'-' : c == 'x' ? L'|' : strchr("lkmjtuvwn", (int)c) ? L'+' : c;
}

/* One screen row as UTF-8. in_wchnstr gives one entry per character (a wide character's
 * second column is left out), so columns are counted by width. */
static void dump_row(int y)
{
    static cchar_t cells[1024];
    char line[8192];
    size_t len = 0;
    int n = COLS < 1024 ? COLS : 1023;
    memset(cells, 0, sizeof cells);
    mvin_wchnstr(y, 0, cells, n);
    for (int i = 0, column = 0; i < n && column < n && len + MB_LEN_MAX + 1 < sizeof line; i++) {
        wchar_t text[CCHARW_MAX + 1] = {0};
        attr_t attrs;
        short pair;
        getcchar(&cells[i], text, &attrs, &pair, NULL);
        wchar_t c = text[0] ? text[0] : L' ';
        if (attrs & A_ALTCHARSET) c = acs_as_ascii(c);
        text[0] = c;
        /* the character and the combining marks that share its cell */
        for (int j = 0; j <= CCHARW_MAX && text[j] && len + MB_LEN_MAX + 1 < sizeof line; j++) {
            mbstate_t state;
            memset(&state, 0, sizeof state);
            size_t k = wcrtomb(line + len, text[j], &state);
            if (k == (size_t)-1) line[len++] = '?';
            else len += k;
        }
        int w = text_char_width((unsigned)c);
        column += w > 1 ? w : 1;
    }
    while (len > 0 && line[len - 1] == ' ') len--;
    line[len] = '\0';
    puts(line);
}

static void dump_screen(session *s)
{
    printf("--- screen %d (%dx%d)\n", ++s->dumps, COLS, LINES);
    for (int y = 0; y < LINES; y++) dump_row(y);
    fflush(stdout);
}

/* ---- input ---- */

static bool next_script_event(session *s, ui_event *ev)
{
    while (s->script_pos < s->script_len) {
        *ev = s->script[s->script_pos++];
        if (ev->kind == UI_EV_DUMP) { dump_screen(s); continue; }
        if (ev->kind == UI_EV_RESIZE) resizeterm(ev->y, ev->x);
        return true;
    }
    return false;
}

static bool next_terminal_event(session *s, ui_event *ev)
{
    /* A read that fails at once, again and again, means the terminal is gone (its input
     * closed, a hangup ignored): stop instead of spinning. A timeout takes INPUT_WAIT_MS and
     * is a tick: the lesson's file is looked at, and pending signals again. */
    for (;;) {
        if (pending_signal || s->instant_failures > 100) return false;
        wint_t ch;
        double start = now_seconds();
        int r = get_wch(&ch);
        if (r == ERR) {
            bool instant = now_seconds() - start < INPUT_WAIT_MS / 10000.0;
            s->instant_failures = instant ? s->instant_failures + 1 : 0;
            if (instant) continue;
            *ev = (ui_event){.kind = UI_EV_TICK};
            return !pending_signal;
        }
        s->instant_failures = 0;
        *ev = (ui_event){.kind = UI_EV_KEY, .key = (int)ch};
        if (r != KEY_CODE_YES) return true;
        if (ch == KEY_RESIZE) { ev->kind = UI_EV_RESIZE; return true; }
        if (ch != KEY_MOUSE) { ev->key = UI_KEY((int)ch); return true; }
        MEVENT m;
        if (getmouse(&m) == OK && (m.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))) {
            *ev = (ui_event){.kind = UI_EV_CLICK, .x = m.x, .y = m.y};
            return true;
        }
    }
}

/* The next key, click or resize. False when the script has ended or a signal asks to stop. */
static bool next_event(session *s, ui_event *ev)
{
    bool got = s->headless ? next_script_event(s, ev) : next_terminal_event(s, ev);
    if (!got) s->stop = true;
    return got;
}

/* ---- the terminal ---- */

static int start_terminal(session *s, const ui_options *o)
{
    if (s->headless) {
        s->term_out = fopen("/dev/null", "w");
        s->term_in = fopen("/dev/null", "r");
        use_env(FALSE);   /* the size comes from --screen, not from the environment */
        /* A fixed terminal type, so the dumps do not depend on $TERM; the others are
         * fallbacks for machines without xterm-256color's terminfo entry. */
        static const char *const types[] = {"xterm-256color", "xterm", "vt100"};
        for (size_t i = 0; i < 3 && !s->screen && s->term_out && s->term_in; i++)
            s->screen = newterm(types[i], s->term_out, s->term_in);
    } else {
        install_handlers();
        s->screen = newterm(NULL, stdout, stdin);
    }
    if (!s->screen) {
        const char *term = getenv("TERM");
        fprintf(stderr, "attnstep: cannot start the terminal UI on TERM=%s\n", term ? term : "(unset)");
        return EXIT_STATUS_SOFTWARE;
    }
    curses_active = 1;
    if (s->headless)
        resizeterm(o->screen_rows > 0 ? o->screen_rows : 24, o->screen_cols > 0 ? o->screen_cols : 80);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(INPUT_WAIT_MS);
    mouseinterval(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
    s->st.colors = ui_colors_init(o->color);
    return EXIT_STATUS_OK;
}

static void stop_terminal(session *s)
{
    if (s->headless && curses_active) dump_screen(s);
    restore_terminal();
    if (s->screen) delscreen(s->screen);
    s->screen = NULL;
    if (s->term_out) fclose(s->term_out);
    if (s->term_in) fclose(s->term_in);
    s->term_out = s->term_in = NULL;
}

/* ---- lessons ---- */

/* Where --at and --head open: a cell, or the first step of that head. Returns 0 or 64. */
static int place_view(ui_view *v, const ui_options *options)
{
    int heads = v->t->heads;
    if (options->head < 0 || options->head > heads) {
        fprintf(stderr, "attnstep: --head %d: the lesson has %d head%s\n", options->head, heads,
                heads == 1 ? "" : "s");
        return EXIT_STATUS_USAGE;
    }
    if (options->at) {
        trace_cell cell;
        char reason[256] = "the lesson has no such stage";
        if (!trace_cell_parse(v->t, options->at, options->head ? options->head : 1, &cell,
                              reason, sizeof reason) || !ui_view_open_at(v, &cell)) {
            fprintf(stderr, "attnstep: --at '%s': %s\n", options->at, reason);
            return EXIT_STATUS_USAGE;
        }
        ui_view_reveal(v);   /* the place handed out is shown, not asked about */
    } else if (options->head > 0) {
        for (int i = 0; i < v->n_steps; i++)
            if (stage_get(v->steps[i].stage)->per_head && v->steps[i].head == options->head) {
                ui_view_goto(v, i);
                break;
            }
    }
    return EXIT_STATUS_OK;
}

/* While the help is shown the up and down keys scroll it, and any other key closes it. */
static void on_help_key(bool *shown, int *top, int key, unsigned context)
{
    int arg = 0;
    ui_action action = ui_key_action(key, context, &arg);
    if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_DOWN) (*top)++;
    else if (action == UI_ACT_MOVE && arg % 4 == UI_DIR_UP) *top = *top > 0 ? *top - 1 : 0;
    else { *shown = false; *top = 0; }
}

static void on_lesson_key(ui_view *v, int key, const ui_style *st, bool *quit)
{
    char label[32], help[32];
    int arg = 0;
    if (v->help) { on_help_key(&v->help, &v->help_top, key, UI_IN_LESSON); return; }
    /* A question waiting for its answer has keys of its own (its context in the table). */
    ui_action action = ui_key_action(key, ui_view_context(v), &arg);
    if (action == UI_ACT_NONE && v->summary) {   /* any key dismisses the score */
        *quit = !ui_view_apply(v, action, arg);
        return;
    }
    if (action == UI_ACT_NONE && ui_view_question_open(v)) {
        bool choice = ui_view_context(v) == UI_IN_CHOICE;
        snprintf(v->message, sizeof v->message, "%s: answer first (%s), %s skips",
                 ui_key_label(key, st->utf8, label, sizeof label),
                 choice ? "press a choice's number" : "type a number, then Enter",
                 ui_action_key(UI_ACT_SKIP, UI_IN_QUESTION, st, help, sizeof help));
        return;
    }
    if (action == UI_ACT_NONE) {
        snprintf(v->message, sizeof v->message, "%s does nothing here; %s lists the keys",
                 ui_key_label(key, st->utf8, label, sizeof label),
                 ui_action_key(UI_ACT_HELP, UI_IN_LESSON, st, help, sizeof help));
        return;
    }
    if (action == UI_ACT_REDRAW) clearok(curscr, TRUE);
    *quit = !ui_view_apply(v, action, arg);
}

/* Runs one lesson until it is quit or input ends, following its file: a tick looks at it, a
 * key script's reload looks now (or stands another file's text in for it). */
static void run_view(session *s, ui_opened **o, ui_view *v)
{
    ui_layout layout;
    ui_file_stamp seen = ui_file_stamp_of((*o)->l.path);
    bool changed = true;
    /* the key being timed: when it was read, its name and what it did */
    double key_read = 0;
    char key_name[32] = "";
    const char *kind = NULL;
    int top = 0, left = 0;
    for (bool quit = false; !quit;) {
        if (changed) {
            ui_draw_lesson(v, (*o)->l.title, &s->st, s->precision, &layout);
            refresh();
            time_first_frame(s);
        }
        if (kind && s->key_times) {
            /* a move that made the matrix scroll is told apart: it redraws every cell */
            bool scrolled = v->top != top || v->left != left;
            fprintf(s->key_times, "%s\t%s%s\t%lld\n", key_name, kind, scrolled ? "+scroll" : "",
                    changed ? micros_since(key_read) : 0LL);
        }
        kind = NULL;
        ui_event ev;
        if (!next_event(s, &ev)) return;
        if (s->key_times && ev.kind == UI_EV_KEY) {
            key_read = now_seconds();
            kind = key_kind(v, ev.key);
            char label[32];   /* the label may be a constant string, not the buffer given */
            snprintf(key_name, sizeof key_name, "%s",
                     ui_key_label(ev.key, false, label, sizeof label));
            top = v->top;
            left = v->left;
        }
        changed = true;
        int row, col, step;
        if (ev.kind == UI_EV_TICK || ev.kind == UI_EV_RELOAD) {
            changed = ui_lesson_follow(o, v, &seen, ev.file[0] ? ev.file : NULL);
            changed |= ev.kind == UI_EV_RELOAD;
        } else if (ev.kind == UI_EV_KEY) {
            on_lesson_key(v, ev.key, &s->st, &quit);
        } else if (ev.kind == UI_EV_CLICK && v->help) {
            v->help = false;   /* a click anywhere closes the help, like a key */
        } else if (ev.kind == UI_EV_CLICK && !v->summary) {
            /* while a question waits, its cell stays selected; the stage list still works */
            int hit = ui_layout_hit(&layout, v, ev.x, ev.y, &row, &col, &step);
            if (hit == 1 && !ui_view_question_open(v)) { v->row = row; v->col = col; }
            if (hit == 2) ui_view_goto(v, step);
        }
    }
}

/* Opens a traced lesson in a view placed by options; returns 0 or an exit status. */
static int run_lesson(session *s, ui_opened **o, const ui_options *placement)
{
    ui_view v;
    if (!ui_view_init(&v, &(*o)->t, (*o)->l.steps, (*o)->l.n_steps)) {
        fprintf(stderr, "attnstep: out of memory\n");
        return EXIT_STATUS_SOFTWARE;
    }
    int status = placement ? place_view(&v, placement) : 0;
    if (status == 0) {
        status = start_terminal(s, placement);
        if (status == 0) run_view(s, o, &v);
    }
    ui_view_free(&v);
    return status;
}

static void open_from_picker(session *s, ui_picker *p)
{
    if (p->count == 0) return;
    ui_opened *o = NULL;
    char error[sizeof p->message];
    if (ui_lesson_open(p->items[p->selected].path, NULL, 0, &o, false, error, sizeof error) != 0) {
        snprintf(p->message, sizeof p->message, "%s", error);
        return;
    }
    ui_view v;
    if (ui_view_init(&v, &o->t, o->l.steps, o->l.n_steps)) {
        run_view(s, &o, &v);
        ui_view_free(&v);
    } else {
        snprintf(p->message, sizeof p->message, "out of memory");
    }
    ui_lesson_close(o);
}

static int run_picker(session *s, const ui_options *options)
{
    ui_picker p;
    if (!ui_picker_scan(&p)) {
        ui_picker_free(&p);
        fprintf(stderr, "attnstep: out of memory while listing lessons\n");
        return EXIT_STATUS_SOFTWARE;
    }
    int status = start_terminal(s, options);
    for (bool draw = true; status == 0 && !s->stop;) {
        if (draw) {
            ui_picker_draw(&p, &s->st);
            refresh();
            time_first_frame(s);
        }
        ui_event ev;
        if (!next_event(s, &ev)) continue;
        draw = ev.kind != UI_EV_TICK && ev.kind != UI_EV_RELOAD;   /* no lesson file to follow */
        if (ev.kind == UI_EV_CLICK) {   /* a click selects a lesson; a second click opens it */
            int hit = ui_picker_hit(&p, ev.y);
            if (hit >= 0 && hit == p.selected) open_from_picker(s, &p);
            else if (hit >= 0) p.selected = hit;
        }
        if (ev.kind != UI_EV_KEY) continue;
        int arg;
        if (p.help) { on_help_key(&p.help, &p.help_top, ev.key, UI_IN_PICKER); continue; }
        ui_action action = ui_key_action(ev.key, UI_IN_PICKER, &arg);
        if (action == UI_ACT_OPEN) open_from_picker(s, &p);
        else if (!ui_picker_apply(&p, action, arg)) break;
    }
    ui_picker_free(&p);
    return status;
}

/* ---- the entry point ---- */

static int run(session *s, const ui_options *options)
{
    if (!options->lesson_path) return run_picker(s, options);
    ui_opened *o = NULL;
    char error[512];
    int status = ui_lesson_open(options->lesson_path, NULL, 0, &o, true, error, sizeof error);
    if (status != 0) return status;
    status = run_lesson(s, &o, options);
    ui_lesson_close(o);
    return status;
}

int ui_run(const ui_options *options)
{
    session s = {.precision = options->precision >= 0 ? options->precision : DEFAULT_PRECISION,
                 .headless = options->key_script != NULL, .started = now_seconds()};
    setlocale(LC_CTYPE, "");   /* wide characters; numbers stay in the "C" locale */
    s.st.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    if (s.headless) {
        char error[512];
        int status = ui_script_load(options->key_script, &s.script, &s.script_len, error, sizeof error);
        if (status != 0) {
            fprintf(stderr, "attnstep: %s\n", error);
            return status;
        }
    }
    const char *times = getenv("ATTNSTEP_KEY_TIMES");
    if (times && *times && !(s.key_times = fopen(times, "a"))) {
        fprintf(stderr, "attnstep: ATTNSTEP_KEY_TIMES: cannot open %s\n", times);
        free(s.script);
        return EXIT_STATUS_NO_INPUT;
    }
    pending_signal = 0;
    int status = run(&s, options);
    stop_terminal(&s);
    free(s.script);
    if (s.key_times) fclose(s.key_times);
    /* Ctrl-C, SIGTERM and SIGHUP end the UI like q, with the shell's status for the signal.
     * Exiting rather than re-raising lets a shell running "attnstep; next" go on to next. */
    return pending_signal ? 128 + (int)pending_signal : status;
}
