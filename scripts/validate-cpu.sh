#!/usr/bin/env bash
# validate-cpu.sh: the validation loop end to end on this CPU host (traces/cpu/).
#
#   1. fresh ulyharness runs: collective micro-benchmarks per rank count,
#      "kernel" runs (the strategies that are NOT validated: megatron-sp and
#      allgather-cp, for the compute rates) with one rank per core, and the
#      strategy runs to validate (ulysses, ring, usp) at several sequence
#      lengths and rank counts: the strategies of one (ranks, length) run in
#      turn, --rounds times in a rotating order, and the round with the median
#      measured step is kept for each (the others stay in rounds/), so that a
#      drift of the host's speed over minutes does not decide a ranking;
#   2. ulysim calibrate, per rank count, on the micro-benchmarks and the
#      kernel runs only (rates scaled by the rank count's share of the cores);
#   3. ulysim validate of the strategy runs on those profiles, held to the
#      acceptance: bytes equal for every op, median |step-time error| <= 10%,
#      median |per-op error| <= 20%, the strategy ranking at each size agrees
#      with the measurement in at least 80% of the pairs; and one MoE layer's
#      run (8 experts, top-2, EP over the first rank count), held to equal
#      bytes only ("RESULT moe").
# Where the host can answer fairly: the validated (headline) set uses at most
# one rank per core, each rank pinned to its core (mpirun --bind-to core
# --map-by core); runs with more ranks than cores (--oversubscribed "4") are
# validated apart, labelled oversubscribed, and never enter the headline.
# The last lines are the summary: "RESULT headline: ..." (and "RESULT
# oversubscribed: ..."), each with step median/max, per-op median/max,
# bytes, ranking and pass/fail.
# Each trace is written with a .cmd file beside it: the exact command, the
# date and how much CPU other processes used while it ran (the host is
# shared: runs wait for a quiet moment and are repeated when disturbed).
#
# usage: scripts/validate-cpu.sh [--build DIR] [--out DIR] [--record] [--quick]
#                                [--ranks "2 4"] [--seqs "1024 2048 4096"]
#                                [--quiet-load F] [--quiet-wait S] [--max-other F] [--tries N] [--nice N]
#                                [--max-error F] [--min-agreement F] [--sync op|pass]
#                                [--rounds N] [--kernel-ranks P] [--splits "zigzag contiguous"]
#   --build DIR   build tree with sim/ulysim and harness/ulyharness (default: build)
#   --out DIR     where traces and profiles go (default: a new /tmp/ulysim-validate.XXXXXX)
#   --record      write into traces/cpu/ (the recorded set the ctest test reads)
#   --quick       the headline rank count only, two lengths, one round, fewer reps
#   --ranks L     rank counts of the headline set (default: the cores; each at most the cores)
#   --oversubscribed L  rank counts above the cores, validated apart (default: none)
#   --max-op-error F    the per-op median |error| limit (default 0.20)
#   --quiet-load F   before each run, wait (at most --quiet-wait s, default 900) until the
#                 host is less than F busy (fraction of all cores over 3 s; default 0.10)
#   --max-other F repeat a run (at most --tries times, default 4) when other processes used
#                 more than F of the host's CPU time while it ran (default 0.05)
#   --nice N      run the harness at this niceness, and the script's scheduling group
#                 too where Linux autogroup is on (e.g. -10 as root on a host shared
#                 with builds: the ranks then get most of the cores; default 0)
#   --sync M      the harness's timing (ulyharness --sync): op (default) puts a barrier
#                 before every op; pass runs the ops of a pass back to back after one
#                 barrier, as training does
#   --rounds N    rounds of the strategy runs per (ranks, length) (default 3)
#   --splits L    causal splits of ring and usp (default "zigzag contiguous": the
#                 contiguous split loads the last rank with 2r-1 times the first's
#                 attention, a real difference the ranking should find; ulysses has none)
#   --kernel-ranks P  ranks of the kernel runs (default: the cores, at most the largest
#                 of --ranks): one rank per core measures the kernels, not the scheduler
#   --calibrate-host  step 2 is `ulysim calibrate --host` (the profile a new user makes:
#                 its own kernel and micro-benchmark runs, into OUT/config, which step 3
#                 reads as ULYSIM_CONFIG_DIR, validating without --cluster) instead of
#                 ulysim calibrate on this script's kernel runs
# Exit: the exit status of ulysim validate (0 pass, 1 fail), 2 on a setup error.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
out=
record=0
ranks=
over=
seqs="1024 2048 4096"
kseqs="384 768 1536 3072"
quiet_load=0.10
quiet_wait=900
max_other=0.05
tries=4
niceness=0
max_error=0.10
max_op_error=0.20
min_agree=0.8
reps=9
sync=op
rounds=3
kranks=
splits="zigzag contiguous"
cal_host=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --record) record=1; shift ;;
    --quick) seqs="1024 2048"; kseqs="384 768 1536"; reps=5; rounds=1; shift ;;
    --ranks) ranks=$2; shift 2 ;;
    --oversubscribed) over=$2; shift 2 ;;
    --max-op-error) max_op_error=$2; shift 2 ;;
    --seqs) seqs=$2; shift 2 ;;
    --kseqs) kseqs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --sync) sync=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --splits) splits=$2; shift 2 ;;
    --kernel-ranks) kranks=$2; shift 2 ;;
    --calibrate-host) cal_host=1; shift ;;
    --quiet-load) quiet_load=$2; shift 2 ;;
    --quiet-wait) quiet_wait=$2; shift 2 ;;
    --max-other) max_other=$2; shift 2 ;;
    --tries) tries=$2; shift 2 ;;
    --nice) niceness=$2; shift 2 ;;
    --max-error) max_error=$2; shift 2 ;;
    --min-agreement) min_agree=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "validate-cpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" 2>/dev/null && pwd || echo "$build") # absolute: calibrate and validate run in $out
