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

/* Doubles of scratch that cost_run needs: the largest matrix of one stage and head. */
size_t cost_scratch_doubles(const trace *t);

/* Runs a stage's computation once for each of its heads, exactly as trace_compute does, from
 * the trace's own blocks into scratch (cost_scratch_doubles of it); a derived stage is read
 * cell by cell, which is what showing it costs. The trace is not changed. */
void cost_run(const trace *t, const trace_options *options, stage_id stage, double *scratch);

#endif
