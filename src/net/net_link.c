/* The classroom's transport over ZeroMQ (net.h): the leader's ROUTER socket and its table of
 * followers, a follower's DEALER socket and its joining; the only file that includes zmq.h.
 * Every send and receive is non-blocking; every payload is parsed by net_message_parse. */
#include "net.h"
#include "text.h"
#include <arpa/inet.h>
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
#define MAX_FRAME 1024        /* the longest frame taken: a CURVE handshake fits */
#define FORGET_S 10.0         /* a follower silent this long loses its slot */
#define HEARTBEAT_IVL_MS 1000 /* ZeroMQ's own heartbeat on every connection */
#define HEARTBEAT_TIMEOUT_MS 3000   /* a connection silent this long is closed */
#define WRONG_PER_S 5         /* wrong codes answered a second from one address */
#define WRONG_WINDOWS 64      /* addresses whose wrong codes are counted at once */
#define EDITS_EVERY_S 2.0     /* the leader sends its edits again this often (a dropped one is
                                 replaced; a follower applies a version only when whole) */

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

bool net_is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0;
}

/* A socket with the options both sides share: a short linger for the last byes, a bounded
 * receive queue, and no message much longer than the protocol allows (ZeroMQ drops the peer
 * that sends one; the limit leaves room for CURVE's handshake, whose INITIATE is longer than
 * any message of ours, and net_message_parse refuses the rest); ZeroMQ's own heartbeat, so that a connection whose other end vanished (a laptop
 * closed, Wi-Fi gone) is closed within HEARTBEAT_TIMEOUT_MS and its slot freed. */
static void *new_socket(void *ctx, int type, int send_queue)
{
    void *sock = zmq_socket(ctx, type);
    if (!sock) return NULL;
    int linger = CLOSE_LINGER_MS, receive_queue = 1024;
    int beat = HEARTBEAT_IVL_MS, beat_timeout = HEARTBEAT_TIMEOUT_MS;
    int64_t max_size = MAX_FRAME;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_SNDHWM, &send_queue, sizeof send_queue);
    zmq_setsockopt(sock, ZMQ_RCVHWM, &receive_queue, sizeof receive_queue);
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_IVL, &beat, sizeof beat);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_TIMEOUT, &beat_timeout, sizeof beat_timeout);
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

/* Where a payload came from, as the transport says it: the peer's address and the file
 * descriptor of its connection (which the monitor names when the connection closes). */
typedef struct {
    char address[INET6_ADDRSTRLEN + 1];
    int fd;
} source;

/* Reads and drops the rest of a message whose frames are not done (more is set). */
static void drop_rest(void *sock, int more)
{
    size_t more_size = sizeof more;
    while (more) {
        char scratch[64];
        zmq_recv(sock, scratch, sizeof scratch, ZMQ_DONTWAIT);
        zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &more_size);
    }
}

/* Receives one payload (after its routing id when id is given) without waiting, and where it
 * came from when from is given. Returns its length, 0 when nothing is waiting, -1 for a
 * message of another shape (dropped whole). */
static int receive(void *sock, uint8_t *id, size_t *id_len, char *payload, size_t size,
                   source *from)
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
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int n = zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT);
    if (n < 0) { zmq_msg_close(&msg); return id ? -1 : 0; }
    more = zmq_msg_more(&msg);
    if ((size_t)n <= size) memcpy(payload, zmq_msg_data(&msg), (size_t)n);
    if (from) {
        const char *address = zmq_msg_gets(&msg, "Peer-Address");
        snprintf(from->address, sizeof from->address, "%s", address ? address : "");
        from->fd = zmq_msg_get(&msg, ZMQ_SRCFD);
    }
    zmq_msg_close(&msg);
    drop_rest(sock, more);   /* a frame too many: the whole message is dropped */
    return more || (size_t)n > size ? -1 : n;
}

/* ---- the leader ---- */

typedef struct {
    uint8_t id[MAX_ID];
    size_t id_len;
    source from;       /* its address and connection, as of its last message */
    double seen;       /* when it was last heard from */
    char name[NET_NAME_MAX + 1];   /* as it joined: text without controls, escaped when shown */
    uint32_t at;       /* the state it last said it took */
    bool placed;       /* it said where it is */
    uint32_t step;     /* where it said it is */
    int head;
    net_message answer;   /* its answer to the question open now, when has_answer */
    bool has_answer;
} peer;

