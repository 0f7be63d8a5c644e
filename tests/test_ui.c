/* Unit tests of the UI's parts that need no terminal: the key table, key scripts, text
 * wrapping and the view model on the hand-worked cat/sat trace; and one headless ui_run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "fixtures.h"
#include "heat.h"
#include "ui.h"
#include "ui_curses.h"
#include "ui_edit.h"
#include "ui_keys.h"
#include "ui_lesson.h"
#include "ui_matrix.h"
#include "ui_progress.h"
#include "ui_screen.h"
#include "ui_text.h"
#include "ui_util.h"
#include "ui_view.h"

static const char *const three_tokens[] = {"bank", "of", "river"};
static const double three_embeddings[] = {1.0, 0.0, 0.5, -1.0, 0.0, 1.0, 0.0, 0.5,
                                          0.5, 0.5, 1.0, 0.0};
static const double identity4[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

/* The verdicts' numbers: four decimals, trailing zeros trimmed. */
static const number_format short4 = {NUMBER_SHORT, 4, 0, false};

/* The shared hand-worked example (tests/fixtures.c), under the name this file's tests use. */
static attention_input cat_sat_input(void)
{
    return fixture_cat_sat();
}

static attention_input two_head_input(void)
{
    return (attention_input){.n_tokens = 3, .tokens = three_tokens, .n_source = 3,
                             .d_model = 4, .heads = 2, .embeddings = three_embeddings,
                             .W_Q = identity4, .W_K = identity4, .W_V = identity4,
                             .W_O = identity4, .mask = MASK_NONE, .scale = true};
}

/* A trace of a shape and the view of it without a lesson (the walk is the pipeline), made by a
 * set_up_*_view and freed by tear_down_view, for the view tests that need nothing else. */
typedef struct {
    attention_input in;   /* here, not on set-up's stack: the trace points to its input */
    trace t;
    ui_view v;
} viewed;

static int set_up_view(void **state, attention_input in)
{
    viewed *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    /* a failed assertion fails the test here as in its body (f is then left: the run fails) */
    f->in = in;
    fixture_compute(&f->in, &f->t);
    assert_true(ui_view_init(&f->v, &f->t, NULL));
    *state = f;
    return 0;
}

static int set_up_cat_sat_view(void **state) { return set_up_view(state, cat_sat_input()); }
static int set_up_two_head_view(void **state) { return set_up_view(state, two_head_input()); }

static int tear_down_view(void **state)
{
    viewed *f = *state;
    ui_view_free(&f->v);
    trace_free(&f->t);
    free(f);
    return 0;
}

/* ---- the key table ---- */

/* Two bindings of one key that never apply together: one a leader's only, the other never a
 * leader's (Esc reveals for a leader, skips for anyone else). */
static bool leader_apart(const ui_binding *a, const ui_binding *b)
{
    unsigned both = a->contexts | b->contexts;
    return (both & UI_LEADER_ONLY) && (both & UI_NOT_LEADER)
        && ((a->contexts ^ b->contexts) & (UI_LEADER_ONLY | UI_NOT_LEADER)) == (UI_LEADER_ONLY | UI_NOT_LEADER);
}

/* Every stored block of two traces, bit for bit. */
static void assert_same_blocks(const trace *a, const trace *b)
{
    for (int s = 0; s < STAGE_COUNT; s++) {
        size_t bytes = trace_stage_bytes(a, (stage_id)s);
        assert_int_equal(bytes, trace_stage_bytes(b, (stage_id)s));
        if (bytes && memcmp(a->block[s], b->block[s], bytes) != 0)
            fail_msg("stage %s differs", stage_get((stage_id)s)->name);
    }
}

/* The lesson as --set would compute it: loaded, the edit texts applied, then traced. */
static void compute_with_set(const char *path, const char *const *edits, int count, lesson *l,
                             trace *t)
{
    lesson_diagnostics d;
    char error[512];
    assert_int_equal(lesson_load(path, l, &d), LESSON_OK);
    assert_int_equal(lesson_edits_apply(l, edits, count, error, sizeof error), LESSON_EDIT_OK);
    assert_int_equal(trace_compute(&l->input, NULL, t, NULL), TRACE_OK);
}

/* One edit on screen: = at a cell of stage, the value typed, Enter. */
static void edit_at(ui_edit *ed, ui_opened *o, ui_view *v, stage_id stage, int row, int col,
                    const char *value)
{
    ui_view_open_stage(v, stage, 1);
    v->row = row, v->col = col;
    assert_true(ui_edit_begin(ed, o, v));
    for (const char *c = value; *c; c++)
        ui_edit_key(ed, o, v, UI_ACT_TYPE, (int)(strchr(UI_EDIT_CHARS, *c) - UI_EDIT_CHARS));
    ui_edit_key(ed, o, v, UI_ACT_ANSWER, 0);
    assert_false(ed->open);
}

/* What if? on screen is --set: an edit recomputed in place from its first reader
 * (trace_recompute) gives every block bit for bit what the lesson loaded with the same edits
 * as --set computes afresh; each undo gives the lesson with the edits before it, U the lesson
 * as written; a changed cell says what it was, an unchanged one nothing. */
static void test_edits_on_screen_are_set(void **state)
{
    (void)state;
    const char *path = "tests/gradients/by_token.yaml";   /* weights, target, two heads */
    ui_opened *o;
    char error[512];
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, &o, false, error, sizeof error),
                     EXIT_STATUS_OK);
    ui_view v;
    assert_true(ui_view_init(&v, &o->t, &o->l));
    ui_edit ed = {0};
    edit_at(&ed, o, &v, STAGE_INPUT, 1, 2, "0.25");
    edit_at(&ed, o, &v, STAGE_OUTPUT, 0, 3, "-1.5e-1");   /* W_O[0,3] */
    edit_at(&ed, o, &v, STAGE_D_OUTPUT, 2, 0, "2");        /* the target */
    assert_int_equal(ed.count, 3);
    /* every matrix's extremes, measured when shown after the edits, are a fresh view's */
    ui_view fresh;
    assert_true(ui_view_init(&fresh, &o->t, &o->l));
    for (int i = 0; i < v.pipeline.count; i++) {
        int shown = v.shown;
        v.shown = i;
        const ui_range *r = ui_view_range(&v);
        v.shown = shown;
        if (memcmp(&r->lo, &fresh.range[i].lo, sizeof r->lo) != 0
            || memcmp(&r->hi, &fresh.range[i].hi, sizeof r->hi) != 0)
            fail_msg("%s head %d: extremes %g…%g, a fresh view's %g…%g",
                     stage_get(v.pipeline.steps[i].stage)->name, v.pipeline.steps[i].head, r->lo,
                     r->hi, fresh.range[i].lo, fresh.range[i].hi);
    }
    ui_view_free(&fresh);
    const char *edits[] = {"embeddings[b,2]=0.25", "W_O[0,3]=-1.5e-1", "target[c,0]=2"};
    for (int count = 3; count >= 0; count--) {
        lesson l;
        trace t;
        compute_with_set(path, edits, count, &l, &t);
        assert_same_blocks(&o->t, &t);
        trace_free(&t);
        lesson_free(&l);
        if (count > 1) ui_edit_undo(&ed, o, &v, false);
        else if (count == 1) ui_edit_undo(&ed, o, &v, true);
    }
    /* an edit whose numbers overflow is said and taken back: the lesson as it was */
    lesson l0;
    trace t0;
    compute_with_set(path, edits, 0, &l0, &t0);
    edit_at(&ed, o, &v, STAGE_OUTPUT, 0, 3, "1e300");   /* W_O[0,3] */
    assert_string_equal(v.message, "not set: a number grew too large to represent (overflow) in "
                        "loss");   /* the output is finite; its square is not */
    assert_int_equal(ed.count, 0);
    assert_same_blocks(&o->t, &t0);
    edit_at(&ed, o, &v, STAGE_INPUT, 1, 1, "1e300");    /* b's query and key: their product */
    assert_string_equal(v.message, "not set: a number grew too large to represent (overflow) in "
                        "scores");
    assert_int_equal(ed.count, 0);
    assert_same_blocks(&o->t, &t0);
    trace_free(&t0);
    lesson_free(&l0);
    edit_at(&ed, o, &v, STAGE_INPUT, 1, 2, "3");
    double was;
    assert_true(ui_edit_changed(&ed, &o->t, STAGE_INPUT, 1, 1, 2, &was));
    assert_true(was == -0.3);   /* b's embedding as written: input has no positions */
    assert_false(ui_edit_changed(&ed, &o->t, STAGE_INPUT, 1, 0, 0, &was));
    ui_edit_free(&ed);
    ui_view_free(&v);
    ui_lesson_close(o);
}

/* In a class without the network (ui_edit_cells, ui_edit_take_leader): the leader's cells are
 * each changed number once with its last value; a follower lays them under its own edit (a cell
 * both edit shows the follower's), its U undoes only its own, and the leader's empty list gives
 * the lesson as written: each time the numbers --set of the same edits, in that order, gives. */
static void test_leaders_edits_under_a_followers_own(void **state)
{
    (void)state;
    const char *path = "tests/gradients/by_token.yaml";
    ui_opened *lead, *follow;
    char error[512];
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, &lead, false, error, sizeof error),
                     EXIT_STATUS_OK);
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, &follow, false, error,
                                    sizeof error), EXIT_STATUS_OK);
    ui_view lv, fv;
    assert_true(ui_view_init(&lv, &lead->t, &lead->l));
    assert_true(ui_view_init(&fv, &follow->t, &follow->l));
    ui_edit led = {0}, fed = {0};
    edit_at(&led, lead, &lv, STAGE_Q, 0, 0, "1");      /* W_Q[0,0] */
    edit_at(&led, lead, &lv, STAGE_K, 0, 1, "3");      /* W_K[0,1] */
    edit_at(&led, lead, &lv, STAGE_Q, 0, 0, "2");      /* W_Q[0,0] again: its last value counts */
    lesson_edit cells[4];
    assert_int_equal(ui_edit_cells(&led, cells, 4), 2);
    assert_true(cells[0].kind == READ_PARAM && cells[0].id == PARAM_W_K && cells[0].value == 3);
    assert_true(cells[1].id == PARAM_W_Q && cells[1].row == 0 && cells[1].col == 0
                && cells[1].value == 2);
    lesson_edit one[1];
    assert_int_equal(ui_edit_cells(&led, one, 1), 2);  /* more than fit: how many there are */
    edit_at(&fed, follow, &fv, STAGE_Q, 0, 0, "5");    /* the follower's own, on the same cell */
    assert_true(ui_edit_take_leader(&fed, follow, &fv, cells, 2));
    assert_false(ui_edit_take_leader(&fed, follow, &fv, cells, 2));   /* held already */
    assert_int_equal(fed.count, 3);
    assert_int_equal(fed.from_leader, 2);
    const char *layered[] = {"W_K[0,1]=3", "W_Q[0,0]=2", "W_Q[0,0]=5"};
    for (int own = 1; own >= 0; own--) {   /* with its own on top, then U: the leader's alone */
        lesson l;
        trace t;
        compute_with_set(path, layered, 2 + own, &l, &t);
        assert_same_blocks(&follow->t, &t);
        trace_free(&t);
        lesson_free(&l);
        ui_edit_undo(&fed, follow, &fv, true);
    }
    assert_non_null(strstr(fv.message, "the leader's edits are the leader's to undo"));
    assert_true(ui_edit_take_leader(&fed, follow, &fv, cells, 0));   /* the leader's U */
    assert_int_equal(fed.count, 0);
    lesson l;
    trace t;
    compute_with_set(path, layered, 0, &l, &t);
    assert_same_blocks(&follow->t, &t);
    trace_free(&t);
    lesson_free(&l);
    ui_edit_free(&led);
    ui_edit_free(&fed);
    ui_view_free(&lv);
    ui_view_free(&fv);
    ui_lesson_close(lead);
    ui_lesson_close(follow);
}

/* An edit by parts, as the classroom's messages carry one (lesson_edit_make): checked as --set
 * checks it, each bad part refused with its message; a token's row by index, never by name. */
