# kern-allgather-cp-np2-s768.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy allgather-cp --seq 768 --zero 0 --warmup 1 --reps 9 --sync op --out kern-allgather-cp-np2-s768.trace 
# date 2026-11-29T20:39:31Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.003 of the host; loadavg after: 0.38 1.36 2.62 2/74 15259
