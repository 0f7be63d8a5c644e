/* The classroom in the UI (ui_class.h): the leader's place sent as a state message, a
 * follower's view moved to the leader's place, and the words of the status line. */
#include "ui_class.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net.h"
#include "number.h"
#include "text.h"
#include "ui_edit.h"
#include "ui_keys.h"
#include "ui_tally.h"

struct ui_class {
    net_leader *leader;
    net_follower *follower;
    int port;
    uint64_t code, hash;
    char address[300];          /* what a follower connects to (for its status line) */
    char name[NET_NAME_MAX + 1];   /* a follower's name, as it joins */
    bool following;             /* a follower that shows the leader's place */
    bool has_state;             /* a follower that has heard one */
    net_message state;          /* the leader's last place */
    uint32_t applied;           /* the seq of the state taken into the view */
    bool applied_any;
    net_follower_status status;
    int joined, synced;         /* the leader's last counts */
    char tally[200];            /* the leader: the open question's tally, or "" */
    int held_step;              /* a follower: the step whose answer it sent and holds back
                                   until the leader reveals, or -1 */
    ui_step_state held;         /* that answer */
    char mine[200];             /* a follower: its answer to the leader's question as sent,
                                   then with its verdict, or "" */
    ui_tally_result **results;  /* the leader: (n_results) by script step, each made when its
                                   question first opens, NULL for the others */
    int n_results;
    int edited_cells;           /* the leader: cells its edits changed (more than NET_MAX_EDITS
                                   are not all sent) */
    lesson_edit taken[NET_MAX_EDITS];   /* a follower: the leader's edits, checked against its
                                   lesson, when has_edits */
    int n_taken;
    bool has_edits;
    char edits_refused[160];    /* a follower: why the leader's last edits were not taken */
};

/* 16 hex digits (either case) into code; false for anything else. */
static bool parse_code(const char *text, uint64_t *code)
{
    size_t n = strlen(text);
    if (n != NET_HEX_DIGITS || strspn(text, "0123456789abcdefABCDEF") != n) return false;
    *code = strtoull(text, NULL, 16);
    return true;
}

static ui_class *fail(ui_class *c, exit_status *status, exit_status why, const char *what,
                      const char *error)
{
    fputs("attnstep: ", stderr);
    text_write_escaped(stderr, what, false);
    fputs(": ", stderr);
    text_write_escaped(stderr, error, false);
    fputc('\n', stderr);
    *status = why;
    ui_class_close(c);
    return NULL;
}

/* Where the leader listens, as bound, and the command its students type. */
static void say_banner(const ui_class *c)
{
    const char *host = net_leader_host(c->leader), *key = net_leader_key(c->leader);
    if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        fprintf(stderr, "attnstep: leading on every address of this machine (%s), port %d, "
                "class code %016" PRIx64 "\n", host, c->port, c->code);
    else
        fprintf(stderr, "attnstep: leading on %s, port %d, class code %016" PRIx64 "\n",
                host, c->port, c->code);
    if (key[0])
        fprintf(stderr, "attnstep: encrypted (CURVE); the leader's key %s\n", key);
    fprintf(stderr, "attnstep: students run: attnstep --follow HOST:%d --code %016" PRIx64
            "%s%s LESSON\n", c->port, c->code, key[0] ? " --key " : "", key);
    fflush(stderr);
}

