/* ui_run: opens the lesson (or the picker) and runs the stack of screens (ui_screen.h), on the
 * real terminal or, for tests, on an in-memory screen fed by a key script; the terminal is
 * restored on every way out. */
#include "ui_curses.h"
#include <assert.h>
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "exit_status.h"
#include "text.h"
#include "ui_matrix.h"
#include "ui_progress.h"
#include "ui_record.h"
#include "ui_replay.h"
#include "ui_screen.h"

#define DEFAULT_PRECISION 4
#define INPUT_WAIT_MS 250   /* how long a read waits before looking at pending signals, unless
                               a screen wants polling more often (ui_screen_ops.poll_ms) */
/* A replay's wait shorter than this is slept, not read through: a read that times out sooner
 * would look to next_terminal_event like a terminal that fails at once. */
#define REPLAY_MIN_READ_MS 30
#define AWAIT_LIMIT_S 60      /* a key script's "await" fails after this long */

typedef struct {
    ui_style st;
    bool headless;
    SCREEN *screen;
    FILE *term_out, *term_in;    /* headless: what curses sends (kept in a temporary file when
                                    the script counts clears, else /dev/null) */
    ui_script script;            /* the key script or the recording replayed */
    int script_pos, dumps;
    int instant_failures;        /* reads that failed at once, in a row */
    bool stop;                   /* input ended or a signal came: leave every loop */
    FILE *key_times;             /* $ATTNSTEP_KEY_TIMES opened for appending, or NULL */
    double started;              /* CLOCK_MONOTONIC seconds at ui_run's entry */
    bool first_frame_timed;
    /* --replay and --record (ui.h) */
    bool pace;                   /* the script's waits are waited */
    bool replaying;              /* on the terminal, until the script ends or is stopped */
    bool redraw;                 /* the replay ended: draw once more, without its label */
    ui_replay replay;
    ui_record record;            /* .f NULL when not recording */
    bool ran;                    /* the screens ran: the recording is kept */
    int recorded_lines;          /* events' lines written (two each at most), capped */
    double event_read;           /* when the event being handled was read */
    double last_recorded;        /* when the last event recorded was read (or the start) */
    /* what the screens on the stack ask of the loop (ui_screen_ops, its last part) */
    int wait_ms;                 /* how long a read waits for input */
    bool outlasts_script;        /* headless: the run goes on once the key script has ended */
    ui_ending ending;            /* why a screen, or a key script's await, ended the run */
} session;

/* Set from signal handlers: the signal to re-raise once the terminal is restored. */
static volatile sig_atomic_t pending_signal;
static volatile sig_atomic_t curses_active;
/* --record's temporary file while it is written, for a crash to remove. */
static const char *volatile record_temporary;

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
    if (record_temporary) unlink(record_temporary);   /* async-signal-safe: no half recording left */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Signals that end the UI like q, with the shell's status for them (128 + the signal). */
static const int quits[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
/* Every other signal whose default action ends the process: the terminal is restored, then
 * the signal is raised again with its default action, so the process ends as it would have. */
static const int ends[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGVTALRM, SIGPROF, SIGXCPU,
                           SIGXFSZ, SIGPOLL,
#ifdef SIGSTKFLT
                           SIGSTKFLT,
#endif
#ifdef SIGPWR
                           SIGPWR,
#endif
#ifdef SIGEMT
                           SIGEMT,
#endif
#ifdef SIGLOST
                           SIGLOST,
#endif
};

/* Whether sig is one of `ends`, or a real-time signal (each of which ends the process by
 * default; SIGRTMIN is a function call in glibc, so they cannot sit in the table). */
static bool is_an_end(int sig)
{
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (ends[i] == sig) return true;
#ifdef SIGRTMIN
    if (sig >= SIGRTMIN && sig <= SIGRTMAX) return true;
#endif
    return false;
}

/* After the terminal is restored: a signal of `ends` ends the process by its default action. */
static void raise_pending_end(void)
{
    int sig = (int)pending_signal;
    if (!sig || !is_an_end(sig)) return;
    fflush(stdout);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    static const int fatals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP};
    static bool registered;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;   /* no SA_RESTART: a blocked read returns at once */
    for (size_t i = 0; i < sizeof quits / sizeof quits[0]; i++) sigaction(quits[i], &sa, NULL);
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) sigaction(ends[i], &sa, NULL);
#ifdef SIGRTMIN
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaction(sig, &sa, NULL);
#endif
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
    if (fflush(stdout) != 0) s->stop = true;   /* main reports the failed write */
}

