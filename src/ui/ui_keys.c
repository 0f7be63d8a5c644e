/* The one table of key bindings (the key bar and the help overlay are generated from it), key
 * names for people and for key scripts, and the key-script reader of headless runs. */
#include "ui_curses.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lesson.h"
#include "text.h"
#include "ui_keys.h"

#define ENTER_KEYS '\n', '\r', UI_KEY(KEY_ENTER)

#define BACKSPACE_KEYS UI_KEY(KEY_BACKSPACE), 127, 8
#define QUESTION UI_IN_QUESTION
#define EVERYWHERE (UI_IN_LESSON | UI_IN_PICKER | UI_IN_QUESTION)

/* The key bar shows a context's bindings in this order; so do the help and ui_print_keys. */
static const ui_binding bindings[] = {
    {UI_ACT_QUIT, EVERYWHERE, {'q', 'Q'}, "quit",
     "quit (back to the lesson picker if it opened the lesson)", 0},
    {UI_ACT_HELP, EVERYWHERE, {'?', UI_KEY(KEY_F(1))}, "help", "show or hide this help", 0},
    {UI_ACT_SWAP, UI_IN_COMPARE, {'x'}, "swap",
     "swap the leader: the keys move the other lesson, and this one follows it", 0},
    /* A question waits for its answer: the stage is shown once it is given (or skipped). */
    {UI_ACT_CHOOSE, UI_IN_CHOICE, {'1', '2', '3', '4', '5', '6', '7', '8', '9'}, "choose",
     "answer with that choice", 9},
    {UI_ACT_HIGHLIGHT, UI_IN_CHOICE,
     {UI_KEY(KEY_UP), UI_KEY(KEY_DOWN), 'k', 'j', UI_KEY(KEY_LEFT), UI_KEY(KEY_RIGHT)},
     "highlight", "highlight the previous or next choice", 2},
    {UI_ACT_TYPE, UI_IN_NUMBER, {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', '-'},
     "type", "type the answer: digits, a decimal point, a minus sign", 10},
    {UI_ACT_ERASE, UI_IN_NUMBER, {BACKSPACE_KEYS}, NULL, "erase the last character typed", 0},
    {UI_ACT_ANSWER, QUESTION, {ENTER_KEYS}, "answer",
     "answer: the highlighted choice, or the number typed", 0},
    {UI_ACT_SKIP, QUESTION | UI_NOT_LEADER, {27}, "skip",
     "skip the question: show the stage, not scored", 0},
    {UI_ACT_SKIP, QUESTION | UI_LEADER_ONLY, {27}, "reveal",
     "leading a class: reveal the question to every follower (each sees its verdict); the "
     "class's result stays in the status line until the next step", 0},
    {UI_ACT_PREV, QUESTION, {'p', UI_KEY(KEY_PPAGE)}, "prev", "back to the previous step (the question stays asked)", 0},
    {UI_ACT_NEXT, UI_IN_LESSON, {'n', ' ', UI_KEY(KEY_NPAGE)}, "next",
     "next step (next cell when stepped in)", 0},
    {UI_ACT_PREV, UI_IN_LESSON, {'p', BACKSPACE_KEYS, UI_KEY(KEY_PPAGE)}, "prev",
     "previous step (previous cell when stepped in)", 0},
    {UI_ACT_MOVE, UI_IN_LESSON | UI_IN_PICKER,
     {UI_KEY(KEY_LEFT), UI_KEY(KEY_DOWN), UI_KEY(KEY_UP), UI_KEY(KEY_RIGHT), 'h', 'j', 'k', 'l'},
     "move", "select a cell: left, down, up, right (in the picker, a lesson)", 4},
    /* across a matrix of 512 columns (lessons/real_size.yaml) in screenfuls, not 511 moves */
    {UI_ACT_PAGE, UI_IN_LESSON, {UI_KEY(KEY_SLEFT), UI_KEY(KEY_SRIGHT)}, NULL,
     "a screenful of columns left or right: as many as the matrix shows", 0},
    {UI_ACT_FIRST, UI_IN_LESSON | QUESTION, {'g', UI_KEY(KEY_HOME)}, NULL, "first step", 0},
    {UI_ACT_LAST, UI_IN_LESSON | QUESTION, {'G', UI_KEY(KEY_END)}, NULL, "last step", 0},
    {UI_ACT_HEAD_NEXT, UI_IN_LESSON, {'\t'}, "head", "next head", 0},
    {UI_ACT_HEAD_PREV, UI_IN_LESSON, {UI_KEY(KEY_BTAB)}, NULL, "previous head", 0},
    {UI_ACT_HEAD_NUMBER, UI_IN_LESSON, {'1', '2', '3', '4', '5', '6', '7', '8', '9'}, NULL,
     "show that head", 0},
    {UI_ACT_STEP_IN, UI_IN_LESSON, {'s', ENTER_KEYS}, "step in",
     "step in: fill the stage cell by cell, with the arithmetic", 0},
    {UI_ACT_STEP_OUT, UI_IN_LESSON, {'o'}, "out", "step out to the whole stage", 0},
    {UI_ACT_HEATMAP, UI_IN_LESSON, {'a'}, "heatmap", "heatmap or plain numbers", 0},
    {UI_ACT_STAGE_NEXT, UI_IN_LESSON, {']'}, NULL,
     "next stage or head, off the script (n goes back to it)", 0},
    {UI_ACT_STAGE_PREV, UI_IN_LESSON, {'['}, NULL, "previous stage or head, off the script", 0},
    {UI_ACT_PAIR, UI_IN_LESSON, {'b'}, NULL,
     "the stage paired with this one and back (weighted_norms)", 0},
    {UI_ACT_SUM, UI_IN_LESSON, {'e'}, "every term",
     "the selected cell's sum with every term, in a pane", 0},
    /* In front of a class: room, decimals, colours and the narration (the lesson screen's own
     * display settings; the view model never sees them). */
    {UI_ACT_MORE_DECIMALS, UI_IN_LESSON, {'+'}, NULL, "one more decimal (wider columns)", 0},
    {UI_ACT_FEWER_DECIMALS, UI_IN_LESSON, {'-'}, NULL, "one decimal fewer (narrower columns)", 0},
    {UI_ACT_STEP_LIST, UI_IN_LESSON | UI_NOT_COMPARE, {'L'}, NULL, "hide or show the step list (room for the matrix)", 0},
    {UI_ACT_PALETTE, UI_IN_LESSON, {'c'}, NULL,
     "heatmap colours: viridis and blue-orange, or inferno and purple-green", 0},
    {UI_ACT_NARRATION_SCROLL, UI_IN_LESSON | QUESTION, {'J', 'K'}, NULL,
     "scroll the narration down or up when it is longer than its pane", 0},
    {UI_ACT_PRESENT, UI_IN_LESSON | UI_NOT_COMPARE, {'P'}, NULL,
     "presentation: no step list, a larger matrix, the most decimals that fit", 0},
    {UI_ACT_TRAIN_PREV, UI_IN_LESSON | UI_NOT_COMPARE, {'<'}, NULL,
     "a lesson that trains: this matrix one training update earlier", 0},
    {UI_ACT_TRAIN_NEXT, UI_IN_LESSON | UI_NOT_COMPARE, {'>'}, NULL,
     "a lesson that trains: this matrix one training update later", 0},
    {UI_ACT_LOSS_CURVE, UI_IN_LESSON | UI_NOT_COMPARE, {'T'}, NULL,
     "a lesson that trains: the loss curve, one column a training step", 0},
    {UI_ACT_COMPARE, UI_IN_LESSON | UI_NOT_COMPARE, {'C'}, NULL,
     "compare: pick a lesson from this one's folder to show side by side with it", 0},
    /* What if? (ui_edit.h): change a number and every stage follows. */
    {UI_ACT_EDIT, UI_IN_LESSON | UI_NOT_COMPARE, {'='}, NULL,
     "what if? change the number behind the selected cell (an input cell's embedding, the "
     "parameter its stage reads, the loss's target); every stage follows, changed cells marked",
     0},
    {UI_ACT_UNDO, UI_IN_LESSON | UI_NOT_COMPARE, {'u'}, NULL, "undo the last edit", 0},
    {UI_ACT_UNDO_ALL, UI_IN_LESSON | UI_NOT_COMPARE, {'U'}, NULL,
     "undo every edit: the lesson as written", 0},
    {UI_ACT_WRITE, UI_IN_LESSON | UI_NOT_COMPARE, {'w'}, NULL,
     "keep the experiment: write the lesson with the edits to a new file beside it "
     "(NAME-whatif.yaml), never over one", 0},
    {UI_ACT_PARAMETERS, UI_IN_LESSON | UI_NOT_COMPARE, {'M'}, NULL,
     "the parameters (W_Q ... b_O) and the target as matrices, the cells edited marked", 0},
    {UI_ACT_TYPE, UI_IN_EDIT, {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', '-', 'e'},
     "type", "type the new value (the first character replaces the value shown): digits, a "
     "decimal point, a minus sign, e for an exponent", 13},
    {UI_ACT_ERASE, UI_IN_EDIT, {BACKSPACE_KEYS}, NULL, "erase the last character", 0},
    {UI_ACT_MOVE, UI_IN_EDIT,
     {UI_KEY(KEY_LEFT), UI_KEY(KEY_DOWN), UI_KEY(KEY_UP), UI_KEY(KEY_RIGHT)},
     "cell", "edit another cell of the same matrix", 4},
    {UI_ACT_ANSWER, UI_IN_EDIT, {ENTER_KEYS}, "set",
     "set the number: recompute from the first stage that reads it", 0},
    {UI_ACT_SKIP, UI_IN_EDIT, {27}, "cancel", "close the edit line, changing nothing", 0},
    {UI_ACT_OPEN, UI_IN_PICKER, {ENTER_KEYS}, "open", "open the selected lesson", 0},
    {UI_ACT_RESET, UI_IN_PICKER, {'R'}, "reset",
     "reset the selected lesson's saved progress (answers, score, place), after y to confirm", 0},
    {UI_ACT_REDRAW, EVERYWHERE, {12}, NULL, "redraw the screen", 0},
    /* A recorded demo replaying (--replay): its own keys, so none of them moves the lesson. */
    {UI_ACT_REPLAY_PAUSE, UI_IN_REPLAY, {' '}, "pause", "pause or resume the replay", 0},
    {UI_ACT_REPLAY_FASTER, UI_IN_REPLAY, {'+', '='}, "faster", "replay twice as fast (up to 8x)", 0},
    {UI_ACT_REPLAY_SLOWER, UI_IN_REPLAY, {'-'}, "slower", "replay half as fast (down to 1/8x)", 0},
    {UI_ACT_REPLAY_STOP, UI_IN_REPLAY, {'q', 27}, "take over",
     "stop the replay here and go on by hand", 0},
    /* A follower (--follow): any key that moves it puts it on its own. */
    {UI_ACT_FOLLOW, UI_IN_CLASS, {'f'}, "follow", "follow the leader again", 0},
    /* A leader (--lead): what the class did, and who is where. */
    {UI_ACT_RESULTS, UI_IN_LEAD, {'r'}, NULL,
     "the class's results: each question so far (answered, right, skipped) with its counts; "
     "also shown after the last step", 0},
    {UI_ACT_ROSTER, UI_IN_LEAD, {'W'}, NULL,
     "the roster: each follower's name, step and head, whether it answered the open question, "
     "and the time since its last message", 0},
};

/* Appends text to buffer (of size), keeping it terminated. */
static void append(char *buffer, size_t size, const char *text)
{
    size_t used = strlen(buffer);
    if (used + 1 < size) snprintf(buffer + used, size - used, "%s", text);
}

const ui_binding *ui_bindings(int *count)
{
    *count = (int)(sizeof bindings / sizeof bindings[0]);
    return bindings;
}

bool ui_binding_applies(const ui_binding *binding, unsigned context)
{
    if ((context & UI_IN_COMPARE) && (binding->contexts & UI_NOT_COMPARE)) return false;
    if ((binding->contexts & UI_LEADER_ONLY) && !(context & UI_IN_LEAD)) return false;
    if ((binding->contexts & UI_NOT_LEADER) && (context & UI_IN_LEAD)) return false;
    return (binding->contexts & context & ~(unsigned)(UI_NOT_COMPARE | UI_LEADER_ONLY | UI_NOT_LEADER)) != 0;
}

ui_action ui_key_action(int key, unsigned context, int *arg)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
        if (!ui_binding_applies(&bindings[i], context)) continue;
        for (const int *k = bindings[i].keys; *k; k++) {
            if (*k != key) continue;
            if (arg) *arg = (int)(k - bindings[i].keys);
            return bindings[i].action;
        }
    }
    return UI_ACT_NONE;
}

