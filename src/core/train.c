/* Training: gradient descent on the lesson's parameters through the one forward runner, whose
 * gradient rows are the backward pass. No I/O, no globals. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"

/* Whether parameter p moves: named by config and given by the input. */
static bool trained(const attention_input *in, const train_config *config, param_id p)
{
    return config->trains[p] && in->params[p] != NULL;
}

bool train_active(const attention_input *in, const train_config *config)
{
    bool any = false;
    for (int p = 0; p < PARAM_COUNT; p++)
        any = any || trained(in, config, (param_id)p);
    return config->steps > 0 && in->target && any;
}

void train_free(train_run *run)
{
    free(run->loss);
    for (int p = 0; p < PARAM_COUNT; p++)
        free(run->params[p]);
    memset(run, 0, sizeof *run);
}

/* Cells of parameter p in the trace t would make. */
static size_t param_cells(const attention_input *in, param_id p)
{
    const param_info *info = param_get(p);
    return (size_t)trace_input_axis_length(in, info->rows)
         * (size_t)trace_input_axis_length(in, info->cols);
}

/* out->input becomes in with a private copy of every trained parameter in its place. */
static bool copy_params(const attention_input *in, const train_config *config, train_run *out)
{
    out->input = *in;
    for (int p = 0; p < PARAM_COUNT; p++) {
        if (!trained(in, config, (param_id)p))
            continue;
        size_t bytes = param_cells(in, (param_id)p) * sizeof(double);
        if (!(out->params[p] = malloc(bytes > 0 ? bytes : 1)))
            return false;
        memcpy(out->params[p], in->params[p], bytes);
        out->input.params[p] = out->params[p];
    }
    return true;
}

/* One update, W ← W − η · d_W, of every trained parameter, from the gradients t holds. */
static void descend(const trace *t, const train_config *config, train_run *run)
{
    for (int p = 0; p < PARAM_COUNT; p++) {
        if (!run->params[p])
            continue;
        const double *gradient = trace_block(t, stage_gradient(READ_PARAM, p), 1);
        size_t cells = param_cells(t->in, (param_id)p);
        for (size_t i = 0; i < cells; i++)
            run->params[p][i] -= config->learning_rate * gradient[i];
    }
}

/* The first stage that reads a trained parameter: where each step's pass begins. */
static stage_id first_trained_reader(const trace *t, const train_run *run)
{
    stage_id first = STAGE_COUNT;
    for (int p = 0; p < PARAM_COUNT; p++) {
        stage_id reader = run->params[p] ? trace_first_reader(t, READ_PARAM, p) : STAGE_COUNT;
        first = reader < first ? reader : first;
    }
    return first;
}

trace_status train_compute(const attention_input *in, const train_config *config, int steps,
                           const trace_options *options, train_run *out, trace_failure *failure)
{
    assert(in->target && steps >= 0 && steps <= config->steps);
    memset(out, 0, sizeof *out);
    trace t;
    trace_status status = TRACE_ERROR_NO_MEMORY;
    out->loss = malloc(((size_t)steps + 1) * sizeof *out->loss);
    if (!out->loss || !copy_params(in, config, out)
        || (status = trace_compute(&out->input, options, &t, failure)) != TRACE_OK) {
        if (status == TRACE_ERROR_NO_MEMORY && failure)
            *failure = (trace_failure){ status, STAGE_COUNT, -1, -1, -1, 0 };
        train_free(out);
        return status;
    }
    stage_id from = first_trained_reader(&t, out);
    out->loss[0] = trace_loss(&t);
    for (int k = 1; k <= steps && status == TRACE_OK; k++) {
        descend(&t, config, out);
        status = trace_recompute(&t, from, options, failure);
        out->loss[k] = trace_loss(&t);
        out->steps = k;
    }
    trace_free(&t);
    if (status != TRACE_OK)
        train_free(out);
    return status;
}

void train_cache_free(train_cache *cache)
{
    if (cache->step > 0) {
        trace_free(&cache->trace);
        train_free(&cache->run);
    }
    cache->step = 0;
}

const trace *train_cache_at(train_cache *cache, const trace *t, const train_config *config,
                            int k, const trace_options *options, trace_failure *failure)
{
    if (k == 0)
        return t;
    if (cache->step == k)
        return &cache->trace;
    train_cache_free(cache);
    if (train_compute(t->in, config, k, options, &cache->run, failure) != TRACE_OK)
        return NULL;
    if (trace_compute(&cache->run.input, options, &cache->trace, failure) != TRACE_OK) {
        train_free(&cache->run);
        return NULL;
    }
    cache->step = k;
    return &cache->trace;
}
