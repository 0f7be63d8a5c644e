/* Golden screens of the leader's two boxes (issue 25): the class's results (r) and the roster
 * (W), drawn headless on a curses screen in memory over the leader's lesson screen. A leader and
 * three followers run in this process on loopback, each a classroom screen around its own lesson
 * screen (ui_class_screen_new, as main builds them), driven by their keys and polls as the main
 * loop drives them: through cat_sat's two questions (a choice: 1 and 2, one follower skips it;
 * a number: 0.62, which is right for 0.6296 at ± 0.01, 0.6296 and 1), each revealed with Esc.
 * The boxes are compared with tests/screens/class/results.screen and roster.screen;
 * UPDATE_GOLDEN=1 rewrites them (make update-golden, through tests/check_golden_screens.sh).
 * The roster's seconds since a follower's last message depend on this machine's speed: they
 * are written 0. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include "ui.h"
#include "ui_curses.h"
#include "ui_edit.h"
#include "ui_keys.h"
#include "ui_lesson.h"
#include "ui_screen.h"
#include "number.h"
#include "ui_view.h"

#define LESSON "tests/screens/cat_sat.yaml"
#define CODE "0123456789abcdef"
enum { FOLLOWERS = 3, COLS_SHOWN = 80, ROWS_SHOWN = 24 };
static const unsigned long long HASH = 0x5eed5eed5eedULL;   /* every side holds one lesson */
static const char *const names[FOLLOWERS] = {"Ada", "Grace", "Linus"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* A classroom screen around a fresh lesson screen of LESSON; *v is the lesson's view. */
static ui_screen *class_screen(const ui_class_options *o, ui_view **v)
{
    ui_opened *opened = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open(LESSON, NULL, 0, NULL, NULL, &opened, false, error,
                                    sizeof error), EXIT_STATUS_OK);
    ui_screen *inner = ui_lesson_screen_new(opened);
    assert_non_null(inner);
    *v = ui_lesson_screen_view(inner);
    exit_status status;
    ui_screen *s = ui_class_screen_new(inner, o, HASH, true, &status);
    assert_non_null(s);
    return s;
}

typedef struct {
    ui_screen *leader, *follower[FOLLOWERS];
    ui_view *lead_view, *view[FOLLOWERS];
    int joined;   /* followers opened so far */
    int port;     /* where the leader listens */
} room;

static void poll_room(room *r)
{
    double now = now_s();
    ui_ending ending = {0};
    r->leader->ops->poll(r->leader, now, &ending);
    for (int i = 0; i < r->joined; i++) r->follower[i]->ops->poll(r->follower[i], now, &ending);
}

/* Polls the room until screen s is ready for the await, as a key script's "await" does. */
static void await_on(room *r, ui_screen *s, int what, int n)
{
    ui_event ev = {.kind = UI_EV_AWAIT, .key = what, .x = n};
    for (double deadline = now_s() + 20; !s->ops->ready(s, &ev, now_s()); nap()) {
        if (now_s() > deadline) fail_msg("await %d %d: not ready after 20 s", what, n);
        poll_room(r);
    }
    poll_room(r);
}

static const ui_style style = {.utf8 = true, .precision = 4};

/* Keys as the loop gives them: a screen that claims a key takes it (a follower's f). */
static void press(room *r, ui_screen *s, const char *keys)
{
    for (const char *k = keys; *k; k++) {
        if (s->ops->claim && s->ops->claim(s, *k, now_s())) continue;
        ui_outcome out = s->ops->key(s, *k, &style);
        assert_null(out.open);
        assert_int_equal(out.close, 0);
        poll_room(r);
    }
}

/* Opens one more follower, and waits until the leader counts it. */
static void join(room *r)
{
    char address[32];
    snprintf(address, sizeof address, "127.0.0.1:%d", r->port);
    int i = r->joined;
    ui_class_options o = {.follow = address, .code = CODE, .name = names[i]};
    r->follower[i] = class_screen(&o, &r->view[i]);
    r->joined++;
    await_on(r, r->leader, UI_AWAIT_JOINED, i + 1);
}

/* Opens the leader and `followers` followers in turn (the roster lists them in the order
 * they joined), all at the leader's first step. */
static void open_room_of(room *r, int followers)
{
    *r = (room){0};
    ui_class_options lead = {.lead = true, .listen = "127.0.0.1:0", .code = CODE};
    r->leader = class_screen(&lead, &r->lead_view);
    poll_room(r);
    const char *at = strstr(r->lead_view->message, "leading :");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "leading :%d", &r->port), 1);
    for (int i = 0; i < followers; i++) join(r);
    await_on(r, r->leader, UI_AWAIT_SYNCED, 0);
}