/* Occurrences of needle (n > 0 bytes) in the whole file fd, without overlaps; -1 if unread. */
static long count_in_file(int fd, const char *needle, size_t n)
{
    off_t end = lseek(fd, 0, SEEK_END);
    char *text = end > 0 ? malloc((size_t)end) : NULL;
    if (!text || pread(fd, text, (size_t)end, 0) != end) {
        free(text);
        return end == 0 ? 0 : -1;
    }
    long count = 0;
    for (size_t i = 0; i + n <= (size_t)end; i++)
        if (memcmp(text + i, needle, n) == 0) { count++; i += n - 1; }
    free(text);
    return count;
}

/* A key script's "clears": how many times curses has sent the terminal its clear-screen
 * sequence so far (the first frame, a full redraw such as Ctrl-L's), read back from the file
 * the headless terminal writes to, so a test can tell a redraw from a repaint of what changed.
 * Padding ("$<50>") is left out of the sequence: it is a delay, not bytes curses sends. */
static void write_clears(session *s)
{
    const char *cap = tigetstr("clear");
    char sequence[64];
    size_t n = 0;
    for (; cap && cap != (const char *)-1 && *cap && n + 1 < sizeof sequence; cap++) {
        const char *padding = cap[0] == '$' && cap[1] == '<' ? strchr(cap, '>') : NULL;
        if (padding) cap = padding;
        else sequence[n++] = *cap;
    }
    fflush(s->term_out);   /* curses writes to the descriptor; stdio may hold a part too */
    long count = n ? count_in_file(fileno(s->term_out), sequence, n) : -1;
    if (count < 0) printf("--- clears: cannot tell (TERM has no clear sequence, or no memory)\n");
    else printf("--- clears %ld\n", count);
    if (fflush(stdout) != 0) s->stop = true;   /* main reports the failed write */
}

/* ---- input ---- */

static void sleep_seconds(double seconds)
{
    if (seconds <= 0) return;
    struct timespec t = {.tv_sec = (time_t)seconds};
    t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
    while (nanosleep(&t, &t) != 0 && errno == EINTR && !pending_signal) {}
}

