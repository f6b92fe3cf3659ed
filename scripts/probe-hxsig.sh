#!/bin/sh
# probe-hxsig.sh W MPIEXEC HARNESS SIGNAL WHO: one of scripts/probe.sh's
# cases: a 2-rank ulyharness job writing W/keep/h.trace, signalled once its
# temporary exists, WHO being mpirun, rank0 or rank1 (found by a tag in its
# environment). The job must end non-zero, leave keep/h.trace as it was and
# no temporary. One line on stderr either way; exit 1 when all holds, 3 not.
W=$1 MPIEXEC=$2 H=$3 SIG=$4 WHO=$5
tag=probe$$
PROBE_TAG=$tag "$MPIEXEC" --oversubscribe --allow-run-as-root -np 2 "$H" --strategy ulysses --seq 1K --reps 100000 \
    --quiet --timeout 5 --out "$W/keep/h.trace" >"$W/hx.out" 2>"$W/hx.err" &
job=$!
i=0
while [ $i -lt 300 ] && ! ls "$W"/keep/h.trace.tmp.* >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
pid=$job
if [ "$WHO" != mpirun ]; then
    r=${WHO#rank}
    for d in /proc/[0-9]*; do
        env=$(cat "$d/environ" 2>/dev/null | tr '\0' '\n')
        case $env in *"PROBE_TAG=$tag"*) ;; *) continue ;; esac
        printf '%s\n' "$env" | grep -qx "OMPI_COMM_WORLD_RANK=$r" && pid=${d#/proc/}
    done
fi
kill -"$SIG" "$pid"
wait $job
rc=$?
left=$(ls "$W"/keep/h.trace.* 2>/dev/null)
if [ $rc != 0 ] && [ -z "$left" ]; then
    echo "job ended (exit $rc) by SIG$SIG to $WHO; nothing left" >&2
    exit 1
fi
echo "job exit $rc by SIG$SIG to $WHO (pid $pid); left: $left" >&2
exit 3
