# rounds/val-ring-contiguous-np2-s4096.r2.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ring --split contiguous --seq 4096 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np2-s4096.r2.trace 
# date 2026-12-08T01:12:31Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 0.94 0.77 1.18 2/114 4845
#   val-ring-contiguous-np2-s4096.trace: round 2 of 3 (the median measured step)
