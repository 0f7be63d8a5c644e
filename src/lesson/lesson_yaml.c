/* The YAML layer of the lesson loader: libyaml events → a small tree with positions, checking
 * every structural limit as the events arrive, so nothing grows or loops past a limit. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "lesson_diag.h"
#include "lesson_syntax.h"
#include "lesson_text.h"
#include "lesson_yaml.h"

typedef struct {
    lesson_tree *tree;
    lesson_diagnostics *diagnostics;
    int stack[LESSON_MAX_DEPTH];  /* the open lists and mappings */
    int depth;
    /* For telling "1,5" from "1, 5": the text, a cursor moving forward through it, and for each
     * open collection whether it is a flow list and where its last item ended. */
    const char *data;
    size_t size;
    lesson_cursor cursor;
    bool flow_list[LESSON_MAX_DEPTH], has_item[LESSON_MAX_DEPTH];
    yaml_mark_t item_end[LESSON_MAX_DEPTH];
} builder;

static bool grow(void **items, int *capacity, int needed, size_t item_size) {
    if (needed <= *capacity) return true;
    int wanted = *capacity ? *capacity * 2 : 256;
    while (wanted < needed) wanted *= 2;
    void *bigger = realloc(*items, (size_t)wanted * item_size);
    if (!bigger) return false;
    *items = bigger;
    *capacity = wanted;
    return true;
}

static void report_at(builder *b, yaml_mark_t mark, lesson_error error, const char *detail) {
    lesson_report(b->diagnostics, (int)mark.line + 1, (int)mark.column + 1, error, detail);
}

static size_t offset_of(builder *b, yaml_mark_t mark) {
    return lesson_cursor_move(&b->cursor, b->data, b->size, (int)mark.line + 1,
                              (int)mark.column + 1);
}

/* How the ',' between the end of the open list's last item and `start` is written. */
static lesson_comma comma_before(builder *b, yaml_mark_t start) {
    int list = b->depth - 1;
    if (list < 0 || !b->flow_list[list] || !b->has_item[list]) return LESSON_COMMA_NONE;
    size_t from = offset_of(b, b->item_end[list]), to = offset_of(b, start);
    const char *comma = from < to ? memchr(b->data + from, ',', to - from) : NULL;
    if (!comma) return LESSON_COMMA_NONE;
    return comma + 1 < b->data + to && strchr(" \t\r\n", comma[1]) ? LESSON_COMMA_SPACED
                                                                   : LESSON_COMMA_TIGHT;
}

/* Notes where the item just read ended, in the collection that holds it. */
static void item_ended(builder *b, yaml_mark_t end) {
    if (b->depth == 0) return;
    b->has_item[b->depth - 1] = true;
    b->item_end[b->depth - 1] = end;
}

/* Appends a node that starts at mark; returns its index, or -1 after reporting why not. */
static int add_node(builder *b, lesson_node_kind kind, yaml_mark_t mark) {
    lesson_tree *t = b->tree;
    if (t->n_nodes >= LESSON_MAX_NODES) {
        lesson_report(b->diagnostics, (int)mark.line + 1, (int)mark.column + 1,
                      LESSON_ERROR_TOO_MANY_NODES, LESSON_MAX_NODES, LESSON_MAX_NODES);
        return -1;
    }
    if (!grow((void **)&t->nodes, &t->capacity, t->n_nodes + 1, sizeof *t->nodes)) {
        report_at(b, mark, LESSON_ERROR_NO_MEMORY, NULL);
        return -1;
    }
    if (b->depth > 0) t->nodes[b->stack[b->depth - 1]].count++;
    t->nodes[t->n_nodes] = (lesson_node){ .kind = (uint8_t)kind, .line = (int)mark.line + 1,
                                          .col = (int)mark.column + 1, .size = 1,
                                          .comma = (uint8_t)comma_before(b, mark) };
    return t->n_nodes++;
}

static bool store_text(lesson_tree *t, lesson_node *node, const char *text, size_t length) {
    size_t needed = t->text_used + length + 1;
    if (needed > t->text_capacity) {
        size_t wanted = t->text_capacity ? t->text_capacity * 2 : 4096;
        while (wanted < needed) wanted *= 2;
        char *bigger = realloc(t->text, wanted);
        if (!bigger) return false;
        t->text = bigger;
        t->text_capacity = wanted;
    }
    memcpy(t->text + t->text_used, text, length);
    t->text[t->text_used + length] = '\0';
    node->text = (uint32_t)t->text_used;
    node->length = (uint32_t)length;
    t->text_used = needed;
    return true;
}

