/* test_megatron_log: the Megatron-LM log reader (formats/megatron_log.c) on
 * logs written here line by line: the argument block (GQA on and off, the
 * vocabulary from the padding line), the warm-up rule over log intervals,
 * the mapping of parallel settings to strategies, and the bad logs it must
 * refuse with the file and line; and, for each log named on the command
 * line (the fixtures), that its throughput and times hold together. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h" /* CHECK, FX_DONE */

#include "megatron_log.h"


static mlog_run run;
static char why[1024];

/* A log: the argument block with `extra` argument lines, then `tail`. */
static int parse(const char *extra, const char *tail)
{
    char text[16384];
    snprintf(text, sizeof text,
             "------------------------ arguments ------------------------\n"
             "  ffn_hidden_size ................................. 14336\n"
             "  hidden_size ..................................... 4096\n"
             "  kv_channels ..................................... 128\n"
             "  log_interval .................................... 2\n"
             "  micro_batch_size ................................ 1\n"
             "  num_attention_heads ............................. 32\n"
             "  num_layers ...................................... 32\n"
             "  num_query_groups ................................ 8\n"
             "  seq_length ...................................... 4096\n"
             "  world_size ...................................... 8\n"
             "%s"
             "-------------------- end of arguments ---------------------\n"
             "%s",
             extra, tail);
    why[0] = 0;
    return mlog_parse(text, strlen(text), "t.log", &run, why, sizeof why);
}

static const char *REPORTS =
    " > padded vocab (size: 128000) with 256 dummy tokens (new size: 128256)\n"
    " iteration        2/      10 | elapsed time per iteration (ms): 900.0 | throughput per GPU (TFLOP/s/GPU): 90.0 |\n"
    " iteration        4/      10 | elapsed time per iteration (ms): 510.0 | throughput per GPU (TFLOP/s/GPU): 160.0 |\n"
    " iteration        6/      10 | elapsed time per iteration (ms): 500.0 | throughput per GPU (TFLOP/s/GPU): 170.0 |\n"
    "[Rank 0] (after 6 iterations) memory (MB) | allocated: 100.0 | max allocated: 2048.0 | reserved: 3000.0 | max reserved: 3072.0\n"
    " iteration        8/      10 | elapsed time per iteration (ms): 520.0 | throughput per GPU (TFLOP/s/GPU): 150.0 |\n"
    "[Rank 4] (after 8 iterations) memory (MB) | allocated: 100.0 | max allocated: 4096.0\n";

static void test_arguments(void)
{
    CHECK(parse("  group_query_attention ........................... True\n"
                "  swiglu .......................................... True\n"
                "  untie_embeddings_and_output_weights ............. True\n"
                "  hidden_dropout .................................. 0.0\n"
                "  attention_dropout ............................... 0.0\n",
                REPORTS) == 0,
          "good log refused: %s", why);
    uly_model m;
    CHECK(mlog_model(&run, "t.log", &m, why, sizeof why) == 0, "model: %s", why);
    CHECK(m.layers == 32 && m.hidden == 4096 && m.heads == 32 && m.kv_heads == 8 && m.head_dim == 128 &&
              m.ffn_hidden == 14336 && m.swiglu == 1 && m.tied_embeddings == 0 && m.dropout == 0,
          "model fields: L %lld h %lld a %lld k %lld d %lld f %lld swiglu %d tied %d dropout %d", (long long)m.layers,
          (long long)m.hidden, (long long)m.heads, (long long)m.kv_heads, (long long)m.head_dim,
          (long long)m.ffn_hidden, m.swiglu, m.tied_embeddings, m.dropout);
    CHECK(m.vocab == 128256, "vocab from the padding line: %lld, want 128256", (long long)m.vocab);
    CHECK(run.n_reports == 4, "reports: %d, want 4", run.n_reports);
    /* rank 0's max reserved 3072 MB; rank 4 has only max allocated 4096 */
    CHECK(run.mem_peak_mb == 4096.0, "memory peak %g MB, want 4096", run.mem_peak_mb);

    /* without group_query_attention, num_query_groups does not count; the
     * defaults: GELU, tied, dropout when a probability is above 0 */
    CHECK(parse("  hidden_dropout .................................. 0.1\n", REPORTS) == 0, "%s", why);
    CHECK(mlog_model(&run, "t.log", &m, why, sizeof why) == 0, "%s", why);
    CHECK(m.kv_heads == 32 && m.swiglu == 0 && m.tied_embeddings == 1 && m.dropout == 1,
          "MHA defaults: k %lld swiglu %d tied %d dropout %d", (long long)m.kv_heads, m.swiglu, m.tied_embeddings,
          m.dropout);

    /* no padding line: padded_vocab_size, else vocab_size */
    CHECK(parse("  vocab_size ...................................... 32000\n",
                " iteration        2/      10 | elapsed time per iteration (ms): 900.0 |\n") == 0, "%s", why);
    CHECK(mlog_model(&run, "t.log", &m, why, sizeof why) == 0 && m.vocab == 32000, "vocab_size: %lld",
          (long long)m.vocab);
    CHECK(parse("", " iteration        2/      10 | elapsed time per iteration (ms): 900.0 |\n") == 0, "%s", why);
    CHECK(mlog_model(&run, "t.log", &m, why, sizeof why) == 2 && strstr(why, "vocabulary size"),
          "no vocabulary: %s", why);
}