static void test_edits_by_parts_are_checked(void **state)
{
    (void)state;
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(lesson_load("lessons/bank_river.yaml", &l, &d), LESSON_OK);
    lesson_diagnostics_free(&d);
    static const struct {
        const char *name;
        int row, col;
        double value;
        lesson_edit_status status;
        const char *message;
    } cases[] = {
        {"W_Q", 9, 0, 1, LESSON_EDIT_ROW, "no such row: row 9 is out of range: W_Q has rows 0 to 3"},
        {"W_K", 0, 4, 1, LESSON_EDIT_COL,
         "no such column: column 4 is out of range: W_K has columns 0 to 3"},
        {"W_Q", -1, 0, 1, LESSON_EDIT_ROW, "no such row: row -1 is out of range: W_Q has rows 0 to 3"},
        {"embeddings", 5, 0, 1, LESSON_EDIT_ROW,
         "no such row: row 5 is out of range: embeddings has rows 0 to 4"},
        {"W_X", 0, 0, 1, LESSON_EDIT_NAME, "no such matrix: 'W_X'; did you mean 'W_Q'? this "
                                           "lesson's are embeddings, W_Q, W_K, W_V, W_O"},
        {"b_Q", 0, 0, 1, LESSON_EDIT_ABSENT, "this lesson has no such matrix: 'b_Q' is not given "
                                             "(a bias exists only where the lesson writes one)"},
        {"W_Q", 0, 0, NAN, LESSON_EDIT_NOT_FINITE,
         "the value is not a finite number: a lesson's numbers are finite doubles"},
        {"W_Q", 0, 0, -INFINITY, LESSON_EDIT_NOT_FINITE,
         "the value is not a finite number: a lesson's numbers are finite doubles"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lesson_edit e = {READ_NONE, -1, -1, -1, 0};
        char error[512] = "";
        assert_int_equal(lesson_edit_make(&l, cases[i].name, cases[i].row, cases[i].col,
                                          cases[i].value, &e, error, sizeof error),
                         cases[i].status);
        assert_string_equal(error, cases[i].message);
        assert_int_equal(e.kind, READ_NONE);   /* nothing made */
    }
    lesson_edit e;
    char error[64];
    assert_int_equal(lesson_edit_make(&l, "embeddings", 1, 3, -0.5, &e, error, sizeof error),
                     LESSON_EDIT_OK);
    assert_true(e.kind == READ_DATA && e.id == DATA_EMBEDDINGS && e.row == 1 && e.col == 3
                && e.value == -0.5);
    assert_string_equal(lesson_edit_matrix_name(&e), "embeddings");
    assert_int_equal(lesson_edit_make(&l, "W_O", 3, 2, 2, &e, error, sizeof error), LESSON_EDIT_OK);
    assert_true(e.kind == READ_PARAM && e.id == PARAM_W_O && e.row == 3 && e.col == 2);
    assert_string_equal(lesson_edit_matrix_name(&e), "W_O");
    lesson_free(&l);
}

static void test_no_key_is_bound_twice(void **state)
{
    (void)state;
    int count;
    const ui_binding *b = ui_bindings(&count);
    for (int i = 0; i < count; i++)
        for (const int *k = b[i].keys; *k; k++)
            for (int j = i + 1; j < count; j++)
                for (const int *l = b[j].keys; *l; l++)
                    if (*k == *l && (b[i].contexts & b[j].contexts & ~(unsigned)(UI_NOT_COMPARE | UI_LEADER_ONLY | UI_NOT_LEADER))
                        && !leader_apart(&b[i], &b[j])) {
                        print_error("key %d bound to bindings %d and %d\n", *k, i, j);
                        fail();
                    }
}

static void test_every_action_has_a_key_and_help(void **state)
{
    (void)state;
    int count;
    const ui_binding *b = ui_bindings(&count);
    for (int action = UI_ACT_QUIT; action < UI_ACT_COUNT; action++) {
        bool found = false;
        for (int i = 0; i < count; i++)
            if (b[i].action == (ui_action)action) {
                found = true;
                assert_non_null(b[i].help);
                assert_true(b[i].keys[0] != 0);
            }
        assert_true(found);
    }
}

static void test_keys_read_as_people_write_them(void **state)
{
    (void)state;
    int count, arg = 0;
    const ui_binding *b = ui_bindings(&count);
    char text[96];
    for (int i = 0; i < count; i++) {
        ui_binding_keys(&b[i], true, text, sizeof text);
        if (b[i].action == UI_ACT_HEAD_NUMBER) assert_string_equal(text, "1\xe2\x80\x93" "9");
        if (b[i].action == UI_ACT_PREV && (b[i].contexts & UI_IN_LESSON))
            assert_string_equal(text, "p Backspace PgUp");
        if (b[i].action == UI_ACT_TYPE && (b[i].contexts & UI_IN_EDIT))   /* what if? */
            assert_string_equal(text, "0\xe2\x80\x93" "9 . - e");
        if (b[i].action == UI_ACT_TYPE && (b[i].contexts & UI_IN_NUMBER)) {
            assert_string_equal(text, "0\xe2\x80\x93" "9 . -");
            ui_binding_bar_keys(&b[i], false, text, sizeof text);
            assert_string_equal(text, "0-9");
        }
        if (b[i].action == UI_ACT_NEXT) assert_string_equal(text, "n Space PgDn");
        if (b[i].action == UI_ACT_MOVE && (b[i].contexts & UI_IN_EDIT))   /* not hjkl: typed */
            assert_string_equal(text, "\xe2\x86\x90 \xe2\x86\x93 \xe2\x86\x91 \xe2\x86\x92");
        if (b[i].action == UI_ACT_MOVE && !(b[i].contexts & UI_IN_EDIT)) {
            assert_string_equal(text, "\xe2\x86\x90 \xe2\x86\x93 \xe2\x86\x91 \xe2\x86\x92 h j k l");
            ui_binding_bar_keys(&b[i], true, text, sizeof text);
            assert_string_equal(text, "\xe2\x86\x90\xe2\x86\x93\xe2\x86\x91\xe2\x86\x92");
            ui_binding_bar_keys(&b[i], false, text, sizeof text);
            assert_string_equal(text, "hjkl");
        }
    }
    assert_int_equal(ui_key_action('7', UI_IN_LESSON, &arg), UI_ACT_HEAD_NUMBER);
    assert_int_equal(arg + 1, 7);
    assert_int_equal(ui_key_action('\n', UI_IN_LESSON, NULL), UI_ACT_STEP_IN);
    assert_int_equal(ui_key_action('\n', UI_IN_PICKER, NULL), UI_ACT_OPEN);
    assert_int_equal(ui_key_action('n', UI_IN_PICKER, NULL), UI_ACT_NONE);
    assert_int_equal(ui_key_action('k', UI_IN_PICKER, &arg), UI_ACT_MOVE);
    assert_int_equal(arg % 4, UI_DIR_UP);
    /* a question's keys are their own context: digits answer, Backspace erases, n waits */
    assert_int_equal(ui_key_action('2', UI_IN_CHOICE, &arg), UI_ACT_CHOOSE);
    assert_int_equal(arg, 1);
    assert_int_equal(ui_key_action('.', UI_IN_NUMBER, &arg), UI_ACT_TYPE);
    assert_int_equal(UI_TYPED_CHARS[arg], '.');
    assert_int_equal(ui_key_action(127, UI_IN_NUMBER, NULL), UI_ACT_ERASE);
    assert_int_equal(ui_key_action('n', UI_IN_CHOICE, NULL), UI_ACT_NONE);
    assert_int_equal(ui_key_action('q', UI_IN_NUMBER, NULL), UI_ACT_QUIT);
}

/* Every binding's keys and help reach --help-keys and the man page. */
static void test_print_keys_lists_every_binding(void **state)
{
    (void)state;
    for (int man = 0; man < 2; man++) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        assert_non_null(f);
        ui_print_keys(f, man);
        fclose(f);
        int count;
        const ui_binding *b = ui_bindings(&count);
        for (int i = 0; i < count; i++) {
            char keys[128], line[512];
            ui_binding_keys(&b[i], false, keys, sizeof keys);
            if (man) {   /* troff writes '-' as "\-" */
                char escaped[256] = "";
                for (size_t k = 0, n = 0; keys[k] && n + 3 < sizeof escaped; k++) {
                    if (keys[k] == '-') escaped[n++] = '\\';
                    escaped[n++] = keys[k];
                    escaped[n] = '\0';
                }
                snprintf(line, sizeof line, ".TP\n.B \"%s\"\n", escaped);
            } else {
                snprintf(line, sizeof line, "  %-16s  %s%s\n", keys, b[i].help,
                         b[i].contexts & UI_NOT_COMPARE ? " (not in a comparison)" : "");
            }
            if (!strstr(text, line)) {
                print_error("missing from ui_print_keys(man=%d): %s\n", man, line);
                fail();
            }
            for (const char *k = keys; *k; k++) assert_true((unsigned char)*k < 0x80);
        }
        assert_non_null(strstr(text, man ? ".SS \"In a lesson\"\n" : "In a lesson:\n"));
        free(text);
    }
}

/* ---- key scripts ---- */

static void test_script_lines(void **state)
{
    (void)state;
    ui_event ev;
    char error[512];
    assert_int_equal(ui_script_parse_line("  # a comment\n", &ev, error, sizeof error), 0);
    assert_int_equal(ui_script_parse_line("\n", &ev, error, sizeof error), 0);
    assert_int_equal(ui_script_parse_line("G\n", &ev, error, sizeof error), 1);
    assert_int_equal(ev.key, 'G');
    assert_int_equal(ui_script_parse_line("Tab", &ev, error, sizeof error), 1);
    assert_int_equal(ev.key, '\t');
    assert_int_equal(ui_script_parse_line("pgdn", &ev, error, sizeof error), 1);
    assert_int_equal(ui_key_action(ev.key, UI_IN_LESSON, NULL), UI_ACT_NEXT);
    assert_int_equal(ui_script_parse_line("resize 40x12", &ev, error, sizeof error), 1);
    assert_int_equal(ev.kind, UI_EV_RESIZE);
    assert_int_equal(ev.x, 40);
    assert_int_equal(ev.y, 12);
    assert_int_equal(ui_script_parse_line("click 3 4", &ev, error, sizeof error), 1);
    assert_int_equal(ev.kind, UI_EV_CLICK);
    assert_int_equal(ui_script_parse_line("dump", &ev, error, sizeof error), 1);
    assert_int_equal(ev.kind, UI_EV_DUMP);
    assert_int_equal(ui_script_parse_line("reload", &ev, error, sizeof error), 1);
    assert_int_equal(ev.kind, UI_EV_RELOAD);
    assert_string_equal(ev.file, "");
    assert_int_equal(ui_script_parse_line("reload  a b.yaml \n", &ev, error, sizeof error), 1);
    assert_string_equal(ev.file, "a b.yaml");
    assert_int_equal(ui_script_parse_line("reloaded", &ev, error, sizeof error), -1);
    assert_int_equal(ui_script_parse_line("resize 40", &ev, error, sizeof error), -1);
    assert_int_equal(ui_script_parse_line("spaceship", &ev, error, sizeof error), -1);
    assert_non_null(strstr(error, "unknown key 'spaceship'"));
}

/* ---- text ---- */

static void test_wrap_breaks_at_spaces_and_newlines(void **state)
{
    (void)state;
    wchar_t w[128];
    ui_span lines[8];
    size_t n = ui_text_widen("one two three\nfour", true, w, 128);
    assert_int_equal(ui_text_wrap(w, n, 8, lines, 8), 3);
    assert_int_equal(lines[0].length, 7);   /* "one two" */
    assert_int_equal(lines[1].length, 5);   /* "three" */
    assert_int_equal(lines[2].length, 4);   /* "four" */
    n = ui_text_widen("abcdefghij", true, w, 128);
    assert_int_equal(ui_text_wrap(w, n, 4, lines, 8), 3);   /* a word longer than the line */
}

/* A text longer than the buffer is cut to capacity − 1 characters and its terminator, with
 * and without UTF-8 (the ASCII spelling of "·" is one more character to fit): nothing is
 * written past capacity, where the caller's next variable would be. */
static void test_widen_stays_within_its_capacity(void **state)
{
    (void)state;
    for (int utf8 = 0; utf8 < 2; utf8++) {
        wchar_t w[8];
        for (size_t i = 0; i < 8; i++) w[i] = L'#';
        assert_int_equal(ui_text_widen("abc\xc2\xb7" "defgh", utf8, w, 5), 4);
        assert_true(w[4] == L'\0');
        assert_true(w[5] == L'#' && w[6] == L'#');
    }
}

static void test_ascii_spelling_without_utf8(void **state)
{
    (void)state;
    wchar_t w[64];
    ui_text_widen("Q_h \xc2\xb7 K_h\xe1\xb5\x80 = \xe2\x88\x92\xe2\x88\x9e", false, w, 64);
    assert_true(wcscmp(w, L"Q_h * K_h^T = -inf") == 0);
    ui_text_widen("esc\x1b[31m", false, w, 64);   /* control characters never reach the screen */
    assert_true(wcscmp(w, L"esc [31m") == 0);
}

/* Wide characters take two columns, a combining accent none (LC_CTYPE is C.UTF-8 here). */
static void test_wide_and_combining_widths(void **state)
{
    (void)state;
    wchar_t w[64];
    size_t n = ui_text_widen("\xe9\x93\xb6\xe8\xa1\x8c", true, w, 64);   /* 银行 */
    assert_int_equal(ui_text_width(w, n), 4);
    n = ui_text_widen("cafe\xcc\x81", true, w, 64);                     /* e + U+0301 */
    assert_int_equal(n, 5);
    assert_int_equal(ui_text_width(w, n), 4);
    int used;
    assert_int_equal(ui_text_fit(w, n, 4, &used), 5);   /* the accent stays with its e */
    assert_int_equal(used, 4);
    n = ui_text_widen("cafe\xcc\x81", false, w, 64);   /* without UTF-8 the accent is left out */
    assert_true(wcscmp(w, L"cafe") == 0);
}

/* ---- the view model ---- */

static void test_walk_visits_every_stage_in_order(void **state)
{
    viewed *f = *state;
    ui_view *v = &f->v;
    const trace *t = &f->t;
    assert_int_equal(v->walk.count, 11);   /* input … output, no source_input without a source */
    assert_int_equal(ui_view_current(v)->stage, STAGE_INPUT);
    for (int i = 0; i < 7; i++) ui_view_apply(v, UI_ACT_NEXT, 0);
    assert_int_equal(ui_view_current(v)->stage, STAGE_WEIGHTS);
    assert_true(fabs(trace_value(t, STAGE_WEIGHTS, 1, 0, 0) - 0.6296) < 5e-5);
    assert_true(fabs(trace_value(t, STAGE_WEIGHTS, 1, 0, 1) - 0.3704) < 5e-5);
    ui_view_apply(v, UI_ACT_LAST, 0);
    assert_int_equal(ui_view_current(v)->stage, STAGE_OUTPUT);
    ui_view_apply(v, UI_ACT_NEXT, 0);
    assert_int_equal(v->step, 10);
    assert_string_equal(v->message, "this is the last step");
    ui_view_apply(v, UI_ACT_FIRST, 0);
    ui_view_apply(v, UI_ACT_PREV, 0);
    assert_int_equal(v->step, 0);
    assert_int_equal(ui_view_apply(v, UI_ACT_QUIT, 0), UI_VIEW_LEAVE);
}

static void test_step_into_fills_in_reading_order(void **state)
{
    ui_view *v = &((viewed *)*state)->v;
    ui_view_goto(v, walk_find(&v->walk, STAGE_SCORES, 1));
    ui_view_apply(v, UI_ACT_STEP_IN, 0);
    assert_true(v->stepped_in);
    assert_true(ui_view_is_filled(v, 0, 0));
    assert_false(ui_view_is_filled(v, 0, 1));
    const int order[][2] = {{0, 1}, {1, 0}, {1, 1}};
    for (int i = 0; i < 3; i++) {
        ui_view_apply(v, UI_ACT_NEXT, 0);
        assert_int_equal(v->row, order[i][0]);
        assert_int_equal(v->col, order[i][1]);
    }
    assert_false(ui_view_is_filled(v, 2, 0));
    ui_view_apply(v, UI_ACT_PREV, 0);
    assert_int_equal(v->row * 2 + v->col, 2);
    ui_view_apply(v, UI_ACT_STEP_OUT, 0);
    assert_false(v->stepped_in);
    assert_true(ui_view_is_filled(v, 1, 1));
    assert_int_equal(ui_view_current(v)->stage, STAGE_SCORES);   /* stepping stayed inside */
}