static bool next_script_event(session *s, ui_event *ev)
{
    while (s->script_pos < s->script.count) {
        *ev = ui_script_event(&s->script, s->script_pos++);
        if (ev->kind == UI_EV_DUMP) { dump_screen(s); continue; }
        if (ev->kind == UI_EV_CLEARS) { write_clears(s); continue; }
        if (ev->kind == UI_EV_WAIT) { if (s->pace) sleep_seconds(ev->ms / 1000.0); continue; }
        if (ev->kind == UI_EV_RESIZE) resizeterm(ev->y, ev->x);
        return true;
    }
    if (s->outlasts_script) {   /* a screen goes on after the script (a follower, until its
                                   class ends), polled at its pace */
        sleep_seconds(s->wait_ms / 1000.0);
        *ev = (ui_event){.kind = UI_EV_TICK};
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

/* ---- replaying on the terminal (--replay) ---- */

/* The replay's state and keys on the last row, in place of the key bar (whose keys wait
 * until the replay ends); left out when the row is too narrow. */
static void draw_replay_label(const session *s)
{
    if (!s->replaying) return;
    char pause[32], faster[32], slower[32], stop[32], text[160];
    bool u = s->st.utf8;
    snprintf(text, sizeof text, " %-6s x%-5g %s %-6s %s %s speed  %s take over ",
             s->replay.paused ? "paused" : "replay", ui_replay_speed(&s->replay),
             ui_action_key(UI_ACT_REPLAY_PAUSE, UI_IN_REPLAY, u, pause, sizeof pause),
             s->replay.paused ? "resume" : "pause",
             ui_action_key(UI_ACT_REPLAY_FASTER, UI_IN_REPLAY, u, faster, sizeof faster),
             ui_action_key(UI_ACT_REPLAY_SLOWER, UI_IN_REPLAY, u, slower, sizeof slower),
             ui_action_key(UI_ACT_REPLAY_STOP, UI_IN_REPLAY, u, stop, sizeof stop));
    if ((int)strlen(text) > COLS) return;   /* ASCII: one column a byte */
    move(LINES - 1, 0);
    clrtoeol();
    attron(A_REVERSE);
    addstr(text);
    attroff(A_REVERSE);
}

/* The recording's next event once its wait is over. Meanwhile the terminal's keys pause,
 * speed up, slow down or stop the replay (UI_IN_REPLAY; other keys and clicks are ignored,
 * so the demo goes on undisturbed), and the terminal's resizes and ticks pass; the
 * recording's own resizes and dumps are left out, as the viewer's terminal keeps its size.
 * When the recording ends or is stopped, the terminal is the user's again. */
static bool next_replay_event(session *s, ui_event *ev)
{
    while (s->script_pos < s->script.count) {
        ui_event next = ui_script_event(&s->script, s->script_pos);
        if (next.kind != UI_EV_WAIT) {
            s->script_pos++;
            if (next.kind == UI_EV_DUMP || next.kind == UI_EV_RESIZE) continue;
            *ev = next;
            return true;
        }
        if (!s->replay.waiting) ui_replay_wait(&s->replay, next.ms, now_seconds());
        double left = ui_replay_left(&s->replay, now_seconds());
        if (left >= 0 && left < REPLAY_MIN_READ_MS / 1000.0) {
            sleep_seconds(left);
            ui_replay_done(&s->replay);
            s->script_pos++;
            continue;
        }
        int wait_ms = s->wait_ms;
        bool long_wait = left < 0 || left > wait_ms / 1000.0;
        timeout(long_wait ? wait_ms : (int)(left * 1000));
        bool got = next_terminal_event(s, ev);
        timeout(wait_ms);
        if (!got) return false;
        if (ev->kind == UI_EV_RESIZE || ev->kind == UI_EV_TICK) return true;
        if (ev->kind != UI_EV_KEY) continue;
        ui_action action = ui_key_action(ev->key, UI_IN_REPLAY, NULL);
        if (action == UI_ACT_REPLAY_STOP) break;
        if (ui_replay_act(&s->replay, action, now_seconds())) {
            draw_replay_label(s);
            refresh();
        }
    }
    s->replaying = false;
    s->script_pos = s->script.count;
    s->redraw = true;
    *ev = (ui_event){.kind = UI_EV_TICK};
    return true;
}

/* The next key, click or resize. False when the script has ended or a signal asks to stop. */
static bool next_event(session *s, ui_event *ev)
{
    bool got = s->headless ? next_script_event(s, ev)
             : s->replaying ? next_replay_event(s, ev) : next_terminal_event(s, ev);
    if (!got) s->stop = true;
    s->event_read = now_seconds();
    return got;
}

/* ---- recording (--record) ---- */

/* Writes a key, click or resize the run handled, after the wait since the one before. */
static void record_event(session *s, const ui_event *handled)
{
    FILE *f = s->record.f;
    if (!f || (handled->kind != UI_EV_KEY && handled->kind != UI_EV_CLICK
                       && handled->kind != UI_EV_RESIZE)) return;
    /* a recording stays a key script --replay can load: two lines an event at most, the
     * two of the header and the note below within UI_SCRIPT_MAX_LINES */
    if (s->recorded_lines + 2 > UI_SCRIPT_MAX_LINES - 3) {
        if (s->recorded_lines <= UI_SCRIPT_MAX_LINES - 3)
            fprintf(f, "# the recording stops here: a key script holds at most %d lines\n",
                    UI_SCRIPT_MAX_LINES);
        s->recorded_lines = UI_SCRIPT_MAX_LINES;
        return;
    }
    s->recorded_lines += 2;
    ui_event ev = *handled;
    if (ev.kind == UI_EV_RESIZE) { ev.x = COLS; ev.y = LINES; }   /* the terminal's new size */
    char line[64];
    double ms = floor((s->event_read - s->last_recorded) * 1000);
    s->last_recorded = s->event_read;
    if (ms >= 1)
        fprintf(f, "wait %d\n", ms < UI_SCRIPT_MAX_WAIT_MS ? (int)ms : UI_SCRIPT_MAX_WAIT_MS);
    if (ui_script_format_event(&ev, line, sizeof line)) fputs(line, f);
    else fprintf(f, "# key %d has no name in key scripts\n", ev.key);
}

/* ---- the terminal ---- */

static bool script_counts_clears(const session *s)
{
    for (int i = 0; i < s->script.count; i++)
        if (s->script.steps[i].kind == UI_EV_CLEARS) return true;
    return false;
}

static exit_status start_terminal(session *s, const ui_options *o)
{
    if (s->headless) {
        /* what curses sends is kept only for a script that counts clears, so that the others
         * (and the key timings of make bench) write to /dev/null as a terminal would take it */
        s->term_out = script_counts_clears(s) ? tmpfile() : fopen("/dev/null", "w");
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
        fputs("attnstep: cannot start the terminal UI on TERM=", stderr);
        text_write_escaped(stderr, o->term ? o->term : "(unset)", false);
        fputc('\n', stderr);
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
    timeout(s->wait_ms);
    mouseinterval(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
    s->st.colors = ui_colors_init(o->color);
    ui_matrix_colors_init(s->st.colors);
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

/* ---- the stack of screens ---- */

/* A lesson over the picker, with an overlay over the lesson, is as deep as it gets. */
#define STACK_MAX 4

typedef struct {
    ui_screen *at[STACK_MAX];
    int n;
} stack;

static ui_screen *top_of(const stack *k)
{
    return k->n > 0 ? k->at[k->n - 1] : NULL;
}

static void push(stack *k, ui_screen *s)
{
    assert(k->n < STACK_MAX);
    s->under = top_of(k);
    k->at[k->n++] = s;
}

static void pop(stack *k)
{
    ui_screen *s = k->at[--k->n];
    s->ops->close(s);
}

static void settle(stack *k, ui_outcome out)
{
    for (int i = 0; i < out.close && k->n > 0; i++) pop(k);
    if (out.open) push(k, out.open);
}

static bool on_stack(const stack *k, const ui_screen *s)
{
    for (int i = 0; i < k->n; i++)
        if (k->at[i] == s) return true;
    return false;
}

/* Where the screen that fills the terminal is, under the overlays on top. */
static int base_index(const stack *k)
{
    int i = k->n - 1;
    while (i > 0 && k->at[i]->ops->overlay) i--;
    return i;
}

static ui_screen *base_of(const stack *k)
{
    return k->at[base_index(k)];
}

/* Draws the screen that fills the terminal, then the overlays over it, bottom up. */
static void draw_stack(const stack *k, const ui_style *st)
{
    if (ui_screen_too_small()) { ui_draw_too_small(st); return; }
    for (int i = base_index(k); i < k->n; i++) k->at[i]->ops->draw(k->at[i], st);
}

/* A tick or a reload: every screen that follows something looks at it. */
static bool follow_all(stack *k, const ui_event *ev)
{
    bool changed = false;
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->follow) changed |= k->at[i]->ops->follow(k->at[i], ev);
    return changed;
}

static unsigned long scroll_of(const ui_screen *s)
{
    return s->ops->scroll_mark ? s->ops->scroll_mark(s) : 0;
}

/* The key being timed (ATTNSTEP_KEY_TIMES): when it was read, its name and what it did, and
 * the screen it was pressed on with where that screen was scrolled. */
typedef struct {
    double read;
    char name[32];
    const char *kind;            /* NULL: no key to time */
    const ui_screen *base;
    unsigned long scroll;
} key_timing;

static void time_key_start(session *s, const stack *k, int key, key_timing *kt)
{
    const ui_screen *top = top_of(k);
    kt->kind = s->key_times && top->ops->key_kind ? top->ops->key_kind(top, key) : NULL;
    if (!kt->kind) return;
    kt->read = now_seconds();
    char label[32];   /* the label may be a constant string, not the buffer given */
    snprintf(kt->name, sizeof kt->name, "%s", ui_key_label(key, false, label, sizeof label));
    kt->base = base_of(k);
    kt->scroll = scroll_of(kt->base);
}

/* After the key's frame: one line, unless the key left the screen it was pressed on. */
static void time_key_end(session *s, const stack *k, bool drawn, key_timing *kt)
{
    if (kt->kind && on_stack(k, kt->base)) {
        bool scrolled = scroll_of(kt->base) != kt->scroll;
        fprintf(s->key_times, "%s\t%s%s\t%lld\n", kt->name, kt->kind, scrolled ? "+scroll" : "",
                drawn ? micros_since(kt->read) : 0LL);
    }
    kt->kind = NULL;
}

/* While "terminal too small" is shown nothing else is, so a key may act only if it quits or
 * redraws: moving unseen would surprise the user once the terminal grows. */
static bool ignored_while_too_small(int key)
{
    if (!ui_screen_too_small()) return false;
    int arg;
    ui_action action = ui_key_action(key, UI_IN_LESSON | UI_IN_PICKER, &arg);
    return action != UI_ACT_QUIT && action != UI_ACT_REDRAW;
}

/* ---- what the screens ask of the loop (the last part of ui_screen_ops) ---- */

/* The pace the stack asks for: a read waits the shortest poll_ms of its screens (INPUT_WAIT_MS
 * at most), and a headless run outlasts its script when a screen says so. */
static void take_pace(session *s, const stack *k)
{
    int wait = INPUT_WAIT_MS;
    bool outlasts = false;
    for (int i = 0; i < k->n; i++) {
        const ui_screen_ops *ops = k->at[i]->ops;
        if (ops->poll_ms > 0 && ops->poll_ms < wait) wait = ops->poll_ms;
        if (ops->outlasts_script) outlasts |= ops->outlasts_script(k->at[i]);
    }
    if (curses_active && wait != s->wait_ms) timeout(wait);
    s->wait_ms = wait;
    s->outlasts_script = outlasts;
}

/* Every screen that looks outside looks now; one may end the run. True: draw again. */
static bool poll_stack(session *s, stack *k)
{
    bool changed = false;
    double now = now_seconds();
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->poll) changed |= k->at[i]->ops->poll(k->at[i], now, &s->ending);
    if (s->ending.ended) s->stop = true;
    return changed;
}

/* Whether a screen on the stack takes the key before the top one has it. */
static bool claimed(stack *k, int key)
{
    double now = now_seconds();
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->claim && k->at[i]->ops->claim(k->at[i], key, now)) return true;
    return false;
}

/* Whether a screen has news; every one is asked, so that each forgets what it told. */
static bool news_on_stack(stack *k)
{
    bool news = false;
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->news) news |= k->at[i]->ops->news(k->at[i]);
    return news;
}

/* After a frame is drawn: headless, one with news is written out as a screen dump. */
static void dump_news(session *s, stack *k)
{
    if (news_on_stack(k) && s->headless) dump_screen(s);
}

/* Whether a key script's await has something to wait for (ready, when it has, says whether
 * every screen that awaits has what it waits for). */
static bool stack_awaits(const stack *k)
{
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->ready) return true;
    return false;
}

