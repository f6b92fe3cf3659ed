#!/usr/bin/env bash
# gpu-check.sh: builds the GPU path of ulysim from this tree and checks it on
# this machine's GPU, within about 8 minutes. For a machine with one NVIDIA
# GPU, the CUDA toolkit (nvcc, cuBLAS), NCCL, a C/C++ compiler and Python,
# and no MPI, no network and no Debian dev packages: it does not use CMake or
# the top-level build (which needs cJSON, GSL, OpenBLAS), only direct
# nvcc/gcc lines into a temporary directory:
#   libulysim (model/, libm only), the plain CPU reference (kernels/cpu/
#   attn_ref.c, attn_merge.c: no BLAS), kernels/cuda, ulygpu (presets
#   embedded, no cJSON), test_kcuda_attn, test_kcuda_fp8, test_kcuda_nccl.
# Then it runs, in order:
#   1. test_kcuda_attn        flash + cuBLAS reference vs the float64 CPU reference
#   1b. test_kcuda_fp8 --time the FP8 GEMM (cuBLASLt) vs float64, then its
#                             TFLOP/s against the bf16 GEMM (skipped, 77,
#                             below compute capability 8.9)
#   2. test_kcuda_nccl        the NCCL layer on this machine's GPU(s)
#   3. ulygpu                 checks, GEMM rate, attention TFLOP/s, plans predicted vs measured
#   4. compute-sanitizer      memcheck, racecheck, synccheck on a small
#                             test_kcuda_attn (when the tool is there and time is left)
# and prints a short table last.
#
# Usage: scripts/gpu-check.sh            (from anywhere; results under $OUT, else ./gpu-check-out)
# Environment:
#   OUT               where results go (default ./gpu-check-out)
#   GPU_CHECK_ARCH    compute capability to build for, e.g. 90 (default: the GPU's, from nvidia-smi)
#   GPU_CHECK_SEED    input seed for ulygpu and the tests (default: the clock; printed)
#   GPU_CHECK_BUDGET  seconds for the whole script (default 480)
#   GPU_CHECK_QUICK=1 ulygpu --quick (smaller sizes)
#   GPU_CHECK_SANITIZE=0   skip compute-sanitizer
#   NVCC, CUDA_HOME, NCCL_HOME   tool locations (default: nvcc on PATH, else /usr/local/cuda)
# Results: $OUT/<date>-<gpu>.txt (everything this script printed) and
# $OUT/<date>-<gpu>.jsonl (ulygpu's trace, format in traces/gpu/README.md),
# $OUT/<date>-<gpu>-gemms.csv (cuBLAS GEMMs by shape, for ulysim calibrate --gemms);
# copy them to traces/gpu/ to publish a run.
# Exit status: 0 everything passed; 1 a test or check failed; 2 the build
# failed or a tool is missing; 77 no GPU (the build still ran).
set -uo pipefail

t_start=$(date +%s)
budget=${GPU_CHECK_BUDGET:-480}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out" || { echo "gpu-check: cannot create $out"; exit 2; }
left() { echo $((budget - ($(date +%s) - t_start))); }

# ------------------------------------------------------------------ the GPU
gpu_name="no-gpu"
cap=""
if command -v nvidia-smi >/dev/null 2>&1; then
    line=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1)
    if [ -n "$line" ]; then
        gpu_name=$(echo "$line" | cut -d, -f1 | sed 's/^ *//; s/ *$//')
        cap=$(echo "$line" | cut -d, -f2 | tr -d ' .')
    fi
fi
slug=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
stamp="$(date -u +%Y-%m-%d)-${slug}"
txt="$out/$stamp.txt"
trace="$out/$stamp.jsonl"
gemms="$out/$stamp-gemms.csv"
exec 3>&1 4>&2
exec > >(tee "$txt") 2>&1
tee_pid=$!
finish() { # let tee write everything, then drop the build directory
    exec 1>&3 2>&4
    wait "$tee_pid" 2>/dev/null
    [ -n "${bd:-}" ] && rm -rf "$bd"
}
trap finish EXIT

echo "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), GPU 0: $gpu_name${cap:+ (compute capability $cap)}"
echo "gpu-check: tree $root$(cd "$root" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/ at /')$(cd "$root" && git status --porcelain 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
echo "gpu-check: results in $out ($stamp.txt, $stamp.jsonl); budget ${budget}s"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv 2>/dev/null | sed 's/^/  /'
fi