static void test_heads_are_sub_steps_and_tab_switches(void **state)
{
    (void)state;
    attention_input in = two_head_input();
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));   /* no script: the walk is the pipeline */
    assert_int_equal(v.walk.count, 4 + 5 * 2 + 2);
    ui_view_goto(&v, walk_find(&v.walk, STAGE_WEIGHTS, 2));
    ui_view_apply(&v, UI_ACT_HEAD_NEXT, 0);   /* wraps round to head 1, on the walk */
    assert_false(v.off_script);
    assert_int_equal(v.step, walk_find(&v.walk, STAGE_WEIGHTS, 1));
    ui_view_free(&v);
    lesson_step narration[] = {
        {.stage = STAGE_WEIGHTS, .head = 2, .focus_row = 0, .focus_col = 2, .say = "bank, river"},
    };
    lesson l = {.steps = narration, .n_steps = 1};
    assert_true(ui_view_init(&v, &t, &l));
    assert_int_equal(v.walk.count, 1);   /* the script: one step */
    int row, col;
    assert_true(ui_view_focus(&v, 0, &row, &col));
    assert_int_equal(col, 2);
    assert_string_equal(ui_view_here(&v)->say, "bank, river");
    assert_int_equal(v.row, 0);   /* the narration's focus selects its cell */
    assert_int_equal(v.col, 2);
    ui_view_apply(&v, UI_ACT_HEAD_NEXT, 0);   /* wraps round to head 1: off the script */
    assert_true(v.off_script);
    assert_null(ui_view_here(&v));
    assert_int_equal(ui_view_current(&v)->head, 1);
    assert_int_equal(ui_view_current(&v)->stage, STAGE_WEIGHTS);
    assert_int_equal(v.col, 2);   /* the same cell */
    ui_view_apply(&v, UI_ACT_HEAD_NUMBER, 1);   /* the key 2: the script's own step again */
    assert_false(v.off_script);
    assert_int_equal(ui_view_current(&v)->head, 2);
    ui_view_apply(&v, UI_ACT_HEAD_NUMBER, 2);
    assert_string_equal(v.message, "no head 3: this lesson has 2 heads");
    ui_view_open_stage(&v, STAGE_INPUT, 1);
    assert_true(v.off_script);
    ui_view_apply(&v, UI_ACT_HEAD_NEXT, 0);
    assert_string_equal(v.message, "input is one matrix for all heads");
    trace_cell cell;
    char error[128];
    assert_true(trace_cell_parse(&t, "scores[of,bank]", 2, &cell, error, sizeof error));
    assert_true(ui_view_open_at(&v, &cell));   /* not in the script: off it, the cell selected */
    assert_true(v.off_script);
    assert_int_equal(ui_view_current(&v)->stage, STAGE_SCORES);
    assert_int_equal(ui_view_current(&v)->head, 2);
    assert_int_equal(v.row, 1);
    assert_int_equal(v.col, 0);
    ui_view_free(&v);
    trace_free(&t);
}

/* The step list opens any stage off the script; n goes on to the step after the one left, p
 * back to it; the script's steps keep their numbers. */
static void test_off_the_script_and_back(void **state)
{
    (void)state;
    attention_input in = two_head_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[] = {
        {.stage = STAGE_WEIGHTS, .head = 1, .focus_row = -1, .focus_col = -1, .say = "first"},
        {.stage = STAGE_SCORES, .head = 2, .focus_row = 2, .focus_col = 0, .say = "second"},
        {.stage = STAGE_WEIGHTS, .head = 1, .focus_row = -1, .focus_col = -1, .say = "third"},
    };
    lesson l = {.steps = narration, .n_steps = 3};
    ui_view v;
    assert_true(ui_view_init(&v, &t, &l));
    assert_int_equal(v.walk.count, 3);   /* the author's order, the revisit kept */
    assert_int_equal(v.walk.steps[1].stage, STAGE_SCORES);
    assert_string_equal(ui_view_here(&v)->say, "first");
    ui_view_apply(&v, UI_ACT_STAGE_NEXT, 0);   /* ] the pipeline's next: weights, head 2 */
    assert_true(v.off_script);
    assert_int_equal(ui_view_current(&v)->stage, STAGE_WEIGHTS);
    assert_int_equal(ui_view_current(&v)->head, 2);
    ui_view_apply(&v, UI_ACT_STAGE_PREV, 0);   /* [ back: the step left, on the script */
    assert_false(v.off_script);
    assert_int_equal(v.step, 0);
    ui_view_open_stage(&v, STAGE_V, 1);
    assert_true(v.off_script);
    assert_int_equal(v.step, 0);
    assert_int_equal(ui_view_current(&v)->stage, STAGE_V);
    assert_null(ui_view_here(&v));
    ui_view_apply(&v, UI_ACT_NEXT, 0);   /* on to step 2 */
    assert_false(v.off_script);
    assert_int_equal(v.step, 1);
    assert_string_equal(ui_view_here(&v)->say, "second");
    ui_view_open_stage(&v, STAGE_OUTPUT, 1);
    ui_view_apply(&v, UI_ACT_PREV, 0);   /* back to step 2 itself */
    assert_false(v.off_script);
    assert_int_equal(v.step, 1);
    ui_view_apply(&v, UI_ACT_LAST, 0);
    ui_view_open_stage(&v, STAGE_OUTPUT, 1);
    assert_int_equal(ui_view_apply(&v, UI_ACT_NEXT, 0), UI_VIEW_STAY);   /* no step after 3 */
    assert_false(v.off_script);
    assert_int_equal(v.step, 2);
    ui_view_free(&v);
    trace_free(&t);
}

/* A script of three steps with a choice question at the second (weights[bank,bank], head 1):
 * scores, the question, then `third` focused on column third_col. */
static char *bank_choices[] = {"bank", "river"};
static void question_script(lesson_step steps[3], stage_id third, int third_col)
{
    steps[0] = (lesson_step){.stage = STAGE_SCORES, .head = 1, .focus_row = 0, .focus_col = 0,
                             .say = "one"};
    steps[1] = (lesson_step){.stage = STAGE_WEIGHTS, .head = 1, .focus_row = 0, .focus_col = 0,
                             .say = "two", .ask = "Which?", .n_choices = 2,
                             .choices = bank_choices, .answer_choice = 0};
    steps[2] = (lesson_step){.stage = third, .head = 1, .focus_row = 0, .focus_col = third_col,
                             .say = "three"};
}

/* --at: the first step at the cell's stage, head and focus; else the first at its stage and
 * head; else the stage off the script, before step 1. A question there is asked, never
 * answered; leaving it open (p, the step list) leaves it asked. */
static void test_at_lands_where_it_says(void **state)
{
    (void)state;
    attention_input in = two_head_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[3];
    question_script(narration, STAGE_WEIGHTS, 2);
    lesson l = {.steps = narration, .n_steps = 3};
    ui_view v;
    assert_true(ui_view_init(&v, &t, &l));
    trace_cell cell;
    char error[128];
    assert_true(trace_cell_parse(&t, "weights[bank,river]", 1, &cell, error, sizeof error));
    assert_true(ui_view_open_at(&v, &cell));   /* the step focused on it, past the question */
    assert_int_equal(v.step, 2);
    assert_int_equal(v.state[1].question, UI_Q_OPEN);   /* not skipped by passing over it */
    assert_true(trace_cell_parse(&t, "weights[of,of]", 1, &cell, error, sizeof error));
    assert_true(ui_view_open_at(&v, &cell));   /* no step focuses it: the first weights step */
    assert_int_equal(v.step, 1);
    assert_true(ui_view_question_open(&v));    /* asked, not answered */
    assert_false(ui_view_marks_selection(&v));
    assert_int_equal(v.row * 3 + v.col, 4);    /* the cell selected, for after the answer */
    ui_view_apply(&v, UI_ACT_PREV, 0);         /* leaving it open leaves it asked */
    assert_int_equal(v.state[1].question, UI_Q_OPEN);
    assert_int_equal(ui_view_skipped(&v), 0);
    ui_view_apply(&v, UI_ACT_NEXT, 0);         /* and back: still asked */
    assert_true(ui_view_question_open(&v));
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(asked, 0);
    ui_view_free(&v);
    assert_true(ui_view_init(&v, &t, &l));
    ui_view_goto(&v, 1);
    ui_view_open_stage(&v, STAGE_V, 1);        /* the step list too */
    assert_int_equal(v.state[1].question, UI_Q_OPEN);
    assert_true(trace_cell_parse(&t, "V[river,3]", 1, &cell, error, sizeof error));
    assert_true(ui_view_open_at(&v, &cell));   /* not in the script: off it, before step 1 */
    assert_true(v.off_script);
    assert_true(v.before_step);
    assert_int_equal(v.row * 4 + v.col, 11);
    ui_view_apply(&v, UI_ACT_NEXT, 0);
    assert_false(v.off_script);
    assert_int_equal(v.step, 0);
    ui_view_free(&v);
    trace_free(&t);
}

static void test_scrolling_keeps_the_selection_visible(void **state)
{
    ui_view *v = &((viewed *)*state)->v;
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_DOWN);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_DOWN);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_RIGHT);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_RIGHT);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_RIGHT);
    ui_view_scroll(v, 2, 2);
    assert_int_equal(v->top, 1);
    assert_int_equal(v->left, 2);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_UP);
    ui_view_apply(v, UI_ACT_MOVE, UI_DIR_UP);
    ui_view_scroll(v, 2, 2);
    assert_int_equal(v->top, 0);
}

/* ---- questions ---- */

static char *choice_names[] = {"cat", "sat"};

/* cat_sat with a choice question on weights[cat,cat] and a numeric one on scores[cat,sat]. */
static void question_narration(lesson_step out[2])
{
    out[0] = (lesson_step){.stage = STAGE_SCORES, .head = 1, .focus_row = 0, .focus_col = 1,
                           .say = "cat against sat", .ask = "What is scores[cat,sat]?",
                           .answer_choice = -1, .answer = 0.5, .tolerance = 0.005};
    out[1] = (lesson_step){.stage = STAGE_WEIGHTS, .head = 1, .focus_row = 0, .focus_col = 0,
                           .say = "softmax", .ask = "Which word will cat look at most?",
                           .n_choices = 2, .choices = choice_names, .answer_choice = 0};
}

/* Presses a key as the UI would: through the key table, in the view's context. */
static ui_view_outcome press(ui_view *v, int key)
{
    int arg = 0;
    ui_action action = ui_key_action(key, ui_view_context(v), &arg);
    return ui_view_apply(v, action, arg);
}

static void test_choice_question_hides_then_judges(void **state)
{
    (void)state;
    attention_input in = cat_sat_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[2];
    question_narration(narration);
    lesson l = {.steps = narration, .n_steps = 2};
    ui_view v;
    assert_true(ui_view_init(&v, &t, &l));
    int weights = walk_find(&v.walk, STAGE_WEIGHTS, 1);
    ui_view_goto(&v, weights);
    assert_int_equal(ui_view_context(&v), UI_IN_CHOICE);
    assert_false(ui_view_is_filled(&v, 0, 0));   /* no number before the answer */
    press(&v, 'n');                               /* n does not skip the question */
    assert_int_equal(v.step, weights);
    press(&v, '3');
    assert_string_equal(v.message, "no choice 3: pick 1 to 2");
    press(&v, '2');                               /* sat: wrong */
    assert_int_equal(ui_view_context(&v), UI_IN_LESSON);
    assert_true(ui_view_is_filled(&v, 0, 0));
    char text[256];
    ui_view_verdict(&v, weights, &short4, text, sizeof text);
    assert_string_equal(text, "Not quite: the answer is cat (0.6296); sat gets 0.3704");
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(right * 100 + asked * 10 + questions, 12);
    press(&v, 'p');   /* back and forth: answered stays answered, counted once */
    assert_int_equal(ui_view_context(&v), UI_IN_NUMBER);   /* step 1 asks now... */
    press(&v, 'n');
    assert_int_equal(v.step, weights - 1);   /* ...and n does not pass it unanswered */
    press(&v, 27);
    press(&v, 'n');
    assert_int_equal(ui_view_context(&v), UI_IN_LESSON);
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(asked, 1);
    assert_int_equal(press(&v, 'q'), UI_VIEW_SCORE_LEAVE);   /* the score first, then leave */
    ui_view_free(&v);
    trace_free(&t);
}

/* An open question stays asked (issue 24): p, n, ], [, Tab and the step list move away and
 * back without skipping it or showing its answer, and no key goes past it unanswered. */
static void test_question_stays_asked(void **state)
{
    (void)state;
    attention_input in = two_head_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[3];
    question_script(narration, STAGE_CONTEXT, 0);
    lesson l = {.steps = narration, .n_steps = 3};
    ui_view v;
    char text[256];
    assert_true(ui_view_init(&v, &t, &l));
    assert_int_equal(ui_view_waiting(&v), -1);   /* not asked until shown */
    press(&v, 'n');
    assert_true(ui_view_question_open(&v));
    assert_int_equal(ui_view_waiting(&v), 1);
    press(&v, 'p');                              /* away... */
    assert_int_equal(v.step, 0);
    ui_view_verdict(&v, 1, &short4, text, sizeof text);
    assert_string_equal(text, "");               /* no "Answer: ..." */
    press(&v, 'n');                              /* ...and back: asked, unanswered */
    assert_true(ui_view_question_open(&v));
    press(&v, 'p');
    press(&v, '\t');                            /* another head's scores: allowed */
    assert_true(v.off_script);
    assert_int_equal(ui_view_current(&v)->head, 2);
    press(&v, ']');                              /* head 2's weights: not the question's */
    assert_true(v.off_script);
    press(&v, '[');
    press(&v, '[');                              /* head 1's scores, the step left */
    assert_false(v.off_script);
    ui_view_open_stage(&v, STAGE_WEIGHTS, 1);    /* the question's matrix is the question */
    assert_false(v.off_script);
    assert_true(ui_view_question_open(&v));
    press(&v, 'p');
    ui_view_open_stage(&v, STAGE_CONTEXT, 1);    /* made from its weights: refused */
    assert_int_equal(v.step, 0);
    assert_false(v.off_script);
    assert_string_equal(v.message, "step 2 asks first: answer it there (Esc skips it)");
    press(&v, 'G');                              /* the last step: held at the question */
    assert_int_equal(v.step, 1);
    assert_true(ui_view_question_open(&v));
    assert_int_equal(ui_view_skipped(&v), 0);
    press(&v, 27);                               /* only its own key skips it */
    assert_int_equal(ui_view_skipped(&v), 1);
    assert_int_equal(ui_view_waiting(&v), -1);
    press(&v, 'n');
    assert_int_equal(v.step, 2);
    ui_view_free(&v);
    trace_free(&t);
}

/* Fair grading (issue 24): a number is judged against the true value, the focus cell
 * (0.6296), not the rounded key the lesson writes (0.63): 0.62 is within ± 0.01 of it. The
 * bar states the precision, the verdict the true value and the tolerance. */
