# moe-np2-s1024.trace: made by (from the repository root; harness from build tree build)
env OPENBLAS_NUM_THREADS=1 nice -n -15 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to core --map-by core build/harness/ulyharness --strategy ulysses --ulysses 1 --seq 1024 --experts 8 --topk 2 --moe-ffn 256 --shared-ffn 256 --ep 2 --zero 0 --warmup 1 --reps 9 --sync op --out moe-np2-s1024.trace 
# date 2026-12-08T01:13:35Z; host vm, 2 cores; try 1; CPU used by other processes during the run: 0.000 of the host; loadavg after: 0.88 0.79 1.16 2/114 5120
