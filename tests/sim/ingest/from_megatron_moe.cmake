# sim.ingest.from_megatron_moe: `ulysim runs from-megatron` on the log of a
# mixture-of-experts run with multi-head latent attention
# (data/small-moe-mla-ep4.log), and `validate --runs` pricing its row as MoE.
#
# Where the row's cells come from (the log's argument block, Megatron-LM's
# argparse dests):
#   num_experts 8, moe_router_topk 2            -> model experts=8,topk=2
#   moe_ffn_hidden_size 1024                    -> moe_ffn_hidden=1024
#   moe_shared_expert_intermediate_size 1024    -> shared_ffn_hidden=1024
#   moe_layer_freq [0, 1, 1, 1, 1, 1, 1, 1]     -> moe_dense_first=1 (then every layer MoE: no moe_every)
#   multi_latent_attention True, q_lora_rank None, kv_lora_rank 256, qk_head_dim 64,
#   qk_pos_emb_head_dim 32, v_head_dim 64      -> kv_lora_rank=256,qk_nope_dim=64,qk_rope_dim=32,
#                                                 head_dim=64 (the value head), kv_heads=8 (every head)
#   expert_model_parallel_size 4, expert_tensor_parallel_size 1 -> columns ep 4, etp 1
#   moe_token_dispatcher_type alltoall, moe_expert_capacity_factor 1.25 -> moe-dispatcher, moe-capacity
#   TP 2 with sequence_parallel True on 8 GPUs  -> megatron-sp, tp 2 (data parallel 4)
#   the reports after the warm-up (10..30): 181.2 179.8 182.5 180.9 181.6 ms -> step_s 0.1812 (median)
#   max reserved 12288.0 MB                      -> mem_gib 12
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/excerpt)
include(${CMAKE_CURRENT_LIST_DIR}/expect_bad.cmake)
set(LOG ${DATA}/small-moe-mla-ep4.log)
set(MODEL "layers=8,hidden=1024,heads=8,kv_heads=8,head_dim=64,ffn_hidden=4096,vocab=32000,swiglu=true,tied_embeddings=false,dropout=false,experts=8,topk=2,moe_ffn_hidden=1024,shared_ffn_hidden=1024,moe_dense_first=1,kv_lora_rank=256,qk_nope_dim=64,qk_rope_dim=32")

function(run_ok out_var)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ulysim ${ARGN}: exit ${rc}: ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# 1. the row: the model's MoE and MLA keys, the MoE columns
run_ok(csv runs from-megatron ${LOG})
if(NOT csv MATCHES "\n[^\n]*,virtual-stages,pp-first,pp-last,pp-embed-layer,pp-loss-layer,pp-layout,ep,etp,moe-dispatcher,moe-capacity,batch,")
  message(FATAL_ERROR "no MoE columns in the header:\n${csv}")
endif()
set(want_row "small-moe-mla-ep4,\"Megatron-LM log small-moe-mla-ep4.log: median of 5 reports, iterations 10..30\",\"${MODEL}\",,8,4096,megatron-sp,2,,,1,,,,,,,4,1,alltoall,1.25,1,32,none,1,megatron,bf16,,,,,,,0.1812,,,12,false\n")
string(FIND "${csv}" "${want_row}" at)
if(at LESS 0)
  message(FATAL_ERROR "from-megatron wrote:\n${csv}\nwant the row:\n${want_row}")
endif()

# 2. validate --runs prices it as MoE: the layout has EP 4, and the predicted
# step is `ulysim plan`'s for the same model and flags written by hand here
file(WRITE ${OUT}/runs.csv "${csv}")
run_ok(vjson validate --runs ${OUT}/runs.csv --format json)
if(NOT vjson MATCHES "\"layout\":[ \t]*\"tp2[.]dp4[.]ep4 mb1\"")
  message(FATAL_ERROR "validate --runs: the layout is not tp2.dp4.ep4 (EP 4 from expert_model_parallel_size):\n${vjson}")
endif()
if(NOT vjson MATCHES "\"step_s\":[ \t\n]*{[^}]*\"predicted\":[ \t]*([0-9.e+-]+)")
  message(FATAL_ERROR "validate --runs: no predicted step_s:\n${vjson}")
endif()
set(predicted ${CMAKE_MATCH_1})
run_ok(pjson plan --model ${MODEL} --gpus 8 --seq 4096 --strategy megatron-sp --tp 2 --ep 4 --etp 1
  --moe-dispatcher alltoall --moe-capacity 1.25 --batch 1 --global-batch 32 --recompute none --zero 1
  --framework megatron --dtype bf16 --format json)
if(NOT pjson MATCHES "\"step\":[ \t\n]*{[^}]*\"time_s\":[ \t]*([0-9.e+-]+)")
  message(FATAL_ERROR "plan: no step time:\n${pjson}")
endif()
if(NOT predicted STREQUAL CMAKE_MATCH_1)
  message(FATAL_ERROR "validate --runs predicted step_s ${predicted}; plan of the MoE flags: ${CMAKE_MATCH_1}")
endif()

# 3. the log's iteration lines alone, the model and MoE layout by flags: the same row
file(READ ${LOG} text)
string(FIND "${text}" " [2024-06-01 10:00:41] iteration" at)
string(SUBSTRING "${text}" ${at} -1 excerpt)
file(WRITE ${OUT}/excerpt/small-moe-mla-ep4.log "${excerpt}")
run_ok(by_flags runs from-megatron ${OUT}/excerpt/small-moe-mla-ep4.log --model ${MODEL} --gpus 8 --seq 4096
  --batch 1 --global-batch 32 --tp 2 --strategy megatron-sp --ep 4 --etp 1 --moe-dispatcher alltoall
  --moe-capacity 1.25 --recompute none --framework megatron --zero 1 --dtype bf16)
if(NOT by_flags STREQUAL csv)
  message(FATAL_ERROR "by flags:\n${by_flags}\nthe whole log:\n${csv}")
endif()

# 4. bad MoE arguments: exit 2, one line naming the log line and the value
function(edited name regex replace)
  string(REGEX REPLACE "${regex}" "${replace}" t "${text}")
  if(t STREQUAL text)
    message(FATAL_ERROR "${name}: the edit changed nothing")
  endif()
  file(WRITE ${OUT}/${name}.log "${t}")
endfunction()
# layers 0, 1 and 3 MoE, 2 dense: not the first dense layers then every k-th
edited(irregular "(moe_layer_freq [.]+ )[^\n]*" "\\1[1, 1, 0, 1, 1, 1, 1, 1]")
expect_bad("irregular[.]log:41: moe_layer_freq '\\[1, 1, 0, 1, 1, 1, 1, 1\\]': a pattern ulysim does not place"
  runs from-megatron ${OUT}/irregular.log)
edited(short "(moe_layer_freq [.]+ )[^\n]*" "\\1[0, 1, 1]")
expect_bad("short[.]log:41: moe_layer_freq: 3 entries, and num_layers 8 on line 50" runs from-megatron ${OUT}/short.log)
edited(flex "(moe_token_dispatcher_type [.]+ )[^\n]*" "\\1flex")
expect_bad("flex[.]log:45: moe_token_dispatcher_type: .*--moe-dispatcher 'flex'" runs from-megatron ${OUT}/flex.log)
