# val-ring-np2-s4096.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ring --seq 4096 --zero 0 --warmup 1 --reps 9 --out val-ring-np2-s4096.trace 
# date 2026-11-29T18:13:00Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.092 of the host; loadavg after: 3.82 4.20 3.64 4/99 30209
