/* args_megatron.c: Megatron-LM's argument names on the ulysim command line
 * and in a launch script (--args-file), for the arguments args.c's own
 * tables do not hold (those read the parallel degrees, batch, sequence and
 * overlap switches under Megatron-LM's names, args_alias.c).
 *
 * Every name Megatron-LM's parser knows is in megatron_names.c, generated
 * from its source with how many values it takes. Each is one of three:
 *   priced    read here (the model's shape, precision, optimizer, dropout,
 *             attention backend) or by args.c;
 *   ignored   no cost in ulysim's model (paths, logging, checkpointing,
 *             learning rate, initialisation, tokenizer files, ...): accepted
 *             with its values and listed once on stderr;
 *   refused   changes cost and is not priced: exit 2 naming it.
 * Which: the priced names below; then a whole group is ignored where its
 * group (the _add_*_args function or configuration dataclass that declares
 * it) holds no cost (ignored_groups), less the few of those that do
 * (costly_in_ignored); in the other groups only the names listed in
 * ignored_names are ignored, and everything else is refused. A name not in
 * Megatron-LM's table is an unknown option, as before. */
#include "args_megatron.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* Groups whose arguments change no cost: where data, checkpoints, logs and
 * the learning-rate schedule come from and go to. */
static const char *const ignored_groups[] = {
    "CheckpointConfig", "_add_checkpointing_args", "LoggerConfig", "_add_logging_args", "TokenizerConfig",
    "SchedulerConfig", "_add_learning_rate_args", "ValidationConfig", "_add_validation_args", "_add_one_logger_args",
    "_add_ft_package_args", "_add_inprocess_restart_args", "FaultInjectorConfig", "StragglerDetectionConfig",
    "_add_straggler_detector_args", "RerunStateMachineConfig", "_add_rerun_machine_args", "RNGConfig",
    "_add_initialization_args", "_add_autoresume_args", "_add_msc_args", "_add_workload_inspector_server_args",
    "ProfilingConfig", "_add_data_args",
};

/* ... less these, which do change cost: masks that cut attention at
 * document boundaries, and a sequence length under another name */
static const char *const costly_in_ignored[] = {
    "--reset-attention-mask", "--dataloader-inter-document-masking", "--encoder-seq-length", "--decoder-seq-length",
};

/* Arguments of the other groups that change no cost ulysim models:
 * optimizer hyper-parameters, the initialisation, fusions of elementwise
 * kernels (priced by their bytes either way), RoPE's constants, fp16's loss
 * scaler, process-group plumbing, exits and garbage collection, the batch
 * ramp-up (the plan prices the steady global batch). A learned position
 * table (--max-position-embeddings) is a parameter ulysim does not count,
 * as Megatron-LM's own formula does not (docs/inputs.md). */
static const char *const ignored_names[] = {
    "--max-position-embeddings", "--init-method-std", "--weight-decay", "--clip-grad", "--adam-beta1", "--adam-beta2",
    "--adam-eps", "--train-iters", "--train-samples", "--rampup-batch-size", "--step-batch-size-schedule",
    "--use-mcore-models", "--use-legacy-models", "--no-masked-softmax-fusion",
    "--no-bias-gelu-fusion", "--no-bias-dropout-fusion", "--no-bias-swiglu-fusion", "--no-rope-fusion",
    "--no-persist-layer-norm", "--rotary-base", "--rotary-percent",
    "--use-rope-scaling", "--rope-scaling-factor", "--rotary-seq-len-interpolation-factor", "--apply-layernorm-1p",
    "--exit-duration-in-mins", "--exit-interval",
    "--exit-signal-handler", "--manual-gc", "--manual-gc-interval", "--no-manual-gc-eval", "--empty-unused-memory-level",
    "--calculate-per-token-loss", "--check-for-nan-in-loss-and-grad", "--no-check-for-nan-in-loss-and-grad",
    "--check-for-large-grads", "--check-for-spiky-loss", "--loss-scale", "--initial-loss-scale", "--min-loss-scale",
    "--loss-scale-window", "--hysteresis", "--attention-softmax-in-fp32",
    "--distributed-backend", "--distributed-timeout-minutes", "--local-rank", "--lazy-mpu-init",
    "--distributed-timeout-seconds-after-init", "--disable-jit-fuser", "--ddp-bucket-size", "--ddp-average-in-collective",
    "--use-cpu-initialization", "--onnx-safe", "--openai-gelu", "--batch-size", "--no-load-optim", "--no-load-rng",
    "--sgd-momentum", "--init-method-xavier-uniform", "--seed", "--vocab-extra-ids",
    /* FP8 scaling's knobs that move no bytes and no FLOPs: the scale's
     * margin, the (deprecated) scaling interval, how the amax history is
     * reduced (most recent or max) */
    "--fp8-margin", "--fp8-interval", "--fp8-amax-compute-algo",
    /* routing's constants and losses (the router's GEMM is priced by its
     * shape, whatever its scores), its bookkeeping, and fusions of the
     * permutation's elementwise kernels (priced by their bytes either way) */
    "--moe-router-load-balancing-type", "--moe-aux-loss-coeff", "--moe-z-loss-coeff", "--moe-input-jitter-eps",
    "--moe-router-score-function", "--moe-router-pre-softmax", "--moe-router-topk-scaling-factor",
    "--moe-router-enable-expert-bias", "--moe-router-bias-update-rate", "--moe-router-num-groups",
    "--moe-router-group-topk", "--moe-router-dtype", "--moe-token-drop-policy", "--moe-per-layer-logging",
    "--moe-permute-fusion", "--moe-router-fusion",
};