static bool stack_ready(stack *k, const ui_event *ev, double now)
{
    for (int i = 0; i < k->n; i++)
        if (k->at[i]->ops->ready && !k->at[i]->ops->ready(k->at[i], ev, now)) return false;
    return true;
}

/* A key script's "await": the stack is polled until what it waits for has come, or the run
 * ends; after AWAIT_LIMIT_S the run ends with status 70. A screen with news meanwhile is drawn
 * at once (a headless follower dumps each place of the leader's it takes). */
static void await_stack(session *s, stack *k, const ui_event *ev)
{
    if (!stack_awaits(k)) return;
    double deadline = now_seconds() + AWAIT_LIMIT_S;
    for (;;) {
        poll_stack(s, k);
        double now = now_seconds();
        if (stack_ready(k, ev, now) || s->stop) return;
        if (now > deadline) break;
        if (news_on_stack(k)) {
            draw_stack(k, &s->st);
            refresh();
            if (s->headless) dump_screen(s);
        }
        sleep_seconds(0.002);
    }
    s->ending = (ui_ending){.ended = true, .status = EXIT_STATUS_SOFTWARE};
    snprintf(s->ending.why, sizeof s->ending.why, "the key script's await timed out after %d s",
             AWAIT_LIMIT_S);
    s->stop = true;
}

