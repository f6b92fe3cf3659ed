# probe-cases.sh: the cases of scripts/probe.sh (sourced: c, $U, $H, $W, $D,
# $root are its). Each case: c WANT NEEDLE COMMAND... (see probe.sh).
I=$W/in
mkdir -p "$I"
mk() { printf '%b' "$2" >"$I/$1"; } # NAME CONTENT (printf %b escapes)
FF=$(printf '\377')

# ------------------------------------------------ ulysim flags x values
for f in --gpus --seq --model --cluster --strategy --ulysses --ring --tp --pp --batch --global-batch --dtype \
         --recompute --zero --split --format --virtual-stages --framework --attn-density --ffn-chunks \
         --loss-chunks --context-parallel-size --cp-comm-type --hierarchical-context-parallel-sizes \
         --num-layers-per-virtual-pipeline-stage --zero-prefetch --nic-bw --intra-bw --gpus-per-node --oversub \
         --attn-kernel --step-overhead-ms --micro-batch-size --global-batch-size --seq-length \
         --tensor-model-parallel-size --pipeline-model-parallel-size --virtual-pipeline-model-parallel-size; do
    for v in abc -1 0x10 1e999 nan 99999999999999999999999 " 7" "7 " 1.5.5; do
        c 2 "$v" "$U" "$f" "$v"
    done
    c 2 "$f" "$U" "$f" ""
    c 2 "$f" "$U" "$f" "$FF"
done
# each command with a flag it cannot honour, and valid edges that must work
c 2 "--timeline" "$U" sweep --gpus 8,16 --timeline "$W/t.json"
c 2 "--format" "$U" presets show gpt-7b --format json
c 2 "'ring,ring'" "$U" --strategy ring,ring
c 2 "'1e-320'" "$U" --attn-density 1e-320
c 0 "" "$U" --attn-density 1e-300 --gpus 8
c 0 "" "$U" --strategy all,ring --gpus 8
c 2 "--gpus" "$U" sweep --gpus 8,8
c 2 "frobnicate" "$U" frobnicate
c 2 "--frob" "$U" --frob
c 0 "" "$U" --gpus 8 --seq 128K --format json
c 0 "" "$U" max-seq --gpus 8
c 2 "--gpus" "$U" --gpus

# ------------------------------------------------ ulyharness flags x values
if [ -n "$H" ]; then
    for f in --strategy --ulysses --ring --tp --pp --seq --heads --kv-heads --head-dim --ffn --batch --vocab --layers \
             --split --recompute --zero --kernel --backend --dtype --threads --warmup --reps --sync --cluster --seed \
             --check --check-seed --timeout --mb-min --mb-max --experts --topk --moe-ffn --shared-ffn --ep --etp \
             --moe-dispatcher; do
        for v in abc -1 1e999 99999999999999999999999 " 7"; do
            c 2 "$f" "$H" --strategy ulysses "$f" "$v"
        done
        c 2 "$f" "$H" "$f"
    done
    c 2 "--seed '18446744073709551616'" "$H" --strategy ulysses --seed 18446744073709551616
    c 2 "--frob" "$H" --frob
    # a MoE layer: the router's choices past the experts, flags without --experts, sizes past any node
    c 2 "--topk 9" "$H" --strategy ulysses --experts 8 --topk 9 --moe-ffn 64 --zero 1
    c 2 "without --experts" "$H" --strategy ulysses --moe-dispatcher allgather
    c 2 "needs" "$H" --strategy ulysses --experts 4096 --topk 2 --moe-ffn 4M --zero 1
    c 2 "--out" "$H" --strategy ulysses --seq 64 --out "$W/nodir/x.trace"
    c 2 "is a directory" "$H" --strategy ulysses --seq 64 --out "$W/keep"
    c 2 "h.trace" "$H" --strategy ulysses --seq 64 --cluster "$W/keep/h.trace"
fi

# ------------------------------------------------ model and cluster presets
mk empty.json ''
mk nul.json '{"name": "x\0"}'
mk trunc.json '{"name": "x", "layers": 3'
mk garbage.json 'not json at all'
mk array.json '[1, 2, 3]'
mk string.json '"a string"'
mk dupkey.json '{"name": "a", "name": "b"}'
mk bom.json '\357\273\277{"name": "x"}'
mk hugenum.json '{"layers": 1e999}'
mk negnum.json '{"layers": -3}'
mk lead0.json '{"layers": 032}'
mk trailing.json '{"name": "x"} {"name": "y"}'
mk ff.json "{\"name\": \"x${FF}\"}"
mk nested.json "$(printf '%0.s[' $(seq 1 3000))"
mk null.json 'null'
mk obj.json '{}'
head -c 2000000 /dev/zero | tr '\0' ' ' >"$I/big.json"
mkfifo "$I/fifo.json"
mkdir -p "$I/dir.json"
ln -sf "$I/loop.json" "$I/loop.json"
for p in empty nul trunc garbage array string dupkey bom hugenum negnum lead0 trailing ff nested null obj big fifo dir loop; do
    c 2 "$p.json" "$U" --model "$I/$p.json"
    c 2 "$p.json" "$U" --cluster "$I/$p.json"