# ---------------------------------------------------------------- the tools
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ]; then
    echo "gpu-check: FAIL: no nvcc (set NVCC or CUDA_HOME)"
    exit 2
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$NVCC")")")}
CC=${CC:-gcc}
CXX=${CXX:-g++}
"$NVCC" --version | tail -2 | sed 's/^/  /'
arch=${GPU_CHECK_ARCH:-${cap:-90}}
case "$arch" in
    [0-9][0-9] | [0-9][0-9][0-9]) ;;
    *) echo "gpu-check: FAIL: GPU_CHECK_ARCH '$arch' is not a compute capability like 90"; exit 2 ;;
esac
if [ "$arch" -lt 80 ]; then
    echo "gpu-check: the kernels need sm_80 or newer; this GPU is sm_$arch"
    exit 77
fi
cudalib=""
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$CUDA_HOME/targets/x86_64-linux/lib"; do
    [ -e "$d/libcudart.so" ] && { cudalib=$d; break; }
done
[ -n "$cudalib" ] || { echo "gpu-check: FAIL: libcudart.so not found under $CUDA_HOME"; exit 2; }

# NCCL: NCCL_HOME, the toolkit, the system, or the nvidia-nccl wheel of the machine's Python
nccl_inc="" nccl_lib=""
cands="${NCCL_HOME:-} $CUDA_HOME /usr /usr/local"
py_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || \
          python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
[ -n "$py_nccl" ] && cands="$cands $py_nccl"
for base in $cands; do
    [ -z "$nccl_inc" ] && [ -f "$base/include/nccl.h" ] && nccl_inc="$base/include"
    for l in "$base/lib64" "$base/lib" "$base/lib/x86_64-linux-gnu"; do
        if [ -z "$nccl_lib" ] && { [ -e "$l/libnccl.so" ] || [ -e "$l/libnccl.so.2" ]; }; then nccl_lib=$l; fi
    done
done
if [ -n "$nccl_inc" ] && [ -n "$nccl_lib" ]; then
    echo "  NCCL: $nccl_inc/nccl.h, $nccl_lib"
else
    echo "  NCCL: not found (nccl.h and libnccl); the NCCL test is skipped"
fi

