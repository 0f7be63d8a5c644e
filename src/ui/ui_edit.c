/* What if? in the UI (ui_edit.h): the edit line, applying an edit to the open lesson and
 * recomputing from the first stage that reads it, undo, the numbers before the first edit and
 * the claims the edits made false. No curses. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "text.h"
#include "ui_edit.h"

/* ---- the numbers before the first edit ---- */

/* Doubles in t's one allocation: up to the end of its last block. */
static size_t trace_doubles_of(const trace *t)
{
    size_t end = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        size_t bytes = trace_stage_bytes(t, (stage_id)s);
        if (t->block[s] && bytes) {
            size_t at = (size_t)(t->block[s] - t->memory) + bytes / sizeof(double);
            if (at > end) end = at;
        }
    }
    return end;
}

/* A copy of t's blocks, read through a trace of its own (the mask's cells are shared: an edit
 * never changes them). */
static bool keep_before(ui_edit *ed, const trace *t)
{
    size_t doubles = trace_doubles_of(t);
    double *copy = malloc((doubles ? doubles : 1) * sizeof *copy);
    if (!copy) return false;
    memcpy(copy, t->memory, doubles * sizeof *copy);
    ed->was = *t;
    ed->was.memory = copy;
    ed->on = t;
    if (t->positional) ed->was.positional = copy + (t->positional - t->memory);
    for (int s = 0; s < STAGE_COUNT; s++)
        if (t->block[s]) ed->was.block[s] = copy + (t->block[s] - t->memory);
    return true;
}

static void forget_before(ui_edit *ed)
{
    free(ed->was.memory);
    ed->was = (trace){0};
}

bool ui_edit_changed(const ui_edit *ed, const trace *t, stage_id stage, int head, int row,
                     int col, double *was)
{
    if (!ed->was.memory || ed->count == 0 || t != ed->on)
        return false;   /* a trained step's trace is not the one the edits changed */
    double now = trace_value(t, stage, head, row, col);
    *was = trace_value(&ed->was, stage, head, row, col);
    return !(now == *was) && !(isnan(now) && isnan(*was));
}

/* ---- recomputing ---- */

/* The claims the new numbers make false, from lesson_check's diagnostics. */
static void keep_untrue(ui_edit *ed, const lesson_diagnostics *d)
{
    free(ed->untrue);
    ed->untrue = d->count ? calloc((size_t)d->count, sizeof *ed->untrue) : NULL;
    ed->n_untrue = 0;
    for (int i = 0; ed->untrue && i < d->count; i++) {
        if (d->items[i].severity != LESSON_SEVERITY_ERROR) continue;
        ui_edit_false *u = &ed->untrue[ed->n_untrue++];
        u->line = d->items[i].line;
        snprintf(u->text, sizeof u->text, "%s", d->items[i].message);
    }
}

/* The matrices (and parameter columns) edits changed, for the recomputation: past CHANGES_MAX
 * of them, each matrix whole (a matrix is at most one entry then). */
enum { CHANGES_MAX = 64 };
typedef struct {
    trace_change at[CHANGES_MAX];
    int count;
} change_list;

static void add_change(change_list *c, trace_change ch)
{
    for (int i = 0; i < c->count; i++)
        if (c->at[i].kind == ch.kind && c->at[i].id == ch.id
            && (c->at[i].col == ch.col || c->at[i].col < 0))
            return;
    if (c->count == CHANGES_MAX) {   /* too many columns: every matrix named whole */
        change_list whole = {.count = 0};
        for (int i = 0; i < c->count; i++)
            add_change(&whole, (trace_change){c->at[i].kind, c->at[i].id, -1});
        *c = whole;
        ch.col = -1;
        add_change(c, ch);
        return;
    }
    c->at[c->count++] = ch;
}

/* What e changes: its matrix's column (a parameter's: the heads it reaches), and for an
 * embedding both the tokens' and the source's (a lesson's one vector per token serves both). */
static void note_change(change_list *c, const lesson_edit *e)
{
    add_change(c, (trace_change){e->kind, e->id, e->kind == READ_PARAM ? e->col : -1});
    if (e->kind == READ_DATA && (e->id == DATA_EMBEDDINGS || e->id == DATA_SOURCE_EMBEDDINGS))
        add_change(c, (trace_change){READ_DATA, e->id == DATA_EMBEDDINGS ? DATA_SOURCE_EMBEDDINGS
                                                                          : DATA_EMBEDDINGS, -1});
}