/* Names of the keys that are not a printable character of their own: the key script's name
 * and the label people see (UTF-8 and ASCII). */
static const struct { int key; const char *script, *label, *ascii; } key_names[] = {
    {' ', "space", "Space", "Space"},
    {'\n', "enter", "Enter", "Enter"},
    {'\r', "return", "Enter", "Enter"},
    {UI_KEY(KEY_ENTER), "kenter", "Enter", "Enter"},
    {'\t', "tab", "Tab", "Tab"},
    {UI_KEY(KEY_BTAB), "btab", "Shift-Tab", "Shift-Tab"},
    {UI_KEY(KEY_UP), "up", "\xe2\x86\x91", "Up"},
    {UI_KEY(KEY_DOWN), "down", "\xe2\x86\x93", "Down"},
    {UI_KEY(KEY_LEFT), "left", "\xe2\x86\x90", "Left"},
    {UI_KEY(KEY_RIGHT), "right", "\xe2\x86\x92", "Right"},
    {UI_KEY(KEY_SLEFT), "sleft", "Shift-\xe2\x86\x90", "Shift-Left"},
    {UI_KEY(KEY_SRIGHT), "sright", "Shift-\xe2\x86\x92", "Shift-Right"},
    {UI_KEY(KEY_NPAGE), "pgdn", "PgDn", "PgDn"},
    {UI_KEY(KEY_PPAGE), "pgup", "PgUp", "PgUp"},
    {UI_KEY(KEY_HOME), "home", "Home", "Home"},
    {UI_KEY(KEY_END), "end", "End", "End"},
    {UI_KEY(KEY_BACKSPACE), "backspace", "Backspace", "Backspace"},
    {127, "del", "Backspace", "Backspace"},
    {8, "ctrl-h", "Backspace", "Backspace"},
    {UI_KEY(KEY_F(1)), "f1", "F1", "F1"},
    {12, "ctrl-l", "Ctrl-L", "Ctrl-L"},
    {27, "esc", "Esc", "Esc"},
};
#define N_KEY_NAMES (sizeof key_names / sizeof key_names[0])

