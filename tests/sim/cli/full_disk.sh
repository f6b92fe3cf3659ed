#!/bin/sh
# full_disk.sh: output that cannot be written (a full disk, /dev/full) is
# exit 1 with one line on stderr, said once (main.c), for a command that
# writes its output itself (presets show) as for the others.
# usage: full_disk.sh ULYSIM   (exit 77, skipped, without /dev/full)
set -u
U=$1
[ -w /dev/full ] || { echo "no /dev/full: skipped"; exit 77; }
fails=0
for args in "presets show llama3-8b" "presets show dgx-h100" "presets" "--gpus 8 --seq 8K"; do
    # shellcheck disable=SC2086
    err=$("$U" $args 2>&1 >/dev/full)
    rc=$?
    lines=$(printf '%s\n' "$err" | wc -l)
    if [ $rc != 1 ] || [ "$lines" != 1 ] || [ -z "$err" ]; then
        echo "FAIL: ulysim $args >/dev/full: exit $rc (want 1), $lines line(s) on stderr (want 1):"
        printf '%s\n' "$err"
        fails=$((fails + 1))
    else
        echo "ok: ulysim $args >/dev/full: $err"
    fi
done
[ $fails = 0 ]
