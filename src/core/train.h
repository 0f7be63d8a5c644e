/* Training, traced: plain gradient descent W ← W − η · d_W on a lesson's parameters, each step
 * the one forward runner (and its backward pass) run again from the first reader of what
 * changed. Pure: plain structs in and out, no I/O. */
#ifndef ATTNSTEP_TRAIN_H
#define ATTNSTEP_TRAIN_H

#include <stdbool.h>
#include "trace.h"

/* The most steps a lesson may train for (each is one forward and backward pass). */
#define TRAIN_MAX_STEPS 100000

/* What a lesson's `train:` asks: how many updates, their rate, and which parameters move (a
 * parameter the input lacks never does; embeddings are not parameters, so they never move). */
typedef struct {
    int steps;                      /* N ≥ 1; 0 means the lesson does not train */
    double learning_rate;           /* η > 0 */
    bool trains[PARAM_COUNT];       /* which parameters gradient descent changes */
} train_config;

/* The run of training up to some step: the loss before each update and after the last, and the
 * input with its trained parameters in place of the lesson's (owned here; its other pointers
 * are the original input's, which must outlive it). */
typedef struct {
    int steps;                      /* updates made */
    double *loss;                   /* (steps + 1) loss[k] after k updates */
    double *params[PARAM_COUNT];    /* the parameters after `steps` updates: owned copies of the
                                       trained ones, NULL for the others */
    attention_input input;          /* in, with params[p] in place where trains[p] */
} train_run;

/* Trains the parameters of `in` that config names for `steps` updates (0 … config->steps),
 * fills out (free with train_free) and returns TRACE_OK; otherwise out is left empty and
 * failure says what failed (an overflow at the step where a number grew too large: the step
 * is not said, the stage and cell are). in must have a target (a loss). */
trace_status train_compute(const attention_input *in, const train_config *config, int steps,
                           const trace_options *options, train_run *out, trace_failure *failure);

void train_free(train_run *run);

/* The trace at a training step, for a view that walks the training axis: t itself at step 0,
 * else the trace at the weights after k updates (train_compute to k, then trace_compute),
 * kept while the view stays at step k. All zero is empty; free with train_cache_free. */
typedef struct {
    int step;          /* the step held; 0: none */
    train_run run;
    trace trace;       /* borrows run's parameters */
} train_cache;

/* The trace at step k (0 … config->steps) of the lesson whose trace at step 0 is t, or NULL
 * when that fails (failure says why; the cache is then empty). */
const trace *train_cache_at(train_cache *cache, const trace *t, const train_config *config,
                            int k, const trace_options *options, trace_failure *failure);
void train_cache_free(train_cache *cache);

/* Whether config trains anything: a step count, and a parameter `in` has among its trains. */
bool train_active(const attention_input *in, const train_config *config);

#endif