/* ---- the main loop ---- */

/* Sends an event where it goes: true when the stack must be drawn again. */
static bool handle_event(session *s, stack *k, const ui_event *ev, key_timing *kt)
{
    ui_screen *top = top_of(k);
    if (ev->kind == UI_EV_AWAIT) {
        await_stack(s, k, ev);
    } else if (ev->kind == UI_EV_KEY && claimed(k, ev->key)) {
        /* a screen on the stack took it (a follower's f) */
    } else if (ev->kind == UI_EV_TICK || ev->kind == UI_EV_RELOAD) {
        bool draw = follow_all(k, ev) || s->redraw;
        s->redraw = false;
        return draw;
    } else if (ev->kind == UI_EV_KEY && ignored_while_too_small(ev->key)) {
        return false;
    } else if (ev->kind == UI_EV_KEY
               && ui_key_action(ev->key, top->ops->context(top), NULL) == UI_ACT_REDRAW) {
        /* the one place Ctrl-L is handled, whatever screen is on top: everything is drawn
         * again from scratch, and the screen keeps its state */
        time_key_start(s, k, ev->key, kt);
        clearok(curscr, TRUE);
    } else if (ev->kind == UI_EV_KEY) {
        time_key_start(s, k, ev->key, kt);
        settle(k, top->ops->key(top, ev->key, &s->st));
    } else if (ev->kind == UI_EV_CLICK && !ui_screen_too_small()) {
        settle(k, top->ops->click(top, ev->x, ev->y));
    }
    return true;
}

