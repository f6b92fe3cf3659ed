# rounds/val-usp-np4-s4096.r2.trace: made by (from the repository root; harness from build tree ../../tmp/recbuild)
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root ../../tmp/recbuild/harness/ulyharness --strategy usp --split zigzag --seq 4096 --zero 0 --warmup 1 --reps 9 --sync op --out rounds/val-usp-np4-s4096.r2.trace 
# date 2026-11-29T21:01:53Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.002 of the host; loadavg after: 3.41 2.91 2.45 2/73 18978