/* Priced by other readers, tried before this one (args.c's read_option):
 *   pipeline layouts: --num-layers-per-virtual-pipeline-stage (args.c),
 *     --num-virtual-stages-per-pipeline-rank, --decoder-first-pipeline-num-layers,
 *     --decoder-last-pipeline-num-layers, --account-for-embedding-in-pipeline-split,
 *     --account-for-loss-in-pipeline-split (args_layout.c);
 *   recompute: --recompute-granularity, --recompute-method, --recompute-num-layers,
 *     --recompute-modules, --recompute-activations (args_layout.c);
 *   activation offload: --cpu-offloading, --cpu-offloading-num-layers (args_layout.c);
 *   FP8: --fp8-format, --fp8-recipe, --fp8-param-gather, --fp8-dot-product-attention,
 *     --first-last-layers-bf16, --num-layers-at-start-in-bf16, --num-layers-at-end-in-bf16,
 *     --fp8-amax-history-len (args_fp8.c).
 * The other --fp8-* names that change cost (--no-fp8-wgrad, ...) are refused. */

/* The model-shape and precision arguments read here. */
enum { K_INT, K_SWITCH, K_DROPOUT, K_NORM, K_POS, K_BACKEND, K_OPTIMIZER, K_FREQ };
static const struct {
    const char *name;
    int kind;
    size_t off; /* K_INT: an int64_t of sim_mlm; K_SWITCH: an int set to 1 */
    int shape;  /* 1: part of the model's shape (a model is built) */
    const char *maps; /* what it is in ulysim's terms, for --help */
} priced[] = {
    {"--num-layers", K_INT, offsetof(sim_mlm, layers), 1, "layers [count; required for a model by shape]"},
    {"--hidden-size", K_INT, offsetof(sim_mlm, hidden), 1, "hidden [count; required]"},
    {"--ffn-hidden-size", K_INT, offsetof(sim_mlm, ffn), 1, "ffn_hidden [count; default 4 hidden, with --swiglu 8/3 hidden to 64]"},
    {"--num-attention-heads", K_INT, offsetof(sim_mlm, heads), 1, "heads [count; required]"},
    {"--num-query-groups", K_INT, offsetof(sim_mlm, groups), 1, "kv_heads with --group-query-attention [count; default 1]"},
    {"--kv-channels", K_INT, offsetof(sim_mlm, kv_channels), 1, "head_dim [count; default and only value hidden/heads]"},
    {"--vocab-size", K_INT, offsetof(sim_mlm, vocab), 1, "vocab padded to a multiple of the next x TP [count]"},
    {"--padded-vocab-size", K_INT, offsetof(sim_mlm, padded_vocab), 1, "vocab as it is [count]"},
    {"--make-vocab-size-divisible-by", K_INT, offsetof(sim_mlm, divisible_by), 1, "the padding's multiple [count; default 128]"},
    {"--group-query-attention", K_SWITCH, offsetof(sim_mlm, gqa), 1, "kv_heads = --num-query-groups [default: one per head]"},
    {"--swiglu", K_SWITCH, offsetof(sim_mlm, swiglu), 1, "swiglu, three h x f matrices [default GELU, two]"},
    {"--untie-embeddings-and-output-weights", K_SWITCH, offsetof(sim_mlm, untie), 1, "tied_embeddings false [default tied]"},
    {"--disable-bias-linear", K_SWITCH, offsetof(sim_mlm, no_bias), 1, "bias false [default: every linear biased]"},
    {"--add-bias-linear", K_SWITCH, offsetof(sim_mlm, add_bias), 1, "bias true [default]"},
    {"--add-qkv-bias", K_SWITCH, offsetof(sim_mlm, qkv_bias), 1, "qkv_bias true [default: as --add-bias-linear]"},
    {"--no-pad-vocab-size", K_SWITCH, offsetof(sim_mlm, no_pad), 1, "vocab unpadded [default padded]"},
    {"--disable-pad-vocab-size", K_SWITCH, offsetof(sim_mlm, no_pad), 1, "vocab unpadded [default padded]"},
    {"--hidden-dropout", K_DROPOUT, offsetof(sim_mlm, hidden_dropout), 1, "dropout masks kept when above 0 [default 0.1]"},
    {"--attention-dropout", K_DROPOUT, offsetof(sim_mlm, attn_dropout), 1, "the same; above 0 with it or 0 with it [default 0.1]"},
    {"--normalization", K_NORM, 0, 1, "LayerNorm|RMSNorm, the same cost [default LayerNorm]"},
    {"--position-embedding-type", K_POS, 0, 1, "learned_absolute|rope|yarn|none, the same cost [learned_absolute]"},
    {"--use-rotary-position-embeddings", K_POS, 0, 1, "the same cost [switch]"},
    {"--no-position-embedding", K_POS, 0, 1, "the same cost [switch]"},
    {"--bf16", K_SWITCH, offsetof(sim_mlm, bf16), 0, "--dtype bf16 [default --dtype; launch script: fp32]"},
    {"--fp16", K_SWITCH, offsetof(sim_mlm, fp16), 0, "--dtype fp16 [switch]"},
    {"--use-distributed-optimizer", K_SWITCH, offsetof(sim_mlm, dist_opt), 0, "--framework megatron --zero 1 [launch script: --zero 0]"},
    {"--attention-backend", K_BACKEND, 0, 0, "flash|fused|auto flash; unfused|local --no-flash [auto]"},
    {"--use-flash-attn", K_BACKEND, 0, 0, "flash attention [switch]"},
    {"--optimizer", K_OPTIMIZER, 0, 0, "adam only [adam]"},
    /* a mixture of experts and latent attention (megatron/training/arguments.py,
     * _add_moe_args and _add_mla_args; TransformerConfig's fields) */
    {"--num-experts", K_INT, offsetof(sim_mlm, experts), 1, "experts [count; default none: a dense model]"},
    {"--moe-router-topk", K_INT, offsetof(sim_mlm, topk), 1, "topk [count; default 2]"},
    {"--moe-ffn-hidden-size", K_INT, offsetof(sim_mlm, moe_ffn), 1, "moe_ffn_hidden [count; default the FFN's]"},
    {"--moe-shared-expert-intermediate-size", K_INT, offsetof(sim_mlm, shared_ffn), 1, "shared_ffn_hidden [count; default none]"},
    {"--moe-layer-freq", K_FREQ, 0, 1, "k: every k-th layer MoE; or \"([0]*3+[1]*58)\" [default 1]"},
    {"--moe-grouped-gemm", K_SWITCH, offsetof(sim_mlm, grouped_gemm), 0, "accepted: ulysim prices grouped GEMMs always"},
    {"--multi-latent-attention", K_SWITCH, offsetof(sim_mlm, mla), 1, "latent attention, kv_heads = heads [default off]"},
    {"--q-lora-rank", K_INT, offsetof(sim_mlm, q_lora), 1, "q_lora_rank with MLA [count; default none]"},
    {"--kv-lora-rank", K_INT, offsetof(sim_mlm, kv_lora), 1, "kv_lora_rank with MLA [count; default 32]"},
    {"--qk-head-dim", K_INT, offsetof(sim_mlm, qk_head), 1, "qk_nope_dim with MLA [count; default 128]"},
    {"--qk-pos-emb-head-dim", K_INT, offsetof(sim_mlm, qk_pos), 1, "qk_rope_dim with MLA [count; default 64]"},
    {"--v-head-dim", K_INT, offsetof(sim_mlm, v_head), 1, "head_dim with MLA [count; default 128]"},
};
#define N_PRICED ((int)(sizeof priced / sizeof priced[0]))