const char *ui_key_label(int key, bool utf8, char *buffer, size_t size)
{
    for (size_t i = 0; i < N_KEY_NAMES; i++)
        if (key_names[i].key == key) return utf8 ? key_names[i].label : key_names[i].ascii;
    if (key > 0x20 && key < 0x7F) snprintf(buffer, size, "%c", key);
    else snprintf(buffer, size, "key %d", key);
    return buffer;
}

const char *ui_action_key(ui_action action, unsigned context, bool utf8, char *buffer,
                          size_t size)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
        if (bindings[i].action == action && ui_binding_applies(&bindings[i], context))
            return ui_key_label(bindings[i].keys[0], utf8, buffer, size);
    return "?";
}

/* Appends the labels of count keys, separated by sep: a label repeated (Backspace arrives as
 * three codes) is written once, and a run of three or more consecutive digits as "1–9". */
static void append_keys(char *buffer, size_t size, const int *k, int count, bool utf8,
                        const char *sep)
{
    char last[32] = "";
    for (int i = 0; i < count && k[i]; i++) {
        char label[32];
        const char *name = ui_key_label(k[i], utf8, label, sizeof label);
        if (strcmp(name, last) == 0) continue;
        snprintf(last, sizeof last, "%s", name);
        if (buffer[0]) append(buffer, size, sep);
        append(buffer, size, name);
        int run = i;
        while (k[i] >= '0' && k[i] <= '9' && run + 1 < count && k[run + 1] == k[run] + 1) run++;
        if (run - i >= 2) {
            append(buffer, size, utf8 ? "\xe2\x80\x93" : "-");
            append(buffer, size, ui_key_label(k[run], utf8, label, sizeof label));
            i = run;
        }
    }
}

