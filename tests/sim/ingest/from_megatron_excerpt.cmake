# sim.ingest.from_megatron_excerpt: `ulysim runs from-megatron` on logs
# without their argument block (iteration lines alone, in each format
# Megatron-LM has printed), the layout and model given by ulysim's flags or
# by the launch script: the same row as the whole log's.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/whole ${OUT}/excerpt ${OUT}/notput ${OUT}/old ${OUT}/oldest)
include(${CMAKE_CURRENT_LIST_DIR}/expect_bad.cmake)

function(rows want_var)
  execute_process(COMMAND ${EXE} runs from-megatron ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "runs from-megatron ${ARGN}: exit ${rc}: ${err}")
  endif()
  set(${want_var} "${out}" PARENT_SCOPE)
endfunction()

# the whole log, and its iteration and memory lines alone (from the first
# report on: the argument block, banner and padding line gone)
configure_file(${DATA}/gpt7b-tp8-sp.log ${OUT}/whole/gpt7b-tp8-sp.log COPYONLY)
file(READ ${DATA}/gpt7b-tp8-sp.log text)
string(FIND "${text}" " [2024-06-01 10:01:31] iteration" at)
string(SUBSTRING "${text}" ${at} -1 excerpt)
if(excerpt MATCHES "arguments|padded vocab|world size")
  message(FATAL_ERROR "the excerpt still holds the start of the log")
endif()
file(WRITE ${OUT}/excerpt/gpt7b-tp8-sp.log "${excerpt}")
# without the TFLOP/s field (a run without --log-throughput)
string(REGEX REPLACE "throughput per GPU \\(TFLOP/s/GPU\\): [0-9.]+ \\| " "" notput "${excerpt}")
file(WRITE ${OUT}/notput/gpt7b-tp8-sp.log "${notput}")
# older Megatron-LM: no timestamp, no throughput, 'learning rate: 9.150E-06'
string(REGEX REPLACE "\\[2024-06-01 [0-9:]+\\] " "" old "${notput}")
string(REGEX REPLACE "learning rate: [0-9.E+-]+" "learning rate: 9.150E-06" old "${old}")
file(WRITE ${OUT}/old/gpt7b-tp8-sp.log "${old}")
# the oldest report (2019-2020): iteration, time, learning rate, loss, loss scale
string(REGEX REPLACE "consumed samples: +[0-9]+ \\| " "" oldest "${old}")
string(REGEX REPLACE " \\| global batch size: +[0-9]+| \\| grad norm: [0-9.]+| \\| number of [a-z]+ iterations: +[0-9]+" ""
  oldest "${oldest}")
file(WRITE ${OUT}/oldest/gpt7b-tp8-sp.log "${oldest}")
if(NOT oldest MATCHES " iteration       20/     100 \\| elapsed time per iteration \\(ms\\): 4012.5 \\| learning rate: 9.150E-06 \\| lm loss: [0-9.E+-]+ \\| loss scale: 1.0 \\|\n")
  message(FATAL_ERROR "the oldest format was not made:\n${oldest}")
endif()

set(FLAGS --model gpt-7b --gpus 16 --seq 8192 --batch 1 --global-batch 64 --tp 8 --strategy megatron-sp
  --recompute full --framework megatron --zero 1 --dtype bf16)
rows(whole ${OUT}/whole/gpt7b-tp8-sp.log)
rows(by_flags ${OUT}/excerpt/gpt7b-tp8-sp.log ${FLAGS})
rows(by_script ${OUT}/excerpt/gpt7b-tp8-sp.log --args-file ${CMAKE_CURRENT_LIST_DIR}/excerpt/gpt7b-tp8-sp.sh --gpus 16 --recompute full)
foreach(v by_flags by_script)
  if(NOT ${v} STREQUAL whole)
    message(FATAL_ERROR "${v}:\n${${v}}\nthe whole log:\n${whole}")
  endif()
endforeach()
# the whole log's row (data/megatron-expected.csv): step_s 4.0118, 431.1 TFLOP/s, 61 GiB
if(NOT whole MATCHES ",megatron,bf16,,,,,,,4[.]0118,431[.]1,megatron-lm,61,false\n")
  message(FATAL_ERROR "the whole log's row changed:\n${whole}")
endif()
# without TFLOP/s, and in the older formats: the same step, no throughput
string(REPLACE ",4.0118,431.1,megatron-lm," ",4.0118,,," no_tput "${whole}")
foreach(d notput old oldest)
  rows(got ${OUT}/${d}/gpt7b-tp8-sp.log ${FLAGS})
  if(NOT got STREQUAL no_tput)
    message(FATAL_ERROR "${d}:\n${got}\nwant:\n${no_tput}")
  endif()
endforeach()

# no block and no flags; a block and flags; flags that do not say the run
expect_bad("gpt7b-tp8-sp.log: no Megatron-LM argument block .* --args-file FILE" runs from-megatron
  ${OUT}/excerpt/gpt7b-tp8-sp.log)
expect_bad("gpt7b-tp8-sp.log:2: the log has its argument block, and --model would not be used" runs from-megatron
  ${OUT}/whole/gpt7b-tp8-sp.log ${FLAGS})
expect_bad("a log without its argument block needs the run's sequence length" runs from-megatron
  ${OUT}/excerpt/gpt7b-tp8-sp.log --model gpt-7b --gpus 16 --batch 1)
