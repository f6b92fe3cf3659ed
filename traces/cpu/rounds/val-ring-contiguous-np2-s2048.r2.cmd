# rounds/val-ring-contiguous-np2-s2048.r2.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ring --split contiguous --seq 2048 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np2-s2048.r2.trace 
# date 2026-12-08T01:10:34Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 0.72 0.68 1.21 2/114 4390
