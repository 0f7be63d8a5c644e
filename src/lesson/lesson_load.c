/* The loader's entry points (lesson_load, lesson_load_summary, …): reading the file, checking its
 * text, its YAML tree and every key in order, then building; and freeing what a load made. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lesson_private.h"

static const char *const top_keys[] = { TOP_KEYS(KEY_NAME) };

/* ---- the whole lesson ---- */

/* Reads every key in an order where each reading has what it is checked against (the tokens and
 * d_model before the matrices, the mask before decode, every key of the model before the steps),
 * so that every problem of the lesson is reported in one run. */
static void check_lesson(checker *c, int root) {
    int *k = c->keys;
    checker_read_keys(c, root, top_keys, TOP_COUNT, k);
    checker_require(c, root, k[TOP_TITLE], "title");
    checker_require(c, root, k[TOP_TOKENS], "tokens");
    checker_require(c, root, k[TOP_EMBEDDINGS], "embeddings");
    if (k[TOP_TITLE] >= 0) checker_expect_scalar(c, k[TOP_TITLE], "title", "text");
    if (k[TOP_ABOUT] >= 0) checker_expect_scalar(c, k[TOP_ABOUT], "about", "text");
    checker_read_tokens(c, k[TOP_TOKENS], &c->tokens, "tokens");
    if (k[TOP_SOURCE] >= 0) checker_read_tokens(c, k[TOP_SOURCE], &c->source, "source");
    checker_read_sizes(c);
    if (c->tokens.valid && (k[TOP_SOURCE] < 0 || c->source.valid) && !checker_index_distinct(c))
        return;
    if (k[TOP_EMBEDDINGS] >= 0) checker_read_embeddings(c, k[TOP_EMBEDDINGS]);
    checker_check_heads(c);
    checker_read_kv_heads(c);
    for (int p = 0; p < PARAM_COUNT; p++)   /* the weights */
        if (!param_get((param_id)p)->optional)
            checker_read_matrix(c, k[TOP_W_Q + p], param_get((param_id)p)->name,
                                checker_param_columns(c, (param_id)p), &c->params[p]);
    for (int p = 0; p < PARAM_COUNT; p++)
        if (!param_get((param_id)p)->optional && param_get((param_id)p)->cols == AXIS_KV_DIMS)
            checker_check_kv_identity(c, (param_id)p);
    checker_read_norm(c);   /* before the biases: it says whether gain and bias are given */
    for (int p = 0; p < PARAM_COUNT; p++)   /* the biases */
        if (param_get((param_id)p)->optional)
            checker_read_bias_vector(c, (param_id)p);
    checker_read_mask(c, k[TOP_MASK]);
    checker_read_positional(c);
    checker_read_bias(c);
    checker_read_softmax(c);
    checker_read_dropout(c);
    checker_read_decode(c);
    checker_read_loss(c);
    checker_read_train(c);
    c->scale = checker_read_bool(c, k[TOP_SCALE], "scale", true);
    checker_read_steps(c, k[TOP_STEPS]);
    int order[DRAWN_COUNT], drawn = checker_read_draw_order(c, k[TOP_DRAW_ORDER], order);
    if (!checker_failed(c) && c->d_model > 0 && c->tokens.valid && !c->structure_only)
        checker_draw_numpy(c, order, drawn);
}

static void checker_free(checker *c) {
    checker_token_list_free(&c->tokens);
    checker_token_list_free(&c->source);
    lesson_index_free(&c->distinct);
    free(c->all_tokens);
    free(c->distinct_of);
    free(c->distinct_text);
    free(c->distinct_node);
    free(c->distinct_vector);
    for (int i = 0; i < c->n_steps; i++) checker_free_step(&c->steps[i]);
    free(c->steps);
    for (int i = 0; i < DRAWN_COUNT; i++) free(checker_drawn_spec(c, i)->values);
    free(c->target.values);
    for (int i = 0; i < c->n_data_files; i++) free(c->data_files[i]);
}