static void test_number_judged_against_the_true_value(void **state)
{
    (void)state;
    attention_input in = cat_sat_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[] = {
        {.stage = STAGE_WEIGHTS, .head = 1, .focus_row = 0, .focus_col = 0, .say = "softmax",
         .ask = "What share of its attention will cat give to itself?", .answer_choice = -1,
         .answer = 0.63, .tolerance = 0.01},
    };
    lesson l = {.steps = narration, .n_steps = 1};
    ui_view v;
    char text[256];
    double truth, tolerance;
    assert_true(ui_view_init(&v, &t, &l));
    assert_true(ui_view_number_key(&v, 0, &truth, &tolerance));
    assert_true(truth == trace_value(&t, STAGE_WEIGHTS, 1, 0, 0));   /* the cell, bit for bit */
    ui_view_precision(&v, 0, &short4, text, sizeof text);
    assert_string_equal(text, "two decimals, within ± 0.01 counts");
    for (const char *k = "0.62\n"; *k; k++) press(&v, *k);
    ui_view_verdict(&v, 0, &short4, text, sizeof text);
    assert_string_equal(text, "Right: cat gives 0.6296 of its attention to cat; 0.62 is within "
                              "± 0.01");
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(right, 1);
    v.state[0] = (ui_step_state){UI_Q_ANSWERED, -1, 0.6406};   /* 0.0110 off the cell */
    ui_view_verdict(&v, 0, &short4, text, sizeof text);
    assert_string_equal(text, "Not quite: cat gives 0.6296 of its attention to cat; 0.6406 is "
                              "not within ± 0.01");
    narration[0].tolerance = 0.005;   /* the default: half a unit of two decimals */
    ui_view_precision(&v, 0, &short4, text, sizeof text);
    assert_string_equal(text, "two decimals, within ± 0.005 counts");
    ui_view_free(&v);
    trace_free(&t);
}

static void test_numeric_question_typed_and_right(void **state)
{
    (void)state;
    attention_input in = cat_sat_input();
    trace t;
    fixture_compute(&in, &t);
    lesson_step narration[2];
    question_narration(narration);
    lesson l = {.steps = narration, .n_steps = 2};
    ui_view v;
    assert_true(ui_view_init(&v, &t, &l));
    int scores = walk_find(&v.walk, STAGE_SCORES, 1);
    ui_view_goto(&v, scores);
    assert_int_equal(ui_view_context(&v), UI_IN_NUMBER);
    press(&v, '\n');
    assert_string_equal(v.message, "type a number first");
    const char keys[] = "-9-.5..";
    for (const char *k = keys; *k; k++) press(&v, *k);
    assert_string_equal(v.typed, "-9.5");
    for (int i = 0; i < 4; i++) press(&v, 127);
    press(&v, '.');
    press(&v, '5');
    press(&v, '\n');
    char text[256];
    ui_view_verdict(&v, scores, &short4, text, sizeof text);
    assert_string_equal(text, "Right: scores[cat,sat] = 0.5; 0.5 is within ± 0.005");
    /* Esc on the other question (the last step) reveals it, unscored */
    ui_view_goto(&v, walk_find(&v.walk, STAGE_WEIGHTS, 1));
    assert_int_equal(v.step, v.walk.count - 1);
    press(&v, 27);
    ui_view_verdict(&v, v.step, &short4, text, sizeof text);
    assert_string_equal(text, "Answer: cat gives 0.6296 of its attention to cat");
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(right * 100 + asked * 10 + questions, 112);
    assert_int_equal(ui_view_skipped(&v), 1);
    /* stepping past the end shows the score (and stays) */
    assert_int_equal(press(&v, 'n'), UI_VIEW_SCORE);
    assert_int_equal(v.step, v.walk.count - 1);
    ui_view_free(&v);
    trace_free(&t);
}

/* A reload keeps the stage, head and cell (clamped to a smaller lesson) and the answers. */
static void test_rebuild_keeps_the_place(void **state)
{
    (void)state;
    attention_input big = two_head_input(), small = cat_sat_input();
    trace t1, t2;
    fixture_compute(&big, &t1);
    fixture_compute(&small, &t2);
    lesson_step narration[2];
    question_narration(narration);
    narration[0].focus_col = -1;
    narration[0].focus_row = -1;
    lesson l = {.steps = narration, .n_steps = 2};
    ui_view v;
    assert_true(ui_view_init(&v, &t1, &l));
    ui_view_goto(&v, walk_find(&v.walk, STAGE_SCORES, 1));
    for (const char *k = "0.5\n"; *k; k++) press(&v, *k);   /* answered */
    ui_view_goto(&v, walk_find(&v.walk, STAGE_SCORES, 2));
    v.row = 2;
    v.col = 1;
    assert_true(ui_view_rebuild(&v, &t2, &l));   /* 3 tokens, 2 heads -> 2, 1 */
    assert_int_equal(ui_view_current(&v)->stage, STAGE_SCORES);
    assert_int_equal(ui_view_current(&v)->head, 1);
    assert_int_equal(v.row, 1);
    assert_int_equal(v.col, 1);
    assert_true(v.t == &t2);
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(asked, 1);
    ui_view_free(&v);
    trace_free(&t1);
    trace_free(&t2);
}

/* A reload keeps the place by name: the same stage and head, and the same tokens selected
 * (the same repeat of a repeated token) when a token is inserted before them; off the script
 * stays off. */
static void test_rebuild_keeps_tokens_by_name(void **state)
{
    (void)state;
    static const char *const before[] = {"the", "bank", "the", "river"};
    static const char *const after[] = {"a", "the", "bank", "the", "river"};
    static const double e4[] = {1, 0, 0.5, -1, 0, 1, 0, 0.5, 1, 0, 0.5, -1, 0.5, 0.5, 1, 0};
    static const double e5[] = {0, 0, 1, 1, 1, 0, 0.5, -1, 0, 1, 0, 0.5, 1, 0, 0.5, -1,
                                0.5, 0.5, 1, 0};
    attention_input a = two_head_input(), b = two_head_input();
    a.n_tokens = a.n_source = 4, a.tokens = before, a.embeddings = e4;
    b.n_tokens = b.n_source = 5, b.tokens = after, b.embeddings = e5;
    trace t1, t2;
    fixture_compute(&a, &t1);
    fixture_compute(&b, &t2);
    lesson_step narration[] = {
        {.stage = STAGE_SCORES, .head = 1, .focus_row = -1, .focus_col = -1, .say = "one"},
        {.stage = STAGE_WEIGHTS, .head = 2, .focus_row = -1, .focus_col = -1, .say = "two"},
    };
    lesson l = {.steps = narration, .n_steps = 2};
    ui_view v;
    assert_true(ui_view_init(&v, &t1, &l));
    ui_view_goto(&v, 1);   /* weights, head 2: the second "the" looks at river */
    v.row = 2;
    v.col = 3;
    assert_true(ui_view_rebuild(&v, &t2, &l));
    assert_int_equal(v.step, 1);
    assert_int_equal(ui_view_current(&v)->head, 2);
    assert_int_equal(v.row, 3);   /* the second "the", one further down */
    assert_int_equal(v.col, 4);   /* river */
    ui_view_open_stage(&v, STAGE_CONTEXT, 2);   /* off the script, head 2 */
    v.row = 1;                                  /* the first "the" */
    assert_true(ui_view_rebuild(&v, &t1, &l));
    assert_true(v.off_script);
    assert_int_equal(ui_view_current(&v)->stage, STAGE_CONTEXT);
    assert_int_equal(ui_view_current(&v)->head, 2);
    assert_int_equal(v.row, 0);
    assert_int_equal(v.step, 1);   /* n still goes on from the step left */
    ui_view_free(&v);
    trace_free(&t1);
    trace_free(&t2);
}

/* The file stamp notices a save that changes size or mtime, and a file that vanishes. */
static void test_file_stamp_sees_changes(void **state)
{
    (void)state;
    char path[] = "/tmp/attnstep-test-stamp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "a", 1), 1);
    close(fd);
    ui_file_stamp a = ui_file_stamp_of(path), b = ui_file_stamp_of(path);
    assert_true(a.present && ui_file_stamp_equal(&a, &b));
    FILE *f = fopen(path, "a");
    fputs("bc", f);
    fclose(f);
    b = ui_file_stamp_of(path);
    assert_false(ui_file_stamp_equal(&a, &b));
    unlink(path);
    b = ui_file_stamp_of(path);
    assert_false(b.present);
    assert_false(ui_file_stamp_equal(&a, &b));
}

/* ---- screens ---- */

/* The overlays as screens over a lesson: the score box closes itself, and the lesson too after
 * quit or on q, and waits for a key on a click; the help scrolls on j (a line) and n (a page),
 * as the sum pane does, and closes on any other key, listing and timing the keys of the lesson
 * beneath; a lesson's ? opens the help, and its
 * q with nothing answered closes it. No terminal is needed: keys only change state. */
static void test_overlays_close_as_they_say(void **state)
{
    (void)state;
    ui_opened *o = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open("tests/screens/cat_sat.yaml", NULL, 0, NULL, NULL, &o, false,
                                    error, sizeof error), EXIT_STATUS_OK);
    ui_screen *screen = ui_lesson_screen_new(o);
    assert_non_null(screen);
    const ui_style st = {.utf8 = true, .precision = 4};
    for (int leaving = 0; leaving < 2; leaving++) {
        ui_screen *box = ui_summary_screen_new(ui_lesson_screen_view(screen), leaving);
        assert_non_null(box);
        box->under = screen;
        assert_true(box->ops->overlay);
        assert_int_equal(box->ops->key(box, 'x', &st).close, leaving ? 2 : 1);
        assert_int_equal(box->ops->key(box, 'q', &st).close, 2);
        assert_int_equal(box->ops->click(box, 1, 1).close, 0);
        box->ops->close(box);
    }
    ui_outcome out = screen->ops->key(screen, '?', &st);
    assert_int_equal(out.close, 0);
    ui_screen *help = out.open;
    assert_non_null(help);
    help->under = screen;
    assert_int_equal(help->ops->context(help), UI_IN_LESSON);
    assert_string_equal(help->ops->key_kind(help, 'j'), "help-key");
    assert_int_equal(help->ops->key(help, 'j', &st).close, 0);
    assert_int_equal(help->ops->key(help, 'n', &st).close, 0);
    assert_int_equal(help->ops->key(help, 'x', &st).close, 1);
    help->ops->close(help);
    out = screen->ops->key(screen, 'q', &st);
    assert_int_equal(out.close, 1);
    assert_null(out.open);
    screen->ops->close(screen);
}

/* ---- the matrix pane, drawn into a curses screen in memory ---- */

/* A 256-colour curses screen that writes to /dev/null, so a test can draw a pane and read back
 * the characters, attributes and colour pairs of its cells. */
typedef struct { SCREEN *screen; FILE *out, *in; } memory_screen;

static ui_style open_memory_screen_as(memory_screen *m, const char *term, int cols, int rows)
{
    m->out = fopen("/dev/null", "w");
    m->in = fopen("/dev/null", "r");
    assert_non_null(m->out);
    assert_non_null(m->in);
    m->screen = newterm(term, m->out, m->in);
    assert_non_null(m->screen);
    set_term(m->screen);
    resizeterm(rows, cols);
    ui_style st = {.utf8 = true, .colors = ui_colors_init(UI_COLOR_ALWAYS), .precision = 4};
    ui_matrix_colors_init(st.colors);
    return st;
}

static ui_style open_memory_screen(memory_screen *m, int cols, int rows)
{
    ui_style st = open_memory_screen_as(m, "xterm-256color", cols, rows);
    assert_int_equal(st.colors, 256);
    return st;
}

static void close_memory_screen(memory_screen *m)
{
    endwin();
    delscreen(m->screen);
    fclose(m->out);
    fclose(m->in);
}

/* The character at y, x with its attributes and colour pair. */
static wchar_t cell_at(int y, int x, attr_t *attrs, short *pair)
{
    cchar_t c;
    wchar_t text[CCHARW_MAX + 1] = {0};
    assert_int_equal(mvin_wch(y, x, &c), OK);
    getcchar(&c, text, attrs, pair, NULL);
    return text[0];
}

/* Traces in (which t keeps pointing to) into t and opens a view of it on a stage and head. */
static void view_on(const attention_input *in, stage_id stage, int head, trace *t, ui_view *v)
{
    fixture_compute(in, t);
    assert_true(ui_view_init(v, t, NULL));
    ui_view_open_stage(v, stage, head);
}

/* Draws v's matrix at the top left of a 60x12 pane. */
static ui_matrix_grid draw_pane(ui_view *v, const ui_style *st)
{
    ui_matrix_grid grid = {0};
    erase();
    ui_matrix_draw(v, 0, 0, 60, 12, st, &grid);
    assert_true(grid.cell_w > 0);
    return grid;
}

/* The selected cell keeps its heat colour (no reverse video, which made the key cell the
 * darkest of its row) and is framed by brackets in that colour: the pair of weights[cat,sat]
 * is the same selected or not. */
static void test_selected_cell_keeps_its_heat_colour(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 80, 24);
    attention_input in = cat_sat_input();
    trace t;
    ui_view v;
    view_on(&in, STAGE_WEIGHTS, 1, &t, &v);
    assert_true(ui_view_heatmap(&v));
    v.row = 0, v.col = 1;
    ui_matrix_grid grid = draw_pane(&v, &st);
    int x = grid.grid_x + grid.cell_w, y = grid.grid_y;   /* weights[cat,sat]'s blank column */
    attr_t attrs;
    short selected_pair, pair;
    wchar_t digit = cell_at(y, x + 6, &attrs, &selected_pair);   /* the last digit of 0.3704 */
    assert_int_equal(digit, L'4');
    assert_int_equal(attrs & A_REVERSE, 0);
    assert_true(selected_pair >= UI_PAIR_FREE);
    assert_int_equal(cell_at(y, x, &attrs, &pair), L'[');
    assert_int_equal(pair, selected_pair);
    assert_int_equal(cell_at(y, x + 7, &attrs, &pair), L']');
    assert_int_equal(pair, selected_pair);
    v.row = 1, v.col = 0;   /* select another cell: weights[cat,sat] keeps its colour */
    draw_pane(&v, &st);
    assert_int_equal(cell_at(y, x + 6, &attrs, &pair), L'4');
    assert_int_equal(pair, selected_pair);
    assert_int_equal(cell_at(y, x, &attrs, &pair), L' ');
    /* weights[cat,cat] = 0.6296 and weights[cat,sat] = 0.3704 fall in different buckets */
    short other;
    cell_at(y, grid.grid_x + 6, &attrs, &other);
    assert_true(other >= UI_PAIR_FREE && other != pair);
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* Buckets hold [i/n, (i+1)/n): values that look alike share a colour (0.1193 and 0.1250 were
 * blue and magenta when the level was rounded), and the legend's edges are exact. */
static void test_heatmap_buckets_by_value(void **state)
{
    (void)state;
    assert_int_equal(heat_bucket(0.1193, 5), heat_bucket(0.1250, 5));
    assert_int_equal(heat_bucket(0.1999, 5), 0);
    assert_int_equal(heat_bucket(0.2, 5), 1);
    assert_int_equal(heat_bucket(0.0, 5), 0);
    assert_int_equal(heat_bucket(1.0, 5), 4);
    assert_int_equal(heat_bucket(-0.5, 5), 0);
    assert_int_equal(heat_bucket(0.5, 11), 5);   /* 0 on a diverging ramp: the middle */
}