ulysim=$build/sim/ulysim
harness=$build/harness/ulyharness
for b in "$ulysim" "$harness"; do
  [ -x "$b" ] || { echo "validate-cpu.sh: $b not found: build the ulysim and ulyharness targets (cmake --build $build --target ulysim ulyharness)" >&2; exit 2; }
done
if [ $record = 1 ]; then
  out=$here/traces/cpu
  mkdir -p "$out"
elif [ -z "$out" ]; then
  out=$(mktemp -d /tmp/ulysim-validate.XXXXXX)
else
  mkdir -p "$out"
fi
mpirun=${MPIEXEC:-mpirun}
mpiflags=()
if "$mpirun" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then mpiflags=(--oversubscribe --allow-run-as-root); fi
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# validate-cpu.sh: traces and profiles in $out"
# --nice: the niceness of the ranks, and (Linux autogroup scheduling, where
# nice only ranks processes inside one autogroup) of the script's autogroup,
# restored at exit
if [ "$niceness" != 0 ] && [ -w /proc/self/autogroup ]; then
  old_ag=$(sed -n 's/.*nice \(-\{0,1\}[0-9]*\).*/\1/p' /proc/self/autogroup)
  if echo "$niceness" > /proc/self/autogroup 2>/dev/null; then
    trap 'echo "${old_ag:-0}" > /proc/self/autogroup 2>/dev/null || true' EXIT
    echo "# autogroup: nice $niceness (was ${old_ag:-0}) while the script runs"
  fi
fi

hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
ncpu=$(nproc)
[ -n "$ranks" ] || ranks=$ncpu
for p in $ranks; do
  if [ "$p" -gt "$ncpu" ]; then
    echo "validate-cpu.sh: --ranks $p: more ranks than the $ncpu cores; give it with --oversubscribed (validated apart)" >&2
    exit 2
  fi
done
for p in $over; do
  [ "$p" -gt "$ncpu" ] || { echo "validate-cpu.sh: --oversubscribed $p: not more than the $ncpu cores; give it with --ranks" >&2; exit 2; }