/* Wrong codes from one address in the second that began at start. */
typedef struct {
    char address[INET6_ADDRSTRLEN + 1];
    double start;
    int count;
} wrong_window;

struct net_leader {
    void *ctx, *sock, *monitor;
    uint64_t code, hash;
    int per_address;
    int port;
    char host[INET6_ADDRSTRLEN + 1];
    char key[NET_KEY_HEX + 1];   /* the public key in hex, or "" */
    peer *peers;
    int count;
    net_message state;
    bool has_state;
    net_message edits[NET_MAX_EDITS + 1];   /* the what-if edits: a NET_EDITS, then count
                                               NET_EDIT of its seq */
    bool has_edits;                         /* edits made (or undone) since it opened */
    double next_edits;
    uint32_t seq;
    uint32_t question_seq;   /* the state at which the question open now was opened */
    double next_beat;
    int joined, synced;   /* as last counted, to tell a change */
    long wrong_codes;
    wrong_window wrong[WRONG_WINDOWS];
};

/* 32 bytes as 64 lowercase hex digits. */
static void to_hex(const uint8_t *bytes, char *hex)
{
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
}

/* Makes l's socket a CURVE server under a fresh key pair, its public half kept in hex. */
static bool make_curve_server(net_leader *l, char *error, size_t size)
{
    char public_z85[41], secret_z85[41];
    uint8_t public_key[32];
    int on = 1;
    if (!zmq_has("curve")) {
        snprintf(error, size, "this libzmq has no CURVE, and a class on the network must be "
                 "encrypted (listen on 127.0.0.1 instead)");
        return false;
    }
    if (zmq_curve_keypair(public_z85, secret_z85) != 0
        || zmq_setsockopt(l->sock, ZMQ_CURVE_SERVER, &on, sizeof on) != 0
        || zmq_setsockopt(l->sock, ZMQ_CURVE_SECRETKEY, secret_z85, 41) != 0
        || !zmq_z85_decode(public_key, public_z85)) {
        snprintf(error, size, "cannot set up encryption: %s", zmq_strerror(zmq_errno()));
        return false;
    }
    to_hex(public_key, l->key);
    return true;
}

/* Asks the transport to say when a connection closes, on an inproc pair of l's own. */
static bool watch_disconnects(net_leader *l)
{
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "inproc://attnstep-monitor-%p", (void *)l);
    if (zmq_socket_monitor(l->sock, endpoint, ZMQ_EVENT_DISCONNECTED) != 0) return false;
    l->monitor = zmq_socket(l->ctx, ZMQ_PAIR);
    int linger = 0;
    if (l->monitor) zmq_setsockopt(l->monitor, ZMQ_LINGER, &linger, sizeof linger);
    return l->monitor && zmq_connect(l->monitor, endpoint) == 0;
}

/* What the kernel bound (ZMQ_LAST_ENDPOINT, "tcp://HOST:PORT") into l's host and port. */
static void read_bound(net_leader *l)
{
    char last[300] = "";
    size_t last_size = sizeof last;
    zmq_getsockopt(l->sock, ZMQ_LAST_ENDPOINT, last, &last_size);
    const char *host = strncmp(last, "tcp://", 6) == 0 ? last + 6 : last;
    const char *colon = strrchr(host, ':');
    l->port = colon ? atoi(colon + 1) : 0;
    size_t n = colon ? (size_t)(colon - host) : strlen(host);
    if (n >= sizeof l->host) n = sizeof l->host - 1;
    memcpy(l->host, host, n);
    l->host[n] = '\0';
}

