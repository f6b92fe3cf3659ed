#!/bin/bash
# The launch script of the run ../data/gpt7b-tp8-sp.log records (its argument block
# written back as Megatron-LM's arguments), for `runs from-megatron
# --args-file` on an excerpt of that log (sim.ingest.from_megatron_excerpt).
# recompute_granularity full is given on ulysim's command line (--recompute
# full) until --recompute-granularity is read.
GPT_ARGS="--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 16384 \
          --seq-length 8192 --max-position-embeddings 8192 \
          --vocab-size 50257 --make-vocab-size-divisible-by 16"
torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \
    $GPT_ARGS \
    --micro-batch-size 1 --global-batch-size 64 \
    --bf16 --use-distributed-optimizer \
    --tensor-model-parallel-size 8 --sequence-parallel \
    --train-iters 100 --log-interval 10 --lr 3e-4
