# val-ring-np4-s2048.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ring --seq 2048 --zero 0 --warmup 1 --reps 9 --out val-ring-np4-s2048.trace 
# date 2026-11-29T18:21:05Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.188 of the host; loadavg after: 8.59 5.32 4.18 11/127 4382
