# kern-megatron-sp-np2-s384.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy megatron-sp --seq 384 --zero 0 --warmup 1 --reps 9 --sync op --out kern-megatron-sp-np2-s384.trace 
# date 2026-12-01T19:23:00Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.045 of the host; loadavg after: 1.64 2.01 4.85 2/81 781
