/* The lesson's script: its steps (stage, head, position, focus), their narration with live
 * numbers, claims and questions; and the walk and narration a loaded lesson gives its views. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_private.h"
#include "claim.h"
#include "text.h"
#include "token_name.h"

#define DEFAULT_TOLERANCE 0.005

#define STEP_KEYS(X) \
    X(STAGE, "stage") X(HEAD, "head") X(FOCUS, "focus") X(SAY, "say") X(ASK, "ask") \
    X(CHOICES, "choices") X(ANSWER, "answer") X(TOLERANCE, "tolerance") X(EXPECT, "expect") \
    X(POSITION, "position") X(TRAIN_STEP, "train_step")
#define STEP_ENUM(id, name) STEP_##id,
enum { STEP_KEYS(STEP_ENUM) STEP_COUNT };
static const char *const step_keys[] = { STEP_KEYS(KEY_NAME) };

/* ---- steps ---- */

static const char *list_label(const void *tokens, int i) {
    return ((const token_list *)tokens)->text[i];
}

static int list_positions(const void *tokens, const char *name, int *out, int max) {
    return lesson_index_positions(&((const token_list *)tokens)->first, name, out, max);
}

/* The tokens of list as the core's rule for naming a token reads them (token_name.h). */
static token_axis list_axis(const token_list *list) {
    return (token_axis){ list, list->count, list_label, list_positions };
}

/* The token list along an axis of tokens (queries, or keys in cross-attention). */
static const token_list *axis_list(const checker *c, stage_axis axis) {
    return axis == AXIS_SOURCE && c->keys[TOP_SOURCE] >= 0 ? &c->source : &c->tokens;
}

/* The length of an axis as the lesson's keys give it, or -1 while unknown. */
static int axis_length(const checker *c, stage_axis axis) {
    bool cross = c->keys[TOP_SOURCE] >= 0;
    const token_list *list = axis == AXIS_SOURCE && cross ? &c->source : &c->tokens;
    int d_k = c->heads > 0 && c->d_model > 0 ? c->d_model / c->heads : -1;
    const token_list *keys = cross ? &c->source : &c->tokens;
    int tiles = c->tile > 0 && keys->valid ? (keys->count + c->tile - 1) / c->tile : -1;
    return axis == AXIS_MODEL_DIMS ? c->d_model
         : axis == AXIS_KV_DIMS ? checker_kv_columns(c)
         : axis == AXIS_HEAD_DIMS ? d_k
         : axis == AXIS_TILES ? tiles
         : list->valid ? list->count : -1;
}

/* What resolve_label returns besides an index. */
enum { LABEL_NONE = -1, LABEL_UNKNOWN_AXIS = -2, LABEL_REPEATED = -3 };

/* Labels along an axis: tokens as a cell names them (a token written once by its name, any token
 * as "dog@6"), and any axis takes a 0-based index. Returns the index, LABEL_NONE when there is
 * no such label, LABEL_UNKNOWN_AXIS when the axis is unknown, LABEL_REPEATED for the plain name
 * of a repeated token. */
static int resolve_label(const checker *c, stage_axis axis, const char *text) {
    bool tokens = axis == AXIS_TOKENS || axis == AXIS_SOURCE;
    const token_list *list = axis_list(c, axis);
    int count = axis_length(c, axis);
    if (count < 0) return LABEL_UNKNOWN_AXIS;
    if (tokens) {
        token_axis named = list_axis(list);
        int at = LABEL_NONE;
        token_name_status found = token_name_find(&named, text, strlen(text), &at);
        if (found != TOKEN_NAME_NONE) return found == TOKEN_NAME_FOUND ? at : LABEL_REPEATED;
    }
    uint64_t index = 0;
    return lesson_parse_integer(text, 0, (uint64_t)count - 1, &index) ? (int)index : LABEL_NONE;
}

/* Reports the plain name of a repeated token at node, with the positions to choose from
 * ("'dog' appears at positions 2 and 6: write dog@2 or dog@6"), as a focus row or column or a
 * position (what). */
