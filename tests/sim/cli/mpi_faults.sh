#!/bin/sh
# mpi_faults.sh: ulysim under mpirun fails as one process would: a rank that
# stops before it sends its results ends the job after the bounded wait,
# naming the silent rank (not a wait for ever); rank 0's failure to write the
# output (stdout on /dev/full) is the job's exit status 1 with the message.
# usage: mpi_faults.sh MPIEXEC NPFLAG ULYSIM [MPI flags...]
set -u
MPIEXEC=$1 NPFLAG=$2 U=$3
shift 3
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
t0=$(date +%s)
err=$(ULYSIM_TEST_STOP_RANK=1 ULYSIM_MPI_WAIT_S=3 timeout 120 "$MPIEXEC" "$NPFLAG" 2 "$@" "$U" sweep --seq 8K..64K \
    --gpus 8..64 2>&1 >/dev/null)
rc=$?
dt=$(($(date +%s) - t0))
[ $rc != 0 ] && [ $rc != 124 ] || bad "a stopped rank: exit $rc (124: still waiting after 120 s)"
[ $dt -le 60 ] || bad "a stopped rank: the job took $dt s to end"
echo "$err" | grep -q "ulysim: rank 0: rank 1 sent no results within 3 s" || bad "the silent rank is not named: $err"
err=$(timeout 120 "$MPIEXEC" "$NPFLAG" 2 "$@" "$U" sweep --seq 8K..64K --gpus 8..64 2>&1 >/dev/full)
rc=$?
[ $rc = 1 ] || bad "stdout on /dev/full: exit $rc, want 1"
echo "$err" | grep -q "ulysim: cannot write the output: No space left on device" || bad "no message: $err"
[ $fails = 0 ] && echo "mpi_faults: every case passed"
[ $fails = 0 ]