const sim_mlm_name *sim_mlm_find(const char *name)
{
    for (int k = 0; k < sim_mlm_names_count; k++)
        if (!strcmp(sim_mlm_names[k].name, name)) return &sim_mlm_names[k];
    return NULL;
}

static int in_list(const char *name, const char *const *list, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (!strcmp(name, list[k])) return 1;
    return 0;
}
#define IN(name, list) in_list(name, list, sizeof list / sizeof list[0])

/* 1 when the Megatron-LM argument e changes no cost ulysim models */
static int is_ignored(const sim_mlm_name *e)
{
    if (IN(e->name, ignored_names)) return 1;
    /* PyTorch's flight recorder: debugging dumps */
    if (strstr(e->name, "flight-recorder")) return 1;
    return IN(e->group, ignored_groups) && !IN(e->name, costly_in_ignored);
}

/* The value of a Megatron argument: after '=', else the next argument
 * unless it is an option. NULL when none. */
static const char *value_of(const char *val, int argc, char **argv, int *i)
{
    if (val) return val;
    if (*i + 1 >= argc) return NULL;
    const char *next = argv[*i + 1];
    if (next[0] == '-' && next[1] == '-') return NULL;
    return argv[++*i];
}

/* An ignored argument: its values taken (as many as Megatron-LM's parser
 * would), its name listed once. */