done
c 2 "nosuch.json" "$U" --model "$I/nosuch.json"
c 2 "layers" "$U" --model "layers=0,hidden=4096"
c 2 "kv" "$U" --model "kv=8"
c 2 "zzz" "$U" presets show zzz
c 0 "" "$U" presets show gpt-7b
c 0 "" "$U" presets

# ------------------------------------------------ runs files (validate --runs)
rf() { mk "$1" "$2"; c 2 "$1" "$U" validate --runs "$I/$1"; }
rf r-empty.csv ''
rf r-header.csv 'gpus,seq,strategy,step_s\n'
rf r-bogus.csv 'gpus,seq,strategy,bogus,step_s\n8,8K,ulysses,1,1.0\n'
rf r-timeline.csv 'gpus,seq,strategy,timeline,step_s\n8,8K,ulysses,t.json,1.0\n'
rf r-short.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses\n'
rf r-quote.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,"1.0\n'
rf r-hex.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,0x10\n'
rf r-pad.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses, 2.5\n'
rf r-inf.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,inf\n'
rf r-tiny.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,1e-320\n'
rf r-neg.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,-1\n'
rf r-warp.csv 'gpus,seq,strategy,step_s\n8,8K,warp,1.0\n'
rf r-seq.csv 'gpus,seq,strategy,step_s\n8,1.5,ulysses,1.0\n'
rf r-nul.csv 'gpus,seq,strategy,step_s\n8,8K,ulysses,1.0\0\n'
rf r-ff.csv "gpus,seq,strategy,step_s\n8,8K,ulysses${FF},1.0\n"
rf r-dupcol.csv 'gpus,gpus,seq,strategy,step_s\n8,8,8K,ulysses,1.0\n'
rf r-nostrat.csv 'gpus,seq,step_s\n8,8K,1.0\n'
rf r-bool.csv 'gpus,seq,strategy,causal,step_s\n8,8K,ulysses,maybe,1.0\n'
rf r-tflops.csv 'gpus,seq,strategy,tflops_per_gpu\n8,8K,ulysses,100\n'
rf r-help.csv 'gpus,seq,strategy,help,step_s\n8,8K,ulysses,1,1.0\n'
c 2 "fifo.json" "$U" validate --runs "$I/fifo.json"
c 2 "dir.json" "$U" validate --runs "$I/dir.json"
c 0 "" "$U" validate --runs "$D/sim/plot/data/runs-narrow.csv"

# ------------------------------------------------ Megatron-LM logs (runs from-megatron)
LOG=$D/sim/ingest/data/gpt7b-tp8-sp.log
ml() { # NAME SED_EXPR NEEDLE: the fixture edited
    sed "$2" "$LOG" >"$I/$1"
    c 2 "$3" "$U" runs from-megatron "$I/$1" -o "$W/keep/runs.csv"
}
ml m-comma.log 's/per iteration (ms): 4012.5/per iteration (ms): 4,012.5/' "'4,012.5'"
ml m-deccomma.log 's/per iteration (ms): 4012.5/per iteration (ms): 4012,5/' "'4012,5'"
ml m-tflops.log 's/(TFLOP\/s\/GPU): 431.0/(TFLOP\/s\/GPU): 1,431.0/' "'1,431.0'"
ml m-mem.log 's/max reserved: 62464.0/max reserved: 62,464.0/' "'62,464.0'"
ml m-junk.log 's/max reserved: 62464.0/max reserved: 99999x/' "'99999x'"
ml m-inf.log 's/per iteration (ms): 4012.5/per iteration (ms): inf/' "'inf'"
ml m-neg.log 's/per iteration (ms): 4012.5/per iteration (ms): -4012.5/' "'-4012.5'"
ml m-hex.log 's/per iteration (ms): 4012.5/per iteration (ms): 0x10/' "'0x10'"
ml m-tiny.log 's/per iteration (ms): 4012.5/per iteration (ms): 1e-305/' "1e-305"
ml m-tp.log 's/tensor-model-parallel size: 8/tensor-model-parallel size: 8x/' "'8x'"
ml m-vocab.log 's/new size: 50304/new size: 50304x/' "'50304x'"
ml m-iter.log 's/iteration       20\//iteration      1.5\//' "1.5"
ml m-back.log 's/iteration       20\//iteration        5\//' "iteration"
ml m-nul.log 's/lm loss/lm\x00loss/' "m-nul.log"
mk m-empty.log ''
c 2 "m-empty.log" "$U" runs from-megatron "$I/m-empty.log" -o "$W/keep/runs.csv"
c 2 "garbage.json" "$U" runs from-megatron "$I/garbage.json" -o "$W/keep/runs.csv"
c 2 "fifo.json" "$U" runs from-megatron "$I/fifo.json" -o "$W/keep/runs.csv"
c 2 "--warmup" "$U" runs from-megatron "$LOG" --warmup -1 -o "$W/keep/runs.csv"
c 0 "" "$U" runs from-megatron "$LOG" -o "$W/m.csv"

