/* commands.c: the registry of subcommands with their own arguments. */
#include <string.h>

#include "commands.h"

/* One line per command; its function lives in sim/cmd_NAME.c. */
static const sim_command registry[] = {
    {NULL, NULL, NULL},
};

int sim_command_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const sim_command *sim_command_at(int i) { return i >= 0 && i < sim_command_count() ? &registry[i] : NULL; }

const sim_command *sim_command_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < sim_command_count(); i++)
        if (strcmp(registry[i].name, name) == 0) return &registry[i];
    return NULL;
}
