/* The stage table's entries, looked up by id or by name, and the functions each row names. */
#include <assert.h>
#include <string.h>
#include "stage_functions.h"

static const stage_info stages[STAGE_COUNT] = {
#define STAGE_ENTRY(id, name, per_head, rows, cols, storage, read, compute, explain, cost, \
                    formula, inputs) \
    { name, per_head, rows, cols, storage, inputs },
    STAGE_TABLE(STAGE_ENTRY)
#undef STAGE_ENTRY
};

static const stage_functions functions[STAGE_COUNT] = {
#define STAGE_FUNCTIONS(id, name, per_head, rows, cols, storage, read, compute, explain, cost, \
                        formula, inputs) \
    { read, compute, explain, cost, formula },
    STAGE_TABLE(STAGE_FUNCTIONS)
#undef STAGE_FUNCTIONS
};

const stage_info *stage_get(stage_id stage)
{
    assert(stage < STAGE_COUNT);
    return &stages[stage];
}

const stage_functions *stage_functions_get(stage_id stage)
{
    assert(stage < STAGE_COUNT);
    return &functions[stage];
}

stage_id stage_find(const char *name)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (strcmp(stages[s].name, name) == 0)
            return (stage_id)s;
    return STAGE_COUNT;
}