static bool add_scalar(builder *b, const yaml_event_t *event) {
    const char *value = (const char *)event->data.scalar.value;
    size_t length = event->data.scalar.length;
    bool fits = length <= LESSON_MAX_STRING, clean = fits && !memchr(value, '\0', length);
    int at = add_node(b, clean ? LESSON_NODE_SCALAR : LESSON_NODE_BAD, event->start_mark);
    if (at < 0) return false;
    if (!fits)
        lesson_report(b->diagnostics, b->tree->nodes[at].line, b->tree->nodes[at].col,
                      LESSON_ERROR_STRING_TOO_LONG, length);
    else if (!clean)
        report_at(b, event->start_mark, LESSON_ERROR_NUL_IN_TEXT, NULL);
    if (!clean) return true;
    lesson_node *node = &b->tree->nodes[at];
    node->plain = event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (store_text(b->tree, node, value, length)) return true;
    report_at(b, event->start_mark, LESSON_ERROR_NO_MEMORY, NULL);
    return false;
}

static bool open_collection(builder *b, const yaml_event_t *event, lesson_node_kind kind) {
    if (b->depth == LESSON_MAX_DEPTH) {
        lesson_report(b->diagnostics, (int)event->start_mark.line + 1,
                      (int)event->start_mark.column + 1, LESSON_ERROR_TOO_DEEP,
                      LESSON_MAX_DEPTH, LESSON_MAX_DEPTH);
        return false;
    }
    int at = add_node(b, kind, event->start_mark);
    if (at < 0) return false;
    b->flow_list[b->depth] = event->type == YAML_SEQUENCE_START_EVENT
                          && event->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    b->has_item[b->depth] = false;
    b->stack[b->depth++] = at;
    return true;
}

static void close_collection(builder *b, yaml_mark_t end) {
    int at = b->stack[--b->depth];
    b->tree->nodes[at].size = b->tree->n_nodes - at;
    item_ended(b, end);
}

static void report_escaped(builder *b, yaml_mark_t mark, lesson_error error, const char *name) {
    char shown[LESSON_ESCAPED_MAX];
    report_at(b, mark, error, lesson_escape(name, strlen(name), shown));
}

/* The anchor of a node event, or NULL. */
static const char *anchor_of(const yaml_event_t *event) {
    switch (event->type) {
    case YAML_SCALAR_EVENT: return (const char *)event->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT: return (const char *)event->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT: return (const char *)event->data.mapping_start.anchor;
    default: return NULL;
    }
}

/* Handles one event; returns false to stop (a fatal problem, or the end of the document). */
static bool handle_event(builder *b, const yaml_event_t *event, int *documents) {
    const char *anchor = anchor_of(event);
    if (anchor) report_escaped(b, event->start_mark, LESSON_ERROR_ANCHOR, anchor);
    switch (event->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++*documents == 1) return true;
        report_at(b, event->start_mark, LESSON_ERROR_SECOND_DOCUMENT, NULL);
        return false;
    case YAML_SCALAR_EVENT: {
        bool added = add_scalar(b, event);
        item_ended(b, event->end_mark);
        return added;
    }
    case YAML_ALIAS_EVENT: {
        report_escaped(b, event->start_mark, LESSON_ERROR_ALIAS,
                       (const char *)event->data.alias.anchor);
        bool added = add_node(b, LESSON_NODE_BAD, event->start_mark) >= 0;
        item_ended(b, event->end_mark);
        return added;
    }
    case YAML_SEQUENCE_START_EVENT:
        return open_collection(b, event, LESSON_NODE_LIST);
    case YAML_MAPPING_START_EVENT:
        return open_collection(b, event, LESSON_NODE_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        close_collection(b, event->end_mark);
        return true;
    case YAML_STREAM_END_EVENT:
        return false;
    default:
        return true;
    }
}

const char *lesson_node_describe(const lesson_tree *tree, int node) {
    switch (tree->nodes[node].kind) {
    case LESSON_NODE_LIST: return "a list";
    case LESSON_NODE_MAP: return "a mapping";
    case LESSON_NODE_SCALAR: return lesson_node_is_null(tree, node) ? "empty" : "text";
    default: return "an unusable value";
    }
}

/* Reports keys that are not text and keys given twice in one mapping. Sorting the keys keeps
 * this O(n log n) however many keys there are and whatever they are. */
/* A duplicate of an item's first key, written where its first key is: the '- ' of a new item
 * forgotten. It is reported as such, and explains the duplicates after it (the rest of that
 * item's keys), which follow from it. */