void ui_binding_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size)
{
    buffer[0] = '\0';
    append_keys(buffer, size, binding->keys, UI_MAX_KEYS, utf8, " ");
}

void ui_binding_bar_keys(const ui_binding *binding, bool utf8, char *buffer, size_t size)
{
    int n = binding->bar_keys > 0 ? binding->bar_keys : 1, first = 0;
    char label[32];
    /* Several keys are shown side by side ("←↓↑→") only when each is one character here;
     * otherwise the next n keys ("hjkl") stand in for them. */
    for (int i = 0; n > 1 && i < n && binding->keys[i]; i++)
        if (strlen(ui_key_label(binding->keys[i], utf8, label, sizeof label)) > 3) first = n;
    buffer[0] = '\0';
    append_keys(buffer, size, binding->keys + first, n, utf8, "");
}

/* --help-keys and the man page: the bindings that work everywhere first, then each context's
 * own. A binding is listed under every context it works in (g and G in a lesson and while a
 * question waits), except that one working everywhere is listed once, in its own section. */
static const struct { unsigned context; const char *heading; } sections[] = {
    {EVERYWHERE, "Everywhere (in a lesson, while a question waits, in the lesson picker)"},
    {UI_IN_LESSON, "In a lesson"},
    {UI_IN_QUESTION, "While a question waits for its answer"},
    {UI_IN_EDIT, "While the edit line is open (=)"},
    {UI_IN_PICKER, "In the lesson picker"},
    {UI_IN_COMPARE, "In a comparison, besides the keys of a lesson"},
    {UI_IN_REPLAY, "While a recorded demo replays (--replay)"},
    {UI_IN_CLASS, "Following a class (--follow)"},
    {UI_IN_LEAD, "Leading a class (--lead)"},
};

