# val-ring-np4-s4096.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ring --seq 4096 --zero 0 --warmup 1 --reps 9 --out val-ring-np4-s4096.trace 
# date 2026-11-29T18:23:25Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.078 of the host; loadavg after: 6.21 5.44 4.38 3/102 5706
