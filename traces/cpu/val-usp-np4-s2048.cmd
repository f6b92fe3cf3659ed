# val-usp-np4-s2048.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy usp --seq 2048 --zero 0 --warmup 1 --reps 9 --out val-usp-np4-s2048.trace 
# date 2026-11-29T18:22:02Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.099 of the host; loadavg after: 6.75 5.36 4.26 3/88 5078
