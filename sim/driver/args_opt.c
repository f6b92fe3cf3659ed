/* args_opt.c: reading the options of the subcommands that parse their own
 * command line (validate, validate --runs, calibrate, trace, runs), one way
 * for all of them: `NAME VALUE` and `NAME=VALUE` alike, a single-valued
 * option given once, a switch given no value. The planning commands' flags
 * are args.c's sim_args_parse. */
#include "args.h"

#include <string.h>

/* 1 when a is NAME or NAME=..., the rest after NAME in *rest ("" or "=..."). */
static int arg_is_option(const char *a, const char *name, const char **rest)
{
    const size_t l = strlen(name);
    if (strncmp(a, name, l) || (a[l] && a[l] != '=')) return 0;
    *rest = a + l;
    return 1;
}

int sim_opt_value(const char *who, int argc, char **argv, int *i, const char *const *names, const char **seen,
                  const char **v)
{
    const char *rest;
    for (int k = 0; names[k]; k++) {
        if (!arg_is_option(argv[*i], names[k], &rest)) continue;
        if (*rest == '=') *v = rest + 1; /* NAME=: an empty value, the option's own check says what it wants */
        else if (*i + 1 < argc) *v = argv[++*i];
        else {
            sim_err_as(who, "%s needs a value (see %s --help)", names[k], who);
            return -1;
        }
        if (seen && *seen) { /* the last would win in silence */
            char q1[80], q2[80];
            sim_err_as(who, "%s given twice (%s, then %s; valid: one value)", names[0], text_quote(*seen, q1, sizeof q1),
                       text_quote(*v, q2, sizeof q2));
            return -1;
        }
        if (seen) *seen = *v;
        return 1;
    }
    return 0;
}

int sim_opt_switch(const char *who, const char *a, const char *name)
{
    const char *rest;
    if (!arg_is_option(a, name, &rest)) return 0;
    if (!*rest) return 1;
    char qb[80];
    sim_err_as(who, "%s takes no value (got %s; valid: %s alone)", name, text_quote(rest + 1, qb, sizeof qb), name);
    return -1;
}

int sim_opt_help(const char *who, const char *a)
{
    const int r = sim_opt_switch(who, a, "--help");
    return r ? r : sim_opt_switch(who, a, "-h");
}