# ---------------------------------------------------------------- the build
bd=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
echo
echo "== build (sm_$arch, in $bd)"
cflags=(-std=c11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
inc=(-I"$root/model/include" -I"$root/model" -I"$root/kernels/cpu" -I"$root/kernels/cuda"
     -I"$root/bench/kernels/cuda/ulygpu" -isystem "$CUDA_HOME/include")
[ -n "$nccl_inc" ] && inc+=(-isystem "$nccl_inc")
nvflags=(-std=c++17 -O3 -lineinfo -gencode "arch=compute_$arch,code=sm_$arch"
         -gencode "arch=compute_$arch,code=compute_$arch"
         -Xcompiler=-Wall,-Wextra,-Wshadow,-Wno-unused-parameter "-DKC_CUDA_ARCHS=\"$arch\"" -I"$root/kernels/cuda")
jobs=$(nproc 2>/dev/null || echo 4)
t_build=$(date +%s)
# one object per source, named after its path; each compiler's output in its own log
obj() { local r=${1#"$root"/}; r=${r//\//_}; echo "$bd/${r%.*}.o"; }
compile() { # source compiler flags...
    local src=$1; shift
    local o; o=$(obj "$src")
    "$@" -c "$src" -o "$o" >"$o.log" 2>&1 || echo "FAILED: $src" >>"$bd/failed"
}
# background compiles, at most $jobs at once; waited for by pid (a bare
# `wait` would also wait for the tee behind this script's output)
pids=()
throttle() {
    local live=() p
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && live+=("$p"); done
    pids=(${live[@]+"${live[@]}"})
    while [ "${#pids[@]}" -ge "$jobs" ]; do
        sleep 0.2
        live=()
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && live+=("$p"); done
        pids=(${live[@]+"${live[@]}"})
    done
}
bg_compile() { throttle; compile "$@" & pids+=($!); all_pids+=($!); }
all_pids=()
# nvcc first (the slow part); the attention kernels with ptxas's register report
cu_flash=(attn_fwd_bf16 attn_fwd_fp16 attn_bwd)
cu_all=("${cu_flash[@]}" attn_flash attn_ref kern_cuda kern_cuda_fp8)
for f in "${cu_flash[@]}"; do bg_compile "$root/kernels/cuda/$f.cu" "$NVCC" "${nvflags[@]}" -Xptxas=-v; done
for f in attn_flash attn_ref kern_cuda kern_cuda_fp8; do bg_compile "$root/kernels/cuda/$f.cu" "$NVCC" "${nvflags[@]}"; done
csrcs=("$root"/model/*.c "$root"/model/strategy/*.c "$root/kernels/cpu/attn_ref.c" "$root/kernels/cpu/attn_merge.c"
       "$root/kernels/cuda/kern_cuda_host.c" "$root"/bench/kernels/cuda/ulygpu/*.c
       "$root/tests/kernels/cuda/test_kcuda_attn.c" "$root/tests/kernels/cuda/test_kcuda_fp8_time.c")
[ -n "$nccl_inc" ] && csrcs+=("$root/kernels/cuda/kern_nccl.c" "$root/tests/kernels/cuda/test_kcuda_nccl.c")
for f in "${csrcs[@]}"; do bg_compile "$f" "$CC" "${cflags[@]}" "${inc[@]}"; done
for p in "${all_pids[@]}"; do wait "$p"; done
if [ ! -f "$bd/failed" ]; then
    kern_o=("$(obj "$root/kernels/cuda/kern_cuda_host.c")")
    for f in "${cu_all[@]}"; do kern_o+=("$(obj "$root/kernels/cuda/$f.cu")"); done
    cpu_o=("$(obj "$root/kernels/cpu/attn_ref.c")" "$(obj "$root/kernels/cpu/attn_merge.c")")
    libs=(-L"$cudalib" -Wl,-rpath,"$cudalib" -lcublasLt -lcublas -lcudart -lm -lpthread)
    link() { # output objects...
        local out=$1; shift
        "$CXX" -o "$bd/$out" "$@" >"$bd/$out.link.log" 2>&1 || echo "FAILED: link $out" >>"$bd/failed"
    }
    link ulygpu "$bd"/bench_kernels_cuda_ulygpu_*.o "$bd"/model_*.o "${kern_o[@]}" "${cpu_o[@]}" "${libs[@]}"
    link test_kcuda_attn "$(obj "$root/tests/kernels/cuda/test_kcuda_attn.c")" "${kern_o[@]}" "${cpu_o[@]}" "${libs[@]}"
    # the FP8 GEMM test with its timing (KCUDA_FP8_TIMING), compiled here rather than with csrcs' flags
    fp8_o="$bd/test_kcuda_fp8.o"
    "$CC" "${cflags[@]}" "${inc[@]}" -DKCUDA_FP8_TIMING -c "$root/tests/kernels/cuda/test_kcuda_fp8.c" -o "$fp8_o" \
        >"$fp8_o.log" 2>&1 || echo "FAILED: $root/tests/kernels/cuda/test_kcuda_fp8.c" >>"$bd/failed"
    link test_kcuda_fp8 "$fp8_o" "$(obj "$root/tests/kernels/cuda/test_kcuda_fp8_time.c")" "${kern_o[@]}" "${libs[@]}"
    if [ -n "$nccl_inc" ]; then
        lnccl=libnccl.so
        [ -e "$nccl_lib/libnccl.so" ] || lnccl=libnccl.so.2
        link test_kcuda_nccl "$(obj "$root/tests/kernels/cuda/test_kcuda_nccl.c")" "$(obj "$root/kernels/cuda/kern_nccl.c")" \
            "${kern_o[@]}" -L"$nccl_lib" -Wl,-rpath,"$nccl_lib" -l:"$lnccl" "${libs[@]}"
    fi
fi
cat "$bd"/*.log >"$bd/build.log" 2>/dev/null
if [ -f "$bd/failed" ]; then
    cat "$bd/build.log"
    cat "$bd/failed"
    echo "gpu-check: FAIL: the build failed (compiler output above)"
    exit 2
fi
nwarn=$(grep -v '^ptxas info' "$bd/build.log" | grep -c -i 'warning' || true)
echo "  built in $(( $(date +%s) - t_build ))s with $jobs jobs: $nwarn warning line(s)"
[ "$nwarn" != 0 ] && grep -v '^ptxas info' "$bd/build.log" | grep -i -A3 'warning' | head -40 | sed 's/^/    /'
echo "  ptxas, attention kernels (entry: registers, spill bytes stored/loaded):"
for f in "${cu_flash[@]}"; do cat "$(obj "$root/kernels/cuda/$f.cu").log"; done | grep -E "Compiling entry|registers|spill stores" | paste - - - |
    sed -nE "s/.*entry function '_Z[0-9]+(kc_[a-z_]+)I7(kc_[a-z0-9]+)([^']*)'.* ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*Used ([0-9]+) registers.*/    \1<\2\3>: \6 regs, spills \4\/\5/p" |
    sed -E 's/Li([0-9]+)E/ \1/g; s/Lb([01])E/ causal=\1/g; s/E?Ev[A-Za-z0-9_]*>/>/'

if [ "$gpu_name" = "no-gpu" ]; then
    echo "gpu-check: built; no NVIDIA GPU visible (nvidia-smi): nothing run"
    exit 77
fi

# ------------------------------------------------------------------ the runs
seed=${GPU_CHECK_SEED:-$(date +%s)}
declare -a res_name res_val
status=0
note() { res_name+=("$1"); res_val+=("$2"); }
run() { # name timeout cmd...
    local name=$1 to=$2; shift 2
    echo
    echo "== $name"
    timeout --kill-after=10 "$to" "$@"
    local rc=$?
    case $rc in
        0) note "$name" "pass" ;;
        77) note "$name" "skipped" ;;
        124 | 137) note "$name" "FAIL (timed out after ${to}s)"; status=1 ;;
        *) note "$name" "FAIL (exit $rc)"; status=1 ;;
    esac
    return $rc
}

