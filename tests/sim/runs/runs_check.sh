#!/bin/sh
# runs_check.sh ULYSIM SRCDIR WORKDIR: `ulysim validate --runs` against what
# the test works out itself: the plan command's own numbers for the same
# flags, the median and largest |error| recomputed from the per-row CSV, the
# same rows as CSV and JSON Lines, a preset against its inline shape, and bad
# files refused with exit 2 naming what is wrong.
set -u
U=$1 SRC=$2 W=$3
mkdir -p "$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_rc() { # WANT CMD...: runs CMD, keeps stdout/stderr in $W/out, $W/err
    want=$1; shift
    "$@" >"$W/out" 2>"$W/err"; rc=$?
    [ "$rc" = "$want" ] || fail "exit $rc (want $want): $* :: $(head -c 300 "$W/err")"
}
# column NAME of the first data line of a CSV on stdin
col() { awk -F, -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next } { print $c; exit }'; }
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-5 * a) }'; }

SEL=$SRC/traces/published/korthikanti_table5_selene.csv

# 1. the Selene runs file: eight step_s rows, exit 0 without limits
expect_rc 0 "$U" validate --runs "$SEL" --format csv
n=$(grep -c ',step_s,' "$W/out")
[ "$n" = 8 ] || fail "Selene: $n step_s rows, want 8"
cp "$W/out" "$W/selene.csv"