static void take_ignored(sim_args *a, const sim_mlm_name *e, const char *val, int argc, char **argv, int *i)
{
    if (!val && e->values != '0') {
        int most = e->values == '+' || e->values == '*' ? argc : e->values == '?' ? 1 : e->values - '0';
        for (int k = 0; k < most && *i + 1 < argc; k++) {
            const char *next = argv[*i + 1];
            if (next[0] == '-' && next[1] == '-') break;
            ++*i;
        }
    }
    sim_mlm *m = &a->mlm;
    for (int k = 0; k < m->n_ignored; k++)
        if (!strcmp(m->ignored[k], e->name)) return;
    if (m->n_ignored < SIM_MLM_IGNORED_MAX) m->ignored[m->n_ignored++] = e->name;
}

static int read_int(const char *name, const char *v, int64_t *dst, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const long long x = strtoll(v, &end, 10);
    if (!v[0] || *end || x < 1 || x > ((long long)1 << 40))
        return sim_fail(why, n, "%s %s: not a positive integer (valid: e.g. 4096)", name, text_quote(v, qb, sizeof qb));
    if (*dst && *dst != x)
        return sim_fail(why, n, "%s given twice (%lld, then %lld; valid: one value)", name, (long long)*dst, x);
    *dst = x;
    return 0;
}

/* One priced argument's value into m: 0, or SIM_EXIT_USAGE. */
static int read_priced(sim_args *a, int k, const char *v, char *why, size_t n)
{
    sim_mlm *m = &a->mlm;
    char qb[80], *end = NULL;
    const char *name = priced[k].name;
    switch (priced[k].kind) {
    case K_INT: return read_int(name, v, (int64_t *)((char *)m + priced[k].off), why, n);
    case K_SWITCH: *(int *)((char *)m + priced[k].off) = 1; return 0;
    case K_DROPOUT: {
        const double x = sim_strtod_dec(v, &end);
        if (!v[0] || *end || !(x >= 0 && x < 1))
            return sim_fail(why, n, "%s %s: not a dropout probability (valid: a number in [0, 1), e.g. 0.1)", name,
                            text_quote(v, qb, sizeof qb));
        *(double *)((char *)m + priced[k].off) = x;
        return 0;
    }
    case K_NORM:
        /* ulysim counts one gain per norm; LayerNorm's bias is Megatron's
         * formula's second parameter per norm (its count shown beside) */
        if (strcmp(v, "LayerNorm") && strcmp(v, "RMSNorm"))
            return sim_fail(why, n, "%s %s: not priced (valid: LayerNorm or RMSNorm)", name, text_quote(v, qb, sizeof qb));
        m->rmsnorm = !strcmp(v, "RMSNorm");
        return 0;
    case K_POS:
        /* rotary and learned absolute positions cost the same to ulysim (an
         * elementwise pass; a learned table is not counted, docs/inputs.md);
         * relative position buckets add a bias to every score, not priced */
        if (v && strcmp(v, "learned_absolute") && strcmp(v, "rope") && strcmp(v, "yarn") && strcmp(v, "none"))
            return sim_fail(why, n, "%s %s: not priced (valid: learned_absolute, rope, yarn or none)", name,
                            text_quote(v, qb, sizeof qb));
        return 0;
    case K_BACKEND:
        /* flash, fused (cuDNN's fused attention) and auto run a blockwise
         * kernel; unfused and local materialise the scores (--no-flash) */
        if (v && strcmp(v, "flash") && strcmp(v, "fused") && strcmp(v, "auto") && strcmp(v, "unfused") && strcmp(v, "local"))
            return sim_fail(why, n, "%s %s: unknown (valid: flash, fused, auto, unfused or local)", name,
                            text_quote(v, qb, sizeof qb));
        m->unfused_attn = v && (!strcmp(v, "unfused") || !strcmp(v, "local"));
        return 0;
    case K_FREQ:
        if (m->moe_freq && strcmp(m->moe_freq, v))
            return sim_fail(why, n, "%s given twice (%s, then %s; valid: one value)", name, m->moe_freq,
                            text_quote(v, qb, sizeof qb));
        m->moe_freq = v; /* read once the layers are known (mlm_moe) */
        return 0;
    default: /* K_OPTIMIZER */
        if (strcmp(v, "adam"))
            return sim_fail(why, n, "--optimizer %s: not priced (valid: adam; ulysim's model states are Adam's two "
                            "moments)", text_quote(v, qb, sizeof qb));
        return 0;
    }
}

