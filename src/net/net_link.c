/* The classroom's transport over ZeroMQ (net.h): the leader's ROUTER socket and its table of
 * followers, a follower's DEALER socket and its joining; the only file that includes zmq.h.
 * Every send and receive is non-blocking; every payload is parsed by net_message_parse. */
#include "net.h"
#include "text.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <zmq.h>

#define HEARTBEAT_S 0.5       /* the leader sends the state again this often */
#define SILENT_S 2.0          /* a follower that hears nothing this long joins again */
#define GONE_S 3.0            /* a follower not heard from this long is not counted */
#define JOIN_EVERY_S 0.5      /* how often a follower asks to join */
#define KEEPALIVE_S 1.0       /* how often a joined follower says where it is */
#define MAX_ID 256            /* a ZeroMQ routing id is at most 255 bytes */
#define LEADER_QUEUE 64       /* messages queued per follower before the leader drops */
#define CLOSE_LINGER_MS 200   /* how long closing may try to deliver its byes */

bool net_class_code(uint64_t *code, char *error, size_t size)
{
    uint8_t bytes[8];
    ssize_t got = getrandom(bytes, sizeof bytes, 0);
    if (got != (ssize_t)sizeof bytes) {
        snprintf(error, size, "no random class code: %s", got < 0 ? strerror(errno) : "short read");
        return false;
    }
    uint64_t c = 0;
    for (int i = 0; i < 8; i++) c = c << 8 | bytes[i];
    *code = c;
    return true;
}

bool net_split_address(const char *text, char *host, size_t size, int *port)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= size || colon - text > 253)
        return false;
    size_t n = (size_t)(colon - text);
    if (strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != n)
        return false;
    const char *digits = colon + 1;
    size_t d = strlen(digits);
    if (d == 0 || d > 5 || strspn(digits, "0123456789") != d) return false;
    long p = strtol(digits, NULL, 10);
    if (p > 65535) return false;
    memcpy(host, text, n);
    host[n] = '\0';
    *port = (int)p;
    return true;
}

/* A socket with the options both sides share: a short linger for the last byes, a bounded
 * receive queue, and no
 * message longer than the protocol allows (ZeroMQ drops the peer that sends one). */
static void *new_socket(void *ctx, int type, int send_queue)
{
    void *sock = zmq_socket(ctx, type);
    if (!sock) return NULL;
    int linger = CLOSE_LINGER_MS, receive_queue = 1024;
    int64_t max_size = NET_MESSAGE_MAX;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_SNDHWM, &send_queue, sizeof send_queue);
    zmq_setsockopt(sock, ZMQ_RCVHWM, &receive_queue, sizeof receive_queue);
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size);
    return sock;
}

/* Writes m and sends it, after the routing id when id is given; never waits (a full queue
 * drops the message). */
static void send_message(void *sock, const uint8_t *id, size_t id_len, const net_message *m)
{
    char text[NET_MESSAGE_MAX + 1];
    size_t n = net_message_write(m, text, sizeof text);
    if (n == 0) return;
    if (id && zmq_send(sock, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) return;
    zmq_send(sock, text, n, ZMQ_DONTWAIT);
}

/* Receives one payload (after its routing id when id is given) without waiting. Returns its
 * length, 0 when nothing is waiting, -1 for a message of another shape (dropped whole). */
static int receive(void *sock, uint8_t *id, size_t *id_len, char *payload, size_t size)
{
    int more = 0;
    size_t more_size = sizeof more;
    if (id) {
        int n = zmq_recv(sock, id, MAX_ID, ZMQ_DONTWAIT);
        if (n < 0) return 0;
        *id_len = (size_t)(n < MAX_ID ? n : MAX_ID);
        zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &more_size);
        if (!more) return -1;
    }
    int n = zmq_recv(sock, payload, size, ZMQ_DONTWAIT);
    if (n < 0) return id ? -1 : 0;
    zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &more_size);
    bool extra = more;
    while (more) {   /* a frame too many: read and drop the rest */
        char scratch[64];
        zmq_recv(sock, scratch, sizeof scratch, ZMQ_DONTWAIT);
        zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &more_size);
    }
    return extra || (size_t)n > size ? -1 : n;
}

/* ---- the leader ---- */

typedef struct {
    uint8_t id[MAX_ID];
    size_t id_len;
    double seen;       /* when it was last heard from */
    char name[NET_NAME_MAX + 1];   /* as it joined: text without controls, escaped when shown */
    uint32_t at;       /* the state it last said it shows */
    net_message answer;   /* its answer to the question open now, when has_answer */
    bool has_answer;
} peer;

