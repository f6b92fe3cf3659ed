# sim.ingest.megatron_edits.CASE: `ulysim runs from-megatron` on the real
# log data/gpt7b-tp8-sp.log edited as an adversarial tester edited it; each
# edit is exit 2 with one line naming the file, the line and the value, and
# -o is not written. CASE (one test each):
#   numbers     a number with trailing junk was read by its prefix
#               ("99999x" as 99999, "4\xff0" as 4)
#   conflicts   an argument given twice, or the start-up line and the block
#               disagreeing: the last value won
#   iterations  iteration numbers 1.5, Infinity, -2^63 dropped the report;
#               iterations going back or repeating were accepted
#   rows        rows that `ulysim validate --runs` then refused were written
#               (exit 0): each row now passes that command's row check first
#   floors      tiny positive numbers (1e-305 ms, 1e-300 TFLOP/s, MB) were
#               read and written as rows whose errors were inf: each report
#               below the runs file's floor (formats/runs_read.h) is refused
#               at its line
#   separators  a thousands separator ("5,123.4" ms, "1,431.0" TFLOP/s,
#               "61,440.0" MB) or a decimal comma ("5123,4") was read as the
#               number before the comma (5 ms, exit 0): refused by name
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(T ${DATA}/gpt7b-tp8-sp.log)
file(READ ${T} LOG)
include(${CMAKE_CURRENT_LIST_DIR}/expect_bad.cmake)

# edit(NAME FROM TO [FROM TO]...): OUT/NAME is the log with each FROM (a
# regex) replaced by TO; every FROM must match
function(edit name)
  set(text "${LOG}")
  set(args ${ARGN})
  while(args)
    list(POP_FRONT args from to)
    string(REGEX REPLACE "${from}" "${to}" new "${text}")
    if(new STREQUAL text)
      message(FATAL_ERROR "edit ${name}: '${from}' matches nothing in ${T}")
    endif()
    set(text "${new}")
  endwhile()
  file(WRITE ${OUT}/${name} "${text}")
endfunction()

# edit_time / edit_tflops / edit_mem (NAME VALUE): iteration 20's time,
# its throughput, or every "max reserved" memory figure replaced by VALUE
function(edit_time name value)
  edit(${name} "(iteration       20/[^\n]*per iteration \\(ms\\)): 4012.5" "\\1: ${value}")
endfunction()
function(edit_tflops name value)
  edit(${name} "(iteration       20/[^\n]*\\(TFLOP/s/GPU\\)): 431.0" "\\1: ${value}")
endfunction()
function(edit_mem name value)
  edit(${name} "max reserved: 62464.0" "max reserved: ${value}")
endfunction()

# bad(NAME REGEX): the command on OUT/NAME with -o is exit 2, one line
# matching REGEX, and writes no file
function(bad name regex)
  expect_bad("${name}:${regex}" runs from-megatron ${OUT}/${name} -o ${OUT}/${name}.csv)
  if(EXISTS ${OUT}/${name}.csv)
    message(FATAL_ERROR "a refused log left ${OUT}/${name}.csv")
  endif()
endfunction()

if(CASE STREQUAL "numbers")
  edit(junk-mem.log "max reserved: 62464.0" "max reserved: 99999x")
  bad(junk-mem.log "80: memory report: 'max reserved:' is not a number: '99999x' \\(valid: MB")
  string(ASCII 255 ff)
  edit(junk-time.log "(iteration       20/[^\n]*per iteration \\(ms\\)): 4012.5" "\\1: 4${ff}0")
  bad(junk-time.log "81: iteration 20: 'elapsed time per iteration \\(ms\\):' is not a positive number: '4\\?0'")
  edit(junk-tflops.log "(iteration       20/[^\n]*\\(TFLOP/s/GPU\\)): 431.0" "\\1: 431.0e")
  bad(junk-tflops.log "81: iteration 20: 'throughput per GPU \\(TFLOP/s/GPU\\):' is not a number: '431.0e'")
  edit(junk-vocab.log "new size: 50304" "new size: 50304x")
  bad(junk-vocab.log "72: padded vocab: not a vocabulary size: new size '50304x'")
  edit(junk-banner.log "tensor-model-parallel size: 8" "tensor-model-parallel size: 8x")
  bad(junk-banner.log "1: 'tensor-model-parallel size:' '8x': not a positive integer")
