# rounds/val-ring-contiguous-np2-s2048.r1.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ring --split contiguous --seq 2048 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np2-s2048.r1.trace 
# date 2026-11-29T20:43:04Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.002 of the host; loadavg after: 1.21 1.25 2.32 2/72 16051
#   val-ring-contiguous-np2-s2048.trace: round 1 of 3 (the median measured step)