/* With 8 colours the weights' legend gives the edge of every bucket between its swatches. */
static void test_eight_colour_legend_has_bucket_edges(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen_as(&m, "xterm", 80, 24);
    assert_int_equal(st.colors, 8);
    attention_input in = cat_sat_input();
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_WEIGHTS, 1);
    draw_pane(&v, &st);
    wchar_t line[81];
    assert_true(mvinnwstr(1, 0, line, 80) > 0);
    assert_non_null(wcsstr(line, L"0.0    0.2    0.4    0.6    0.8    1.0"));
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* A ramp's step is the smallest 1, 2 or 5 × 10^k with which its buckets cover the span, so
 * the legend reads "(11 steps of 1)" where it read "(11 steps of 0.7273)" (issue 25). */
static void test_ramp_steps_are_round(void **state)
{
    (void)state;
    assert_float_equal(heat_round_step(8.0, 11), 1.0, 1e-12);       /* four_heads' Q */
    assert_float_equal(heat_round_step(1.0, 10), 0.1, 1e-12);       /* weights, exactly */
    assert_float_equal(heat_round_step(1.0, 5), 0.2, 1e-12);
    assert_float_equal(heat_round_step(2.2, 11), 0.2, 1e-12);       /* 0.2 covers 2.2 */
    assert_float_equal(heat_round_step(2.21, 11), 0.5, 1e-12);
    assert_float_equal(heat_round_step(30.0, 11), 5.0, 1e-12);
    assert_float_equal(heat_round_step(56.0, 11), 10.0, 1e-12);     /* 5.09: the next decade */
    assert_float_equal(heat_round_step(0.037, 5), 0.01, 1e-15);
    assert_float_equal(heat_round_step(8672.0, 5), 2000.0, 1e-9);
    assert_float_equal(heat_round_step(0.0, 11), 0.0, 0);           /* an all-zero matrix */
    for (double span = 0.013; span < 1e4; span *= 1.37) {
        double step = heat_round_step(span, 11), mantissa = step / pow(10, floor(log10(step) + 1e-9));
        assert_true(step * 11 >= span * (1 - 1e-12));                       /* it covers */
        assert_true(step * 11 < span * 5 / 2 * (1 + 1e-12) || step < span); /* and no more than
                                                                             the next round one */
        assert_true(fabs(mantissa - 1) < 1e-9 || fabs(mantissa - 2) < 1e-9 || fabs(mantissa - 5) < 1e-9);
    }
}

/* With 256 colours a signed matrix's legend states a round step, and its cells are bucketed
 * by it: cat_sat's Q has the step and ends the legend says. */
static void test_signed_legend_has_a_round_step(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen_as(&m, "xterm-256color", 80, 24);
    assert_int_equal(st.colors, 256);
    attention_input in = cat_sat_input();
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_Q, 1);
    v.heat_signed = true;   /* a signed matrix's heatmap, as `a` turns it on */
    draw_pane(&v, &st);
    wchar_t line[81];
    assert_true(mvinnwstr(1, 0, line, 80) > 0);
    const wchar_t *steps = wcsstr(line, L"(11 steps of ");
    assert_non_null(steps);
    double step = wcstod(steps + wcslen(L"(11 steps of "), NULL);
    double mantissa = step / pow(10, floor(log10(step) + 1e-9));
    assert_true(fabs(mantissa - 1) < 1e-9 || fabs(mantissa - 2) < 1e-9 || fabs(mantissa - 5) < 1e-9);
    double absmax = fmax(fabs(ui_view_range(&v)->lo), fabs(ui_view_range(&v)->hi));
    assert_true(step * 11 / 2 >= absmax);
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* Masked cells of weights are drawn as an exact 0 in their own colour, not as a small weight,
 * and −∞ in masked is bold. */
static void test_masked_cells_have_their_own_mark(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 80, 24);
    attention_input in = cat_sat_input();
    in.mask = MASK_CAUSAL;
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_WEIGHTS, 1);
    v.row = 1, v.col = 0;
    ui_matrix_grid grid = draw_pane(&v, &st);
    int x = grid.grid_x + grid.cell_w, y = grid.grid_y;   /* weights[cat,sat]: masked */
    attr_t attrs;
    short pair, weight_pair;
    assert_int_equal(cell_at(y, x + grid.cell_w - 2, &attrs, &pair), L'0');
    assert_int_equal(cell_at(y, x + grid.cell_w - 3, &attrs, &pair), L' ');   /* not 0.0000 */
    assert_true(attrs & A_BOLD);
    cell_at(y + 1, x + grid.cell_w - 2, &attrs, &weight_pair);   /* weights[sat,sat] */
    assert_true(pair >= UI_PAIR_FREE && pair != weight_pair);
    ui_view_open_stage(&v, STAGE_MASKED, 1);
    grid = draw_pane(&v, &st);
    x = grid.grid_x + grid.cell_w;
    assert_int_equal(cell_at(y, x + grid.cell_w - 2, &attrs, &pair), L'\u221e');
    assert_true(attrs & A_BOLD);
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* Q of a two-head lesson: the heads' columns are grouped under "head 1" and "head 2" with a
 * separator line between them, and a click on either side of it selects the right column. */
static void test_heads_are_grouped_in_q(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 80, 24);
    attention_input in = two_head_input();
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_Q, 1);
    ui_matrix_grid grid = draw_pane(&v, &st);
    assert_int_equal(grid.group, 2);
    assert_int_equal(grid.vis_cols, 4);
    wchar_t line[81];
    assert_true(mvinnwstr(grid.grid_y - 2, 0, line, 80) > 0);
    wchar_t *one = wcsstr(line, L"head 1"), *two = wcsstr(line, L"head 2");
    assert_non_null(one);
    assert_non_null(two);
    assert_true(one < two);
    int separator = grid.grid_x + 2 * grid.cell_w;   /* before column 2, head 2's first */
    attr_t attrs;
    short pair;
    wchar_t c = cell_at(grid.grid_y, separator, &attrs, &pair);
    assert_true(c == L'\u2502' || (attrs & A_ALTCHARSET));
    int row, col;
    assert_true(ui_matrix_hit(&grid, &v, separator + 1, grid.grid_y + 1, &row, &col));
    assert_int_equal(row, 1);
    assert_int_equal(col, 2);
    assert_true(ui_matrix_hit(&grid, &v, separator - 1, grid.grid_y, &row, &col));
    assert_int_equal(col, 1);
    assert_false(ui_matrix_hit(&grid, &v, separator, grid.grid_y, &row, &col));
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* Columns are as wide as their labels when the screen has room, and as narrow as their numbers
 * when it has not; fewer decimals make more columns fit. */
static void test_columns_fit_their_labels(void **state)
{
    (void)state;
    static const char *const long_tokens[] = {"because", "of"};
    attention_input in = cat_sat_input();
    in.tokens = long_tokens;
    trace t;
    fixture_compute(&in, &t);
    ui_view v;
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_WEIGHTS, 1);
    ui_style st = {.utf8 = true, .precision = 4};
    assert_true(ui_matrix_fits(&v, 40, &st));    /* because|0.xxxx columns of 8 */
    assert_false(ui_matrix_fits(&v, 20, &st));   /* "because" would be cut */
    ui_view_free(&v);
    trace_free(&t);
    in = two_head_input();
    fixture_compute(&in, &t);
    assert_true(ui_view_init(&v, &t, NULL));
    ui_view_open_stage(&v, STAGE_Q, 1);
    assert_false(ui_matrix_fits(&v, 36, &st));   /* four columns of -1.0000 do not fit */
    st.precision = 1;
    assert_true(ui_matrix_fits(&v, 36, &st));    /* of -1.0 they do */
    ui_view_free(&v);
    trace_free(&t);
}

/* The display keys of the lesson screen: + and - change the decimals (and say so), c the
 * palette, P the presentation preset; none of them moves the lesson. */
static void test_display_keys_change_only_the_display(void **state)
{
    (void)state;
    ui_opened *o = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open("tests/screens/cat_sat.yaml", NULL, 0, NULL, NULL, &o, false,
                                    error, sizeof error), EXIT_STATUS_OK);
    ui_screen *screen = ui_lesson_screen_new(o);
    assert_non_null(screen);
    ui_view *v = ui_lesson_screen_view(screen);
    const ui_style st = {.utf8 = true, .precision = 4};
    int step = v->step;
    assert_int_equal(screen->ops->key(screen, '+', &st).close, 0);
    assert_string_equal(v->message, "5 decimals");
    screen->ops->key(screen, '-', &st);
    screen->ops->key(screen, '-', &st);
    assert_string_equal(v->message, "3 decimals");
    screen->ops->key(screen, 'c', &st);
    assert_non_null(strstr(v->message, "inferno"));
    screen->ops->key(screen, 'c', &st);
    assert_non_null(strstr(v->message, "viridis"));
    screen->ops->key(screen, 'P', &st);
    assert_string_equal(v->message, "presentation on");
    screen->ops->key(screen, 'P', &st);
    assert_string_equal(v->message, "presentation off");
    screen->ops->key(screen, 'L', &st);
    screen->ops->key(screen, 'J', &st);
    screen->ops->key(screen, 'K', &st);
    assert_int_equal(v->step, step);
    screen->ops->close(screen);
}

/* ---- the comparison screen (two lessons side by side) ---- */

/* Row y of the memory screen as UTF-8, trailing blanks dropped. */
static void row_text(int y, char *out, size_t size)
{
    size_t used = 0;
    for (int x = 0; x < COLS && used + 8 < size; x++) {
        attr_t attrs;
        short pair;
        wchar_t c = cell_at(y, x, &attrs, &pair);
        int n = wctomb(out + used, c ? c : L' ');
        used += n > 0 ? (size_t)n : 0;
    }
    while (used > 0 && out[used - 1] == ' ') used--;
    out[used] = '\0';
}

/* Whether some row of the memory screen contains text. */
static bool screen_has(const char *text)
{
    char row[2048];
    for (int y = 0; y < LINES; y++) {
        row_text(y, row, sizeof row);
        if (strstr(row, text)) return true;
    }
    return false;
}

/* The header gives way in order: the formula, then the selected cell's labels; the shape and
 * "head 2 of 2" are never cut, at any width the pane is drawn. */
static void test_header_keeps_the_head(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 80, 24);
    attention_input in = two_head_input();
    trace t;
    ui_view v;
    view_on(&in, STAGE_WEIGHTS, 2, &t, &v);
    v.row = 2, v.col = 2;   /* row river, column river: the longest labels */
    for (int width = 24; width <= 80; width++) {
        ui_matrix_grid grid = {0};
        erase();
        ui_matrix_draw(&v, 0, 0, width, 12, &st, &grid);
        char row[2048];
        row_text(0, row, sizeof row);
        if (!strstr(row, "head 2 of 2")) fail_msg("width %d: %s", width, row);
        if (width >= 60 && !strstr(row, "row river, column river"))
            fail_msg("width %d cut the labels with room for them: %s", width, row);
    }
    ui_view_free(&v);
    trace_free(&t);
    close_memory_screen(&m);
}

/* Draws every stage and head of a lesson on its lesson screen at cols x rows (presenting when
 * present, else with the step list) and fails where a column is left out (a "cols … of" scroll
 * note) or a label of the matrix pane is cut with …: issue 12's "every column with its full
 * label, at every stage". The pane's rows are 2 … ui_matrix_height (legend, heads, column labels,
 * rows), right of the step list. */
static void assert_every_column_shown(const char *path, int cols, int rows, bool present)
{
    memory_screen m;
    ui_style st = open_memory_screen(&m, cols, rows);
    ui_opened *o = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, &o, false, error, sizeof error),
                     EXIT_STATUS_OK);
    ui_screen *screen = ui_lesson_screen_new(o);
    assert_non_null(screen);
    if (present) screen->ops->key(screen, 'P', &st);
    ui_view *v = ui_lesson_screen_view(screen);
    int shown = 0;
    for (int stage = 0; stage < STAGE_COUNT; stage++) {
        if (!trace_has_stage(v->t, (stage_id)stage)) continue;
        int heads = stage_get((stage_id)stage)->per_head ? v->t->heads : 1;
        for (int head = 1; head <= heads; head++) {
            ui_view_open_stage(v, (stage_id)stage, head);
            erase();
            screen->ops->draw(screen, &st);
            for (int y = 2; y <= ui_matrix_height(v); y++) {
                char row[2048];
                row_text(y, row, sizeof row);
                const char *pane = strlen(row) > 17 && !present ? row + 17 : row;
                if (strstr(pane, "\xe2\x80\xa6") || strstr(pane, "cols ")) {
                    print_error("%s at %dx%d, %s head %d, row %d: %s\n", path, cols, rows,
                                stage_get((stage_id)stage)->name, head, y, row);
                    fail();
                }
            }
            shown++;
        }
    }
    assert_true(shown >= 11);   /* every stage of a one-head lesson at least */
    screen->ops->close(screen);
    close_memory_screen(&m);
}

static void test_classroom_lessons_show_every_column(void **state)
{
    (void)state;
    static const char *const lessons[] = {"lessons/four_heads.yaml", "lessons/no_scale.yaml",
                                          "lessons/with_scale.yaml"};
    for (size_t i = 0; i < UI_COUNT(lessons); i++) {
        assert_every_column_shown(lessons[i], 80, 24, true);
        assert_every_column_shown(lessons[i], 200, 50, false);
    }
}

/* Opens path's lesson screen at stage and head on the memory screen and draws it. */
static ui_screen *lesson_drawn_at(const char *path, stage_id stage, int head, const ui_style *st)
{
    ui_opened *o = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, &o, false, error, sizeof error),
                     EXIT_STATUS_OK);
    ui_screen *screen = ui_lesson_screen_new(o);
    assert_non_null(screen);
    ui_view_open_stage(ui_lesson_screen_view(screen), stage, head);
    erase();
    screen->ops->draw(screen, st);
    return screen;
}

/* The step list makes room for the matrix: four_heads' weights at 80×24 and 4 decimals fit
 * only without it, so it hides itself and the key bar starts with "L step list"; L brings it
 * back (the matrix scrolls) and hides it again. Where a narrower list is enough, it narrows and
 * cuts the names that no longer fit with …. */
