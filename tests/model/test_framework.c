/* Framework conventions for the model states: bytes per parameter and what
 * the data-parallel sharding shards, written out here from the frameworks'
 * documented mixed-precision layouts, not read from the model:
 *   deepspeed  2 weights + 2 grads + 12 (fp32 master, Adam m, v); ZeRO 1/2/3
 *              shard the 12, the grads, the weights;
 *   megatron   2 weights + 4 fp32 main grads + 12; the distributed optimizer
 *              (zero 1) shards the 12; gradients reduced in fp32; but the
 *              main grads are the parameters' 2 bytes, and reduced so,
 *              under fp16 (Megatron-LM forces fp32 accumulation for bf16
 *              only) and under bf16 with --grad-reduce-in-bf16, and 4 under
 *              fp16 with --accumulate-allreduce-grads-in-fp32;
 *   fsdp       4 fp32 flat params + 4 grads + 8 moments, all sharded by
 *              FULL_SHARD (zero 3, half precision gathered per layer) and
 *              SHARD_GRAD_OP (zero 2, which also keeps 2 bytes of half
 *              precision weights whole); NO_SHARD keeps 4 + 2 + 4 + 8. */
#include "fixtures.h"

static uly_plan plan;

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t dp, uly_result *r)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, dp);
    return (int)uly_evaluate(m, w, c, &l, &plan, r);
}

static const uly_op *first_op(uly_op_type t)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == t) return &plan.ops[i];
    return NULL;
}

int main(void)
{
    const uly_model m = fx_gpt7b();
    uly_cluster c = fx_a100(64);
    c.gpu.hbm_bytes = 1e15;
    const double P = uly_model_params(&m);
    const double G = 64.0; /* ZeRO shards over the data x sequence group: u 8 x dp 8 */
    static uly_result r;
    const struct {
        uly_framework fw;
        int zero;
        double weights, grads, optim; /* bytes per parameter on one rank */
    } cases[] = {
        {ULY_FW_DEEPSPEED, 0, 2, 2, 12},         {ULY_FW_DEEPSPEED, 1, 2, 2, 12 / G},
        {ULY_FW_DEEPSPEED, 2, 2, 2 / G, 12 / G}, {ULY_FW_DEEPSPEED, 3, 2 / G, 2 / G, 12 / G},
        {ULY_FW_MEGATRON, 0, 2, 4, 12},          {ULY_FW_MEGATRON, 1, 2, 4, 12 / G},
        {ULY_FW_FSDP, 0, 4 + 2, 4, 8},           {ULY_FW_FSDP, 2, 4 / G + 2, 4 / G, 8 / G},
        {ULY_FW_FSDP, 3, 4 / G, 4 / G, 8 / G},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uly_workload w = fx_work(65536);
        w.framework = cases[i].fw;
        w.zero_stage = cases[i].zero;
        char why[200];
        CHECK(uly_workload_check(&w, why, sizeof why) == ULY_OK, "%s zero %d rejected: %s",
              uly_framework_name(cases[i].fw), cases[i].zero, why);
        CHECK(eval(&m, &w, &c, 8, &r) == 0, "evaluate");
        const double *tb = r.mem.term_bytes;
        CHECK(fabs(tb[ULY_MEM_WEIGHTS] / (cases[i].weights * P) - 1) < 1e-9 &&
                  fabs(tb[ULY_MEM_GRADS] / (cases[i].grads * P) - 1) < 1e-9 &&
                  fabs(tb[ULY_MEM_OPTIM] / (cases[i].optim * P) - 1) < 1e-9,
              "%s zero %d: %.4g + %.4g + %.4g bytes/param, want %.4g + %.4g + %.4g", uly_framework_name(cases[i].fw),
              cases[i].zero, tb[ULY_MEM_WEIGHTS] / P, tb[ULY_MEM_GRADS] / P, tb[ULY_MEM_OPTIM] / P, cases[i].weights,
              cases[i].grads, cases[i].optim);
    }
    /* Megatron reduces gradients in fp32: twice DeepSpeed's bf16 bytes */
    {
        uly_workload w = fx_work(65536);
        w.zero_stage = 0;
        CHECK(eval(&m, &w, &c, 8, &r) == 0, "deepspeed zero 0");
        const uly_op *o = first_op(ULY_OPT_DP_ALLREDUCE_GRAD);
        const int64_t ds = o ? o->bytes_sent : -1;
        w.framework = ULY_FW_MEGATRON;
        CHECK(eval(&m, &w, &c, 8, &r) == 0, "megatron zero 0");
        o = first_op(ULY_OPT_DP_ALLREDUCE_GRAD);
        CHECK(o && ds > 0 && o->bytes_sent == 2 * ds, "megatron's gradient all-reduce %lld bytes, want 2 x %lld",
              o ? (long long)o->bytes_sent : -1LL, (long long)ds);
        /* where the main gradients live: {dtype, asked} -> bytes held and sent */
        const struct {
            uly_dtype dt;
            int ask;
            double grads;
        } mg[] = {{ULY_BF16, 0, 4}, {ULY_BF16, -1, 2}, {ULY_FP16, 0, 2}, {ULY_FP16, 1, 4}, {ULY_FP32, -1, 4}};
        for (size_t i = 0; i < sizeof mg / sizeof mg[0]; i++) {
            w.dtype = mg[i].dt;
            w.grad_reduce_fp32 = mg[i].ask;
            char why[200];
            CHECK(uly_workload_check(&w, why, sizeof why) == ULY_OK, "megatron %s grads %d: %s",
                  uly_dtype_name(mg[i].dt), mg[i].ask, why);
            CHECK(eval(&m, &w, &c, 8, &r) == 0, "evaluate");
            o = first_op(ULY_OPT_DP_ALLREDUCE_GRAD);
            /* the all-reduce's bytes scale with the gradient's size: ds is bf16's 2 */
            CHECK(fabs(r.mem.term_bytes[ULY_MEM_GRADS] / (mg[i].grads * P) - 1) < 1e-9 && o &&
                      o->bytes_sent == (int64_t)(mg[i].grads / 2.0 * (double)ds),
                  "megatron %s asked %d: %.4g bytes/param held, %lld sent; want %g, %lld", uly_dtype_name(mg[i].dt),
                  mg[i].ask, r.mem.term_bytes[ULY_MEM_GRADS] / P, o ? (long long)o->bytes_sent : -1LL, mg[i].grads,
                  (long long)(mg[i].grads / 2.0 * (double)ds));
        }
    }
    /* what a framework cannot do is refused, naming the value */
    {
        uly_workload w = fx_work(65536);
        char why[200] = "";
        w.framework = ULY_FW_MEGATRON;
        w.zero_stage = 3;
        CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL && strstr(why, "zero_stage = 3"),
              "megatron zero 3 accepted (%s)", why);
        w.framework = ULY_FW_FSDP;
        w.zero_stage = 1;
        CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL && strstr(why, "zero_stage = 1"),
              "fsdp zero 1 accepted (%s)", why);
        CHECK(!strcmp(uly_framework_name(ULY_FW_MEGATRON), "megatron"), "name");
        w.zero_stage = 3;
        w.grad_reduce_fp32 = -1;
        CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL && strstr(why, "grad_reduce_fp32 = -1"),
              "fsdp with Megatron-LM's main-gradient precision accepted (%s)", why);
    }
    FX_DONE();
}
