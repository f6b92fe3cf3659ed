#!/bin/sh
# raw_bytes.sh: a bad value with raw bytes (not UTF-8, an escape sequence) is
# echoed escaped as \xNN, never raw, on one line, with exit status 2.
# usage: raw_bytes.sh ULYSIM WORKDIR
set -u
U=$1 W=$2
mkdir -p "$W" || exit 1
fails=0
ff=$(printf '\377') esc=$(printf '\033')
for args in "--seq 8${ff}${esc}[31m" "--strategy ab${ff}" "--format x${ff}" "--fo${ff}o" "plot x${ff}" \
    "trace x${ff}" "trace check x${ff}.trace" "trace export x${ff}.trace -o y" "presets show x${ff}"; do
    # shellcheck disable=SC2086
    "$U" $args >/dev/null 2>"$W/err"
    rc=$?
    [ $rc = 2 ] || { echo "FAIL: ulysim $args: exit $rc, want 2"; fails=$((fails + 1)); }
    grep -qF 'x\xff' "$W/err" || grep -qF '8\xff\x1b[31m' "$W/err" || grep -qF 'b\xff' "$W/err" || grep -qF 'o\xffo' "$W/err" ||
        { echo "FAIL: ulysim $args: the value is not escaped: $(od -c "$W/err" | head -3)"; fails=$((fails + 1)); }
    if od -An -tx1 "$W/err" | grep -qE ' (ff|1b)'; then
        echo "FAIL: ulysim $args: raw bytes on stderr: $(od -c "$W/err" | head -3)"
        fails=$((fails + 1))
    fi
    [ "$(wc -l <"$W/err")" = 1 ] || { echo "FAIL: ulysim $args: not one line"; fails=$((fails + 1)); }
done
[ $fails = 0 ] && echo "raw_bytes: every value escaped"
[ $fails = 0 ]