static void test_step_list_makes_room_for_the_matrix(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 80, 24);
    ui_screen *screen = lesson_drawn_at("lessons/four_heads.yaml", STAGE_WEIGHTS, 4, &st);
    char bar[2048];
    row_text(LINES - 1, bar, sizeof bar);
    assert_true(strncmp(bar, "L step list  q quit", 19) == 0);
    assert_false(screen_has("cols "));
    assert_false(screen_has("head 1      \xe2\x94\x82"));   /* no step list */
    assert_true(screen_has("lazy     dog"));
    screen->ops->key(screen, 'L', &st);
    erase();
    screen->ops->draw(screen, &st);
    assert_true(screen_has("head 1      \xe2\x94\x82"));
    assert_true(screen_has("cols "));   /* the matrix scrolls */
    row_text(LINES - 1, bar, sizeof bar);
    assert_true(strncmp(bar, "q quit", 6) == 0);
    screen->ops->key(screen, 'L', &st);
    erase();
    screen->ops->draw(screen, &st);
    assert_false(screen_has("head 1      \xe2\x94\x82"));
    assert_false(screen_has("cols "));
    row_text(LINES - 1, bar, sizeof bar);
    assert_true(strncmp(bar, "q quit", 6) == 0);   /* hidden by L: nothing to bring back */
    screen->ops->close(screen);
    close_memory_screen(&m);
    /* online_softmax's scores at 76 columns: a list of 12 leaves room for all 8 columns */
    st = open_memory_screen(&m, 76, 30);
    screen = lesson_drawn_at("lessons/online_softmax.yaml", STAGE_SCORES, 1, &st);
    assert_true(screen_has("  running_\xe2\x80\xa6 \xe2\x94\x82"));
    assert_false(screen_has("cols "));
    screen->ops->close(screen);
    close_memory_screen(&m);
}

static ui_screen *open_comparison(const char *a, const char *b)
{
    exit_status status = EXIT_STATUS_SOFTWARE;
    char error[512] = "";
    ui_screen *screen = ui_compare_screen_open(a, b, NULL, NULL, -1, false, &status, error,
                                               sizeof error);
    assert_int_equal(status, EXIT_STATUS_OK);
    assert_non_null(screen);
    return screen;
}

/* Scaled against unscaled: keys move A, and B follows to its own script's step at the same
 * stage (step 4 of 6 while A is at step 5 of 7), with the same cell; the difference line gives
 * both numbers and the count of differing cells, and a differing cell is marked ≠ in its own
 * heat colour (the mark takes the pair of the cell it stands in). The display keys that make
 * sense there work on both panes; the others are left out of the comparison's keys. */
static void test_comparison_moves_both_panes(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *screen = open_comparison("lessons/no_scale.yaml", "lessons/with_scale.yaml");
    for (int i = 0; i < 4; i++) assert_int_equal(screen->ops->key(screen, 'n', &st).close, 0);
    const ui_view *lead = ui_compare_screen_view(screen);
    assert_int_equal(ui_view_current(lead)->stage, STAGE_WEIGHTS);
    screen->ops->key(screen, 'l', &st);   /* weights[birds,sing] */
    erase();
    screen->ops->draw(screen, &st);
    assert_true(screen_has("A \xc2\xb7 birds sing at dawn, unscaled"));
    assert_true(screen_has("step 5 of 7"));
    assert_true(screen_has("step 4 of 6"));
    assert_true(screen_has("weights[birds,sing]: 0.0108 vs 0.1264 \xc2\xb7 16 of 16 cells differ"));
    /* the first cell (birds, birds) differs and is not selected: its mark is in its colour */
    int y = -1, x = -1;
    for (int r = 0; r < LINES && y < 0; r++) {
        char row[2048];
        row_text(r, row, sizeof row);
        if (strncmp(row, " sing", 5) == 0) y = r;
    }
    assert_true(y > 0);
    for (int c = 0; c < COLS / 2 && x < 0; c++) {
        attr_t attrs;
        short pair;
        if (cell_at(y, c, &attrs, &pair) == L'\x2260') x = c;
    }
    assert_true(x > 0);
    attr_t mark_attrs, number_attrs;
    short mark_pair, number_pair;
    cell_at(y, x, &mark_attrs, &mark_pair);
    cell_at(y, x + 2, &number_attrs, &number_pair);
    assert_true(mark_pair >= UI_PAIR_FREE);
    assert_int_equal(mark_pair, number_pair);
    assert_true(mark_attrs & A_BOLD);
    /* + and - change both panes' decimals, c the palette of both; the step list, the
     * presentation and a third lesson are a lesson's alone: L, P and C say so */
    screen->ops->key(screen, '-', &st);
    assert_string_equal(lead->message, "3 decimals");
    erase();
    screen->ops->draw(screen, &st);
    assert_true(screen_has("weights[birds,sing]: 0.011 vs 0.126"));
    assert_true(screen_has("[0.011]"));
    assert_true(screen_has("[0.126]"));
    screen->ops->key(screen, 'c', &st);
    assert_non_null(strstr(lead->message, "inferno"));
    static const int lesson_only[] = {'L', 'P', 'C'};
    for (int i = 0; i < UI_COUNT(lesson_only); i++) {
        assert_int_equal(ui_key_action(lesson_only[i], UI_IN_LESSON | UI_IN_COMPARE, NULL), UI_ACT_NONE);
        assert_int_not_equal(ui_key_action(lesson_only[i], UI_IN_LESSON, NULL), UI_ACT_NONE);
        screen->ops->key(screen, lesson_only[i], &st);
        assert_non_null(strstr(lead->message, "does nothing in a comparison"));
    }
    /* stacked at 80×24 the narration of both lessons is longer than its pane: J and K scroll it */
    resizeterm(24, 80);
    screen->ops->key(screen, 'J', &st);
    erase();
    screen->ops->draw(screen, &st);
    assert_true(screen_has(" 2\xe2\x80\x93" "4 of "));
    assert_true(screen_has("J\xe2\x86\x93 K\xe2\x86\x91"));
    screen->ops->key(screen, 'K', &st);
    erase();
    screen->ops->draw(screen, &st);
    assert_true(screen_has(" 1\xe2\x80\x93" "3 of "));
    assert_int_equal(screen->ops->key(screen, 'q', &st).close, 1);
    screen->ops->close(screen);
    close_memory_screen(&m);
}

/* Two word orders: the same tokens reversed pair by token, so no weight differs (attention
 * without positions ignores order); tokens that differ pair by position, and the screen says
 * which it does. */
static void test_comparison_pairs_tokens(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *screen = open_comparison("lessons/bank_river.yaml", "lessons/scrambled.yaml");
    trace_cell cell;
    char reason[256];
    ui_view *lead = ui_compare_screen_view(screen);
    assert_true(trace_cell_parse(lead->t, "weights[bank,river]", 1, &cell, reason, sizeof reason));
    assert_true(ui_view_open_at(lead, &cell));
    screen->ops->draw(screen, &st);
    assert_true(screen_has("weights[bank,river]: 0.6488 vs 0.6488 \xc2\xb7 no cell differs"));
    assert_true(screen_has("cells are paired by token"));
    screen->ops->close(screen);
    screen = open_comparison("tests/screens/cat_sat.yaml", "tests/screens/two_heads.yaml");
    screen->ops->draw(screen, &st);
    assert_true(screen_has("compared by position"));
    screen->ops->close(screen);
    close_memory_screen(&m);
}

/* A lesson with one head leading one with two, and back: at head 2 the one-head lesson says it
 * has no head 2 instead of showing a matrix; narrower than 100 columns the panes stack, and
 * with fewer than 20 rows too the screen says it is too small. */
static void test_comparison_missing_head_and_small_terminals(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *screen = open_comparison("lessons/bank_loan.yaml", "lessons/bank_loan_one_head.yaml");
    ui_view *lead = ui_compare_screen_view(screen);
    ui_view_open_stage(lead, STAGE_SCORES, 2);
    screen->ops->draw(screen, &st);
    assert_true(screen_has("B has 1 head: head 2 is only in A."));
    ui_view_open_stage(lead, STAGE_SCORES, 1);
    screen->ops->draw(screen, &st);
    assert_false(screen_has("only in A"));
    assert_true(screen_has("cells differ"));
    resizeterm(24, 80);
    screen->ops->draw(screen, &st);
    assert_true(screen_has(" B \xc2\xb7 bank, river and loan: one head"));
    resizeterm(16, 80);
    screen->ops->draw(screen, &st);
    assert_true(screen_has("terminal too small for a comparison"));
    screen->ops->close(screen);
    close_memory_screen(&m);
}

/* C in a lesson opens a picker of its folder; Enter there replaces the picker with the
 * comparison of the lesson and the one selected (close 1, open the comparison). */
static void test_compare_key_picks_the_second_lesson(void **state)
{
    (void)state;
    ui_opened *o = NULL;
    char error[512];
    assert_int_equal(ui_lesson_open("tests/screens/cat_sat.yaml", NULL, 0, NULL, NULL, &o, false,
                                    error, sizeof error), EXIT_STATUS_OK);
    ui_screen *screen = ui_lesson_screen_new(o);
    assert_non_null(screen);
    const ui_style st = {.utf8 = true, .precision = 4};
    ui_outcome out = screen->ops->key(screen, 'C', &st);
    assert_int_equal(out.close, 0);
    ui_screen *picker = out.open;
    assert_non_null(picker);
    assert_int_equal(picker->ops->context(picker), UI_IN_PICKER);
    out = picker->ops->key(picker, '\n', &st);
    assert_int_equal(out.close, 1);
    assert_non_null(out.open);
    assert_int_equal(out.open->ops->context(out.open), UI_IN_LESSON | UI_IN_COMPARE);
    assert_string_equal(ui_compare_screen_view(out.open)->lesson->title, "cat sat: self-attention by hand");
    out.open->ops->close(out.open);
    picker->ops->close(picker);
    screen->ops->close(screen);
}

/* ---- progress kept between runs (ui_progress.h) ---- */

/* A fresh, empty folder for one test's progress (never the real home). */
static void temp_dir(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/attnstep-progress-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_tree(const char *dir)
{
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    assert_int_equal(system(command), 0);
}

/* Opens a lesson file with its progress under state_dir, as the picker does. */
static void open_with_progress(const char *path, const char *state_dir, bool restore_step,
                               ui_opened **o, ui_view *v)
{
    char error[512];
    assert_int_equal(ui_lesson_open(path, NULL, 0, NULL, NULL, o, false, error, sizeof error),
                     EXIT_STATUS_OK);
    (*o)->state_dir = state_dir;
    assert_true(ui_view_init(v, &(*o)->t, &(*o)->l));
    ui_progress_open(*o, v, restore_step);
}

static void close_with_progress(ui_opened *o, ui_view *v)
{
    ui_view_free(v);
    ui_lesson_close(o);
}

/* Steps on with n until a question of that kind waits (or the walk ends). */
static void next_question(ui_view *v, unsigned context)
{
    while (ui_view_context(v) != context && v->step < v->walk.count - 1) press(v, 'n');
    assert_int_equal(ui_view_context(v), context);
}

static void copy_file(const char *from, const char *to, const char *extra)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, in)) > 0;) fwrite(buffer, 1, n, out);
    if (extra) fputs(extra, out);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Copies the lesson file from into dir under its own name; its path in path. */
static void copy_into(const char *dir, const char *from, char *path, size_t size)
{
    const char *slash = strrchr(from, '/');
    snprintf(path, size, "%s/%s", dir, slash ? slash + 1 : from);
    copy_file(from, path, NULL);
}

/* Draws a screen afresh on the memory screen. */
static void redraw(ui_screen *screen, const ui_style *st)
{
    erase();
    screen->ops->draw(screen, st);
}

/* The column of the screen where text starts on row y, or -1 (the first match). */
static int column_of(int y, const char *text)
{
    char row[2048];
    row_text(y, row, sizeof row);
    const char *at = strstr(row, text);
    if (!at) return -1;
    wchar_t wide[2048];
    char head[2048];
    snprintf(head, sizeof head, "%.*s", (int)(at - row), row);
    return (int)mbstowcs(wide, head, 2048);
}

/* The row of the screen holding text, or -1. */
static int row_of(const char *text)
{
    char row[2048];
    for (int y = 0; y < LINES; y++) {
        row_text(y, row, sizeof row);
        if (strstr(row, text)) return y;
    }
    return -1;
}

/* The picker's progress column: a glyph and a colour for done (✓, green), started (◐, the
 * accent) and not started (○); R asks, any key but y keeps the progress, and y resets the
 * selected lesson's (only that lesson's). */
/* The scaling pair at 120×30: side by side its 8-column input would scroll (5 of 8 columns a
 * pane), stacked it shows whole, so the panes stack; its 4×4 scores stay side by side, and at
 * 200×50 the input fits side by side. */
static void test_comparison_stacks_where_side_by_side_would_scroll(void **state)
{
    (void)state;
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *screen = open_comparison("lessons/no_scale.yaml", "lessons/with_scale.yaml");
    ui_view *lead = ui_compare_screen_view(screen);
    ui_view_open_stage(lead, STAGE_INPUT, 1);
    redraw(screen, &st);
    assert_int_equal(column_of(row_of("B \xc2\xb7 birds sing at dawn, scaled"), " B \xc2\xb7"), 0);
    assert_false(screen_has("cols "));
    assert_true(screen_has("       5        6        7"));
    ui_view_open_stage(lead, STAGE_SCORES, 1);
    redraw(screen, &st);
    assert_true(column_of(row_of("B \xc2\xb7 birds sing at dawn, scaled"), " B \xc2\xb7") > 50);
    resizeterm(50, 200);
    ui_view_open_stage(lead, STAGE_INPUT, 1);
    redraw(screen, &st);
    assert_true(column_of(row_of("B \xc2\xb7 birds sing at dawn, scaled"), " B \xc2\xb7") > 90);
    assert_false(screen_has("cols "));
    screen->ops->close(screen);
    close_memory_screen(&m);
}

/* The picker reads each lesson with lesson_load_summary: the same verdict and first diagnostic
 * as lesson_load for every lesson of tests/bad, the same title and about (live numbers written)
 * for every shipped lesson. */
static void test_lesson_summary_checks_as_loading(void **state)
{
    (void)state;
    static const char *const folders[] = {"tests/bad", "lessons"};
    int checked = 0;
    for (int f = 0; f < UI_COUNT(folders); f++) {
        DIR *d = opendir(folders[f]);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));) {
            size_t n = strlen(e->d_name);
            if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", folders[f], e->d_name);
            lesson l;
            lesson_summary summary;
            lesson_diagnostics full = {0}, quick = {0};
            lesson_status want = lesson_load(path, &l, &full);
            lesson_status got = lesson_load_summary(path, NULL, &summary, &quick);
            if (got != want) fail_msg("%s: lesson_load_summary says %d, lesson_load %d", path, got, want);
            if (want == LESSON_OK) {
                char *about = lesson_about_shown(&l);
                assert_string_equal(summary.title, l.title);
                if (about || summary.about) assert_string_equal(summary.about, about);
                free(about);
                lesson_free(&l);
                lesson_summary_free(&summary);
            } else {
                assert_true(quick.count > 0);
                assert_int_equal(quick.items[0].line, full.items[0].line);
                assert_string_equal(quick.items[0].message, full.items[0].message);
                lesson_diagnostics_free(&full);
                lesson_diagnostics_free(&quick);
            }
            checked++;
        }
        closedir(d);
    }
    assert_true(checked > 100);
}

