# The golden-output configurations: FILE|ARGS separated by spaces (shared by CMakeLists.txt and update-golden.sh)
set(CLI_GOLDEN
  "plan_default.txt|--gpus 64 --seq 1M"
  "plan_gpt7b_a100.json|--model gpt-7b --cluster dgx-a100-40g --gpus 32 --seq 128K --format json"
  "sweep_llama70b_h200.csv|sweep --model llama3-70b --cluster dgx-h200 --seq 32K..512K --gpus 64..1024"
  "maxseq_gpt30b_a100.txt|max-seq --model gpt-30b --cluster dgx-a100-80g --gpus 128"
  "plan_pp4_gpt7b_a100.txt|--model gpt-7b --cluster dgx-a100-40g --gpus 64 --seq 32K --pp 4 --global-batch 64"
)
