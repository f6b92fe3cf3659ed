# kern-allgather-cp-np2-s384.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy allgather-cp --seq 384 --zero 0 --warmup 1 --reps 9 --sync op --out kern-allgather-cp-np2-s384.trace 
# date 2026-12-08T01:07:13Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.031 of the host; loadavg after: 0.12 0.74 1.36 2/115 3404