struct net_leader {
    void *ctx, *sock;
    uint64_t code, hash;
    peer *peers;
    int count;
    net_message state;
    bool has_state;
    uint32_t seq;
    uint32_t question_seq;   /* the state at which the question open now was opened */
    double next_beat;
    int joined, synced;   /* as last counted, to tell a change */
};

net_leader *net_leader_open(const char *listen, uint64_t code, uint64_t hash, int *port,
                            char *error, size_t size)
{
    char host[256], endpoint[300];
    int wanted = NET_DEFAULT_PORT;
    if (!listen) snprintf(host, sizeof host, "127.0.0.1");
    else if (!net_split_address(listen, host, sizeof host, &wanted)) {
        snprintf(error, size, "--listen takes ADDRESS:PORT, e.g. 127.0.0.1:7340 (port 0: any free one)");
        return NULL;
    }
    net_leader *l = calloc(1, sizeof *l);
    if (!l || !(l->peers = calloc(NET_MAX_FOLLOWERS, sizeof *l->peers))) {
        free(l);
        snprintf(error, size, "out of memory");
        return NULL;
    }
    l->code = code;
    l->hash = hash;
    l->ctx = zmq_ctx_new();
    l->sock = l->ctx ? new_socket(l->ctx, ZMQ_ROUTER, LEADER_QUEUE) : NULL;
    if (wanted) snprintf(endpoint, sizeof endpoint, "tcp://%s:%d", host, wanted);
    else snprintf(endpoint, sizeof endpoint, "tcp://%s:*", host);
    if (!l->sock || zmq_bind(l->sock, endpoint) != 0) {
        snprintf(error, size, "cannot listen on %s:%d: %s", host, wanted, zmq_strerror(zmq_errno()));
        net_leader_close(l);
        return NULL;
    }
    char last[300] = "";
    size_t last_size = sizeof last;
    zmq_getsockopt(l->sock, ZMQ_LAST_ENDPOINT, last, &last_size);
    const char *colon = strrchr(last, ':');
    *port = colon ? atoi(colon + 1) : wanted;
    return l;
}

void net_leader_close(net_leader *l)
{
    if (!l) return;
    if (l->sock) {
        net_message bye = {.type = NET_BYE};
        for (int i = 0; i < l->count; i++) send_message(l->sock, l->peers[i].id, l->peers[i].id_len, &bye);
        zmq_close(l->sock);
    }
    if (l->ctx) zmq_ctx_term(l->ctx);
    free(l->peers);
    free(l);
}

static peer *find_peer(net_leader *l, const uint8_t *id, size_t id_len)
{
    for (int i = 0; i < l->count; i++)
        if (l->peers[i].id_len == id_len && memcmp(l->peers[i].id, id, id_len) == 0)
            return &l->peers[i];
    return NULL;
}

/* A follower asking to join: welcomed with the state, or refused with the reason. */
static void on_join(net_leader *l, const uint8_t *id, size_t id_len, const net_message *m,
                    double now)
{
    net_message refuse = {.type = NET_REFUSE, .hash = l->hash};
    peer *p = find_peer(l, id, id_len);
    if (m->code != l->code) refuse.reason = NET_REFUSE_CODE;
    else if (m->hash != l->hash) refuse.reason = NET_REFUSE_HASH;
    else if (!p && l->count == NET_MAX_FOLLOWERS) refuse.reason = NET_REFUSE_FULL;
    else {
        if (!p) {
            p = &l->peers[l->count++];
            memcpy(p->id, id, id_len);
            p->id_len = id_len;
        }
        p->seen = now;
        p->at = UINT32_MAX;
        memcpy(p->name, m->name, sizeof p->name);
        send_message(l->sock, id, id_len, &(net_message){.type = NET_WELCOME});
        if (l->has_state) send_message(l->sock, id, id_len, &l->state);
        return;
    }
    if (refuse.reason != NET_REFUSE_HASH) refuse.hash = 0;   /* the hash only for a hash refusal */
    send_message(l->sock, id, id_len, &refuse);
}

static void broadcast_state(net_leader *l)
{
    for (int i = 0; i < l->count; i++) send_message(l->sock, l->peers[i].id, l->peers[i].id_len, &l->state);
}

