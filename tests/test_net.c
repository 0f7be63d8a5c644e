/* Unit tests of the classroom's transport (src/net/net_link.c) on loopback, leader and
 * followers in one process: joining with the code and the lesson's hash, the refusals, the
 * state reaching every follower and its acknowledgement, and followers joining a restarted
 * leader by themselves. Waits poll the state with a deadline; ports are picked by the kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>
#include "net.h"

#define CODE 0x1234567890abcdefULL
#define HASH 0x00000000cafef00dULL
#define FOLLOWERS 8

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap(void)
{
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
}

typedef struct {
    net_follower *f;
    net_follower_status status;
    net_message state;
    bool has_state;
} student;

/* Polls the leader and every student once; each student acknowledges what it received. */
static void poll_all(net_leader *l, student *s, int n)
{
    double t = now_s();
    if (l) net_leader_poll(l, t);
    for (int i = 0; i < n; i++) {
        bool fresh;
        net_message m;
        s[i].status = net_follower_poll(s[i].f, t, &m, &fresh);
        if (fresh) {
            s[i].state = m;
            s[i].has_state = true;
            net_follower_at(s[i].f, m.seq, m.step, m.head);
        }
    }
}

/* Polls until every student has status and the leader counts `joined` (and `synced`, unless
 * negative), or fails after 10 seconds. */
static void wait_for(net_leader *l, student *s, int n, net_follower_status status, int joined,
                     int synced)
{
    double deadline = now_s() + 10;
    for (;;) {
        poll_all(l, s, n);
        bool all = true;
        for (int i = 0; i < n; i++) all &= s[i].status == status;
        double t = now_s();
        if (all && (!l || (net_leader_joined(l, t) == joined
                           && (synced < 0 || net_leader_synced(l, t) == synced)))) return;
        if (t > deadline)
            fail_msg("timed out: leader counts %d joined, %d synced", l ? net_leader_joined(l, t) : -1,
                     l ? net_leader_synced(l, t) : -1);
        nap();
    }
}

static net_leader *open_leader_with(const char *listen, int per_address, bool encrypt, int *port)
{
    char error[256] = "";
    net_leader_options o = {.listen = listen, .code = CODE, .hash = HASH,
                            .per_address = per_address, .encrypt = encrypt};
    net_leader *l = net_leader_open(&o, error, sizeof error);
    if (!l) fail_msg("%s", error);
    *port = net_leader_port(l);
    return l;
}

/* A leader that admits every follower of these tests from loopback. */
static net_leader *open_leader(const char *listen, int *port)
{
    return open_leader_with(listen, 100, false, port);
}

static net_follower *open_follower(int port, uint64_t code, uint64_t hash, const char *name,
                                   const char *key)
{
    char address[64], error[256];
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    net_follower_options o = {.host_port = address, .code = code, .hash = hash, .name = name,
                              .key = key};
    net_follower *f = net_follower_open(&o, error, sizeof error);
    if (!f) fail_msg("%s", error);
    return f;
}

static void open_students_as(student *s, int n, int port, uint64_t code, uint64_t hash,
                             const char *prefix)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s %d", prefix, i);
        s[i] = (student){.f = open_follower(port, code, hash, name, NULL)};
    }
}

static void open_students(student *s, int n, int port, uint64_t code, uint64_t hash)
{
    open_students_as(s, n, port, code, hash, "student");
}

static void close_students(student *s, int n)
{
    for (int i = 0; i < n; i++) net_follower_close(s[i].f);
}

