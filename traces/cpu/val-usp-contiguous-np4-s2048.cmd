# rounds/val-usp-contiguous-np4-s2048.r2.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy usp --split contiguous --seq 2048 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-usp-contiguous-np4-s2048.r2.trace 
# date 2026-11-29T20:55:43Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.001 of the host; loadavg after: 2.72 2.05 2.08 2/72 18202
#   val-usp-contiguous-np4-s2048.trace: round 2 of 3 (the median measured step)
