/* --json: every intermediate of the trace, with numbers printed to read back bit-exact. */
#include <math.h>
#include "output.h"
#include "text.h"

/* A JSON string that reads back to the same text: quotes and backslashes escaped, and every
 * character of the one control set (text_is_control: C0, DEL, C1, bidi controls, zero-width
 * and format characters) and every tag character written as a \u escape, a surrogate pair
 * above U+FFFF (text_json_escape). Other characters, emoji and CJK Extension B among them, are
 * written as their UTF-8. The loader lets only UTF-8 through; a byte that is not (none should
 * reach here) is written as U+FFFD, so the document stays valid JSON. */
static void put_string(output *o, const char *utf8)
{
    output_putc(o, '"');
    while (*utf8) {
        unsigned c;
        int bytes = text_decode(utf8, &c);
        if (bytes == 0)
            output_puts(o, "\\ufffd");
        else if (c == '"' || c == '\\')
            output_printf(o, "\\%c", (char)c);
        else if (text_is_control(c) || text_is_tag(c)) {
            char piece[16];
            text_json_escape(c, piece, sizeof piece);
            output_puts(o, piece);
        }
        else
            output_printf(o, "%.*s", bytes, utf8);
        utf8 += bytes ? bytes : 1;
    }
    output_putc(o, '"');
}

static void put_labels(output *o, const char *key, stage_axis axis, int count)
{
    char buffer[32];
    output_printf(o, "\"%s\": [", key);
    for (int i = 0; i < count; i++) {
        output_puts(o, i ? ", " : "");
        put_string(o, trace_axis_label(o->trace, axis, i, buffer, sizeof buffer));
    }
    output_puts(o, "]");
}

/* The configuration that changes what the stages are, where the lesson sets it: how positions
 * enter, ALiBi, the sliding window, the key/value heads, the norm and the residual. */
static void put_options(output *o, const attention_input *in)
{
    positional_kind positional = trace_positional_kind(in);
    if (positional != POSITIONAL_NONE)
        output_printf(o, "  \"positional\": \"%s\",\n", trace_positional_word(positional));
    if (in->rope) {
        output_puts(o, "  \"rope_base\": ");
        output_number(o, in->rope_base, NUMBER_EXACT);
        output_puts(o, ",\n");
    }
    if (in->alibi)
        output_puts(o, "  \"bias\": \"alibi\",\n");
    if (in->mask == MASK_WINDOW)
        output_printf(o, "  \"window\": %d,\n", in->window);
    if (in->kv_heads > 0)
        output_printf(o, "  \"kv_heads\": %d,\n", in->kv_heads);
    if (in->online_softmax)
        output_printf(o, "  \"softmax\": \"online\",\n  \"tile\": %d,\n", in->tile);
    if (in->decode)
        output_puts(o, "  \"decode\": true,\n");
    if (in->norm != NORM_NONE) {
        output_printf(o, "  \"norm\": {\"kind\": \"%s\", \"place\": \"%s\", \"eps\": ",
                      in->norm == NORM_RMS ? "rms" : "layer", in->norm_post ? "post" : "pre");
        output_number(o, in->norm_eps, NUMBER_EXACT);
        output_puts(o, "},\n");
    }
    if (in->residual)
        output_puts(o, "  \"residual\": true,\n");
    if (in->dropout) {
        output_puts(o, "  \"dropout\": {\"p\": ");
        output_number(o, in->dropout_p, NUMBER_EXACT);
        output_printf(o, ", \"seed\": %llu},\n", (unsigned long long)in->dropout_seed);
    }
    if (in->contributions)
        output_puts(o, "  \"contributions\": true,\n");
}

/* The biases the lesson gives, each a list of one number per column of its stage: "biases":
 * {"b_Q": [...], "b_O": [...]}; nothing without any. */
static void put_biases(output *o)
{
    const trace *t = o->trace;
    bool any = false;
    for (int p = 0; p < PARAM_COUNT; p++) {
        const param_info *info = param_get((param_id)p);
        const double *bias = trace_param(t, (param_id)p);
        if (info->rows != AXIS_ONE || !bias)   /* the one-row parameters: the biases */
            continue;
        output_printf(o, "%s\"%s\": [", any ? ", " : "  \"biases\": {", info->name);
        any = true;
        for (int c = 0; c < trace_axis_length(t, info->cols); c++) {
            output_puts(o, c ? ", " : "");
            output_number(o, bias[c], NUMBER_EXACT);
        }
        output_puts(o, "]");
    }
    if (any)
        output_puts(o, "},\n");
}

/* With the online softmax: how far its weights and context are from the ordinary softmax's. */
static void put_online_difference(output *o)
{
    if (!o->trace->in->online_softmax)
        return;
    double difference = trace_online_difference(o->trace);
    if (difference < 0) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    output_puts(o, "  \"online_difference\": ");
    output_number(o, difference, NUMBER_EXACT);
    output_puts(o, ",\n");
}

