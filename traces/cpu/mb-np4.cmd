# mb-np4.trace: made by (from the repository root; harness from build tree build-validate)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np4.trace 
# date 2026-11-29T18:13:25Z; host vm, 2 cores; try 3; CPU used by other processes during the run: 0.184 of the host; loadavg after: 3.45 4.08 3.62 4/98 30951
