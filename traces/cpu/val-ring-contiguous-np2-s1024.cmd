# rounds/val-ring-contiguous-np2-s1024.r1.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ring --split contiguous --seq 1024 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np2-s1024.r1.trace 
# date 2026-12-08T01:08:44Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 0.36 0.66 1.27 4/114 3847
#   val-ring-contiguous-np2-s1024.trace: round 1 of 3 (the median measured step)
