/* Building a checked lesson: its matrices, biases and mask filled from what was read, and the
 * core's attention_input made from them, within the limit on memory. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_private.h"

static void fill_matrix(checker *c, const matrix_spec *spec, int rows, int cols, double *values) {
    size_t count = (size_t)rows * (size_t)cols;
    if (spec->form == FORM_FILE || spec->form == FORM_NUMPY) {
        assert(spec->values && (size_t)spec->rows * (size_t)spec->cols == count);
        memcpy(values, spec->values, count * sizeof *values);
    } else if (spec->form == FORM_RANDOM) {
        random_state state;
        random_seed(&state, spec->seed);
        /* xavier's a = √(3 / d_model) for every matrix, as lessons/README.md defines it */
        random_fill(&state, spec->kind, 2 * c->d_model, spec->scale, values, count);
    } else if (spec->form == FORM_CONSTANT) {   /* a norm's gain or bias not written */
        for (size_t i = 0; i < count; i++) values[i] = spec->scale;
    } else if (spec->form == FORM_VECTOR) {
        checker_read_vector(c, spec->node, cols, "", NULL, values);
    } else if (spec->form == FORM_LIST) {
        int r = 0;
        for (int row = spec->node + 1; row < lesson_node_next(c->t, spec->node);
             row = lesson_node_next(c->t, row), r++)
            checker_read_vector(c, row, cols, "", NULL, values + (size_t)r * (size_t)cols);
    } else {
        memset(values, 0, count * sizeof *values);
        for (int i = 0; i < rows && i < cols; i++)
            values[(size_t)i * (size_t)cols + (size_t)i] = 1.0;
    }
}

/* One row per token (repeats repeated) from one vector per distinct token. */
static double *expand_rows(const double *vectors, const int *ids, int count, int d) {
    double *rows = malloc((size_t)count * (size_t)d * sizeof *rows);
    if (!rows) return NULL;
    for (int i = 0; i < count; i++)
        memcpy(rows + (size_t)i * (size_t)d, vectors + (size_t)ids[i] * (size_t)d,
               (size_t)d * sizeof *rows);
    return rows;
}

/* Embeddings given as a whole matrix: the first rows are the tokens', the rest the source's. */
static bool build_position_embeddings(checker *c, lesson *l) {
    size_t d = (size_t)c->d_model, n = (size_t)l->n_tokens, m = (size_t)l->n_source;
    const double *values = c->embeddings.values;
    l->embeddings = malloc(n * d * sizeof *l->embeddings);
    if (l->embeddings) memcpy(l->embeddings, values, n * d * sizeof *values);
    if (!l->source) return l->embeddings != NULL;
    l->source_embeddings = malloc(m * d * sizeof *l->source_embeddings);
    if (l->source_embeddings) memcpy(l->source_embeddings, values + n * d, m * d * sizeof *values);
    return l->embeddings && l->source_embeddings;
}

static bool build_embeddings(checker *c, lesson *l) {
    if (c->embeddings.form == FORM_FILE || c->embeddings.form == FORM_NUMPY)
        return build_position_embeddings(c, l);
    int d = c->d_model;
    double *vectors = malloc((size_t)c->n_distinct * (size_t)d * sizeof *vectors);
    if (!vectors) return false;
    if (c->embeddings.form == FORM_RANDOM) {
        fill_matrix(c, &c->embeddings, c->n_distinct, d, vectors);
    } else {
        for (int id = 0; id < c->n_distinct; id++)
            checker_read_vector(c, c->distinct_vector[id], d, "", NULL,
                                vectors + (size_t)id * (size_t)d);
    }
    bool cross = c->keys[TOP_SOURCE] >= 0;
    l->embeddings_by_token = true;
    l->embeddings = expand_rows(vectors, c->distinct_of, l->n_tokens, d);
    if (cross)
        l->source_embeddings = expand_rows(vectors, c->distinct_of + l->n_tokens, l->n_source, d);
    free(vectors);
    return l->embeddings && (!cross || l->source_embeddings);
}

/* The mask as cells, for explicit and causal masks alike (readers need not know the rule);
 * the core itself is given cells only for an explicit mask. */