static void test_followers_join_and_follow(void **state)
{
    (void)state;
    int port;
    net_leader *l = open_leader("127.0.0.1:0", &port);
    assert_true(port > 0);
    student s[FOLLOWERS];
    open_students(s, FOLLOWERS, port, CODE, HASH);
    wait_for(l, s, FOLLOWERS, NET_FOLLOWER_JOINED, FOLLOWERS, -1);
    net_message where = {.type = NET_STATE, .step = 3, .head = 2, .row = 1, .col = 0,
                         .question = NET_QUESTION_OPEN};
    uint32_t seq = net_leader_set_state(l, &where, now_s());
    wait_for(l, s, FOLLOWERS, NET_FOLLOWER_JOINED, FOLLOWERS, FOLLOWERS);
    for (int i = 0; i < FOLLOWERS; i++) {
        assert_int_equal(s[i].state.seq, seq);
        assert_int_equal(s[i].state.step, 3);
        assert_int_equal(s[i].state.head, 2);
        assert_int_equal(s[i].state.question, NET_QUESTION_OPEN);
    }
    /* before any answer, every follower is waited for, by name, cut to the room given */
    char names[64];
    assert_int_equal(net_leader_waiting(l, now_s(), names, sizeof names), FOLLOWERS);
    assert_true(strncmp(names, "student ", 8) == 0);   /* in the order they joined */
    assert_non_null(strstr(names, ", student "));
    assert_true(strlen(names) < sizeof names);
    assert_string_equal(names + strlen(names) - strlen("…"), "…");
    /* answers to the open question are counted, never sent on: choices and numbers */
    for (int i = 0; i < FOLLOWERS; i++) {
        net_message answer = {.seq = seq, .choice = 1 + i % 2};
        if (i >= FOLLOWERS - 2) { answer.is_number = true; answer.number = i; }
        net_follower_answer(s[i].f, &answer);
    }
    int choices[NET_MAX_CHOICE + 1], n_numbers = 0;
    double numbers[4];
    double deadline = now_s() + 10;
    while (net_leader_tally(l, now_s(), choices, numbers, 4, &n_numbers) < FOLLOWERS) {
        poll_all(l, s, FOLLOWERS);
        if (now_s() > deadline) fail_msg("the answers never all arrived");
        nap();
    }
    assert_int_equal(choices[1], (FOLLOWERS - 2) / 2);
    assert_int_equal(choices[2], (FOLLOWERS - 2) / 2);
    assert_int_equal(n_numbers, 2);
    assert_true(numbers[0] + numbers[1] == 2 * FOLLOWERS - 3);
    assert_int_equal(net_leader_waiting(l, now_s(), names, sizeof names), 0);
    assert_string_equal(names, "");
    for (int i = 0; i < FOLLOWERS; i++) assert_int_equal(s[i].state.type, NET_STATE);
    /* the same place again is no new state; a new one is */
    assert_int_equal(net_leader_set_state(l, &where, now_s()), seq);
    where.step = 4;
    assert_int_equal(net_leader_set_state(l, &where, now_s()), seq + 1);
    wait_for(l, s, FOLLOWERS, NET_FOLLOWER_JOINED, FOLLOWERS, FOLLOWERS);
    assert_int_equal(s[0].state.step, 4);
    /* another step's question is a new count */
    assert_int_equal(net_leader_tally(l, now_s(), choices, numbers, 4, &n_numbers), 0);
    /* the leader leaves: every follower hears its bye */
    net_leader_close(l);
    wait_for(NULL, s, FOLLOWERS, NET_FOLLOWER_LEFT, 0, 0);
    close_students(s, FOLLOWERS);
}

static void test_wrong_code_and_hash_are_refused(void **state)
{
    (void)state;
    int port;
    net_leader *l = open_leader("127.0.0.1:0", &port);
    student s[3];
    open_students(&s[0], 1, port, CODE ^ 1, HASH);
    open_students(&s[1], 1, port, CODE, HASH + 1);
    /* both wrong at once: the code is checked first, so a stranger learns nothing of the
       lesson, not even that it is another one (issue 32: the order was untested) */
    open_students(&s[2], 1, port, CODE ^ 1, HASH + 1);
    wait_for(l, s, 3, NET_FOLLOWER_REFUSED, 0, 0);
    net_reason reason;
    uint64_t leader_hash;
    net_follower_refusal(s[0].f, &reason, &leader_hash);
    assert_int_equal(reason, NET_REFUSE_CODE);
    assert_true(leader_hash == 0);   /* nothing about the lesson to a stranger */
    net_follower_refusal(s[1].f, &reason, &leader_hash);
    assert_int_equal(reason, NET_REFUSE_HASH);
    assert_true(leader_hash == HASH);
    net_follower_refusal(s[2].f, &reason, &leader_hash);
    assert_int_equal(reason, NET_REFUSE_CODE);
    assert_true(leader_hash == 0);
    close_students(s, 3);
    net_leader_close(l);
}

/* A leader in a child process, on a port the kernel picks (written to fd), that polls until it
 * is killed. */
static void run_leader_child(int fd)
{
    char error[256];
    net_leader_options o = {.listen = "127.0.0.1:0", .code = CODE, .hash = HASH,
                            .per_address = 100};
    net_leader *l = net_leader_open(&o, error, sizeof error);
    int port = l ? net_leader_port(l) : 0;
    if (!l || write(fd, &port, sizeof port) != (ssize_t)sizeof port) _exit(1);
    net_message where = {.type = NET_STATE, .step = 2, .head = 1};
    net_leader_set_state(l, &where, now_s());
    for (;;) { net_leader_poll(l, now_s()); nap(); }
}