net_leader *net_leader_open(const net_leader_options *o, char *error, size_t size)
{
    char host[256], endpoint[300];
    int wanted = NET_DEFAULT_PORT;
    if (!o->listen) snprintf(host, sizeof host, "127.0.0.1");
    else if (!net_split_address(o->listen, host, sizeof host, &wanted)) {
        snprintf(error, size, "--listen takes ADDRESS:PORT, e.g. 127.0.0.1:7340 (port 0: any free one)");
        return NULL;
    }
    net_leader *l = calloc(1, sizeof *l);
    if (!l || !(l->peers = calloc(NET_MAX_FOLLOWERS, sizeof *l->peers))) {
        free(l);
        snprintf(error, size, "out of memory");
        return NULL;
    }
    l->code = o->code;
    l->hash = o->hash;
    l->per_address = o->per_address > 0 ? o->per_address : NET_DEFAULT_PER_ADDRESS;
    l->ctx = zmq_ctx_new();
    l->sock = l->ctx ? new_socket(l->ctx, ZMQ_ROUTER, LEADER_QUEUE) : NULL;
    int handover = 1;   /* a follower reconnecting (its routing id is its own) takes its slot back */
    if (l->sock) zmq_setsockopt(l->sock, ZMQ_ROUTER_HANDOVER, &handover, sizeof handover);
    if (l->sock && (o->encrypt || !net_is_loopback(host)) && !make_curve_server(l, error, size)) {
        net_leader_close(l);
        return NULL;
    }
    if (wanted) snprintf(endpoint, sizeof endpoint, "tcp://%s:%d", host, wanted);
    else snprintf(endpoint, sizeof endpoint, "tcp://%s:*", host);
    if (!l->sock || zmq_bind(l->sock, endpoint) != 0 || !watch_disconnects(l)) {
        snprintf(error, size, "cannot listen on %s:%d: %s", host, wanted, zmq_strerror(zmq_errno()));
        net_leader_close(l);
        return NULL;
    }
    read_bound(l);
    return l;
}

void net_leader_close(net_leader *l)
{
    if (!l) return;
    if (l->sock) {
        net_message bye = {.type = NET_BYE};
        for (int i = 0; i < l->count; i++) send_message(l->sock, l->peers[i].id, l->peers[i].id_len, &bye);
        if (l->monitor) zmq_socket_monitor(l->sock, NULL, 0);
        zmq_close(l->sock);
    }
    if (l->monitor) zmq_close(l->monitor);
    if (l->ctx) zmq_ctx_term(l->ctx);
    free(l->peers);
    free(l);
}

int net_leader_port(const net_leader *l) { return l->port; }
const char *net_leader_host(const net_leader *l) { return l->host; }
const char *net_leader_key(const net_leader *l) { return l->key; }
int net_leader_slots(const net_leader *l) { return l->count; }
long net_leader_wrong_codes(const net_leader *l) { return l->wrong_codes; }

static peer *find_peer(net_leader *l, const uint8_t *id, size_t id_len)
{
    for (int i = 0; i < l->count; i++)
        if (l->peers[i].id_len == id_len && memcmp(l->peers[i].id, id, id_len) == 0)
            return &l->peers[i];
    return NULL;
}

/* Frees p's slot, keeping the others in the order they joined. */
static void forget(net_leader *l, peer *p)
{
    size_t i = (size_t)(p - l->peers);
    memmove(p, p + 1, (size_t)(l->count - 1 - (int)i) * sizeof *p);
    l->count--;
}

/* Another follower than p, heard from lately, that holds name. */
static peer *name_holder(net_leader *l, const peer *p, const char *name, double now)
{
    for (int i = 0; i < l->count; i++)
        if (&l->peers[i] != p && strcmp(l->peers[i].name, name) == 0
            && now - l->peers[i].seen < GONE_S)
            return &l->peers[i];
    return NULL;
}

static int from_address(const net_leader *l, const char *address)
{
    int n = 0;
    for (int i = 0; i < l->count; i++) n += strcmp(l->peers[i].from.address, address) == 0;
    return n;
}

/* Whether a wrong code from address is answered: at most WRONG_PER_S a second from one
 * address (a window per address, the oldest window reused for a new one), the rest dropped,
 * so that guessing codes costs the guesser, not the class. */
static bool answer_wrong_code(net_leader *l, const char *address, double now)
{
    wrong_window *w = NULL, *oldest = &l->wrong[0];
    for (int i = 0; i < WRONG_WINDOWS && !w; i++) {
        if (strcmp(l->wrong[i].address, address) == 0 && l->wrong[i].count) w = &l->wrong[i];
        else if (l->wrong[i].start < oldest->start) oldest = &l->wrong[i];
    }
    if (!w) {
        w = oldest;
        snprintf(w->address, sizeof w->address, "%s", address);
        w->start = now;
        w->count = 0;
    }
    if (now - w->start >= 1.0) { w->start = now; w->count = 0; }
    return ++w->count <= WRONG_PER_S;
}

