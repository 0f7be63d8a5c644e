/* Unit tests of recording and replaying demos: the key script's "wait MS" line, writing any
 * event back as the line that reads as it (the recorder's writer), the replay keys of the key
 * table and the replay clock (pause, speed, its bounds). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ui_curses.h"
#include "ui_keys.h"
#include "ui_replay.h"

static void test_wait_lines(void **state)
{
    (void)state;
    ui_event ev;
    char error[512];
    assert_int_equal(ui_script_parse_line("wait 250\n", &ev, error, sizeof error), 1);
    assert_int_equal(ev.kind, UI_EV_WAIT);
    assert_int_equal(ev.ms, 250);
    assert_int_equal(ui_script_parse_line("  wait\t0 ", &ev, error, sizeof error), 1);
    assert_int_equal(ev.ms, 0);
    assert_int_equal(ui_script_parse_line("wait 3600000", &ev, error, sizeof error), 1);
    assert_int_equal(ev.ms, UI_SCRIPT_MAX_WAIT_MS);
}

/* Each malformed wait is refused with the one message that says what a wait needs. */
static void test_bad_wait_lines(void **state)
{
    (void)state;
    static const char *const bad[] = {"wait", "wait -1", "wait +5", "wait 1.5", "wait 3600001",
                                      "wait 99999999999999999999", "wait 10ms", "wait x",
                                      "wait 1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ui_event ev;
        char error[512] = "";
        assert_int_equal(ui_script_parse_line(bad[i], &ev, error, sizeof error), -1);
        assert_string_equal(error, "wait needs whole milliseconds from 0 to 3600000, e.g. 'wait 250'");
    }
    ui_event ev;
    char error[512];
    static const char *const bad_awaits[] = {"await", "await joined", "await joined -1",
                                             "await joined 1001", "await synced 3", "await lunch",
                                             "await answered x", "await question now"};
    for (size_t i = 0; i < sizeof bad_awaits / sizeof bad_awaits[0]; i++) {
        assert_int_equal(ui_script_parse_line(bad_awaits[i], &ev, error, sizeof error), -1);
        assert_string_equal(error, "await needs 'joined N', 'answered N' (N from 0 to 1000), "
                                   "'synced' or 'question'");
    }
    assert_int_equal(ui_script_parse_line("waiting", &ev, error, sizeof error), -1);
    assert_non_null(strstr(error, "unknown key 'waiting'"));
    assert_non_null(strstr(error, "wait MS"));
}

/* Writes ev, reads the line back and checks it is the same event. */
static void round_trip(const ui_event *ev)
{
    char line[512], error[512];
    assert_true(ui_script_format_event(ev, line, sizeof line));
    assert_int_equal(line[strlen(line) - 1], '\n');
    ui_event back;
    assert_int_equal(ui_script_parse_line(line, &back, error, sizeof error), 1);
    assert_int_equal(back.kind, ev->kind);
    switch (ev->kind) {
    case UI_EV_KEY: assert_int_equal(back.key, ev->key); break;
    case UI_EV_WAIT: assert_int_equal(back.ms, ev->ms); break;
    case UI_EV_RESIZE: case UI_EV_CLICK:
        assert_int_equal(back.x, ev->x);
        assert_int_equal(back.y, ev->y);
        break;
    case UI_EV_RELOAD: assert_string_equal(back.file, ev->file); break;
    case UI_EV_AWAIT:
        assert_int_equal(back.key, ev->key);
        assert_int_equal(back.x, ev->x);
        break;
    default: break;
    }
}

/* Every key of the key table that a script can name, and every other event, reads back as
 * itself; what a script cannot hold is refused, never written as another key. */
