/* registry.c: the strategies, one file each in this folder, by id
 * (uly_strategy_get) and by name (uly_strategy_find). Adding a strategy: its
 * file here, its id in ulysim.h's uly_strategy_id, and one line below. */
#include <string.h>

#include "ulysim.h"

extern const uly_strategy uly_strategy_ulysses;
extern const uly_strategy uly_strategy_ring;
extern const uly_strategy uly_strategy_rsa;
extern const uly_strategy uly_strategy_allgather_cp;
extern const uly_strategy uly_strategy_megatron_sp;
extern const uly_strategy uly_strategy_usp;
extern const uly_strategy uly_strategy_megatron_tp;

static const uly_strategy *const registry[ULY_STRAT_COUNT] = {
    [ULY_STRAT_ULYSSES] = &uly_strategy_ulysses,
    [ULY_STRAT_RING] = &uly_strategy_ring,
    [ULY_STRAT_RSA] = &uly_strategy_rsa,
    [ULY_STRAT_ALLGATHER_CP] = &uly_strategy_allgather_cp,
    [ULY_STRAT_MEGATRON_SP] = &uly_strategy_megatron_sp,
    [ULY_STRAT_USP] = &uly_strategy_usp,
    [ULY_STRAT_MEGATRON_TP] = &uly_strategy_megatron_tp,
};

const uly_strategy *uly_strategy_get(uly_strategy_id id)
{
    if ((int)id < 0 || id >= ULY_STRAT_COUNT) return NULL;
    return registry[id];
}

const uly_strategy *uly_strategy_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < ULY_STRAT_COUNT; i++)
        if (registry[i] && strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}