static bool build_mask(checker *c, lesson *l) {
    if (c->mask == MASK_NONE) return true;
    int n = l->n_tokens, m = l->source ? l->n_source : n;
    l->mask_cells = malloc((size_t)n * (size_t)m);
    if (!l->mask_cells) return false;
    if (c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW) {
        unsigned char *cell = l->mask_cells;
        int window = c->mask == MASK_WINDOW ? c->window : n;
        for (int row = 0; row < n; row++)
            for (int col = 0; col < m; col++) *cell++ = col <= row && col > row - window;
        return true;
    }
    size_t i = 0;
    for (int row = c->mask_node + 1; row < lesson_node_next(c->t, c->mask_node);
         row = lesson_node_next(c->t, row))
        LESSON_FOR_EACH_CHILD(c->t, row, cell)
            l->mask_cells[i++] = lesson_node_text(c->t, cell)[0] == '1';
    return true;
}

static void take_tokens(token_list *list, char ***text, int *count) {
    *text = list->text;
    *count = list->count;
    list->text = NULL;
    list->count = 0;
}

/* What checker_model's input points at for a loss: only whether there is one is known before
 * the matrices are built (the configuration); the built input points at the real target. */
static const double loss_given = 0.0;

attention_input checker_model(const checker *c) {
    return (attention_input){ .target = c->loss ? &loss_given : NULL,
        .d_model = c->d_model, .heads = c->heads, .mask = c->mask,
        .positional = c->positional, .scale = c->scale, .rope = c->rope,
        .rope_base = c->rope_base, .alibi = c->alibi, .window = c->window,
        .kv_heads = c->kv_heads, .online_softmax = c->online_softmax, .tile = c->tile,
        .decode = c->decode, .norm = c->norm, .norm_post = c->norm_post,
        .norm_eps = c->norm_eps, .residual = c->residual,
        .dropout = c->dropout, .dropout_p = c->dropout_p, .dropout_seed = c->dropout_seed,
        .contributions = c->contributions };
}

/* The loss's target, one row per token: as written (rows, a file) or by token. */
static bool build_target(checker *c, lesson *l) {
    if (!c->loss) return true;
    size_t d = (size_t)c->d_model;
    l->target = malloc((size_t)l->n_tokens * d * sizeof *l->target);
    if (!l->target) return false;
    if (c->target.form != FORM_TOKENS) {
        fill_matrix(c, &c->target, l->n_tokens, c->d_model, l->target);
        return true;
    }
    l->target_by_token = true;
    for (int i = 0; i < l->n_tokens; i++)
        checker_read_vector(c, checker_target_row(c, &c->target, l->tokens[i]), c->d_model, "",
                            NULL, l->target + (size_t)i * d);
    return true;
}

/* Fills input's sizes and flags (the pointers come with the storage). */
static void describe_input(const checker *c, lesson *l) {
    bool cross = l->source != NULL;
    l->input = checker_model(c);
    l->input.n_tokens = l->n_tokens;
    l->input.tokens = (const char *const *)l->tokens;
    l->input.n_source = cross ? l->n_source : l->n_tokens;
    l->input.source = cross ? (const char *const *)l->source : NULL;
}

/* "1.5 GiB", "256 KiB": the largest binary unit the amount reaches, one decimal unless whole. */
static void format_bytes(size_t bytes, char *out, size_t size) {
    static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    double amount = (double)bytes;
    int unit = 0;
    while (amount >= 1024 && unit < 4) amount /= 1024, unit++;
    snprintf(out, size, amount == (double)(long long)amount ? "%.0f %s" : "%.1f %s", amount,
             units[unit]);
}

/* Everything loading the lesson and computing its trace allocate: the trace, and the lesson's
 * own matrices (the distinct embeddings and their rows per token, the four weights, the
 * mask), counted before any of them is allocated or drawn. */
