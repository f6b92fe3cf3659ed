/* args_help.c: ulysim's --help, its options with the vocabularies' choices
 * and the parser's defaults (args.c), the registries' commands and
 * strategies in their order. */
#include <stdio.h>

#include "args.h"
#include "commands.h"

static const char *const dtype_names[] = {ULY_DTYPES(ULY_X_NAME)};
static const char *const recompute_names[] = {ULY_RECOMPUTES(ULY_X_NAME)};
static const char *const split_names[] = {ULY_SPLITS(ULY_X_NAME)};
static const char *const framework_names[] = {ULY_FRAMEWORKS(ULY_X_NAME)};
static const char *const attn_kernel_names[] = {ULY_ATTN_KERNELS(ULY_X_NAME)};

/* --framework megatron's own switches, under Megatron-LM's names */
static void help_megatron(FILE *f)
{
    fputs(
"  --accumulate-allreduce-grads-in-fp32, --grad-reduce-in-bf16  Megatron-LM's flags\n"
"                       [default its rule: fp32, but fp16 under --dtype fp16]: --framework\n"
"                       megatron's main gradients kept and reduced in fp32, or in bf16\n"
"  --gradient-accumulation-fusion, --no-gradient-accumulation-fusion  Megatron-LM's [default:\n"
"                       fused]: micro-batches' gradients added by the GEMMs, or a kernel each\n"
"  --scatter-gather-tensors-in-pipeline, --no-scatter-gather-tensors-in-pipeline\n"
"                       Megatron-LM's of 2021-2023 [default: off, as today's]: under plain\n"
"                       TP a stage's output sent 1/tp per TP rank and gathered after\n"
"  --transformer-impl I transformer_engine|local [default transformer_engine]; local: bias kernels\n"
"  --cross-entropy-loss-fusion, --cross-entropy-fusion-impl native|te  Megatron-LM's flags:\n"
"                       the loss's fused kernels [default: unfused; the fusion's: native]\n",
        f);
}