/* A lesson in a picker's folder, made by tests/bench/make_lesson.sh: n tokens, d_model d. */
static void make_big_lesson(const char *dir, const char *name, int n, int d)
{
    char command[512];
    snprintf(command, sizeof command, "bash tests/bench/make_lesson.sh %d %d 8 > '%s/%s'", n, d,
             dir, name);
    assert_int_equal(system(command), 0);
}

/* A folder of lessons of d_model 4096 lists without building them, and the picker still marks
 * the lessons that do not load: a mistake in the text, and one over the 1 GiB limit (4096
 * tokens), found before anything is allocated. */
static void test_picker_marks_broken_lessons_among_large_ones(void **state)
{
    (void)state;
    char dir[64], broken[160];
    temp_dir(dir, sizeof dir);
    make_big_lesson(dir, "a_big.yaml", 16, 4096);
    make_big_lesson(dir, "b_too_big.yaml", 4096, 512);
    copy_into(dir, "tests/screens/bad/broken.yaml", broken, sizeof broken);
    char hinted[160];   /* the whole first problem: its did-you-mean and its hint too */
    snprintf(hinted, sizeof hinted, "%s/c_hinted.yaml", dir);
    FILE *f = fopen(hinted, "w");
    assert_non_null(f);
    fputs("title: t\ntokens: [a, b]\nembeddings: {a: [1, 0], b: [0, 1]}\nheads: 3\n", f);
    fclose(f);
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *picker = ui_picker_screen_new(dir, NULL, NULL, NULL);
    assert_non_null(picker);
    picker->ops->draw(picker, &st);
    assert_true(screen_has("does not load: line 4: heads (3) must divide d_model (2) (hint: use 1 or 2)"));
    assert_true(screen_has("16 tokens, d_model 4096, 8 heads (benchmark)"));
    assert_true(screen_has("does not load: line 4: unknown key 'embedings'; did you mean 'embeddings'?"));
    assert_true(screen_has("does not load: line 3: the lesson and its trace would need 2.2 GiB"));
    picker->ops->close(picker);
    close_memory_screen(&m);
    remove_tree(dir);
}

static void test_picker_progress_marks_and_reset(void **state)
{
    (void)state;
    char dir[64], saved[128], bank[160], cat[160], text[128];
    temp_dir(dir, sizeof dir);
    snprintf(saved, sizeof saved, "%s/state", dir);
    copy_into(dir, "lessons/bank_river.yaml", bank, sizeof bank);
    copy_into(dir, "lessons/cat_sat.yaml", cat, sizeof cat);
    ui_opened *o;
    ui_view v;
    open_with_progress(bank, saved, false, &o, &v);
    press(&v, 'n'), press(&v, 'n');
    ui_progress_save(o, &v);
    close_with_progress(o, &v);
    open_with_progress(cat, saved, false, &o, &v);
    o->done = true;
    ui_progress_save(o, &v);
    close_with_progress(o, &v);

    memory_screen m;
    ui_style st = open_memory_screen(&m, 100, 30);
    ui_screen *picker = ui_picker_screen_new(dir, NULL, NULL, saved);
    assert_non_null(picker);
    picker->ops->draw(picker, &st);
    int y_bank = row_of("bank of the river"), y_cat = row_of("cat sat");
    assert_true(y_bank > 0 && y_cat > 0);
    attr_t attrs;
    short pair;
    int x = column_of(y_bank, "\xe2\x97\x90 step 3 of 9");
    assert_true(x > 0);
    cell_at(y_bank, x, &attrs, &pair);
    assert_int_equal(pair, UI_PAIR_ACCENT);
    x = column_of(y_cat, "\xe2\x9c\x93 done");
    assert_true(x > 0);
    cell_at(y_cat, x, &attrs, &pair);
    assert_int_equal(pair, UI_PAIR_DONE);

    picker->ops->key(picker, 'R', &st);   /* bank_river is selected, first by name */
    redraw(picker, &st);
    assert_true(screen_has("reset the progress of \"The bank of the river"));
    picker->ops->key(picker, 'n', &st);
    assert_int_equal(ui_progress_describe(saved, bank, text, sizeof text), UI_PROGRESS_PARTIAL);
    picker->ops->key(picker, 'R', &st);
    picker->ops->key(picker, 'y', &st);
    assert_int_equal(ui_progress_describe(saved, bank, text, sizeof text), UI_PROGRESS_UNTOUCHED);
    assert_string_equal(text, "");
    assert_int_equal(ui_progress_describe(saved, cat, text, sizeof text), UI_PROGRESS_DONE);
    redraw(picker, &st);
    assert_true(screen_has("\" reset"));
    assert_true(column_of(y_bank, "\xe2\x97\x8b not started") > 0);
    picker->ops->close(picker);
    close_memory_screen(&m);
    remove_tree(dir);
}

/* Both files of a comparison are followed: a save of B, the follower, is seen on the next tick
 * (by its stamp, as a lesson screen sees its own) and B's pane shows the new numbers; then x
 * lets B lead, and the difference line still gives A's number first. */
static void test_comparison_follows_both_files(void **state)
{
    (void)state;
    char dir[64], a[128], b[128];
    temp_dir(dir, sizeof dir);
    copy_into(dir, "lessons/no_scale.yaml", a, sizeof a);
    copy_into(dir, "lessons/with_scale.yaml", b, sizeof b);
    memory_screen m;
    ui_style st = open_memory_screen(&m, 120, 30);
    ui_screen *screen = open_comparison(a, b);
    for (int i = 0; i < 4; i++) screen->ops->key(screen, 'n', &st);
    screen->ops->key(screen, 'l', &st);   /* weights[birds,sing] */
    redraw(screen, &st);
    assert_true(screen_has("weights[birds,sing]: 0.0108 vs 0.1264"));
    const ui_event tick = {.kind = UI_EV_TICK};
    assert_false(screen->ops->follow(screen, &tick));   /* nothing saved yet */
    /* a save of B with scale: false (a longer file, so its stamp differs whatever the clock) */
    copy_file("tests/screens/compare/unscaled.yaml", b, "\n# saved again\n");
    assert_true(screen->ops->follow(screen, &tick));
    redraw(screen, &st);
    assert_true(screen_has("reloaded with_scale.yaml"));
    assert_true(screen_has("weights[birds,sing]: 0.0108 vs 0.0108 \xc2\xb7 no cell differs"));
    assert_int_equal(screen->ops->key(screen, 'x', &st).close, 0);
    redraw(screen, &st);
    assert_true(screen_has("comparing two lessons (B leads, A follows)"));
    assert_true(screen_has("B leads now, A follows"));
    assert_int_equal(ui_compare_screen_view(screen)->t->in->scale, false);   /* B's view leads */
    screen->ops->close(screen);
    close_memory_screen(&m);
    remove_tree(dir);
}

static void test_progress_dir_follows_xdg(void **state)
{
    (void)state;
    char dir[256];
    assert_true(ui_progress_dir("/state", "/home/ann", dir, sizeof dir));
    assert_string_equal(dir, "/state/attnstep");
    assert_true(ui_progress_dir("relative", "/home/ann", dir, sizeof dir));   /* ignored */
    assert_string_equal(dir, "/home/ann/.local/state/attnstep");
    assert_true(ui_progress_dir("", "/home/ann", dir, sizeof dir));
    assert_string_equal(dir, "/home/ann/.local/state/attnstep");
    assert_false(ui_progress_dir(NULL, NULL, dir, sizeof dir));
    assert_string_equal(dir, "");
    assert_false(ui_progress_dir(NULL, "home", dir, sizeof dir));
}

/* Answers, the score and the step come back in the next run; --at and --head keep the answers
 * but say where to open. */
static void test_progress_answers_and_step_come_back(void **state)
{
    (void)state;
    char dir[64], text[128];
    temp_dir(dir, sizeof dir);
    ui_opened *o;
    ui_view v;
    open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
    assert_string_equal(v.message, "");
    assert_string_equal(o->progress_note, "");
    next_question(&v, UI_IN_CHOICE);
    press(&v, '1');                                  /* cat: right */
    next_question(&v, UI_IN_NUMBER);
    press(&v, '0'), press(&v, '.'), press(&v, '2'), press(&v, '\n');   /* wrong */
    press(&v, 'n');
    int step = v.step;
    ui_progress_save(o, &v);
    assert_string_equal(o->progress_note, "");
    int steps = v.walk.count;
    ui_step_state states[64];
    assert_true(steps <= 64);
    memcpy(states, v.state, (size_t)steps * sizeof *states);
    close_with_progress(o, &v);
    ui_progress_describe(dir, "lessons/cat_sat.yaml", text, sizeof text);
    char expected[64];
    snprintf(expected, sizeof expected, "step %d of %d, 1/2 right", step + 1, steps);
    assert_string_equal(text, expected);

    open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
    assert_int_equal(v.step, step);
    for (int k = 0; k < v.walk.count; k++) {
        assert_int_equal(v.state[k].question, states[k].question);
        assert_int_equal(v.state[k].given_choice, states[k].given_choice);
        assert_true(v.state[k].given_number == states[k].given_number);
    }
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(right * 10 + asked, 12);
    close_with_progress(o, &v);

    open_with_progress("lessons/cat_sat.yaml", dir, false, &o, &v);   /* --at: the answers only */
    assert_int_equal(v.step, 0);
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(asked, 2);
    close_with_progress(o, &v);
    remove_tree(dir);
}

/* A skipped question comes back skipped, never open and never answered, and still unscored; the
 * answered one beside it keeps its answer (issue 32: the round trip was tested for answered
 * questions only). */
static void test_progress_keeps_a_skipped_question(void **state)
{
    (void)state;
    char dir[64], text[128];
    temp_dir(dir, sizeof dir);
    ui_opened *o;
    ui_view v;
    open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
    next_question(&v, UI_IN_CHOICE);
    int skipped = v.step;
    press(&v, 27);                                   /* Esc: skip the choice question */
    assert_int_equal(v.state[skipped].question, UI_Q_REVEALED);
    next_question(&v, UI_IN_NUMBER);
    int answered = v.step;
    press(&v, '0'), press(&v, '.'), press(&v, '6'), press(&v, '3'), press(&v, '\n');  /* right */
    ui_progress_save(o, &v);
    close_with_progress(o, &v);
    ui_progress_describe(dir, "lessons/cat_sat.yaml", text, sizeof text);
    assert_non_null(strstr(text, "1/1 right"));   /* a skipped question is not scored */

    open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
    assert_int_equal(v.state[skipped].question, UI_Q_REVEALED);
    assert_int_equal(v.state[answered].question, UI_Q_ANSWERED);
    assert_true(fabs(v.state[answered].given_number - 0.63) < 1e-12);
    int right, asked, questions;
    ui_view_score(&v, &right, &asked, &questions);
    assert_int_equal(right, 1);
    assert_int_equal(asked, 1);
    /* back at the skipped step, its numbers are shown: no question waits there */
    while (v.step > skipped) press(&v, 'p');
    assert_int_not_equal(ui_view_context(&v), UI_IN_CHOICE);
    close_with_progress(o, &v);
}

/* An edited lesson starts afresh (its key is its text); --reset of its path clears the progress
 * of the text before the edit too, and --reset without a lesson clears everything. */
static void test_progress_edited_lesson_starts_afresh_and_resets(void **state)
{
    (void)state;
    char dir[64], lesson_path[128], error[256], text[128];
    temp_dir(dir, sizeof dir);
    snprintf(lesson_path, sizeof lesson_path, "%s/cat_sat.yaml", dir);
    copy_file("lessons/cat_sat.yaml", lesson_path, NULL);
    ui_opened *o;
    ui_view v;
    open_with_progress(lesson_path, dir, true, &o, &v);
    press(&v, 'n'), press(&v, 'n');
    ui_progress_save(o, &v);
    close_with_progress(o, &v);
    ui_progress_describe(dir, lesson_path, text, sizeof text);
    assert_true(strncmp(text, "step 3 of ", 10) == 0);

    copy_file("lessons/cat_sat.yaml", lesson_path, "# edited\n");
    open_with_progress(lesson_path, dir, true, &o, &v);
    assert_int_equal(v.step, 0);
    ui_progress_describe(dir, lesson_path, text, sizeof text);
    assert_string_equal(text, "");
    ui_progress_save(o, &v);   /* now two files: before and after the edit */
    close_with_progress(o, &v);
    assert_int_equal(ui_progress_reset(dir, lesson_path, error, sizeof error), 2);
    assert_int_equal(ui_progress_reset(dir, lesson_path, error, sizeof error), 0);

    open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
    ui_progress_save(o, &v);
    close_with_progress(o, &v);
    open_with_progress("lessons/bank_river.yaml", dir, true, &o, &v);
    ui_progress_save(o, &v);
    close_with_progress(o, &v);
    assert_int_equal(ui_progress_reset(dir, NULL, error, sizeof error), 2);
    ui_progress_describe(dir, "lessons/cat_sat.yaml", text, sizeof text);
    assert_string_equal(text, "");
    remove_tree(dir);
    assert_int_equal(ui_progress_reset(dir, NULL, error, sizeof error), 0);   /* no folder */
}

/* A progress file that does not read as a whole is ignored, said once, and replaced by the
 * next save. */
static void test_progress_corrupt_file_is_ignored(void **state)
{
    (void)state;
    static const char *const broken[] = {
        "garbage\n",
        "attnstep progress 1\nsteps 9\nstep 3\ndone 0\nscore 0 0\n",      /* cut: no end */
        "attnstep progress 1\nsteps 9\nstep 30\ndone 0\nscore 0 0\nend\n", /* step past it */
        "attnstep progress 1\nsteps 9\nstep 3\nscore 2 1\nend\n",          /* right > asked */
        "attnstep progress 1\nsteps 9\nstep 3\nanswer 1 number nan\nend\n",
        "attnstep progress 1\nsteps 9\nstep 3\nend\nstep 4\n",            /* after the end */
    };
    char dir[64], path[128], text[128], error[256];
    temp_dir(dir, sizeof dir);
    unsigned long long hash;
    assert_true(ui_progress_hash_file("lessons/cat_sat.yaml", &hash));
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        ui_progress_path(dir, hash, path, sizeof path);
        char name[32];
        snprintf(name, sizeof name, "%s", strrchr(path, '/') + 1);
        assert_true(ui_progress_write_file(dir, name, broken[i], NULL, error, sizeof error));
        ui_progress_describe(dir, "lessons/cat_sat.yaml", text, sizeof text);
        assert_string_equal(text, "saved progress unreadable");
        ui_opened *o;
        ui_view v;
        open_with_progress("lessons/cat_sat.yaml", dir, true, &o, &v);
        assert_string_equal(v.message, "saved progress unreadable; starting afresh");
        assert_int_equal(v.step, 0);
        press(&v, 'n');
        ui_progress_save(o, &v);
        close_with_progress(o, &v);
        ui_progress_describe(dir, "lessons/cat_sat.yaml", text, sizeof text);
        assert_true(strncmp(text, "step 2 of ", 10) == 0);
    }
    remove_tree(dir);
}