static void report_repeated(checker *c, int node, stage_axis axis, const char *what) {
    token_axis named = list_axis(axis_list(c, axis));
    const char *text = lesson_node_text(c->t, node);
    char why[LESSON_ESCAPED_MAX], shown[LESSON_ESCAPED_MAX];
    token_name_refusal(&named, text, strlen(text), why, sizeof why);
    REPORT(c, node, REPEATED_TOKEN, what, lesson_escape(why, strlen(why), shown));
}

static int read_focus_part(checker *c, int node, stage_id stage, bool row) {
    const stage_info *info = stage_get(stage);
    const char *what = row ? "a focus row" : "a focus column";
    if (!checker_expect_scalar(c, node, what, "a token or an index")) return -1;
    stage_axis axis = row ? info->rows : info->cols;
    int at = resolve_label(c, axis, lesson_node_text(c->t, node));
    char text[LESSON_ESCAPED_MAX];
    if (at == LABEL_REPEATED) {
        report_repeated(c, node, axis, row ? "focus row" : "focus column");
        return LABEL_NONE;
    }
    if (at != LABEL_NONE) return at;
    lesson_diagnostic *item = REPORT(c, node, BAD_FOCUS, row ? "row" : "column",
                                     checker_shown(c, node, text), row ? "row" : "column",
                                     info->name);
    const token_list *list = axis == AXIS_SOURCE && c->keys[TOP_SOURCE] >= 0 ? &c->source
                                                                             : &c->tokens;
    if (axis == AXIS_TOKENS || axis == AXIS_SOURCE)
        checker_report_unknown(c, item, node, (const char *const *)list->text, list->count,
                               LESSON_HINT_COUNT);
    const char *label = lesson_node_text(c->t, node);
    int count = axis_length(c, axis);
    if (*label && strspn(label, "0123456789") == strlen(label) && count > 0)
        lesson_hint(item, LESSON_HINT_INDEX_RANGE, row ? "row" : "column", info->name, count - 1);
    return at;
}

static void read_focus(checker *c, int node, lesson_step *step) {
    if (!checker_expect_kind(c, node, LESSON_NODE_LIST, "focus", "a list [row, column]")) return;
    if (checker_node(c, node)->count != 2) {
        REPORT(c, node, WRONG_SIZE, "focus", 2, "items [row, column]",
               checker_node(c, node)->count);
        return;
    }
    if (step->stage == STAGE_COUNT) return;
    int row = node + 1, col = lesson_node_next(c->t, row);
    step->focus_row = read_focus_part(c, row, step->stage, true);
    step->focus_col = read_focus_part(c, col, step->stage, false);
}

/* A head names one of a per-head stage's matrices; on a stage that is one matrix for all heads
 * it would be shown in one view and dropped in another, so it is refused. */
static void read_head(checker *c, int node, lesson_step *step) {
    uint64_t head = 0;
    if (!checker_read_integer(c, node, "head", 1, LESSON_MAX_HEADS, &head)) return;
    step->head = (int)head;
    if (c->heads > 0 && step->head > c->heads)   /* the 1 head of a lesson that misspelt heads */
        checker_follows(c, REPORT(c, node, NO_SUCH_HEAD, step->head, c->heads), 0, "heads");
    if (step->stage == STAGE_COUNT || stage_get(step->stage)->per_head) return;
    char list[256] = "";
    for (int s = 0; s < STAGE_COUNT; s++)
        if (stage_get((stage_id)s)->per_head && checker_stage_listed(c, (stage_id)s))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                     stage_get((stage_id)s)->name);
    REPORT(c, node, HEAD_NOT_PER_HEAD, stage_get(step->stage)->name, list);
    step->head = 0;
}

/* ---- text with live numbers, and claims ---- */

static lesson_place place_of(const checker *c, int node) {
    return (lesson_place){ checker_node(c, node)->line, checker_node(c, node)->col };
}

/* Bytes of the line break ending just before data[i] (0 when none), as libyaml counts
 * breaks: CR LF, CR, LF, NEL, LS, PS; from is where the first line starts. */
