#!/usr/bin/env bash
# gpu-layer.sh: one transformer layer of a model preset trained on this
# machine's NVIDIA GPU with PyTorch (bf16, causal flash attention through
# F.scaled_dot_product_attention, forward, backward and Adam, 8K to 128K
# tokens), timed and traced with torch.profiler, then set against ulysim's
# prediction for this GPU's cluster preset: `ulysim validate --runs` on the
# runs file it writes and `ulysim validate --torch-trace` on each trace.
# About 5 minutes, at most 8. scripts/gpu_layer.py does the work; this
# checks the machine first and builds ulysim when it is not built.
#
# Usage: scripts/gpu-layer.sh [--model NAME] [--cluster NAME] [--seqs 8K,...,128K] [--out DIR] [--dry-run]
#   (gpu_layer.py --help for the rest). Results: traces/gpu/DATE-GPU/ (runs.csv,
#   torch-SEQ.trace.json, the model file, validate-*.txt).
# Environment: ULYSIM (the ulysim binary; default build/sim/ulysim, built here
#   with cmake when missing), PYTHON (default python3).
# Exit status: 0 done; 2 no GPU, no PyTorch, or ulysim cannot be built (one line).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${PYTHON:-python3}
ulysim=${ULYSIM:-$root/build/sim/ulysim}
fail() { echo "gpu-layer.sh: $*" >&2; exit 2; }

dry=0
for a in "$@"; do [ "$a" = --dry-run ] && dry=1; done
command -v "$py" >/dev/null || fail "no $py (valid: PYTHON=path to a Python 3 with torch)"
if [ $dry = 0 ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 ||
    fail "no NVIDIA GPU (nvidia-smi -L fails); run it on a machine with one"
  "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 ||
    fail "no PyTorch with CUDA ($py -c 'import torch; torch.cuda.is_available()' fails or is False)"
fi
if [ ! -x "$ulysim" ]; then
  { cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DULY_CUDA=OFF &&
    cmake --build "$root/build" -j"$(nproc)" --target ulysim; } >/dev/null 2>&1 ||
    fail "cannot build ulysim ($ulysim missing; cmake --build build --target ulysim fails)"
fi
exec "$py" "$root/scripts/gpu_layer.py" --ulysim "$ulysim" "$@"