static void test_median(void)
{
    CHECK(parse("", REPORTS) == 0, "%s", why);
    double ms, tf;
    int64_t first, last;
    /* log_interval 2: the report at i averages i-1 and i; warm-up 3 leaves
     * the reports at 6 and 8 (at 4 it averages iteration 3) */
    int k = mlog_median(&run, 3, &ms, &tf, &first, &last);
    CHECK(k == 2 && ms == 510.0 && tf == 160.0 && first == 6 && last == 8,
          "warmup 3: %d reports, %g ms, %g TFLOP/s, %lld..%lld; want 2, 510, 160, 6..8", k, ms, tf, (long long)first,
          (long long)last);
    k = mlog_median(&run, 2, &ms, &tf, &first, &last);
    CHECK(k == 3 && ms == 510.0 && first == 4, "warmup 2: %d reports, %g ms; want 3, 510 (500, 510, 520)", k, ms);
    k = mlog_median(&run, 0, &ms, &tf, &first, &last);
    CHECK(k == 4 && ms == 515.0 && tf == 155.0, "warmup 0: %d, %g ms, %g TFLOP/s; want 4, 515, 155", k, ms, tf);
    k = mlog_median(&run, 8, &ms, &tf, &first, &last);
    CHECK(k == 0 && isnan(ms), "warmup 8: %d reports", k);
    /* a report without the TFLOP/s field: no TFLOP/s median */
    CHECK(parse("", " iteration        2/      10 | elapsed time per iteration (ms): 900.0 |\n"
                    " iteration        4/      10 | elapsed time per iteration (ms): 800.0 | throughput per GPU "
                    "(TFLOP/s/GPU): 1.0 |\n") == 0, "%s", why);
    k = mlog_median(&run, 0, &ms, &tf, &first, &last);
    CHECK(k == 2 && ms == 850.0 && isnan(tf), "mixed TFLOP/s: %d, %g, %g", k, ms, tf);
}

/* The strategy and degrees of a set of parallel arguments. */
static void expect_layout(const char *args, uly_strategy_id want, int64_t u, int64_t r, int64_t t, int64_t dp,
                          int64_t pp)
{
    uly_layout l;
    CHECK(parse(args, REPORTS) == 0, "%s", why);
    int rc = mlog_layout(&run, "t.log", &l, why, sizeof why);
    CHECK(rc == 0 && l.strategy == want && l.ulysses == u && l.ring == r && l.tp == t && l.dp == dp && l.pp == pp,
          "[%s]: rc %d (%s) strategy %d u %lld r %lld t %lld dp %lld pp %lld; want %d u %lld r %lld t %lld dp %lld "
          "pp %lld", args, rc, why, (int)l.strategy, (long long)l.ulysses, (long long)l.ring, (long long)l.tp,
          (long long)l.dp, (long long)l.pp, (int)want, (long long)u, (long long)r, (long long)t, (long long)dp,
          (long long)pp);
}

#define TP2 "  tensor_model_parallel_size ...................... 2\n"
#define CP4 "  context_parallel_size ........................... 4\n"