/* Killed (no bye) and started again on the same port with the same code, the leader has its
 * class back without anyone doing anything. */
static void test_followers_rejoin_a_restarted_leader(void **state)
{
    (void)state;
    int fds[2], port = 0;
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) run_leader_child(fds[1]);
    assert_int_equal(read(fds[0], &port, sizeof port), (ssize_t)sizeof port);
    close(fds[0]);
    close(fds[1]);
    student s[FOLLOWERS];
    open_students(s, FOLLOWERS, port, CODE, HASH);
    double deadline = now_s() + 10;
    for (bool all = false; !all; nap()) {   /* following the first leader, at its step */
        poll_all(NULL, s, FOLLOWERS);
        all = true;
        for (int i = 0; i < FOLLOWERS; i++) all &= s[i].has_state && s[i].state.step == 2;
        if (now_s() > deadline) fail_msg("the followers never joined the first leader");
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    char listen[32];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    int again;
    net_leader *l = open_leader(listen, &again);
    assert_int_equal(again, port);
    net_message where = {.type = NET_STATE, .step = 5, .head = 1};
    net_leader_set_state(l, &where, now_s());
    wait_for(l, s, FOLLOWERS, NET_FOLLOWER_JOINED, FOLLOWERS, FOLLOWERS);
    for (int i = 0; i < FOLLOWERS; i++) assert_int_equal(s[i].state.step, 5);
    close_students(s, FOLLOWERS);
    net_leader_close(l);
}

/* ---- raw followers: ZeroMQ sockets that speak the protocol by hand, so that a test can
 * leave without a bye, fall silent, or open hundreds from one address ---- */

static void *raw_socket(void *ctx, int port)
{
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    assert_non_null(sock);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    assert_int_equal(zmq_connect(sock, endpoint), 0);
    return sock;
}

static void raw_send(void *sock, const net_message *m)
{
    char text[NET_MESSAGE_MAX + 1];
    size_t n = net_message_write(m, text, sizeof text);
    assert_true(n > 0);
    assert_int_equal(zmq_send(sock, text, n, 0), (int)n);
}

static void raw_join(void *sock, uint64_t code, const char *name)
{
    net_message join = {.type = NET_JOIN, .code = code, .hash = HASH};
    snprintf(join.name, sizeof join.name, "%s", name);
    raw_send(sock, &join);
}

/* The next message sock has, without waiting: true with it in m. */
static bool raw_next(void *sock, net_message *m)
{
    char text[NET_MESSAGE_MAX];
    int n = zmq_recv(sock, text, sizeof text, ZMQ_DONTWAIT);
    return n > 0 && net_message_parse(text, (size_t)n, m) == NET_OK;
}

/* Polls the leader until sock hears a welcome or a refusal; returns it (fails after 10 s). */
static net_message raw_answer(net_leader *l, void *sock)
{
    double deadline = now_s() + 10;
    for (net_message m;; nap()) {
        net_leader_poll(l, now_s());
        while (raw_next(sock, &m))
            if (m.type == NET_WELCOME || m.type == NET_REFUSE) return m;
        if (now_s() > deadline) fail_msg("no answer to a join");
    }
}

/* Polls the leader until it holds `slots` slots; fails after 5 s, well before a silent
 * follower would be forgotten (10 s), so that a bye or a closed connection must free it. */
static void wait_slots(net_leader *l, int slots)
{
    double deadline = now_s() + 5;
    while (net_leader_poll(l, now_s()), net_leader_slots(l) != slots) {
        if (now_s() > deadline)
            fail_msg("the leader holds %d slots, not %d", net_leader_slots(l), slots);
        nap();
    }
}

/* Issue 26: a slot is freed on a bye, on a closed connection (no bye: the transport's monitor
 * says so) and after 10 seconds of silence; 1,000 short-lived joins (the size of the table)
 * leave room for a class of 30 afterwards. */