/* Whether ui_print_keys lists the binding under the section of context. */
static bool in_section(const ui_binding *binding, unsigned context)
{
    bool everywhere = (binding->contexts & EVERYWHERE) == EVERYWHERE;
    return context == EVERYWHERE ? everywhere : !everywhere && (binding->contexts & context);
}

/* Writes text for troff: '-' and '\' escaped, and a leading '.' or '\'' kept as text. */
static void put_troff(FILE *stream, const char *text)
{
    if (*text == '.' || *text == '\'') fputs("\\&", stream);
    for (; *text; text++) {
        if (*text == '-') fputs("\\-", stream);
        else if (*text == '\\') fputs("\\e", stream);
        else fputc(*text, stream);
    }
}

void ui_print_keys(FILE *stream, bool man)
{
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        fprintf(stream, man ? ".SS \"%s\"\n" : "%s:\n", sections[s].heading);
        for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
            if (!in_section(&bindings[i], sections[s].context)) continue;
            char keys[128];
            ui_binding_keys(&bindings[i], false, keys, sizeof keys);
            const char *lesson_only = bindings[i].contexts & UI_NOT_COMPARE ? " (not in a comparison)" : "";
            if (!man) {
                fprintf(stream, "  %-16s  %s%s\n", keys, bindings[i].help, lesson_only);
                continue;
            }
            fputs(".TP\n.B \"", stream);
            put_troff(stream, keys);
            fputs("\"\n", stream);
            put_troff(stream, bindings[i].help);
            put_troff(stream, lesson_only);
            fputc('\n', stream);
        }
    }
}

/* Parses "COLSxROWS" (or "COLS ROWS" for clicks) into two positive numbers. */
static bool parse_pair(const char *s, char separator, int *a, int *b)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end != separator) return false;
    const char *second = end + 1;
    long y = strtol(second, &end, 10);
    if (end == second || *end != '\0' || x < 0 || y < 0 || x > 1000 || y > 1000) return false;   /* as --screen */
    *a = (int)x;
    *b = (int)y;
    return true;
}

/* Parses a whole number of digits only (no sign, no blanks) from 0 to max. */
static bool parse_count(const char *s, long max, int *value)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v > max) return false;
    *value = (int)v;
    return true;
}

/* The words of a key script's "await" (ui_keys.h), and whether a count follows. */
static const struct { const char *word; int what; bool counted; } awaits[] = {
    {"joined", UI_AWAIT_JOINED, true}, {"synced", UI_AWAIT_SYNCED, false},
    {"answered", UI_AWAIT_ANSWERED, true}, {"question", UI_AWAIT_QUESTION, false},
    {"here", UI_AWAIT_HERE, true},
};
#define N_AWAITS (sizeof awaits / sizeof awaits[0])