uint32_t net_leader_set_state(net_leader *l, const net_message *state, double now)
{
    net_message next = *state;
    next.type = NET_STATE;
    next.seq = l->seq;
    if (l->has_state && memcmp(&next, &l->state, sizeof next) == 0) return l->seq;
    next.seq = ++l->seq;
    bool same_question = l->has_state && l->state.step == next.step
                         && l->state.question == NET_QUESTION_OPEN;
    if (next.question == NET_QUESTION_OPEN && !same_question) {   /* a new count */
        l->question_seq = next.seq;
        for (int i = 0; i < l->count; i++) l->peers[i].has_answer = false;
    }
    l->state = next;
    l->has_state = true;
    broadcast_state(l);
    l->next_beat = now + HEARTBEAT_S;
    return l->seq;
}

bool net_leader_poll(net_leader *l, double now)
{
    uint8_t id[MAX_ID];
    size_t id_len = 0;
    char payload[NET_MESSAGE_MAX];
    for (int budget = 4 * NET_MAX_FOLLOWERS; budget > 0; budget--) {   /* never a whole frame's worth of waiting */
        int n = receive(l->sock, id, &id_len, payload, sizeof payload);
        if (n == 0) break;
        net_message m;
        if (n < 0 || net_message_parse(payload, (size_t)n, &m) != NET_OK) continue;
        if (m.type == NET_JOIN) on_join(l, id, id_len, &m, now);
        peer *p = find_peer(l, id, id_len);
        if (p && m.type == NET_AT) { p->seen = now; p->at = m.seq; }
        /* an answer counts for the question open now, asked at or after question_seq */
        if (p && m.type == NET_ANSWER && l->has_state && l->state.question == NET_QUESTION_OPEN
            && m.seq >= l->question_seq && m.seq <= l->seq) {
            p->answer = m;
            p->has_answer = true;
        }
    }
    if (l->has_state && now >= l->next_beat) {
        broadcast_state(l);
        l->next_beat = now + HEARTBEAT_S;
    }
    int joined = net_leader_joined(l, now), synced = net_leader_synced(l, now);
    bool changed = joined != l->joined || synced != l->synced;
    l->joined = joined;
    l->synced = synced;
    return changed;
}

int net_leader_tally(const net_leader *l, double now, int choices[NET_MAX_CHOICE + 1],
                     double *numbers, int max, int *n_numbers)
{
    int answered = 0;
    memset(choices, 0, (NET_MAX_CHOICE + 1) * sizeof *choices);
    *n_numbers = 0;
    for (int i = 0; i < l->count; i++) {
        const peer *p = &l->peers[i];
        if (!p->has_answer || now - p->seen >= GONE_S) continue;
        answered++;
        if (!p->answer.is_number) choices[p->answer.choice]++;
        else if (*n_numbers < max) numbers[(*n_numbers)++] = p->answer.number;
    }
    return answered;
}

int net_leader_waiting(const net_leader *l, double now, char *names, size_t size)
{
    int waiting = 0;
    size_t used = 0;
    if (size) names[0] = '\0';
    for (int i = 0; i < l->count; i++) {
        const peer *p = &l->peers[i];
        if (p->has_answer || now - p->seen >= GONE_S) continue;
        char shown[4 * NET_NAME_MAX + 8];
        text_escape(p->name, shown, sizeof shown);
        if (used < size) {
            int n = snprintf(names + used, size - used, "%s%s", waiting ? ", " : "", shown);
            used = n < 0 || (size_t)n >= size - used ? size : used + (size_t)n;
            if (used == size && size > 4) snprintf(names + size - 4, 4, "…");
        }
        waiting++;
    }
    return waiting;
}

int net_leader_joined(const net_leader *l, double now)
{
    int n = 0;
    for (int i = 0; i < l->count; i++) n += now - l->peers[i].seen < GONE_S;
    return n;
}

int net_leader_synced(const net_leader *l, double now)
{
    int n = 0;
    for (int i = 0; i < l->count; i++)
        n += now - l->peers[i].seen < GONE_S && l->has_state && l->peers[i].at == l->state.seq;
    return n;
}

/* ---- a follower ---- */

struct net_follower {
    void *ctx, *sock;
    net_message join;
    net_follower_status status;
    double heard, next_send;
    uint32_t at;
    bool has_at;
    net_reason reason;
    uint64_t leader_hash;
};