static void test_slots_are_freed(void **state)
{
    (void)state;
    int port;
    net_leader *l = open_leader_with("127.0.0.1:0", 40, false, &port);
    void *ctx = zmq_ctx_new();
    for (int i = 0; i < NET_MAX_FOLLOWERS; i++) {
        void *sock = raw_socket(ctx, port);
        raw_join(sock, CODE, "short");
        assert_int_equal(raw_answer(l, sock).type, NET_WELCOME);
        assert_int_equal(net_leader_slots(l), 1);
        if (i % 2 == 0) raw_send(sock, &(net_message){.type = NET_BYE});
        zmq_close(sock);   /* every other one without a word */
        wait_slots(l, 0);
    }
    /* silence: a follower that says nothing for 10 seconds is forgotten */
    void *quiet = raw_socket(ctx, port);
    raw_join(quiet, CODE, "quiet");
    assert_int_equal(raw_answer(l, quiet).type, NET_WELCOME);
    net_leader_poll(l, now_s() + 9);
    assert_int_equal(net_leader_slots(l), 1);
    net_leader_poll(l, now_s() + 11);
    assert_int_equal(net_leader_slots(l), 0);
    zmq_close(quiet);
    zmq_ctx_term(ctx);
    student s[30];
    open_students(s, 30, port, CODE, HASH);
    wait_for(l, s, 30, NET_FOLLOWER_JOINED, 30, -1);
    close_students(s, 30);
    wait_slots(l, 0);   /* each follower's bye */
    net_leader_close(l);
}

/* Issue 26: one follower per name; the name is free again once its holder left. */
static void test_one_follower_per_name(void **state)
{
    (void)state;
    int port;
    net_leader *l = open_leader("127.0.0.1:0", &port);
    student s[2] = {{.f = open_follower(port, CODE, HASH, "Ana", NULL)}};
    net_message where = {.type = NET_STATE, .step = 2, .head = 1};
    net_leader_set_state(l, &where, now_s());
    wait_for(l, s, 1, NET_FOLLOWER_JOINED, 1, 1);
    s[1].f = open_follower(port, CODE, HASH, "Ana", NULL);
    wait_for(l, &s[1], 1, NET_FOLLOWER_REFUSED, 1, -1);
    net_reason reason;
    uint64_t leader_hash;
    net_follower_refusal(s[1].f, &reason, &leader_hash);
    assert_int_equal(reason, NET_REFUSE_NAME);
    /* and the first Ana keeps her slot, where she said she is: a second Ana let in, taking that
     * slot, and refused only when she repeated her join would leave a slot that never said */
    net_roster_entry roster[2];
    assert_int_equal(net_leader_roster(l, now_s(), roster, 2), 1);
    assert_string_equal(roster[0].name, "Ana");
    assert_true(roster[0].placed);
    assert_int_equal(roster[0].step, 2);
    net_follower_close(s[1].f);
    net_follower_close(s[0].f);
    wait_slots(l, 0);
    s[0].f = open_follower(port, CODE, HASH, "Ana", NULL);
    wait_for(l, s, 1, NET_FOLLOWER_JOINED, 1, -1);
    net_follower_close(s[0].f);
    net_leader_close(l);
}

/* Issue 26: one address gets per_address followers (4 by default), however many sockets it
 * opens; wrong codes are answered at most 5 times a second an address, and all counted. */
static void test_one_address_is_limited(void **state)
{
    (void)state;
    enum { SOCKETS = 200, GUESSES = 100 };
    int port;
    net_leader *l = open_leader_with("127.0.0.1:0", 0, false, &port);
    void *ctx = zmq_ctx_new();
    static void *socks[SOCKETS];
    int welcomed = 0, limited = 0;
    for (int i = 0; i < SOCKETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "bot %d", i);
        socks[i] = raw_socket(ctx, port);
        raw_join(socks[i], CODE, name);
    }
    for (int i = 0; i < SOCKETS; i++) {
        net_message m = raw_answer(l, socks[i]);
        welcomed += m.type == NET_WELCOME;
        limited += m.type == NET_REFUSE && m.reason == NET_REFUSE_LIMIT;
    }
    assert_int_equal(welcomed, NET_DEFAULT_PER_ADDRESS);
    assert_int_equal(limited, SOCKETS - NET_DEFAULT_PER_ADDRESS);
    assert_int_equal(net_leader_slots(l), NET_DEFAULT_PER_ADDRESS);
    /* guessing codes: every guess counted, few answered */
    void *guesser = raw_socket(ctx, port);
    for (int i = 0; i < GUESSES; i++) raw_join(guesser, CODE ^ (uint64_t)(i + 1), "guess");
    double deadline = now_s() + 10;
    while (net_leader_wrong_codes(l) < GUESSES && now_s() < deadline) {
        net_leader_poll(l, now_s());
        nap();
    }
    assert_int_equal(net_leader_wrong_codes(l), GUESSES);
    int answered = 0;
    net_message m;
    for (int i = 0; i < 50; i++, nap()) {
        net_leader_poll(l, now_s());
        while (raw_next(guesser, &m)) answered += m.type == NET_REFUSE && m.reason == NET_REFUSE_CODE;
    }
    assert_true(answered >= 1 && answered <= 10);
    zmq_close(guesser);
    for (int i = 0; i < SOCKETS; i++) zmq_close(socks[i]);
    zmq_ctx_term(ctx);
    net_leader_close(l);
}