elseif(CASE STREQUAL "separators")
  edit_time(sep-time.log 4,012.5)
  bad(sep-time.log "81: iteration 20: 'elapsed time per iteration \\(ms\\):' is not a positive number: '4,012.5'")
  edit_time(sep-comma.log 4012,5)
  bad(sep-comma.log "81: iteration 20: 'elapsed time per iteration \\(ms\\):' is not a positive number: '4012,5'")
  edit_tflops(sep-tflops.log 1,431.0)
  bad(sep-tflops.log "81: iteration 20: 'throughput per GPU \\(TFLOP/s/GPU\\):' is not a number: '1,431.0'")
  edit_mem(sep-mem.log 62,464.0)
  bad(sep-mem.log "80: memory report: 'max reserved:' is not a number: '62,464.0' \\(valid: MB")
elseif(CASE STREQUAL "conflicts")
  set(TP8 "  tensor_model_parallel_size ...................... 8\n")
  edit(tp-twice.log "${TP8}" "${TP8}  tensor_model_parallel_size ...................... 2\n")
  bad(tp-twice.log "58: tensor_model_parallel_size '2' contradicts tensor_model_parallel_size '8' on line 57")
  set(SEQ "  seq_length ...................................... 8192\n")
  edit(seq-twice.log "${SEQ}" "${SEQ}  seq_length ...................................... 4096\n")
  bad(seq-twice.log "55: seq_length '4096' contradicts seq_length '8192' on line 54")
  # the block edited alone: the start-up line still says 8
  edit(tp-edited.log "${TP8}" "  tensor_model_parallel_size ...................... 2\n")
  bad(tp-edited.log "57: tensor_model_parallel_size 2 contradicts 'tensor-model-parallel size: 8' on line 1")
  edit(vocab-twice.log "( > padded vocab [^\n]*\n)" "\\1 > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)\n")
  bad(vocab-twice.log "73: padded vocab new size 50432 contradicts new size 50304 on line 72")
  # the same value twice is one value: the row is the one without the repeat
  edit(seq-same.log "${SEQ}" "${SEQ}${SEQ}")
  execute_process(COMMAND ${EXE} runs from-megatron ${OUT}/seq-same.log RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "gpt-7b,,16,8192,megatron-sp,8,")
    message(FATAL_ERROR "seq_length twice with one value: exit ${rc}: ${err}\n${out}")
  endif()
elseif(CASE STREQUAL "iterations")
  foreach(it 1.5 Infinity -9223372036854775808 0)
    edit(it-${it}.log "iteration       20/" "iteration ${it}/")
    bad(it-${it}.log "81: iteration '${it}': not a positive integer")
  endforeach()
  edit(it-back.log "iteration       20/" "iteration       90/")
  bad(it-back.log "82: iteration 30 after iteration 90 on line 81")
  edit(it-repeat.log "iteration       20/" "iteration       10/")
  bad(it-repeat.log "81: iteration 10 after iteration 10 on line 78")
  edit(it-past.log "iteration      100/     100" "iteration      200/     100")
  bad(it-past.log "89: iteration 200/ 100: past the run's length")