int sim_mlm_option(sim_args *a, const char *name, const char *val, int argc, char **argv, int *i, int *rc, char *why,
                   size_t n)
{
    char qb[80];
    const sim_mlm_name *e = sim_mlm_find(name);
    if (!e) return 0;
    for (int k = 0; k < N_PRICED; k++) {
        if (strcmp(name, priced[k].name)) continue;
        const int sw = priced[k].kind == K_SWITCH || (priced[k].kind == K_POS && strcmp(name, "--position-embedding-type")) ||
                       !strcmp(name, "--use-flash-attn");
        const char *v = NULL;
        if (sw && val) {
            *rc = sim_fail(why, n, "%s takes no value (got %s)", name, text_quote(val, qb, sizeof qb));
            return -1;
        }
        if (!sw && !(v = value_of(val, argc, argv, i))) {
            *rc = sim_fail(why, n, "%s needs a value (see ulysim --help)", name);
            return -1;
        }
        if (!a->plan_flag) a->plan_flag = priced[k].name;
        if (priced[k].shape && !a->mlm.shape_flag) a->mlm.shape_flag = priced[k].name;
        *rc = read_priced(a, k, v, why, n);
        return *rc ? -1 : 1;
    }
    if (is_ignored(e)) {
        take_ignored(a, e, val, argc, argv, i);
        return 1;
    }
    *rc = sim_fail(why, n, "%s: a Megatron-LM argument that changes the cost, and ulysim does not price it (valid: "
                   "leave it out; docs/inputs.md lists the Megatron-LM arguments read)", name);
    return -1;
}

/* ulysim's flags that Megatron-LM also has with another meaning: in a
 * launch script they are Megatron-LM's (--split: the data's train, valid,
 * test split, not ulysim's causal split). */
static const char *const shadowed[] = {"--split"};

int sim_mlm_file_option(sim_args *a, int argc, char **argv, int *i, int *rc, char *why, size_t n)
{
    char name[64];
    const char *eq = strchr(argv[*i], '=');
    snprintf(name, sizeof name, "%.*s", (int)strcspn(argv[*i], "="), argv[*i]);
    if (!IN(name, shadowed)) return 0;
    return sim_mlm_option(a, name, eq ? eq + 1 : NULL, argc, argv, i, rc, why, n);
}

void sim_mlm_launch_defaults(sim_args *a)
{
    a->mlm.launch = 1;
    a->framework = ULY_FW_MEGATRON;
    a->dtype = ULY_FP32;        /* Megatron-LM trains in fp32 without --bf16 or --fp16 */
    a->zero = 0;                /* without --use-distributed-optimizer every rank holds the optimizer */
    a->zero_set = 1;
    a->recompute = ULY_RECOMPUTE_NONE; /* --recompute-granularity's default: None */
    a->overlap_grad_reduce = -1;       /* --overlap-grad-reduce is off by default */
    a->moe.dispatcher = ULY_MOE_ALLGATHER; /* --moe-token-dispatcher-type's default (TransformerConfig) */
}