/* Recomputes what the changes reach (trace_recompute_changes: from the first stage that reads
 * one of them, only the heads they reach), writes the narration's live numbers again and
 * checks the claims, and tells the view its numbers changed. False when the new numbers
 * overflow, message saying so. */
static bool recompute(ui_edit *ed, ui_opened *o, ui_view *v, const change_list *changes)
{
    trace_failure f;
    stage_id from = STAGE_COUNT;
    for (int i = 0; i < changes->count; i++) {
        stage_id first = trace_first_reader(&o->t, changes->at[i].kind, changes->at[i].id);
        if (first < from) from = first;
    }
    if (trace_recompute_changes(&o->t, changes->at, changes->count, &o->compute, &f)
        != TRACE_OK) {
        snprintf(v->message, sizeof v->message, "not set: %s in %s", trace_status_message(f.status),
                 stage_get(f.stage)->name);
        return false;
    }
    lesson_diagnostics d;
    if (lesson_edit_refresh(&o->l, &o->load, &o->t, &d) == LESSON_NO_MEMORY)
        snprintf(v->message, sizeof v->message, "the narration could not be written again");
    keep_untrue(ed, &d);
    lesson_diagnostics_free(&d);
    ui_view_numbers_changed(v, &o->t, from);
    v->edits = ed->count > 0 ? ed : NULL;
    return true;
}

/* Room for at least `wanted` edits held. */
static bool grow_to(ui_edit *ed, int wanted)
{
    if (wanted <= ed->capacity) return true;
    int capacity = ed->capacity ? 2 * ed->capacity : 8;
    while (capacity < wanted) capacity *= 2;
    ui_edit_done *more = realloc(ed->done, (size_t)capacity * sizeof *more);
    if (!more) return false;
    ed->done = more;
    ed->capacity = capacity;
    return true;
}

static bool grow(ui_edit *ed)
{
    return grow_to(ed, ed->count + 1);
}

/* Sets e in the lesson and recomputes; an edit whose numbers overflow is taken back. */
static void set(ui_edit *ed, ui_opened *o, ui_view *v, lesson_edit e)
{
    if ((!ed->was.memory && !keep_before(ed, &o->t)) || !grow(ed)) {
        snprintf(v->message, sizeof v->message, "out of memory: nothing set");
        return;
    }
    double was = lesson_edit_apply(&o->l, &e);
    ed->done[ed->count++] = (ui_edit_done){e, was};
    change_list changes = {.count = 0};
    note_change(&changes, &e);
    if (recompute(ed, o, v, &changes)) {
        char name[160];
        lesson_edit_name(&o->l, &e, name, sizeof name);
        text_escape(name, v->message, sizeof v->message);   /* a token is lesson text */
        size_t used = strlen(v->message);
        snprintf(v->message + used, sizeof v->message - used, " set: %d edit%s (u undoes)",
                 ed->count, ed->count == 1 ? "" : "s");
        return;
    }
    char why[sizeof v->message];
    snprintf(why, sizeof why, "%s", v->message);
    ui_edit_undo(ed, o, v, false);
    snprintf(v->message, sizeof v->message, "%s", why);
}

void ui_edit_undo(ui_edit *ed, ui_opened *o, ui_view *v, bool every)
{
    if (ed->count == ed->from_leader) {
        snprintf(v->message, sizeof v->message, ed->from_leader ? "no edit of yours to undo "
                 "(the leader's edits are the leader's to undo)" : "no edit to undo");
        return;
    }
    change_list changes = {.count = 0};
    int left = every ? ed->from_leader : ed->count - 1;
    while (ed->count > left) {   /* newest first, so each cell gets back its first value */
        ui_edit_done *d = &ed->done[--ed->count];
        lesson_edit back = d->e;
        back.value = d->was;
        lesson_edit_apply(&o->l, &back);
        note_change(&changes, &back);
    }
    recompute(ed, o, v, &changes);
    if (ed->count == 0) forget_before(ed);
    if (ed->from_leader)
        snprintf(v->message, sizeof v->message, "undone: %d edit%s of yours left, and the "
                 "leader's %d", ed->count - ed->from_leader,
                 ed->count - ed->from_leader == 1 ? "" : "s", ed->from_leader);
    else
        snprintf(v->message, sizeof v->message, ed->count ? "undone: %d edit%s left"
                 : "every edit undone: the lesson as written", ed->count,
                 ed->count == 1 ? "" : "s");
}