/* Runs the screens until the last one closes, input ends, a signal asks to stop or a screen
 * ends the run. */
static void run_stack(session *s, stack *k)
{
    key_timing kt = {0};
    for (bool draw = true; k->n > 0;) {
        if (draw) {
            draw_stack(k, &s->st);
            draw_replay_label(s);
            refresh();
            time_first_frame(s);
            dump_news(s, k);
        }
        time_key_end(s, k, draw, &kt);
        ui_event ev;
        if (s->stop || !next_event(s, &ev)) return;
        draw = handle_event(s, k, &ev, &kt);
        if (k->n == 0) break;
        record_event(s, &ev);   /* not the key that ends the run */
        draw |= poll_stack(s, k);
        take_pace(s, k);
    }
}

/* ---- the entry point ---- */

/* Where --at and --head open: a cell (ui_view_open_at: its question, if any, is asked, never
 * answered), or the first step of that head (off the script at the first stage that has
 * heads, when the script shows that head nowhere). */
static exit_status place_view(ui_view *v, const ui_options *options)
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
            fputs("attnstep: --at '", stderr);   /* both echo the argument: escaped */
            text_write_escaped(stderr, options->at, false);
            fputs("': ", stderr);
            text_write_escaped(stderr, reason, false);
            fputc('\n', stderr);
            return EXIT_STATUS_USAGE;
        }
    } else if (options->head > 0) {
        for (int k = 0; k < v->walk.count; k++)
            if (stage_get(v->walk.steps[k].stage)->per_head && v->walk.steps[k].head == options->head) {
                ui_view_goto(v, k);
                return EXIT_STATUS_OK;
            }
        for (int k = 0; k < v->pipeline.count; k++)
            if (stage_get(v->pipeline.steps[k].stage)->per_head) {
                ui_view_open_stage(v, v->pipeline.steps[k].stage, options->head);
                break;
            }
    }
    return EXIT_STATUS_OK;
}

