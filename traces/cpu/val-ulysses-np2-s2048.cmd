# val-ulysses-np2-s2048.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ulysses --seq 2048 --zero 0 --warmup 1 --reps 9 --out val-ulysses-np2-s2048.trace 
# date 2026-11-29T18:07:49Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.211 of the host; loadavg after: 8.40 4.63 3.46 12/136 27388