/* ---- the class: the leader's edits under a follower's own ---- */

int ui_edit_cells(const ui_edit *ed, lesson_edit *out, int max)
{
    int n = 0;
    for (int i = 0; i < ed->count; i++) {
        const lesson_edit *e = &ed->done[i].e;
        bool later = false;   /* the same cell set again later: that one counts */
        for (int j = i + 1; j < ed->count && !later; j++) {
            const lesson_edit *f = &ed->done[j].e;
            later = f->kind == e->kind && f->id == e->id && f->row == e->row && f->col == e->col;
        }
        if (later) continue;
        if (n < max) out[n] = *e;
        n++;
    }
    return n;
}

static bool same_edit(const lesson_edit *a, const lesson_edit *b)
{
    return a->kind == b->kind && a->id == b->id && a->row == b->row && a->col == b->col
        && memcmp(&a->value, &b->value, sizeof a->value) == 0;   /* -0 is not 0 */
}

/* Whether the leader's edits held are these. */
static bool holds_leader(const ui_edit *ed, const lesson_edit *edits, int count)
{
    if (ed->from_leader != count) return false;
    for (int i = 0; i < count; i++)
        if (!same_edit(&ed->done[i].e, &edits[i])) return false;
    return true;
}

/* Applies e to the lesson as the next edit held (room made by the caller), noting what it
 * changes. */
static void push(ui_edit *ed, ui_opened *o, const lesson_edit *e, change_list *changes)
{
    double was = lesson_edit_apply(&o->l, e);
    ed->done[ed->count++] = (ui_edit_done){*e, was};
    note_change(changes, e);
}

bool ui_edit_take_leader(ui_edit *ed, ui_opened *o, ui_view *v, const lesson_edit *edits,
                         int count)
{
    if (holds_leader(ed, edits, count)) return false;
    int own = ed->count - ed->from_leader;
    ui_edit_done *mine = own ? malloc((size_t)own * sizeof *mine) : NULL;
    bool room = (!own || mine) && (ed->was.memory || ed->count || keep_before(ed, &o->t));
    while (room && ed->capacity < count + own && grow_to(ed, count + own)) {}
    if (!room || ed->capacity < count + own) {
        free(mine);
        snprintf(v->message, sizeof v->message, "out of memory: the leader's edits not taken");
        return false;
    }
    if (own) memcpy(mine, ed->done + ed->from_leader, (size_t)own * sizeof *mine);
    change_list changes = {.count = 0};
    while (ed->count > 0) {   /* back to the lesson as written, newest first */
        ui_edit_done *d = &ed->done[--ed->count];
        lesson_edit back = d->e;
        back.value = d->was;
        lesson_edit_apply(&o->l, &back);
        note_change(&changes, &back);
    }
    for (int i = 0; i < count; i++) push(ed, o, &edits[i], &changes);
    ed->from_leader = count;
    for (int i = 0; i < own; i++) push(ed, o, &mine[i].e, &changes);   /* its own on top */
    free(mine);
    char said[sizeof v->message];
    snprintf(said, sizeof said, "the leader's edits: %d cell%s%s", count, count == 1 ? "" : "s",
             own ? ", yours on top" : "");
    if (changes.count > 0 && !recompute(ed, o, v, &changes)) {
        snprintf(said, sizeof said, "%s", v->message);
        if (own) ui_edit_undo(ed, o, v, true);   /* the leader's numbers alone computed */
    }
    if (ed->count == 0) forget_before(ed);
    v->edits = ed->count > 0 ? ed : NULL;
    snprintf(v->message, sizeof v->message, "%s", said);
    return true;
}

/* ---- the edit line ---- */

/* What lies behind a cell of stage: its embedding (input), the target (the loss and what
 * reads it), the parameter it is the gradient of, or the first parameter it reads. */
