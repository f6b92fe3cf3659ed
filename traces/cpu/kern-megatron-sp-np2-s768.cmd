# kern-megatron-sp-np2-s768.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy megatron-sp --seq 768 --zero 0 --warmup 1 --reps 9 --out kern-megatron-sp-np2-s768.trace 
# date 2026-11-29T18:01:01Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.124 of the host; loadavg after: 1.57 2.40 2.77 3/91 21225
