#!/usr/bin/env bash
# Prints the per-row error of every published runs file in docs/validation.md's
# ledger, before and after a change: each file priced by `ulysim validate
# --runs` with two builds, joined on the row and the quantity, as Markdown
# tables (what docs/validation.md holds), then each set's median and largest
# |error| and mean |error|.
#
#   scripts/validation-ledger.sh OLD_ULYSIM NEW_ULYSIM [FILE.csv ...]
#
# With no files: the ledger's step-time sets under traces/published/ (RSA Table 4
# measures memory of one stage: `ulysim reproduce rsa`). Exit 2 on bad
# usage, 1 when a build cannot price a file.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 OLD_ULYSIM NEW_ULYSIM [RUNS.csv ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "$0: '$b' is not an executable ulysim (valid: a built ulysim, e.g. build/sim/ulysim)" >&2; exit 2; }
done
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(traces/published/korthikanti_table5_selene.csv traces/published/narayanan_table1.csv
           traces/published/ulysses_tables_2_3.csv)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
    [ -f "$f" ] || { echo "$0: no runs file '$f'" >&2; exit 2; }
    "$old" validate --runs "$f" --format csv >"$tmp/old.csv" || { echo "$0: $old cannot price $f" >&2; exit 1; }
    "$new" validate --runs "$f" --format csv >"$tmp/new.csv" || { echo "$0: $new cannot price $f" >&2; exit 1; }
    echo "### $(basename "$f")"
    echo
    # columns: line,label,group,strategy,gpus,seq,layout,quantity,flop_convention,predicted,measured,err_pct
    awk -F, '
        function abs(x) { return x < 0 ? -x : x }
        function isort(v, n,    i, j, t) { for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j > 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t } }
        NR == FNR { if (FNR > 1) { k = $1 "," $8; before[k] = $12 } next }
        FNR == 1 {
            print "| row | layout | quantity | measured | before % | after % |"
            print "|---|---|---|---|---|---|"
            next
        }
        {
            k = $1 "," $8
            b = (k in before && before[k] != "") ? sprintf("%+.1f", before[k]) : "-"
            a = $12 != "" ? sprintf("%+.1f", $12) : "-"
            printf "| %s | %s | %s | %s | %s | %s |\n", $2, $7, $8, $11, b, a
            if (before[k] != "" && $12 != "") { n++; sb += abs(before[k]); sa += abs($12); eb[n] = abs(before[k]); ea[n] = abs($12) }
        }
        END {
            if (!n) exit
            isort(eb, n); isort(ea, n)
            mb = n % 2 ? eb[(n + 1) / 2] : (eb[n / 2] + eb[n / 2 + 1]) / 2
            ma = n % 2 ? ea[(n + 1) / 2] : (ea[n / 2] + ea[n / 2 + 1]) / 2
            printf "\n%d rows: mean |error| %.2f%% -> %.2f%%, median %.2f%% -> %.2f%%, largest %.2f%% -> %.2f%%\n\n", \
                n, sb / n, sa / n, mb, ma, eb[n], ea[n]
        }' "$tmp/old.csv" "$tmp/new.csv"
done
