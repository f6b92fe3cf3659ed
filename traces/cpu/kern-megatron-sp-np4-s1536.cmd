# kern-megatron-sp-np4-s1536.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy megatron-sp --seq 1536 --zero 0 --warmup 1 --reps 9 --out kern-megatron-sp-np4-s1536.trace 
# date 2026-11-29T18:14:41Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.061 of the host; loadavg after: 2.86 3.73 3.53 4/100 31663