static void test_layout(void)
{
    expect_layout(TP2 "  sequence_parallel ............................... True\n", ULY_STRAT_MEGATRON_SP, 1, 1, 2, 4, 1);
    expect_layout(TP2 "  sequence_parallel ............................... False\n", ULY_STRAT_MEGATRON_TP, 1, 1, 2, 4,
                  1);
    expect_layout(TP2, ULY_STRAT_MEGATRON_TP, 1, 1, 2, 4, 1); /* sequence_parallel's default: False */
    expect_layout(TP2 CP4, ULY_STRAT_RING, 1, 4, 2, 1, 1); /* p2p is Megatron-Core's default */
    expect_layout(TP2 CP4 "  cp_comm_type .................................... ['all_gather']\n",
                  ULY_STRAT_ALLGATHER_CP, 1, 4, 2, 1, 1);
    expect_layout(CP4 "  cp_comm_type .................................... a2a\n", ULY_STRAT_ULYSSES, 4, 1, 1, 2, 1);
    expect_layout(CP4 "  cp_comm_type .................................... ['a2a+p2p']\n"
                      "  hierarchical_context_parallel_sizes ............. [2, 2]\n",
                  ULY_STRAT_USP, 2, 2, 1, 2, 1);
    expect_layout(CP4 "  pipeline_model_parallel_size .................... 2\n", ULY_STRAT_RING, 1, 4, 1, 1, 2);

    uly_layout l;
    CHECK(parse(CP4 "  cp_comm_type .................................... ['a2a+p2p']\n", REPORTS) == 0, "%s", why);
    CHECK(mlog_layout(&run, "t.log", &l, why, sizeof why) == 2 && strstr(why, "hierarchical_context_parallel_sizes"),
          "a2a+p2p without the sizes: %s", why);
    CHECK(parse(CP4 "  cp_comm_type .................................... ['bogus']\n", REPORTS) == 0, "%s", why);
    CHECK(mlog_layout(&run, "t.log", &l, why, sizeof why) == 2 && strstr(why, "'bogus'") && strstr(why, "p2p"),
          "unknown cp_comm_type: %s", why);
    CHECK(parse("  tensor_model_parallel_size ...................... 3\n", REPORTS) == 0, "%s", why);
    CHECK(mlog_layout(&run, "t.log", &l, why, sizeof why) == 2 && strstr(why, "world_size 8"),
          "world size not a multiple: %s", why);
}

/* A bad log: exit status 2 and a message naming the file and line. */
static void expect_bad(const char *text, const char *want)
{
    why[0] = 0;
    int rc = mlog_parse(text, strlen(text), "bad.log", &run, why, sizeof why);
    CHECK(rc == 2 && strstr(why, want) && !strchr(why, '\n'), "want rc 2 and '%s', got %d: %s", want, rc, why);
}

static void test_bad(void)
{
    const char *head = "------------------------ arguments ------------------------\n"
                       "  num_layers ...................................... 32\n"
                       "-------------------- end of arguments ---------------------\n";
    char text[4096];
    expect_bad("just some text\n", "bad.log: no Megatron-LM argument block");
    expect_bad("------------------------ arguments ------------------------\n"
               "  num_layers ...................................... 32\n",
               "bad.log:2: the argument block from line 1 is not closed");
    expect_bad("------------------------ arguments ------------------------\n"
               "  num_layers ...................................... 3x\n",
               "bad.log:2: num_layers '3x': not a positive integer");
    expect_bad("------------------------ arguments ------------------------\n"
               "  swiglu .......................................... Yes\n",
               "bad.log:2: swiglu 'Yes': not True or False");
    snprintf(text, sizeof text, "%s", head);
    expect_bad(text, "bad.log: no iteration report");
    snprintf(text, sizeof text, "%s iteration        2/      10 | elapsed time per itera", head);
    expect_bad(text, "bad.log:4: iteration 2: no 'elapsed time per iteration (ms):' (the log is cut short)");
    snprintf(text, sizeof text, "%s iteration        2/      10 | elapsed time per iteration (ms): 90", head);
    expect_bad(text, "bad.log:4: iteration 2: the last line has no newline");
    snprintf(text, sizeof text, "%s iteration        2/      10 | elapsed time per iteration (ms): nan |\n", head);
    expect_bad(text, "bad.log:4: iteration 2: 'elapsed time per iteration (ms):' is not a positive number");
    snprintf(text, sizeof text, "%s%s", head, head);
    expect_bad(text, "bad.log:4: a second argument block");
    char nul[] = "abc\0def\n";
    why[0] = 0;
    CHECK(mlog_parse(nul, sizeof nul - 1, "bad.log", &run, why, sizeof why) == 2 && strstr(why, "bad.log:1: a NUL"),
          "NUL byte: %s", why);
}

/* A log of parse()'s block with `extra` arguments and `tail` refused, the
 * message holding want; one line. */
