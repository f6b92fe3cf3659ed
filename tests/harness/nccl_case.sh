#!/bin/sh
# nccl_case.sh: one case of ulyharness --backend nccl, causal and then
# non-causal: each run must pass its own checks (result against the float64
# reference, bytes against the plan) and its trace must pass trace_check.
# Exits 77 (ctest: skipped) when this machine cannot run it: no CUDA device
# (the harness's own exit 77, whose message says why), or fewer GPUs than
# the ranks asked for (NCCL needs one GPU per rank).
#   nccl_case.sh NP LAUNCHER NPFLAG PREFLAGS HARNESS CHECK OUTDIR NAME ARGS...
# NP 0: one process without the launcher (MPI singleton); PREFLAGS is
# @-separated (may be empty).
np=$1 launcher=$2 npflag=$3 pre=$(printf '%s' "$4" | tr '@' ' ') harness=$5 check=$6 out=$7 name=$8
shift 8
mkdir -p "$out" || exit 1
for mask in causal no-causal; do
  trace="$out/nccl-$name-$mask.trace"
  rm -f "$trace" "$trace.failed"
  if [ "$np" = 0 ]; then
    log=$("$harness" --backend nccl "$@" "--$mask" --out "$trace" 2>&1)
  else
    # shellcheck disable=SC2086 # PREFLAGS are words
    log=$("$launcher" "$npflag" "$np" $pre "$harness" --backend nccl "$@" "--$mask" --out "$trace" 2>&1)
  fi
  rc=$?
  printf '%s\n' "$log"
  if [ "$rc" -eq 77 ]; then
    echo "SKIPPED: ulyharness --backend nccl found no CUDA device (exit 77): this test runs on a GPU machine"
    exit 77
  fi
  if [ "$rc" -eq 2 ] && printf '%s' "$log" | grep -q "NCCL needs one GPU per rank"; then
    echo "SKIPPED: $np ranks need $np GPUs on this host"
    exit 77
  fi
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: ulyharness --backend nccl exited with $rc (--$mask)"
    exit 1
  fi
  if ! printf '%s\n' "$log" | grep -q "^PASS: "; then
    echo "FAIL: no PASS line (--$mask)"
    exit 1
  fi
  if ! "$check" "$trace"; then
    echo "FAIL: trace_check rejected $trace"
    exit 1
  fi
done
exit 0
