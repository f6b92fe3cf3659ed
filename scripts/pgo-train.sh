#!/usr/bin/env bash
# The training run of the profile-guided build (scripts/setup.sh): the
# commands a user runs, as the README shows them (plan, max-seq, min-gpus,
# sweep), each strategy's plan, and the options that take other paths
# through the model (recompute modes, dtypes, ZeRO stages, pipelines,
# masks, other models and clusters). Not the benchmarks: a build trained on
# plan_bench would be tuned to plan_bench. Takes well under a second.
# Usage: scripts/pgo-train.sh ULYSIM (a build with -DULY_PGO=generate)
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 ULYSIM (an instrumented ulysim: cmake -DULY_PGO=generate)" >&2
    exit 2
fi
u=$1
# a failing command is named, so that a failed training (or its test) says which
run() {
    local rc=0
    "$u" "$@" >/dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "pgo-train: $u $* exited $rc" >&2
        exit 1
    fi
}
run --gpus 64 --seq 1M
run --gpus 8
run --gpus 512 --seq 4M --model llama3-70b --pp auto --global-batch 64
run max-seq --gpus 64
run min-gpus --seq 4M
run sweep --seq 8K..1M --gpus 8..1024
run sweep --seq 32K..512K --gpus 16..256 --recompute selective --format json
for s in ulysses ring rsa allgather-cp megatron-sp usp megatron-tp; do
    run plan --strategy "$s" --gpus 64 --seq 256K
    run plan --strategy "$s" --gpus 32 --seq 128K --recompute none --zero 1
done
run --gpus 16 --seq 64K --dtype fp32 --no-causal --zero 0
run --gpus 128 --seq 2M --recompute selective --zero 2 --pp 4
