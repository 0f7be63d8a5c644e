/* The classroom's transport (issue #14, net_link.c): a leader that followers join with the
 * class code and the hash of their copy of the lesson, and that sends them where the class is.
 * ZeroMQ underneath (a ROUTER that binds, a DEALER per follower that connects and reconnects
 * by itself), never seen outside src/net. Nothing here blocks: every call does what is ready
 * and returns, so a slow or dead follower never delays the leader's frame; queues are bounded
 * (a full one drops, and the next state or heartbeat resyncs). Every message received goes
 * through net_message_parse; one that fails is dropped. */
#ifndef ATTNSTEP_NET_H
#define ATTNSTEP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "net_message.h"

#define NET_MAX_FOLLOWERS 1000
#define NET_DEFAULT_PORT 7340

/* A fresh 64-bit class code from getrandom(); false (with why) when the kernel has none. */
bool net_class_code(uint64_t *code, char *error, size_t size);

/* ---- the leader ---- */
typedef struct net_leader net_leader;

#define NET_DEFAULT_PER_ADDRESS 4   /* followers admitted from one address (--per-address) */
#define NET_KEY_HEX 64              /* a CURVE public key as hex digits (--key) */

typedef struct {
    const char *listen;   /* "ADDR:PORT" (PORT 0 picks a free one); NULL: 127.0.0.1:7340 */
    uint64_t code, hash;  /* the class code followers give, the hash of the lesson's text */
    int per_address;      /* followers admitted from one source address; 0: the default */
    bool encrypt;         /* CURVE on loopback too (it is always on for any other address) */
} net_leader_options;

/* Listens for followers of the lesson with hash, admitting those with code. NULL with a
 * message when the address is malformed or cannot be bound, or when encryption is needed and
 * this libzmq has no CURVE. Any address but loopback (127.x.x.x, localhost) is encrypted with
 * ZeroMQ's CURVE under a fresh key pair, whose public half followers give as --key: only the
 * leader holding its secret half can then talk to them, and no code, name or answer crosses
 * the network in clear. */
net_leader *net_leader_open(const net_leader_options *o, char *error, size_t size);
void net_leader_close(net_leader *l);   /* says bye to every follower */

/* What was bound: the port, the address as the kernel has it ("0.0.0.0" for every address of
 * the machine), and the public key as NET_KEY_HEX hex digits ("" when not encrypted). */
int net_leader_port(const net_leader *l);
const char *net_leader_host(const net_leader *l);
const char *net_leader_key(const net_leader *l);

/* Where the class is (type NET_STATE; seq is set here and returned): sent at once to every
 * follower when it differs from the last, and again every half second. */
uint32_t net_leader_set_state(net_leader *l, const net_message *state, double now);

/* The leader's what-if edits (type NET_EDIT: matrix, row, col, value; at most NET_MAX_EDITS
 * of count are kept): when they differ from the last, a new version goes at once to every
 * follower, to each joiner on its welcome, and again every 2 seconds. */
void net_leader_set_edits(net_leader *l, const net_message *edits, int count, double now);

/* Handles what followers sent (joins, refusals, acknowledgements, byes) and the transport's
 * word of closed connections, frees the slots of followers gone (a bye, a closed connection,
 * 10 seconds of silence), and sends the heartbeat when due. A join is refused with a wrong
 * code (answered at most 5 times a second per address, the rest dropped unanswered), another
 * lesson, a name another follower holds, more followers from one address than per_address, or
 * a full table. Returns whether the count of followers or of those here changed. */
bool net_leader_poll(net_leader *l, double now);

/* Slots in use (followers not yet forgotten), and joins refused for a wrong code so far. */
int net_leader_slots(const net_leader *l);
long net_leader_wrong_codes(const net_leader *l);

/* The answers to the question open now (its state's question is open; a new step's question
 * starts a new count): how many of the followers heard from answered, how many chose each
 * choice (choices[1..9]), and up to max of the numbers typed (*n_numbers of them). Followers'
 * answers are never sent to anyone. */
