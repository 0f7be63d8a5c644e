/* The classroom protocol's strict parser and its writer (net_message.h): text in, a struct out,
 * or the one error that says what is wrong. No I/O. */
#include "net_message.h"
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text.h"

#define MAGIC "attnstep/"
#define MAX_FIELDS 8

#define NET_ERROR_TEXT(id, text) [id] = text,
static const char *const error_text[] = { NET_ERROR_TABLE(NET_ERROR_TEXT) };
#undef NET_ERROR_TEXT

const char *net_error_message(net_error error)
{
    assert(error >= 0 && error < NET_ERROR_COUNT);
    return error_text[error];
}

static const char *const type_words[] = {
    [NET_JOIN] = "join", [NET_WELCOME] = "welcome", [NET_REFUSE] = "refuse",
    [NET_STATE] = "state", [NET_AT] = "at", [NET_ANSWER] = "answer", [NET_BYE] = "bye",
    [NET_EDITS] = "edits", [NET_EDIT] = "edit",
};
/* How many fields follow the type word (a join's name counts as one, whatever its spaces). */
static const int type_fields[] = {
    [NET_JOIN] = 3, [NET_WELCOME] = 0, [NET_REFUSE] = 2, [NET_STATE] = 6, [NET_AT] = 3,
    [NET_ANSWER] = 3, [NET_BYE] = 0, [NET_EDITS] = 2, [NET_EDIT] = 6,
};
static const char *const reason_words[] = {
    [NET_REFUSE_CODE] = "code", [NET_REFUSE_HASH] = "hash", [NET_REFUSE_FULL] = "full",
    [NET_REFUSE_NAME] = "name", [NET_REFUSE_LIMIT] = "limit",
};
static const char *const question_words[] = {
    [NET_QUESTION_NONE] = "none", [NET_QUESTION_OPEN] = "open",
    [NET_QUESTION_REVEALED] = "revealed",
};
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

/* The index of word in words, or -1. */
static int find_word(const char *word, const char *const *words, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(word, words[i]) == 0) return i;
    return -1;
}

/* Valid UTF-8 with no control character (text_is_control: C0, DEL, C1, bidi), in text of
 * length bytes that is NUL-terminated right after them (text_decode stops at the NUL, so a
 * character cut by the frame's end is never completed by bytes beyond it). */
static bool is_text(const char *text, size_t length)
{
    for (size_t i = 0; i < length;) {
        unsigned c;
        int bytes = text_decode(text + i, &c);
        if (bytes == 0 || text_is_control(c)) return false;
        i += (size_t)bytes;
    }
    return true;
}

/* A whole number from 0 to max: digits only, no sign, no leading zero. */
static bool parse_index(const char *s, uint32_t max, uint32_t *value)
{
    size_t n = strlen(s);
    if (n == 0 || n > 10 || strspn(s, "0123456789") != n || (n > 1 && s[0] == '0')) return false;
    unsigned long long v = strtoull(s, NULL, 10);
    if (v > max) return false;
    *value = (uint32_t)v;
    return true;
}

/* 16 lowercase hex digits. */
static bool parse_hex64(const char *s, uint64_t *value)
{
    if (strlen(s) != NET_HEX_DIGITS || strspn(s, "0123456789abcdef") != NET_HEX_DIGITS) return false;
    *value = strtoull(s, NULL, 16);
    return true;
}

/* -?D+(.D+)?([eE][+-]?D+)?, finite, at most NET_NUMBER_MAX bytes: what "%.17g" writes. */
static bool parse_number(const char *s, double *value)
{
    size_t n = strlen(s), i = 0, digits;
    if (n == 0 || n > NET_NUMBER_MAX) return false;
    if (s[i] == '-') i++;
    if ((digits = strspn(s + i, "0123456789")) == 0) return false;
    i += digits;
    if (s[i] == '.') {
        if ((digits = strspn(s + i + 1, "0123456789")) == 0) return false;
        i += 1 + digits;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-') i++;
        if ((digits = strspn(s + i, "0123456789")) == 0) return false;
        i += digits;
    }
    if (i != n) return false;
    double v = strtod(s, NULL);
    if (!isfinite(v)) return false;
    *value = v;
    return true;
}

/* Splits text at single spaces into at most max fields; the last field (the rest) when
 * keep_rest. Returns the count, or -1 for an empty field (two spaces, or one at either end). */
static int split(char *text, char **fields, int max, bool keep_rest)
{
    int n = 0;
    for (char *p = text;;) {
        if (n == max - 1 && keep_rest) { fields[n++] = p; return *p ? n : -1; }
        char *space = strchr(p, ' ');
        if (space == p || *p == '\0') return -1;
        if (n == max) return max + 1;   /* a field too many */
        fields[n++] = p;
        if (!space) return n;
        *space = '\0';
        p = space + 1;
    }
}

