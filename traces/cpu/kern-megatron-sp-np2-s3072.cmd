# kern-megatron-sp-np2-s3072.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy megatron-sp --seq 3072 --zero 0 --warmup 1 --reps 9 --out kern-megatron-sp-np2-s3072.trace 
# date 2026-11-29T18:04:18Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.097 of the host; loadavg after: 2.59 2.40 2.69 3/89 21780