static size_t break_before(const char *data, size_t from, size_t i) {
    const unsigned char *p = (const unsigned char *)data;
    if (i <= from) return 0;
    if (p[i - 1] == '\n') return i - 1 > from && p[i - 2] == '\r' ? 2 : 1;
    if (p[i - 1] == '\r') return p[i] == '\n' ? 0 : 1;   /* inside CR LF is no line start */
    if (p[i - 1] == 0x85 && i - 1 > from && p[i - 2] == 0xc2) return 2;
    if ((p[i - 1] == 0xa8 || p[i - 1] == 0xa9) && i - 2 > from && p[i - 2] == 0x80
        && p[i - 3] == 0xe2) return 3;
    return 0;
}

/* Moves the cursor back to the start of an earlier line, walking back only as far as that:
 * a text met before the last one (a step's `say` above its `ask`) costs its distance, not a
 * walk from the top of the file. */
static void cursor_back(lesson_cursor *k, const char *data, size_t size, int line) {
    size_t first = lesson_first_line(data, size), i = k->offset;
    int l = k->line;
    for (;;) {
        size_t back = break_before(data, first, i);
        if (back && l == line) break;
        if (back) { i -= back; l--; }
        else if (i <= first) break;
        else i--;
    }
    *k = (lesson_cursor){ i, l, 1 };
}

/* Moves the cursor back to an earlier column of its own line, a character at a time (the file
 * is valid UTF-8 by now): on a long line, a text met before the last costs its distance. */
static void cursor_left(lesson_cursor *k, const char *data, size_t size, int col) {
    size_t first = lesson_first_line(data, size);
    while (k->col > col && k->offset > first) {
        k->offset--;
        while (k->offset > first && ((unsigned char)data[k->offset] & 0xc0) == 0x80) k->offset--;
        k->col--;
    }
}

/* The byte offset of a node, from where the last one was found. */
static size_t offset_of(checker *c, int node) {
    const lesson_node *n = checker_node(c, node);
    lesson_cursor *k = &c->place;
    if (k->line >= 1 && n->line == k->line && n->col < k->col)
        cursor_left(k, c->data, c->size, n->col);
    else if (k->line >= 1 && n->line < k->line)
        cursor_back(k, c->data, c->size, n->line);
    return lesson_cursor_move(k, c->data, c->size, n->line, n->col);
}

/* Moves *at, the place of byte *pos, forward to byte to, counting as libyaml does. */
static void advance_place(const checker *c, size_t *pos, lesson_place *at, size_t to) {
    size_t first = lesson_first_line(c->data, c->size);
    while (*pos < to) {
        unsigned cp = 0;
        int n = text_decode(c->data + *pos, &cp);
        *pos += n > 0 ? (size_t)n : 1;
        if (break_before(c->data, first, *pos)) {   /* CR of CR LF: a column, then undone */
            at->line++;
            at->col = 1;
        } else {
            at->col++;
        }
    }
}

/* The bytes of a placeholder that the file surely writes as the text has them: up to the first
 * blank (where a folded or quoted text may have broken the line). */
static size_t written_length(const char *placeholder, size_t length) {
    size_t n = 1;
    while (n < length && placeholder[n] != ' ' && placeholder[n] != '\n') n++;
    return n;
}

/* Where in data [from, bound) the placeholder (length bytes) is written: the whole of it, or
 * else its first part (an unclosed one folded across lines); bound when nowhere. */
static size_t find_written(const checker *c, size_t from, size_t bound, const char *placeholder,
                           size_t length) {
    for (size_t i = from; i + length <= bound; i++)
        if (memcmp(c->data + i, placeholder, length) == 0) return i;
    size_t part = written_length(placeholder, length);
    for (size_t i = from; part < length && i + part <= bound; i++)
        if (memcmp(c->data + i, placeholder, part) == 0) return i;
    return bound;
}

/* Where each placeholder of a text is written: found as written in the file between the text's
 * value and the next node; a placeholder the file writes otherwise (folded across lines, or
 * with escapes in a quoted string) is placed at the value itself. Places are counted forward
 * from the text's own, so a lesson of many texts loads in linear time. */
