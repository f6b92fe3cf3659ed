# kern-allgather-cp-np4-s1536.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy allgather-cp --seq 1536 --zero 0 --warmup 1 --reps 9 --out kern-allgather-cp-np4-s1536.trace 
# date 2026-11-29T18:15:26Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.103 of the host; loadavg after: 3.37 3.72 3.54 3/95 32066