/* Why a join is refused, or -1 to admit it (a follower already in, p, again). */
static int refusal(net_leader *l, peer *p, const net_message *m, const source *from,
                   double now)
{
    if (m->code != l->code) return NET_REFUSE_CODE;
    if (m->hash != l->hash) return NET_REFUSE_HASH;
    if (name_holder(l, p, m->name, now)) return NET_REFUSE_NAME;
    if (p) return -1;
    if (from_address(l, from->address) >= l->per_address) return NET_REFUSE_LIMIT;
    if (l->count == NET_MAX_FOLLOWERS) return NET_REFUSE_FULL;
    return -1;
}

/* The edits to follower p: their version and count, then each (nothing before any edit). */
static void send_edits(net_leader *l, const peer *p)
{
    if (!l->has_edits) return;
    for (uint32_t i = 0; i <= l->edits[0].count; i++)
        send_message(l->sock, p->id, p->id_len, &l->edits[i]);
}

/* A follower asking to join: welcomed with the state, or refused with the reason. A name held
 * by a follower silent for GONE_S is free again: its slot goes. */
static void on_join(net_leader *l, const uint8_t *id, size_t id_len, const net_message *m,
                    const source *from, double now)
{
    peer *p = find_peer(l, id, id_len);
    int reason = refusal(l, p, m, from, now);
    if (reason == NET_REFUSE_CODE) {
        l->wrong_codes++;
        if (!answer_wrong_code(l, from->address, now)) return;
    }
    if (reason >= 0) {
        net_message refuse = {.type = NET_REFUSE, .reason = (net_reason)reason,
                              .hash = reason == NET_REFUSE_HASH ? l->hash : 0};
        send_message(l->sock, id, id_len, &refuse);
        return;
    }
    for (int i = 0; i < l->count; i++)   /* the silent holder of this name, if any */
        if (&l->peers[i] != p && strcmp(l->peers[i].name, m->name) == 0) {
            if (p > &l->peers[i]) p--;
            forget(l, &l->peers[i]);
            break;
        }
    if (!p) {
        p = &l->peers[l->count++];
        memset(p, 0, sizeof *p);
        memcpy(p->id, id, id_len);
        p->id_len = id_len;
        p->at = UINT32_MAX;
    }
    p->seen = now;
    memcpy(p->name, m->name, sizeof p->name);
    send_message(l->sock, id, id_len, &(net_message){.type = NET_WELCOME});
    send_edits(l, p);   /* a late joiner gets the edits made so far, before the place */
    if (l->has_state) send_message(l->sock, id, id_len, &l->state);
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

void net_leader_set_edits(net_leader *l, const net_message *edits, int count, double now)
{
    if (count < 0) count = 0;
    if (count > NET_MAX_EDITS) count = NET_MAX_EDITS;
    uint32_t seq = l->edits[0].seq;
    bool same = l->has_edits ? l->edits[0].count == (uint32_t)count : count == 0;
    for (int i = 0; same && i < count; i++) {
        const net_message *a = &l->edits[i + 1], *b = &edits[i];
        same = strcmp(a->matrix, b->matrix) == 0 && a->row == b->row && a->col == b->col
               && memcmp(&a->value, &b->value, sizeof a->value) == 0;   /* -0 is not 0 */
    }
    if (same) return;
    seq = l->has_edits ? (seq + 1) % (NET_MAX_INDEX + 1) : 0;
    memset(l->edits, 0, sizeof l->edits);
    l->edits[0] = (net_message){.type = NET_EDITS, .seq = seq, .count = (uint32_t)count};
    for (int i = 0; i < count; i++) {
        net_message *e = &l->edits[i + 1];
        *e = (net_message){.type = NET_EDIT, .seq = seq, .index = (uint32_t)i,
                           .row = edits[i].row, .col = edits[i].col, .value = edits[i].value};
        memcpy(e->matrix, edits[i].matrix, sizeof e->matrix);
        e->matrix[NET_MATRIX_MAX] = '\0';
    }
    l->has_edits = true;
    for (int i = 0; i < l->count; i++) send_edits(l, &l->peers[i]);
    l->next_edits = now + EDITS_EVERY_S;
}

/* The transport's word of closed connections: the followers last heard on them are gone. */
static void on_disconnects(net_leader *l)
{
    for (int budget = NET_MAX_FOLLOWERS; budget > 0; budget--) {
        uint8_t event[6];
        int n = zmq_recv(l->monitor, event, sizeof event, ZMQ_DONTWAIT);
        if (n < 0) return;
        int more = 0;
        size_t more_size = sizeof more;
        zmq_getsockopt(l->monitor, ZMQ_RCVMORE, &more, &more_size);
        drop_rest(l->monitor, more);   /* the endpoint's name */
        uint16_t what;
        int32_t fd;
        memcpy(&what, event, sizeof what);
        memcpy(&fd, event + 2, sizeof fd);
        if (n != (int)sizeof event || what != ZMQ_EVENT_DISCONNECTED) continue;
        for (int i = l->count - 1; i >= 0; i--)
            if (l->peers[i].from.fd == fd) forget(l, &l->peers[i]);
    }
}

/* One message from a follower. */
static void on_message(net_leader *l, const uint8_t *id, size_t id_len, const net_message *m,
                       const source *from, double now)
{
    if (m->type == NET_JOIN) on_join(l, id, id_len, m, from, now);
    peer *p = find_peer(l, id, id_len);
    if (!p) return;
    p->seen = now;
    p->from = *from;
    if (m->type == NET_BYE) { forget(l, p); return; }
    if (m->type == NET_AT) { p->at = m->seq; p->placed = true; p->step = m->step; p->head = m->head; }
    /* an answer counts for the question open now, asked at or after question_seq */
    if (m->type == NET_ANSWER && l->has_state && l->state.question == NET_QUESTION_OPEN
        && m->seq >= l->question_seq && m->seq <= l->seq) {
        p->answer = *m;
        p->has_answer = true;
    }
}

bool net_leader_poll(net_leader *l, double now)
{
    uint8_t id[MAX_ID];
    size_t id_len = 0;
    char payload[NET_MESSAGE_MAX];
    on_disconnects(l);
    for (int budget = 4 * NET_MAX_FOLLOWERS; budget > 0; budget--) {   /* never a whole frame's worth of waiting */
        source from;
        int n = receive(l->sock, id, &id_len, payload, sizeof payload, &from);
        if (n == 0) break;
        net_message m;
        if (n > 0 && net_message_parse(payload, (size_t)n, &m) == NET_OK)
            on_message(l, id, id_len, &m, &from, now);
    }
    for (int i = l->count - 1; i >= 0; i--)
        if (now - l->peers[i].seen > FORGET_S) forget(l, &l->peers[i]);
    if (l->has_edits && now >= l->next_edits) {
        for (int i = 0; i < l->count; i++) send_edits(l, &l->peers[i]);
        l->next_edits = now + EDITS_EVERY_S;
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

/* The length of the longest start of text, of at most room bytes, that ends on a whole
 * UTF-8 character. */
static size_t whole_characters(const char *text, size_t room)
{
    size_t n = strlen(text);
    if (n <= room) return n;
    while (room > 0 && ((unsigned char)text[room] & 0xC0) == 0x80) room--;
    return room;
}

int net_leader_waiting(const net_leader *l, double now, char *names, size_t size)
{
    static const char more[] = "…";
    int waiting = 0;
    size_t used = 0;
    bool full = size < sizeof more;
    if (size) names[0] = '\0';
    for (int i = 0; i < l->count; i++) {
        const peer *p = &l->peers[i];
        if (p->has_answer || now - p->seen >= GONE_S) continue;
        char shown[4 * NET_NAME_MAX + 8];
        snprintf(shown, sizeof shown, "%s", waiting ? ", " : "");
        text_escape(p->name, shown + strlen(shown), sizeof shown - strlen(shown));
        waiting++;
        if (full) continue;
        size_t n = strlen(shown), room = size - used - 1;   /* "…" needs its 3 bytes */
        if (n > room) {   /* as much as fits before "…", in whole characters */
            size_t keep = whole_characters(shown, room - (sizeof more - 1));
            memcpy(names + used, shown, keep);
            memcpy(names + used + keep, more, sizeof more);
            full = true;
            continue;
        }
        memcpy(names + used, shown, n + 1);
        used += n;
    }
    return waiting;
}

int net_leader_joined(const net_leader *l, double now)
{
    int n = 0;
    for (int i = 0; i < l->count; i++) n += now - l->peers[i].seen < GONE_S;
    return n;
}

/* A follower at the leader's place: it took the current state and is still at its step and
 * head (it said so last). */
static bool is_here(const net_leader *l, const peer *p)
{
    return l->has_state && p->placed && p->at == l->state.seq && p->step == l->state.step
        && p->head == l->state.head;
}

int net_leader_synced(const net_leader *l, double now)
{
    int n = 0;
    for (int i = 0; i < l->count; i++) n += now - l->peers[i].seen < GONE_S && is_here(l, &l->peers[i]);
    return n;
}

int net_leader_roster(const net_leader *l, double now, net_roster_entry *out, int max)
{
    int n = 0;
    for (int i = 0; i < l->count && n < max; i++, n++) {
        const peer *p = &l->peers[i];
        out[n] = (net_roster_entry){.placed = p->placed, .step = p->step, .head = p->head,
                                    .here = is_here(l, p), .answered = p->has_answer,
                                    .silent = now - p->seen};
        memcpy(out[n].name, p->name, sizeof out[n].name);
    }
    return n;
}

/* ---- a follower ---- */

struct net_follower {
    void *ctx, *sock;
    net_message join;
    net_follower_status status;
    double heard, next_send;
    net_message at;   /* where it said it is last (NET_AT), when has_at */
    bool has_at;
    net_reason reason;
    uint64_t leader_hash;
    net_message coming[NET_MAX_EDITS + 1];   /* the leader's edits being received: a NET_EDITS,
                                                then its cells as they arrive */
    bool has_coming, got[NET_MAX_EDITS];
    bool has_taken;                          /* a whole version was given out, taken_seq */
    uint32_t taken_seq;
};

/* One message of the leader's edits: a version's count starts it (again), a cell of that
 * version fills its place. */
static void on_edits(net_follower *f, const net_message *m)
{
    if (m->type == NET_EDITS) {
        if (f->has_coming && f->coming[0].seq == m->seq && f->coming[0].count == m->count) return;
        f->coming[0] = *m;
        f->has_coming = true;
        memset(f->got, 0, sizeof f->got);
    } else if (f->has_coming && m->seq == f->coming[0].seq && m->index < f->coming[0].count) {
        f->coming[m->index + 1] = *m;
        f->got[m->index] = true;
    }
}

bool net_follower_edits(net_follower *f, net_message *edits, int *count)
{
    if (!f->has_coming || (f->has_taken && f->taken_seq == f->coming[0].seq)) return false;
    int n = (int)f->coming[0].count;
    for (int i = 0; i < n; i++)
        if (!f->got[i]) return false;
    memcpy(edits, f->coming + 1, (size_t)n * sizeof *edits);
    *count = n;
    f->has_taken = true;
    f->taken_seq = f->coming[0].seq;
    return true;
}

/* 64 hex digits (either case) into 32 bytes; false for anything else. */
static bool parse_key(const char *hex, uint8_t *key)
{
    if (strlen(hex) != NET_KEY_HEX || strspn(hex, "0123456789abcdefABCDEF") != NET_KEY_HEX)
        return false;
    for (int i = 0; i < 32; i++) {
        char pair[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
        key[i] = (uint8_t)strtoul(pair, NULL, 16);
    }
    return true;
}

/* Makes f's socket a CURVE client of the leader whose public key is server, under a fresh
 * key pair of its own. */
static bool make_curve_client(net_follower *f, const uint8_t *server, char *error, size_t size)
{
    char public_z85[41], secret_z85[41];
    if (!zmq_has("curve")) {
        snprintf(error, size, "this libzmq has no CURVE, which --key needs");
        return false;
    }
    if (zmq_curve_keypair(public_z85, secret_z85) != 0
        || zmq_setsockopt(f->sock, ZMQ_CURVE_SERVERKEY, server, 32) != 0
        || zmq_setsockopt(f->sock, ZMQ_CURVE_PUBLICKEY, public_z85, 41) != 0
        || zmq_setsockopt(f->sock, ZMQ_CURVE_SECRETKEY, secret_z85, 41) != 0) {
        snprintf(error, size, "cannot set up encryption: %s", zmq_strerror(zmq_errno()));
        return false;
    }
    return true;
}

/* A routing id of the follower's own, the same across reconnections, so that the leader
 * (ZMQ_ROUTER_HANDOVER) gives a follower back its slot after a dropped connection. */
static bool set_routing_id(void *sock)
{
    uint8_t id[16];
    if (getrandom(id, sizeof id, 0) != (ssize_t)sizeof id) return false;
    id[0] |= 1;   /* an id beginning with a zero byte is ZeroMQ's own */
    return zmq_setsockopt(sock, ZMQ_ROUTING_ID, id, sizeof id) == 0;
}

/* The join message o asks for, or false with why. */
static bool join_message(const net_follower_options *o, net_message *join, char *host,
                         size_t host_size, int *port, char *error, size_t size)
{
    char check[NET_MESSAGE_MAX + 1];
    if (!net_split_address(o->host_port, host, host_size, port) || *port == 0) {
        snprintf(error, size, "--follow takes HOST:PORT, e.g. 127.0.0.1:7340");
        return false;
    }
    *join = (net_message){.type = NET_JOIN, .code = o->code, .hash = o->hash};
    if (strlen(o->name) > NET_NAME_MAX || (snprintf(join->name, sizeof join->name, "%s", o->name),
                                           net_message_write(join, check, sizeof check) == 0)) {
        snprintf(error, size, "--name takes 1 to %d bytes of text, without control characters "
                 "or a space at either end", NET_NAME_MAX);
        return false;
    }
    if (!o->key && !net_is_loopback(host)) {
        snprintf(error, size, "a leader on another machine is followed with its key: add "
                 "--key KEY as the leader printed it");
        return false;
    }
    return true;
}

net_follower *net_follower_open(const net_follower_options *o, char *error, size_t size)
{
    char host[256], endpoint[300];
    int port;
    uint8_t server[32];
    net_message join;
    if (!join_message(o, &join, host, sizeof host, &port, error, size)) return NULL;
    if (o->key && !parse_key(o->key, server)) {
        snprintf(error, size, "--key takes the leader's key, %d hex digits, as it printed it",
                 NET_KEY_HEX);
        return NULL;
    }
    net_follower *f = calloc(1, sizeof *f);
    if (!f) { snprintf(error, size, "out of memory"); return NULL; }
    f->join = join;
    f->ctx = zmq_ctx_new();
    f->sock = f->ctx ? new_socket(f->ctx, ZMQ_DEALER, 4) : NULL;
    if (f->sock && o->key && !make_curve_client(f, server, error, size)) {
        net_follower_close(f);
        return NULL;
    }
    /* Not ZMQ_IMMEDIATE: with it, libzmq 4.3 dropped the leader's last message (its bye) when
     * the connection closed before it was read. While unconnected, a few joins queue (4 at
     * most, SNDHWM) and are answered alike. */
    int reconnect = 100, reconnect_max = 1000;
    snprintf(endpoint, sizeof endpoint, "tcp://%s:%d", host, port);
    if (f->sock) {
        zmq_setsockopt(f->sock, ZMQ_RECONNECT_IVL, &reconnect, sizeof reconnect);
        zmq_setsockopt(f->sock, ZMQ_RECONNECT_IVL_MAX, &reconnect_max, sizeof reconnect_max);
    }
    if (!f->sock || !set_routing_id(f->sock) || zmq_connect(f->sock, endpoint) != 0) {
        snprintf(error, size, "cannot connect to %s: %s", o->host_port, zmq_strerror(zmq_errno()));
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

void net_follower_at(net_follower *f, uint32_t seq, uint32_t step, int head)
{
    net_message at = {.type = NET_AT, .seq = seq, .step = step, .head = head};
    bool moved = !f->has_at || memcmp(&at, &f->at, sizeof at) != 0;
    f->at = at;
    f->has_at = true;
    if (moved && f->status == NET_FOLLOWER_JOINED) send_message(f->sock, NULL, 0, &at);
}

net_follower_status net_follower_poll(net_follower *f, double now, net_message *state, bool *fresh)
{
    char payload[NET_MESSAGE_MAX];
    *fresh = false;
    for (int budget = 1024; budget > 0; budget--) {
        int n = receive(f->sock, NULL, NULL, payload, sizeof payload, NULL);
        if (n == 0) break;
        net_message m;
        if (n < 0 || net_message_parse(payload, (size_t)n, &m) != NET_OK) continue;
        if (f->status == NET_FOLLOWER_REFUSED) continue;
        if (m.type == NET_WELCOME) f->has_taken = false;   /* a leader again: take its edits */
        if (m.type == NET_EDITS || m.type == NET_EDIT) on_edits(f, &m);
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
        send_message(f->sock, NULL, 0, &f->at);
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