static void report_duplicate(const lesson_tree *t, int map, bool item, int key, int first,
                             lesson_diagnostic **forgot, lesson_diagnostics *d) {
    const lesson_node *k = &t->nodes[key], *m = &t->nodes[map];
    char shown[LESSON_ESCAPED_MAX];
    lesson_escape(lesson_node_text(t, key), k->length, shown);
    bool dash = item && !*forgot && first == map + 1 && k->col == m->col;
    lesson_diagnostic *report = lesson_report(d, k->line, k->col, dash
        ? LESSON_ERROR_ITEM_WITHOUT_DASH : LESSON_ERROR_DUPLICATE_KEY, shown,
        t->nodes[first].line);
    if (dash) {
        lesson_explains(report, m->line, m->col, "- ");
        *forgot = report;
    } else if (*forgot && k->line > (*forgot)->line) {
        lesson_follows(report, m->line, m->col, "- ");
    }
}

static void check_map(const lesson_tree *t, int map, bool item, lesson_diagnostics *d) {
    int pairs = t->nodes[map].count / 2, count = 0;
    const char **keys = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *keys);
    int *nodes = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *nodes);
    lesson_index index = { 0 };
    for (int key = map + 1; keys && nodes && key < lesson_node_next(t, map);) {
        const lesson_node *k = &t->nodes[key];
        if (k->kind == LESSON_NODE_LIST || k->kind == LESSON_NODE_MAP)
            lesson_report(d, k->line, k->col, LESSON_ERROR_KEY_NOT_TEXT,
                          lesson_node_describe(t, key));
        else if (k->kind == LESSON_NODE_SCALAR) {
            keys[count] = lesson_node_text(t, key);
            nodes[count++] = key;
        }
        key = lesson_node_next(t, lesson_node_next(t, key));
    }
    lesson_diagnostic *forgot = NULL;   /* the forgotten '- ', once found */
    if (keys && nodes && lesson_index_build(&index, keys, count)) {
        for (int i = 0; i < count; i++) {
            int first = lesson_index_first(&index, keys[i]);
            if (first != i) report_duplicate(t, map, item, nodes[i], nodes[first], &forgot, d);
        }
    }
    lesson_index_free(&index);
    free(keys);
    free(nodes);
}

bool lesson_tree_parse(const char *data, size_t size, lesson_tree *tree,
                       lesson_diagnostics *diagnostics) {
    *tree = (lesson_tree){ 0 };
    builder b = { .tree = tree, .diagnostics = diagnostics, .data = data, .size = size };
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return false;
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, size);
    /* No yaml_parser_set_encoding: left to itself, libyaml also skips a UTF-8 byte order mark
     * (the text was checked to be UTF-8, so it cannot take it for UTF-16). */
    bool complete = false, going = true;
    int documents = 0;
    while (going) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            lesson_syntax_report(&parser, data, size, diagnostics);
            break;
        }
        complete = event.type == YAML_STREAM_END_EVENT
                || (event.type == YAML_DOCUMENT_START_EVENT && documents == 1);
        going = handle_event(&b, &event, &documents);
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    if (!complete) return false;
    if (tree->n_nodes == 0 || lesson_node_is_null(tree, 0)) {
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_FILE_EMPTY);
        return false;
    }
    for (int i = 0; i < tree->n_nodes; i++) {
        if (tree->nodes[i].kind == LESSON_NODE_MAP && i == 0) check_map(tree, i, false, diagnostics);
        if (tree->nodes[i].kind == LESSON_NODE_LIST) {   /* the items, knowing they are items */
            LESSON_FOR_EACH_CHILD(tree, i, child)
                if (tree->nodes[child].kind == LESSON_NODE_MAP)
                    check_map(tree, child, true, diagnostics);
        } else if (tree->nodes[i].kind == LESSON_NODE_MAP) {
            for (int key = i + 1; key < lesson_node_next(tree, i);) {
                int value = lesson_node_next(tree, key);
                if (tree->nodes[value].kind == LESSON_NODE_MAP)
                    check_map(tree, value, false, diagnostics);
                key = lesson_node_next(tree, value);
            }
        }
    }
    return true;
}

void lesson_tree_free(lesson_tree *tree) {
    free(tree->nodes);
    free(tree->text);
    *tree = (lesson_tree){ 0 };
}

const char *lesson_node_text(const lesson_tree *tree, int node) {
    return tree->text + tree->nodes[node].text;
}

bool lesson_node_is_null(const lesson_tree *tree, int node) {
    const lesson_node *n = &tree->nodes[node];
    if (n->kind != LESSON_NODE_SCALAR || !n->plain) return false;
    const char *text = lesson_node_text(tree, node);
    return !*text || strcmp(text, "~") == 0 || strcmp(text, "null") == 0
        || strcmp(text, "Null") == 0 || strcmp(text, "NULL") == 0;
}
