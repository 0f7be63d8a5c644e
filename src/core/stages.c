/* The node and parameter tables' entries, looked up by id or by name, and the functions each
 * row names. */
#include <assert.h>
#include <string.h>
#include "stage_functions.h"

static const stage_info stages[STAGE_COUNT] = {
#define STAGE_ENTRY(id, name, family, presence, per_head, rows, cols, storage, flags, inputs, \
                    of, beside, read, forward, backward, explain, cost, formula) \
    { name, family, presence, per_head, rows, cols, storage, flags, inputs, of, beside },
    STAGE_TABLE(STAGE_ENTRY)
#undef STAGE_ENTRY
};

static const stage_functions functions[STAGE_COUNT] = {
#define STAGE_FUNCTIONS(id, name, family, presence, per_head, rows, cols, storage, flags, \
                        inputs, of, beside, read, forward, backward, explain, cost, formula) \
    { read, forward, backward, explain, cost, formula },
    STAGE_TABLE(STAGE_FUNCTIONS)
#undef STAGE_FUNCTIONS
};

static const param_info params[PARAM_COUNT] = {
#define PARAM_ENTRY(id, name, rows, cols, optional) { name, rows, cols, optional },
    PARAM_TABLE(PARAM_ENTRY)
#undef PARAM_ENTRY
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

const param_info *param_get(param_id param)
{
    assert(param < PARAM_COUNT);
    return &params[param];
}

stage_id stage_find(const char *name)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (strcmp(stages[s].name, name) == 0)
            return (stage_id)s;
    return STAGE_COUNT;
}

const char *stage_presence_key(stage_presence presence)
{
    static const char *const keys[] = {
        [PRESENT_ALWAYS] = NULL, [PRESENT_WITH_SOURCE] = "source",
        [PRESENT_WITH_ROPE] = "positional: rope", [PRESENT_WITH_ALIBI] = "bias: alibi",
        [PRESENT_WITH_ONLINE] = "softmax: online", [PRESENT_WITH_LOSS] = "loss",
        [PRESENT_WITH_PRE_NORM] = "norm", [PRESENT_WITH_POST_NORM] = "norm: {place: post}",
        [PRESENT_WITH_RESIDUAL] = "residual: true", [PRESENT_WITH_DROPOUT] = "dropout",
        [PRESENT_WITH_CONTRIBUTIONS] = "contributions: true",
    };
    assert((size_t)presence < sizeof keys / sizeof keys[0]);
    return keys[presence];
}

const char *stage_data_name(data_id data)
{
    static const char *const names[DATA_COUNT] = {
        [DATA_EMBEDDINGS] = "embeddings", [DATA_SOURCE_EMBEDDINGS] = "source embeddings",
        [DATA_POSITIONAL] = "positional encoding",
        [DATA_POSITIONS] = "positions", [DATA_SLOPES] = "ALiBi slopes", [DATA_MASK] = "mask",
        [DATA_TILE] = "tile", [DATA_TARGET] = "target", [DATA_DROPOUT] = "dropout mask",
    };
    assert(data < DATA_COUNT);
    return names[data];
}

bool stage_reads(stage_id stage, read_kind kind, int id)
{
    const stage_input *in = stage_get(stage)->inputs;
    bool node = kind == READ_NODE;  /* a node is read one head at a time or every head */
    for (int i = 0; i < STAGE_MAX_INPUTS && in[i].kind != READ_NONE; i++)
        if ((in[i].kind == kind || (node && in[i].kind == READ_EVERY_HEAD))
            && (in[i].id == id
                || (node && (in[i].instead == id || (in[i].otherwise > 0 && in[i].otherwise == id)))))
            return true;
    return false;
}

stage_id stage_gradient(read_kind kind, int id)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (stages[s].of.kind == kind && stages[s].of.id == id)
            return (stage_id)s;
    return STAGE_COUNT;
}

stage_id stage_pair(stage_id stage)
{
    if (stage_get(stage)->beside >= 0)
        return (stage_id)stage_get(stage)->beside;
    for (int s = 0; s < STAGE_COUNT; s++)
        if (stages[s].beside == (int)stage)
            return (stage_id)s;
    return STAGE_COUNT;
}

stage_id stage_param_reader(param_id param)
{
    for (int s = 0; s < STAGE_COUNT; s++)   /* the projection, not what else reads W_O */
        if (stages[s].family != FAMILY_CONTRIBUTION && stage_reads((stage_id)s, READ_PARAM, (int)param))
            return (stage_id)s;
    return STAGE_COUNT;
}

param_id trace_stage_param_input(stage_id stage, int index)
{
    const stage_input *in = stage_get(stage)->inputs;
    for (int i = 0; i < STAGE_MAX_INPUTS && in[i].kind != READ_NONE; i++)
        if (in[i].kind == READ_PARAM && index-- == 0)
            return (param_id)in[i].id;
    return PARAM_COUNT;
}