/* The lesson given, with the student's saved progress, placed by --at and --head, and in its
 * class under --lead or --follow (main allows a class on a lesson only). NULL with the exit
 * status when it does not open. */
static ui_screen *open_lesson(const ui_options *options, const ui_record *record,
                              bool headless, exit_status *status)
{
    char error[512];
    ui_opened *o = NULL;
    if ((*status = ui_lesson_open(options->lesson_path, NULL, 0, &options->compute,
                                  &options->load, &o, true, error, sizeof error)) != EXIT_STATUS_OK)
        return NULL;
    for (int i = 0; i < o->l.n_data_files && *status == EXIT_STATUS_OK; i++)   /* --record */
        *status = ui_record_check(record, &(ui_record_input){o->l.data_files[i],
                                                              "a data file of the lesson"});
    if (*status != EXIT_STATUS_OK) { ui_lesson_close(o); return NULL; }
    ui_screen *screen = ui_lesson_screen_new(o);
    if (!screen) {
        fprintf(stderr, "attnstep: out of memory\n");
        *status = EXIT_STATUS_SOFTWARE;
        return NULL;
    }
    /* the saved answers, and the step where the student stopped unless told where */
    ui_view *v = ui_lesson_screen_view(screen);
    /* a recording and its replay start at the first step with no saved answers, and save
     * none, so that they play alike */
    if (!options->record && !options->replay) {
        o->state_dir = options->state_dir;
        ui_progress_open(o, v, !options->at && !options->head);
    }
    if ((*status = place_view(v, options)) != EXIT_STATUS_OK) {
        o->state_dir = NULL;   /* a mistyped --at must not overwrite the saved place */
        screen->ops->close(screen);
        return NULL;
    }
    const ui_class_options *class = &options->class;
    if (class->lead || class->follow)
        screen = ui_class_screen_new(screen, class, o->hash, headless, status);
    return screen;
}

/* The first screen: the lesson given (errors of --at and --head are told before the terminal
 * starts), two side by side, or the picker. NULL with the exit status when there is none. */
static ui_screen *first_screen(const ui_options *options, const ui_record *record,
                               bool headless, exit_status *status)
{
    char error[512];
    ui_screen *screen = NULL;
    if (options->lesson_path && !options->compare_path) return open_lesson(options, record, headless, status);
    if (!options->lesson_path) {
        screen = ui_picker_screen_new(options->lesson_folders, &options->compute,
                                      &options->load, options->state_dir);
        if (!screen) fprintf(stderr, "attnstep: out of memory while listing lessons\n");
    } else {   /* --compare: the first lesson leads */
        screen = ui_compare_screen_open(options->lesson_path, options->compare_path,
                                        &options->compute, &options->load,
                                        options->train_step, true, status, error, sizeof error);
        if (!screen && *status != EXIT_STATUS_SOFTWARE) return NULL;
        if (screen && (*status = place_view(ui_compare_screen_view(screen), options)) != EXIT_STATUS_OK) {
            screen->ops->close(screen);
            return NULL;
        }
        if (!screen) fprintf(stderr, "attnstep: out of memory\n");
    }
    if (!screen) *status = EXIT_STATUS_SOFTWARE;
    return screen;
}