static size_t bytes_needed(const checker *c, const lesson *l) {
    size_t d = (size_t)c->d_model, n = (size_t)l->n_tokens;
    size_t m = l->source ? (size_t)l->n_source : n;
    size_t doubles = ((size_t)c->n_distinct + n + (l->source ? m : 0)) * d + 4 * d * d
                   + 6 * d   /* the biases and the norm's gain and bias, at most d each */
                   + (c->loss ? n * d : 0);
    size_t own = doubles * sizeof(double) + (c->mask != MASK_NONE ? n * m : 0);
    size_t computed = trace_bytes_needed(&l->input);
    return computed > SIZE_MAX - own ? SIZE_MAX : computed + own;
}

lesson_status checker_build(checker *c, int root, lesson *l) {
    if (c->d_model < 1 || c->heads < 1) {
        /* Every way to get here should have been reported; never build from unknown sizes. */
        REPORT(c, root, NEEDS_D_MODEL, NULL);
        return LESSON_INVALID;
    }
    if (!c->tokens.valid || (c->keys[TOP_SOURCE] >= 0 && !c->source.valid) || !c->distinct_of) {
        REPORT(c, root, NO_MEMORY, NULL);  /* the only way to an unusable list without a report */
        return LESSON_INVALID;
    }
    take_tokens(&c->tokens, &l->tokens, &l->n_tokens);
    if (c->keys[TOP_SOURCE] >= 0) take_tokens(&c->source, &l->source, &l->n_source);
    describe_input(c, l);
    size_t bytes = l->bytes = bytes_needed(c, l);
    if (bytes > c->max_bytes) {
        char need[32], limit[32], amount[80];
        format_bytes(bytes, need, sizeof need);
        format_bytes(c->max_bytes, limit, sizeof limit);
        snprintf(amount, sizeof amount, "%s; the limit is %s", need, limit);
        REPORT(c, root, TRACE_TOO_LARGE, amount);
        return LESSON_INVALID;
    }
    bool ok = c->structure_only
              || (build_embeddings(c, l) && build_mask(c, l) && build_target(c, l));
    /* every parameter of the core's table, in its shape; an optional one (a bias) only when
     * given; the quick check of the picker (structure_only) makes no weight matrix */
    for (int p = 0; ok && p < PARAM_COUNT; p++) {
        const param_info *info = param_get((param_id)p);
        if (info->optional ? !checker_param_given(c, (param_id)p) : c->structure_only) continue;
        int rows = trace_input_axis_length(&l->input, info->rows),
            cols = trace_input_axis_length(&l->input, info->cols);
        l->params[p] = malloc((size_t)rows * (size_t)cols * sizeof *l->params[p]);
        ok = l->params[p] != NULL;
        if (ok) fill_matrix(c, &c->params[p], rows, cols, l->params[p]);
    }
    if (!ok) {
        REPORT(c, root, NO_MEMORY, NULL);
        return LESSON_INVALID;
    }
    l->title = strdup(lesson_node_text(c->t, c->keys[TOP_TITLE]));
    l->title_at = (lesson_place){ checker_node(c, c->keys[TOP_TITLE])->line,
                                  checker_node(c, c->keys[TOP_TITLE])->col };
    if (c->keys[TOP_ABOUT] >= 0) {
        l->about = strdup(lesson_node_text(c->t, c->keys[TOP_ABOUT]));
        checker_read_written(c, c->keys[TOP_ABOUT], &l->about_written);
    }
    l->steps = c->steps;
    l->n_steps = c->n_steps;
    c->steps = NULL;
    c->n_steps = 0;
    /* Out of memory here, the lesson still loads; only following its data files is lost. */
    if (c->n_data_files > 0 && (l->data_files = malloc((size_t)c->n_data_files
                                                       * sizeof *l->data_files)) != NULL) {
        memcpy(l->data_files, c->data_files, (size_t)c->n_data_files * sizeof *l->data_files);
        l->n_data_files = c->n_data_files;
        c->n_data_files = 0;
    }
    describe_input(c, l);
    l->input.embeddings = l->embeddings;
    l->input.source_embeddings = l->source_embeddings;
    for (int p = 0; p < PARAM_COUNT; p++)
        l->input.params[p] = l->params[p];
    l->input.mask_cells = c->mask == MASK_EXPLICIT ? l->mask_cells : NULL;
    l->input.target = l->target;
    l->train = c->train;
    return LESSON_OK;
}
