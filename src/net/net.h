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

/* Listens on listen ("ADDR:PORT"; PORT 0 picks a free one; NULL: 127.0.0.1:7340) for
 * followers of the lesson with hash, admitting those with code. NULL with a message when the
 * address is malformed or cannot be bound. *port receives the port listened on. */
net_leader *net_leader_open(const char *listen, uint64_t code, uint64_t hash, int *port,
                            char *error, size_t size);
void net_leader_close(net_leader *l);   /* says bye to every follower */

/* Where the class is (type NET_STATE; seq is set here and returned): sent at once to every
 * follower when it differs from the last, and again every half second. */
uint32_t net_leader_set_state(net_leader *l, const net_message *state, double now);

/* Handles what followers sent (joins, refusals, acknowledgements) and sends the heartbeat
 * when due. Returns whether the count of followers or of those caught up changed. */
bool net_leader_poll(net_leader *l, double now);

/* The answers to the question open now (its state's question is open; a new step's question
 * starts a new count): how many of the followers heard from answered, how many chose each
 * choice (choices[1..9]), and up to max of the numbers typed (*n_numbers of them). Followers'
 * answers are never sent to anyone. */
int net_leader_tally(const net_leader *l, double now, int choices[NET_MAX_CHOICE + 1],
                     double *numbers, int max, int *n_numbers);

/* The names of the followers heard from that have not answered the open question, each
 * escaped (text_escape: a name is never written to a terminal as received), ", " between them,
 * in names (cut with "…" when it is full). Returns how many there are. */
int net_leader_waiting(const net_leader *l, double now, char *names, size_t size);

/* Followers heard from in the last 3 seconds; of them, those showing the current state. */
int net_leader_joined(const net_leader *l, double now);
int net_leader_synced(const net_leader *l, double now);

/* ---- a follower ---- */
typedef struct net_follower net_follower;

typedef enum {
    NET_FOLLOWER_JOINING,    /* asking to join (again after 2 seconds without the leader) */
    NET_FOLLOWER_JOINED,     /* welcomed, and hearing from the leader */
    NET_FOLLOWER_REFUSED,    /* the leader refused: reason and its hash in net_follower_refusal */
    NET_FOLLOWER_LEFT        /* the leader said bye */
} net_follower_status;

/* Connects to "HOST:PORT" as name, with the class code and the hash of its lesson. NULL with a
 * message for a malformed address or name. */
net_follower *net_follower_open(const char *host_port, uint64_t code, uint64_t hash,
                                const char *name, char *error, size_t size);
void net_follower_close(net_follower *f);

/* Handles what the leader sent and joins again when due. When a new state arrived, *state
 * receives it and *fresh is set. */
net_follower_status net_follower_poll(net_follower *f, double now, net_message *state,
                                      bool *fresh);
/* Sends the follower's answer (type NET_ANSWER: a choice 1-9 or a number) to the question of
 * the leader's state seq. */
void net_follower_answer(net_follower *f, const net_message *answer);
/* Tells the leader the follower shows state seq. */
void net_follower_at(net_follower *f, uint32_t seq);
/* Why the leader refused, and its lesson hash (for NET_REFUSE_HASH). */
void net_follower_refusal(const net_follower *f, net_reason *reason, uint64_t *leader_hash);

/* Splits "HOST:PORT" (HOST an IPv4 address or a name of letters, digits, '.' and '-'; PORT
 * 0-65535); false when malformed. Pure. */
bool net_split_address(const char *text, char *host, size_t size, int *port);

#endif
