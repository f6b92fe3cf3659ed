#!/bin/sh
# out_paths.sh: what is at an output path survives ulysim's writers
# (formats/out_file.c): a character device or FIFO is written in place, never
# replaced by a regular file; a symbolic link is written through; a regular
# file is replaced and keeps its mode; a bad path is exit 2 before the work
# naming the path; a /dev/full-like node is a write error, exit 1 naming the
# file and the system's reason; an output that is one of the run's inputs,
# by its own name, another name or a link, is exit 2 and the input is kept.
# An image gnuplot cut short is exit 1 and never renamed to the final name.
# Device nodes need root (mknod): skipped (77) otherwise.
# usage: out_paths.sh ULYSIM PLAN_TRACE MICROBENCH_TRACE WORKDIR MEGATRON_LOG
set -u
. "$(dirname "$0")/../../term_when.sh"
U=$1 TR=$2 MB=$3 W=$4 LOG=$5
[ "$(id -u)" = 0 ] || { echo "not root: cannot create device nodes; skipped"; exit 77; }
rm -rf "$W" && mkdir -p "$W" || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run WANT_RC WANT_STDERR_SUBSTRING CMD...: exit status and message
run() {
    want=$1 msg=$2
    shift 2
    timeout 60 "$@" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" = "$want" ] || bad "$* -> exit $rc, want $want: $(cat "$W/err")"
    [ -z "$msg" ] || grep -qF -- "$msg" "$W/err" || bad "$* -> stderr lacks '$msg': $(cat "$W/err")"
    [ "$(wc -l <"$W/err")" -le 1 ] || bad "$* -> more than one line on stderr: $(cat "$W/err")"
}
is_char() { [ -c "$1" ] || bad "$1 is no longer a character device: $(ls -l "$1")"; }
no_tmp() { ! ls "$W"/*.tmp.* >/dev/null 2>&1 || bad "a temporary was left: $(ls "$W"/*.tmp.*)"; }

# go WANT MSG PATH: the writer $cmd writing PATH
go() {
    case $cmd in
    export) run "$1" "$2" "$U" trace export "$TR" -o "$3" ;;
    calibrate) run "$1" "$2" "$U" calibrate "$MB" -o "$3" ;;
    runs) run "$1" "$2" "$U" runs from-megatron "$LOG" -o "$3" ;;
    plot) run "$1" "$2" "$U" plot throughput --data-only --gpus 8 --seq 8K,16K -o "${3%.csv}.png" ;;
    esac
}

# each writer: trace export, calibrate, runs from-megatron, plot's CSV
for cmd in export calibrate runs plot; do
    d=$W/$cmd
    mkdir -p "$d"
    mknod "$d/null" c 1 3 && mknod "$d/full" c 1 7 && mkfifo "$d/fifo" && mknod "$d/blk" b 7 200 || exit 1
    ext=""
    [ $cmd = plot ] && ext=.csv && for n in null full fifo blk; do mv "$d/$n" "$d/$n.csv"; done
    go 0 "" "$d/null$ext"
    is_char "$d/null$ext"
    go 1 "cannot write $d/full$ext: No space left on device" "$d/full$ext"
    is_char "$d/full$ext"
    # a FIFO without a reader: bad input at once, no wait
    go 2 "$d/fifo$ext: a FIFO with no reader" "$d/fifo$ext"
    [ -p "$d/fifo$ext" ] || bad "$d/fifo$ext is no longer a FIFO"
    # with a reader: written in place
    timeout 30 cat "$d/fifo$ext" >"$d/fifo.got" &
    reader=$!
    sleep 0.5
    go 0 "" "$d/fifo$ext"
    wait $reader
    [ -p "$d/fifo$ext" ] || bad "$d/fifo$ext is no longer a FIFO"
    [ -s "$d/fifo.got" ] || bad "nothing came through the FIFO $d/fifo$ext"
    go 2 "$d/blk$ext: is a block device; refused" "$d/blk$ext"
    [ -b "$d/blk$ext" ] || bad "$d/blk$ext is no longer a block device"
    # a symbolic link (dangling at first) is written through, and stays a link
    ln -s "real$ext" "$d/link$ext"
    go 0 "" "$d/link$ext"
    [ -L "$d/link$ext" ] && [ -s "$d/real$ext" ] || bad "$d/link$ext was not written through: $(ls -l "$d")"
    # a regular file is replaced and keeps its mode
    echo old >"$d/reg$ext" && chmod 640 "$d/reg$ext"
    go 0 "" "$d/reg$ext"
    [ "$(stat -c %a "$d/reg$ext")" = 640 ] || bad "$d/reg$ext lost its mode: $(stat -c %a "$d/reg$ext")"
    [ "$(cat "$d/reg$ext")" != old ] || bad "$d/reg$ext was not replaced"
    # bad paths: exit 2 naming them
    mkdir -p "$d/dir$ext"
    go 2 "$d/dir$ext: is a directory" "$d/dir$ext"
    go 2 "directory $d/nodir: No such file or directory" "$d/nodir/x$ext"
    W=$d no_tmp
done
run 2 "an empty output path" "$U" trace export "$TR" -o ""
run 2 "an empty output path" "$U" calibrate "$MB" -o ""
run 2 "an empty output path" "$U" runs from-megatron "$LOG" -o ""
# an output that is an input: refused (exit 2, one line), the input unchanged
d=$W/same
mkdir -p "$d"
same() { # same ORIGINAL INPUT_NAME OUTPUT_NAME MSG CMD...: CMD reads INPUT_NAME and writes OUTPUT_NAME
    orig=$1 in=$2 out=$3 msg=$4
    shift 4
    cp "$orig" "$d/keep" || exit 1
    run 2 "$msg" "$@"
    cmp -s "$d/keep" "$in" || bad "$* changed its input $in"
}
cp "$TR" "$d/run.trace" && cp "$MB" "$d/mb.trace" && cp "$LOG" "$d/a.log" && ln -s a.log "$d/b.log" || exit 1
same "$TR" "$d/run.trace" "$d/run.trace" "$d/run.trace: is an input of this run" \
    "$U" trace export "$d/run.trace" -o "$d/run.trace"
same "$TR" "$d/run.trace" "$d/./run.trace" "$d/./run.trace: is the same file as the input $d/run.trace" \
    "$U" trace export "$d/run.trace" -o "$d/./run.trace"
same "$MB" "$d/mb.trace" "$d/mb.trace" "$d/mb.trace: is an input of this run" "$U" calibrate "$d/mb.trace" -o "$d/mb.trace"
same "$MB" "$d/mb.trace" "$d/mb.trace" "$d/mb.trace: is an input of this run" \
    "$U" calibrate "$MB" --kernels "$d/mb.trace" -o "$d/mb.trace"
same "$LOG" "$d/a.log" "$d/a.log" "$d/a.log: is the same file as the input $d/b.log" \
    "$U" runs from-megatron "$d/b.log" -o "$d/a.log"
printf 'label,strategy,gpus,seq,step_s\nr,ulysses,8,8K,1.0\n' >"$d/r.csv" || exit 1
cp "$d/r.csv" "$d/r.orig"
run 2 "-o $d/r.png writes its data to $d/r.csv: is an input of this run" "$U" plot validation --runs "$d/r.csv" -o "$d/r.png"
cmp -s "$d/r.csv" "$d/r.orig" || bad "plot validation --runs r.csv -o r.png changed r.csv"

# a legal name too long for its temporary's name: a shorter temporary in the
# same directory, the output complete; a temporary the system refuses: exit
# 1, and nothing of the output on standard output
long=$d/$(printf 'a%.0s' $(seq 1 246)).json
run 0 "" "$U" trace export "$TR" -o "$long"
[ -s "$long" ] || bad "trace export -o a 251-byte name wrote nothing"
! ls -a "$d" | grep -q '\.tmp\.' || bad "a temporary was left: $(ls -a "$d" | grep '\.tmp\.')"
if [ -f /proc/version ]; then
    run 1 "cannot write /proc/version" "$U" trace export "$TR" -o /proc/version
    ! grep -q traceEvents "$W/out" || bad "trace export -o /proc/version wrote its output to standard output"
fi

# the image of a plot is written by gnuplot by name: a device node there is refused before the work
mknod "$W/img.png" c 1 3 || exit 1
run 2 "$W/img.png: is a character device" "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/img.png"
is_char "$W/img.png"

# an image cut short (gnuplot exits 0 when the disk fills): a stand-in
# gnuplot writes PNG's first 8 bytes where it was told to; plot and
# reproduce exit 1 naming it, and leave no image under the final name
cat >"$W/cut-gnuplot" <<'EOS'
#!/bin/sh
out=$(printf '%s' "$2" | sed -n "s/.*out\(file\)\{0,1\}='\([^']*\)'.*/\2/p")
printf '\211PNG\r\n\032\n' >"$out"
EOS
chmod +x "$W/cut-gnuplot"
GNUPLOT=$W/cut-gnuplot run 1 "gnuplot wrote no whole png image" "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/cut.png"
[ ! -e "$W/cut.png" ] || bad "plot left a cut image $W/cut.png"
GNUPLOT=$W/cut-gnuplot run 1 "gnuplot wrote no whole $W/rep/reproduce_ulysses.png" "$U" reproduce ulysses -o "$W/rep"
! ls "$W"/rep/*.png "$W"/rep/*.tmp.* >/dev/null 2>&1 || bad "reproduce left $(ls "$W"/rep)"
# a bad -o is found before the work: nothing on stdout (the report came first)
run 2 "reproduce: -o '/dev/null' is not a directory" "$U" reproduce ulysses -o /dev/null
[ ! -s "$W/out" ] || bad "reproduce -o /dev/null printed $(wc -l <"$W/out") lines before refusing -o"
run 2 "reproduce: cannot create -o directory '$W/no/such': No such file or directory" "$U" reproduce rsa -o "$W/no/such"
[ ! -s "$W/out" ] || bad "reproduce -o $W/no/such printed $(wc -l <"$W/out") lines before refusing -o"

# interrupted: SIGTERM while a stand-in gnuplot holds the image's temporary;
# the run says so, removes the temporary and exits 1
printf '#!/bin/sh\nsleep 20\n' >"$W/slow-gnuplot" && chmod +x "$W/slow-gnuplot"
GNUPLOT=$W/slow-gnuplot "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/int.png" 2>"$W/err" &
term_when "$W/int.png.tmp.*" $!
[ $seen = 1 ] || bad "plot never created its image temporary"
[ $rc = 1 ] || bad "interrupted plot: exit $rc, want 1"
# (the CSV stays a temporary until the image drawn from it is done)
grep -qF "ulysim: interrupted by SIGTERM; removed the unfinished $W/int.csv.tmp." "$W/err" &&
    grep -qF "$W/int.png.tmp." "$W/err" ||
    bad "interrupted plot: no message: $(cat "$W/err")"
! ls "$W"/int.* >/dev/null 2>&1 || bad "interrupted plot left $(ls "$W"/int.*)"
# SIGHUP (a closed terminal) as SIGTERM: it used to leave FILE.tmp.PID
GNUPLOT=$W/slow-gnuplot "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/hup.png" 2>"$W/err" &
term_when "$W/hup.png.tmp.*" $! HUP
[ $seen = 1 ] || bad "plot never created its image temporary"
[ $rc = 1 ] || bad "plot hung up: exit $rc, want 1"
grep -qF "ulysim: interrupted by SIGHUP; removed the unfinished $W/hup.csv.tmp." "$W/err" ||
    bad "plot hung up: no message: $(cat "$W/err")"
! ls "$W"/hup.* >/dev/null 2>&1 || bad "plot hung up left $(ls "$W"/hup.*)"

[ "$fails" = 0 ] && echo "out_paths: every case passed"
[ "$fails" = 0 ]
