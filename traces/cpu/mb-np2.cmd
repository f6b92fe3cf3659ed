# mb-np2.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np2.trace 
# date 2026-12-01T19:24:24Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.048 of the host; loadavg after: 1.08 1.70 4.49 2/83 1135
