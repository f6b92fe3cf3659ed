# sim.ingest.from_megatron: `ulysim runs from-megatron` on the logs of data/.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(LOGS ${DATA}/gpt7b-tp8-sp.log ${DATA}/llama3-8b-tp2-cp4-pp2-ring.log ${DATA}/small-gqa-swiglu-cp8-a2a.log
  ${DATA}/small-moe-mla-ep4.log)

# the four rows against the ones worked out by hand from the logs (the MoE
# log's: from_megatron_moe.cmake says where each cell comes from)
execute_process(COMMAND ${EXE} runs from-megatron ${LOGS} -o ${OUT}/runs.csv
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "from-megatron: exit ${rc}: ${err}")
endif()
file(READ ${OUT}/runs.csv got)
file(READ ${DATA}/megatron-expected.csv want)
if(NOT got STREQUAL want)
  message(FATAL_ERROR "from-megatron wrote:\n${got}\nwant (data/megatron-expected.csv):\n${want}")
endif()

# --warmup 0: every report of the llama log counts; the median of its eight
# times (9801.2 and 9803.3 in the middle) is 9.80225 s
execute_process(COMMAND ${EXE} runs from-megatron ${DATA}/llama3-8b-tp2-cp4-pp2-ring.log --warmup 0
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES ",bf16,,,true,te,false,,9\\.80225,")
  message(FATAL_ERROR "--warmup 0: exit ${rc}, ${err}\n${out}\n(want step_s 9.80225)")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/expect_bad.cmake)

# a log cut short inside the argument block, and one cut inside an iteration report
file(STRINGS ${DATA}/gpt7b-tp8-sp.log lines)
list(SUBLIST lines 0 40 head)
list(JOIN head "\n" text)
file(WRITE ${OUT}/cut-args.log "${text}\n")
expect_bad("cut-args.log:40: the argument block from line 2 is not closed" runs from-megatron ${OUT}/cut-args.log)
file(READ ${DATA}/gpt7b-tp8-sp.log text)
string(FIND "${text}" "iteration       50/" at)
math(EXPR at "${at} + 40")
string(SUBSTRING "${text}" 0 ${at} cut)
file(WRITE ${OUT}/cut-report.log "${cut}")
expect_bad("cut-report.log:[0-9]+: iteration 50: no 'elapsed time per iteration \\(ms\\):' \\(the log is cut short\\)"
  runs from-megatron ${OUT}/cut-report.log)
file(WRITE ${OUT}/not-a-log.log "hello\n")
expect_bad("not-a-log.log: no Megatron-LM argument block" runs from-megatron ${OUT}/not-a-log.log)
expect_bad("nonexistent.log: cannot open" runs from-megatron ${OUT}/nonexistent.log)
expect_bad("every iteration report .* averages warm-up iterations \\(--warmup 100"
  runs from-megatron ${DATA}/gpt7b-tp8-sp.log --warmup 100)
expect_bad("--warmup 'x': not a count" runs from-megatron ${DATA}/gpt7b-tp8-sp.log --warmup x)
expect_bad("unknown action 'bogus'" runs bogus)
expect_bad("no log given" runs from-megatron)
expect_bad("unknown option '--bogus'" runs from-megatron --bogus)
# a failed run leaves no output file behind
if(EXISTS ${OUT}/partial.csv)
  message(FATAL_ERROR "partial.csv exists before the test")
endif()
expect_bad("not-a-log.log" runs from-megatron ${DATA}/gpt7b-tp8-sp.log ${OUT}/not-a-log.log -o ${OUT}/partial.csv)
if(EXISTS ${OUT}/partial.csv)
  message(FATAL_ERROR "a failed from-megatron left ${OUT}/partial.csv")
endif()