/* The longest key-script line, in bytes: a longer one is refused, never cut. */
#define SCRIPT_MAX_LINE 1023

/* Copies line without leading and trailing blanks into out; false when it does not fit. */
static bool trim(const char *line, char *out, size_t size)
{
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(line);
    while (n > 0 && isspace((unsigned char)line[n - 1])) n--;
    if (n >= size) return false;
    memcpy(out, line, n);
    out[n] = '\0';
    return true;
}

int ui_script_parse_line(const char *line, ui_event *ev, char *error, size_t size)
{
    char word[SCRIPT_MAX_LINE + 1];
    if (line[strspn(line, " \t")] == '#') return 0;   /* a comment, however long */
    if (!trim(line, word, sizeof word)) {
        snprintf(error, size, "the line is longer than %d bytes", SCRIPT_MAX_LINE);
        return -1;
    }
    if (word[0] == '\0' || word[0] == '#') return 0;
    *ev = (ui_event){.kind = UI_EV_KEY};
    if (strcmp(word, "dump") == 0) { ev->kind = UI_EV_DUMP; return 1; }
    if (strcmp(word, "clears") == 0) { ev->kind = UI_EV_CLEARS; return 1; }
    if (strcmp(word, "reload") == 0 || strncmp(word, "reload ", 7) == 0) {
        ev->kind = UI_EV_RELOAD;
        const char *file = word + 6;
        while (*file == ' ' || *file == '\t') file++;
        size_t length = strlen(file);
        if (length >= sizeof ev->file) {
            snprintf(error, size, "reload: the file name is longer than %zu bytes",
                     sizeof ev->file - 1);
            return -1;
        }
        memcpy(ev->file, file, length + 1);
        return 1;
    }
    if (strncmp(word, "resize ", 7) == 0) {
        ev->kind = UI_EV_RESIZE;
        if (parse_pair(word + 7, 'x', &ev->x, &ev->y) && ev->x > 0 && ev->y > 0) return 1;
        snprintf(error, size, "resize needs COLSxROWS, e.g. 'resize 40x12'");
        return -1;
    }
    if (strncmp(word, "wait", 4) == 0 && (word[4] == '\0' || word[4] == ' ' || word[4] == '\t')) {
        ev->kind = UI_EV_WAIT;
        const char *digits = word + 4;
        while (*digits == ' ' || *digits == '\t') digits++;
        if (parse_count(digits, UI_SCRIPT_MAX_WAIT_MS, &ev->ms)) return 1;
        snprintf(error, size, "wait needs whole milliseconds from 0 to %d, e.g. 'wait 250'",
                 UI_SCRIPT_MAX_WAIT_MS);
        return -1;
    }
    if (strncmp(word, "await", 5) == 0 && (word[5] == '\0' || word[5] == ' ')) {
        ev->kind = UI_EV_AWAIT;
        const char *what = word[5] ? word + 6 : "";
        for (size_t i = 0; i < N_AWAITS; i++) {
            size_t n = strlen(awaits[i].word);
            if (strncmp(what, awaits[i].word, n) != 0) continue;
            ev->key = awaits[i].what;
            if (!awaits[i].counted && what[n] == '\0') return 1;
            if (awaits[i].counted && what[n] == ' ' && parse_count(what + n + 1, 1000, &ev->x))
                return 1;
        }
        snprintf(error, size, "await needs 'joined N', 'answered N' (N from 0 to 1000), "
                 "'synced' or 'question'");
        return -1;
    }
    if (strncmp(word, "click ", 6) == 0) {
        ev->kind = UI_EV_CLICK;
        if (parse_pair(word + 6, ' ', &ev->x, &ev->y)) return 1;
        snprintf(error, size, "click needs a column and a row from 0, e.g. 'click 20 5'");
        return -1;
    }
    for (size_t i = 0; i < N_KEY_NAMES; i++)
        if (strcasecmp(word, key_names[i].script) == 0) { ev->key = key_names[i].key; return 1; }
    if (word[1] == '\0' && word[0] > 0x20 && word[0] < 0x7F) { ev->key = word[0]; return 1; }
    snprintf(error, size, "unknown key '%s' (one key per line: a character, or space, enter, "
             "tab, btab, up, down, left, right, pgup, pgdn, home, end, backspace, esc, f1, "
             "ctrl-l; or dump, clears, resize COLSxROWS, click COL ROW, reload [FILE], wait MS, "
             "await WHAT)", word);
    return -1;
}