static lesson_status check_and_build(const lesson_tree *tree, const char *data, size_t size,
                                     lesson *out, lesson_diagnostics *d,
                                     const lesson_options *options, bool structure_only) {
    if (tree->nodes[0].kind != LESSON_NODE_MAP) {
        lesson_report(d, tree->nodes[0].line, tree->nodes[0].col, LESSON_ERROR_NOT_A_LESSON,
                      lesson_node_describe(tree, 0));
        return LESSON_INVALID;
    }
    checker c = { .t = tree, .data = data, .size = size, .d = d, .d_model = -1,
                  .mask_node = -1,
                  .max_bytes = options->max_bytes ? options->max_bytes : LESSON_MAX_BYTES,
                  .allow_paths = options->allow_paths, .structure_only = structure_only };
    check_lesson(&c, 0);
    lesson_status status = checker_failed(&c) ? LESSON_INVALID : checker_build(&c, 0, out);
    checker_free(&c);
    return status;
}

/* ---- entry points ---- */

static void report_text_problem(lesson_diagnostics *d, const char *data, size_t size) {
    size_t offset = 0;
    unsigned value = 0;
    lesson_text_status status = lesson_check_text(data, size, &offset, &value);
    if (status == LESSON_TEXT_OK) return;
    int line = 0, col = 0;
    lesson_offset_position(data, size, offset, &line, &col);
    char name[16];
    snprintf(name, sizeof name, value < 0x80 ? "\\x%02x" : "\\u%04x", value);
    if (status == LESSON_TEXT_NUL) lesson_report(d, line, col, LESSON_ERROR_NUL_BYTE);
    else if (status == LESSON_TEXT_UTF8) lesson_report(d, line, col, LESSON_ERROR_BAD_UTF8, value);
    else lesson_report(d, line, col, LESSON_ERROR_CONTROL_CHAR, name);
}

static lesson_status load_text(const char *data, size_t size, const lesson_options *options,
                               bool structure_only, lesson *out, lesson_diagnostics *d) {
    report_text_problem(d, data, size);
    if (d->count > 0) return LESSON_INVALID;
    lesson_tree tree;
    lesson_status status = lesson_tree_parse(data, size, &tree, d)
                         ? check_and_build(&tree, data, size, out, d, options, structure_only)
                         : LESSON_INVALID;
    lesson_tree_free(&tree);
    return status;
}

static void start(const char *path, lesson *out, lesson_diagnostics *d) {
    *out = (lesson){ 0 };
    *d = (lesson_diagnostics){ .path = strdup(path ? path : "") };
}

/* The messages of the diagnostics table, to know the report of memory running out. */
#define ERROR_FORMAT(id, format) format,
static const char *const error_formats[] = { LESSON_ERROR_TABLE(ERROR_FORMAT) };

/* Memory ran out when it was reported, or when a failed lesson has no report at all (every
 * other failure reports itself; only a report that could not be allocated goes missing). */
static bool out_of_memory(const lesson_diagnostics *d) {
    if (d->count == 0 && d->dropped == 0) return true;
    for (int i = 0; i < d->count; i++)
        if (strcmp(d->items[i].message, error_formats[LESSON_ERROR_NO_MEMORY]) == 0) return true;
    return false;
}

static lesson_status finish(lesson_status status, const char *path, lesson *out,
                            lesson_diagnostics *d) {
    if (status == LESSON_INVALID && out_of_memory(d)) status = LESSON_NO_MEMORY;
    lesson_report_finish(d);
    if (status == LESSON_OK && lesson_error_count(d) == 0) {
        out->path = strdup(path ? path : "");
        if (d->count > 0 && (out->notes = malloc(sizeof *out->notes)) != NULL)
            *out->notes = *d;   /* the notes go with the lesson; the caller's list is empty */
        else
            lesson_diagnostics_free(d);
        *d = (lesson_diagnostics){ 0 };
        return LESSON_OK;
    }
    lesson_free(out);
    return status == LESSON_OK ? LESSON_INVALID : status;
}

