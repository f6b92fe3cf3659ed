# rounds/val-ulysses-np4-s4096.r2.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ulysses --split zigzag --seq 4096 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ulysses-np4-s4096.r2.trace 
# date 2026-11-29T21:03:47Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.002 of the host; loadavg after: 3.60 3.12 2.58 2/72 19131
