# kern-allgather-cp-np2-s384.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy allgather-cp --seq 384 --zero 0 --warmup 1 --reps 9 --out kern-allgather-cp-np2-s384.trace 
# date 2026-11-29T18:00:33Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.150 of the host; loadavg after: 1.67 2.49 2.81 3/91 21097
