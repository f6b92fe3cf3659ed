# kern-megatron-sp-np2-s768.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy megatron-sp --seq 768 --zero 0 --warmup 1 --reps 9 --sync op --out kern-megatron-sp-np2-s768.trace 
# date 2026-11-29T20:39:22Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 0.27 1.37 2.64 2/74 15216