static bool number_behind(const trace *t, stage_id stage, int row, int col, lesson_edit *e)
{
    const stage_info *info = stage_get(stage);
    if (info->of.kind == READ_PARAM) {
        *e = (lesson_edit){READ_PARAM, info->of.id, row, col, 0.0};
        return true;
    }
    for (int i = 0; i < STAGE_MAX_INPUTS && info->inputs[i].kind != READ_NONE; i++) {
        const stage_input *in = &info->inputs[i];
        bool data = in->kind == READ_DATA && (in->id == DATA_EMBEDDINGS
                                              || in->id == DATA_SOURCE_EMBEDDINGS
                                              || in->id == DATA_TARGET);
        if (data) {
            bool one = trace_rows(t, stage) == 1;   /* the loss: one number */
            *e = (lesson_edit){READ_DATA, in->id, one ? 0 : row, one ? 0 : col, 0.0};
            return true;
        }
        if (in->kind == READ_PARAM && trace_param(t, (param_id)in->id)) {
            *e = (lesson_edit){READ_PARAM, in->id, 0, col, 0.0};
            return true;
        }
    }
    return false;
}

static void show_current(ui_edit *ed, const ui_opened *o)
{
    /* the shortest decimal that reads back: Enter on an untouched line changes nothing */
    lesson_edit_shortest(lesson_edit_value(&o->l, &ed->target), ed->typed, sizeof ed->typed);
}

bool ui_edit_begin(ui_edit *ed, const ui_opened *o, ui_view *v)
{
    const walk_step *s = ui_view_current(v);
    if (ui_view_question_open(v)) {
        snprintf(v->message, sizeof v->message,
                 "no edit while a question waits: it would show the answer");
        return false;
    }
    lesson_edit e;
    int rows, cols;
    if (!number_behind(v->t, s->stage, v->row, v->col, &e)
        || !lesson_edit_shape(&o->l, e.kind, e.id, &rows, &cols)) {
        snprintf(v->message, sizeof v->message, "nothing to edit behind %s: try input, Q, K, "
                 "V or output", stage_get(s->stage)->name);
        return false;
    }
    e.row = e.row < rows ? e.row : rows - 1;
    e.col = e.col < cols ? e.col : cols - 1;
    ed->open = true;
    ed->target = e;
    show_current(ed, o);
    ed->replace = true;   /* the first character typed replaces the value shown */
    return true;
}

static void type(ui_edit *ed, char c)
{
    size_t used = ed->replace ? 0 : strlen(ed->typed);
    ed->replace = false;
    if (used + 2 < sizeof ed->typed) {
        ed->typed[used] = c;
        ed->typed[used + 1] = '\0';
    }
}

static void move_target(ui_edit *ed, const ui_opened *o, int arg)
{
    static const int rows_by[] = {0, 1, -1, 0}, cols_by[] = {-1, 0, 0, 1};
    int rows, cols;
    lesson_edit_shape(&o->l, ed->target.kind, ed->target.id, &rows, &cols);
    int row = ed->target.row + rows_by[arg % 4], col = ed->target.col + cols_by[arg % 4];
    if (row < 0 || row >= rows || col < 0 || col >= cols) return;
    ed->target.row = row;
    ed->target.col = col;
    show_current(ed, o);
    ed->replace = true;
}

/* Enter: the typed text through the one parser of edits, so the UI refuses what --set does. */
static void apply_typed(ui_edit *ed, ui_opened *o, ui_view *v)
{
    char name[160], text[200], why[1200];
    lesson_edit_name(&o->l, &ed->target, name, sizeof name);
    snprintf(text, sizeof text, "%s=%s", name, ed->typed);
    lesson_edit e;
    if (lesson_edit_parse(&o->l, text, &e, why, sizeof why) != LESSON_EDIT_OK) {
        snprintf(v->message, sizeof v->message, "not set: %.180s", why);
        return;
    }
    ed->open = false;
    if (e.value == lesson_edit_value(&o->l, &e)) {
        snprintf(v->message, sizeof v->message, "unchanged");
        return;
    }
    set(ed, o, v, e);
}

