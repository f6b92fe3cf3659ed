# mb-np2.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np2.trace 
# date 2026-12-08T01:08:18Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.004 of the host; loadavg after: 0.36 0.68 1.30 2/115 3713
