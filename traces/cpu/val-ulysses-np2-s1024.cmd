# rounds/val-ulysses-np2-s1024.r1.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ulysses --split zigzag --seq 1024 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ulysses-np2-s1024.r1.trace 
# date 2026-11-29T20:40:58Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.002 of the host; loadavg after: 0.92 1.31 2.49 2/74 15520
#   val-ulysses-np2-s1024.trace: round 1 of 3 (the median measured step)
