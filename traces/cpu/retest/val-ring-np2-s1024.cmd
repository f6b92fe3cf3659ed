# val-ring-np2-s1024.trace (retest): made by the same command as ../val-ring-np2-s1024.trace, from the repository root:
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 2 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ring --seq 1024 --zero 0 --warmup 1 --reps 9 --out val-ring-np2-s1024.trace 
# date 2026-11-29T18:30:40Z; host vm, 2 cores; run by a loop over ../val-*.cmd with this session's scheduling group at nice -10 (no retry on interference; not measured)