ui_class *ui_class_open(const ui_class_options *o, unsigned long long hash, exit_status *status)
{
    char error[300];
    ui_class *c = calloc(1, sizeof *c);
    if (!c) return fail(c, status, EXIT_STATUS_SOFTWARE, "--lead", "out of memory");
    c->hash = hash;
    if (o->code && !parse_code(o->code, &c->code))
        return fail(c, status, EXIT_STATUS_USAGE, "--code", "a class code is 16 hex digits, "
                    "as the leader printed it");
    if (o->lead) {
        if (!o->code && !net_class_code(&c->code, error, sizeof error))
            return fail(c, status, EXIT_STATUS_SOFTWARE, "--lead", error);
        net_leader_options lo = {.listen = o->listen, .code = c->code, .hash = hash,
                                 .per_address = o->per_address, .encrypt = o->encrypt};
        c->leader = net_leader_open(&lo, error, sizeof error);
        if (!c->leader)
            return fail(c, status, strncmp(error, "--listen", 8) == 0 ? EXIT_STATUS_USAGE
                                                                    : EXIT_STATUS_SOFTWARE,
                        "--lead", error);
        c->port = net_leader_port(c->leader);
        say_banner(c);
        return c;
    }
    if (!o->code)
        return fail(c, status, EXIT_STATUS_USAGE, "--follow", "needs the class code (--code)");
    net_follower_options fo = {.host_port = o->follow, .code = c->code, .hash = hash,
                               .name = o->name ? o->name : "student", .key = o->key};
    c->follower = net_follower_open(&fo, error, sizeof error);
    if (!c->follower) return fail(c, status, EXIT_STATUS_USAGE, "--follow", error);
    snprintf(c->address, sizeof c->address, "%s", o->follow);
    snprintf(c->name, sizeof c->name, "%s", fo.name);
    c->following = true;
    c->held_step = -1;
    return c;
}

void ui_class_close(ui_class *c)
{
    if (!c) return;
    net_leader_close(c->leader);
    net_follower_close(c->follower);
    for (int i = 0; i < c->n_results; i++) {
        if (c->results[i]) free(c->results[i]->numbers);
        free(c->results[i]);
    }
    free(c->results);
    free(c);
}

/* ---- the leader ---- */

/* Where v is, as a state message: a step of the script, or past the script's steps the
 * pipeline's matrix shown off it (both sides have the same lesson, so the same walks). */
static net_message place_message(const ui_view *v)
{
    const walk_step *here = ui_view_current(v);
    net_message m = {.type = NET_STATE, .row = (uint32_t)v->row, .col = (uint32_t)v->col,
                     .head = here->head > 0 ? here->head : 1};
    m.step = (uint32_t)(v->off_script ? v->walk.count + v->shown : v->step);
    ui_question q = v->off_script ? UI_Q_NONE : v->state[v->step].question;
    m.question = q == UI_Q_OPEN ? NET_QUESTION_OPEN
               : q == UI_Q_NONE ? NET_QUESTION_NONE : NET_QUESTION_REVEALED;
    return m;
}

/* The result kept for step's question, made on first use; NULL when out of memory. */
static ui_tally_result *result_of(ui_class *c, const ui_view *v, int step)
{
    if (!c->results) {
        c->results = calloc((size_t)v->walk.count, sizeof *c->results);
        if (!c->results) return NULL;
        c->n_results = v->walk.count;
    }
    if (step >= c->n_results) return NULL;
    ui_tally_result *r = c->results[step];
    if (!r && (r = calloc(1, sizeof *r)) != NULL
        && !(r->numbers = malloc(NET_MAX_FOLLOWERS * sizeof *r->numbers))) {
        free(r);
        r = NULL;
    }
    return c->results[step] = r;
}

/* The open question's answers into its result (the key judged as the view judges: the same
 * true value and ui_tally_within). */
static ui_tally_result *count_answers(ui_class *c, const ui_view *v, const net_message *m,
                                      double now)
{
    const lesson_step *item = ui_view_item(v, (int)m->step);
    ui_tally_result *r = item ? result_of(c, v, (int)m->step) : NULL;
    if (!r) return NULL;
    r->step = (int)m->step;
    r->joined = c->joined;
    r->answered = net_leader_tally(c->leader, now, r->choices, r->numbers, NET_MAX_FOLLOWERS,
                                   &r->n_numbers);
    r->n_choices = item->n_choices < UI_TALLY_MAX_CHOICE ? item->n_choices : UI_TALLY_MAX_CHOICE;
    r->choice_text = (const char *const *)item->choices;
    r->right_choice = item->n_choices > 0 && item->answer_choice >= 0 ? item->answer_choice + 1 : 0;
    r->truth = NAN;
    r->tolerance = 0;
    ui_view_number_key(v, (int)m->step, &r->truth, &r->tolerance);
    return r;
}

