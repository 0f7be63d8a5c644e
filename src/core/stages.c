/* The stage table's entries, looked up by id or by name. */
#include <string.h>
#include "stages.h"

static const stage_info stages[STAGE_COUNT] = {
#define STAGE_ENTRY(id, name, per_head, rows, cols, formula, inputs) \
    { name, per_head, rows, cols, formula, inputs },
    STAGE_TABLE(STAGE_ENTRY)
#undef STAGE_ENTRY
};

const stage_info *stage_get(stage_id stage)
{
    return &stages[stage];
}

stage_id stage_find(const char *name)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (strcmp(stages[s].name, name) == 0)
            return (stage_id)s;
    return STAGE_COUNT;
}