# ------------------------------------------------ PyTorch profiler traces (validate --torch-trace)
TT=$D/sim/ingest/data/layer-h100.trace.json
TF="--model $D/sim/ingest/data/llama3-8b-2layers.json --gpus 1 --seq 8K --strategy megatron-tp --recompute full --zero 0"
tt() { mk "$1" "$2"; c 2 "$1" "$U" validate --torch-trace "$I/$1" $TF; }
tt t-empty.json ''
tt t-garbage.json 'garbage'
tt t-array.json '[]'
tt t-noevents.json '{"traceEvents": 5}'
tt t-events0.json '{"traceEvents": []}'
tt t-badev.json '{"traceEvents": [{"ph": "X", "name": "k", "ts": "x", "dur": 1}]}'
tt t-negdur.json '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -5}]}'
tt t-nested.json "{\"traceEvents\": $(printf '%0.s[' $(seq 1 3000))"
head -c "$(($(wc -c <"$TT") / 2))" "$TT" >"$I/t-cut.json"
c 2 "t-cut.json" "$U" validate --torch-trace "$I/t-cut.json" $TF
c 2 "fifo.json" "$U" validate --torch-trace "$I/fifo.json" $TF
c 0 "" "$U" validate --torch-trace "$TT" $TF

# ------------------------------------------------ harness traces (trace check)
GT=$D/sim/plot/data/ring-4.trace
MB=$D/sim/plot/data/microbench-2.trace
ht() { # NAME SED_EXPR NEEDLE
    sed "$2" "$GT" >"$I/$1"
    c 2 "$3" "$U" trace check "$I/$1"
}
ht h-version.trace '1s/"version":1/"version":99/' "h-version.trace:1"
ht h-cut.trace '$d' "h-cut.trace"
ht h-bytes.trace '3s/"bytes_sent":\([0-9]*\)/"bytes_sent":1\1/' "h-bytes.trace"
ht h-nul.trace '2s/"type"/"ty\x00pe"/' "h-nul.trace:2"
ht h-garbage.trace '2s/$/ garbage/' "h-garbage.trace:2"
ht h-dup.trace '2p' "h-dup.trace"
ht h-okfalse.trace '$s/"ok":true/"ok":false/' "h-okfalse.trace"
ht h-time.trace '3s/"median":[0-9.e+-]*/"median":-1/' "h-time.trace:3"
ht h-lead0.trace '3s/"median":/"median":05,"x":/' "h-lead0.trace:3"
ht h-format.trace '1s/"format":"ulysim-trace"/"format":"other"/' "h-format.trace:1"
ht h-ff.trace "2s/\"type\"/\"ty${FF}pe\"/" "h-ff.trace:2"
head -c 1000 "$GT" >"$I/h-head.trace"
c 2 "h-head.trace" "$U" trace check "$I/h-head.trace"
c 2 "empty.json" "$U" trace check "$I/empty.json"
c 2 "fifo.json" "$U" trace check "$I/fifo.json"
c 2 "dir.json" "$U" trace check "$I/dir.json"
c 0 "" "$U" trace check "$GT" "$MB"
c 2 "h-cut.trace" "$U" validate "$I/h-cut.trace"
c 2 "h-cut.trace" "$U" trace export "$I/h-cut.trace" -o "$W/keep/out.json"
c 2 "h-cut.trace" "$U" plot timeline "$I/h-cut.trace" -o "$W/keep/p.png"

# ------------------------------------------------ calibrate's input
{ sed -n 1,2p "$MB"; tail -n 1 "$MB"; } >"$I/c-one.trace"
c 2 "1 usable micro-benchmark point" "$U" calibrate "$I/c-one.trace" -o "$W/keep/out.json"
sed '2,$s/"median":[0-9.e+-]*/"median":0/' "$MB" >"$I/c-zero.trace"
c 2 "c-zero.trace" "$U" calibrate "$I/c-zero.trace" -o "$W/keep/out.json"
sed '2s/"bytes_sent":\([0-9]*\)/"bytes_sent":\1000000/' "$MB" >"$I/c-bytes.trace"
c 2 "c-bytes.trace:2" "$U" calibrate "$I/c-bytes.trace" -o "$W/keep/out.json"
c 2 "ring-4.trace" "$U" calibrate "$GT" -o "$W/keep/out.json"
c 2 "h-cut.trace" "$U" calibrate "$I/h-cut.trace" -o "$W/keep/out.json"
c 2 "empty.json" "$U" calibrate "$I/empty.json" -o "$W/keep/out.json"
c 2 "--name" "$U" calibrate "$MB" -o "$W/c.json" --name ""
c 2 "--base" "$U" calibrate "$MB" -o "$W/c.json" --base nosuch
c 0 "" "$U" calibrate "$MB" -o "$W/c.json"