static net_error parse_join(char **f, net_message *m)
{
    if (!parse_hex64(f[0], &m->code)) return NET_ERR_CODE;
    if (!parse_hex64(f[1], &m->hash)) return NET_ERR_HASH;
    size_t n = strlen(f[2]);
    if (n > NET_NAME_MAX || f[2][0] == ' ' || f[2][n - 1] == ' ') return NET_ERR_NAME;
    memcpy(m->name, f[2], n + 1);
    return NET_OK;
}

/* SEQ STEP HEAD, the fields a state and an at begin with. */
static bool parse_place(char **f, net_message *m)
{
    uint32_t head;
    if (!parse_index(f[0], NET_MAX_INDEX, &m->seq) || !parse_index(f[1], NET_MAX_INDEX, &m->step)
        || !parse_index(f[2], NET_MAX_HEAD, &head) || head < 1)
        return false;
    m->head = (int)head;
    return true;
}

static net_error parse_state(char **f, net_message *m)
{
    if (!parse_place(f, m) || !parse_index(f[3], NET_MAX_INDEX, &m->row)
        || !parse_index(f[4], NET_MAX_INDEX, &m->col))
        return NET_ERR_INTEGER;
    int q = find_word(f[5], question_words, COUNT(question_words));
    if (q < 0) return NET_ERR_QUESTION;
    m->question = (net_question)q;
    return NET_OK;
}

static net_error parse_answer(char **f, net_message *m)
{
    if (!parse_index(f[0], NET_MAX_INDEX, &m->seq)) return NET_ERR_INTEGER;
    if (strcmp(f[1], "number") == 0) {
        m->is_number = true;
        return parse_number(f[2], &m->number) ? NET_OK : NET_ERR_NUMBER;
    }
    if (strcmp(f[1], "choice") != 0) return NET_ERR_ANSWER_KIND;
    uint32_t choice;
    if (!parse_index(f[2], NET_MAX_CHOICE, &choice) || choice < 1) return NET_ERR_CHOICE;
    m->choice = (int)choice;
    return NET_OK;
}

/* A matrix's name: a letter, then letters, digits or _, at most NET_MATRIX_MAX bytes. */
static bool matrix_name(const char *s)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    size_t n = strlen(s);
    return n >= 1 && n <= NET_MATRIX_MAX && strchr(letters, s[0])
        && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

static net_error parse_edits(char **f, net_message *m)
{
    if (!parse_index(f[0], NET_MAX_INDEX, &m->seq)) return NET_ERR_INTEGER;
    return parse_index(f[1], NET_MAX_EDITS, &m->count) ? NET_OK : NET_ERR_EDITS;
}

/* SEQ INDEX MATRIX ROW COL VALUE */
static net_error parse_edit(char **f, net_message *m)
{
    if (!parse_index(f[0], NET_MAX_INDEX, &m->seq)) return NET_ERR_INTEGER;
    if (!parse_index(f[1], NET_MAX_EDITS - 1, &m->index)) return NET_ERR_EDITS;
    if (!matrix_name(f[2])) return NET_ERR_MATRIX;
    memcpy(m->matrix, f[2], strlen(f[2]) + 1);
    if (!parse_index(f[3], NET_MAX_INDEX, &m->row) || !parse_index(f[4], NET_MAX_INDEX, &m->col))
        return NET_ERR_INTEGER;
    return parse_number(f[5], &m->value) ? NET_OK : NET_ERR_NUMBER;
}

/* The fields after the type word, by type. */
static net_error parse_fields(char **f, net_message *m)
{
    switch (m->type) {
    case NET_JOIN: return parse_join(f, m);
    case NET_STATE: return parse_state(f, m);
    case NET_ANSWER: return parse_answer(f, m);
    case NET_AT: return parse_place(f, m) ? NET_OK : NET_ERR_INTEGER;
    case NET_EDITS: return parse_edits(f, m);
    case NET_EDIT: return parse_edit(f, m);
    case NET_REFUSE: {
        int r = find_word(f[0], reason_words, COUNT(reason_words));
        if (r < 0) return NET_ERR_REASON;
        m->reason = (net_reason)r;
        return parse_hex64(f[1], &m->hash) ? NET_OK : NET_ERR_HASH;
    }
    case NET_WELCOME: case NET_BYE: return NET_OK;
    }
    return NET_ERR_TYPE;
}