/* The options of --help, with the vocabularies' choices and defaults. */
static void help_options(FILE *f)
{
    /* the vocabularies' choices and defaults */
    sim_args d;
    sim_args_defaults(&d);
    char v[5][120];
    uly_names_join(dtype_names, ULY_DTYPE_COUNT, "|", "|", v[0], sizeof v[0]);
    uly_names_join(recompute_names, ULY_RECOMPUTE_COUNT, "|", "|", v[1], sizeof v[1]);
    uly_names_join(split_names, ULY_SPLIT_COUNT, "|", "|", v[2], sizeof v[2]);
    uly_names_join(framework_names, ULY_FW_COUNT, "|", "|", v[3], sizeof v[3]);
    uly_names_join(attn_kernel_names, ULY_AK_COUNT, "|", "|", v[4], sizeof v[4]);
    fprintf(f,
"\n"
"options (sizes accept 131072, 128K, 1M, 1G, 1T, 1e6, 2^20; K, M, G, T are powers of 1024):\n"
"  --gpus N             GPUs in total [count; default %d, or one node where %d GPUs are not whole nodes]\n"
"  --seq N              sequence length [tokens; default 128K]\n"
"  --model NAME|FILE    model preset or JSON file [default %s]\n"
"  --cluster NAME|FILE  cluster preset or JSON file [default %s]\n"
"  --strategy NAME      one of the strategies above or all [default all];\n"
"                       repeatable or comma-separated\n"
"  --ulysses U          pin the Ulysses (all-to-all) degree [ways; default searched]\n"
"  --ring R             pin the context-parallel (ring) degree [ways; default searched]\n"
"  --tp T               pin the tensor-parallel degree [ways; default searched, 1 when\n"
"                       --ulysses or --ring is pinned]; TP sits inside every strategy\n"
"                       but rsa (Megatron-Core's TP x CP)\n"
"  --pp P|auto          pipeline stages, 1F1B [ways; default 1; auto: searched over the\n"
"                       divisors of --gpus; at most the layers; uneven stages are\n"
"                       paced by the heaviest;\n"
"                       micro-batches per step = global batch / (micro-batch x dp),\n"
"                       1 without --global-batch: then the bubble is (P-1)/P]\n"
"                       (the data-parallel degree is what remains of --gpus: the\n"
"                       product of the pinned degrees must divide it)\n"
"  --batch B            the micro-batch: sequences per replica per micro-step (not the\n"
"                       global batch) [sequences; default 1]\n"
"  --global-batch G     sequences per optimizer step [default micro-batch x dp;\n"
"                       when given without --batch, micro-batches are searched]\n"
"  --dtype T            %s [default %s]; fp8: FP8 training, options below\n"
"  --recompute R        %s activation recompute [default %s]\n"
"  --zero Z             ZeRO stage 0|1|2|3 over the data x sequence group [default 3]\n"
"  --causal, --no-causal  causal attention mask [default causal]\n"
"  --flash, --no-flash  blockwise (flash) attention [default flash]\n"
"  --split S            %s causal split of ring strategies [default %s]\n"
"  --virtual-stages V   interleaved 1F1B: V model chunks per pipeline rank [count; default 1,\n"
"                       searched with --pp auto unless given]; the layers must divide by P x V\n"
"  --framework F        %s: bytes per parameter of the model states\n"
"                       and what --zero shards [default deepspeed: 2 + 2 + 12; megatron:\n"
"                       2 + 4 fp32 main grads + 12, --zero 0|1, default 1; fsdp: 4 + 4 + 8,\n"
"                       --zero 0|2|3]\n"
"  --zero-prefetch D|none  ZeRO-3 layers gathered ahead of compute [layers 0..1024, 0 none; default 1]\n"
"  --nic-bw BW          what-if: NIC bandwidth per GPU per direction, with its unit\n"
"                       (400Gb/s, 50GB/s) [default: the cluster preset's]\n"
"  --intra-bw BW        what-if: in-node bandwidth per GPU per direction [default: preset's]\n"
"  --gpus-per-node G    what-if: GPUs per node [count; default: preset's]\n"
"  --oversub X          what-if: leaf uplink oversubscription of a fat tree or rail\n"
"                       [ratio >= 1; default: preset's]\n"
"  --mem-headroom GIB   device memory a plan leaves unused (CUDA and NCCL context, allocator\n"
"                       fragmentation) [GiB; default: the preset's gpu.reserved_gib]\n"
"  --tp-comm-overlap, --no-tp-comm-overlap  TP all-gathers/reduce-scatters under their\n"
"                       GEMMs (TransformerEngine userbuffers), or not [default: not]\n"
"  --overlap-grad-reduce, --no-overlap-grad-reduce  data-parallel gradient reduction\n"
"                       under backward on its own stream, or after it [default: the\n"
"                       framework's: on for fsdp and deepspeed --zero 3, else off]\n"
"  --overlap-param-gather, --no-overlap-param-gather  the sharded optimizer's weight\n"
"                       gather under the next step's forward [default: after the optimizer\n"
"                       step]; bucket by bucket, Megatron-LM's flag\n",
        SIM_DEFAULT_GPUS, SIM_DEFAULT_GPUS, SIM_DEFAULT_MODEL, SIM_DEFAULT_CLUSTER, v[0], uly_dtype_name(d.dtype), v[1],
        uly_recompute_name(d.recompute), v[2], uly_split_name(d.split), v[3]);
    help_megatron(f);
    fprintf(f,
"  --cuda-graphs, --no-cuda-graphs  the step's kernels replayed from CUDA graphs (no host\n"
"                       issue per kernel), or launched eagerly [default: eager]\n"
"  --step-overhead-ms T  host work per step outside the kernels (data loading, logging,\n"
"                       synchronisations), as measured for your framework [ms; default 0]\n"
"  --attn-kernel K      flash attention kernel %s [default %s]:\n"
"                       the preset's FlashAttention-2 curves times its published speed\n"
"                       (flash3: Hopper GPUs only); cudnn: TransformerEngine's cuDNN\n"
"                       fused attention at NVIDIA's published cuDNN rates (Hopper and\n"
"                       Blackwell; the default under --framework megatron there)\n"
"  --attn-density R     block-sparse attention: fraction of score blocks computed\n"
"                       [fraction in (0, 1]; default 1, dense]\n"
"  --ffn-chunks C       blockwise FFN over C chunks: its f-wide activations not kept\n"
"                       [count; default 1]\n"
"  --loss-chunks C      output layer and loss over C chunks: logits never whole [count;\n"
"                       default 1]\n"
"  --format F           table|json|csv [default table; csv for sweep]\n"
"  --timeline FILE      plan: also write the recommendation's predicted schedule [file;\n"
"                       default none] as Chrome trace events (Perfetto), as trace export\n"
"                       does: one layer and one step, compute, transfers in flight,\n"
"                       exposed time\n"
"  --progress, --no-progress  sweep: a progress bar on stderr, or none [default: shown\n"
"                       on a tty when the sweep runs longer than a second]; the other\n"
"                       commands draw none and accept either\n"
"  --require-fit        exit 3 when no plan fits [default: 0, the output saying why]:\n"
"                       nothing fits, or the pinned layout cannot run (plan, max-seq,\n"
"                       min-gpus, sweep); the output is written as without it\n"
"  -h, --help           this help\n"
"  -V, --version        version\n",
        v[4], uly_attn_kernel_name(d.attn_kernel));
    sim_args_fp8_help(f);
    fprintf(f,
"\n"
"Megatron-LM's names are read as ulysim's: --tensor-model-parallel-size (--tp),\n"
"--pipeline-model-parallel-size (--pp), --virtual-pipeline-model-parallel-size and\n"
"--num-layers-per-virtual-pipeline-stage (--virtual-stages), --micro-batch-size (--batch),\n"
"--global-batch-size (--global-batch), --seq-length (--seq), --context-parallel-size with\n"
"--cp-comm-type p2p|all_gather|a2a|a2a+p2p (ring, allgather-cp, ulysses, usp; a2a+p2p with\n"
"--hierarchical-context-parallel-sizes U,R), --sequence-parallel (drops megatron-tp).\n"
"\n"
"Exit status: 0 success (an answer that no plan fits included), 2 bad usage or input (one\n"
"line on stderr), 1 internal failure; with --require-fit, 3 when no plan fits.\n"
"Under mpirun, max-seq, min-gpus, sweep and plan split their work across ranks;\n"
"rank 0 prints output identical to one process. Presets: $ULYSIM_PRESETS, else\n"
"share/ulysim/presets installed beside this executable (BIN/../share), else the\n"
"source tree's sim/presets (a build tree), else the configure-time prefix's; gnuplot\n"
"scripts likewise ($ULYSIM_PLOTS, share/ulysim/plots, the source tree's plots/).\n");
}