static void expect_bad_parse(const char *extra, const char *tail, const char *want)
{
    int rc = parse(extra, tail);
    CHECK(rc == 2 && strstr(why, want) && !strchr(why, '\n'), "[%s%s]: want rc 2 and '%s', got %d: %s", extra, tail,
          want, rc, why);
}

#define R2 " iteration        2/      10 | elapsed time per iteration (ms): 900.0 |\n"
#define R4 " iteration        4/      10 | elapsed time per iteration (ms): 800.0 |\n"

/* Every number read is its whole token: strtod and strtoll stop at the
 * first character that is not part of a number, so "99999x" was read as
 * 99999 and "4\xff0" as 4. parse() puts `extra` from line 12 on, then the
 * block's end, then the tail (line 13 with no extra). */
static void test_whole_numbers(void)
{
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 4\xff" "0 |\n",
                     "t.log:13: iteration 2: 'elapsed time per iteration (ms):' is not a positive number: '4?0'");
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 900.0x |\n",
                     "t.log:13: iteration 2: 'elapsed time per iteration (ms):' is not a positive number: '900.0x'");
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 900.0 5 |\n",
                     "t.log:13: iteration 2: 'elapsed time per iteration (ms):' is not a positive number: '900.0 5'");
    /* hex, which strtod reads and Megatron-LM never prints; an underflow */
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 0x10 |\n",
                     "t.log:13: iteration 2: 'elapsed time per iteration (ms):' is not a positive number: '0x10'");
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 1e-400 |\n",
                     "is not a positive number: '1e-400'");
    expect_bad_parse("", " iteration        2/      10 | elapsed time per iteration (ms): 900.0 | throughput per GPU "
                         "(TFLOP/s/GPU): 135.2e |\n",
                     "t.log:13: iteration 2: 'throughput per GPU (TFLOP/s/GPU):' is not a number: '135.2e'");
    expect_bad_parse("", R2 "[Rank 1] (after 2 iterations) memory (MB) | allocated: 1.0 | max allocated: 2.0 | "
                             "reserved: 3.0 | max reserved: 99999x\n",
                     "t.log:14: memory report: 'max reserved:' is not a number: '99999x'");
    expect_bad_parse("", R2 "[Rank 1] (after 2 iterations) memory (MB) | max allocated: 2.0\xff\n",
                     "t.log:14: memory report: 'max allocated:' is not a number: '2.0?'");
    expect_bad_parse("", " > padded vocab (size: 50257) with 47 dummy tokens (new size: 50304x)\n" R2,
                     "t.log:13: padded vocab: not a vocabulary size: new size '50304x'");
    expect_bad_parse("  context_parallel_size ........................... 4\n"
                     "  hierarchical_context_parallel_sizes ............. [2, 2x]\n", R2,
                     "t.log:13: hierarchical_context_parallel_sizes '[2, 2x]': not two degrees");
    expect_bad_parse("  hierarchical_context_parallel_sizes ............. [2, 2\n", R2,
                     "t.log:12: hierarchical_context_parallel_sizes '[2, 2': not two degrees");
    expect_bad_parse("  hidden_dropout .................................. 0x1p-3\n", R2,
                     "t.log:12: hidden_dropout '0x1p-3': not a probability");
    expect_bad_parse("", "using world size: 8, data-parallel size: 8, tensor-model-parallel size: 1x, "
                         "pipeline-model-parallel size: 1\n" R2,
                     "t.log:13: 'tensor-model-parallel size:' '1x': not a positive integer");
    /* vocab_size was read only when it was a number: "-5" was dropped, not refused */
    expect_bad_parse("  vocab_size ...................................... -5\n", R2,
                     "t.log:12: vocab_size '-5': not a positive integer");
    /* whole numbers still read, with a launcher's prefix and a timestamp */
    CHECK(parse("", "0:  [2024-06-01 10:00:10] iteration        2/      10 | elapsed time per iteration (ms): "
                    "4012.5 | throughput per GPU (TFLOP/s/GPU): 1.35e2 |\n"
                    "0: [Rank 0] (after 2 iterations) memory (MB) | max reserved: 61440.0\n") == 0 &&
              run.reports[0].iter_ms == 4012.5 && run.reports[0].tflops == 135.0 && run.mem_peak_mb == 61440.0,
          "whole numbers: %s", why);
}

/* An argument given twice, or said twice in other words, must agree: the
 * last one used to win. Naming both lines. */
