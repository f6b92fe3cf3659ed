#!/bin/bash
# paired.sh: is one build's plan evaluation faster than another's, on a
# machine whose speed moves by tens of percent from one second to the next
# (a shared VM)? Runs plan_bench of the two builds back to back, ROUNDS
# times, the order swapped each round, and prints per strategy the quartiles
# of NEW/OLD (the ratio of the two runs' medians): a slow spell that lasts
# longer than a pair slows both runs of it alike, so the ratio keeps what the
# spell hides in the raw times. Compare the median ratio with one of a build
# against itself (OLD OLD), which shows how far the noise alone reaches.
# The last column compares the fastest batch of each build over all its
# rounds: other work on the machine only ever adds time, so the fastest
# batches show each build's own speed, and move less between runs than
# the medians (a build against itself: within about 2%).
# Instruction counts (valgrind) are not enough: a change that removes
# instructions but grows the hot code can be slower (docs/design.md, "The
# evaluation's speed").
# Usage: bench/model/paired.sh OLD_BUILD_DIR NEW_BUILD_DIR [STRATEGY|all] [ROUNDS] [EVALS]
#   (default: usp, 30 rounds of plan_bench EVALS=10000, about 0.1 s a run)
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [STRATEGY|all] [ROUNDS] [EVALS]" >&2
    exit 2
fi
old=$1 new=$2 which=${3:-usp} rounds=${4:-30} evals=${5:-10000}
for b in "$old" "$new"; do
    if [ ! -x "$b/bench/model/plan_bench" ]; then
        echo "$0: $b/bench/model/plan_bench: not built (cmake --build $b --target plan_bench)" >&2
        exit 2
    fi
done
case "$rounds" in
'' | *[!0-9]* | 0) echo "$0: rounds \"$rounds\": want a whole number of at least 1" >&2; exit 2 ;;
esac
case "$evals" in
'' | *[!0-9]* | 0) echo "$0: evaluations per batch \"$evals\": want a whole number of at least 1" >&2; exit 2 ;;
esac
if [ "$which" = all ]; then
    strategies=$("$old/bench/model/plan_bench" 1 | awk '!/^#/ {print $1}')
else
    strategies=$which
    "$old/bench/model/plan_bench" 1 "$which" >/dev/null || exit 2 # names the valid strategies
fi
# the strategy's median and fastest batch (us)
times_us() { "$1/bench/model/plan_bench" "$evals" "$2" | awk '!/^#/ {print $3, $4}'; }
echo "# NEW/OLD of plan_bench medians (quartiles of $rounds paired rounds of $evals evaluations per batch) and of the fastest batch of all rounds"
echo "# old: $old  new: $new"
echo "# strategy      q1      median  q3      fastest"
for s in $strategies; do
    ratios="" fast_a=1e9 fast_b=1e9
    for r in $(seq 1 "$rounds"); do
        if [ $((r % 2)) = 0 ]; then
            a=$(times_us "$old" "$s")
            b=$(times_us "$new" "$s")
        else
            b=$(times_us "$new" "$s")
            a=$(times_us "$old" "$s")
        fi
        ratios="$ratios $(awk -v a="${a% *}" -v b="${b% *}" 'BEGIN {printf "%.4f", b / a}')"
        fast_a=$(awk -v x="$fast_a" -v y="${a#* }" 'BEGIN {print (y < x ? y : x)}')
        fast_b=$(awk -v x="$fast_b" -v y="${b#* }" 'BEGIN {print (y < x ? y : x)}')
    done
    echo "$ratios" | tr ' ' '\n' | grep . | sort -n |
        awk -v s="$s" -v fa="$fast_a" -v fb="$fast_b" '{x[NR] = $1} END {printf "%-14s  %.3f   %.3f   %.3f   %.3f\n", s, x[int(NR / 4) + 1], x[int((NR + 1) / 2)], x[int(3 * NR / 4) + (NR < 4)], fb / fa}'
done