done
# one rank per core, pinned (Open MPI); more ranks than cores: not bound
bind_for() {
  if [ ${#mpiflags[@]} -gt 0 ]; then
    if [ "$1" -le "$ncpu" ]; then echo "--bind-to core --map-by core"; else echo "--bind-to none"; fi
  fi
}
# busy and total jiffies of all CPUs (steal counts as busy: the VM lost the core)
stat_cpu() { awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; t=b+$5+$6; print b, t; exit}' /proc/stat; }
# CPU seconds used so far by this shell's finished children (bash `times`)
# (the builtin must run in this shell, not in a $(...) subshell: its file is read afterwards)
child_cpu_to() { times > "$out/.times"; tail -1 "$out/.times" | awk '{s=0; for(i=1;i<=2;i++){split($i,a,/[ms]/); s+=a[1]*60+a[2]} print s}' > "$1"; }
# busy fraction of the host over $1 seconds
busy_over() {
  local b0 t0 b1 t1
  read -r b0 t0 < <(stat_cpu); sleep "$1"; read -r b1 t1 < <(stat_cpu)
  awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN{printf "%.3f", (t > 0 ? b / t : 1)}'
}
# Waits until the host is idle (busy < $quiet_load of all cores over 3 s, twice
# in a row), at most $quiet_wait seconds.
wait_quiet() {
  local waited=0 ok=0 b
  while :; do
    b=$(busy_over 3); waited=$((waited + 3))
    if awk -v b="$b" -v q="$quiet_load" 'BEGIN{exit !(b < q)}'; then ok=$((ok + 1)); else ok=0; fi
    [ $ok -ge 2 ] && return 0
    if [ $waited -ge "$quiet_wait" ]; then
      echo "# WARNING: host still busy ($b of $ncpu cores) after ${quiet_wait}s: running anyway" >&2
      return 0
    fi
  done
}

# run NAME NP ARGS...: one harness run, its trace NAME.trace and NAME.cmd.
# A run during which other processes used more than $max_other of the host's
# CPU time is repeated (up to $tries times): the host is shared.
run() {
  local name=$1 np=$2; shift 2
  local bind; read -r -a bind <<< "$(bind_for "$np")"
  local cmd=(nice -n "$niceness" "$mpirun" -np "$np" "${mpiflags[@]}" "${bind[@]}" "$harness" "$@" --out "$out/$name.trace")
  local try other b0 t0 b1 t1 c0 c1 w0 w1
  for try in $(seq 1 "$tries"); do
    wait_quiet
    read -r b0 t0 < <(stat_cpu); child_cpu_to "$out/.c0"; w0=$(date +%s.%N)
    if ! "${cmd[@]}" --quiet > "$out/$name.log" 2>&1; then
      echo "validate-cpu.sh: harness run $name failed:" >&2; tail -5 "$out/$name.log" >&2; exit 2
    fi
    read -r b1 t1 < <(stat_cpu); child_cpu_to "$out/.c1"; w1=$(date +%s.%N)
    c0=$(cat "$out/.c0"); c1=$(cat "$out/.c1")
    # CPU time of everything else during the run, as a fraction of the host's
    other=$(awk -v b="$((b1 - b0))" -v hz="$hz" -v c0="$c0" -v c1="$c1" -v w="$w1" -v w0="$w0" -v n="$ncpu" \
      'BEGIN{o = b / hz - (c1 - c0); if (o < 0) o = 0; printf "%.3f", o / ((w - w0) * n)}')
    if awk -v o="$other" -v m="$max_other" 'BEGIN{exit !(o <= m)}'; then break; fi
    if [ "$try" -lt "$tries" ]; then
      echo "#   $name: other processes used $other of the host during the run; again ($try/$tries)" >&2
    else
      echo "#   $name: other processes used $other of the host during the run; kept (no tries left)" >&2
    fi
  done
  {
    echo "# $name.trace: made by (from the repository root; harness from build tree $(realpath --relative-to="$here" "$build" 2>/dev/null || echo "$build"))"
    printf '%q ' env OPENBLAS_NUM_THREADS=1 nice -n "$niceness" "$mpirun" -np "$np" "${mpiflags[@]}" "${bind[@]}" "$(realpath --relative-to="$here" "$harness" 2>/dev/null || echo "$harness")" "$@" --out "$name.trace"; echo
    echo "# date $(date -u +%Y-%m-%dT%H:%M:%SZ); host $(hostname), $ncpu cores; try $try; CPU used by other processes during the run: $other of the host; loadavg after: $(cat /proc/loadavg)"
  } > "$out/$name.cmd"
  rm -f "$out/$name.log" "$out/.times" "$out/.c0" "$out/.c1"
  echo "  $name.trace (others: $other)"
}

common=(--zero 0 --warmup 1 --reps "$reps" --sync "$sync")
if [ -z "$kranks" ]; then
  kranks=$ncpu
  for p in $ranks; do :; done
  [ "$kranks" -gt "$p" ] && kranks=$p
fi
# measured step (ms) of a plan trace: the meas_ms column of `ulysim validate --brief`
meas_ms() { "$ulysim" validate "$1" --brief | awk '/^## runs/{f = 1; next} f && $1 !~ /^#/ && NF > 5 {print $(NF - 4); exit}'; }
echo "# 1. runs"
[ $cal_host = 1 ] && kseqs=""  # calibrate --host makes its own
for s in $kseqs; do
  run "kern-megatron-sp-np$kranks-s$s" "$kranks" --strategy megatron-sp --seq "$s" "${common[@]}"
  run "kern-allgather-cp-np$kranks-s$s" "$kranks" --strategy allgather-cp --seq "$s" "${common[@]}"
done
mkdir -p "$out/rounds"
for p in $ranks $over; do
  [ $cal_host = 1 ] || run "mb-np$p" "$p" --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20
  # a validated configuration: strategy name and split (tag "" for zigzag)
  confs=(ulysses:zigzag)
  for sp in $splits; do
    confs+=("ring:$sp")
    [ "$p" -ge 4 ] && confs+=("usp:$sp")
  done
  nc=${#confs[@]}
  for s in $seqs; do
    for k in $(seq 1 "$rounds"); do
      for j in $(seq 0 $((nc - 1))); do
        c=${confs[$(((j + k - 1) % nc))]}; st=${c%%:*}; sp=${c#*:}
        tag=$st; [ "$sp" = zigzag ] || tag=$st-$sp
        run "rounds/val-$tag-np$p-s$s.r$k" "$p" --strategy "$st" --split "$sp" --seq "$s" "${common[@]}"
      done
    done
    for c in "${confs[@]}"; do
      st=${c%%:*}; sp=${c#*:}; tag=$st; [ "$sp" = zigzag ] || tag=$st-$sp
      best=$(for k in $(seq 1 "$rounds"); do
               f="$out/rounds/val-$tag-np$p-s$s.r$k.trace"; echo "$(meas_ms "$f") $k"
             done | sort -g | awk '{a[NR] = $2} END {print a[int((NR + 1) / 2)]}')
      cp "$out/rounds/val-$tag-np$p-s$s.r$best.trace" "$out/val-$tag-np$p-s$s.trace"
      cp "$out/rounds/val-$tag-np$p-s$s.r$best.cmd" "$out/val-$tag-np$p-s$s.cmd"
      echo "#   val-$tag-np$p-s$s.trace: round $best of $rounds (the median measured step)" | tee -a "$out/val-$tag-np$p-s$s.cmd"
    done
  done
done

# one MoE layer (every layer MoE, harness/hx_moe.c): the first rank count's
# ranks as expert parallelism over data parallelism, the all-to-all
# dispatcher; validated apart for its bytes (the expert ops' times are shown:
# no kernel run calibrates the grouped expert GEMMs)
for p in $ranks; do moe_p=$p; break; done
if [ $((8 % moe_p)) = 0 ]; then
  run "moe-np$moe_p-s1024" "$moe_p" --strategy ulysses --ulysses 1 --seq 1024 --experts 8 --topk 2 --moe-ffn 256 \
    --shared-ffn 256 --ep "$moe_p" "${common[@]}"
fi

if [ $cal_host = 1 ]; then
  echo "# 2. ulysim calibrate --host (its own micro-benchmarks and kernel runs; profiles in $out/config)"
  host_ranks=$(echo $ranks $over | tr ' ' ',')
  ULYSIM_CONFIG_DIR=$out/config "$ulysim" calibrate --host --ranks "$host_ranks" --keep "$out/host" \
    > "$out/calibrate-host.txt"
  grep '^# host profile\|^# OpenBLAS kernels' "$out/calibrate-host.txt"
fi
# calibrate and validate run in $out on the files' names: what they print
# (calibrate-np*.txt, validate.txt, validate.json) names the files as given,
# with no path of this machine in it
[ $cal_host = 1 ] || echo "# 2. calibrate (micro-benchmarks and kernel runs only)"
for p in $([ $cal_host = 1 ] || echo $ranks $over); do
  (cd "$out" && "$ulysim" calibrate "mb-np$p.trace" --kernels kern-*-np$kranks-*.trace \
    -o "cpu-calibrated-np$p.json") > "$out/calibrate-np$p.txt"
  tail -1 "$out/calibrate-np$p.txt"
done

# validate SET LABEL RANKS...: the strategy runs of those rank counts on
# their profiles; the summary line; the exit status (0 pass, 1 fail)
validate_set() {
  local label=$1 file=$2; shift 2
  local traces=() profiles=() p
  for p in "$@"; do
    traces+=($(cd "$out" && echo val-*-np$p-*.trace))
    [ $cal_host = 1 ] || profiles+=(--cluster "cpu-calibrated-np$p.json")
  done
  local rc=0
  # --calibrate-host: no --cluster; validate finds the host profiles in OUT/config
  (cd "$out" && ULYSIM_CONFIG_DIR=$out/config "$ulysim" validate "${traces[@]}" "${profiles[@]}" \
    --max-error "$max_error" --min-agreement "$min_agree") > "$out/$file.txt" || rc=$?
  (cd "$out" && ULYSIM_CONFIG_DIR=$out/config "$ulysim" validate "${traces[@]}" "${profiles[@]}" --format json) \
    > "$out/$file.json" || true
  sed -n '/^## runs/,$p' "$out/$file.txt"
  # the per-op limit, on the median over the set's per-layer ops
  local opmed
  opmed=$(sed -n 's/^# per-op error (per-layer ops): median |err| \([0-9.]*\)%.*/\1/p' "$out/$file.txt")
  if [ $rc = 0 ] && ! awk -v m="$opmed" -v l="$max_op_error" 'BEGIN{exit !(m != "" && m / 100 <= l)}'; then rc=1; fi
  awk -v label="$label" -v ranks="$*" -v rc="$rc" -v ml="$max_error" -v ol="$max_op_error" '
    /^# step-time error:/ {split($0, a, /median \|err\| |%, max \|err\| |% \(/); sm = a[2]; sx = a[3]}
    /^# per-op error/ {split($0, b, /median \|err\| |%, max \|err\| |%$/); om = b[2]; ox = b[3]}
    /^# bytes:/ {by = ($0 ~ /planned = measured for every op/) ? "equal" : "DIFFER"}
    /^# ranking:/ {if (match($0, /\([0-9]+%\)/)) rk = substr($0, RSTART + 1, RLENGTH - 3)}
    END {printf "RESULT %s (ranks %s): step median %s%% max %s%% (limit %g%%); per-op median %s%% max %s%% (limit %g%%); bytes %s; ranking %s%%; %s\n",
         label, ranks, sm, sx, 100 * ml, om, ox, 100 * ol, by, rk, rc == 0 ? "PASS" : "FAIL"}' "$out/$file.txt" | tee -a "$out/summary.txt"
  return $rc
}

echo "# 3. validate the strategy runs"
: > "$out/summary.txt"
set +e
[ -z "$over" ] || { validate_set oversubscribed validate-oversubscribed $over > "$out/validate-oversubscribed.out"; }
validate_set headline validate $ranks
rc=$?
if [ -f "$out/moe-np$moe_p-s1024.trace" ]; then
  moe_prof=(); [ $cal_host = 1 ] || moe_prof=(--cluster "cpu-calibrated-np$moe_p.json")
  (cd "$out" && ULYSIM_CONFIG_DIR=$out/config "$ulysim" validate "moe-np$moe_p-s1024.trace" "${moe_prof[@]}" \
    --max-error none) > "$out/validate-moe.txt" 2>&1
  if grep -q "^# check: bytes equal: pass" "$out/validate-moe.txt"; then moe_res=PASS; else moe_res=FAIL; rc=1; fi
  moe_step=$(sed -n 's/^# step-time error: \(.*\)/\1/p' "$out/validate-moe.txt" | head -1)
  echo "RESULT moe (ranks $moe_p, ep $moe_p): bytes $( [ $moe_res = PASS ] && echo equal || echo DIFFER); step error (no limit) ${moe_step:-?}; $moe_res" \
    | tee -a "$out/summary.txt"
fi
[ -z "$over" ] || tail -1 "$out/validate-oversubscribed.out"
set -e
echo "# full report: $out/validate.txt (per op), $out/validate.json${over:+; oversubscribed: $out/validate-oversubscribed.txt}"
exit $rc
