# rounds/val-ring-contiguous-np4-s4096.r3.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy ring --split contiguous --seq 4096 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-ring-contiguous-np4-s4096.r3.trace 
# date 2026-11-29T21:05:03Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.003 of the host; loadavg after: 3.49 3.16 2.64 2/72 19251
