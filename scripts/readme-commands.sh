#!/usr/bin/env bash
# readme-commands.sh: runs the commands README.md shows, as written, so the
# README stays true. Every line of a fenced code block that starts with
# `ulysim`, `ulyharness`, `mpirun`, `./build/` or `build/` (a leading "$ "
# prompt and a trailing "  # comment" dropped) must exit 0. The Quick start's
# set-up and test commands (scripts/...) are not run: they install packages
# and build (minutes); the benchmark table's commands are run with --bench.
#   scripts/readme-commands.sh [--bench] [--list] [BUILD_DIR]
# Runs in a scratch directory where ./build is BUILD_DIR (default build/),
# with BUILD_DIR's sim/ and harness/ first on PATH, as the README says to do.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=0 list=0 build=""
for a in "$@"; do
    case "$a" in
    --bench) bench=1 ;;
    --list) list=1 ;;
    -*) echo "readme-commands.sh: unknown option '$a' (valid: --bench, --list, BUILD_DIR)" >&2; exit 2 ;;
    *) build=$a ;;
    esac
done
build=$(cd "${build:-$root/build}" 2>/dev/null && pwd) || {
    echo "readme-commands.sh: no build directory '${build:-$root/build}' (build first, or name it)" >&2; exit 2; }

# The commands: fenced blocks, then (with --bench) the benchmark table's
# command column (its second cell, in backquotes).
commands() {
    awk '/^```/ { f = !f; next }
         f { sub(/^\$ /, ""); if ($0 ~ /^(ulysim|ulyharness|mpirun|\.\/build\/|build\/)/) { sub(/[ ]+# .*$/, ""); print } }' \
        "$root/README.md"
    if [ "$bench" = 1 ]; then
        awk -F'|' '/^## Benchmarks/ { t = 1 } /^## / && !/Benchmarks/ { t = 0 }
                   t && NF > 3 && $3 ~ /`/ { c = $3; gsub(/^ *`|` *$/, "", c); print c }' "$root/README.md"
    fi
}
unique() { awk '!seen[$0]++'; }
if [ "$list" = 1 ]; then commands | unique; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
cd "$work"
export PATH="$build/sim:$build/harness:$PATH"
# as the README's reader has it: root is allowed by the command's own flags
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
n=0 failed=0
while IFS= read -r cmd; do
    n=$((n + 1))
    start=$(date +%s)
    if bash -c "$cmd" >"$work/out.txt" 2>&1 </dev/null; then
        echo "ok   $(($(date +%s) - start)) s  $cmd"
    else
        rc=$?
        failed=$((failed + 1))
        echo "FAIL exit $rc: $cmd"
        tail -5 "$work/out.txt" | sed 's/^/     /'
    fi
done < <(commands | unique)
echo "$n commands from README.md, $failed failed"
[ "$n" -gt 0 ] && [ "$failed" = 0 ]
