/* Unit tests of the classroom protocol's messages (src/net/net_message.c): every type written
 * and parsed back, the canonical text of each, and every kind of malformed message refused
 * with its own error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "net_message.h"

static net_error parse(const char *text, net_message *m)
{
    return net_message_parse(text, strlen(text), m);
}

/* m written is exactly `text`, and `text` parsed is m written again. */
static void canonical(const net_message *m, const char *text)
{
    char buffer[NET_MESSAGE_MAX + 1], again[NET_MESSAGE_MAX + 1];
    size_t n = net_message_write(m, buffer, sizeof buffer);
    assert_string_equal(buffer, text);
    assert_int_equal(n, strlen(text));
    net_message back;
    assert_int_equal(parse(text, &back), NET_OK);
    assert_int_equal(back.type, m->type);
    assert_int_equal(net_message_write(&back, again, sizeof again), n);
    assert_string_equal(again, text);
}

static void test_every_type_round_trips(void **state)
{
    (void)state;
    canonical(&(net_message){.type = NET_JOIN, .code = 0x0123456789abcdefULL,
                             .hash = 0xfedcba9876543210ULL, .name = "Ana Lima"},
              "attnstep/1 join 0123456789abcdef fedcba9876543210 Ana Lima");
    canonical(&(net_message){.type = NET_JOIN, .code = 1, .hash = 0, .name = "Zoë 😀"},
              "attnstep/1 join 0000000000000001 0000000000000000 Zoë 😀");
    /* the shortest name, one character, and the longest, 32 bytes: both ends of the range */
    canonical(&(net_message){.type = NET_JOIN, .code = 2, .hash = 0, .name = "A"},
              "attnstep/1 join 0000000000000002 0000000000000000 A");
    canonical(&(net_message){.type = NET_JOIN, .code = 2, .hash = 0,
                             .name = "a name that is 32 bytes long, xy"},
              "attnstep/1 join 0000000000000002 0000000000000000 a name that is 32 bytes long, xy");
    canonical(&(net_message){.type = NET_WELCOME}, "attnstep/1 welcome");
    canonical(&(net_message){.type = NET_REFUSE, .reason = NET_REFUSE_HASH, .hash = 0xabcULL},
              "attnstep/1 refuse hash 0000000000000abc");
    canonical(&(net_message){.type = NET_REFUSE, .reason = NET_REFUSE_FULL},
              "attnstep/1 refuse full 0000000000000000");
    canonical(&(net_message){.type = NET_STATE, .seq = 41, .step = 7, .head = 2, .row = 0,
                             .col = 3, .question = NET_QUESTION_OPEN},
              "attnstep/1 state 41 7 2 0 3 open");
    canonical(&(net_message){.type = NET_STATE, .seq = NET_MAX_INDEX, .step = 0, .head = 4096,
                             .row = 9, .col = 0, .question = NET_QUESTION_REVEALED},
              "attnstep/1 state 999999999 0 4096 9 0 revealed");
    canonical(&(net_message){.type = NET_ANSWER, .seq = 41, .choice = 2},
              "attnstep/1 answer 41 choice 2");
    canonical(&(net_message){.type = NET_ANSWER, .seq = 41, .is_number = true, .number = 0.6296},
              "attnstep/1 answer 41 number 0.62960000000000005");
    canonical(&(net_message){.type = NET_ANSWER, .seq = 0, .is_number = true, .number = -1e300},
              "attnstep/1 answer 0 number -1.0000000000000001e+300");
    canonical(&(net_message){.type = NET_BYE}, "attnstep/1 bye");
    canonical(&(net_message){.type = NET_AT, .seq = 12, .step = 3, .head = 2}, "attnstep/1 at 12 3 2");
    canonical(&(net_message){.type = NET_REFUSE, .reason = NET_REFUSE_NAME},
              "attnstep/1 refuse name 0000000000000000");
    canonical(&(net_message){.type = NET_REFUSE, .reason = NET_REFUSE_LIMIT},
              "attnstep/1 refuse limit 0000000000000000");
    /* what-if edits (issue 29): the list's version and size, then each cell; a value in
     * "%.17g", which reads back bit for bit, -0 included */
    canonical(&(net_message){.type = NET_EDITS, .seq = 3, .count = 2}, "attnstep/1 edits 3 2");
    canonical(&(net_message){.type = NET_EDITS, .seq = 4, .count = 0}, "attnstep/1 edits 4 0");
    canonical(&(net_message){.type = NET_EDITS, .seq = 1, .count = NET_MAX_EDITS},
              "attnstep/1 edits 1 64");
    canonical(&(net_message){.type = NET_EDIT, .seq = 3, .index = 1, .matrix = "W_Q", .row = 2,
                             .col = 0, .value = 0.1},
              "attnstep/1 edit 3 1 W_Q 2 0 0.10000000000000001");
    canonical(&(net_message){.type = NET_EDIT, .seq = 3, .index = 63,
                             .matrix = "source_embeddings", .row = 0, .col = 7, .value = -0.0},
              "attnstep/1 edit 3 63 source_embeddings 0 7 -0");
    canonical(&(net_message){.type = NET_EDIT, .seq = 0, .index = 0,
                             .matrix = "a23456789012345678901234", .row = 0, .col = 0,
                             .value = 5e-324},
              "attnstep/1 edit 0 0 a23456789012345678901234 0 0 4.9406564584124654e-324");
}