/* The open question's tally in words: "answered 12/30: 1×8 2×4" for choices, "answered 3/30:
 * 0.55 ▕▂ █ ▄▏ 0.63 · 2 right · median 0.61" for numbers, then the names of the last three or
 * fewer still to answer (" · waiting: ana, bo", in the median's room: 80 columns hold one of
 * them). After the reveal, the result stays until the leader leaves the step ("right 3/5 ·
 * 0.63 ×3, 0.62 ×1, 0.7 ×1"); "" elsewhere. */
static void write_tally(ui_class *c, const ui_view *v, const net_message *m, double now)
{
    c->tally[0] = '\0';
    bool scripted = m->step < (uint32_t)v->walk.count;
    if (scripted && m->question == NET_QUESTION_REVEALED && c->results && c->results[m->step]) {
        ui_tally_result_line(c->results[m->step], c->tally, sizeof c->tally);
        return;
    }
    ui_tally_result *r = scripted && m->question == NET_QUESTION_OPEN ? count_answers(c, v, m, now) : NULL;
    if (!r) return;
    size_t used = (size_t)snprintf(c->tally, sizeof c->tally, "answered %d/%d", r->answered,
                                   c->joined);
    const char *separator = ": ";
    for (int i = 1; i <= NET_MAX_CHOICE && used < sizeof c->tally; i++)
        if (r->choices[i]) {
            used += (size_t)snprintf(c->tally + used, sizeof c->tally - used, "%s%d×%d",
                                     separator, i, r->choices[i]);
            separator = " ";
        }
    char names[64];   /* the last few to answer, by name (escaped by the transport) */
    int waiting = net_leader_waiting(c->leader, now, names, sizeof names);
    bool naming = waiting > 0 && waiting <= 3;
    if (r->n_numbers > 0 && used < sizeof c->tally) {
        char bars[120];
        ui_tally_histogram h;
        ui_tally_bin(r->numbers, r->n_numbers, r->truth, r->tolerance, &h);
        ui_tally_write(&h, !naming, bars, sizeof bars);
        used += (size_t)snprintf(c->tally + used, sizeof c->tally - used, ": %s", bars);
    }
    if (naming && used < sizeof c->tally)
        snprintf(c->tally + used, sizeof c->tally - used, " · waiting: %s", names);
}

/* The leader's edits to its class (each changed cell once, in the order of its last edit). */
static void send_edits(ui_class *c, const ui_view *v, double now)
{
    lesson_edit cells[NET_MAX_EDITS];
    net_message out[NET_MAX_EDITS];
    int n = v->edits ? ui_edit_cells(v->edits, cells, NET_MAX_EDITS) : 0;
    c->edited_cells = n;
    n = n < NET_MAX_EDITS ? n : NET_MAX_EDITS;
    for (int i = 0; i < n; i++) {
        out[i] = (net_message){.type = NET_EDIT, .index = (uint32_t)i, .row = (uint32_t)cells[i].row,
                               .col = (uint32_t)cells[i].col, .value = cells[i].value};
        snprintf(out[i].matrix, sizeof out[i].matrix, "%s", lesson_edit_matrix_name(&cells[i]));
    }
    net_leader_set_edits(c->leader, out, n, now);
}

static bool lead(ui_class *c, const ui_view *v, double now)
{
    net_message m = place_message(v);
    send_edits(c, v, now);   /* before the place: a follower has the numbers the place shows */
    net_leader_set_state(c->leader, &m, now);
    bool changed = net_leader_poll(c->leader, now);
    c->joined = net_leader_joined(c->leader, now);
    c->synced = net_leader_synced(c->leader, now);
    char before[sizeof c->tally];
    memcpy(before, c->tally, sizeof before);
    write_tally(c, v, &m, now);
    return changed || strcmp(before, c->tally) != 0;
}

