# val-ring-np4-s1024.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ring --seq 1024 --zero 0 --warmup 1 --reps 9 --out val-ring-np4-s1024.trace 
# date 2026-11-29T18:18:32Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.122 of the host; loadavg after: 3.38 3.73 3.59 3/89 493
