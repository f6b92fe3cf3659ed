# mb-np2.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np2.trace 
# date 2026-11-29T17:59:45Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.200 of the host; loadavg after: 2.09 2.71 2.90 3/92 20848