static void open_room(room *r)
{
    open_room_of(r, FOLLOWERS);
}

static void close_room(room *r)
{
    for (int i = 0; i < r->joined; i++) r->follower[i]->ops->close(r->follower[i]);
    r->leader->ops->close(r->leader);
}

/* The leader steps on (n) to its next question and waits for each follower to show it. */
static void next_question(room *r)
{
    do press(r, r->leader, "n");
    while (!ui_view_question_open(r->lead_view));
    for (int i = 0; i < FOLLOWERS; i++) await_on(r, r->follower[i], UI_AWAIT_QUESTION, 0);
}

/* ---- the memory screen ---- */

typedef struct { SCREEN *screen; FILE *out, *in; } memory_screen;

static void open_memory_screen(memory_screen *m)
{
    m->out = fopen("/dev/null", "w");
    m->in = fopen("/dev/null", "r");
    assert_true(m->out && m->in);
    m->screen = newterm("xterm-256color", m->out, m->in);
    assert_non_null(m->screen);
    set_term(m->screen);
    resizeterm(ROWS_SHOWN, COLS_SHOWN);
}

static void close_memory_screen(memory_screen *m)
{
    endwin();
    delscreen(m->screen);
    fclose(m->out);
    fclose(m->in);
}

/* Row y as UTF-8, trailing blanks dropped; a roster's seconds ("   12 s") as 0. */
static void row_text(int y, char *out, size_t size)
{
    size_t used = 0;
    for (int x = 0; x < COLS && used + 8 < size; x++) {
        cchar_t c;
        wchar_t text[CCHARW_MAX + 1] = {0};
        attr_t attrs;
        short pair;
        mvin_wch(y, x, &c);
        getcchar(&c, text, &attrs, &pair, NULL);
        int n = wctomb(out + used, text[0] ? text[0] : L' ');
        used += n > 0 ? (size_t)n : 0;
    }
    while (used > 0 && out[used - 1] == ' ') used--;
    out[used] = '\0';
    char *seconds = strstr(out, " s ");
    if (!seconds) seconds = strstr(out, " s\xe2\x94\x82");
    for (char *p = seconds; p && p > out && p[-1] >= '0' && p[-1] <= '9'; p--)
        p[-1] = p == seconds ? '0' : ' ';
}

/* Screen s with box over it (NULL: none), compared with (or, UPDATE_GOLDEN=1, written to)
 * the golden file. */
static void assert_drawn(ui_screen *s, ui_screen *box, const char *golden)
{
    erase();
    s->ops->draw(s, &style);
    if (box) box->ops->draw(box, &style);
    char screen[ROWS_SHOWN * (COLS_SHOWN * 4 + 2) + 1] = "", row[COLS_SHOWN * 4 + 8];
    for (int y = 0; y < LINES; y++) {
        row_text(y, row, sizeof row);
        strcat(strcat(screen, row), "\n");
    }
    const char *update = getenv("UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(golden, "w");
        assert_non_null(f);
        fputs(screen, f);
        assert_int_equal(fclose(f), 0);
        return;
    }
    FILE *f = fopen(golden, "r");
    if (!f) fail_msg("missing golden file %s (make update-golden, and read the diff)", golden);
    static char expected[sizeof screen + 1];
    size_t n = fread(expected, 1, sizeof expected - 1, f);
    expected[n] = '\0';
    fclose(f);
    if (strcmp(expected, screen) != 0)
        fail_msg("the screen differs from %s (if meant: make update-golden):\n%s", golden, screen);
}

/* The leader's screen with box over it, against the golden file. */
static void assert_screen(room *r, ui_screen *box, const char *golden)
{
    assert_drawn(r->leader, box, golden);
}

/* The box a leader's key opens over its lesson. */
static ui_screen *leader_box(room *r, int key)
{
    ui_outcome out = r->leader->ops->key(r->leader, key, &style);
    assert_non_null(out.open);
    return out.open;
}