# 2. the limits: the median and largest |error| worked out from the rows
med=$(awk -F, 'NR > 1 && $8 == "step_s" { e = $12 < 0 ? -$12 : $12; v[++n] = e }
  END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        print (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }' "$W/selene.csv")
max=$(awk -F, 'NR > 1 && $8 == "step_s" { e = $12 < 0 ? -$12 : $12; if (e > m) m = e } END { print m }' "$W/selene.csv")
below() { awk -v x="$1" -v d="$2" 'BEGIN { printf "%.4f", x + d }'; }
# the limits are fractions, as in every mode of validate, or percent with its
# sign: the median's in percent (10%), the largest's as a fraction (0.1)
frac() { awk -v x="$1" -v d="$2" 'BEGIN { printf "%.6f", (x + d) / 100 }'; }
expect_rc 1 "$U" validate --runs "$SEL" --max-error "$(below "$med" -0.01)%"
grep -q '^# result: FAIL: step_s median' "$W/out" || fail "median limit below the median: no FAIL line"
expect_rc 0 "$U" validate --runs "$SEL" --max-error "$(below "$med" 0.01)%"
grep -q '^# result: PASS' "$W/out" || fail "median limit above the median: no PASS line"
expect_rc 1 "$U" validate --runs "$SEL" --max-run-error "$(frac "$max" -0.01)"
expect_rc 0 "$U" validate --runs "$SEL" --max-run-error "$(frac "$max" 0.01)" --format json
grep -q '"result":[[:space:]]*"PASS"' "$W/out" || fail "json: no PASS result"
# the percent spellings of before (no sign) are refused, naming the limit that means the same
expect_rc 2 "$U" validate --runs "$SEL" --max-median-err 10
grep -qF -- "--max-median-err '10': validate's limits are fractions in every mode now (valid: --max-error 0.1, or --max-error 10%)" "$W/err" ||
    fail "--max-median-err 10: $(cat "$W/err")"

# 3. a row priced as the plan command prices the same flags
cat >"$W/one.csv" <<'CSV'
label,model,cluster,gpus,seq,strategy,ulysses,causal,step_s,tokens_per_s,tflops_per_gpu,flop_convention,mem_gib
a,llama3-8b,dgx-h100,16,64K,ulysses,8,true,1.0,1000,100,ulysim,10
CSV
expect_rc 0 "$U" validate --runs "$W/one.csv" --format csv
pred() { awk -F, -v q="$1" '$8 == q { print $10 }' "$W/out"; }
"$U" --model llama3-8b --cluster dgx-h100 --gpus 16 --seq 64K --strategy ulysses --ulysses 8 --causal --format csv \
    >"$W/plan.csv" || fail "plan"
for q in step_s tokens_per_s tflops_per_gpu; do
    same "$(pred $q)" "$(col $q <"$W/plan.csv")" || fail "$q: validate $(pred $q), plan $(col $q <"$W/plan.csv")"
done
gib=$(col mem_bytes <"$W/plan.csv" | awk '{ printf "%.6g", $1 / 1073741824 }')
same "$(pred mem_gib)" "$gib" || fail "mem_gib: validate $(pred mem_gib), plan $gib"
# the error is predicted / measured - 1 of the row's own numbers
err=$(awk -F, '$8 == "tokens_per_s" { printf "%.2f", ($10 / $11 - 1) * 100 }' "$W/out")
got=$(awk -F, '$8 == "tokens_per_s" { printf "%.2f", $12 }' "$W/out")
[ "$err" = "$got" ] || fail "tokens_per_s error $got, want $err"

# 3b. step_ms, a step time in milliseconds as papers print it: the same row
# as step_s in seconds; both in one row is refused
sed '1s/step_s/step_ms/; 2s/,1\.0,1000,/,1000,1000,/' "$W/one.csv" >"$W/ms.csv"
"$U" validate --runs "$W/one.csv" --format csv | cut -d, -f2- >"$W/a.out"
"$U" validate --runs "$W/ms.csv" --format csv | cut -d, -f2- >"$W/b.out"
cmp -s "$W/a.out" "$W/b.out" || fail "step_ms 1000 is not step_s 1.0: $(diff "$W/a.out" "$W/b.out" | head -4)"

# 4. a boolean column: false is --no-causal, and changes the price
sed 's/,true,/,false,/' "$W/one.csv" >"$W/nocausal.csv"
expect_rc 0 "$U" validate --runs "$W/nocausal.csv" --format csv
"$U" --model llama3-8b --cluster dgx-h100 --gpus 16 --seq 64K --strategy ulysses --ulysses 8 --no-causal --format csv \
    >"$W/plan2.csv"
same "$(pred step_s)" "$(col step_s <"$W/plan2.csv")" || fail "causal=false is not --no-causal"

# 5. the same rows as JSON Lines, and a model given as its inline shape and as a file beside the runs file
cat >"$W/one.jsonl" <<'JSONL'
{"label": "a", "model": "llama3-8b", "cluster": "dgx-h100", "gpus": 16, "seq": "64K", "strategy": "ulysses", "ulysses": 8, "causal": true, "step_s": 1.0, "tokens_per_s": 1000, "tflops_per_gpu": 100, "flop_convention": "ulysim", "mem_gib": 10}
JSONL
"$U" validate --runs "$W/one.csv" --format csv | cut -d, -f2- >"$W/a.out"
"$U" validate --runs "$W/one.jsonl" --format csv | cut -d, -f2- >"$W/b.out"
cmp -s "$W/a.out" "$W/b.out" || fail "JSON Lines and CSV rows differ"
mkdir -p "$W/sub"
cp "$SRC/sim/presets/models/llama3-8b.json" "$W/sub/m.json"
sed 's|,llama3-8b,|,sub/m.json,|' "$W/one.csv" >"$W/file.csv"
shape='"layers=32,hidden=4096,heads=32,kv_heads=8,head_dim=128,ffn_hidden=14336,vocab=128256,swiglu=true,tied_embeddings=false,dropout=false"'
sed "s|,llama3-8b,|,$shape,|" "$W/one.csv" >"$W/inline.csv"
for f in file inline; do
    "$U" validate --runs "$W/$f.csv" --format csv | cut -d, -f2- >"$W/c.out" || fail "$f.csv"
    cmp -s "$W/a.out" "$W/c.out" || fail "model as $f: other numbers than the preset"
done

# what an inline shape leaves out is derived as the presets state it: GPT-3's
# shape without kv_heads, head_dim and ffn_hidden is the gpt3-175b preset
printf 'model,gpus,seq,strategy,step_s\ngpt3-175b,64,8K,megatron-sp,1\n' >"$W/g.csv"
printf 'model,gpus,seq,strategy,step_s\n"layers=96,hidden=12288,heads=96,vocab=50257,tied_embeddings=true,dropout=true",64,8K,megatron-sp,1\n' >"$W/gi.csv"
"$U" validate --runs "$W/g.csv" --format csv | cut -d, -f2- >"$W/a.out"
"$U" validate --runs "$W/gi.csv" --format csv | cut -d, -f2- >"$W/b.out"
cmp -s "$W/a.out" "$W/b.out" || fail "inline GPT-3 shape with derived fields: other numbers than gpt3-175b"
expect_rc 2 "$U" --model "layers=96,hidden=12288,heads=96,vocab=50257,kv=8"
grep -q 'unknown field "kv"' "$W/err" || fail "inline shape, unknown key: $(cat "$W/err")"

# reproduce korthikanti: the same runs file, its mean and largest |error|
# worked out from its rows, beside Calculon's
expect_rc 0 "$U" reproduce korthikanti --format csv
rows=$(grep -c '^korthikanti.table5,[0-9]*[BT] ' "$W/out")
[ "$rows" = 8 ] || fail "reproduce korthikanti: $rows rows, want 8"
mean=$(awk -F, '/^korthikanti.table5,[0-9]+[BT] / { e = $7 < 0 ? -$7 : $7; s += e; n++ } END { printf "%.4f", s / n }' "$W/out")
got=$(awk -F, '/^korthikanti.table5,mean_abs_err/ { printf "%.4f", $5 }' "$W/out")
[ "$mean" = "$got" ] || fail "reproduce korthikanti: mean |error| $got, want $mean"
grep -q 'mean_abs_err,.*Calculon: 3.65%' "$W/out" || fail "reproduce korthikanti: no Calculon mean"
# the JSON has the same section: the eight runs' predictions and the mean
# as the CSV has them
cp "$W/out" "$W/k.csv"
for set in korthikanti all; do
    expect_rc 0 "$U" reproduce "$set" --format json
    awk '/"id":[[:space:]]*"korthikanti.table5"/ { on = 1 } on && /"predicted":/ { gsub(/[^0-9.eE+-]/, "", $2); printf "%.6g\n", $2 }' \
        "$W/out" >"$W/kj.pts"
    awk -F, '/^korthikanti.table5,/ { printf "%.6g\n", $5 }' "$W/k.csv" >"$W/kc.pts"
    [ "$(wc -l <"$W/kj.pts")" = 10 ] && cmp -s "$W/kj.pts" "$W/kc.pts" ||
        fail "reproduce $set --format json: Selene's predictions $(tr '\n' ' ' <"$W/kj.pts"), the CSV's $(tr '\n' ' ' <"$W/kc.pts")"
done
expect_rc 0 "$U" reproduce korthikanti
head -1 "$W/out" | grep -q '^# Korthikanti et al. 2022' || fail "reproduce korthikanti: does not start with its title"

# reproduce reads every table from its runs file: one that is missing or
# edited into a bad one stops it with exit 2 and one line naming the file
P=$W/published
export ULYSIM_PUBLISHED="$P"
for c in "ulysses_tables_2_3.csv s/,T3,/,X3,/" "rsa_table4_weak_scaling.csv /^SP 2 batch 64/d" \
    "korthikanti_table5_selene.csv s/,dgx-a100-80g,/,no-such-cluster,/"; do
    f=${c%% *} edit=${c#* }
    for how in missing edited; do
        rm -rf "$P" && mkdir -p "$P" && cp "$SRC"/traces/published/*.csv "$P/" || fail "copy published"
        if [ "$how" = missing ]; then rm "$P/$f"; else sed -i "$edit" "$P/$f"; fi
        expect_rc 2 "$U" reproduce all
        grep -qF "$P/$f" "$W/err" || fail "reproduce, $f $how: $(cat "$W/err")"
        [ "$(wc -l <"$W/err")" = 1 ] || fail "reproduce, $f $how: not one line on stderr"
    done
done
unset ULYSIM_PUBLISHED

# plot validation --runs: its CSV holds validate's numbers, row by row
expect_rc 0 "$U" plot validation --runs "$SEL" -o "$W/fig.png" --data-only
awk -F, '!/^#/ && NR > 1 && $1 ~ /^[0-9]+$/ { printf "%s %.6g %.6g\n", $1, $6, $7 }' "$W/fig.csv" >"$W/fig.pts"
awk -F, '$8 == "step_s" { printf "%s %.6g %.6g\n", $1, $10, $11 }' "$W/selene.csv" >"$W/val.pts"
[ "$(wc -l <"$W/fig.pts")" = 8 ] || fail "plot validation --runs: $(wc -l <"$W/fig.pts") points, want 8"
cmp -s "$W/fig.pts" "$W/val.pts" || fail "plot validation --runs: other numbers than validate --runs"
if command -v gnuplot >/dev/null 2>&1; then
    expect_rc 0 "$U" plot validation --runs "$SEL" -o "$W/fig.png"
    [ -s "$W/fig.png" ] || fail "plot validation --runs: no image"
fi
expect_rc 2 "$U" plot memory --runs "$SEL"
# the runs file gives each run's cluster: a --cluster (which changed nothing) and other plan flags are refused, named
expect_rc 2 "$U" plot validation --runs "$SEL" -o "$W/fig.png" --data-only --cluster dgx-h100
grep -q -- "--runs .*: --cluster: the runs file gives" "$W/err" || fail "plot validation --runs --cluster: $(cat "$W/err")"
expect_rc 2 "$U" plot validation --runs "$SEL" -o "$W/fig.png" --data-only --no-causal
grep -q -- ": --no-causal: the runs file gives" "$W/err" || fail "plot validation --runs --no-causal: $(cat "$W/err")"

# validate on a harness trace: without a limit given, the default holds
# (median |step err| <= 20%), and the output says which profile priced it and
# whether the trace's CPU is the one the profile was calibrated on
T=$SRC/traces/cpu/val-usp-np4-s1024.trace
if [ -f "$T" ]; then
    expect_rc 1 "$U" validate "$T"
    err=$(awk '/^# step-time error: median/ { sub(/%.*/, "", $6); print $6 }' "$W/out")
    awk -v e="$err" 'BEGIN { exit !(e > 20) }' || fail "embedded profile: step error $err%, the test expects one over 20%"
    grep -q '^# check: median |step err| .*(the default' "$W/out" || fail "no default limit line"
    grep -q '^# result: FAIL' "$W/out" || fail "a run off by $err% says PASS"
    grep -q '^# host: .*records no calibration host' "$W/out" || fail "embedded profile: no host line"
    expect_rc 0 "$U" validate "$T" --max-error none
    expect_rc 0 "$U" validate "$T" --cluster "$SRC/traces/cpu/cpu-calibrated-np4.json"
    grep -q '^# host: vm (AMD EPYC); the profile was calibrated on AMD EPYC: the same CPU' "$W/out" ||
        fail "calibrated profile: no matching host line"