static void test_fields_read_back(void **state)
{
    (void)state;
    net_message m;
    assert_int_equal(parse("attnstep/1 state 5 12 3 1 2 none", &m), NET_OK);
    assert_int_equal(m.seq, 5);
    assert_int_equal(m.step, 12);
    assert_int_equal(m.head, 3);
    assert_int_equal(m.row, 1);
    assert_int_equal(m.col, 2);
    assert_int_equal(m.question, NET_QUESTION_NONE);
    assert_int_equal(parse("attnstep/1 answer 3 number -2.5e-3", &m), NET_OK);
    assert_true(m.is_number);
    assert_true(m.number == -2.5e-3);
    assert_int_equal(parse("attnstep/1 join 00000000000000ff 0000000000000010 a  b", &m), NET_OK);
    assert_true(m.code == 255 && m.hash == 16);
    assert_string_equal(m.name, "a  b");   /* spaces inside a name are its own */
    /* a message is a frame, not a string: the bytes after length are not read */
    assert_int_equal(parse("attnstep/1 edit 9 5 embeddings 1 3 -0.75", &m), NET_OK);
    assert_true(m.type == NET_EDIT && m.seq == 9 && m.index == 5 && m.row == 1 && m.col == 3);
    assert_string_equal(m.matrix, "embeddings");
    assert_true(m.value == -0.75);
    assert_int_equal(parse("attnstep/1 edit 9 5 b_Q 0 1 -0", &m), NET_OK);
    assert_true(m.value == 0 && signbit(m.value));   /* -0 stays -0 */
    assert_int_equal(parse("attnstep/1 edits 9 12", &m), NET_OK);
    assert_true(m.type == NET_EDITS && m.seq == 9 && m.count == 12);
    assert_int_equal(net_message_parse("attnstep/1 byeXYZ", 14, &m), NET_OK);
    assert_int_equal(m.type, NET_BYE);
}

/* Values the format cannot carry are never written. */
static void test_writer_refuses_what_it_cannot_carry(void **state)
{
    (void)state;
    char buffer[NET_MESSAGE_MAX + 1] = "x";
    const net_message bad[] = {
        {.type = NET_JOIN, .name = ""},
        {.type = NET_JOIN, .name = " padded"},
        {.type = NET_JOIN, .name = "tab\there"},
        {.type = NET_JOIN, .name = "esc\x1b[31m"},
        {.type = NET_JOIN, .name = "\xff\xfe"},
        {.type = NET_JOIN, .name = "a name that is 33 bytes long, xyz"},
        {.type = NET_STATE, .head = 0},
        {.type = NET_STATE, .head = 1, .step = NET_MAX_INDEX + 1},
        {.type = NET_STATE, .head = 1, .question = (net_question)3},
        {.type = NET_ANSWER, .choice = 0},
        {.type = NET_ANSWER, .choice = 10},
        {.type = NET_ANSWER, .is_number = true, .number = INFINITY},
        {.type = NET_ANSWER, .is_number = true, .number = NAN},
        {.type = NET_REFUSE, .reason = (net_reason)9},
        {.type = NET_EDITS, .count = NET_MAX_EDITS + 1},
        {.type = NET_EDITS, .seq = NET_MAX_INDEX + 1},
        {.type = NET_EDIT, .matrix = "W_Q", .index = NET_MAX_EDITS},
        {.type = NET_EDIT, .matrix = "W_Q", .value = NAN},
        {.type = NET_EDIT, .matrix = "W_Q", .value = -INFINITY},
        {.type = NET_EDIT, .matrix = ""},
        {.type = NET_EDIT, .matrix = "_W"},
        {.type = NET_EDIT, .matrix = "W Q"},
        {.type = NET_EDIT, .matrix = "W_Q", .row = NET_MAX_INDEX + 1},
        {.type = (net_type)17},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(net_message_write(&bad[i], buffer, sizeof buffer), 0);
        assert_string_equal(buffer, "");
    }
    /* too small a buffer: nothing cut */
    net_message bye = {.type = NET_BYE};
    assert_int_equal(net_message_write(&bye, buffer, 8), 0);
    assert_string_equal(buffer, "");
}