static void test_results_and_roster(void **state)
{
    (void)state;
    memory_screen m;
    open_memory_screen(&m);
    room r;
    open_room(&r);
    next_question(&r);                            /* which key fits cat's query better */
    press(&r, r.follower[0], "1");                /* right */
    press(&r, r.follower[1], "2");                /* Linus does not answer: skipped */
    await_on(&r, r.leader, UI_AWAIT_ANSWERED, 2);
    press(&r, r.leader, "\x1b");                   /* Esc reveals */
    next_question(&r);                            /* cat's share of its own attention */
    press(&r, r.follower[0], "0.62\n");           /* right: within ± 0.01 of 0.6296 */
    press(&r, r.follower[1], "0.6296\n");
    press(&r, r.follower[2], "1\n");              /* written 1.0, as number.c writes it */
    await_on(&r, r.leader, UI_AWAIT_ANSWERED, 3);
    press(&r, r.leader, "\x1b");
    await_on(&r, r.leader, UI_AWAIT_SYNCED, 0);    /* every follower has the reveal */
    ui_screen *box = leader_box(&r, 'r');
    assert_screen(&r, box, "tests/screens/class/results.screen");
    box->ops->close(box);
    box = leader_box(&r, 'W');
    assert_screen(&r, box, "tests/screens/class/roster.screen");
    box->ops->close(box);
    close_room(&r);
    close_memory_screen(&m);
}

/* Issue 24, for a follower: p, n, ] and Tab during the leader's open question (those that
 * move it put it on its own), then f, bring it back to the question still asked: never
 * skipped, never answered, never its answer shown (no verdict, no "Answer:"), and the class
 * still waits for it. */
static void test_a_follower_comes_back_to_the_open_question(void **state)
{
    (void)state;
    memory_screen m;
    open_memory_screen(&m);
    room r;
    open_room(&r);
    next_question(&r);
    ui_view *v = r.view[0];
    int asked = v->step;
    number_format f = {.style = NUMBER_SHORT, .precision = 4};
    char verdict[256];
    /* at the question, n waits and ] and Tab are no keys of a question's bar; p moves it a step
     * back, on its own; from there ] opens the question's own matrix (back at the question,
     * on its own), and Tab would go to another head (cat_sat has one: it stays back) */
    static const struct { const char *keys; bool moves; } moves[] = {
        {"n", false}, {"]", false}, {"\t", false}, {"p", true}, {"p]", false}, {"p\t", true},
    };
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        press(&r, r.follower[0], moves[i].keys);
        if ((v->step != asked || v->off_script) != moves[i].moves)
            fail_msg("after %s the follower is at step %d (the question's %d)%s", moves[i].keys,
                     v->step + 1, asked + 1, v->off_script ? ", off the script" : "");
        press(&r, r.follower[0], "f");
        await_on(&r, r.follower[0], UI_AWAIT_QUESTION, 0);
        assert_int_equal(v->step, asked);
        assert_true(ui_view_question_open(v));
        assert_int_equal(ui_view_skipped(v), 0);
        ui_view_verdict(v, asked, &f, verdict, sizeof verdict);
        assert_string_equal(verdict, "");
        erase();
        r.follower[0]->ops->draw(r.follower[0], &style);
        bool question = false;
        for (int y = 0; y < LINES; y++) {
            char row[COLS_SHOWN * 4 + 8];
            row_text(y, row, sizeof row);
            question |= strncmp(row, "\xe2\x94\x80\xe2\x94\x80 question", 12) == 0;
            if (strstr(row, "Answer:") || strstr(row, "Right") || strstr(row, "Not quite"))
                fail_msg("after %s then f, the follower's screen tells the answer: %s",
                         moves[i].keys, row);
        }
        assert_true(question);   /* the question's bar, asking */
    }
    assert_int_equal(ui_view_waiting(v), asked);
    close_room(&r);
    close_memory_screen(&m);
}

/* ---- what if? in class (issue 29) ---- */

/* The edits a view holds: all of them, and of them the leader's. */
static int edits_held(const ui_view *v, int *from_leader)
{
    *from_leader = v->edits ? v->edits->from_leader : 0;
    return v->edits ? v->edits->count : 0;
}

/* Polls the room until follower i holds `count` edits, `from_leader` of them the leader's. */
static void await_edits(room *r, int i, int count, int from_leader)
{
    int mine, theirs;
    for (double deadline = now_s() + 20; edits_held(r->view[i], &theirs) != count
         || theirs != from_leader; nap()) {
        mine = edits_held(r->view[i], &theirs);
        if (now_s() > deadline)
            fail_msg("follower %d holds %d edits (%d the leader's), not %d (%d)", i, mine,
                     theirs, count, from_leader);
        poll_room(r);
    }
}

/* Polls the room until follower i holds the leader's one edit with this value. */
static void await_leader_value(room *r, int i, double value)
{
    for (double deadline = now_s() + 20; ; nap()) {
        const ui_edit *ed = r->view[i]->edits;
        if (ed && ed->from_leader == 1 && ed->done[0].e.value == value) return;
        if (now_s() > deadline) fail_msg("follower %d never took the leader's edit to %g", i, value);
        poll_room(r);
    }
}