/* Issue 26: an encrypted leader (--encrypt on loopback; always off it) is heard by a follower
 * with its key, and not by one with another key (whose joins never get through). */
static void test_curve_authenticates_the_leader(void **state)
{
    (void)state;
    int port;
    net_leader *l = open_leader_with("127.0.0.1:0", 0, true, &port);
    const char *key = net_leader_key(l);
    assert_int_equal(strlen(key), NET_KEY_HEX);
    char other[NET_KEY_HEX + 1];
    snprintf(other, sizeof other, "%s", key);
    other[0] = other[0] == '0' ? '1' : '0';
    student s[2] = {{.f = open_follower(port, CODE, HASH, "Ana", key)},
                    {.f = open_follower(port, CODE, HASH, "Bo", other)}};
    wait_for(l, s, 1, NET_FOLLOWER_JOINED, 1, -1);
    double until = now_s() + 2;
    while (now_s() < until) { poll_all(l, s, 2); nap(); }
    assert_int_equal(s[1].status, NET_FOLLOWER_JOINING);
    assert_int_equal(net_leader_joined(l, now_s()), 1);
    close_students(s, 2);
    net_leader_close(l);
    /* without --encrypt, loopback is in clear: no key to give */
    l = open_leader("127.0.0.1:0", &port);
    assert_string_equal(net_leader_key(l), "");
    net_leader_close(l);
}

static void test_addresses(void **state)
{
    (void)state;
    char host[64], error[256];
    int port;
    assert_true(net_split_address("127.0.0.1:7340", host, sizeof host, &port));
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 7340);
    assert_true(net_split_address("class-room.local:0", host, sizeof host, &port));
    static const char *const bad[] = {"", ":1", "host", "host:", "host:65536", "host:-1",
                                      "host:1x", "ho st:1", "a/b:1", "host:123456"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(net_split_address(bad[i], host, sizeof host, &port));
    assert_null(net_leader_open(&(net_leader_options){.listen = "nowhere"}, error, sizeof error));
    assert_non_null(strstr(error, "--listen takes ADDRESS:PORT"));
    net_follower_options o = {.host_port = "127.0.0.1:7340", .code = CODE, .hash = HASH,
                              .name = "\x1b[2J"};
    assert_null(net_follower_open(&o, error, sizeof error));
    assert_non_null(strstr(error, "--name takes 1 to 32 bytes"));
    o.name = "ana";
    o.host_port = "127.0.0.1:0";
    assert_null(net_follower_open(&o, error, sizeof error));
    assert_non_null(strstr(error, "--follow takes HOST:PORT"));
    /* a leader on another machine is followed with its key, and a key is 64 hex digits */
    o.host_port = "192.0.2.1:7340";
    assert_null(net_follower_open(&o, error, sizeof error));
    assert_string_equal(error, "a leader on another machine is followed with its key: add "
                        "--key KEY as the leader printed it");
    o.key = "abc";
    assert_null(net_follower_open(&o, error, sizeof error));
    assert_string_equal(error, "--key takes the leader's key, 64 hex digits, as it printed it");
    assert_true(net_is_loopback("127.0.0.1") && net_is_loopback("localhost"));
    assert_false(net_is_loopback("0") || net_is_loopback("10.0.0.1"));
    uint64_t a = 0, b = 0;
    assert_true(net_class_code(&a, error, sizeof error));
    assert_true(net_class_code(&b, error, sizeof error));
    assert_true(a != b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_followers_join_and_follow),
        cmocka_unit_test(test_wrong_code_and_hash_are_refused),
        cmocka_unit_test(test_followers_rejoin_a_restarted_leader),
        cmocka_unit_test(test_slots_are_freed),
        cmocka_unit_test(test_one_follower_per_name),
        cmocka_unit_test(test_one_address_is_limited),
        cmocka_unit_test(test_curve_authenticates_the_leader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