static void test_events_round_trip(void **state)
{
    (void)state;
    int count, named = 0;
    const ui_binding *b = ui_bindings(&count);
    for (int i = 0; i < count; i++)
        for (const int *k = b[i].keys; *k; k++) {
            ui_event ev = {.kind = UI_EV_KEY, .key = *k};
            char line[64];
            if (!ui_script_format_event(&ev, line, sizeof line)) {
                fail_msg("key %d of the key table has no script name", *k);
            }
            round_trip(&ev);
            named++;
        }
    assert_true(named > 50);
    for (int c = 0x21; c < 0x7F; c++)
        if (c != '#') round_trip(&(ui_event){.kind = UI_EV_KEY, .key = c});
    round_trip(&(ui_event){.kind = UI_EV_WAIT, .ms = 0});
    round_trip(&(ui_event){.kind = UI_EV_WAIT, .ms = 1234});
    round_trip(&(ui_event){.kind = UI_EV_RESIZE, .x = 100, .y = 30});
    round_trip(&(ui_event){.kind = UI_EV_CLICK, .x = 0, .y = 7});
    round_trip(&(ui_event){.kind = UI_EV_DUMP});
    round_trip(&(ui_event){.kind = UI_EV_AWAIT, .key = UI_AWAIT_JOINED, .x = 30});
    round_trip(&(ui_event){.kind = UI_EV_AWAIT, .key = UI_AWAIT_SYNCED});
    round_trip(&(ui_event){.kind = UI_EV_AWAIT, .key = UI_AWAIT_ANSWERED, .x = 0});
    round_trip(&(ui_event){.kind = UI_EV_AWAIT, .key = UI_AWAIT_QUESTION});
    round_trip(&(ui_event){.kind = UI_EV_RELOAD, .file = ""});
    round_trip(&(ui_event){.kind = UI_EV_RELOAD, .file = "next.yaml"});
    char line[64] = "untouched";
    assert_false(ui_script_format_event(&(ui_event){.kind = UI_EV_TICK}, line, sizeof line));
    assert_string_equal(line, "");
    assert_false(ui_script_format_event(&(ui_event){.kind = UI_EV_KEY, .key = '#'}, line,
                                        sizeof line));   /* it would read as a comment */
    assert_false(ui_script_format_event(&(ui_event){.kind = UI_EV_KEY, .key = 0xE9}, line,
                                        sizeof line));   /* é: no script name */
    assert_false(ui_script_format_event(&(ui_event){.kind = UI_EV_KEY, .key = UI_KEY(KEY_F(5))},
                                        line, sizeof line));
    assert_false(ui_script_format_event(&(ui_event){.kind = UI_EV_RESIZE, .x = 100, .y = 30},
                                        line, 5));   /* too small a buffer: nothing cut */
    assert_string_equal(line, "");
}

static void test_replay_keys(void **state)
{
    (void)state;
    assert_int_equal(ui_key_action(' ', UI_IN_REPLAY, NULL), UI_ACT_REPLAY_PAUSE);
    assert_int_equal(ui_key_action('+', UI_IN_REPLAY, NULL), UI_ACT_REPLAY_FASTER);
    assert_int_equal(ui_key_action('-', UI_IN_REPLAY, NULL), UI_ACT_REPLAY_SLOWER);
    assert_int_equal(ui_key_action('q', UI_IN_REPLAY, NULL), UI_ACT_REPLAY_STOP);
    assert_int_equal(ui_key_action(27, UI_IN_REPLAY, NULL), UI_ACT_REPLAY_STOP);
    /* the lesson's keys do nothing while the demo plays */
    assert_int_equal(ui_key_action('n', UI_IN_REPLAY, NULL), UI_ACT_NONE);
    assert_int_equal(ui_key_action('j', UI_IN_REPLAY, NULL), UI_ACT_NONE);
    /* and the replay's keys keep their meaning in a lesson */
    assert_int_equal(ui_key_action(' ', UI_IN_LESSON, NULL), UI_ACT_NEXT);
    assert_int_equal(ui_key_action('+', UI_IN_LESSON, NULL), UI_ACT_MORE_DECIMALS);
}

