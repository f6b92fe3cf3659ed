# val-ulysses-np4-s4096.trace (retest): made by the same command as ../val-ulysses-np4-s4096.trace, from the repository root:
env OPENBLAS_NUM_THREADS=1 nice -n -10 mpirun -np 4 --oversubscribe --allow-run-as-root build-validate/harness/ulyharness --strategy ulysses --seq 4096 --zero 0 --warmup 1 --reps 9 --out val-ulysses-np4-s4096.trace 
# date 2026-11-29T18:33:16Z; host vm, 2 cores; run by a loop over ../val-*.cmd with this session's scheduling group at nice -10 (no retry on interference; not measured)
