#!/bin/bash
# A launch script exercising the shell subset --args-file reads (args_file.c);
# sim.megatron.shell_subset checks it gives the same plan as the flags written
# out by hand in tests/sim/megatron/CMakeLists.txt.
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1

NUM_LAYERS=${NUM_LAYERS:-32}        # the default word: NUM_LAYERS is not set
HIDDEN="4096"
TP=$1                               # a positional parameter: unset, never used below
TP_SIZE=${2:-2}
WORLD=$(($TP_SIZE * 4))             # arithmetic: unknown, and unused
CKPT="/checkpoints/$(date +%s)"     # a command substitution in an ignored path

MODEL_ARGS=(
    --num-layers $NUM_LAYERS
    --hidden-size ${HIDDEN}
    # a comment inside an array
    --num-attention-heads 32 --group-query-attention --num-query-groups 8
    --ffn-hidden-size 14336 --swiglu
    --normalization RMSNorm --position-embedding-type rope
    --untie-embeddings-and-output-weights
    --attention-dropout 0.0 --hidden-dropout 0.0
)
MODEL_ARGS+=(--vocab-size 128000)   # padded to 128 x TP = 256: 128000 already is
TRAIN_ARGS="--micro-batch-size 1 --global-batch-size 64 --bf16"
OPT='--use-distributed-optimizer --overlap-grad-reduce'
mkdir -p "$CKPT"

torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    $TRAIN_ARGS \
    ${OPT} \
    --tensor-model-parallel-size $TP_SIZE --sequence-parallel \
    --seq-length 8192 \
    --lr 3e-4 --data-path 0.5 /data/a 0.5 /data/b --split 99,1,0 \
    --save "$CKPT" --log-interval 1 2>&1 | tee train.log
