#!/bin/sh
# fp8_trace.sh ULYSIM WORKDIR: a torch.profiler trace whose GEMM kernels are
# FP8 (e4m3 in cuBLAS's names) is an FP8 run: validated against a bf16 plan
# it is refused with one line naming a kernel; with --dtype fp8 it is read.
set -u
U=$1 W=$2
mkdir -p "$W"
t=$W/fp8.trace.json
printf '{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":100,"dur":100},' >"$t"
printf '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":110,"dur":2,"args":{"correlation":1}},' >>"$t"
printf '{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n","ts":120,"dur":30,"args":{"correlation":1}}]}' >>"$t"
"$U" validate --torch-trace "$t" --gpus 8 --seq 8K >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q 'an FP8 training run (1 GEMM kernels of FP8 operands, e.g. sm90_xmma_gemm_e4m3' "$W/err" ||
    { echo "FAIL: bf16 plan: exit $rc: $(cat "$W/err")"; exit 1; }
"$U" validate --torch-trace "$t" --gpus 8 --seq 8K --dtype fp8 >"$W/out" 2>"$W/err" ||
    { echo "FAIL: --dtype fp8: $(cat "$W/err")"; exit 1; }
echo "fp8_trace: all passed"