/* The number behind the leader's selected input cell, as a view's lesson holds it. */
static double cell_value(const ui_view *v, int row, int col)
{
    return v->lesson->embeddings[(size_t)row * (size_t)v->lesson->input.d_model + (size_t)col];
}

/* Every number of every stage of a follower is the leader's, bit for bit (both hold the
 * same edits of the same lesson). */
static void assert_same_numbers(const ui_view *a, const ui_view *b)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (!trace_has_stage(a->t, (stage_id)s)) continue;
        int heads = stage_get((stage_id)s)->per_head ? a->t->heads : 1;
        for (int h = 1; h <= heads; h++)
            for (int i = 0; i < trace_rows(a->t, (stage_id)s); i++)
                for (int j = 0; j < trace_cols(a->t, (stage_id)s); j++) {
                    double x = trace_value(a->t, (stage_id)s, h, i, j);
                    double y = trace_value(b->t, (stage_id)s, h, i, j);
                    if (memcmp(&x, &y, sizeof x) != 0 && !(x != x && y != y))
                        fail_msg("%s[%d,%d] head %d: %.17g here, %.17g at the leader",
                                 stage_get((stage_id)s)->name, i, j, h, y, x);
                }
    }
}

/* The leader's edit reaches every follower, with its old value on the explanation line, and
 * the cells it changed further on marked (the golden screens); a follower's own edit stays its own, and on a cell both edit the
 * follower's number shows until it undoes its own; the leader's u reaches them; a follower
 * joining late gets the edits made before it came. */
static void test_the_leaders_edits_reach_the_class(void **state)
{
    (void)state;
    memory_screen m;
    open_memory_screen(&m);
    room r;
    open_room_of(&r, 2);
    int row = r.lead_view->row, col = r.lead_view->col;
    double written = cell_value(r.lead_view, row, col);
    press(&r, r.leader, "=0.5\n");                /* the selected input cell, to 0.5 */
    assert_true(cell_value(r.lead_view, row, col) == 0.5);
    for (int i = 0; i < 2; i++) await_edits(&r, i, 1, 1);
    await_on(&r, r.leader, UI_AWAIT_SYNCED, 0);
    for (int i = 0; i < 2; i++) {
        assert_true(cell_value(r.view[i], row, col) == 0.5);
        assert_same_numbers(r.lead_view, r.view[i]);
    }
    assert_drawn(r.follower[0], NULL, "tests/screens/class/follower_edit.screen");
    press(&r, r.leader, "nj");   /* Q, at sat: cat's cell the edit changed is marked */
    await_on(&r, r.leader, UI_AWAIT_SYNCED, 0);
    assert_drawn(r.follower[0], NULL, "tests/screens/class/follower_edit_marks.screen");
    press(&r, r.leader, "kp");
    await_on(&r, r.leader, UI_AWAIT_SYNCED, 0);
    /* Grace edits the same cell: hers shows, on top of the leader's; her u cannot undo his */
    press(&r, r.follower[1], "=0.25\n");
    assert_true(cell_value(r.view[1], row, col) == 0.25);
    await_edits(&r, 1, 2, 1);
    press(&r, r.leader, "=0.75\n");               /* the leader again: Grace keeps hers */
    await_leader_value(&r, 0, 0.75);
    assert_true(cell_value(r.view[0], row, col) == 0.75);
    await_leader_value(&r, 1, 0.75);
    await_edits(&r, 1, 2, 1);
    assert_true(cell_value(r.view[1], row, col) == 0.25);
    press(&r, r.follower[1], "U");                 /* her own undone: the leader's number */
    assert_true(cell_value(r.view[1], row, col) == 0.75);
    press(&r, r.follower[1], "u");
    assert_non_null(strstr(r.view[1]->message, "the leader's edits are the leader's"));
    assert_true(cell_value(r.view[1], row, col) == 0.75);
    /* a late joiner gets the edits made so far */
    join(&r);
    await_edits(&r, 2, 1, 1);
    assert_true(cell_value(r.view[2], row, col) == 0.75);
    assert_same_numbers(r.lead_view, r.view[2]);
    /* the leader's U reaches every follower: the lesson as written again */
    press(&r, r.leader, "U");
    for (int i = 0; i < 3; i++) {
        await_edits(&r, i, 0, 0);
        assert_true(cell_value(r.view[i], row, col) == written);
        assert_same_numbers(r.lead_view, r.view[i]);
    }
    close_room(&r);
    close_memory_screen(&m);
}

int main(void)
{
    setlocale(LC_CTYPE, "C.UTF-8");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_and_roster),
        cmocka_unit_test(test_a_follower_comes_back_to_the_open_question),
        cmocka_unit_test(test_the_leaders_edits_reach_the_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