/* Each malformed message and the one error it gets. */
static void test_every_malformation_has_its_error(void **state)
{
    (void)state;
    char too_long[NET_MESSAGE_MAX + 2];
    memset(too_long, 'a', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    static const struct { const char *text; net_error error; } cases[] = {
        {"", NET_ERR_EMPTY},
        {"attnstep/1 join 0000000000000000 0000000000000000 \x1b[2J", NET_ERR_NOT_TEXT},
        {"attnstep/1 bye\n", NET_ERR_NOT_TEXT},
        {"attnstep/1 join 0000000000000000 0000000000000000 \xc3", NET_ERR_NOT_TEXT},
        {"attnstep/1 join 0000000000000000 0000000000000000 \xe2\x80\xae", NET_ERR_NOT_TEXT},
        {"GET / HTTP/1.1", NET_ERR_MAGIC},
        {"attnstep/ bye", NET_ERR_MAGIC},
        {"attnstep/1x bye", NET_ERR_MAGIC},
        {"attnstep/2 bye", NET_ERR_VERSION},
        {"attnstep/10 bye", NET_ERR_VERSION},
        {"attnstep/1 hello", NET_ERR_TYPE},
        {"attnstep/1 averyveryverylongtype", NET_ERR_TYPE},
        {"attnstep/1 BYE", NET_ERR_TYPE},
        {"attnstep/1  bye", NET_ERR_SPACING},
        {"attnstep/1 bye ", NET_ERR_SPACING},
        {"attnstep/1 state 1  2 1 0 0 none", NET_ERR_SPACING},
        {"attnstep/1 state 1 2 1 0 0 none ", NET_ERR_SPACING},
        {"attnstep/1", NET_ERR_MISSING},
        {"attnstep/1 state 1 2 1 0 0", NET_ERR_MISSING},
        {"attnstep/1 join 0000000000000000 0000000000000000", NET_ERR_MISSING},
        {"attnstep/1 answer 1 choice", NET_ERR_MISSING},
        {"attnstep/1 bye now", NET_ERR_EXTRA},
        {"attnstep/1 state 1 2 1 0 0 none 7", NET_ERR_EXTRA},
        {"attnstep/1 answer 1 choice 2 3", NET_ERR_EXTRA},
        {"attnstep/1 state -1 2 1 0 0 none", NET_ERR_INTEGER},
        {"attnstep/1 state 01 2 1 0 0 none", NET_ERR_INTEGER},
        {"attnstep/1 state 1 1000000000 1 0 0 none", NET_ERR_INTEGER},
        {"attnstep/1 state 1 2 0 0 0 none", NET_ERR_INTEGER},
        {"attnstep/1 state 1 2 4097 0 0 none", NET_ERR_INTEGER},
        {"attnstep/1 state 1 2 1 0 99999999999 none", NET_ERR_INTEGER},
        {"attnstep/1 answer x choice 1", NET_ERR_INTEGER},
        {"attnstep/1 at 1e3 0 1", NET_ERR_INTEGER},
        {"attnstep/1 at 1 0 0", NET_ERR_INTEGER},
        {"attnstep/1 at", NET_ERR_MISSING},
        {"attnstep/1 at 1 2", NET_ERR_MISSING},
        {"attnstep/1 at 1 2 1 4", NET_ERR_EXTRA},
        {"attnstep/1 join 0123456789ABCDEF 0000000000000000 Bo", NET_ERR_CODE},
        {"attnstep/1 join 123 0000000000000000 Bo", NET_ERR_CODE},
        {"attnstep/1 join 0000000000000000 00000000000000000 Bo", NET_ERR_HASH},
        {"attnstep/1 refuse hash 000000000000000g", NET_ERR_HASH},
        {"attnstep/1 join 0000000000000000 0000000000000000  Bo", NET_ERR_NAME},
        {"attnstep/1 join 0000000000000000 0000000000000000 Bo ", NET_ERR_NAME},
        {"attnstep/1 join 0000000000000000 0000000000000000 a name that is 33 bytes long, xyz",
         NET_ERR_NAME},
        {"attnstep/1 refuse busy 0000000000000000", NET_ERR_REASON},
        {"attnstep/1 state 1 2 1 0 0 shown", NET_ERR_QUESTION},
        {"attnstep/1 answer 1 guess 2", NET_ERR_ANSWER_KIND},
        {"attnstep/1 answer 1 choice 0", NET_ERR_CHOICE},
        {"attnstep/1 answer 1 choice 10", NET_ERR_CHOICE},
        {"attnstep/1 answer 1 number 1e999", NET_ERR_NUMBER},
        {"attnstep/1 answer 1 number nan", NET_ERR_NUMBER},
        {"attnstep/1 answer 1 number .5", NET_ERR_NUMBER},
        {"attnstep/1 answer 1 number 5.", NET_ERR_NUMBER},
        {"attnstep/1 answer 1 number 0x10", NET_ERR_NUMBER},
        {"attnstep/1 answer 1 number 1.000000000000000000000000000000001", NET_ERR_NUMBER},
        {"attnstep/1 edits 1", NET_ERR_MISSING},
        {"attnstep/1 edits 1 2 3", NET_ERR_EXTRA},
        {"attnstep/1 edits x 2", NET_ERR_INTEGER},
        {"attnstep/1 edits 1 65", NET_ERR_EDITS},
        {"attnstep/1 edits 1 -1", NET_ERR_EDITS},
        {"attnstep/1 edit 1 0 W_Q 0 0", NET_ERR_MISSING},
        {"attnstep/1 edit 1 0 W_Q 0 0 1 2", NET_ERR_EXTRA},
        {"attnstep/1 edit 1 0 W_Q 0  1", NET_ERR_SPACING},
        {"attnstep/1 edit 1 64 W_Q 0 0 1", NET_ERR_EDITS},
        {"attnstep/1 edit 1 0 W_Q -1 0 1", NET_ERR_INTEGER},
        {"attnstep/1 edit 1 0 W_Q 0 1000000000 1", NET_ERR_INTEGER},
        {"attnstep/1 edit 01 0 W_Q 0 0 1", NET_ERR_INTEGER},
        {"attnstep/1 edit 1 0 ../etc/passwd 0 0 1", NET_ERR_MATRIX},
        {"attnstep/1 edit 1 0 _W 0 0 1", NET_ERR_MATRIX},
        {"attnstep/1 edit 1 0 W-Q 0 0 1", NET_ERR_MATRIX},
        {"attnstep/1 edit 1 0 a234567890123456789012345 0 0 1", NET_ERR_MATRIX},
        {"attnstep/1 edit 1 0 W_Q 0 0 inf", NET_ERR_NUMBER},
        {"attnstep/1 edit 1 0 W_Q 0 0 1e999", NET_ERR_NUMBER},
        {"attnstep/1 edit 1 0 W_Q 0 0 nan", NET_ERR_NUMBER},
    };
    bool seen[NET_ERROR_COUNT] = {false};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        net_message m = {.type = NET_BYE, .seq = 77};
        net_error got = parse(cases[i].text, &m);
        if (got != cases[i].error)
            fail_msg("'%s': %s, expected %s", cases[i].text, net_error_message(got),
                     net_error_message(cases[i].error));
        assert_int_equal(m.seq, 77);   /* untouched when refused */
        seen[got] = true;
    }
    net_message m;
    assert_int_equal(parse(too_long, &m), NET_ERR_TOO_LONG);
    assert_int_equal(net_message_parse("attnstep/1 bye\0", 15, &m), NET_ERR_NOT_TEXT);
    /* a character cut by the frame's end is not completed by the bytes after it (fuzz_message
     * found text_decode reading past the frame) */
    static const char cut[] = "attnstep/1 join 0000000000000000 0000000000000000 Zo\xc3\xab";
    assert_int_equal(net_message_parse(cut, sizeof cut - 2, &m), NET_ERR_NOT_TEXT);
    assert_int_equal(net_message_parse(cut, sizeof cut - 1, &m), NET_OK);
    seen[NET_ERR_TOO_LONG] = seen[NET_OK] = true;
    for (int e = 0; e < NET_ERROR_COUNT; e++)
        if (!seen[e]) fail_msg("no test gets '%s'", net_error_message((net_error)e));
}

/* One sentence for each error, and no two alike. */
static void test_error_messages(void **state)
{
    (void)state;
    for (int a = 0; a < NET_ERROR_COUNT; a++) {
        assert_true(strlen(net_error_message((net_error)a)) > 10);
        for (int b = 0; b < a; b++)
            assert_string_not_equal(net_error_message((net_error)a), net_error_message((net_error)b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_round_trips),
        cmocka_unit_test(test_fields_read_back),
        cmocka_unit_test(test_writer_refuses_what_it_cannot_carry),
        cmocka_unit_test(test_every_malformation_has_its_error),
        cmocka_unit_test(test_error_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