/* ---- a follower ---- */

/* Takes the leader's place into v; false for a place this lesson does not have (then nothing
 * changes). */
static bool take_place(ui_view *v, const net_message *m)
{
    int step = (int)m->step, count = v->walk.count;
    if (m->step >= (uint32_t)(count + v->pipeline.count)) return false;
    /* the leader is past a question this follower left waiting: the class has seen it */
    if (ui_view_passes_waiting(v, step >= count, step < count ? step : step - count))
        ui_view_skip_waiting(v);
    if (step < count) {
        if (v->off_script || v->step != step) ui_view_goto(v, step);
    } else {
        const walk_step *s = &v->pipeline.steps[step - count];
        if (!v->off_script || v->shown != step - count) ui_view_open_stage(v, s->stage, s->head);
    }
    if (!ui_view_question_open(v)) {   /* an open question keeps its cell unmarked */
        v->row = m->row < (uint32_t)ui_view_rows(v) ? (int)m->row : v->row;
        v->col = m->col < (uint32_t)ui_view_cols(v) ? (int)m->col : v->col;
    }
    if (m->question == NET_QUESTION_REVEALED) ui_view_reveal(v);
    return true;
}

/* A following follower that answered the leader's open question sends its answer and holds
 * it back: the question stays open on its screen (another answer replaces it) until the leader
 * reveals, so that the class answers before anyone sees the numbers. */
static void hold_answer(ui_class *c, ui_view *v)
{
    int step = (int)c->state.step;
    if (!c->following || !c->has_state || c->state.question != NET_QUESTION_OPEN
        || step >= v->walk.count || v->off_script || v->step != step)
        return;
    ui_step_state *mine = &v->state[step];
    const lesson_step *item = ui_view_item(v, step);
    if (mine->question != UI_Q_ANSWERED || !item) return;
    net_message answer = {.type = NET_ANSWER, .seq = c->state.seq};
    if (item->n_choices > 0) answer.choice = mine->given_choice + 1;
    else { answer.is_number = true; answer.number = mine->given_number; }
    net_follower_answer(c->follower, &answer);   /* one the format cannot carry is not sent */
    c->held = *mine;
    c->held_step = step;
    mine->question = UI_Q_OPEN;
}

/* Gives the held answer back to the view: the leader revealed or moved on, or the follower
 * went its own way. */
static void release_answer(ui_class *c, ui_view *v)
{
    if (c->held_step < 0) return;
    v->state[c->held_step] = c->held;
    c->held_step = -1;
}

/* A number in the one formatter's short form, four decimals at most. */
static void write_number(double x, char *text, size_t size)
{
    number_format f = {.style = NUMBER_SHORT, .precision = 4};
    number_write(x, &f, text, size);
}

/* The answer given as the student sees it: "2 (cat)" or "0.63"; and whether it is right,
 * with the true answer in truth ("1 (dog)", "0.6296 ± 0.01"). */
static bool judge(const ui_view *v, int step, const ui_step_state *given, char *answer,
                  size_t answer_size, char *truth, size_t truth_size)
{
    const lesson_step *item = ui_view_item(v, step);
    truth[0] = '\0';
    if (item->n_choices > 0) {
        int k = given->given_choice, key = item->answer_choice;
        snprintf(answer, answer_size, "%d (%s)", k + 1, item->choices[k]);
        if (key >= 0) snprintf(truth, truth_size, "%d (%s)", key + 1, item->choices[key]);
        return k == key;
    }
    double value = NAN, tolerance = 0;
    char a[NUMBER_MAX], b[NUMBER_MAX];
    write_number(given->given_number, answer, answer_size);
    if (!ui_view_number_key(v, step, &value, &tolerance)) return false;
    write_number(value, a, sizeof a);
    write_number(tolerance, b, sizeof b);
    snprintf(truth, truth_size, "%s ± %s", a, b);
    return ui_tally_within(given->given_number, value, tolerance);
}

