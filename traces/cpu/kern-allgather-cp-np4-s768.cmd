# kern-allgather-cp-np4-s768.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy allgather-cp --seq 768 --zero 0 --warmup 1 --reps 9 --out kern-allgather-cp-np4-s768.trace 
# date 2026-11-29T18:14:27Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 2.71 3.74 3.53 2/81 31488
