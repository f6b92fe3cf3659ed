#!/bin/bash
# alternate.sh: the planner benchmarks of two builds run by turns, so that a
# loaded or noisy machine treats both alike: per round, plan_bench then
# search_bench of the old build, then of the new. Prints each run's
# per-strategy medians (us), the full searches' times and the layouts
# priced per second; compare the builds within a round, as ratios.
# Usage: bench/model/alternate.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [PLAN_EVALS]
#   (each build needs the targets plan_bench and search_bench; default 3
#   rounds of 50000 evaluations per plan_bench batch)
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [PLAN_EVALS]" >&2
    exit 2
fi
old=$1 new=$2 rounds=${3:-3} evals=${4:-50000}
for b in "$old" "$new"; do
    for t in model/plan_bench sim/search_bench; do
        if [ ! -x "$b/bench/$t" ]; then
            echo "$0: $b/bench/$t: not built (cmake --build $b --target ${t#*/})" >&2
            exit 2
        fi
    done
done
for r in $(seq 1 "$rounds"); do
    for which in old new; do
        b=$old
        [ "$which" = new ] && b=$new
        # strategy medians in the order plan_bench prints them, then its checksum
        plan=$("$b/bench/model/plan_bench" "$evals" | awk '!/^#/ {printf "%s %s  ", $1, $3} /checksum/ {printf "checksum %s", $3}')
        # the full searches' times (both placements; with micro-batches), then the layouts priced per second
        search=$("$b/bench/sim/search_bench" 2 | awk '/^full search/ {for (i = 1; i <= NF; i++) if ($i == "ms,") printf "%s ms  ", $(i - 1)}
                                                     /sweep by search/ {for (i = 1; i <= NF; i++) if ($i == "M") printf "%s M layouts/s", $(i - 1)}')
        echo "round $r $which: plan_bench median us: $plan | search_bench full searches: $search"
    done
done