void ui_edit_key(ui_edit *ed, ui_opened *o, ui_view *v, ui_action action, int arg)
{
    v->message[0] = '\0';
    switch (action) {
    case UI_ACT_TYPE: type(ed, UI_EDIT_CHARS[arg % (int)strlen(UI_EDIT_CHARS)]); break;
    case UI_ACT_ERASE: {
        ed->replace = false;
        size_t used = strlen(ed->typed);
        if (used) ed->typed[used - 1] = '\0';
        break;
    }
    case UI_ACT_MOVE: move_target(ed, o, arg); break;
    case UI_ACT_ANSWER: apply_typed(ed, o, v); break;
    case UI_ACT_SKIP: ed->open = false; break;
    default: break;
    }
}

void ui_edit_line(const ui_edit *ed, const ui_opened *o, const number_format *f, char *text,
                  size_t size)
{
    char name[160], shown[200], now[NUMBER_MAX];
    lesson_edit_name(&o->l, &ed->target, name, sizeof name);
    text_escape(name, shown, sizeof shown);
    number_write(lesson_edit_value(&o->l, &ed->target), f, now, sizeof now);
    snprintf(text, size, "what if? %s = %s_  (now %s; Enter sets it, Esc leaves it)", shown,
             ed->typed, now);
}

void ui_edit_untrue(const ui_edit *ed, const lesson_step *item, char *text, size_t size)
{
    text[0] = '\0';
    if (!item || ed->count == 0) return;
    for (int c = 0; c < item->n_expect; c++)
        for (int i = 0; i < ed->n_untrue; i++) {
            if (ed->untrue[i].line != item->expect[c].at.line) continue;
            const char *why = strstr(ed->untrue[i].text, " is false: ");
            char claim[400];   /* lesson text */
            text_escape(item->expect[c].text, claim, sizeof claim);
            size_t used = strlen(text);
            snprintf(text + used, size - used, "this lesson says %s: now %s\n", claim,
                     why ? why + strlen(" is false: ") : "false");
        }
}

/* ---- the parameters as matrices ---- */

/* Whether an edit made here changed cell (row, col) of the matrix kind, id. */
static bool edited(const ui_edit *ed, read_kind kind, int id, int row, int col)
{
    for (int i = 0; i < ed->count; i++) {
        const lesson_edit *e = &ed->done[i].e;
        if (e->kind == kind && e->id == id && e->row == row && e->col == col) return true;
    }
    return false;
}

static void append(char **text, size_t *used, size_t *capacity, const char *more)
{
    size_t length = strlen(more);
    if (!*text) return;
    if (*used + length + 1 > *capacity) {
        char *grown = realloc(*text, 2 * (*used + length + 1));
        if (!grown) { free(*text); *text = NULL; return; }
        *text = grown;
        *capacity = 2 * (*used + length + 1);
    }
    memcpy(*text + *used, more, length + 1);
    *used += length;
}

/* One matrix: its name and shape, then its rows (a parameter's by index, the target's by
 * token), cut to UI_EDIT_SHOWN_ROWS × UI_EDIT_SHOWN_COLS. */
static void put_parameter(const ui_edit *ed, const ui_opened *o, const number_format *f,
                          bool utf8, lesson_edit at, const char *name, char **text,
                          size_t *used, size_t *capacity)
{
    int rows, cols;
    if (!lesson_edit_shape(&o->l, at.kind, at.id, &rows, &cols)) return;
    char line[256];
    snprintf(line, sizeof line, "%s  %d\xc3\x97%d\n", name, rows, cols);
    append(text, used, capacity, line);
    const char *more = utf8 ? "\xe2\x80\xa6" : "...";
    for (at.row = 0; at.row < rows && at.row < UI_EDIT_SHOWN_ROWS; at.row++) {
        char label[16];
        snprintf(label, sizeof label, "%3d ", at.row);
        append(text, used, capacity, at.kind == READ_DATA ? "    " : label);
        for (at.col = 0; at.col < cols && at.col < UI_EDIT_SHOWN_COLS; at.col++) {
            char number[NUMBER_MAX], cell[NUMBER_MAX + 8];
            number_write(lesson_edit_value(&o->l, &at), f, number, sizeof number);
            bool mark = edited(ed, at.kind, at.id, at.row, at.col);
            snprintf(cell, sizeof cell, "%8s%s", number, mark ? (utf8 ? "\xe2\x80\xa2" : "~")
                     : " ");
            append(text, used, capacity, cell);
        }
        if (cols > UI_EDIT_SHOWN_COLS) { append(text, used, capacity, " "); append(text, used, capacity, more); }
        append(text, used, capacity, "\n");
    }
    if (rows > UI_EDIT_SHOWN_ROWS) {
        append(text, used, capacity, "    ");
        append(text, used, capacity, more);
        append(text, used, capacity, "\n");
    }
    append(text, used, capacity, "\n");
}

