# rounds/val-ulysses-np2-s1024.r3.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ulysses --split zigzag --seq 1024 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ulysses-np2-s1024.r3.trace 
# date 2026-12-08T01:09:27Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 0.62 0.68 1.25 2/114 4069