net_error net_message_parse(const char *data, size_t length, net_message *out)
{
    if (length == 0) return NET_ERR_EMPTY;
    if (length > NET_MESSAGE_MAX) return NET_ERR_TOO_LONG;
    char text[NET_MESSAGE_MAX + 1];
    memcpy(text, data, length);
    text[length] = '\0';
    if (memchr(data, '\0', length) || !is_text(text, length)) return NET_ERR_NOT_TEXT;
    size_t magic = strlen(MAGIC);
    if (strncmp(text, MAGIC, magic) != 0) return NET_ERR_MAGIC;
    char *version_end = text + magic + strspn(text + magic, "0123456789");
    if (version_end == text + magic || (*version_end != ' ' && *version_end != '\0'))
        return NET_ERR_MAGIC;
    if (version_end - (text + magic) != 1 || text[magic] != '0' + NET_PROTOCOL_VERSION)
        return NET_ERR_VERSION;
    if (*version_end != ' ') return NET_ERR_MISSING;   /* no type */
    char *rest = version_end + 1;
    char *type_end = strchr(rest, ' ');
    size_t type_length = type_end ? (size_t)(type_end - rest) : strlen(rest);
    if (type_length == 0) return NET_ERR_SPACING;
    char word[16];
    if (type_length >= sizeof word) return NET_ERR_TYPE;
    memcpy(word, rest, type_length);
    word[type_length] = '\0';
    int type = find_word(word, type_words, COUNT(type_words));
    if (type < 0) return NET_ERR_TYPE;
    net_message m = {.type = (net_type)type};
    int want = type_fields[type];
    char *fields[MAX_FIELDS];
    int got = 0;
    if (type_end) {
        if (want == 0) return type_end[1] ? NET_ERR_EXTRA : NET_ERR_SPACING;
        got = split(type_end + 1, fields, want, type == NET_JOIN);
        if (got < 0) return NET_ERR_SPACING;
        if (got > want) return NET_ERR_EXTRA;
    }
    if (got < want) return NET_ERR_MISSING;
    net_error error = parse_fields(fields, &m);
    if (error == NET_OK) *out = m;
    return error;
}

/* ---- writing ---- */

static bool writable_name(const char *name)
{
    size_t n = strnlen(name, NET_NAME_MAX + 1);
    return n >= 1 && n <= NET_NAME_MAX && name[0] != ' ' && name[n - 1] != ' '
        && is_text(name, n);
}

/* The fields after the type word, or false when m holds what the format cannot carry. */
static bool write_fields(const net_message *m, char *out, size_t size)
{
    switch (m->type) {
    case NET_JOIN:
        return writable_name(m->name)
            && snprintf(out, size, " %016" PRIx64 " %016" PRIx64 " %s", m->code, m->hash,
                        m->name) > 0;
    case NET_REFUSE:
        return m->reason >= 0 && m->reason < COUNT(reason_words)
            && snprintf(out, size, " %s %016" PRIx64, reason_words[m->reason], m->hash) > 0;
    case NET_STATE:
        return m->seq <= NET_MAX_INDEX && m->step <= NET_MAX_INDEX && m->row <= NET_MAX_INDEX
            && m->col <= NET_MAX_INDEX && m->head >= 1 && m->head <= NET_MAX_HEAD
            && m->question >= 0 && m->question < COUNT(question_words)
            && snprintf(out, size, " %" PRIu32 " %" PRIu32 " %d %" PRIu32 " %" PRIu32 " %s",
                        m->seq, m->step, m->head, m->row, m->col,
                        question_words[m->question]) > 0;
    case NET_AT:
        return m->seq <= NET_MAX_INDEX && m->step <= NET_MAX_INDEX && m->head >= 1
            && m->head <= NET_MAX_HEAD
            && snprintf(out, size, " %" PRIu32 " %" PRIu32 " %d", m->seq, m->step, m->head) > 0;
    case NET_ANSWER:
        if (m->seq > NET_MAX_INDEX) return false;
        if (m->is_number)
            return isfinite(m->number)
                && snprintf(out, size, " %" PRIu32 " number %.17g", m->seq, m->number) > 0;
        return m->choice >= 1 && m->choice <= NET_MAX_CHOICE
            && snprintf(out, size, " %" PRIu32 " choice %d", m->seq, m->choice) > 0;
    case NET_EDITS:
        return m->seq <= NET_MAX_INDEX && m->count <= NET_MAX_EDITS
            && snprintf(out, size, " %" PRIu32 " %" PRIu32, m->seq, m->count) > 0;
    case NET_EDIT:
        return m->seq <= NET_MAX_INDEX && m->index < NET_MAX_EDITS
            && strnlen(m->matrix, sizeof m->matrix) < sizeof m->matrix && matrix_name(m->matrix)
            && m->row <= NET_MAX_INDEX && m->col <= NET_MAX_INDEX && isfinite(m->value)
            && snprintf(out, size, " %" PRIu32 " %" PRIu32 " %s %" PRIu32 " %" PRIu32 " %.17g",
                        m->seq, m->index, m->matrix, m->row, m->col, m->value) > 0;
    case NET_WELCOME: case NET_BYE:
        out[0] = '\0';
        return true;
    }
    return false;
}

size_t net_message_write(const net_message *m, char *buffer, size_t size)
{
    char fields[NET_MESSAGE_MAX + 1];
    if (m->type < 0 || m->type >= COUNT(type_words)
        || !write_fields(m, fields, sizeof fields)) {
        if (size) buffer[0] = '\0';
        return 0;
    }
    int n = snprintf(buffer, size, MAGIC "%d %s%s", NET_PROTOCOL_VERSION, type_words[m->type],
                     fields);
    if (n < 0 || (size_t)n >= size || n > NET_MESSAGE_MAX) {
        if (size) buffer[0] = '\0';
        return 0;
    }
    return (size_t)n;
}
