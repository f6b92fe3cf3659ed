# sim.cli.no_long_numbers: a model at the loader's largest dimensions (far
# too large for any cluster) on the slowest preset GPU: every command exits
# 0 and prints no number of more than 20 digits (step times of 10^35 s and
# 10^20 GiB printed in fixed point ran to 36 digits; a table shows them in
# exponent form, CSV in %.17g).
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/huge.json "{\"name\": \"huge\", \"layers\": 100000, \"hidden\": 1048576, \"heads\": 16384,
 \"kv_heads\": 16384, \"head_dim\": 64, \"ffn_hidden\": 4194304, \"vocab\": 16777216, \"swiglu\": true,
 \"tied_embeddings\": false, \"dropout\": false}\n")
set(common --model ${OUT}/huge.json --cluster piz-daint-p100 --dtype fp32 --no-flash --global-batch 2^40)
foreach(cmd "plan" "plan;--format;csv" "max-seq" "min-gpus" "sweep;--gpus;1,8")
  set(args ${cmd})
  if(cmd STREQUAL "plan")
    set(args --seq 1T --gpus 1)
  elseif(cmd MATCHES "^plan;")
    set(args --seq 1T --gpus 1 --format csv)
  elseif(cmd STREQUAL "min-gpus")
    set(args min-gpus --seq 1T --gpus 8)
  elseif(cmd MATCHES "^sweep")
    set(args sweep --seq 1T --gpus 1,8)
  endif()
  execute_process(COMMAND ${ULYSIM} ${args} ${common} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ulysim ${args}: exit ${rc}: ${err}")
  endif()
  if(out MATCHES "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]")
    message(FATAL_ERROR "ulysim ${args}: a number of more than 20 digits (${CMAKE_MATCH_0}...):\n${out}")
  endif()
  message(STATUS "ok: ulysim ${args}")
endforeach()
