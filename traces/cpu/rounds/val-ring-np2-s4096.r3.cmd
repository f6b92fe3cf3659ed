# rounds/val-ring-np2-s4096.r3.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ring --split zigzag --seq 4096 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-np2-s4096.r3.trace 
# date 2026-12-08T01:13:26Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.003 of the host; loadavg after: 1.04 0.81 1.17 2/114 5022