double sim_mlm_params_formula(const sim_mlm *m, int64_t ffn, int64_t groups, int64_t kv_channels, int64_t padded_vocab)
{
    const double h = (double)m->hidden, L = (double)m->layers, a = (double)m->heads;
    const double norm = m->rmsnorm ? 1.0 : 2.0; /* RMSNorm has no bias, LayerNorm has */
    const double attn = 2.0 * h * h * ((1.0 + (double)groups / a) * ((double)kv_channels * a / h));
    const double mlp = 2.0 * h * (double)ffn * (m->swiglu ? 1.5 : 1.0);
    const double layer = attn + mlp + 2.0 * h * norm;
    const double emb = h * (double)padded_vocab * (m->untie ? 2.0 : 1.0);
    return L * layer + norm * h + emb;
}

/* Megatron-LM's vocabulary: --padded-vocab-size, else --vocab-size padded
 * up to a multiple of --make-vocab-size-divisible-by (128) x the TP degree
 * (megatron/training/vocab_utils.py), unless --no-pad-vocab-size. */
static int mlm_vocab(const sim_args *a, int64_t *out, char *why, size_t n)
{
    const sim_mlm *m = &a->mlm;
    if (m->padded_vocab) {
        *out = m->padded_vocab;
        return 0;
    }
    if (!m->vocab)
        return sim_fail(why, n, "%s: the model's vocabulary is the tokenizer's, which ulysim does not open (valid: add "
                        "--vocab-size N, padded as Megatron-LM pads it, or --padded-vocab-size N)", m->shape_flag);
    const int64_t tp = a->pin_t > 0 ? a->pin_t : 1;
    const int64_t mult = (m->divisible_by ? m->divisible_by : 128) * tp;
    *out = m->no_pad ? m->vocab : (m->vocab + mult - 1) / mult * mult;
    return 0;
}

/* A name ignored because the switch it needs is off, listed once */
static void mlm_ignore(sim_mlm *m, int given, const char *what)
{
    if (given && m->n_ignored < SIM_MLM_IGNORED_MAX) m->ignored[m->n_ignored++] = what;
}

/* The experts and latent attention of the shape, appended to the inline
 * form at model_text + o, under Megatron-LM's defaults (arguments.py's
 * validate_args: --moe-ffn-hidden-size defaults to --ffn-hidden-size;
 * TransformerConfig: top-2 routing; _add_mla_args: kv_lora_rank 32,
 * qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim 128, no q_lora_rank).
 * Without --num-experts or --multi-latent-attention Megatron-LM reads none
 * of their sizes: they are listed as ignored. 0, or SIM_EXIT_USAGE. */
static int mlm_moe(sim_mlm *m, int64_t ffn, size_t o, char *why, size_t n)
{
    char *t = m->model_text;
    const size_t cap = sizeof m->model_text;
    if (m->experts) {
        int64_t first = 0, every = 1;
        if (m->moe_freq && sim_moe_freq_parse(m->moe_freq, m->layers, &first, &every, why, n)) return SIM_EXIT_USAGE;
        o += (size_t)snprintf(t + o, cap - o, ",experts=%lld,topk=%lld,moe_ffn_hidden=%lld", (long long)m->experts,
                              (long long)(m->topk ? m->topk : 2), (long long)(m->moe_ffn ? m->moe_ffn : ffn));
        if (m->shared_ffn && o < cap) o += (size_t)snprintf(t + o, cap - o, ",shared_ffn_hidden=%lld", (long long)m->shared_ffn);
        if ((first || every > 1) && o < cap)
            o += (size_t)snprintf(t + o, cap - o, ",moe_dense_first=%lld,moe_every=%lld", (long long)first, (long long)every);
    } else {
        mlm_ignore(m, m->topk != 0, "--moe-router-topk (no --num-experts)");
        mlm_ignore(m, m->moe_ffn != 0, "--moe-ffn-hidden-size (no --num-experts)");
        mlm_ignore(m, m->shared_ffn != 0, "--moe-shared-expert-intermediate-size (no --num-experts)");
        mlm_ignore(m, m->moe_freq != NULL, "--moe-layer-freq (no --num-experts)");
    }
    if (m->mla && o < cap) {
        o += (size_t)snprintf(t + o, cap - o, ",kv_lora_rank=%lld,qk_nope_dim=%lld,qk_rope_dim=%lld",
                              (long long)(m->kv_lora ? m->kv_lora : 32), (long long)(m->qk_head ? m->qk_head : 128),
                              (long long)(m->qk_pos ? m->qk_pos : 64));
        if (m->q_lora && o < cap) o += (size_t)snprintf(t + o, cap - o, ",q_lora_rank=%lld", (long long)m->q_lora);
    } else if (!m->mla) {
        const int any = m->q_lora || m->kv_lora || m->qk_head || m->qk_pos || m->v_head;
        mlm_ignore(m, any, "--q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim, --v-head-dim "
                           "(no --multi-latent-attention)");
    }
    if (o >= cap) return sim_fail(why, n, "%s: the model's shape is too long to state", m->shape_flag);
    return 0;
}

