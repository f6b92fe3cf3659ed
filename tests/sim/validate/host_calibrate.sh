#!/bin/sh
# sim.validate.host_calibrate: `ulysim calibrate --host` on this host, end to
# end, in a temporary configuration directory: it runs the OpenBLAS probe,
# the kernel runs and the micro-benchmark under mpirun, writes
# host-<cpu>-<cores>-np2.json with the host it measured, and `ulysim
# validate` of a fresh harness run then prices it on that profile, names it
# and warns of nothing. The errors are not held to a limit here (a loaded
# host's times are not the proof's: scripts/validate-cpu.sh --calibrate-host
# is).
# usage: host_calibrate.sh ULYSIM ULYHARNESS MPIEXEC OUTDIR
set -u
U=$1 H=$2 M=$3 D=$4
rm -rf "$D" && mkdir -p "$D" || exit 1
fail() { echo "host_calibrate: $*" >&2; exit 1; }
export ULYSIM_CONFIG_DIR="$D/config" OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$U" calibrate --host --quick --ranks 2 --harness "$H" --mpirun "$M" --keep "$D/runs" >"$D/cal.out" 2>"$D/cal.err" ||
    fail "calibrate --host exited $?: $(tail -5 "$D/cal.err")"
prof=$(ls "$D"/config/host-*-np2.json 2>/dev/null | head -1)
[ -n "$prof" ] || fail "no host-*-np2.json in $D/config: $(tail -3 "$D/cal.out")"
grep -q '"host":' "$prof" && grep -q '"cpu_model":' "$prof" || fail "$prof records no host"
grep -q "^# OpenBLAS kernels: " "$D/cal.out" || fail "calibrate --host did not say which OpenBLAS kernels it measured with"
grep -q "^# host profile for 2 ranks: $prof" "$D/cal.out" || fail "calibrate --host did not name $prof"
# the harness runs with the OpenBLAS kernels calibrate measured with, as it
# tells the user to (which kernels win the probe varies with the host's load)
core=$(sed -n 's/^# host profile for 2 ranks: .*run with OPENBLAS_CORETYPE=\([A-Za-z0-9_]*\).*/\1/p' "$D/cal.out")
[ -n "$core" ] && export OPENBLAS_CORETYPE="$core"
flags=""
"$M" --version 2>&1 | grep -q "Open MPI" && flags="--oversubscribe --allow-run-as-root"
# shellcheck disable=SC2086
"$M" -np 2 $flags "$H" --strategy ulysses --seq 1024 --zero 0 --warmup 1 --reps 3 --quiet --out "$D/u.trace" \
    >"$D/run.out" 2>&1 || fail "the harness run failed: $(tail -3 "$D/run.out")"
"$U" validate "$D/u.trace" --max-error none >"$D/val.out" 2>"$D/val.err" || fail "validate exited $?: $(cat "$D/val.err")"
name=$(basename "$prof" .json)
grep -q "priced on $name ($prof)" "$D/val.out" || fail "validate did not price the run on $prof: $(grep '^## ' "$D/val.out")"
grep -q "this host's profile (ulysim calibrate --host)" "$D/val.out" || fail "validate did not say it used this host's profile"
[ ! -s "$D/val.err" ] || fail "validate warned: $(cat "$D/val.err")"
echo "host_calibrate: $prof written and used: $(grep '^# step ' "$D/val.out")"