net_follower *net_follower_open(const char *host_port, uint64_t code, uint64_t hash,
                                const char *name, char *error, size_t size)
{
    char host[256], endpoint[300], check[NET_MESSAGE_MAX + 1];
    int port;
    if (!net_split_address(host_port, host, sizeof host, &port) || port == 0) {
        snprintf(error, size, "--follow takes HOST:PORT, e.g. 127.0.0.1:7340");
        return NULL;
    }
    net_message join = {.type = NET_JOIN, .code = code, .hash = hash};
    if (strlen(name) > NET_NAME_MAX || (snprintf(join.name, sizeof join.name, "%s", name),
                                        net_message_write(&join, check, sizeof check) == 0)) {
        snprintf(error, size, "--name takes 1 to %d bytes of text, without control characters "
                 "or a space at either end", NET_NAME_MAX);
        return NULL;
    }
    net_follower *f = calloc(1, sizeof *f);
    if (!f) { snprintf(error, size, "out of memory"); return NULL; }
    f->join = join;
    f->ctx = zmq_ctx_new();
    f->sock = f->ctx ? new_socket(f->ctx, ZMQ_DEALER, 4) : NULL;
    /* Not ZMQ_IMMEDIATE: with it, libzmq 4.3 dropped the leader's last message (its bye) when
     * the connection closed before it was read. While unconnected, a few joins queue (4 at
     * most, SNDHWM) and are answered alike. */
    int reconnect = 100, reconnect_max = 1000;
    snprintf(endpoint, sizeof endpoint, "tcp://%s:%d", host, port);
    if (f->sock) {
        zmq_setsockopt(f->sock, ZMQ_RECONNECT_IVL, &reconnect, sizeof reconnect);
        zmq_setsockopt(f->sock, ZMQ_RECONNECT_IVL_MAX, &reconnect_max, sizeof reconnect_max);
    }
    if (!f->sock || zmq_connect(f->sock, endpoint) != 0) {
        snprintf(error, size, "cannot connect to %s: %s", host_port, zmq_strerror(zmq_errno()));
        net_follower_close(f);
        return NULL;
    }
    return f;
}

void net_follower_close(net_follower *f)
{
    if (!f) return;
    if (f->sock) {
        send_message(f->sock, NULL, 0, &(net_message){.type = NET_BYE});
        zmq_close(f->sock);
    }
    if (f->ctx) zmq_ctx_term(f->ctx);
    free(f);
}

void net_follower_answer(net_follower *f, const net_message *answer)
{
    net_message m = *answer;
    m.type = NET_ANSWER;
    if (f->status == NET_FOLLOWER_JOINED) send_message(f->sock, NULL, 0, &m);
}

void net_follower_at(net_follower *f, uint32_t seq)
{
    f->at = seq;
    f->has_at = true;
    if (f->status == NET_FOLLOWER_JOINED)
        send_message(f->sock, NULL, 0, &(net_message){.type = NET_AT, .seq = seq});
}

net_follower_status net_follower_poll(net_follower *f, double now, net_message *state, bool *fresh)
{
    char payload[NET_MESSAGE_MAX];
    *fresh = false;
    for (int budget = 1024; budget > 0; budget--) {
        int n = receive(f->sock, NULL, NULL, payload, sizeof payload);
        if (n == 0) break;
        net_message m;
        if (n < 0 || net_message_parse(payload, (size_t)n, &m) != NET_OK) continue;
        if (f->status == NET_FOLLOWER_REFUSED) continue;
        if (m.type == NET_WELCOME || m.type == NET_STATE) {
            if (f->status != NET_FOLLOWER_JOINED) f->next_send = now;   /* say where it is */
            f->status = NET_FOLLOWER_JOINED;
            f->heard = now;
        }
        if (m.type == NET_STATE) { *state = m; *fresh = true; }
        if (m.type == NET_REFUSE) {
            f->status = NET_FOLLOWER_REFUSED;
            f->reason = m.reason;
            f->leader_hash = m.hash;
        }
        if (m.type == NET_BYE) f->status = NET_FOLLOWER_LEFT;
    }
    if (f->status == NET_FOLLOWER_JOINED && now - f->heard > SILENT_S) f->status = NET_FOLLOWER_JOINING;
    if (f->status == NET_FOLLOWER_REFUSED || now < f->next_send) return f->status;
    if (f->status == NET_FOLLOWER_JOINED && f->has_at) {
        send_message(f->sock, NULL, 0, &(net_message){.type = NET_AT, .seq = f->at});
        f->next_send = now + KEEPALIVE_S;
    } else if (f->status != NET_FOLLOWER_JOINED) {   /* joining, or the leader left: ask again */
        send_message(f->sock, NULL, 0, &f->join);
        f->next_send = now + (f->status == NET_FOLLOWER_LEFT ? SILENT_S : JOIN_EVERY_S);
    }
    return f->status;
}

void net_follower_refusal(const net_follower *f, net_reason *reason, uint64_t *leader_hash)
{
    *reason = f->reason;
    *leader_hash = f->leader_hash;
}
