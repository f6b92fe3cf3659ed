#!/usr/bin/env bash
# readme-commands.sh: runs the commands README.md shows, and those of the
# reference pages it links to that hold runnable examples (docs/cli.md,
# docs/harness.md, docs/validate.md, docs/figures.md, docs/megatron-logs.md),
# as written, so they
# stay true. Every line of a fenced code block that starts with
# `ulysim`, `ulyharness`, `mpirun`, `./build/` or `build/` (a leading "$ "
# prompt and a trailing "  # comment" dropped), and every such line of an
# indented (4-space) code block, must exit 0. Under a "$ " prompt, the lines
# that follow it in the block are the output the README shows: each must be
# a line of the command's output (runs of spaces count as one, a line ending
# in " ..." is a line's beginning, a line "..." stands for lines left out).
# A command that writes into docs/figures/ writes into the scratch
# directory's, and each CSV it writes must equal the committed one, so the
# figures README.md shows are the ones the current binary draws. The Quick
# start's set-up and test commands (scripts/...) are not run: they install
# packages and build (minutes); the benchmark table's commands are run with
# --bench (docs/benchmarks.md's table), but for those with a placeholder to
# fill in (a word in capitals, such as N or OLD/build), which are listed as
# skipped. The configuration directory (ULYSIM_CONFIG_DIR) is the scratch
# directory's: no host profile of the user's is read or written.
#   scripts/readme-commands.sh [--bench] [--list] [BUILD_DIR]
# Runs in a scratch directory where ./build is BUILD_DIR (default build/), the
# checkout's other top-level entries linked but for docs/,
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

# The commands: "CMD<tab>command" records, each followed by the
# "OUT<tab>line" records of the output the README shows under it; then
# (with --bench) the benchmark table's commands, the first backquoted span of
# its command column (its second cell).
records() {
    awk '/^```/ { f = !f; shown = 0; next }
         function cmd(c) { sub(/[ ]+# .*$/, "", c); print "CMD\t" c }
         f && /^\$ / { sub(/^\$ /, ""); cmd($0); shown = 1; next }
         f && shown { if ($0 != "...") print "OUT\t" $0; next }
         f && /^(ulysim|ulyharness|mpirun|\.\/build\/|build\/)/ { cmd($0); next }
         !f && /^    (ulysim|ulyharness|mpirun|\.\/build\/|build\/)/ { sub(/^    /, ""); cmd($0) }' \
        "$root/README.md" "$root/docs/cli.md" "$root/docs/harness.md" "$root/docs/validate.md" \
        "$root/docs/figures.md" "$root/docs/megatron-logs.md"
    if [ "$bench" = 1 ]; then
        awk -F'|' '/^# Benchmarks/ { t = 1 } /^## / { t = 0 }
                   t && NF > 3 && match($3, /`[^`]*`/) { print "CMD\t" substr($3, RSTART + 1, RLENGTH - 2) }' \
            "$root/docs/benchmarks.md"
    fi
}
if [ "$list" = 1 ]; then records | awk -F'\t' '$1 == "CMD" && !seen[$2]++ { print $2 }'; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
# the rest of the checkout as the repository root has it (bench/, scripts/,
# ...), but for docs/, whose figures the commands write afresh
for e in "$root"/*; do
    case ${e##*/} in build | docs) ;; *) ln -s "$e" "$work/${e##*/}" ;; esac
done
mkdir -p "$work/docs/figures" "$work/out"
cd "$work"
export PATH="$build/sim:$build/harness:$PATH"
export ULYSIM_CONFIG_DIR="$work/config"
# as the README's reader has it: root is allowed by the command's own flags
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
squeeze() { tr -s ' '; }
n=0 failed=0 skipped=0 cur="" curok=0
declare -A ran=()
while IFS=$'\t' read -r kind text; do
    if [ "$kind" = OUT ]; then
        # a line the README shows under the last command: in its output
        [ "$curok" = 1 ] || continue
        want=$(printf '%s\n' "$text" | squeeze)
        if [ "${want% ...}" != "$want" ]; then
            found=$(awk -v w="${want% ...}" 'index($0, w) == 1 { print "y"; exit }' "$cur")
        else
            found=$(awk -v w="$want" '$0 == w { print "y"; exit }' "$cur")
        fi
        if [ -z "$found" ]; then
            failed=$((failed + 1))
            echo "FAIL output: the README shows a line this build does not print:"
            echo "     $text"
        fi
        continue
    fi
    cmd=$text
    if [ "${ran[$cmd]:-}" = failed ]; then curok=0; continue; fi
    if [ -n "${ran[$cmd]:-}" ]; then cur=${ran[$cmd]}; curok=1; continue; fi
    if ph=$(printf '%s\n' "$cmd" | tr ' ' '\n' | grep -m1 -E '^[A-Z]{1,8}(/.*)?$'); then
        skipped=$((skipped + 1))
        echo "skip placeholder '$ph' to fill in: $cmd"
        curok=0
        continue
    fi
    n=$((n + 1))
    cur="$work/out/$n.txt"
    start=$(date +%s)
    if bash -c "$cmd" >"$cur.raw" 2>&1 </dev/null; then
        echo "ok   $(($(date +%s) - start)) s  $cmd"
        squeeze <"$cur.raw" >"$cur"
        ran[$cmd]=$cur
        curok=1
    else
        rc=$?
        failed=$((failed + 1))
        echo "FAIL exit $rc: $cmd"
        tail -5 "$cur.raw" | sed 's/^/     /'
        ran[$cmd]=failed
        curok=0
    fi
done < <(records)
# the figures: what the commands drew against what is committed
for csv in docs/figures/*.csv; do
    [ -e "$csv" ] || continue
    if ! cmp -s "$csv" "$root/$csv"; then
        failed=$((failed + 1))
        echo "FAIL $csv: the committed figure's data differs from what this build draws (rerun its command from the repository root):"
        { diff "$root/$csv" "$csv" || true; } | head -6 | sed 's/^/     /'
    fi
done
echo "$n commands from README.md and docs/, $failed failed${skipped:+, $skipped skipped}"
[ "$n" -gt 0 ] && [ "$failed" = 0 ]
