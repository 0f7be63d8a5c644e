/* The YAML layer of the lesson loader: one cheap pass over libyaml's event stream that checks the
 * structural limits (depth, node count, string length, anchors, aliases, duplicate keys) and
 * builds a small tree in which every node keeps its line and column. */
#ifndef ATTNSTEP_LESSON_YAML_H
#define ATTNSTEP_LESSON_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lesson.h"

typedef enum {
    LESSON_NODE_SCALAR,
    LESSON_NODE_LIST,
    LESSON_NODE_MAP,
    LESSON_NODE_BAD      /* already reported (an alias, an over-long string): checks skip it */
} lesson_node_kind;

/* How the ',' before an item of a flow list is written: "1,5" (tight) or "1, 5" (spaced). A
 * list that mixes both probably holds decimal commas. */
typedef enum {
    LESSON_COMMA_NONE,   /* the first item, or not in a flow list */
    LESSON_COMMA_TIGHT,
    LESSON_COMMA_SPACED
} lesson_comma;

/* Nodes are stored in document order, so a node's children follow it: the first child is at
 * index + 1 and each next sibling at (child index + that child's size). */
typedef struct {
    uint8_t kind;        /* lesson_node_kind */
    bool plain;          /* a scalar written without quotes: only then can it mean null */
    uint8_t comma;       /* lesson_comma: the separator before this item */
    int line, col;       /* from 1 */
    int size;            /* nodes in this subtree, this one included */
    int count;           /* children: the items of a list; keys and values (2 per pair) of a map */
    uint32_t text;       /* scalar: offset of its NUL-terminated text in the tree's text */
    uint32_t length;     /* scalar: bytes of text */
} lesson_node;

typedef struct {
    lesson_node *nodes;  /* nodes[0] is the document's root */
    int n_nodes, capacity;
    char *text;
    size_t text_used, text_capacity;
} lesson_tree;

/* Parses data (size bytes, NUL-terminated at data[size], already checked to be YAML-printable
 * UTF-8) into tree. Returns true when there is a tree to check, which may still come with
 * reported problems; false after a fatal one (syntax, depth, size) or an empty document. */
bool lesson_tree_parse(const char *data, size_t size, lesson_tree *tree,
                       lesson_diagnostics *diagnostics);

void lesson_tree_free(lesson_tree *tree);

/* The text of a scalar node. */
const char *lesson_node_text(const lesson_tree *tree, int node);

/* Whether node is a scalar meaning null: empty, "~" or "null", written without quotes. */
bool lesson_node_is_null(const lesson_tree *tree, int node);

/* What a node is, for messages: "a list", "a mapping", "empty" or "text". */
const char *lesson_node_describe(const lesson_tree *tree, int node);

/* The index of the next sibling of node. */
static inline int lesson_node_next(const lesson_tree *tree, int node) {
    return node + tree->nodes[node].size;
}

/* Runs the statement after it for each child of parent (for a map: keys and values alike). */
#define LESSON_FOR_EACH_CHILD(tree, parent, child) \
    for (int child = (parent) + 1; child < lesson_node_next(tree, parent); \
         child = lesson_node_next(tree, child))

#endif
