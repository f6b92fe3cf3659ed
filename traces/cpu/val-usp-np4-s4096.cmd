# val-usp-np4-s4096.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy usp --seq 4096 --zero 0 --warmup 1 --reps 9 --out val-usp-np4-s4096.trace 
# date 2026-11-29T18:24:06Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.072 of the host; loadavg after: 5.98 5.47 4.44 3/99 5990
