# kern-megatron-sp-np2-s1536.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy megatron-sp --seq 1536 --zero 0 --warmup 1 --reps 9 --out kern-megatron-sp-np2-s1536.trace 
# date 2026-11-29T18:02:11Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.106 of the host; loadavg after: 1.91 2.31 2.71 3/94 21469
