# rounds/val-usp-np4-s2048.r3.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy usp --split zigzag --seq 2048 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-usp-np4-s2048.r3.trace 
# date 2026-11-29T20:56:17Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.004 of the host; loadavg after: 2.57 2.08 2.09 2/72 18305