bool ui_script_format_event(const ui_event *ev, char *line, size_t size)
{
    int n = -1;
    switch (ev->kind) {
    case UI_EV_KEY:
        for (size_t i = 0; i < N_KEY_NAMES && n < 0; i++)
            if (key_names[i].key == ev->key) n = snprintf(line, size, "%s\n", key_names[i].script);
        /* '#' alone would read back as a comment */
        if (n < 0 && ev->key > 0x20 && ev->key < 0x7F && ev->key != '#')
            n = snprintf(line, size, "%c\n", ev->key);
        break;
    case UI_EV_RESIZE: n = snprintf(line, size, "resize %dx%d\n", ev->x, ev->y); break;
    case UI_EV_CLICK: n = snprintf(line, size, "click %d %d\n", ev->x, ev->y); break;
    case UI_EV_DUMP: n = snprintf(line, size, "dump\n"); break;
    case UI_EV_CLEARS: n = snprintf(line, size, "clears\n"); break;
    case UI_EV_WAIT: n = snprintf(line, size, "wait %d\n", ev->ms); break;
    case UI_EV_AWAIT:
        for (size_t i = 0; i < N_AWAITS && n < 0; i++)
            if (awaits[i].what == ev->key)
                n = awaits[i].counted ? snprintf(line, size, "await %s %d\n", awaits[i].word, ev->x)
                                      : snprintf(line, size, "await %s\n", awaits[i].word);
        break;
    case UI_EV_RELOAD:
        n = snprintf(line, size, ev->file[0] ? "reload %s\n" : "reload\n", ev->file);
        break;
    case UI_EV_TICK: case UI_EV_END: break;
    }
    if (n >= 0 && (size_t)n < size) return true;
    if (size) line[0] = '\0';
    return false;
}

/* Why a line is not text (a NUL byte, a control character but tab and a line break, bytes
 * that are not UTF-8), or NULL when it is; length counts the NULs getline read. */
static const char *not_text(const char *line, size_t length, char *why, size_t size)
{
    for (size_t i = 0; i < length;) {
        unsigned c;
        int bytes = line[i] ? text_decode(line + i, &c) : 1;
        if (line[i] == '\0') return "a NUL byte: a key script is text";
        if (bytes == 0) {
            snprintf(why, size, "byte \\x%02x is not UTF-8: a key script is text",
                     (unsigned char)line[i]);
            return why;
        }
        /* a CR only as a line end: right before the LF, or last in a script without one */
        bool line_end = i + 1 == length || (i + 2 == length && line[i + 1] == '\n');
        bool blank = c == '\t' || c == '\n' || (c == '\r' && line_end);
        if (text_is_control(c) && !blank) {
            snprintf(why, size, c < 0x80 ? "control character \\x%02x: a key script is text"
                                         : "control character \\u%04x: a key script is text", c);
            return why;
        }
        i += (size_t)bytes;
    }
    return NULL;
}

/* Adds ev to the growing script as one compact step; false when memory ran out. */
static bool append_step(ui_script *script, int *capacity, size_t *names_capacity,
                        const ui_event *ev)
{
    if (script->count == *capacity) {
        int grown_capacity = *capacity ? *capacity * 2 : 64;
        ui_script_step *grown = realloc(script->steps, (size_t)grown_capacity * sizeof *grown);
        if (!grown) return false;
        script->steps = grown;
        *capacity = grown_capacity;
    }
    ui_script_step step = {.kind = (unsigned char)ev->kind, .a = ev->key, .b = ev->x};
    if (ev->kind == UI_EV_WAIT) step.a = ev->ms;
    if (ev->kind == UI_EV_RESIZE || ev->kind == UI_EV_CLICK) { step.a = ev->x; step.b = ev->y; }
    if (ev->kind == UI_EV_RELOAD && ev->file[0]) {
        size_t length = strlen(ev->file) + 1;
        if (script->names_used + length > *names_capacity) {
            size_t grown_size = *names_capacity ? *names_capacity * 2 : 1024;
            char *grown = realloc(script->names, grown_size);
            if (!grown) return false;
            script->names = grown;
            *names_capacity = grown_size;
        }
        memcpy(script->names + script->names_used, ev->file, length);
        step.a = (int)script->names_used + 1;
        script->names_used += length;
    } else if (ev->kind == UI_EV_RELOAD) {
        step.a = 0;
    }
    script->steps[script->count++] = step;
    return true;
}