static void test_conflicts(void)
{
    expect_bad_parse("  seq_length ...................................... 8192\n", R2,
                     "t.log:12: seq_length '8192' contradicts seq_length '4096' on line 10");
    expect_bad_parse("  tensor_model_parallel_size ...................... 8\n"
                     "  tensor_model_parallel_size ...................... 2\n", R2,
                     "t.log:13: tensor_model_parallel_size '2' contradicts tensor_model_parallel_size '8' on line 12");
    expect_bad_parse("  swiglu .......................................... True\n"
                     "  swiglu .......................................... False\n", R2,
                     "t.log:13: swiglu 'False' contradicts swiglu 'True' on line 12");
    expect_bad_parse("  recompute_granularity ........................... full\n"
                     "  recompute_granularity ........................... None\n", R2,
                     "t.log:13: recompute_granularity 'None' contradicts recompute_granularity 'full' on line 12");
    /* the same value twice is one value */
    CHECK(parse("  seq_length ...................................... 4096\n"
                "  tensor_model_parallel_size ...................... 2\n"
                "  tensor_model_parallel_size ...................... 2\n", R2) == 0 && run.seq == 4096 && run.tp == 2,
          "a repeat with the same value: %s", why);
    /* the start-up line says the sizes again: it must agree with the block */
    expect_bad_parse("  tensor_model_parallel_size ...................... 2\n",
                     "using world size: 8, data-parallel size: 1, context-parallel size: 1, tensor-model-parallel "
                     "size: 8, pipeline-model-parallel size: 1\n" R2,
                     "t.log:12: tensor_model_parallel_size 2 contradicts 'tensor-model-parallel size: 8' on line 14");
    expect_bad_parse("", "using world size: 16, data-parallel size: 2\n" R2,
                     "t.log:11: world_size 8 contradicts 'world size: 16' on line 13");
    /* a size the block does not give is its default, 1 */
    expect_bad_parse("", "using world size: 8, pipeline-model-parallel size: 2\n" R2,
                     "pipeline_model_parallel_size 1 (its default: the block does not give it) contradicts "
                     "'pipeline-model-parallel size: 2' on line 13");
    /* newer Megatron-LM's line: the encoder's sizes are other sizes, and
     * no separator after the hierarchical sizes */
#define NEWER(T) "using world size: 8, data-parallel size: 4, context-parallel size: 1, hierarchical context-parallel " \
                 "sizes: Nonetensor-model-parallel size: " T ", encoder-tensor-model-parallel size: 0, "            \
                 "pipeline-model-parallel size: 1, encoder-pipeline-model-parallel size: 0\n"
    CHECK(parse("  tensor_model_parallel_size ...................... 2\n", NEWER("2") R2) == 0,
          "the start-up line agreeing: %s", why);
    expect_bad_parse("  tensor_model_parallel_size ...................... 2\n", NEWER("4") R2,
                     "t.log:12: tensor_model_parallel_size 2 contradicts 'tensor-model-parallel size: 4' on line 14");
#undef NEWER
    expect_bad_parse("", " > padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)\n"
                         " > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)\n" R2,
                     "t.log:14: padded vocab new size 50432 contradicts new size 50304 on line 13");
    expect_bad_parse("  padded_vocab_size ............................... 51200\n",
                     " > padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)\n" R2,
                     "t.log:14: padded vocab new size 50304 contradicts padded_vocab_size 51200 on line 12");
    expect_bad_parse("  vocab_size ...................................... 60000\n",
                     " > padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)\n" R2,
                     "t.log:14: padded vocabulary 50304 is smaller than vocab_size 60000 on line 12");
    /* 32 layers over 2 stages of 4 layers per virtual stage: 4 virtual stages, not 2 */
    expect_bad_parse("  pipeline_model_parallel_size .................... 2\n"
                     "  virtual_pipeline_model_parallel_size ............ 2\n"
                     "  num_layers_per_virtual_pipeline_stage ........... 4\n", R2,
                     "t.log:13: virtual_pipeline_model_parallel_size 2 contradicts num_layers_per_virtual_pipeline_"
                     "stage 4 on line 14");
    CHECK(parse("  pipeline_model_parallel_size .................... 2\n"
                "  virtual_pipeline_model_parallel_size ............ 4\n"
                "  num_layers_per_virtual_pipeline_stage ........... 4\n", R2) == 0,
          "virtual stages agreeing: %s", why);
}

/* Iteration numbers: positive integers, increasing, at most the run's
 * length; a header whose number is not one is refused, not skipped. */