lesson_status lesson_load_buffer(const char *path, const char *data, size_t size,
                                 lesson *out, lesson_diagnostics *diagnostics) {
    return lesson_load_buffer_with(path, data, size, NULL, out, diagnostics);
}

lesson_status lesson_load_buffer_within(const char *path, const char *data, size_t size,
                                        size_t max_bytes, lesson *out,
                                        lesson_diagnostics *diagnostics) {
    lesson_options options = { .max_bytes = max_bytes };
    return lesson_load_buffer_with(path, data, size, &options, out, diagnostics);
}

/* lesson_load_buffer_with; structure_only checks the lesson without building its matrices. */
static lesson_status load_buffer(const char *path, const char *data, size_t size,
                                 const lesson_options *options, bool structure_only,
                                 lesson *out, lesson_diagnostics *diagnostics) {
    static const lesson_options defaults = { 0 };
    if (!options) options = &defaults;
    start(path, out, diagnostics);
    if (size > LESSON_MAX_FILE_BYTES || size == 0) {
        lesson_report(diagnostics, 0, 0, size ? LESSON_ERROR_FILE_TOO_LARGE
                                              : LESSON_ERROR_FILE_EMPTY);
        return finish(LESSON_INVALID, path, out, diagnostics);
    }
    /* The checks below read data as a NUL-terminated string, so work on a terminated copy. */
    char *copy = malloc(size + 1);
    lesson_status status = LESSON_INVALID;
    if (copy) {
        memcpy(copy, data, size);
        copy[size] = '\0';
        status = load_text(copy, size, options, structure_only, out, diagnostics);
        lesson_diagnostics_quote(diagnostics, copy, size);
        if (status == LESSON_OK) {
            out->text = copy;  /* kept, so that checks after loading can quote it too */
            out->text_size = size;
        } else {
            free(copy);
        }
    } else {
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_NO_MEMORY);
    }
    return finish(status, path, out, diagnostics);
}

lesson_status lesson_load_buffer_with(const char *path, const char *data, size_t size,
                                      const lesson_options *options, lesson *out,
                                      lesson_diagnostics *diagnostics) {
    return load_buffer(path, data, size, options, false, out, diagnostics);
}

/* What a file that is not regular is, for the message that refuses it. */
static const char *not_regular(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory, not a regular file";
    if (S_ISFIFO(mode)) return "it is a FIFO, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
    if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
    return "it is not a regular file";
}

/* O_NONBLOCK: opening a FIFO without a writer (or a device) must not wait; fstat then refuses
 * it before any read, which could wait forever or never end (/dev/zero). */
FILE *lesson_open_regular(const char *path, const char **why) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { *why = strerror(errno); return NULL; }
    return lesson_fdopen_regular(fd, why);
}

FILE *lesson_fdopen_regular(int fd, const char **why) {
    struct stat sb;
    const char *refusal = fstat(fd, &sb) != 0 ? strerror(errno)
                        : !S_ISREG(sb.st_mode) ? not_regular(sb.st_mode) : NULL;
    if (refusal) {
        *why = refusal;
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags != -1) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *file = fdopen(fd, "rb");
    if (!file) { *why = strerror(errno); close(fd); }
    return file;
}

/* Reads at most LESSON_MAX_FILE_BYTES + 1 bytes: enough to know a file is too large without
 * reading all of it. Returns the bytes read, or NULL with *why saying why not. */
static char *read_file(const char *path, size_t *size, const char **why) {
    FILE *file = lesson_open_regular(path, why);
    if (!file) return NULL;
    char *data = malloc(LESSON_MAX_FILE_BYTES + 2);
    errno = 0;
    size_t got = data ? fread(data, 1, LESSON_MAX_FILE_BYTES + 1, file) : 0;
    int error = !data ? ENOMEM : ferror(file) ? (errno ? errno : EIO) : 0;
    fclose(file);
    if (error) {
        free(data);
        *why = strerror(error);
        return NULL;
    }
    data[got] = '\0';
    *size = got;
    return data;
}

