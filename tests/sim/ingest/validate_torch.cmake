# sim.ingest.validate_torch: `ulysim validate --torch-trace` on data/layer-h100.trace.json.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(TRACE ${DATA}/layer-h100.trace.json)
set(FLAGS --model ${DATA}/llama3-8b-2layers.json --gpus 1 --seq 8K --strategy megatron-tp --recompute full --zero 0)
execute_process(COMMAND ${EXE} plan ${FLAGS} --format json OUTPUT_FILE ${OUT}/plan.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plan: exit ${rc}")
endif()
execute_process(COMMAND ${EXE} validate --torch-trace ${TRACE} ${FLAGS} --format json OUTPUT_FILE ${OUT}/val.json
  ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "validate --torch-trace: exit ${rc}: ${err}")
endif()
# the medians over ProfilerStep#2..#4 of the kernels each step launched (the
# warm-up GEMM launched before #2 is in none): GEMM 3500, 3600, 3600 us;
# attention forward 800, 820, 810; backward 1600, 1620, 1580; the rest 200,
# 200, 210; all together 6100, 6240, 6200
execute_process(COMMAND ${CHECK} ${OUT}/plan.json ${OUT}/val.json 2 gemm=3.6 attn_fwd=0.81 attn_bwd=1.6 other=0.2
  total=6.2 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "torch_check: ${err}")
endif()

# the table names the steps and the kernels left out
execute_process(COMMAND ${EXE} validate --torch-trace ${TRACE} ${FLAGS} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "3 steps \\(ProfilerStep#2\\.\\.#4, CPU launch windows\\), 25 kernels, 1 outside"
   OR NOT out MATCHES "\n  gemm +3\\.600 ")
  message(FATAL_ERROR "table: exit ${rc}\n${out}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/expect_bad.cmake)
file(READ ${TRACE} text)
string(LENGTH "${text}" len)
math(EXPR half "${len} / 2")
string(SUBSTRING "${text}" 0 ${half} cut)
file(WRITE ${OUT}/cut.trace.json "${cut}")
expect_bad("cut.trace.json: .*line [0-9]+" validate --torch-trace ${OUT}/cut.trace.json ${FLAGS})
expect_bad("nonexistent.json: cannot open" validate --torch-trace ${OUT}/nonexistent.json)
expect_bad("--torch-trace needs a FILE" validate --torch-trace)
expect_bad("--gpus 'x'" validate --torch-trace ${TRACE} --gpus x)
expect_bad("unknown option '--bogus'" validate --torch-trace ${TRACE} --bogus)
# what the command does not do is refused, not dropped: a timeline (plan writes it), a second trace
expect_bad("--timeline .*writes no timeline" validate --torch-trace ${TRACE} ${FLAGS} --timeline ${OUT}/t.json)
expect_bad("--torch-trace given twice" validate --torch-trace ${TRACE} --torch-trace=${TRACE} ${FLAGS})
file(WRITE ${OUT}/cpu-only.json "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"ts\": 1, \"dur\": 5}]}\n")
expect_bad("cpu-only.json: no GPU kernel" validate --torch-trace ${OUT}/cpu-only.json)
