/* ulysim_ext.c: ulysim._ext, the CPython extension under the Python package
 * (stable ABI, Python 3.9 on). Two ways into the C code, no model logic of
 * its own:
 *
 *  run(argv)    runs a ulysim command line in this process (sim/driver/run.c,
 *               the code the `ulysim` executable runs), its stdout and stderr
 *               caught in memory: (exit status, stdout bytes, stderr text).
 *               The Python layer asks for --format json and reads that.
 *  search(argv) resolves a `sweep` command line as the CLI does (presets,
 *               workload, strategies, GPU counts, sequence lengths) and calls
 *               libulysim's uly_search_each on every (GPUs, sequence,
 *               strategy): every layout the search prices, one row each, in
 *               columns (array.array), not one Python object per layout.
 *
 * run() swaps the C library's stdout and stderr for memory streams while
 * the command runs (glibc's stdin/stdout/stderr are assignable variables,
 * as its manual says); the GIL is held meanwhile, so no other thread of
 * this process writes through them. */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x03090000
#include <Python.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "context.h"
#include "run.h"
#include "ulysim.h"

#ifndef PyBUF_READ /* part of the stable ABI, declared for the limited API from 3.11 on */
#define PyBUF_READ 0x100
#endif
#ifndef ULY_PRESET_DIR_SOURCE
#define ULY_PRESET_DIR_SOURCE ""
#endif

/* argv[0] "ulysim", then the list's str items (UTF-8 copies); NULL with a
 * Python exception set on failure. *argc is set. */
static char **argv_from_list(PyObject *list, int *argc)
{
    PyObject *seq = PySequence_Fast(list, "argv must be a list of str");
    if (!seq) return NULL;
    const Py_ssize_t n = PySequence_Size(seq);
    char **argv = calloc((size_t)n + 2, sizeof *argv);
    if (!argv) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    argv[0] = strdup("ulysim");
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        PyObject *b = item && PyUnicode_Check(item) ? PyUnicode_AsUTF8String(item) : NULL;
        if (item && !b && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "argv items must be str");
        Py_XDECREF(item);
        if (!b) goto fail;
        argv[i + 1] = strdup(PyBytes_AsString(b));
        Py_DECREF(b);
        if (!argv[i + 1]) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    Py_DECREF(seq);
    *argc = (int)n + 1;
    return argv;
fail:
    for (Py_ssize_t i = 0; i <= n; i++) free(argv[i]);
    free(argv);
    Py_DECREF(seq);
    return NULL;
}