int net_leader_tally(const net_leader *l, double now, int choices[NET_MAX_CHOICE + 1],
                     double *numbers, int max, int *n_numbers);

/* The names of the followers heard from that have not answered the open question, each
 * escaped (text_escape: a name is never written to a terminal as received), ", " between them,
 * in names (whole names, then "…" when the next does not fit; never cut inside a character).
 * Returns how many there are. */
int net_leader_waiting(const net_leader *l, double now, char *names, size_t size);

/* Followers heard from in the last 3 seconds; of them, those here: showing the leader's
 * current state (its step and head, as each said last). */
int net_leader_joined(const net_leader *l, double now);
int net_leader_synced(const net_leader *l, double now);

/* One follower as the leader knows it, for the roster (W). */
typedef struct {
    char name[NET_NAME_MAX + 1];   /* as it joined: text without controls, escape to show */
    bool placed;                   /* it said where it is: step and head */
    uint32_t step;                 /* as in a state message */
    int head;
    bool here;                     /* at the leader's place */
    bool answered;                 /* the question open now */
    double silent;                 /* seconds since its last message */
} net_roster_entry;

/* Up to max followers in the order they joined; returns how many were written. */
int net_leader_roster(const net_leader *l, double now, net_roster_entry *out, int max);

/* ---- a follower ---- */
typedef struct net_follower net_follower;

typedef enum {
    NET_FOLLOWER_JOINING,    /* asking to join (again after 2 seconds without the leader) */
    NET_FOLLOWER_JOINED,     /* welcomed, and hearing from the leader */
    NET_FOLLOWER_REFUSED,    /* the leader refused: reason and its hash in net_follower_refusal */
    NET_FOLLOWER_LEFT        /* the leader said bye */
} net_follower_status;

typedef struct {
    const char *host_port;   /* "HOST:PORT" of the leader */
    uint64_t code, hash;     /* the class code, the hash of the follower's lesson */
    const char *name;        /* shown to the leader */
    const char *key;         /* the leader's public key (NET_KEY_HEX hex digits), or NULL:
                                needed for any leader not on loopback */
} net_follower_options;

/* Connects to the leader as name. NULL with a message for a malformed address, name or key,
 * or a leader on another machine without its key. With a key, the connection is CURVE and
 * only the leader holding that key's secret half is heard. */
net_follower *net_follower_open(const net_follower_options *o, char *error, size_t size);
void net_follower_close(net_follower *f);   /* says bye */

/* Handles what the leader sent and joins again when due. When a new state arrived, *state
 * receives it and *fresh is set. */
net_follower_status net_follower_poll(net_follower *f, double now, net_message *state,
                                      bool *fresh);
/* The leader's edits, when a whole version of them (every cell of it) has arrived that was not
 * given out yet (again after a new welcome): true, with its *count cells (at most
 * NET_MAX_EDITS, each as parsed: to be checked against the lesson before use) in edits. */
bool net_follower_edits(net_follower *f, net_message *edits, int *count);
/* Sends the follower's answer (type NET_ANSWER: a choice 1-9 or a number) to the question of
 * the leader's state seq. */
void net_follower_answer(net_follower *f, const net_message *answer);
/* Tells the leader the follower took state seq and shows step and head now (at once when
 * that changed, and again every second). */
void net_follower_at(net_follower *f, uint32_t seq, uint32_t step, int head);
/* Why the leader refused, and its lesson hash (for NET_REFUSE_HASH). */
void net_follower_refusal(const net_follower *f, net_reason *reason, uint64_t *leader_hash);

/* Whether host (as net_split_address gives it) is this machine's loopback: 127.x.x.x or
 * localhost. Pure. */
bool net_is_loopback(const char *host);

/* Splits "HOST:PORT" (HOST an IPv4 address or a name of letters, digits, '.' and '-'; PORT
 * 0-65535); false when malformed. Pure. */
bool net_split_address(const char *text, char *host, size_t size, int *port);

#endif
