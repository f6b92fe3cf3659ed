#!/bin/sh
# dir_sync.sh ULYSIM WORKDIR: a committed output's rename reaches the disk:
# after renaming its temporary over FILE, the writer (formats/out_file.c)
# opens FILE's directory and fsyncs it, so a power loss after the run said
# it wrote FILE cannot lose it. Seen through strace; skipped (77)
# without strace or where it cannot trace.
set -u
U=$1 W=$2
command -v strace >/dev/null 2>&1 || { echo "no strace: skipped"; exit 77; }
rm -rf "$W" && mkdir -p "$W/d" || exit 1
strace -o "$W/st" -e trace=rename,renameat,renameat2,openat,fsync true 2>/dev/null || { echo "strace cannot trace here: skipped"; exit 77; }
# LeakSanitizer cannot run under ptrace (a sanitizer build): leaks are the
# other tests' to find, this one traces the calls
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
strace -o "$W/st" -e trace=rename,renameat,renameat2,openat,fsync "$U" plot throughput --gpus 8 --seq 8K,16K --data-only \
    -o "$W/d/t.png" >/dev/null || { echo "FAIL: the run failed"; exit 1; }
# the lines after the rename into t.csv: the directory opened, then fsync on that descriptor
after=$(sed -n '/rename.*"[^"]*\/d\/t\.csv"/,$p' "$W/st")
[ -n "$after" ] || { echo "FAIL: no rename into $W/d/t.csv: $(cat "$W/st")"; exit 1; }
fd=$(printf '%s\n' "$after" | sed -n "s|^openat(AT_FDCWD, \"$W/d\", [^)]*O_DIRECTORY[^)]*) = \([0-9]*\)$|\1|p" | head -1)
[ -n "$fd" ] || { echo "FAIL: $W/d not opened after the rename: $after"; exit 1; }
printf '%s\n' "$after" | grep -qE "^fsync\($fd\) += 0" || { echo "FAIL: $W/d (fd $fd) not synced after the rename: $after"; exit 1; }
echo "ok: $W/d synced after the rename"