static void argv_free(char **argv, int argc)
{
    for (int i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}

/* ------------------------------------------------------------------ run */

static PyObject *ext_run(PyObject *self, PyObject *arg)
{
    int argc = 0;
    char **argv = argv_from_list(arg, &argc);
    if (!argv) return NULL;
    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *fo = open_memstream(&out, &out_len), *fe = open_memstream(&err, &err_len);
    if (!fo || !fe) {
        if (fo) fclose(fo);
        if (fe) fclose(fe);
        free(out);
        free(err);
        argv_free(argv, argc);
        return PyErr_NoMemory();
    }
    fflush(stdout);
    fflush(stderr);
    FILE *saved_out = stdout, *saved_err = stderr;
    stdout = fo;
    stderr = fe;
    int rc = sim_run_any(argc, argv);
    if (fflush(fo) != 0 || ferror(fo)) { /* as main.c: an output not written is an internal failure */
        fprintf(fe, "ulysim: cannot write the output\n");
        rc = SIM_EXIT_INTERNAL;
    }
    stdout = saved_out;
    stderr = saved_err;
    fclose(fo);
    fclose(fe);
    argv_free(argv, argc);
    PyObject *res = Py_BuildValue("(iy#s#)", rc, out ? out : "", (Py_ssize_t)out_len, err ? err : "",
                                  (Py_ssize_t)err_len);
    free(out);
    free(err);
    return res;
}

/* --------------------------------------------------------------- search */

/* One column: n values of size bytes each. */
typedef struct column {
    const char *name;
    char typecode; /* array.array's */
    size_t size;
    char *data;
} column;

enum {
    C_STRATEGY, C_GPUS, C_SEQ, C_ULYSSES, C_RING, C_TP, C_DP, C_PP, C_VPP, C_ORDER, C_MICRO_BATCH, C_FEASIBLE,
    C_STEP_S, C_TOKENS_PER_S, C_TFLOPS_GPU, C_MFU, C_MEM_BYTES, C_COMM_FWD, C_COMM_BWD, C_COUNT
};

typedef struct collect {
    column col[C_COUNT];
    size_t n, cap;
    int64_t gpus, seq;
    int failed; /* out of memory */
} collect;

static const column col_defs[C_COUNT] = {
    {"strategy", 'B', 1, NULL},   {"gpus", 'q', 8, NULL},         {"seq", 'q', 8, NULL},
    {"ulysses", 'q', 8, NULL},    {"ring", 'q', 8, NULL},         {"tp", 'q', 8, NULL},
    {"dp", 'q', 8, NULL},         {"pp", 'q', 8, NULL},           {"vpp", 'q', 8, NULL},
    {"order", 'H', 2, NULL},      {"micro_batch", 'q', 8, NULL},  {"feasible", 'B', 1, NULL},
    {"step_s", 'd', 8, NULL},     {"tokens_per_s", 'd', 8, NULL}, {"tflops_per_gpu", 'd', 8, NULL},
    {"mfu", 'd', 8, NULL},        {"mem_bytes", 'd', 8, NULL},    {"comm_fwd_bytes", 'q', 8, NULL},
    {"comm_bwd_bytes", 'q', 8, NULL},
};

static int collect_grow(collect *k)
{
    const size_t cap = k->cap ? 2 * k->cap : 1 << 14;
    for (int i = 0; i < C_COUNT; i++) {
        char *d = realloc(k->col[i].data, cap * k->col[i].size);
        if (!d) return -1;
        k->col[i].data = d;
    }
    k->cap = cap;
    return 0;
}

#define PUT(k, c, type, v) (((type *)(k)->col[c].data)[(k)->n] = (type)(v))

/* uly_search_visit: one priced layout into the columns */
static void collect_visit(void *ctx, const uly_layout *l, const uly_workload *w, const uly_result *r)
{
    collect *k = ctx;
    if (k->failed || (k->n == k->cap && collect_grow(k) != 0)) {
        k->failed = 1;
        return;
    }
    PUT(k, C_STRATEGY, uint8_t, l->strategy);
    PUT(k, C_GPUS, int64_t, k->gpus);
    PUT(k, C_SEQ, int64_t, w->seq);
    PUT(k, C_ULYSSES, int64_t, l->ulysses);
    PUT(k, C_RING, int64_t, l->ring);
    PUT(k, C_TP, int64_t, l->tp);
    PUT(k, C_DP, int64_t, l->dp);
    PUT(k, C_PP, int64_t, l->pp > 0 ? l->pp : 1);
    PUT(k, C_VPP, int64_t, l->vpp > 0 ? l->vpp : 1);
    /* the rank order, innermost first, four bits a group */
    PUT(k, C_ORDER, uint16_t, l->order[0] | l->order[1] << 4 | l->order[2] << 8 | l->order[3] << 12);
    PUT(k, C_MICRO_BATCH, int64_t, w->micro_batch);
    PUT(k, C_FEASIBLE, uint8_t, r->feasible != 0);
    PUT(k, C_STEP_S, double, r->time.step_s);
    PUT(k, C_TOKENS_PER_S, double, r->time.tokens_per_s);
    PUT(k, C_TFLOPS_GPU, double, r->time.tflops_per_gpu);
    PUT(k, C_MFU, double, r->time.mfu);
    PUT(k, C_MEM_BYTES, double, r->mem.total_bytes);
    PUT(k, C_COMM_FWD, int64_t, r->comm_fwd_bytes);
    PUT(k, C_COMM_BWD, int64_t, r->comm_bwd_bytes);
    k->n++;
}

static void collect_free(collect *k)
{
    for (int i = 0; i < C_COUNT; i++) free(k->col[i].data);
}

/* The columns as a dict of array.array (one copy each). */
static PyObject *collect_to_dict(const collect *k)
{
    PyObject *array_mod = PyImport_ImportModule("array");
    if (!array_mod) return NULL;
    PyObject *array_type = PyObject_GetAttrString(array_mod, "array");
    Py_DECREF(array_mod);
    if (!array_type) return NULL;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < C_COUNT; i++) {
        const column *c = &k->col[i];
        PyObject *arr = PyObject_CallFunction(array_type, "C", (int)c->typecode);
        PyObject *mv = arr ? PyMemoryView_FromMemory(c->data ? c->data : (char *)"", (Py_ssize_t)(k->n * c->size),
                                                     PyBUF_READ)
                           : NULL;
        PyObject *ok = mv ? PyObject_CallMethod(arr, "frombytes", "O", mv) : NULL;
        if (!ok || PyDict_SetItemString(d, c->name, arr) != 0) Py_CLEAR(d);
        Py_XDECREF(ok);
        Py_XDECREF(mv);
        Py_XDECREF(arr);
    }
    Py_DECREF(array_type);
    return d;
}