/* A follower's words about its answer to the leader's question: as sent while the leader has
 * not revealed ("you answered 2 (cat), wait for the reveal"), then with its verdict and the
 * true answer ("you answered 0.5: not quite, it is 0.6296 ± 0.01"); "" without one. */
static void describe_answer(ui_class *c, const ui_view *v)
{
    c->mine[0] = '\0';
    int step = (int)c->state.step;
    if (!c->has_state || step >= v->walk.count || !ui_view_item(v, step)) return;
    const ui_step_state *given = c->held_step == step ? &c->held : &v->state[step];
    if (given->question != UI_Q_ANSWERED) return;
    char answer[120], truth[120];
    bool right = judge(v, step, given, answer, sizeof answer, truth, sizeof truth);
    if (c->held_step == step)
        snprintf(c->mine, sizeof c->mine, "you answered %s, wait for the reveal", answer);
    else if (c->state.question == NET_QUESTION_REVEALED)
        snprintf(c->mine, sizeof c->mine, "you answered %s: %s%s%s", answer,
                 right ? "right" : "not quite", right || !truth[0] ? "" : ", it is ", right ? "" : truth);
}

/* The leader's edits as they arrived, each checked against this lesson as lesson_edit_make
 * checks --set's parts (nothing from the network is trusted): all of them, or none when one
 * does not fit (the numbers would be neither the leader's nor the lesson's). */
static bool take_edits(ui_class *c, const ui_view *v)
{
    net_message got[NET_MAX_EDITS];
    int n = 0;
    if (!net_follower_edits(c->follower, got, &n) || !v->lesson) return false;
    lesson_edit checked[NET_MAX_EDITS];
    for (int i = 0; i < n; i++) {
        char why[300];
        if (got[i].row > INT32_MAX || got[i].col > INT32_MAX
            || lesson_edit_make(v->lesson, got[i].matrix, (int)got[i].row, (int)got[i].col,
                                got[i].value, &checked[i], why, sizeof why) != LESSON_EDIT_OK) {
            char shown[sizeof c->edits_refused];
            snprintf(shown, sizeof shown, "the leader's edits not taken: %.120s", why);
            text_escape(shown, c->edits_refused, sizeof c->edits_refused);
            return true;
        }
    }
    memcpy(c->taken, checked, (size_t)n * sizeof *checked);
    c->n_taken = n;
    c->has_edits = true;
    c->edits_refused[0] = '\0';
    return true;
}

static bool follow(ui_class *c, ui_view *v, double now)
{
    net_message m;
    bool fresh;
    net_follower_status before = c->status;
    c->status = net_follower_poll(c->follower, now, &m, &fresh);
    bool changed = c->status != before;
    changed |= take_edits(c, v);
    if (fresh) {
        c->state = m;
        c->has_state = true;
    }
    if (!c->following || c->state.step != (uint32_t)c->held_step
        || c->state.question != NET_QUESTION_OPEN)
        release_answer(c, v);   /* before the view leaves the step, which would skip it */
    if (c->following && c->has_state && (!c->applied_any || c->state.seq != c->applied)) {
        if (take_place(v, &c->state)) changed = true;
        c->applied = c->state.seq;
        c->applied_any = true;
    }
    if (c->applied_any) {   /* where it is now, its own place or the leader's (the roster) */
        net_message here = place_message(v);
        net_follower_at(c->follower, c->applied, here.step, here.head);
    }
    int held = c->held_step;
    hold_answer(c, v);
    char said[sizeof c->mine];
    memcpy(said, c->mine, sizeof said);
    describe_answer(c, v);
    return changed || held != c->held_step || strcmp(said, c->mine) != 0;
}

bool ui_class_poll(ui_class *c, ui_view *v, double now)
{
    return c->leader ? lead(c, v, now) : follow(c, v, now);
}

