# kern-megatron-sp-np2-s768.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy megatron-sp --seq 768 --zero 0 --warmup 1 --reps 9 --sync op --out kern-megatron-sp-np2-s768.trace 
# date 2026-12-08T01:07:21Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 0.11 0.72 1.35 3/114 3448
