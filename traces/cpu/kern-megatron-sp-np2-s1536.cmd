# kern-megatron-sp-np2-s1536.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy megatron-sp --seq 1536 --zero 0 --warmup 1 --reps 9 --sync op --out kern-megatron-sp-np2-s1536.trace 
# date 2026-12-08T01:07:38Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 0.16 0.69 1.33 3/114 3536