/* (exit status, message) of a command line the CLI refuses */
static PyObject *refusal(int rc, const char *why)
{
    return Py_BuildValue("(is)", rc, why);
}

static PyObject *ext_search(PyObject *self, PyObject *arg)
{
    int argc = 0;
    char **argv = argv_from_list(arg, &argc);
    if (!argv) return NULL;
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    collect k;
    memset(&k, 0, sizeof k);
    memcpy(k.col, col_defs, sizeof col_defs);
    char why[768] = "";
    PyObject *res = NULL;
    uly_search_stats stats = {0, 0};
    if (!a || !c) {
        PyErr_NoMemory();
        goto out;
    }
    int rc = sim_args_parse(argc, argv, a, why, sizeof why);
    if (!rc) rc = sim_ctx_resolve(a, c, why, sizeof why);
    if (rc) {
        res = refusal(rc, why);
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int g = 0; g < c->n_gpus && !k.failed; g++)
        for (int q = 0; q < c->n_seq && !k.failed; q++) {
            uly_workload w = c->w;
            w.seq = c->seq[q];
            k.gpus = c->gpus[g];
            k.seq = w.seq;
            for (int s = 0; s < c->n_strat; s++) /* ULY_EINVAL: no layout of valid shapes, no row */
                uly_search_each(&c->model, &w, &c->cluster, c->gpus[g], c->strat[s], &c->opts, collect_visit, &k,
                                &stats);
        }
    Py_END_ALLOW_THREADS
    if (k.failed) {
        PyErr_NoMemory();
        goto out;
    }
    PyObject *cols = collect_to_dict(&k);
    if (!cols) goto out;
    res = Py_BuildValue("(iNKK)", 0, cols, (unsigned long long)stats.evaluated, (unsigned long long)stats.feasible);
out:
    collect_free(&k);
    free(a);
    free(c);
    argv_free(argv, argc);
    return res;
}

/* ---------------------------------------------------------------- names */

/* the registry's strategy names by id, and the layout groups' by uly_group */
static PyObject *ext_names(PyObject *self, PyObject *unused)
{
    PyObject *strategies = PyList_New(0), *groups = PyList_New(0);
    for (int i = 0; strategies && i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        PyObject *name = PyUnicode_FromString(s ? s->name : "");
        if (!name || PyList_Append(strategies, name) != 0) Py_CLEAR(strategies);
        Py_XDECREF(name);
    }
    for (int i = 0; groups && i < ULY_GROUP_COUNT; i++) {
        PyObject *name = PyUnicode_FromString(uly_group_name((uly_group)i));
        if (!name || PyList_Append(groups, name) != 0) Py_CLEAR(groups);
        Py_XDECREF(name);
    }
    if (!strategies || !groups) {
        Py_XDECREF(strategies);
        Py_XDECREF(groups);
        return NULL;
    }
    return Py_BuildValue("(NN)", strategies, groups);
}

static PyMethodDef ext_methods[] = {
    {"run", ext_run, METH_O, "run(argv) -> (status, stdout bytes, stderr str): a ulysim command line, in process"},
    {"search", ext_search, METH_O,
     "search(argv) -> (0, columns, evaluated, feasible) or (status, message): every layout a sweep prices"},
    {"names", ext_names, METH_NOARGS, "names() -> (strategy names by id, layout group names by id)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef ext_module = {
    PyModuleDef_HEAD_INIT, "ulysim._ext", "libulysim and the ulysim commands, in process", -1, ext_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ext(void)
{
    PyObject *m = PyModule_Create(&ext_module);
    if (!m) return NULL;
    if (PyModule_AddStringConstant(m, "version", ULY_VERSION) != 0 ||
        PyModule_AddStringConstant(m, "preset_dir_source", ULY_PRESET_DIR_SOURCE) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