elseif(CASE STREQUAL "rows")
  # each of these was written with exit 0, then refused by validate --runs
  edit(time.log "per iteration \\(ms\\): [0-9.]*" "per iteration (ms): 1e300")
  bad(time.log "8[1-9]: elapsed time per iteration \\(ms\\) 1e\\+300 \\(the median of the reports\\): its row would be refused by ulysim validate --runs: step_s '1e\\+297': out of range \\(valid: seconds per step in \\[1e-06, 1e\\+30\\]")
  edit(tflops.log "\\(TFLOP/s/GPU\\): [0-9.]*" "(TFLOP/s/GPU): 1e308")
  bad(tflops.log "8[1-9]: throughput per GPU \\(TFLOP/s/GPU\\) 1e\\+308 .*: tflops_per_gpu '1e\\+308': out of range \\(valid: TFLOP/s per GPU in")
  edit(mem.log "max reserved: [0-9.]*" "max reserved: 1e300")
  bad(mem.log "79: memory report 1e\\+300 MB \\(the largest\\): .*: mem_gib '9.76563e\\+296': out of range \\(valid: GiB per GPU in")
  edit(recompute.log "(recompute_granularity [.]*) full" "\\1 sometimes")
  bad(recompute.log "50: recompute_granularity: its row would be refused by ulysim validate --runs: --recompute 'sometimes': unknown value \\(valid: none\\|selective\\|full\\|ops\\|ops-half\\|attn-skip\\)")
  edit(world.log "(world_size [.]*) 16" "\\1 1099511627776" "world size: 16" "world size: 1099511627776")
  bad(world.log "68: world_size: .*--gpus '1099511627776'")
  edit(vocab.log "(vocab_size [.]*) None" "\\1 -5")
  bad(vocab.log "66: vocab_size '-5': not a positive integer")
  expect_bad("gpt7b-tp8-sp.log: --cluster: its row would be refused by ulysim validate --runs: --cluster 'bogus'"
    runs from-megatron ${T} --cluster bogus)
  # and what it writes, validate --runs reads
  execute_process(COMMAND ${EXE} runs from-megatron ${DATA}/gpt7b-tp8-sp.log ${DATA}/llama3-8b-tp2-cp4-pp2-ring.log
    ${DATA}/small-gqa-swiglu-cp8-a2a.log -o ${OUT}/runs.csv RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "from-megatron: exit ${rc}: ${err}")
  endif()
  execute_process(COMMAND ${EXE} validate --runs ${OUT}/runs.csv RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "validate --runs on from-megatron's rows: exit ${rc}: ${err}")
  endif()
elseif(CASE STREQUAL "floors")
  # every report: the one edited is refused at its line, whatever the median
  edit_time(tiny-time.log 1e-305)
  bad(tiny-time.log "81: iteration 20: 'elapsed time per iteration \\(ms\\):' 1e-305: below any step's time \\(valid: milliseconds of at least 0.001")
  edit_tflops(tiny-tflops.log 1e-300)
  bad(tiny-tflops.log "81: iteration 20: 'throughput per GPU \\(TFLOP/s/GPU\\):' 1e-300: below any GPU's throughput \\(valid: TFLOP/s of at least 1e-06")
  edit_tflops(zero-tflops.log 0.0)
  bad(zero-tflops.log "81: iteration 20: 'throughput per GPU \\(TFLOP/s/GPU\\):' 0: below any GPU's throughput")
  edit_mem(tiny-mem.log 1e-300)
  bad(tiny-mem.log "80: memory report: 'max reserved:' 1e-300: below any GPU process's memory \\(valid: 0, or MB of at least 1")
  # at the floors: read, and the rows' errors finite
  edit(floor.log "per iteration \\(ms\\): [0-9.]*" "per iteration (ms): 0.001")
  execute_process(COMMAND ${EXE} runs from-megatron ${OUT}/floor.log -o ${OUT}/floor.csv RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "a log at the step floor (0.001 ms): exit ${rc}: ${err}")
  endif()
  execute_process(COMMAND ${EXE} validate --runs ${OUT}/floor.csv --format csv RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR out MATCHES ",[+-]?(inf|nan)")
    message(FATAL_ERROR "validate --runs on a row at the floor: exit ${rc}: ${err}\n${out}")
  endif()
else()
  message(FATAL_ERROR "CASE '${CASE}': not numbers, conflicts, iterations, rows or floors")
endif()
