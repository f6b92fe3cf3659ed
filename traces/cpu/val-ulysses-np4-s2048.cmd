# val-ulysses-np4-s2048.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ulysses --seq 2048 --zero 0 --warmup 1 --reps 9 --out val-ulysses-np4-s2048.trace 
# date 2026-11-29T18:20:06Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.165 of the host; loadavg after: 5.68 4.30 3.80 6/113 2969