void checker_read_written(checker *c, int node, lesson_written *w) {
    w->at = place_of(c, node);
    const char *text = lesson_node_text(c->t, node);
    size_t from = offset_of(c, node);
    size_t bound = node + 1 < c->t->n_nodes ? offset_of(c, node + 1) : c->size;
    size_t open = 0, length = 0, count = 0;
    for (size_t at = 0; claim_placeholder_find(text, at, &open, &length); at = open + length)
        count++;
    if (count == 0 || !(w->marks = calloc(count, sizeof *w->marks))) return;
    size_t pos = from;
    lesson_place here = w->at;
    for (size_t at = 0; claim_placeholder_find(text, at, &open, &length); at = open + length) {
        lesson_place *mark = &w->marks[w->count++];
        *mark = w->at;
        size_t i = find_written(c, from, bound, text + open, length);
        if (i < bound) {
            advance_place(c, &pos, &here, i);
            *mark = here;
            from = i + written_length(text + open, length);
        }
    }
}

static char *read_written_text(checker *c, int node, const char *what, lesson_written *w) {
    char *text = checker_read_text(c, node, what);
    if (text) checker_read_written(c, node, w);
    return text;
}

static void add_claim(checker *c, int node, lesson_step *step) {
    char *text = checker_read_text(c, node, "a claim");
    if (!text) return;
    step->expect[step->n_expect++] = (lesson_claim){ text, place_of(c, node) };
}

/* expect: one claim, or a list of them. */
static void read_expect(checker *c, int node, lesson_step *step) {
    if (!checker_usable(c, node)) return;
    bool list = checker_node(c, node)->kind == LESSON_NODE_LIST;
    int count = list ? checker_node(c, node)->count : 1;
    if (list && count == 0) {
        REPORT(c, node, EMPTY_LIST, "expect");
        return;
    }
    step->expect = calloc((size_t)count, sizeof *step->expect);
    if (!step->expect) return;
    if (!list) {
        add_claim(c, node, step);
        return;
    }
    LESSON_FOR_EACH_CHILD(c->t, node, item)
        add_claim(c, item, step);
}

/* ---- questions ---- */

static void read_choices(checker *c, int node, lesson_step *step) {
    if (!checker_expect_kind(c, node, LESSON_NODE_LIST, "choices", "a list of answers")) return;
    if (checker_node(c, node)->count == 0) {
        REPORT(c, node, EMPTY_LIST, "choices");
        return;
    }
    step->choices = calloc((size_t)checker_node(c, node)->count, sizeof *step->choices);
    if (!step->choices) return;
    LESSON_FOR_EACH_CHILD(c->t, node, item) {
        char *choice = checker_read_text(c, item, "a choice");
        if (choice) step->choices[step->n_choices++] = choice;
    }
}

static void read_answer(checker *c, int node, bool with_choices, lesson_step *step) {
    if (with_choices && !step->choices) return;  /* the choices themselves were wrong */
    step->answer_at = place_of(c, node);
    if (checker_node(c, node)->kind == LESSON_NODE_SCALAR) {
        step->answer_text = strdup(lesson_node_text(c->t, node));
        /* auto: lesson_check takes it from the trace (unless a choice is called "auto") */
        step->answer_auto = strcmp(step->answer_text, "auto") == 0;
        for (int i = 0; step->answer_auto && i < step->n_choices; i++)
            step->answer_auto = strcmp(step->choices[i], "auto") != 0;
        if (step->answer_auto) return;
    }
    if (with_choices) {
        if (!checker_expect_scalar(c, node, "answer", "one of the choices")) return;
        for (int i = 0; i < step->n_choices && step->answer_choice < 0; i++)
            if (strcmp(step->choices[i], lesson_node_text(c->t, node)) == 0)
                step->answer_choice = i;
        char text[LESSON_ESCAPED_MAX];
        if (step->answer_choice < 0)
            checker_report_unknown(c, REPORT(c, node, NOT_A_CHOICE, checker_shown(c, node, text)),
                                   node, (const char *const *)step->choices, step->n_choices,
                                   LESSON_HINT_COUNT);
        return;
    }
    checker_read_number(c, node, "answer", &step->answer);
}