/* The model of the shape arguments, as --model's inline form. */
static int mlm_model(sim_args *a, int model_given, char *why, size_t n)
{
    sim_mlm *m = &a->mlm;
    if (model_given)
        return sim_fail(why, n, "--model %s and %s: two models (valid: the preset or the Megatron-LM shape, not both)",
                        a->model, m->shape_flag);
    char missing[120] = "";
    if (!m->layers) sim_join(missing, sizeof missing, ", ", "--num-layers");
    if (!m->hidden) sim_join(missing, sizeof missing, ", ", "--hidden-size");
    if (!m->heads) sim_join(missing, sizeof missing, ", ", "--num-attention-heads");
    if (missing[0])
        return sim_fail(why, n, "%s: a model given by Megatron-LM's arguments needs %s too (valid: add it, or give "
                        "--model)", m->shape_flag, missing);
    if (!m->kv_channels && m->hidden % m->heads)
        return sim_fail(why, n, "--hidden-size %lld: not a multiple of --num-attention-heads %lld (valid: give "
                        "--kv-channels, or heads that divide it)", (long long)m->hidden, (long long)m->heads);
    /* latent attention up-projects every head; its value head is --v-head-dim */
    const int64_t d = m->mla ? (m->v_head ? m->v_head : 128) : m->kv_channels ? m->kv_channels : m->hidden / m->heads;
    /* without --group-query-attention Megatron-LM keeps one group per head
     * whatever --num-query-groups says; with it and no groups, its default 1 */
    const int64_t groups = m->gqa && !m->mla ? (m->groups ? m->groups : 1) : m->heads;
    if (!m->gqa && m->groups && m->n_ignored < SIM_MLM_IGNORED_MAX)
        m->ignored[m->n_ignored++] = "--num-query-groups (no --group-query-attention)";
    const int64_t ffn = m->ffn ? m->ffn : m->swiglu ? (int64_t)(4.0 * (double)m->hidden * 2.0 / 3.0 / 64.0) * 64 : 4 * m->hidden;
    const double hd = m->hidden_dropout < 0 ? 0.1 : m->hidden_dropout, ad = m->attn_dropout < 0 ? 0.1 : m->attn_dropout;
    if ((hd > 0) != (ad > 0))
        return sim_fail(why, n, "--hidden-dropout %g with --attention-dropout %g: ulysim keeps dropout masks for both or "
                        "neither (valid: both 0, or both above 0; Megatron-LM's default is 0.1 each)", hd, ad);
    int64_t vocab = 0;
    int rc = mlm_vocab(a, &vocab, why, n);
    if (rc) return rc;
    snprintf(m->model_text, sizeof m->model_text,
             "name=megatron,layers=%lld,hidden=%lld,heads=%lld,kv_heads=%lld,head_dim=%lld,ffn_hidden=%lld,vocab=%lld,"
             "swiglu=%s,tied_embeddings=%s,dropout=%s",
             (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)groups, (long long)d,
             (long long)ffn, (long long)vocab, m->swiglu ? "true" : "false", m->untie ? "false" : "true",
             hd > 0 ? "true" : "false");
    /* Megatron-LM biases every linear layer unless --disable-bias-linear
     * (add_bias_linear), the QKV projection alone with --add-qkv-bias */
    size_t o = strlen(m->model_text);
    if (!m->no_bias || m->qkv_bias)
        snprintf(m->model_text + o, sizeof m->model_text - o, "%s", !m->no_bias ? ",bias=true" : ",qkv_bias=true");
    const int len = (int)strlen(m->model_text);
    if ((rc = mlm_moe(m, ffn, (size_t)len, why, n)) != 0) return rc;
    a->model = m->model_text;
    /* Megatron-LM's formula here is its dense one (-1: not stated) */
    m->params_megatron = m->experts || m->mla ? -1 : sim_mlm_params_formula(m, ffn, groups, d, vocab);
    return 0;
}