void sim_args_help(FILE *f)
{
    fprintf(f,
"usage: ulysim [COMMAND] [OPTIONS]\n"
"\n"
"Capacity planning for sequence parallelism from an analytic model of each\n"
"strategy below.\n"
"\n"
"commands:\n"
"  plan       (default) best layout of every strategy, the recommendation and its\n"
"             per-layer operations:            ulysim --gpus 64 --seq 1M\n"
"  max-seq    longest sequence each strategy fits on --gpus (--seq: upper bound,\n"
"             default 1G tokens):               ulysim max-seq --gpus 64\n"
"  min-gpus   fewest GPUs on which each strategy fits --seq (--gpus: upper bound,\n"
"             default the cluster's GPUs):      ulysim min-gpus --seq 4M\n"
"  sweep      best layout per (strategy, seq, gpus); --seq and --gpus take lists\n"
"             A,B,C and ranges A..B (A, 2A, 4A, ... up to B):\n"
"                                               ulysim sweep --seq 8K..1M --gpus 8..1024\n"
"  presets    list the model and cluster presets with description and source;\n"
"             `presets show NAME` prints one whole, a template to edit\n");
    /* the registry's commands (commands.c), one line each */
    for (int i = 0; i < sim_command_count(); i++) {
        const sim_command *c = sim_command_at(i);
        fprintf(f, "  %-10s %s (ulysim %s --help)\n", c->name, c->summary, c->name);
    }
    /* the strategy registry, in its order */
    fprintf(f, "\nstrategies (--strategy NAME):\n");
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (s) fprintf(f, "  %-13s %s\n", s->name, s->summary);
    }
    help_options(f);
    sim_layout_help(f); /* args_layout.c */
    sim_moe_help(f);    /* args_moe.c */
    sim_mlm_help(f);
}
