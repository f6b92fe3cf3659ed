/* cmd_presets.c: `ulysim presets`: the model and cluster presets with their
 * description and source. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "output.h"
#include "par.h"
#include "preset.h"

typedef struct list_ctx {
    sim_table *t;
    const char *kind;
    cJSON *arr;
    int bad;
} list_ctx;

static void add(const char *name, const char *description, const char *source, void *vctx)
{
    list_ctx *x = vctx;
    if (x->arr) {
        cJSON *o = cJSON_CreateObject();
        x->bad |= sim_json_add(o, "name", cJSON_CreateString(name ? name : ""));
        x->bad |= sim_json_add(o, "description", cJSON_CreateString(description ? description : ""));
        x->bad |= sim_json_add(o, "source", cJSON_CreateString(source ? source : ""));
        x->bad |= sim_json_add(x->arr, NULL, o);
        return;
    }
    sim_table_row(x->t);
    sim_table_cell(x->t, "%s", x->kind);
    sim_table_cell(x->t, "%s", name ? name : "");
    sim_table_cell(x->t, "%s", description ? description : "");
    sim_table_cell(x->t, "%s", source ? source : "");
}

/* `presets show NAME`: the preset's file as it is, every field with its
 * source, for a user to copy and edit. */
static int show(const char *name)
{
    char path[1024], why[2048] = "";
    const char *kind = NULL;
    /* a preset's file, by its name: any other file the user has already
     * (shown unread, /etc/passwd was printed as if a preset) */
    if (preset_is_path(name)) {
        sim_err("presets show %s: a file, not a preset's name (valid: a name from 'ulysim presets'; --model FILE and "
                "--cluster FILE read a file of the same schema)", name);
        return SIM_EXIT_USAGE;
    }
    if (preset_path(name, path, sizeof path, &kind, why, sizeof why) != 0) {
        sim_err("presets show %s", why);
        return SIM_EXIT_USAGE;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_err("presets show %s: cannot read %s", name, path);
        return SIM_EXIT_INTERNAL;
    }
    char buf[8192];
    size_t got;
    int wbad = 0;
    while (!wbad && (got = fread(buf, 1, sizeof buf, f)) > 0) wbad = fwrite(buf, 1, got, stdout) != got;
    const int werr = errno, rbad = !wbad && ferror(f);
    fclose(f);
    if (rbad) {
        sim_err("presets show %s: cannot read %s", name, path);
        return SIM_EXIT_INTERNAL;
    }
    /* a write failure is main.c's to report, once, as for every command
     * (stdout's error flag stays set): one line, not one here and one there */
    errno = werr;
    return wbad ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

/* The presets directory cannot be listed: bad input when the user named it
 * (ULYSIM_PRESETS), an internal failure when it is the built-in one. */
static int unreadable(const char *kind)
{
    const char *env = getenv("ULYSIM_PRESETS");
    if (env && env[0]) {
        sim_err("ULYSIM_PRESETS=%s: cannot read the %s presets there (valid: a directory holding models/ and clusters/, "
                "such as the source tree's sim/presets)", env, kind);
        return SIM_EXIT_USAGE;
    }
    sim_err("cannot read the %s presets in %s (set ULYSIM_PRESETS to the presets directory)", kind, preset_dir());
    return SIM_EXIT_INTERNAL;
}

int sim_cmd_presets(const sim_args *a)
{
    if (sim_par_rank() != 0) return SIM_EXIT_OK;
    if (a->presets_show) return show(a->show_name);
    static const char *const kinds[] = {"models", "clusters"};
    static const char *const kind1[] = {"model", "cluster"};
    if (a->format == SIM_FMT_JSON) {
        int bad = 0;
        cJSON *root = cJSON_CreateObject();
        bad |= sim_json_add(root, "command", cJSON_CreateString("presets"));
        bad |= sim_json_add(root, "dir", cJSON_CreateString(preset_dir()));
        for (int k = 0; k < 2; k++) {
            list_ctx x = {NULL, kind1[k], cJSON_CreateArray(), 0};
            if (preset_list(kinds[k], add, &x) < 0) {
                cJSON_Delete(x.arr);
                cJSON_Delete(root);
                return unreadable(kind1[k]);
            }
            bad |= x.bad;
            bad |= sim_json_add(root, kinds[k], x.arr);
        }
        if (bad) {
            cJSON_Delete(root);
            sim_err("out of memory building the JSON output");
            return SIM_EXIT_INTERNAL;
        }
        return sim_json_print(root, stdout) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
    }
    static const char *const names[] = {"kind", "name", "description", "source"};
    sim_table t;
    sim_table_init(&t, 4, names, "llll");
    for (int k = 0; k < 2; k++) {
        list_ctx x = {&t, kind1[k], NULL, 0};
        if (preset_list(kinds[k], add, &x) < 0) {
            sim_table_free(&t);
            return unreadable(kind1[k]);
        }
    }
    int bad;
    if (a->format == SIM_FMT_CSV) {
        bad = sim_table_print_csv(&t, stdout);
    } else {
        printf("# ulysim %s presets from %s (--model NAME, --cluster NAME; or a FILE.json of the same schema)\n",
               ULY_VERSION, preset_dir());
        /* descriptions have spaces: one preset per line, the description and source after the name */
        bad = 0;
        for (int r = 0; r < t.rows; r++) {
            const char *const *row = (const char *const *)&t.cells[(size_t)r * 4];
            printf("%-8s %-16s %s\n", row[0] ? row[0] : "", row[1] ? row[1] : "", row[2] ? row[2] : "");
            if (row[3] && row[3][0]) printf("%-8s %-16s   source: %s\n", "", "", row[3]);
        }
        bad = ferror(stdout) ? 1 : 0;
        bad |= t.oom;
    }
    sim_table_free(&t);
    return bad ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}
