# kern-allgather-cp-np4-s384.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy allgather-cp --seq 384 --zero 0 --warmup 1 --reps 9 --out kern-allgather-cp-np4-s384.trace 
# date 2026-11-29T18:13:59Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.132 of the host; loadavg after: 2.94 3.88 3.57 3/88 31317