/* A matrix of rows × cols as a JSON list of rows. */
static void put_matrix(output *o, const double *values, int rows, int cols)
{
    output_puts(o, "[");
    for (int r = 0; r < rows; r++) {
        output_puts(o, r ? ", [" : "[");
        for (int c = 0; c < cols; c++) {
            output_puts(o, c ? ", " : "");
            output_number(o, values[(size_t)r * (size_t)cols + (size_t)c], NUMBER_EXACT);
        }
        output_puts(o, "]");
    }
    output_puts(o, "]");
}

/* A set of parameters as JSON's {"W_Q": [[…]], …}: those of `params` that are not NULL. */
static void put_params(output *o, const double *const *params)
{
    const trace *t = o->trace;
    output_puts(o, "{");
    for (int p = 0, any = 0; p < PARAM_COUNT; p++) {
        const param_info *info = param_get((param_id)p);
        if (!params[p])
            continue;
        output_printf(o, "%s\"%s\": ", any++ ? ", " : "", info->name);
        put_matrix(o, params[p], trace_axis_length(t, info->rows),
                   trace_axis_length(t, info->cols));
    }
    output_puts(o, "}");
}

/* With a loss: its value, its target and the parameters the gradients are taken at, so that
 * a reader can repeat the backward pass ("loss": L, "target": [[…]], "params": {"W_Q": …}). */
static void put_loss(output *o)
{
    const trace *t = o->trace;
    if (!t->in->target)
        return;
    output_puts(o, "  \"loss\": ");
    output_number(o, trace_loss(t), NUMBER_EXACT);
    output_puts(o, ",\n  \"target\": ");
    put_matrix(o, t->in->target, t->n, t->d_model);
    output_puts(o, ",\n  \"params\": ");
    put_params(o, t->in->params);
    output_puts(o, ",\n");
}

/* With train: its rate, the loss at every step and the parameters after the last
 * ("learning_rate": η, "training": [{"step": k, "loss": L_k}, …], "trained": {"W_Q": …}), trained by the core (train.h). The lesson was
 * trained once already when it was loaded, so a failure here is out of memory. */
static void put_training(output *o)
{
    const trace *t = o->trace;
    const train_config *config = &o->lesson->train;
    if (!train_active(t->in, config))
        return;
    train_run run;
    if (train_compute(t->in, config, config->steps, NULL, &run, NULL) != TRACE_OK) {
        output_fail(o, EXIT_STATUS_SOFTWARE);
        return;
    }
    output_puts(o, "  \"learning_rate\": ");
    output_number(o, config->learning_rate, NUMBER_EXACT);
    output_puts(o, ",\n  \"training\": [");
    for (int k = 0; k <= run.steps; k++) {
        output_printf(o, "%s\n    {\"step\": %d, \"loss\": ", k ? "," : "", k);
        output_number(o, run.loss[k], NUMBER_EXACT);
        output_puts(o, "}");
    }
    output_puts(o, "\n  ],\n  \"trained\": ");
    put_params(o, (const double *const *)run.params);
    output_puts(o, ",\n");
    train_free(&run);
}

static void json_begin(output *o)
{
    const trace *t = o->trace;
    output_puts(o, "{\n  \"title\": ");
    put_string(o, o->lesson->title);
    output_puts(o, ",\n  ");
    put_labels(o, "tokens", AXIS_TOKENS, t->n);
    if (t->in->source) {
        output_puts(o, ",\n  ");
        put_labels(o, "source", AXIS_SOURCE, t->m);
    }
    output_printf(o, ",\n  \"d_model\": %d,\n  \"heads\": %d,\n  \"d_k\": %d,\n",
                  t->d_model, t->heads, t->d_k);
    put_options(o, t->in);
    put_biases(o);
    put_online_difference(o);
    put_loss(o);
    put_training(o);
    output_puts(o, "  \"stages\": [");
}

/* NUMBER_EXACT reads back to the same double; -inf (hidden cells of masked) has no JSON
 * number. */
static void put_number(output *o, double x)
{
    if (isfinite(x))
        output_number(o, x, NUMBER_EXACT);
    else
        output_puts(o, "null");
}

static void json_step(output *o, const walk_step *step)
{
    const trace *t = o->trace;
    const stage_info *info = stage_get(step->stage);
    int rows = trace_rows(t, step->stage), cols = trace_cols(t, step->stage);
    output_printf(o, "%s\n    {\"name\": \"%s\", \"head\": ", o->step ? "," : "", info->name);
    if (info->per_head)
        output_printf(o, "%d", step->head);
    else
        output_puts(o, "null");
    output_puts(o, ",\n     ");
    put_labels(o, "rows", info->rows, rows);
    output_puts(o, ",\n     ");
    put_labels(o, "cols", info->cols, cols);
    output_puts(o, ",\n     \"values\": [");
    for (int r = 0; r < rows; r++) {
        output_puts(o, r ? ",\n       [" : "[");
        for (int c = 0; c < cols; c++) {
            output_puts(o, c ? ", " : "");
            put_number(o, trace_value(t, step->stage, step->head, r, c));
        }
        output_puts(o, "]");
    }
    output_puts(o, "]}");
}

static void json_end(output *o)
{
    output_puts(o, "\n  ]\n}\n");
}

/* Not narrated: one entry per stage and head, as the JSON document has always had. */
const output_format output_json = { json_begin, json_step, json_end, false };
