# rounds/val-ring-np2-s1024.r3.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ring --split zigzag --seq 1024 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-np2-s1024.r3.trace 
# date 2026-11-29T20:42:16Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 1.01 1.24 2.37 1/73 15866
