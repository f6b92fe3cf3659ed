#!/bin/sh
# out_paths.sh: ulyharness --out: a bad path ends the run at once with exit 2
# naming it (empty, a directory, a missing directory); a /dev/full-like node
# is a write error, exit 1 naming the file and the reason, and the node
# survives, as does a /dev/null-like one that is written in place; the
# --cluster file it reads is refused as --out and kept; SIGTERM
# to mpirun says the run was interrupted and leaves no temporary. Device
# nodes need root (mknod): skipped (77) otherwise.
# usage: out_paths.sh WORKDIR MPIEXEC NPFLAG HARNESS [MPI flags...]
set -u
. "$(dirname "$0")/../term_when.sh"
W=$1 MPIEXEC=$2 NPFLAG=$3 H=$4
shift 4
[ "$(id -u)" = 0 ] || { echo "not root: cannot create device nodes; skipped"; exit 77; }
rm -rf "$W" && mkdir -p "$W/dir" && mknod "$W/full" c 1 7 && mknod "$W/null" c 1 3 || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
hx() { timeout 120 "$MPIEXEC" "$NPFLAG" 2 $MPIFLAGS "$H" --strategy ulysses --seq 64 --head-dim 16 --ffn 128 \
    --vocab 256 --warmup 0 --reps 1 --quiet "$@"; }
# run WANT MSG OUT: exit status and message of a run writing OUT
run() {
    hx --out "$3" >"$W/o" 2>"$W/e"
    rc=$?
    [ $rc = "$1" ] || bad "--out '$3': exit $rc, want $1: $(cat "$W/e")"
    grep -qF -- "$2" "$W/e" "$W/o" || bad "--out '$3': no '$2' in: $(cat "$W/e")"
}
MPIFLAGS="$*"
run 2 "--out an empty output path" ""
run 2 "--out $W/dir: is a directory" "$W/dir"
run 2 "--out $W/nodir/x.trace: directory $W/nodir: No such file or directory" "$W/nodir/x.trace"
run 1 "cannot write $W/full: No space left on device" "$W/full"
[ -c "$W/full" ] || bad "$W/full is no longer a character device"
run 0 "PASS" "$W/null"
[ -c "$W/null" ] || bad "$W/null is no longer a character device"
# a FIFO with no reader: bad usage (2) as in ulysim, found before the run
# (it was exit 1, from rank 0's trace open after the start); with a reader:
# the trace flows through it
mkfifo "$W/fifo" || exit 1
run 2 "--out $W/fifo: a FIFO with no reader (valid: start its reader first)" "$W/fifo"
[ -p "$W/fifo" ] || bad "$W/fifo is no longer a FIFO"
cat "$W/fifo" >"$W/fifo.got" &
reader=$!
run 0 "PASS" "$W/fifo"
wait $reader
grep -q '"type":"summary"' "$W/fifo.got" || bad "--out FIFO: the reader got no whole trace"
# --out naming the --cluster file it reads: refused before the run, the file kept
cp "$(dirname "$0")/../../sim/presets/clusters/dgx-h100.json" "$W/cl.json" && cp "$W/cl.json" "$W/cl.orig" || exit 1
hx --cluster "$W/cl.json" --out "$W/cl.json" >"$W/o" 2>"$W/e"
rc=$?
[ $rc = 2 ] || bad "--out the --cluster file: exit $rc, want 2: $(cat "$W/e")"
grep -qF -- "--out $W/cl.json: is an input of this run" "$W/e" || bad "--out the --cluster file: $(cat "$W/e")"
cmp -s "$W/cl.json" "$W/cl.orig" || bad "--out the --cluster file changed it"

# interrupted: a long run, SIGTERM to mpirun once the temporary exists.
# Open MPI's mpirun forwards SIGTERM, then SIGKILLs the ranks after
# odls_base_sigkill_timeout seconds (1 by default): on a loaded machine a
# rank may not reach its handler within one second, and what is tested here
# is the handler, so the ranks get ten. And timeout(1) --foreground: without
# it timeout passes the signal to its whole process group, the ranks
# included, so the ranks were signalled beside mpirun rather than by it and
# the job's teardown could overtake rank 0's handler (4 of 25 runs under a
# concurrent build: no message, the temporary left; 0 of 25 with this)
KILLWAIT=""
case "$MPIEXEC" in *mpiexec* | *mpirun*) KILLWAIT="--mca odls_base_sigkill_timeout 10" ;; esac
# shellcheck disable=SC2086
timeout --foreground 120 "$MPIEXEC" $KILLWAIT "$NPFLAG" 2 $MPIFLAGS "$H" --strategy ulysses --seq 1K --reps 100000 --quiet \
    --out "$W/int.trace" >"$W/o" 2>"$W/e" &
term_when "$W/int.trace.tmp.*" $!
[ $seen = 1 ] || bad "the run never created its temporary trace"
[ $rc != 0 ] || bad "the interrupted run exited 0"
grep -qF "ulyharness: interrupted by SIGTERM; removed the unfinished $W/int.trace.tmp." "$W/e" ||
    bad "no message that the run was interrupted: $(cat "$W/e")"
! ls "$W"/int.trace* >/dev/null 2>&1 || bad "the interrupted run left $(ls "$W"/int.trace*)"
[ "$fails" = 0 ] && echo "out_paths: every case passed"
[ "$fails" = 0 ]
