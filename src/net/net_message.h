/* The classroom protocol's messages (issue #14): what a leader and its followers say to each
 * other, one message per transport frame, as short versioned text. A strict parser and its
 * writer, pure C with no I/O and no sockets, so that the fuzz harness (fuzz_message) links them
 * alone. The format, for version 1 (one space between fields, nothing before or after):
 *
 *   attnstep/1 join CODE HASH NAME     follower: the class code, its lesson's hash, its name
 *   attnstep/1 welcome                 leader: joined
 *   attnstep/1 refuse REASON HASH      leader: code, hash (HASH is the leader's lesson hash),
 *                                      full, name (taken by another follower) or limit (too
 *                                      many followers from one address); HASH is 16 zeros
 *                                      for other reasons
 *   attnstep/1 state SEQ STEP HEAD ROW COL QUESTION
 *                                      leader: where the class is; QUESTION is none, open or
 *                                      revealed; SEQ counts the leader's changes
 *   attnstep/1 at SEQ STEP HEAD        follower: it took the state SEQ and shows STEP and HEAD
 *                                      now (its own place: the leader's roster and "here"
 *                                      count; sent when it moves and again every second,
 *                                      which keeps the follower joined)
 *   attnstep/1 answer SEQ choice N     follower: its answer to the question open at SEQ, N 1-9
 *   attnstep/1 answer SEQ number X     follower: a typed number (finite decimal, 32 bytes max)
 *   attnstep/1 edits SEQ COUNT         leader: its what-if edits (issue 29), version SEQ (it
 *                                      counts the leader's changes to them), are COUNT cells,
 *                                      0 to NET_MAX_EDITS (0: the lesson as written); COUNT
 *                                      edit messages of that SEQ follow
 *   attnstep/1 edit SEQ INDEX MATRIX ROW COL VALUE
 *                                      leader: cell INDEX (0 to NET_MAX_EDITS - 1) of edits
 *                                      SEQ: MATRIX[ROW,COL] = VALUE, MATRIX a matrix's name
 *                                      (a letter, then letters, digits or _, at most
 *                                      NET_MATRIX_MAX bytes), ROW and COL 0-based (a bias's
 *                                      ROW is 0), VALUE a finite decimal ("%.17g": read back
 *                                      bit for bit); the follower checks it against its
 *                                      lesson (lesson_edit_make) before applying anything
 *   attnstep/1 bye                     either side: leaving
 *
 * CODE and HASH are 16 lowercase hex digits (64 bits); SEQ, STEP, ROW and COL are whole numbers
 * from 0 to NET_MAX_INDEX, HEAD from 1 to NET_MAX_HEAD, written without sign or leading zeros;
 * NAME is 1 to NET_NAME_MAX bytes of UTF-8 without control characters, and is the one field
 * that may hold spaces (it ends the message). A message is at most NET_MESSAGE_MAX bytes. */
#ifndef ATTNSTEP_NET_MESSAGE_H
#define ATTNSTEP_NET_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_PROTOCOL_VERSION 1
#define NET_MESSAGE_MAX 256
#define NET_NAME_MAX 32
#define NET_HEX_DIGITS 16
#define NET_NUMBER_MAX 32
#define NET_MAX_INDEX 999999999u
#define NET_MAX_HEAD 4096
#define NET_MAX_CHOICE 9
#define NET_MAX_EDITS 64
#define NET_MATRIX_MAX 24

/* Why a message was refused: every kind of malformed message has its own error, and the one
 * table of messages (net_error_message) says each. */
#define NET_ERROR_TABLE(X) \
    X(NET_OK, "a well-formed message") \
    X(NET_ERR_EMPTY, "an empty message") \
    X(NET_ERR_TOO_LONG, "a message longer than 256 bytes") \
    X(NET_ERR_NOT_TEXT, "a NUL byte, a control character or bytes that are not UTF-8") \
    X(NET_ERR_MAGIC, "not an attnstep message") \
    X(NET_ERR_VERSION, "another version of the classroom protocol (this attnstep speaks 1)") \
    X(NET_ERR_TYPE, "an unknown message type") \
    X(NET_ERR_SPACING, "fields not separated by exactly one space") \
    X(NET_ERR_MISSING, "a field is missing") \
    X(NET_ERR_EXTRA, "a field too many") \
    X(NET_ERR_INTEGER, "a count that is not a whole number in its range") \
    X(NET_ERR_CODE, "a class code that is not 16 lowercase hex digits") \
    X(NET_ERR_HASH, "a lesson hash that is not 16 lowercase hex digits") \
    X(NET_ERR_NAME, "a name that is longer than 32 bytes or starts or ends with a space") \
    X(NET_ERR_REASON, "a reason for refusing other than code, hash, full, name or limit") \
    X(NET_ERR_QUESTION, "a question state other than none, open or revealed") \
    X(NET_ERR_ANSWER_KIND, "an answer that is neither a choice nor a number") \
    X(NET_ERR_CHOICE, "a choice other than 1 to 9") \
    X(NET_ERR_NUMBER, "a number that is not a finite decimal of at most 32 bytes") \
    X(NET_ERR_MATRIX, "a matrix name that is not a letter then letters, digits or _ (at most 24 bytes)") \
    X(NET_ERR_EDITS, "a count of edits or an edit's index out of its range (64 edits at most)")

#define NET_ERROR_ENUM(id, text) id,
typedef enum { NET_ERROR_TABLE(NET_ERROR_ENUM) NET_ERROR_COUNT } net_error;
#undef NET_ERROR_ENUM

typedef enum { NET_JOIN, NET_WELCOME, NET_REFUSE, NET_STATE, NET_AT, NET_ANSWER, NET_BYE,
               NET_EDITS, NET_EDIT } net_type;
typedef enum { NET_REFUSE_CODE, NET_REFUSE_HASH, NET_REFUSE_FULL, NET_REFUSE_NAME,
               NET_REFUSE_LIMIT } net_reason;
typedef enum { NET_QUESTION_NONE, NET_QUESTION_OPEN, NET_QUESTION_REVEALED } net_question;

typedef struct {
    net_type type;
    uint64_t code;                 /* join */
    uint64_t hash;                 /* join: the follower's lesson; refuse: the leader's */
    char name[NET_NAME_MAX + 1];   /* join */
    net_reason reason;             /* refuse */
    uint32_t seq;                  /* state, at, answer, edits, edit */
    uint32_t step, row, col;       /* state; step also at; row and col also edit */
    int head;                      /* state, at */
    net_question question;         /* state */
    bool is_number;                /* answer: number (else choice) */
    int choice;                    /* answer: 1 to 9 */
    double number;                 /* answer: finite */
    uint32_t count;                /* edits: 0 to NET_MAX_EDITS */
    uint32_t index;                /* edit: 0 to NET_MAX_EDITS - 1 */
    char matrix[NET_MATRIX_MAX + 1];   /* edit */
    double value;                  /* edit: finite */
} net_message;

/* Parses length bytes (not NUL-terminated: a transport frame) into m. NET_OK, or the error
 * that says what is wrong; m is filled only on NET_OK. */
net_error net_message_parse(const char *data, size_t length, net_message *m);

/* Writes m into buffer (size NET_MESSAGE_MAX + 1 is always enough), NUL-terminated; returns
 * its length without the NUL, or 0 when m holds a value the format cannot carry (it is then
 * never sent). What it writes parses back to m. */
size_t net_message_write(const net_message *m, char *buffer, size_t size);

/* The one sentence for each error. */
const char *net_error_message(net_error error);

#endif
