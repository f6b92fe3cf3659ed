/* attn_cudnn.c: cuDNN fused attention (TransformerEngine's FusedAttention,
 * the kernel Megatron-Core runs on Hopper and Blackwell), priced on its own
 * curves (docs/model.md, "Attention kernels"): the forward and the backward
 * TFLOP/s NVIDIA publishes for cuDNN's SDPA in training, by sequence length,
 * over the dense bf16 peak. Source: NVIDIA/cudnn-frontend,
 * benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/
 * llama3.1_20260227_034703.csv (commit 3929da2ef4c1dba1bb8acb68727b9134f26f40c0):
 * NVIDIA H200, cuDNN 9.19.1, bf16, batch 1, 64 query and 8 KV heads of
 * 128, q = kv = 2K..32K tokens, causal (top_left) and no mask; forward and
 * backward timed apart, backward FLOPs 2.5x the forward's. Divided by 989
 * TFLOP/s (H200 dense bf16). Pure data. */
#include "ulysim.h"

#define PTS(a, b, c, d, e) {5, {2048, 4096, 8192, 16384, 32768}, {a / 989.0, b / 989.0, c / 989.0, d / 989.0, e / 989.0}}
const uly_curve uly_cudnn_attn_eff[2][2] = {
    /* forward: no mask 633/671/691/702/693, causal 484/591/644/673/688 TFLOP/s */
    {PTS(633, 671, 691, 702, 693), PTS(484, 591, 644, 673, 688)},
    /* backward: no mask 504/560/594/612/572, causal 370/474/541/579/581 */
    {PTS(504, 560, 594, 612, 572), PTS(370, 474, 541, 579, 581)},
};
#undef PTS