cd "$bd" || exit 2
run "test_kcuda_attn" 120 ./test_kcuda_attn "$seed"
run "test_kcuda_fp8" 90 ./test_kcuda_fp8 --time
if [ -x ./test_kcuda_nccl ]; then
    run "test_kcuda_nccl" 90 ./test_kcuda_nccl
else
    note "test_kcuda_nccl" "not built (no NCCL)"
fi

# ulygpu before the sanitizers: its table is the point of the run
ub=$(( $(left) - 45 ))
[ "$ub" -gt 330 ] && ub=330
if [ "$ub" -lt 60 ]; then
    note "ulygpu" "skipped (time budget: ${ub}s left)"
    status=1
else
    quick=()
    [ "${GPU_CHECK_QUICK:-0}" = 1 ] && quick=(--quick)
    run "ulygpu" "$ub" ./ulygpu ${quick[@]+"${quick[@]}"} --seed "$seed" --budget-s $((ub - 30)) --trace "$trace" \
        --gemm-table "$gemms"
fi

# compute-sanitizer on the small case, while time is left (each tool runs the kernels 10-100x slower)
san=$(command -v compute-sanitizer 2>/dev/null || ls "$CUDA_HOME"/bin/compute-sanitizer 2>/dev/null || true)
if [ "${GPU_CHECK_SANITIZE:-1}" = 0 ]; then
    note "compute-sanitizer" "skipped (GPU_CHECK_SANITIZE=0)"
elif [ -z "$san" ]; then
    note "compute-sanitizer" "not found"
else
    for tool in memcheck racecheck synccheck; do
        st=$(( $(left) - 15 ))
        [ "$st" -gt 150 ] && st=150
        if [ "$st" -lt 30 ]; then
            note "sanitizer $tool" "skipped (time budget)"
            continue
        fi
        run "sanitizer $tool" "$st" "$san" --tool "$tool" --error-exitcode 9 ./test_kcuda_attn --small "$seed"
    done
fi

# -------------------------------------------------------------- the table
echo
echo "== gpu-check: $gpu_name, $(date -u +%Y-%m-%d), seed $seed, $(( $(date +%s) - t_start ))s"
for i in "${!res_name[@]}"; do printf '  %-22s %s\n' "${res_name[$i]}" "${res_val[$i]}"; done
if [ -f "$txt" ]; then
    sed -n '/^== summary:/,$p' "$txt" | grep -v '^== summary:' | grep -v '^ulygpu: trace written' | sed 's/^  /  ulygpu: /' | head -30
fi
echo "  results                $txt, $trace$( [ -f "$trace.failed" ] && echo '.failed')"
exit $status