fi

# 5b. end to end: the rows `runs from-megatron` writes from the project's
# Megatron-LM logs are accepted and priced by `validate --runs`: one step_s
# row per log with a prediction, its error predicted / measured - 1
LOGS=$(ls "$SRC"/tests/sim/ingest/data/*.log)
nlogs=$(echo "$LOGS" | wc -l)
expect_rc 0 "$U" runs from-megatron $LOGS -o "$W/meg.csv"
expect_rc 0 "$U" validate --runs "$W/meg.csv" --format csv
priced=$(awk -F, '$8 == "step_s" && $10 != "" && $11 != "" { n++ } END { print n + 0 }' "$W/out")
[ "$priced" = "$nlogs" ] || fail "from-megatron -> validate --runs: $priced priced step_s rows, want $nlogs (one per log)"
awk -F, '$8 == "step_s" && $10 != "" { e = ($10 / $11 - 1) * 100; d = e - $12; if (d < 0) d = -d; if (d > 1e-3 * (e < 0 ? -e : e) + 1e-6) bad++ }
  END { exit bad > 0 }' "$W/out" || fail "from-megatron -> validate --runs: an err_pct is not predicted / measured - 1"
expect_rc 0 "$U" validate --runs "$W/meg.csv"
grep -q '^# quantity ' "$W/out" && [ "$(grep -c ' step_s ' "$W/out")" -ge "$nlogs" ] ||
    fail "from-megatron -> validate --runs (table): no per-row errors or summary"

# validate's help names its three inputs and the default limits; ulysim's
# command list says what it validates
expect_rc 0 "$U" validate --help
for w in '--runs FILE' '--torch-trace FILE' 'default 0.2' '--max-error F' 'Limits, in every mode, are fractions of the measured value (0.2 = 20%), or percent with its sign'; do
    grep -qF -- "$w" "$W/out" || fail "validate --help lacks '$w'"
done
expect_rc 0 "$U" --help
grep -E '^ *validate .*ulyharness traces, runs files, torch.profiler traces' "$W/out" >/dev/null ||
    fail "ulysim --help: validate's line does not name its three inputs"

# 6. bad files: exit 2, one line naming the value
bad_file() { # NAME CONTENT MESSAGE: the file refused with MESSAGE on one line
    printf '%b' "$2" >"$W/$1"
    expect_rc 2 "$U" validate --runs "$W/$1"
    grep -qF "$3" "$W/err" || fail "$1: $(cat "$W/err")"
    [ "$(wc -l <"$W/err")" -le 1 ] || fail "$1: more than one line on stderr"
}
bad_file bad.csv 'gpus,seq,strategy,bogus,step_s\n8,8K,ulysses,1,1.0\n' "bad.csv:2: row 1: column 'bogus'"
# JSON Lines whose later rows bring new keys: each row grows (the runs fuzzer
# found a heap overflow there, seen under AddressSanitizer: fuzz/corpus/runs/regress-*)
printf '{"gpus":8,"seq":"8K","strategy":"ring","step_s":1.5}\n{"gpus":8,"seq":"16K","strategy":"ring","step_s":2.5,"label":"b","group":"g"}\n' >"$W/newkey.jsonl"
expect_rc 0 "$U" validate --runs "$W/newkey.jsonl"
grep -q "b" "$W/out" || fail "newkey.jsonl: the second row's label is not in the report"
# an output flag as a column: checked as a path, then dropped: refused by name
bad_file timeline.csv 'gpus,seq,strategy,timeline,step_s\n8,8K,ulysses,t.json,1.0\n' "timeline.csv:1: header: column 'timeline' is an output flag"
bad_file quote.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,"1.0\n' 'quote.csv:2:14: a quoted field is not closed'
bad_file short.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses\n' 'short.csv:2: 3 fields, the header has 4'
bad_file conv.csv 'gpus,seq,strategy,tflops_per_gpu\n8,8K,ulysses,100\n' 'tflops_per_gpu needs its flop_convention'
bad_file strat.csv 'gpus,seq,strategy,step_s\n8,8K,warp,1\n' "strat.csv:2: row 1: --strategy 'warp': unknown strategy"
bad_file bool.csv 'gpus,seq,strategy,causal,step_s\n8,8K,ulysses,maybe,1\n' "row 1: causal 'maybe': a switch"
bad_file jl.jsonl '{"gpus": 8, "seq": "8K", "strategy": "ulysses", "step_s": [1]}\n' 'jl.jsonl:1: "step_s" is an array'
# text a table would show raw: an escape sequence, a byte that is not UTF-8
bad_file esc.csv 'gpus,seq,strategy,step_s,label\n8,8K,ulysses,1,\033[31mred\n' \
    'esc.csv:2: column label: byte 0x1b at offset 0 is a control character (valid: printable UTF-8 text)'
bad_file raw.csv 'gpus,seq,strategy,step_s,label\n8,8K,ulysses,1,r\377d\n' 'raw.csv:2: column label: byte 0xff at offset 1 is not UTF-8'
bad_file esc.jsonl '{"gpus": 8, "seq": "8K", "strategy": "ulysses", "step_s": 1, "label": "a\\u001b[31m"}\n' \
    'esc.jsonl:1: column label: byte 0x1b at offset 1 is a control character'
! grep -q "$(printf '\033')" "$W/err" || fail "esc.jsonl: the escape reached stderr raw"
# measured numbers: decimal, the whole cell, in their physical ranges
# (formats/runs_read.h): a hex or space-padded number, or a tiny positive one
# whose error would be inf, is refused naming the value and the range
bad_file hex.csv 'gpus,seq,strategy,step_s\n8,32K,ulysses,0x10\n' \
    "hex.csv:2: row 1: step_s '0x10': not a decimal number (valid: seconds per step in [1e-06, 1e+30], e.g. 1.42)"
bad_file pad.csv 'gpus,seq,strategy,step_s\n8,32K,ulysses, 2.5\n' "pad.csv:2: row 1: step_s ' 2.5': not a decimal number"
bad_file pad2.csv 'gpus,seq,strategy,step_s\n8,32K,ulysses,2.5 \n' "pad2.csv:2: row 1: step_s '2.5 ': not a decimal number"
bad_file tiny_step.csv 'gpus,seq,strategy,step_s,tokens_per_s,mem_gib\n8,32K,ulysses,1e-320,1e-320,1e-320\n' \
    "tiny_step.csv:2: row 1: step_s '1e-320': out of range (valid: seconds per step in [1e-06, 1e+30], e.g. 1.42)"
bad_file tiny_tok.csv 'gpus,seq,strategy,step_s,tokens_per_s\n8,32K,ulysses,1,1e-320\n' \
    "tiny_tok.csv:2: row 1: tokens_per_s '1e-320': out of range (valid: tokens per second in [1e-06, 1e+30]"
bad_file tiny_mem.csv 'gpus,seq,strategy,mem_gib\n8,32K,ulysses,1e-320\n' \
    "tiny_mem.csv:2: row 1: mem_gib '1e-320': out of range (valid: GiB per GPU in [0.000976562, 1e+30]"
bad_file tiny_tf.csv 'gpus,seq,strategy,tflops_per_gpu,flop_convention\n8,32K,ulysses,1e-320,ulysim\n' \
    "tiny_tf.csv:2: row 1: tflops_per_gpu '1e-320': out of range (valid: TFLOP/s per GPU in [1e-06, 1e+30]"
bad_file tiny_ms.csv 'gpus,seq,strategy,step_ms\n8,32K,ulysses,1e-300\n' \
    "tiny_ms.csv:2: row 1: step_ms '1e-300': out of range (valid: milliseconds per step in [0.001, 1e+33], e.g. 1420)"
bad_file tiny.jsonl '{"gpus": 8, "seq": "32K", "strategy": "ulysses", "step_s": 1e-320}\n' \
    "tiny.jsonl:1: row 1: step_s '9.99988867182683"
# at the floors: read, and every error finite (no inf or nan in any output)
printf 'gpus,seq,strategy,step_s,tokens_per_s,tflops_per_gpu,flop_convention,mem_gib\n8,32K,ulysses,1e-6,1e-6,1e-6,ulysim,0.0009765625\n' \
    >"$W/floor.csv"
for fmt in table csv json; do
    expect_rc 0 "$U" validate --runs "$W/floor.csv" --format "$fmt"
    ! grep -qiE '(^|[^a-z])[+-]?(inf|nan)([^a-z]|$)' "$W/out" || fail "floor.csv --format $fmt: inf or nan: $(grep -iE 'inf|nan' "$W/out" | head -2)"
done
# ranking: a tie orders nothing, so it is no disagreement: two rows priced
# alike (the same flags) are not a pair to rank, counted apart as a tie (the
# 16-GPU run is priced a little faster than the 8-GPU ones, 6.525 s against
# 6.531: its ZeRO-3 gathers over two nodes use each node's 8 NICs, as NCCL
# runs them, so both pairs agree with the measured order)
printf 'label,group,strategy,gpus,seq,step_s\na,g,ulysses,8,32K,2.0\nb,g,ulysses,8,32K,2.5\nc,g,ulysses,16,32K,1.0\n' >"$W/tie.csv"
expect_rc 0 "$U" validate --runs "$W/tie.csv" --format json
tr -d ' \t\n' <"$W/out" | grep -q '"ranking":{"pairs":2,"agree":2,"ties":1}' ||
    fail "tie.csv: ranking $(tr -d ' \t\n' <"$W/out" | grep -o '"ranking":{[^}]*}')"
expect_rc 0 "$U" validate --runs "$W/tie.csv"
grep -q '^# ranking within groups: 2 of 2 pairs ordered as measured; 1 pair tied' "$W/out" ||
    fail "tie.csv: $(grep ranking "$W/out")"
# a spreadsheet's byte order mark before the header is not part of the first name
printf '\357\273\277gpus,seq,strategy,step_s\n8,8K,ulysses,1\n' >"$W/bom.csv"
expect_rc 0 "$U" validate --runs "$W/bom.csv"
expect_rc 2 "$U" validate --runs "$W/missing.csv"
expect_rc 2 "$U" validate --runs "$W"

# switches that need another flag beside them (FP8's need --dtype fp8, an
# uneven split a pipeline) are columns like any switch: true is the flag,
# priced as the plan command prices the same flags
printf 'label,model,gpus,seq,strategy,tp,pp,dtype,fp8-recipe,fp8-param-gather,pp-embed-layer,pp-loss-layer,framework,zero,global-batch,step_s\n' >"$W/fp8.csv"
printf 'a,llama3-8b,16,8K,megatron-sp,8,2,fp8,tensorwise,true,true,true,megatron,1,16,1.0\n' >>"$W/fp8.csv"
expect_rc 0 "$U" validate --runs "$W/fp8.csv" --format csv
expect_rc 0 "$U" plan --model llama3-8b --gpus 16 --seq 8K --strategy megatron-sp --tp 8 --pp 2 --dtype fp8 \
    --fp8-recipe tensorwise --fp8-param-gather --pp-embed-layer --pp-loss-layer --framework megatron --zero 1 --global-batch 16 --format csv
cp "$W/out" "$W/fp8plan.csv"
"$U" validate --runs "$W/fp8.csv" --format csv >"$W/out" 2>"$W/err"
same "$(pred step_s)" "$(col step_s <"$W/fp8plan.csv")" ||
    fail "fp8.csv: validate $(pred step_s), plan $(col step_s <"$W/fp8plan.csv")"
[ "$fails" = 0 ] && echo "runs_check: all passed"
exit "$fails"
