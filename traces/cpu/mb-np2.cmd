# mb-np2.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --microbench --mb-min 1K --mb-max 4M --warmup 2 --reps 20 --out mb-np2.trace 
# date 2026-11-29T20:40:48Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 1.09 1.36 2.52 1/74 15475
