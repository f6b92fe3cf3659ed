#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# and runs each for a set time from its seed corpus in fuzz/corpus/.
# Usage: scripts/fuzz.sh [seconds per target, default 60] [target...]
# Targets (one per reader): size, preset (model and cluster presets), args
# (ulysim's flags), trace (harness traces, also calibrate's input), eval,
# megatron (Megatron-LM logs), torch (PyTorch profiler traces), runs (runs
# files), hf (Hugging Face config.json), gemms (calibrate --gemms tables). Counts of
# past runs: fuzz/README.md.
# Prints each target's executions and findings; exits 1 on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(size preset args trace eval megatron torch runs hf gemms pplayout)
out=build-fuzz; mkdir -p "$out"
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Imodel/include -Imodel -Iformats -Isim/driver"
model_src=$(ls model/*.c model/strategy/*.c)
# the formats library (preset loader, trace reader) and where it finds presets
formats=(formats/*.c -DULY_PRESET_DIR_SOURCE="\"$PWD/sim/presets\"" -DULY_PRESET_DIR_INSTALLED="\"/nonexistent\"")
build() { # name sources...: rebuilt when a source is newer than the target
  local name=$1; shift
  if [ -x "$out/fuzz_$name" ] && [ -z "$(find fuzz formats model sim/driver -newer "$out/fuzz_$name" -name '*.[ch]' | head -1)" ]; then
    return 0
  fi
  clang $cflags "$@" -o "$out/fuzz_$name" -lcjson -lm
}
total=0; bad=0
for t in "${targets[@]}"; do
  case $t in
    size|eval) build "$t" "fuzz/fuzz_$t.c" $model_src ;;
    preset|trace|megatron|torch|runs|hf) build "$t" "fuzz/fuzz_$t.c" "${formats[@]}" $model_src ;;
    *) [ -f "fuzz/fuzz_$t.c" ] && [ -f "fuzz/$t.sources" ] || { echo "fuzz: no target '$t' yet, skipped"; continue; }
       build "$t" "fuzz/fuzz_$t.c" $(cat "fuzz/$t.sources") "${formats[@]}" $model_src ;;
  esac
  work="$out/corpus-$t"; mkdir -p "$work"
  log="$out/$t.log"
  set +e
  (cd "$out" && ./fuzz_$t -max_total_time="$secs" -print_final_stats=1 "corpus-$t" "../fuzz/corpus/$t") >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  runs=${runs:-0}; total=$((total + runs))
  if [ $rc -ne 0 ]; then bad=$((bad + 1)); echo "fuzz $t: FINDING after $runs runs (see $log)"; grep -E 'ERROR|runtime error' "$log" | head -3
  else echo "fuzz $t: $runs runs in ${secs}s, no finding"; fi
done
echo "fuzz: $total executions in total, $bad target(s) with findings"
[ $bad = 0 ]