bool ui_class_key(ui_class *c, ui_view *v, int key, double now)
{
    if (!c->follower || ui_key_action(key, UI_IN_CLASS, NULL) != UI_ACT_FOLLOW
        || ui_view_question_open(v))   /* a typed answer may hold the key */
        return false;
    c->following = true;
    c->applied_any = false;   /* take the leader's place now, whatever was taken before */
    follow(c, v, now);
    return true;
}

ui_class_place ui_class_place_of(const ui_view *v)
{
    return (ui_class_place){v->step, v->shown, v->row, v->col, v->off_script,
                            ui_view_question_open(v)};
}

void ui_class_moved(ui_class *c, const ui_class_place *before, ui_view *v)
{
    ui_class_place now = ui_class_place_of(v);
    bool other_matrix = now.step != before->step || now.shown != before->shown
                        || now.off_script != before->off_script;
    bool other_cell = (now.row != before->row || now.col != before->col) && !before->question_open;
    if (c->follower && (other_matrix || other_cell)) {
        c->following = false;
        release_answer(c, v);   /* leaving skipped the question: the answer given stands */
    }
}

bool ui_class_leader_edits(const ui_class *c, const lesson_edit **edits, int *count)
{
    *edits = c->taken;
    *count = c->n_taken;
    return c->has_edits;
}

void ui_class_status(const ui_class *c, char *text, size_t size)
{
    if (c->leader && !c->tally[0]) {
        int n = snprintf(text, size, "leading :%d · code %016" PRIx64 " · %d/%d here", c->port,
                         c->code, c->synced, c->joined);
        long wrong = net_leader_wrong_codes(c->leader);
        if (wrong > 0 && n > 0 && (size_t)n < size)
            n += snprintf(text + n, size - (size_t)n, " · %ld wrong code%s", wrong,
                          wrong == 1 ? "" : "s");
        if (c->edited_cells > NET_MAX_EDITS && n > 0 && (size_t)n < size)
            snprintf(text + n, size - (size_t)n, " · the class has %d of %d edited cells",
                     NET_MAX_EDITS, c->edited_cells);
    }
    else if (c->follower && c->edits_refused[0])
        snprintf(text, size, "%s", c->edits_refused);
    else if (c->leader)   /* the tally takes the whole room: a histogram needs it at 80 columns */
        snprintf(text, size, "%s", c->tally);
    else if (c->status == NET_FOLLOWER_LEFT)
        snprintf(text, size, "the leader has left — on your own");
    else if (c->status != NET_FOLLOWER_JOINED)
        snprintf(text, size, "joining %s…", c->address);
    else if (c->following && c->mine[0])
        snprintf(text, size, "following · %s", c->mine);
    else
        snprintf(text, size, c->following ? "following" : "on your own — f to follow");
}

bool ui_class_results_text(const ui_class *c, char *text, size_t size)
{
    if (!c->leader) return false;
    ui_tally_result *asked[UI_CLASS_MAX_RESULTS];
    int n = 0;
    for (int i = 0; i < c->n_results && n < UI_CLASS_MAX_RESULTS; i++)
        if (c->results[i]) asked[n++] = c->results[i];
    ui_tally_results_text(asked, n, text, size);
    return true;
}

/* Appends the escaped name cut to cols columns on a whole character and padded to them. */
static size_t put_name(const char *name, int cols, char *text, size_t size)
{
    char shown[4 * NET_NAME_MAX + 8];
    text_escape(name, shown, sizeof shown);
    size_t used = 0;
    int width = 0;
    for (const char *p = shown; *p;) {
        unsigned codepoint;
        int bytes = text_decode(p, &codepoint), w = text_char_width(codepoint);
        if (bytes <= 0 || width + (w > 0 ? w : 0) > cols || used + (size_t)bytes >= size) break;
        memcpy(text + used, p, (size_t)bytes);
        used += (size_t)bytes;
        width += w > 0 ? w : 0;
        p += bytes;
    }
    for (; width < cols && used + 1 < size; width++) text[used++] = ' ';
    text[used] = '\0';
    return used;
}

