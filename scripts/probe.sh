#!/bin/sh
# probe.sh: the hostile probe, kept in the repository: every
# reader (model and cluster presets, runs files, Megatron-LM logs, PyTorch
# traces, harness traces, calibrate's input), every flag family of ulysim and
# ulyharness, output targets (directories, FIFOs, read-only, existing files,
# /dev/full) and signals. The cases are scripts/probe-cases.sh; each is
#   c WANT NEEDLE COMMAND...  (scripts/probe-hxsig.sh: the harness signal cases)
# WANT the exit status it must have (2: bad input, 0: a correct result, 1: a
# write the system refused, e.g. /dev/full), NEEDLE what the one line on
# stderr must hold (the value; "" for none). Every case is checked for: no
# crash (a signal exit), no hang (a timeout), the status wanted, exactly one
# line on stderr for a non-zero exit, naming NEEDLE, and nothing destroyed
# (the files under keep/ unchanged, no FILE.tmp.PID left anywhere).
# usage: scripts/probe.sh [--fast] [BUILD_DIR]   (default build/)
#   --fast: every 15th case and the signal cases (what ctest runs: repo.probe_fast)
# Prints each failure and the counts; exit 0 when every case was clean.
set -u
fast=0
[ "${1:-}" = --fast ] && { fast=1; shift; }
root=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$root/build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
U=$B/sim/ulysim H=$B/harness/ulyharness
[ -x "$U" ] || { echo "probe: no $U (build ulysim first)"; exit 2; }
[ -x "$H" ] || H=""
scale=${ULY_TEST_TIMEOUT_SCALE:-1}
T=$((30 * scale))
W=${PROBE_DIR:-$B/probe}
rm -rf "$W" && mkdir -p "$W/keep" "$W/ro" || exit 2
export ULYSIM_PRESETS="$root/sim/presets" ULYSIM_PLOTS="$root/plots"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
D=$root/tests
n=0 ran=0 clean=0 rc2=0 rc0=0 rc1=0 bad_rc=0 lines=0 unnamed=0 crash=0 hang=0 destroyed=0 skipped=0
fail() { echo "FAIL [$n] $*"; }
keep_sum() { cksum "$W"/keep/* 2>/dev/null | cksum; }

# c WANT NEEDLE COMMAND...
c() {
    want=$1 needle=$2
    shift 2
    n=$((n + 1))
    if [ $fast = 1 ] && [ $((n % 15)) != 0 ] && [ "${ALWAYS:-0}" != 1 ]; then skipped=$((skipped + 1)); return; fi
    ran=$((ran + 1))
    before=$(keep_sum)
    timeout -k 5 "$T" "$@" >"$W/out" 2>"$W/err" </dev/null
    rc=$?
    ok=1
    if [ $rc = 124 ] || [ $rc = 137 ]; then hang=$((hang + 1)); fail "HANG ($T s): $*"; ok=0
    elif [ $rc -gt 128 ]; then crash=$((crash + 1)); fail "CRASH (signal $((rc - 128))): $*"; ok=0
    elif [ $rc != "$want" ]; then bad_rc=$((bad_rc + 1)); fail "exit $rc, want $want: $* :: $(head -c 300 "$W/err")"; ok=0
    elif [ $rc != 0 ]; then
        if [ "$(wc -l <"$W/err")" != 1 ]; then lines=$((lines + 1)); fail "$(wc -l <"$W/err") lines on stderr: $* :: $(head -c 300 "$W/err")"; ok=0
        elif [ -n "$needle" ] && ! grep -qF -- "$needle" "$W/err"; then unnamed=$((unnamed + 1)); fail "stderr lacks '$needle': $* :: $(cat "$W/err")"; ok=0
        fi
    fi
    if [ "$(keep_sum)" != "$before" ]; then destroyed=$((destroyed + 1)); fail "a file under keep/ changed: $*"; ok=0; restore; fi
    left=$(find "$W" -name '*.tmp.*' 2>/dev/null | head -3)
    if [ -n "$left" ]; then destroyed=$((destroyed + 1)); fail "left $left: $*"; ok=0; find "$W" -name '*.tmp.*' -exec rm -f {} +; fi
    if [ $ok = 1 ]; then
        clean=$((clean + 1))
        case $rc in 0) rc0=$((rc0 + 1)) ;; 1) rc1=$((rc1 + 1)) ;; 2) rc2=$((rc2 + 1)) ;; esac
    fi
}
# files that must survive every case, and the inputs the cases edit
restore() {
    printf 'precious run data\n' >"$W/keep/runs.csv"
    printf '{"precious": true}\n' >"$W/keep/out.json"
    printf 'precious image\n' >"$W/keep/p.png"
    printf 'precious csv\n' >"$W/keep/p.csv"
    printf 'precious trace\n' >"$W/keep/h.trace"
}
restore
. "$root/scripts/probe-cases.sh"
echo "probe: $n cases ($ran run, $skipped skipped): $clean clean ($rc2 exit 2 with one line naming the value," \
     "$rc0 correct results, $rc1 write failures with one line); $bad_rc wrong status, $lines not one line," \
     "$unnamed not naming the value, $crash crashes, $hang hangs, $destroyed destroyed or left behind"
[ $clean = $ran ]