/* ask, choices, answer and tolerance: a question asked before the step's stage is shown. */
static void read_question(checker *c, int map, const int *keys, lesson_step *step) {
    step->ask = read_written_text(c, keys[STEP_ASK], "ask", &step->ask_written);
    if (keys[STEP_ASK] >= 0) step->ask_at = place_of(c, keys[STEP_ASK] - 1);
    if (keys[STEP_CHOICES] >= 0) read_choices(c, keys[STEP_CHOICES], step);
    if (keys[STEP_ANSWER] >= 0) {
        /* without choices the answer is read as a number: wrong, if 'choices' is misspelt */
        if (keys[STEP_CHOICES] < 0) checker_follow_from(c, map, "choices");
        read_answer(c, keys[STEP_ANSWER], keys[STEP_CHOICES] >= 0, step);
        checker_follow_end(c);
    }
    if (keys[STEP_ASK] < 0) {
        int parts[] = { STEP_CHOICES, STEP_ANSWER, STEP_TOLERANCE };
        for (int i = 0; i < 3; i++)
            if (keys[parts[i]] >= 0)
                REPORT(c, keys[parts[i]] - 1, NEEDS, step_keys[parts[i]], "'ask'");
        return;
    }
    if (keys[STEP_ANSWER] < 0) REPORT(c, keys[STEP_ASK] - 1, NEEDS, "ask", "'answer'");
    if (keys[STEP_TOLERANCE] < 0) return;
    if (keys[STEP_CHOICES] >= 0) {
        REPORT(c, keys[STEP_TOLERANCE] - 1, NEEDS, "tolerance",
               "a numeric answer, without 'choices'");
    } else if (checker_read_number(c, keys[STEP_TOLERANCE], "tolerance", &step->tolerance)
               && step->tolerance < 0) {
        char text[LESSON_ESCAPED_MAX];
        REPORT(c, keys[STEP_TOLERANCE], BAD_VALUE, "tolerance", "a number of at least 0",
               checker_shown(c, keys[STEP_TOLERANCE], text));
    }
}

/* position: the token a decoding lesson's step shows being generated (a word, its first
 * occurrence, or an index from 0): the step then shows only the rows and columns decoding
 * computes for that token (walk_step_rows), as the decode walk does. */
static void read_position(checker *c, int node, lesson_step *step) {
    if (!checker_expect_scalar(c, node, "position", "a token or an index")) return;
    if (!c->decode) {
        REPORT(c, node - 1, NEEDS, "position", "'decode: true': only a decoding lesson has a "
               "token being generated");
        return;
    }
    if (!c->tokens.valid) return;
    int at = resolve_label(c, AXIS_TOKENS, lesson_node_text(c->t, node));
    if (at >= 0) {
        step->token = at + 1;
        return;
    }
    if (at == LABEL_REPEATED) {
        report_repeated(c, node, AXIS_TOKENS, "position");
        return;
    }
    char text[LESSON_ESCAPED_MAX];
    checker_report_unknown(c, REPORT(c, node, BAD_POSITION, checker_shown(c, node, text),
                                     c->tokens.count - 1),
                           node, (const char *const *)c->tokens.text, c->tokens.count,
                           LESSON_HINT_COUNT);
}

/* train_step: k, the trace after k updates of the lesson's train: (0 … its steps). */
static void read_train_step(checker *c, int node, lesson_step *step) {
    uint64_t k = 0;
    if (c->keys[TOP_TRAIN] < 0) {
        REPORT(c, node - 1, NEEDS, "train_step", "'train: {steps: N, learning_rate: η}': only "
               "a lesson that trains has training steps");
        return;
    }
    if (c->train.steps > 0
        && checker_read_integer(c, node, "train_step", 0, (uint64_t)c->train.steps, &k))
        step->train_step = (int)k;
}

/* A focus at a position must be a cell that the step shows (walk_step_rows, walk_step_cols):
 * the token's own row, or a row of the cache; a key column up to the token. */
