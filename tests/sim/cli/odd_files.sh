#!/bin/sh
# odd_files.sh ULYSIM WORKDIR MICROBENCH_TRACE: inputs the hostile probe of
# a hostile probe found misreported, each exit 2 with one line naming the value:
#   - presets show NAME where NAME.json is a FIFO: it said "unknown preset"
#     while listing NAME among the valid ones;
#   - presets show NAME where NAME.json is 3 MB: printed, though --model
#     refuses a preset over 1 MiB;
#   - calibrate of a micro-benchmark trace with one point: exit 1 ("the
#     least-squares fit failed"), where too few points is bad input.
set -u
U=$1 W=$2 MB=$3
rm -rf "$W" && mkdir -p "$W/p/models" "$W/p/clusters" || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
run2() { # MESSAGE CMD...: exit 2, one line holding MESSAGE, nothing on stdout
    msg=$1
    shift
    timeout 60 "$@" >"$W/out" 2>"$W/err"
    rc=$?
    [ $rc = 2 ] || bad "$* -> exit $rc, want 2: $(cat "$W/err")"
    grep -qF -- "$msg" "$W/err" || bad "$* -> stderr lacks '$msg': $(cat "$W/err")"
    [ "$(wc -l <"$W/err")" = 1 ] || bad "$* -> not one line on stderr: $(cat "$W/err")"
    [ ! -s "$W/out" ] || bad "$* -> printed $(wc -c <"$W/out") bytes on stdout"
}
cp "$(dirname "$0")/../../../sim/presets/clusters/dgx-h100.json" "$W/p/clusters/" || exit 1
mkfifo "$W/p/models/pipe.json" || exit 1
head -c 3000000 /dev/zero | tr '\0' ' ' >"$W/p/models/huge.json"
ULYSIM_PRESETS=$W/p run2 "$W/p/models/pipe.json: is not a regular file (a FIFO, socket or device)" "$U" presets show pipe
ULYSIM_PRESETS=$W/p run2 "$W/p/models/huge.json: is 3000000 bytes; a preset may be at most 1048576 bytes (1 MiB)" \
    "$U" presets show huge
# one usable point (and the summary): too few for the two link parameters it depends on
{ sed -n 1,2p "$MB"; tail -n 1 "$MB"; } >"$W/one.trace"
run2 "1 usable micro-benchmark point cannot determine the 2 link parameters" "$U" calibrate "$W/one.trace" -o "$W/one.json"
[ ! -e "$W/one.json" ] || bad "calibrate of one point wrote $W/one.json"
[ "$fails" = 0 ] && echo "odd_files: every case passed"
[ "$fails" = 0 ]