# ------------------------------------------------ output targets
mkfifo "$W/fifo.out" "$W/fifo.png" "$W/fifo.csv"
mkdir -p "$W/dir.png"
chmod 555 "$W/ro"
# a read-only directory stops only a user who is not root
RO=""
[ "$(id -u)" = 0 ] || RO=$W/ro/x
for o in "$W/keep" "$W/nodir/x" "$W/fifo.out" $RO; do
    c 2 "$o" "$U" trace export "$GT" -o "$o"
    c 2 "$o" "$U" runs from-megatron "$LOG" -o "$o"
    c 2 "$o" "$U" calibrate "$MB" -o "$o"
    c 2 "$o" "$U" --gpus 8 --timeline "$o"
done
for o in "$W/dir.png" "$W/nodir/x.png" "$W/fifo.png" ${RO:+$RO.png}; do
    c 2 "$o" "$U" plot throughput --gpus 8 --seq 8K,16K -o "$o"
done
c 2 "$W/fifo.csv" "$U" plot throughput --gpus 8 --seq 8K,16K --data-only -o "$W/fifo.png"
c 2 "unknown image format" "$U" plot throughput --gpus 8 -o "$W/keep/runs.csv"
c 2 "$GT" "$U" trace export "$GT" -o "$GT"
c 2 "$LOG" "$U" runs from-megatron "$LOG" -o "$LOG"
c 2 "$MB" "$U" calibrate "$MB" -o "$MB"
c 2 "runs.csv" "$U" validate --runs "$W/keep/runs.csv" --format json
c 1 "/dev/full" "$U" trace export "$GT" -o /dev/full
c 1 "/dev/full" "$U" runs from-megatron "$LOG" -o /dev/full
c 1 "/dev/full" "$U" calibrate "$MB" -o /dev/full
c 1 "/dev/full" "$U" --gpus 8 --timeline /dev/full
c 0 "" "$U" trace export "$GT" -o /dev/null
c 0 "" "$U" trace export "$GT" -o "$W/export.json"
c 0 "" "$U" trace export "$GT" -o "$W/export.json"
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    c 0 "" "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/p.png"
    c 0 "" "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/p.png"
fi
if [ -n "$H" ]; then
    c 2 "a FIFO with no reader" "$H" --strategy ulysses --seq 64 --out "$W/fifo.out"
    [ -z "$RO" ] || c 2 "$RO" "$H" --strategy ulysses --seq 64 --out "$RO"
    c 2 "is a directory" "$H" --strategy ulysses --seq 64 --out "$W/ro"
fi

# ------------------------------------------------ signals (every mode runs these)
ALWAYS=1
printf '#!/bin/sh\nsleep 30\n' >"$W/slow-gp" && chmod +x "$W/slow-gp"
# sig SIGNAL: a plot whose gnuplot sleeps, signalled once its temporaries
# exist: exit 1 with one line, nothing left, keep/p.png untouched
cat >"$W/sig" <<SIG
#!/bin/sh
GNUPLOT=$W/slow-gp "$U" plot throughput --gpus 8 --seq 8K,16K -o "$W/keep/p.png" &
p=\$!
i=0
while [ \$i -lt 300 ] && ! ls "$W"/keep/p.png.tmp.* >/dev/null 2>&1; do sleep 0.1; i=\$((i + 1)); done
kill -"\$1" \$p
wait \$p
SIG
chmod +x "$W/sig"
for s in TERM INT HUP; do c 1 "interrupted by SIG$s" "$W/sig" $s; done
ALWAYS=0

# ------------------------------------------------ signals to a harness job's processes
# (scripts/probe-hxsig.sh: SIGTERM and SIGHUP to mpirun, rank 0 and rank 1)
MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
if [ -n "$H" ] && [ -n "$MPIEXEC" ]; then
    for who in mpirun rank0 rank1; do
        for s in TERM HUP; do
            ALWAYS=$([ $who$s = rank1TERM ] && echo 1 || echo 0)
            c 1 "by SIG$s to $who; nothing left" sh "$root/scripts/probe-hxsig.sh" "$W" "$MPIEXEC" "$H" $s $who
        done
    done
    ALWAYS=0
fi
