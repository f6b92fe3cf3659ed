# kern-megatron-sp-np4-s384.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy megatron-sp --seq 384 --zero 0 --warmup 1 --reps 9 --out kern-megatron-sp-np4-s384.trace 
# date 2026-11-29T18:13:33Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.062 of the host; loadavg after: 3.47 4.06 3.62 2/89 31182