int sim_mlm_finish(sim_args *a, int model_given, const char *dtype_typed, const char *zero_typed, char *why, size_t n)
{
    sim_mlm *m = &a->mlm;
    int rc = 0;
    if (m->shape_flag && (rc = mlm_model(a, model_given, why, n)) != 0) return rc;
    if (m->bf16 && m->fp16) return sim_fail(why, n, "--bf16 and --fp16: one precision (valid: one of them)");
    if (m->bf16 || m->fp16) {
        const char *want = m->bf16 ? "bf16" : "fp16";
        if (dtype_typed && strcmp(dtype_typed, want))
            return sim_fail(why, n, "--%s disagrees with --dtype %s (valid: give one of them, or the same value)", want,
                            dtype_typed);
        a->dtype = m->bf16 ? ULY_BF16 : ULY_FP16;
    }
    if (m->dist_opt && zero_typed && strcmp(zero_typed, "1"))
        return sim_fail(why, n, "--use-distributed-optimizer is --zero 1, and --zero %s was given (valid: one of them)",
                        zero_typed);
    if (m->dist_opt) {
        /* the distributed optimizer shards the optimizer states: Megatron-LM's ZeRO-1 */
        a->framework = ULY_FW_MEGATRON;
        a->zero = 1;
        a->zero_set = 1;
    }
    if (m->unfused_attn) a->flash = 0;
    if (!m->launch) return 0;
    /* a launch script names its whole layout: what it leaves out is
     * Megatron-LM's default of 1, and the strategy the one it runs */
    if (!a->pin_t) a->pin_t = 1;
    if (!a->pin_pp) a->pin_pp = 1;
    if (a->n_strategies == 0 && a->cp <= 1 && !a->hcp_u && a->cp_comm < 0) {
        const uly_strategy *s = uly_strategy_find(a->sequence_parallel ? "megatron-sp" : "megatron-tp");
        if (!s) return sim_fail(why, n, "internal: no Megatron-LM strategy");
        a->strategies[a->n_strategies++] = s->id;
    }
    return 0;
}

void sim_mlm_report(const sim_args *a, const uly_model *model, FILE *f)
{
    const sim_mlm *m = &a->mlm;
    if (m->params_megatron > 0)
        fprintf(f, "ulysim: model from Megatron-LM's arguments: --model '%s': %.0f parameters (%.2f B); Megatron-LM's "
                "formula (theoretical_memory_usage.py, which counts LayerNorm's biases): %.0f\n", m->model_text,
                uly_model_params(model), uly_model_params(model) * 1e-9, m->params_megatron);
    else if (m->params_megatron < 0)
        fprintf(f, "ulysim: model from Megatron-LM's arguments: --model '%s': %.0f parameters (%.2f B), %.2f B active\n",
                m->model_text, uly_model_params(model), uly_model_params(model) * 1e-9,
                uly_model_active_params(model) * 1e-9);
    if (!m->n_ignored) return;
    fprintf(f, "ulysim: ignored, no cost in ulysim's model (%d Megatron-LM argument%s):", m->n_ignored,
            m->n_ignored > 1 ? "s" : "");
    for (int k = 0; k < m->n_ignored; k++) fprintf(f, "%s %s", k ? "," : "", m->ignored[k]);
    fputc('\n', f);
}

void sim_mlm_help(FILE *f)
{
    fprintf(f, "\nMegatron-LM's model, precision and optimizer arguments build the model (as --model's\n"
               "inline form) and set the workload [Megatron-LM's default]:\n");
    for (int k = 0; k < N_PRICED; k++) fprintf(f, "  %-38s %s\n", priced[k].name, priced[k].maps);
    fprintf(f, "  --args-file FILE                       a launch script [file]: its launch command's arguments (after\n"
               "                                         the .py it runs) under Megatron-LM's defaults (fp32, no\n"
               "                                         distributed optimizer, no recompute, TP and PP 1); the shell\n"
               "                                         it reads is docs/cli.md's\n"
               "Megatron-LM's other arguments of no cost (paths, logging, learning rate, ...) are\n"
               "accepted and listed once on stderr; those that change cost and are not priced, exit 2.\n");
}