static void test_replay_clock(void **state)
{
    (void)state;
    ui_replay r;
    ui_replay_init(&r);
    assert_true(ui_replay_left(&r, 5.0) == 0);   /* no wait under way */
    ui_replay_wait(&r, 1000, 10.0);
    assert_true(fabs(ui_replay_left(&r, 10.25) - 0.75) < 1e-9);
    /* twice as fast at 10.25: 0.75 recorded seconds left take 0.375 */
    assert_true(ui_replay_act(&r, UI_ACT_REPLAY_FASTER, 10.25));
    assert_true(ui_replay_speed(&r) == 2.0);
    assert_true(fabs(ui_replay_left(&r, 10.25) - 0.375) < 1e-9);
    assert_true(fabs(ui_replay_left(&r, 10.35) - 0.275) < 1e-9);
    /* paused at 10.35: never ends by itself, and resumes with what was left */
    assert_true(ui_replay_act(&r, UI_ACT_REPLAY_PAUSE, 10.35));
    assert_true(ui_replay_left(&r, 99.0) < 0);
    assert_true(ui_replay_act(&r, UI_ACT_REPLAY_PAUSE, 100.0));
    assert_true(fabs(ui_replay_left(&r, 100.0) - 0.275) < 1e-9);
    /* back to speed 1 then half: the 0.55 recorded seconds left take 1.1 */
    assert_true(ui_replay_act(&r, UI_ACT_REPLAY_SLOWER, 100.0));
    assert_true(ui_replay_act(&r, UI_ACT_REPLAY_SLOWER, 100.0));
    assert_true(ui_replay_speed(&r) == 0.5);
    assert_true(fabs(ui_replay_left(&r, 100.0) - 1.1) < 1e-9);
    assert_true(ui_replay_left(&r, 102.0) == 0);
    ui_replay_done(&r);
    assert_true(ui_replay_left(&r, 102.0) == 0);
    /* the speed stays within 1/8 and 8 */
    while (ui_replay_act(&r, UI_ACT_REPLAY_SLOWER, 0)) {}
    assert_true(ui_replay_speed(&r) == 0.125);
    while (ui_replay_act(&r, UI_ACT_REPLAY_FASTER, 0)) {}
    assert_true(ui_replay_speed(&r) == 8.0);
    assert_false(ui_replay_act(&r, UI_ACT_NEXT, 0));
}

/* A loaded script keeps each event in 12 bytes (issue 26: 280 before) and gives back the
 * events its lines parse to, reload names included. */
static void test_loaded_script_is_compact(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "n", "wait 250", "resize 40x12", "click 3 4", "reload a b.yaml", "reload",
        "await joined 3", "await synced", "dump", "clears", "enter", "reload next.yaml",
    };
    enum { N = sizeof lines / sizeof lines[0] };
    assert_true(sizeof(ui_script_step) <= 12);
    char path[] = "/tmp/attnstep-test-script-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("# a comment\n\n", f);
    for (size_t i = 0; i < N; i++) fprintf(f, "%s\n", lines[i]);
    fclose(f);
    ui_script script;
    char error[512];
    assert_int_equal(ui_script_load(path, &script, error, sizeof error), EXIT_STATUS_OK);
    unlink(path);
    assert_int_equal(script.count, N);
    for (int i = 0; i < N; i++) {
        ui_event want, got = ui_script_event(&script, i);
        assert_int_equal(ui_script_parse_line(lines[i], &want, error, sizeof error), 1);
        assert_int_equal(got.kind, want.kind);
        assert_int_equal(got.key, want.key);
        assert_int_equal(got.ms, want.ms);
        assert_int_equal(got.x, want.x);
        assert_int_equal(got.y, want.y);
        assert_string_equal(got.file, want.file);
    }
    ui_script_free(&script);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_lines),
        cmocka_unit_test(test_bad_wait_lines),
        cmocka_unit_test(test_events_round_trip),
        cmocka_unit_test(test_loaded_script_is_compact),
        cmocka_unit_test(test_replay_keys),
        cmocka_unit_test(test_replay_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