/* Where a follower is, in the leader's words: "step 5 · head 2", "off the script · head 1". */
static void write_place(const net_roster_entry *e, const ui_view *v, char *text, size_t size)
{
    if (!e->placed) snprintf(text, size, "joining");
    else if (e->step < (uint32_t)v->walk.count)
        snprintf(text, size, "step %" PRIu32 " · head %d", e->step + 1, e->head);
    else snprintf(text, size, "off the script · head %d", e->head);
}

bool ui_class_roster_text(const ui_class *c, const ui_view *v, double now, char *text, size_t size)
{
    if (!c->leader || size == 0) return false;
    net_roster_entry *all = malloc(NET_MAX_FOLLOWERS * sizeof *all);
    if (!all) { snprintf(text, size, "out of memory\n"); return true; }
    int n = net_leader_roster(c->leader, now, all, NET_MAX_FOLLOWERS), here = 0, answered = 0;
    for (int i = 0; i < n; i++) { here += all[i].here; answered += all[i].answered; }
    size_t used = (size_t)snprintf(text, size, "%d follower%s · %d here · %d answered the open "
                                   "question\n", n, n == 1 ? "" : "s", here, answered);
    for (int i = 0; i < n && used + 1 < size; i++) {
        char place[64];
        write_place(&all[i], v, place, sizeof place);
        used += (size_t)snprintf(text + used, size - used, "  ");
        if (used + 1 >= size) break;
        used += put_name(all[i].name, UI_CLASS_NAME_COLUMNS, text + used, size - used);
        if (used + 1 >= size) break;
        int n_chars = snprintf(text + used, size - used, "  %-24s %-8s %5.0f s\n", place,
                               all[i].answered ? "answered" : "", all[i].silent);
        used = n_chars < 0 || (size_t)n_chars >= size - used ? size - 1 : used + (size_t)n_chars;
    }
    free(all);
    return true;
}

bool ui_class_holds_answer(const ui_class *c)
{
    return c->held_step >= 0;
}

long ui_class_taken(const ui_class *c)
{
    return c->applied_any ? (long)c->applied : -1;
}

int ui_class_answered(const ui_class *c, double now)
{
    if (!c->leader) return -1;
    int choices[NET_MAX_CHOICE + 1], n_numbers;
    double none[1];
    return net_leader_tally(c->leader, now, choices, none, 0, &n_numbers);
}

int ui_class_joined(const ui_class *c, double now)
{
    return c->leader ? net_leader_joined(c->leader, now) : -1;
}

int ui_class_synced(const ui_class *c, double now)
{
    return c->leader ? net_leader_synced(c->leader, now) : -1;
}

bool ui_class_ended(const ui_class *c, exit_status *status, char *message, size_t size)
{
    if (!c->follower) return false;
    if (c->status == NET_FOLLOWER_LEFT) {
        snprintf(message, size, "the leader has left");
        *status = EXIT_STATUS_OK;
        return true;
    }
    if (c->status != NET_FOLLOWER_REFUSED) return false;
    net_reason reason;
    uint64_t leader_hash;
    net_follower_refusal(c->follower, &reason, &leader_hash);
    *status = reason == NET_REFUSE_HASH ? EXIT_STATUS_DATA : EXIT_STATUS_USAGE;
    if (reason == NET_REFUSE_HASH)
        snprintf(message, size, "--follow: the leader's lesson is not this one: its text has "
                 "hash %016" PRIx64 ", this lesson's %016" PRIx64 " (open the same file)",
                 leader_hash, c->hash);
    else if (reason == NET_REFUSE_NAME) {
        char shown[4 * NET_NAME_MAX + 8];
        text_escape(c->name, shown, sizeof shown);
        snprintf(message, size, "--follow: the leader refused: another follower has the name "
                 "'%s' (choose another with --name)", shown);
    } else
        snprintf(message, size, "--follow: the leader refused: %s",
                 reason == NET_REFUSE_CODE ? "wrong class code"
                 : reason == NET_REFUSE_FULL ? "the class is full"
                 : "too many followers from this address (the leader's --per-address)");
    return true;
}
