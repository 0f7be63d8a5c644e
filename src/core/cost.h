/* What each stage of a trace costs: its arithmetic counted by its node-table row's cost operation,
 * and its computation run alone into scratch memory so that --stats can time it. */
#ifndef ATTNSTEP_COST_H
#define ATTNSTEP_COST_H

#include <stddef.h>
#include "trace.h"

/* The work and memory of one stage, over all its heads. A dot product of k terms counts k
 * multiplications and k − 1 additions (a subtraction counts as an addition). */
typedef struct {
    unsigned long long multiplications;
    unsigned long long additions;
    unsigned long long divisions;
    unsigned long long exponentials;
    size_t bytes;  /* what the trace stores for it; the positional table counts with the first
                      stage (the one that adds it), the window's visible cells with masked;
                      otherwise 0 for stages derived when read */
} cost_counts;

/* The counts of a stage the trace has. Over every stage they add up to trace_bytes_needed. */
void cost_stage(const trace *t, stage_id stage, cost_counts *counts);

/* The longest sentence cost_stage_at counts: the lessons' own limit of tokens. */
#define COST_LONGEST 4096

/* Whether t's layer can be counted over a sentence of n tokens: n from 1 to COST_LONGEST and,
 * at another n than t->n, self-attention without a mask of its own (a mask's 0/1 cells exist
 * for t->n tokens only; a rule, causal or a window, holds at any length). */
typedef enum { COST_AT_OK, COST_AT_OUT_OF_RANGE, COST_AT_SOURCE, COST_AT_OWN_MASK } cost_at_verdict;
cost_at_verdict cost_at_check(const trace *t, int n);

/* The counts of a stage of t's layer (its configuration, its weights' shapes, its mask's rule)
 * over a sentence of n tokens instead of t->n, for which cost_at_check is COST_AT_OK: what
 * cost_stage would give for the trace of that sentence, counted from shapes alone
 * (trace_shape), so n = 4096 makes no trace. n = t->n gives cost_stage's own. */
void cost_stage_at(const trace *t, int n, stage_id stage, cost_counts *counts);

/* The numbers of parameter p in t (rows × columns of its shape), 0 when the lesson has none:
 * what training would learn of it, as --stats lists them. */
unsigned long long cost_parameter_count(const trace *t, param_id p);

/* Doubles of scratch that cost_run needs: the largest matrix of one stage and head. */
size_t cost_scratch_doubles(const trace *t);

/* Runs a stage's computation once for each of its heads, exactly as trace_compute does, from
 * the trace's own blocks into scratch (cost_scratch_doubles of it); a derived stage is read
 * cell by cell, which is what showing it costs. The trace is not changed. */
void cost_run(const trace *t, const trace_options *options, stage_id stage, double *scratch);

#endif