static exit_status run(session *s, const ui_options *options)
{
    exit_status status = EXIT_STATUS_OK;
    stack k = {.n = 0};
    ui_screen *first = first_screen(options, &s->record, s->headless, &status);
    if (!first) return status;
    push(&k, first);
    take_pace(s, &k);
    status = start_terminal(s, options);
    s->last_recorded = now_seconds();
    s->ran = status == EXIT_STATUS_OK;
    if (s->ran) run_stack(s, &k);
    while (k.n > 0) pop(&k);
    if (s->ending.ended && s->ending.status != EXIT_STATUS_OK && status == EXIT_STATUS_OK)
        status = s->ending.status;
    return status;
}

/* --record's FILE checked against every input named on the command line, and opened. */
static exit_status open_record(ui_record *r, const ui_options *options)
{
    const ui_record_input inputs[] = {
        {options->lesson_path, "the lesson"},
        {options->compare_path, "the lesson compared (--compare)"},
        {options->key_script, "the key script"},
        {options->replay, "the recording replayed"},
        {options->key_times, "the ATTNSTEP_KEY_TIMES file"},
    };
    return ui_record_open(r, options->record, inputs, (int)(sizeof inputs / sizeof inputs[0]));
}

int ui_run(const ui_options *options)
{
    session s = {.st.precision = options->precision >= 0 ? options->precision : DEFAULT_PRECISION,
                 .headless = options->key_script != NULL, .started = now_seconds(),
                 .pace = options->replay != NULL,
                 .replaying = options->replay != NULL && options->key_script == NULL};
    const char *script = options->key_script ? options->key_script : options->replay;
    setlocale(LC_CTYPE, "");   /* wide characters; numbers stay in the "C" locale */
    s.st.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    s.st.present = options->present;
    ui_replay_init(&s.replay);
    if (script) {
        char error[512];
        exit_status status = ui_script_load(script, &s.script, error,
                                            sizeof error);
        if (status != EXIT_STATUS_OK) {   /* the message echoes the path or the line */
            fputs("attnstep: ", stderr);
            text_write_escaped(stderr, error, false);
            fputc('\n', stderr);
            return status;
        }
    }
    const char *times = options->key_times;
    if (times && *times && !(s.key_times = fopen(times, "a"))) {
        fputs("attnstep: ATTNSTEP_KEY_TIMES: cannot open ", stderr);
        text_write_escaped(stderr, times, false);
        fputc('\n', stderr);
        ui_script_free(&s.script);
        return EXIT_STATUS_NO_INPUT;
    }
    exit_status recording = options->record ? open_record(&s.record, options) : EXIT_STATUS_OK;
    if (recording != EXIT_STATUS_OK) {
        ui_script_free(&s.script);
        if (s.key_times) fclose(s.key_times);
        return recording;
    }
    record_temporary = s.record.temporary;
    pending_signal = 0;
    int status = run(&s, options);
    stop_terminal(&s);
    if (s.ending.ended && status != EXIT_STATUS_OK)   /* hex and fixed words: nothing to escape */
        fprintf(stderr, "attnstep: %s\n", s.ending.why);
    ui_script_free(&s.script);
    if (s.key_times) fclose(s.key_times);
    record_temporary = NULL;
    if (!ui_record_close(&s.record, s.ran) && status == EXIT_STATUS_OK)
        status = EXIT_STATUS_IO;
    raise_pending_end();
    /* Ctrl-C, SIGTERM and SIGHUP end the UI like q, with the shell's status for the signal.
     * Exiting rather than re-raising lets a shell running "attnstep; next" go on to next. */
    return pending_signal ? 128 + (int)pending_signal : status;
}