/* A folder that cannot be written never stops the lesson: the note says progress is not being
 * saved (a folder under a plain file fails for every user, root included; check_progress.sh
 * tries a read-only folder as an ordinary user). */
static void test_progress_unwritable_folder_is_said(void **state)
{
    (void)state;
    char dir[64], blocked[128];
    temp_dir(dir, sizeof dir);
    snprintf(blocked, sizeof blocked, "%s/file/attnstep", dir);
    char file[128];
    snprintf(file, sizeof file, "%s/file", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    ui_opened *o;
    ui_view v;
    open_with_progress("lessons/cat_sat.yaml", blocked, true, &o, &v);
    assert_true(strncmp(o->progress_note, "progress is not being saved: ", 29) == 0);
    assert_non_null(strstr(o->progress_note, "Not a directory"));
    assert_true(strncmp(v.message, "progress is not being saved: ", 29) == 0);
    press(&v, 'n');   /* the lesson goes on */
    assert_int_equal(v.step, 1);
    ui_progress_save(o, &v);
    assert_true(strncmp(o->progress_note, "progress is not being saved: ", 29) == 0);
    o->state_dir = dir;   /* a save that works clears the note */
    ui_progress_save(o, &v);
    assert_string_equal(o->progress_note, "");
    close_with_progress(o, &v);
    open_with_progress("lessons/cat_sat.yaml", NULL, true, &o, &v);   /* no HOME at all */
    assert_string_equal(v.message,
                        "progress is not being saved: neither XDG_STATE_HOME nor HOME names a folder");
    close_with_progress(o, &v);
    remove_tree(dir);
}

static void kill_self(void)
{
    raise(SIGKILL);
}

/* The whole of a small file into text (NUL-terminated); its length, or -1. */
static long read_text(const char *path, char *text, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(text, 1, size - 1, f);
    fclose(f);
    text[n] = '\0';
    return (long)n;
}

/* A text of n lines, each naming which version it is. */
static char *version_text(char which, int lines)
{
    char *text = malloc((size_t)lines * 40 + 1);
    assert_non_null(text);
    text[0] = '\0';
    for (int i = 0, used = 0; i < lines; i++)
        used += sprintf(text + used, "version %c, line %d of %d\n", which, i + 1, lines);
    return text;
}

/* kill -9 during a save leaves the old file or the new one, never a mixture: once exactly
 * between the write and the rename, then at random moments of saves made in a loop. */
static void test_progress_survives_kill_during_save(void **state)
{
    (void)state;
    char dir[64], path[128], error[256];
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/kill.progress", dir);
    char *a = version_text('A', 3000), *b = version_text('B', 2000);
    size_t big = strlen(a) + 2;
    char *seen = malloc(big);
    assert_non_null(seen);
    assert_true(ui_progress_write_file(dir, "kill.progress", a, NULL, error, sizeof error));

    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        ui_progress_write_file(dir, "kill.progress", b, kill_self, error, sizeof error);
        _exit(0);   /* not reached: the hook kills the process before the rename */
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_true(read_text(path, seen, big) >= 0);
    assert_string_equal(seen, a);

    srand(12345);
    int got_a = 0, got_b = 0;
    for (int round = 0; round < 40; round++) {
        child = fork();
        assert_true(child >= 0);
        if (child == 0)
            for (unsigned i = 0;; i++)
                ui_progress_write_file(dir, "kill.progress", i % 2 ? a : b, NULL, error,
                                       sizeof error);
        usleep((useconds_t)(rand() % 4000));
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(read_text(path, seen, big) >= 0);
        bool whole = strcmp(seen, a) == 0 || strcmp(seen, b) == 0;
        if (!whole) fail_msg("round %d: a torn file of %zu bytes", round, strlen(seen));
        got_a += strcmp(seen, a) == 0;
        got_b += strcmp(seen, b) == 0;
    }
    assert_int_equal(got_a + got_b, 40);
    free(a), free(b), free(seen);
    remove_tree(dir);
}

/* A kill -9 between the write and the rename leaves "<name>.progress.XXXXXX"; the next save into
 * the folder removes it once it is over a minute old (no save takes that long), and leaves a
 * younger temporary (another attnstep's save in progress) and every other file alone. */
static void test_progress_killed_save_temporary_is_swept(void **state)
{
    (void)state;
    char dir[64], error[256];
    temp_dir(dir, sizeof dir);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        ui_progress_write_file(dir, "kill.progress", "new\n", kill_self, error, sizeof error);
        _exit(0);   /* not reached */
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    char left[400] = "", young[128], other[128], listing[1024];
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "kill.progress.", 14) == 0)
            snprintf(left, sizeof left, "%s/%s", dir, e->d_name);
    closedir(d);
    assert_true(left[0]);   /* the killed save's temporary */
    snprintf(young, sizeof young, "%s/busy.progress.Ab12Cd", dir);
    snprintf(other, sizeof other, "%s/old.progress", dir);
    copy_file("/dev/null", young, "in progress\n");
    copy_file("/dev/null", other, "kept\n");
    struct timespec old[2] = {{time(NULL) - UI_PROGRESS_TEMP_AGE - 5, 0},
                              {time(NULL) - UI_PROGRESS_TEMP_AGE - 5, 0}};
    assert_int_equal(utimensat(AT_FDCWD, left, old, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, other, old, 0), 0);
    struct stat st;
    assert_int_equal(stat(left, &st), 0);   /* nothing sweeps before a save */
    assert_true(ui_progress_write_file(dir, "next.progress", "text\n", NULL, error, sizeof error));
    snprintf(listing, sizeof listing, "ls -a '%s' >&2", dir);
    if (stat(left, &st) == 0) { (void)!system(listing); fail_msg("%s was not removed", left); }
    assert_int_equal(stat(young, &st), 0);
    assert_int_equal(stat(other, &st), 0);
    remove_tree(dir);
}

/* ---- one whole headless run through ui_run ---- */

static void test_headless_run_dumps_the_screen(void **state)
{
    (void)state;
    char keys[] = "/tmp/attnstep-test-ui-XXXXXX", out[] = "/tmp/attnstep-test-out-XXXXXX";
    int kfd = mkstemp(keys), ofd = mkstemp(out);
    assert_true(kfd >= 0 && ofd >= 0);
    /* two questions on the way: scores (choice 1 is right), weights (0.63 is right) */
    const char script[] = "n\nn\nn\nn\n1\nn\nn\nn\nn\n0\n.\n6\n3\nenter\ndump\nq\n";
    assert_int_equal(write(kfd, script, sizeof script - 1), (ssize_t)(sizeof script - 1));
    close(kfd);
    ui_options o = {.lesson_path = "tests/screens/cat_sat.yaml", .precision = 4,
                    .color = UI_COLOR_NEVER, .key_script = keys, .screen_cols = 80,
                    .screen_rows = 24};
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(ofd, STDOUT_FILENO);
    int status = ui_run(&o);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(status, 0);
    char text[8192] = "";
    lseek(ofd, 0, SEEK_SET);
    ssize_t got = read(ofd, text, sizeof text - 1);
    close(ofd);
    unlink(keys);
    unlink(out);
    assert_true(got > 0);
    assert_non_null(strstr(text, "--- screen 1 (80x24)"));
    assert_non_null(strstr(text, "step 9 of 13"));
    assert_non_null(strstr(text, "0.6296"));
    assert_non_null(strstr(text, "0.3704"));
    assert_non_null(strstr(text, "score 2/2"));
    assert_non_null(strstr(text, "Right: cat gives 0.6296 of its attention to cat; 0.63 is within "
                                 "± 0.01"));
    assert_non_null(strstr(text, "You answered 2 of 2 questions right"));
}

/* The key timings (ATTNSTEP_KEY_TIMES, which main hands over as key_times): a first-frame line,
 * then one line per key that drew a frame (the quitting key draws none), each
 * "KEY<TAB>KIND<TAB>MICROSECONDS", kinds named by what the key did. Only the lines are checked,
 * never the times (they depend on the machine). */
static void test_key_times_one_line_per_key(void **state)
{
    (void)state;
    char keys[] = "/tmp/attnstep-test-ui-XXXXXX", times[] = "/tmp/attnstep-test-times-XXXXXX";
    char out[] = "/tmp/attnstep-test-out-XXXXXX";
    int kfd = mkstemp(keys), tfd = mkstemp(times), ofd = mkstemp(out);
    assert_true(kfd >= 0 && tfd >= 0 && ofd >= 0);
    const char script[] = "j\nl\nn\ns\nn\no\na\nG\ng\n+\nq\n";
    assert_int_equal(write(kfd, script, sizeof script - 1), (ssize_t)(sizeof script - 1));
    close(kfd);
    close(tfd);
    ui_options o = {.lesson_path = "tests/screens/cat_sat.yaml", .precision = 4,
                    .color = UI_COLOR_NEVER, .key_script = keys, .screen_cols = 80,
                    .screen_rows = 24, .key_times = times};
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(ofd, STDOUT_FILENO);
    int status = ui_run(&o);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(ofd);
    assert_int_equal(status, 0);
    static const char *const expected[][2] = {
        {"j", "move-down"}, {"l", "move-right"}, {"n", "stage-next"}, {"s", "step-in"},
        {"n", "cell-next"}, {"o", "step-out"}, {"a", "heatmap"}, {"G", "last"}, {"g", "first"},
        {"+", "display"},
    };
    FILE *f = fopen(times, "r");
    assert_non_null(f);
    char line[256], key[64], kind[64];
    long long micros = -1;
    double wall = 0;
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(sscanf(line, "first-frame\t-\t%lld\t%lf", &micros, &wall), 2);
    assert_true(micros > 0 && wall > 0);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        assert_true(n < UI_COUNT(expected));
        micros = -1;
        assert_int_equal(sscanf(line, "%63[^\t]\t%63[^\t]\t%lld", key, kind, &micros), 3);
        assert_string_equal(key, expected[n][0]);
        assert_string_equal(kind, expected[n][1]);
        assert_true(micros >= 0);
        n++;
    }
    fclose(f);
    assert_int_equal(n, UI_COUNT(expected));
    unlink(keys);
    unlink(times);
    unlink(out);
}

int main(void)
{
    setlocale(LC_CTYPE, "C.UTF-8");   /* display widths of wide and combining characters */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_key_is_bound_twice),
        cmocka_unit_test(test_every_action_has_a_key_and_help),
        cmocka_unit_test(test_keys_read_as_people_write_them),
        cmocka_unit_test(test_print_keys_lists_every_binding),
        cmocka_unit_test(test_script_lines),
        cmocka_unit_test(test_wrap_breaks_at_spaces_and_newlines),
        cmocka_unit_test(test_ascii_spelling_without_utf8),
        cmocka_unit_test(test_widen_stays_within_its_capacity),
        cmocka_unit_test(test_wide_and_combining_widths),
        cmocka_unit_test_setup_teardown(test_walk_visits_every_stage_in_order, set_up_cat_sat_view, tear_down_view),
        cmocka_unit_test_setup_teardown(test_step_into_fills_in_reading_order, set_up_cat_sat_view, tear_down_view),
        cmocka_unit_test(test_heads_are_sub_steps_and_tab_switches),
        cmocka_unit_test(test_off_the_script_and_back),
        cmocka_unit_test(test_at_lands_where_it_says),
        cmocka_unit_test(test_question_stays_asked),
        cmocka_unit_test(test_number_judged_against_the_true_value),
        cmocka_unit_test_setup_teardown(test_scrolling_keeps_the_selection_visible, set_up_two_head_view, tear_down_view),
        cmocka_unit_test(test_choice_question_hides_then_judges),
        cmocka_unit_test(test_numeric_question_typed_and_right),
        cmocka_unit_test(test_rebuild_keeps_the_place),
        cmocka_unit_test(test_rebuild_keeps_tokens_by_name),
        cmocka_unit_test(test_file_stamp_sees_changes),
        cmocka_unit_test(test_overlays_close_as_they_say),
        cmocka_unit_test(test_selected_cell_keeps_its_heat_colour),
        cmocka_unit_test(test_heatmap_buckets_by_value),
        cmocka_unit_test(test_eight_colour_legend_has_bucket_edges),
        cmocka_unit_test(test_ramp_steps_are_round),
        cmocka_unit_test(test_signed_legend_has_a_round_step),
        cmocka_unit_test(test_masked_cells_have_their_own_mark),
        cmocka_unit_test(test_heads_are_grouped_in_q),
        cmocka_unit_test(test_columns_fit_their_labels),
        cmocka_unit_test(test_display_keys_change_only_the_display),
        cmocka_unit_test(test_classroom_lessons_show_every_column),
        cmocka_unit_test(test_header_keeps_the_head),
        cmocka_unit_test(test_comparison_moves_both_panes),
        cmocka_unit_test(test_comparison_pairs_tokens),
        cmocka_unit_test(test_comparison_missing_head_and_small_terminals),
        cmocka_unit_test(test_compare_key_picks_the_second_lesson),
        cmocka_unit_test(test_step_list_makes_room_for_the_matrix),
        cmocka_unit_test(test_comparison_stacks_where_side_by_side_would_scroll),
        cmocka_unit_test(test_lesson_summary_checks_as_loading),
        cmocka_unit_test(test_picker_marks_broken_lessons_among_large_ones),
        cmocka_unit_test(test_comparison_follows_both_files),
        cmocka_unit_test(test_picker_progress_marks_and_reset),
        cmocka_unit_test(test_progress_dir_follows_xdg),
        cmocka_unit_test(test_progress_answers_and_step_come_back),
        cmocka_unit_test(test_progress_keeps_a_skipped_question),
        cmocka_unit_test(test_progress_edited_lesson_starts_afresh_and_resets),
        cmocka_unit_test(test_progress_corrupt_file_is_ignored),
        cmocka_unit_test(test_progress_unwritable_folder_is_said),
        cmocka_unit_test(test_progress_survives_kill_during_save),
        cmocka_unit_test(test_progress_killed_save_temporary_is_swept),
        cmocka_unit_test(test_headless_run_dumps_the_screen),
        cmocka_unit_test(test_key_times_one_line_per_key),
        cmocka_unit_test(test_edits_on_screen_are_set),
        cmocka_unit_test(test_edits_by_parts_are_checked),
        cmocka_unit_test(test_leaders_edits_under_a_followers_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