static void test_iterations(void)
{
    const char *bad_numbers[] = {"1.5", "Infinity", "-9223372036854775808", "0", "2x", "99999999999999999999"};
    char tail[512];
    for (size_t i = 0; i < sizeof bad_numbers / sizeof bad_numbers[0]; i++) {
        char want[128];
        snprintf(tail, sizeof tail, R2 " iteration %s/      10 | elapsed time per iteration (ms): 800.0 |\n",
                 bad_numbers[i]);
        snprintf(want, sizeof want, "t.log:14: iteration '%s': not a positive integer", bad_numbers[i]);
        expect_bad_parse("", tail, want);
    }
    expect_bad_parse("", R4 R2, "t.log:14: iteration 2 after iteration 4 on line 13");
    expect_bad_parse("", R2 R2, "t.log:14: iteration 2 after iteration 2 on line 13");
    expect_bad_parse("", " iteration      200/     100 | elapsed time per iteration (ms): 900.0 |\n",
                     "t.log:13: iteration 200/ 100: past the run's length");
    expect_bad_parse("", R2 " iteration        4/      20 | elapsed time per iteration (ms): 800.0 |\n",
                     "t.log:14: iteration 4/ 20 contradicts the run's length 10 on line 13");
    expect_bad_parse("", R2 " iteration        4/     1e3 | elapsed time per iteration (ms): 800.0 |\n",
                     "t.log:14: iteration 4/ '1e3': the run's length is not a positive integer");
    expect_bad_parse("", R2 " iter        4/      10 | elapsed time per iteration (ms): 800.0 |\n",
                     "t.log:14: 'elapsed time per iteration (ms):' without 'iteration N/ TOTAL'");
    /* other lines that say "iteration" are not reports */
    CHECK(parse("", R2 "saving checkpoint at iteration       2 to /ckpt/x in torch format\n" R4) == 0 &&
              run.n_reports == 2,
          "a checkpoint line: %d reports, %s", run.n_reports, why);
}

/* The fixture logs (and the example of docs/megatron-logs.md, which is the
 * GPT 7B one) hold together: a report's throughput times its time and the
 * GPUs is Megatron-LM's FLOP count of one iteration, which its
 * num_floating_point_operations (megatron/training/training.py) writes as
 *   12 B s L h^2 ((1 + g/a + s/h) q/h + f/h * (3/2 if SwiGLU) + V / (2 L h))
 * with B the global batch, g the query groups (a without GQA), q = a d the
 * query projection; written out here, not taken from the reader. Within
 * 0.2%: the log prints 4-5 digits. */
static void test_fixture_flops(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char text[1 << 20];
    size_t len = f ? fread(text, 1, sizeof text, f) : 0;
    if (f) fclose(f);
    CHECK(len > 0, "%s: cannot read", path);
    if (!len) return;
    if (mlog_parse(text, len, path, &run, why, sizeof why) != 0) {
        CHECK(0, "%s: %s", path, why);
        return;
    }
    const double B = (double)run.global_batch, s = (double)run.seq, L = (double)run.layers, h = (double)run.hidden;
    const double a = (double)run.heads, d = run.head_dim > 0 ? (double)run.head_dim : h / a;
    const double g = run.gqa == 1 ? (double)run.kv_heads : a, q = a * d, V = (double)run.vocab;
    const double flops = 12 * B * s * L * h * h *
                         ((1 + g / a + s / h) * q / h + (double)run.ffn_hidden / h * (run.swiglu == 1 ? 1.5 : 1.0) +
                          V / (2 * L * h));
    int n = 0;
    for (int i = 0; i < run.n_reports; i++) {
        const mlog_report *r = &run.reports[i];
        if (!(r->tflops == r->tflops)) continue; /* no throughput logged */
        const double got = r->tflops * 1e12 * (double)run.world_size * r->iter_ms / 1e3;
        CHECK(fabs(got / flops - 1) <= 0.002,
              "%s:%d: iteration %lld: %.1f TFLOP/s x %lld GPUs x %.4f s = %.4g FLOPs, Megatron-LM counts %.4g for "
              "%g x %g tokens", path, r->line, (long long)r->iteration, r->tflops, (long long)run.world_size,
              r->iter_ms / 1e3, got, flops, B, s);
        n++;
    }
    printf("  %s: %d reports checked against %.4g FLOPs per iteration\n", path, n, flops);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) test_fixture_flops(argv[i]);
    test_arguments();
    test_median();
    test_layout();
    test_bad();
    test_whole_numbers();
    test_conflicts();
    test_iterations();
    FX_DONE();
}