lesson_status lesson_load(const char *path, lesson *out, lesson_diagnostics *diagnostics) {
    return lesson_load_with(path, NULL, out, diagnostics);
}

/* lesson_load_with; structure_only checks the lesson without building its matrices. */
static lesson_status load_file(const char *path, const lesson_options *options,
                               bool structure_only, lesson *out,
                               lesson_diagnostics *diagnostics) {
    size_t size = 0;
    const char *why = NULL;
    char *data = read_file(path, &size, &why);
    if (!data) {
        start(path, out, diagnostics);
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_CANNOT_READ, why);
        return LESSON_UNREADABLE;
    }
    lesson_status status = load_buffer(path, data, size, options, structure_only, out,
                                       diagnostics);
    free(data);
    return status;
}

lesson_status lesson_load_with(const char *path, const lesson_options *options, lesson *out,
                               lesson_diagnostics *diagnostics) {
    return load_file(path, options, false, out, diagnostics);
}

/* Every check of lesson_load runs (the same diagnostics), but no matrix is drawn, read into
 * place or allocated, so a lesson of d_model 4096 is summed up in the time of reading its
 * text. Only an about with live numbers, in a lesson whose numbers and trace take at most
 * LESSON_ABOUT_BUILD_MAX (the matrices too: their drawing is what takes time), loads in full. */
lesson_status lesson_load_summary(const char *path, const lesson_options *options,
                                  lesson_summary *out, lesson_diagnostics *diagnostics) {
    lesson l;
    *out = (lesson_summary){ 0 };
    lesson_status status = load_file(path, options, true, &l, diagnostics);
    if (status != LESSON_OK) return status;
    bool live = l.about && strchr(l.about, '{') && l.bytes <= LESSON_ABOUT_BUILD_MAX;
    out->title = l.title;
    out->about = l.about;
    l.title = l.about = NULL;
    lesson_free(&l);
    lesson full;
    lesson_diagnostics ignored;
    if (live && lesson_load_with(path, options, &full, &ignored) == LESSON_OK) {
        char *shown = lesson_about_shown(&full);
        if (shown) { free(out->about); out->about = shown; }
        lesson_free(&full);
    } else if (live) {
        lesson_diagnostics_free(&ignored);
    }
    if (!out->title) {
        lesson_summary_free(out);
        lesson_report(diagnostics, 0, 0, LESSON_ERROR_NO_MEMORY);
        return LESSON_NO_MEMORY;
    }
    return LESSON_OK;
}

void lesson_summary_free(lesson_summary *summary) {
    free(summary->title);
    free(summary->about);
    *summary = (lesson_summary){ 0 };
}

void lesson_free(lesson *l) {
    free(l->path);
    free(l->text);
    free(l->title);
    free(l->about);
    free(l->about_written.marks);
    for (int i = 0; l->tokens && i < l->n_tokens; i++) free(l->tokens[i]);
    free(l->tokens);
    for (int i = 0; l->source && i < l->n_source; i++) free(l->source[i]);
    free(l->source);
    for (int i = 0; l->steps && i < l->n_steps; i++) checker_free_step(&l->steps[i]);
    free(l->steps);
    free(l->embeddings);
    free(l->source_embeddings);
    free(l->target);
    for (int p = 0; p < PARAM_COUNT; p++)
        free(l->params[p]);
    free(l->mask_cells);
    for (int i = 0; i < l->n_data_files; i++) free(l->data_files[i]);
    free(l->data_files);
    if (l->notes) lesson_diagnostics_free(l->notes);
    free(l->notes);
    *l = (lesson){ 0 };
}
