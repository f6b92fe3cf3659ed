/* FLOP accounting: the TFLOP/s per GPU of the Ulysses paper's Tables 2-3
 * follow from their iteration times with the paper's accounting,
 * 96 B N L h^2 (1 + N/(6h) + V/(16 L h)) / (time x GPUs), within 0.5%
 * (GPT-7B: L 32, h 4096, V 50304, global batch 8). */
#include "fixtures.h"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "traces/published/ulysses_tables_2_3.csv";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) FX_DONE();
    uly_model m = fx_gpt7b();
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "table", 5) == 0) continue;
        char tab[8];
        long long seq, gpus;
        double ms, tflops;
        if (sscanf(line, "%7[^,],%lld,%lld,%lf,%lf", tab, &seq, &gpus, &ms, &tflops) != 5) continue;
        const double fl = uly_flops_megatron(&m, 8, seq, 1);
        const double got = fl / (ms / 1e3) / (double)gpus / 1e12;
        const double err = fabs(got - tflops) / tflops;
        printf("%s N=%lld gpus=%lld: %.2f TFLOP/s from %.1f ms; paper %.2f (%.3f%%)\n", tab, seq, gpus, got, ms,
               tflops, 100 * err);
        CHECK(err <= 0.005, "%s N=%lld gpus=%lld: %.2f vs %.2f", tab, seq, gpus, got, tflops);
        rows++;
    }
    fclose(f);
    CHECK(rows == 6, "expected 6 rows, read %d", rows);
    /* without recompute the accounting is 72 and V/(12Lh); model FLOPs of a
     * plan (no recompute, non-causal, MHA, f = 4h) equal the same formula */
    uly_workload w = fx_work(131072);
    w.causal = 0;
    w.global_batch = 8;
    uly_cluster c = fx_a100(64);
    c.gpu.hbm_bytes = 1e15;
    uly_result r;
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &r) == 0, "evaluate");
    const double want = uly_flops_megatron(&m, 8, 131072, 0);
    CHECK(fabs(r.time.model_flops / want - 1) < 2e-3, "model FLOPs %.6g vs 72BNLh^2(...) %.6g", r.time.model_flops,
          want);
    FX_DONE();
}
