# mb-np4.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np4.trace 
# date 2026-11-29T20:50:30Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.004 of the host; loadavg after: 1.82 1.57 2.02 2/72 16881