# an uneven pipeline as the log gives it: the llama log (32 layers over 2
# stages) with a layout of 15 and 17 layers, and with the embedding and the
# loss counted; each row carries the split, and validate prices it so
file(READ ${DATA}/llama3-8b-tp2-cp4-pp2-ring.log text)
set(pp_line "  pipeline_model_parallel_size .................... 2\n")
string(REPLACE "${pp_line}" "${pp_line}  pipeline_model_parallel_layout .................. Et*15|t*17L\n" laid "${text}")
string(REPLACE "${pp_line}" "${pp_line}  account_for_embedding_in_pipeline_split ......... True\n  account_for_loss_in_pipeline_split .............. True\n" counted "${text}")
file(WRITE ${OUT}/laid.log "${laid}")
file(WRITE ${OUT}/counted.log "${counted}")
execute_process(COMMAND ${EXE} runs from-megatron ${OUT}/laid.log ${OUT}/counted.log --cluster dgx-h100 -o ${OUT}/split.csv
  RESULT_VARIABLE rc ERROR_VARIABLE err)
file(READ ${OUT}/split.csv split)
if(NOT rc EQUAL 0 OR NOT split MATCHES "\nlaid,[^\n]*,2,,,,,,Et[*]15[|]t[*]17L,[^\n]*\ncounted,[^\n]*,2,,,,true,true,,")
  message(FATAL_ERROR "the split from the logs: exit ${rc} ${err}\n${split}")
endif()
execute_process(COMMAND ${EXE} validate --runs ${OUT}/split.csv RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "laid +ring +64 +32768 tp2[.]r4[.]dp4[.]pp2")
  message(FATAL_ERROR "validate of the split rows: exit ${rc} ${err}\n${out}")
endif()

# --- the options: one case a line, "regex of the one stderr line|arguments" (%LOG% the GPT
# log, %DATA% the data directory, %OUT% the output directory): exit 2
set(BAD_OPTIONS
  # one log given twice, by its name or another, would be two rows of one run
  "gpt7b-tp8-sp[.]log and .*gpt7b-tp8-sp[.]log are the same file [(]valid: each run once[)]|runs from-megatron %LOG% %LOG%"
  "are the same file|runs from-megatron %LOG% %DATA%/../data/gpt7b-tp8-sp.log"
  # an option given twice: refused naming both values, not the last taken in silence
  "--warmup given twice [(]'1', then '2'. valid: one value[)]|runs from-megatron %LOG% --warmup 1 --warmup=2"
  "--cluster given twice [(]'dgx-h100', then 'dgx-a100-80g'|runs from-megatron %LOG% --cluster=dgx-h100 --cluster dgx-a100-80g"
  "-o given twice [(]'[^']+', then '[^']+'|runs from-megatron %LOG% -o %OUT%/a.csv --output=%OUT%/b.csv"
  "--warmup '': not a count|runs from-megatron %LOG% --warmup="
  "--help takes no value|runs from-megatron %LOG% --help=1"
)
foreach(case IN LISTS BAD_OPTIONS)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 regex)
  list(GET parts 1 args)
  string(REPLACE "%LOG%" "${DATA}/gpt7b-tp8-sp.log" args "${args}")
  string(REPLACE "%DATA%" "${DATA}" args "${args}")
  string(REPLACE "%OUT%" "${OUT}" args "${args}")
  string(REPLACE " " ";" args "${args}")
  expect_bad("${regex}" ${args})
endforeach()
if(EXISTS ${OUT}/a.csv OR EXISTS ${OUT}/b.csv)
  message(FATAL_ERROR "-o given twice wrote a file")
endif()

# --opt=VALUE is --opt VALUE: the same rows
execute_process(COMMAND ${EXE} runs from-megatron ${LOGS} --warmup 0 --cluster dgx-h100 -o ${OUT}/spaced.csv
  RESULT_VARIABLE rc1 ERROR_VARIABLE err1)
execute_process(COMMAND ${EXE} runs from-megatron ${LOGS} --warmup=0 --cluster=dgx-h100 --output=${OUT}/equals.csv
  RESULT_VARIABLE rc2 ERROR_VARIABLE err2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "--opt VALUE: exit ${rc1} ${err1}; --opt=VALUE: exit ${rc2} ${err2}; want 0")
endif()
file(READ ${OUT}/spaced.csv spaced)
file(READ ${OUT}/equals.csv equals)
if(NOT spaced STREQUAL equals OR NOT equals MATCHES ",dgx-h100,")
  message(FATAL_ERROR "--opt=VALUE wrote:\n${equals}\n--opt VALUE wrote:\n${spaced}")
endif()
