# rounds/val-ring-contiguous-np4-s2048.r1.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ring --split contiguous --seq 2048 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np4-s2048.r1.trace 
# date 2026-11-29T20:54:19Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.002 of the host; loadavg after: 2.38 1.84 2.03 2/72 17946