ui_event ui_script_event(const ui_script *script, int i)
{
    const ui_script_step *step = &script->steps[i];
    ui_event ev = {.kind = (ui_event_kind)step->kind, .key = step->a, .x = step->b};
    if (ev.kind == UI_EV_WAIT) { ev.key = 0; ev.x = 0; ev.ms = step->a; }
    if (ev.kind == UI_EV_RESIZE || ev.kind == UI_EV_CLICK) { ev.key = 0; ev.x = step->a; ev.y = step->b; }
    if (ev.kind == UI_EV_RELOAD) {
        ev.key = 0;
        ev.x = 0;
        if (step->a > 0) snprintf(ev.file, sizeof ev.file, "%s", script->names + step->a - 1);
    }
    return ev;
}

void ui_script_free(ui_script *script)
{
    free(script->steps);
    free(script->names);
    *script = (ui_script){0};
}

/* Why line line_no cannot be taken (the caps of ui_keys.h), or NULL. */
static const char *over_cap(int line_no, const ui_script *script, const ui_event *ev,
                            char *why, size_t size)
{
    if (line_no > UI_SCRIPT_MAX_LINES) {
        snprintf(why, size, "a key script holds at most %d lines", UI_SCRIPT_MAX_LINES);
        return why;
    }
    if (ev->kind == UI_EV_RELOAD && script->names_used + strlen(ev->file) + 1 > UI_SCRIPT_MAX_NAMES) {
        snprintf(why, size, "the reload file names of a key script take at most %zu MiB",
                 UI_SCRIPT_MAX_NAMES >> 20);
        return why;
    }
    return NULL;
}

exit_status ui_script_load(const char *path, ui_script *script, char *error, size_t size)
{
    *script = (ui_script){0};
    const char *why = NULL;
    FILE *f = lesson_open_regular(path, &why);   /* never a FIFO or /dev/zero: no hang, no spin */
    if (!f) {
        snprintf(error, size, "%s: cannot read the key script: %s", path, why);
        return EXIT_STATUS_NO_INPUT;
    }
    int capacity = 0, line_no = 0;
    size_t names_capacity = 0;
    exit_status status = EXIT_STATUS_OK;
    char *line = NULL, reason[512];
    size_t line_size = 0;
    ssize_t length;
    errno = 0;
    /* whole lines, however long: a line past SCRIPT_MAX_LINE is refused with its number */
    while (status == EXIT_STATUS_OK && (length = getline(&line, &line_size, f)) >= 0) {
        ui_event ev = {.kind = UI_EV_KEY};
        line_no++;
        const char *bad = line_no > UI_SCRIPT_MAX_LINES ? over_cap(line_no, script, &ev, reason, sizeof reason)
                        : not_text(line, (size_t)length, reason, sizeof reason);
        int parsed = bad ? -1 : ui_script_parse_line(line, &ev, reason, sizeof reason);
        if (parsed > 0 && (bad = over_cap(line_no, script, &ev, reason, sizeof reason)) != NULL)
            parsed = -1;
        if (parsed < 0) {
            snprintf(error, size, "%s:%d: %s", path, line_no, bad ? bad : reason);
            status = EXIT_STATUS_USAGE;
        } else if (parsed > 0 && !append_step(script, &capacity, &names_capacity, &ev)) {
            snprintf(error, size, "out of memory");
            status = EXIT_STATUS_SOFTWARE;
        }
    }
    if (status == EXIT_STATUS_OK && ferror(f)) {
        snprintf(error, size, "%s: cannot read the key script: %s", path,
                 errno == ENOMEM ? "out of memory" : strerror(errno ? errno : EIO));
        status = errno == ENOMEM ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_NO_INPUT;
    }
    free(line);
    fclose(f);
    if (status != EXIT_STATUS_OK) ui_script_free(script);
    return status;
}
