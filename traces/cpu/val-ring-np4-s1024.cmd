# rounds/val-ring-np4-s1024.r1.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ring --split zigzag --seq 1024 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-np4-s1024.r1.trace 
# date 2026-11-29T20:50:52Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 1.89 1.60 2.02 2/72 16985
#   val-ring-np4-s1024.trace: round 1 of 3 (the median measured step)
