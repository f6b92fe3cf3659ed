/* registry_names: prints the name of every strategy in the registry, one a
 * line, in registry order, for registry_check.cmake; fails (exit 1) when the
 * registry contradicts itself: an entry missing, out of place (its id is not
 * its index), not found by its own name, a name twice, or an entry without
 * a summary or label. */
#include <stdio.h>
#include <string.h>

#include "ulysim.h"

int main(void)
{
    int bad = 0;
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (!s || !s->name || !s->name[0]) {
            fprintf(stderr, "registry_names: entry %d has no strategy or no name\n", i);
            bad = 1;
            continue;
        }
        if ((int)s->id != i) {
            fprintf(stderr, "registry_names: entry %d (%s) has id %d\n", i, s->name, (int)s->id);
            bad = 1;
        }
        if (uly_strategy_find(s->name) != s) {
            fprintf(stderr, "registry_names: '%s' is not found by its name\n", s->name);
            bad = 1;
        }
        for (int j = 0; j < i; j++) {
            const uly_strategy *o = uly_strategy_get((uly_strategy_id)j);
            if (o && o->name && strcmp(o->name, s->name) == 0) {
                fprintf(stderr, "registry_names: '%s' is entries %d and %d\n", s->name, j, i);
                bad = 1;
            }
        }
        if (!s->summary || !s->summary[0] || !s->label || !s->label[0] || !s->label_short || !s->label_short[0]) {
            fprintf(stderr, "registry_names: '%s' lacks a summary, label or short label\n", s->name);
            bad = 1;
        }
        printf("%s\n", s->name);
    }
    if (uly_strategy_get(ULY_STRAT_COUNT) != NULL) {
        fprintf(stderr, "registry_names: an entry past ULY_STRAT_COUNT\n");
        bad = 1;
    }
    return bad;
}