static void check_focus_shown(checker *c, int node, int position, const lesson_step *step) {
    if (step->token == 0 || step->focus_row < 0 || step->focus_col < 0
        || walk_position_shows(step->stage, step->token - 1, c->tile, step->focus_row,
                               step->focus_col))
        return;
    const stage_info *info = stage_get(step->stage);
    char text[LESSON_ESCAPED_MAX];
    REPORT(c, node, FOCUS_NOT_SHOWN, checker_shown(c, position, text), info->name,
           info->rows == AXIS_SOURCE ? "the cache's rows up to that token" : "only that token's row",
           info->cols == AXIS_SOURCE ? ", and the keys up to it"
           : info->cols == AXIS_TILES ? ", and the tiles of the keys up to it" : "");
}

static void read_step(checker *c, int node, lesson_step *step) {
    *step = (lesson_step){ .stage = STAGE_COUNT, .focus_row = -1, .focus_col = -1,
                           .answer_choice = -1, .tolerance = DEFAULT_TOLERANCE,
                           .line = checker_node(c, node)->line };
    if (!checker_expect_kind(c, node, LESSON_NODE_MAP, "a step", "a mapping (stage:, say:, ...)"))
        return;
    int keys[STEP_COUNT];
    checker_read_keys(c, node, step_keys, STEP_COUNT, keys);
    checker_require(c, node, keys[STEP_STAGE], "stage");
    if (keys[STEP_STAGE] >= 0) step->stage = checker_read_stage(c, keys[STEP_STAGE]);
    if (keys[STEP_HEAD] >= 0) read_head(c, keys[STEP_HEAD], step);
    if (keys[STEP_POSITION] >= 0) read_position(c, keys[STEP_POSITION], step);
    if (keys[STEP_TRAIN_STEP] >= 0) read_train_step(c, keys[STEP_TRAIN_STEP], step);
    if (keys[STEP_FOCUS] >= 0) read_focus(c, keys[STEP_FOCUS], step);
    if (keys[STEP_FOCUS] >= 0 && keys[STEP_POSITION] >= 0)
        check_focus_shown(c, keys[STEP_FOCUS], keys[STEP_POSITION], step);
    step->say = read_written_text(c, keys[STEP_SAY], "say", &step->say_written);
    read_question(c, node, keys, step);
    if (keys[STEP_EXPECT] >= 0) read_expect(c, keys[STEP_EXPECT], step);
}

void checker_read_steps(checker *c, int node) {
    if (node < 0 || !checker_expect_kind(c, node, LESSON_NODE_LIST, "steps", "a list of steps"))
        return;
    int count = checker_node(c, node)->count;
    if (count == 0) return;
    c->steps = calloc((size_t)count, sizeof *c->steps);
    if (!c->steps) return;
    LESSON_FOR_EACH_CHILD(c->t, node, item)
        read_step(c, item, &c->steps[c->n_steps++]);
}

/* ---- a loaded lesson's script ---- */

void checker_free_step(lesson_step *step) {
    free(step->say);
    free(step->ask);
    free(step->answer_text);
    for (int i = 0; i < step->n_expect; i++) free(step->expect[i].text);
    free(step->expect);
    free(step->say_written.marks);
    free(step->ask_written.marks);
    for (int i = 0; i < step->n_choices; i++) free(step->choices[i]);
    free(step->choices);
}

bool lesson_walk(const lesson *l, const trace *t, walk *w) {
    walk_mark *marks = calloc(l->n_steps > 0 ? (size_t)l->n_steps : 1, sizeof *marks);
    if (!marks) { *w = (walk){ NULL, 0 }; return false; }
    for (int i = 0; i < l->n_steps; i++)
        marks[i] = (walk_mark){ l->steps[i].stage, l->steps[i].head, l->steps[i].token,
                                l->steps[i].train_step };
    bool built = walk_build_trained(w, t, marks, l->n_steps, l->train.steps);
    free(marks);
    return built;
}

const lesson_step *lesson_narration(const lesson *l, const walk_step *step) {
    if (step->narration < 0) return NULL;
    assert(step->narration < l->n_steps);
    return &l->steps[step->narration];
}