char *ui_edit_parameters(const ui_edit *ed, const ui_opened *o, const number_format *f,
                         bool utf8)
{
    size_t used = 0, capacity = 1024;
    char *text = malloc(capacity);
    if (text) text[0] = '\0';
    for (int p = 0; p < PARAM_COUNT; p++)   /* the parameter table's rows the lesson has */
        put_parameter(ed, o, f, utf8, (lesson_edit){READ_PARAM, p, 0, 0, 0.0},
                      param_get((param_id)p)->name, &text, &used, &capacity);
    put_parameter(ed, o, f, utf8, (lesson_edit){READ_DATA, DATA_TARGET, 0, 0, 0.0},
                  "target (rows: the tokens in order)", &text, &used, &capacity);
    append(&text, &used, &capacity, utf8 ? "= edits one where a stage reads it; \xe2\x80\xa2 "
           "marks a cell edited" : "= edits one where a stage reads it; ~ marks a cell edited");
    return text;
}

/* ---- keeping an experiment ---- */

/* Writes text to a temporary beside path and links it as path; errno's value, EEXIST when
 * path is taken (then nothing is left behind), 0 on success. */
static int write_new(const char *path, const char *text)
{
    char temporary[4096 + 16];
    if (snprintf(temporary, sizeof temporary, "%s.XXXXXX", path) >= (int)sizeof temporary)
        return ENAMETOOLONG;
    int fd = mkstemp(temporary);
    if (fd < 0) return errno;
    size_t length = strlen(text), done = 0;
    int error = 0;
    while (done < length && !error) {
        ssize_t n = write(fd, text + done, length - done);
        if (n < 0 && errno != EINTR) error = errno;
        if (n > 0) done += (size_t)n;
    }
    if (!error && fsync(fd) != 0) error = errno;
    if (close(fd) != 0 && !error) error = errno;
    if (!error && link(temporary, path) != 0) error = errno;   /* never over a file */
    unlink(temporary);
    return error;
}

void ui_edit_write(const ui_edit *ed, const ui_opened *o, ui_view *v)
{
    if (ed->count == 0) {
        snprintf(v->message, sizeof v->message, "nothing to write: no edit made (= makes one)");
        return;
    }
    lesson_edit *edits = malloc((size_t)ed->count * sizeof *edits);
    double *was = malloc((size_t)ed->count * sizeof *was);
    char error[256] = "out of memory", *text = NULL;
    for (int i = 0; edits && was && i < ed->count; i++)
        edits[i] = ed->done[i].e, was[i] = ed->done[i].was;
    if (edits && was) text = lesson_edit_write(&o->l, edits, was, ed->count, error, sizeof error);
    free(edits);
    free(was);
    if (!text) {
        snprintf(v->message, sizeof v->message, "not written: %s", error);
        return;
    }
    const char *path = o->l.path;
    size_t stem = strlen(path);
    if (stem > 5 && strcmp(path + stem - 5, ".yaml") == 0) stem -= 5;
    char name[4096];
    int status = EEXIST;
    for (int n = 1; n < 100 && status == EEXIST; n++) {
        snprintf(name, sizeof name, n == 1 ? "%.*s-whatif.yaml" : "%.*s-whatif-%d.yaml",
                 (int)stem, path, n);
        status = write_new(name, text);
    }
    free(text);
    const char *slash = strrchr(name, '/');
    char raw[sizeof v->message];
    if (status) snprintf(raw, sizeof raw, "not written: %.100s: %s", slash ? slash + 1 : name,
                         strerror(status));
    else snprintf(raw, sizeof raw, "wrote %.150s", slash ? slash + 1 : name);
    text_escape(raw, v->message, sizeof v->message);   /* the name is the lesson's path */
}

void ui_edit_free(ui_edit *ed)
{
    forget_before(ed);
    free(ed->done);
    free(ed->untrue);
    *ed = (ui_edit){0};
}
