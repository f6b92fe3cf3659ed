# sim.validate.rank_rules.CASE: how `ulysim validate` ranks runs and lists its
# worst ops, on recorded traces (traces/cpu/, tests/sim/validate/data/) and
# copies edited here. -DEXE=ulysim -DGOOD=a ulysses trace -DDATA=data/ -DOUT=dir -DCASE=...
#   ties      two runs the model prices alike (a usp run at u2 r1 is a
#             ulysses run at u2): a tie orders nothing, so it is not a pair
#             to rank (it was a DISAGREE), counted apart as a tie
#   labels    two layouts of one strategy (ring r2; ring r1 with pp 2) had one
#             label, "ring t1", and were skipped as one layout: every degree
#             the strategy has is in the label, and pp
#   worst     an op measured at 0 s has no error ('-' in its row): it is not
#             among the worst ops at +0% (JSON error 0)
file(MAKE_DIRECTORY ${OUT})

function(run_validate out_var)
  execute_process(COMMAND ${EXE} validate ${ARGN} --max-error none RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ulysim validate ${ARGN}: exit ${rc}: ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(want text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for /${regex}/ in:\n${text}")
  endif()
endfunction()

file(READ ${GOOD} good)
if(CASE STREQUAL "ties")
  # the same run as usp u2 r1 (the plan libulysim builds is the same ops), its
  # attention forward timed at 1 s: the predictions tie, the measurements do not
  string(REPLACE "\"strategy\":\"ulysses\"" "\"strategy\":\"usp\"" usp "${good}")
  string(REGEX REPLACE "(\"name\":\"attn_fwd\"[^\n]*\"time_s\":){[^}]*}" "\\1{\"median\":1,\"min\":1,\"max\":1}"
    usp "${usp}")
  if(usp STREQUAL good)
    message(FATAL_ERROR "test setup: ${GOOD} is not a ulysses trace with an attn_fwd op")
  endif()
  file(WRITE ${OUT}/usp-u2-r1.trace "${usp}")
  run_validate(out ${GOOD} ${OUT}/usp-u2-r1.trace --brief)
  want("${out}" "# ranking: no strategy pair at the same size to rank; fastest agrees at 1 of 1 sizes; 1 pair tied \\(equal predicted or measured steps: not ranked\\)"
    "the ranking line")
  want("${out}" "ulysses u2 t1 +/ usp u2 r1 t1 +predicted 1.00, measured 0.[0-9]+  tie: not ranked" "the pair's line")
  if(out MATCHES "DISAGREE")
    message(FATAL_ERROR "a tie counted as a disagreement:\n${out}")
  endif()
  run_validate(js ${GOOD} ${OUT}/usp-u2-r1.trace --format json)
  string(JSON pairs GET "${js}" ranking pairs)
  string(JSON ties GET "${js}" ranking ties)
  string(JSON tie GET "${js}" ranking cases 0 tie)
  string(JSON agree TYPE "${js}" ranking cases 0 agree)
  if(NOT pairs EQUAL 0 OR NOT ties EQUAL 1 OR NOT tie STREQUAL "ON" OR NOT agree STREQUAL "NULL")
    message(FATAL_ERROR "json ranking: pairs ${pairs} (want 0), ties ${ties} (want 1), tie ${tie} (want ON), agree ${agree} (want NULL)")
  endif()
  # --min-agreement with every pair tied: nothing to rank, which is no
  # agreement (exit 1), said as such rather than as "0%"
  execute_process(COMMAND ${EXE} validate ${GOOD} ${OUT}/usp-u2-r1.trace --max-error none --min-agreement 0.8 --brief
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "--min-agreement with only a tie: exit ${rc}, want 1: ${err}")
  endif()
  want("${out}" "# check: ranking agreement >= 80%: no pair to rank: FAIL" "the agreement check with nothing to rank")
elseif(CASE STREQUAL "labels")
  run_validate(out ${DATA}/ring-np2-s1024.trace ${DATA}/ring-pp2-np2-s1024.trace --brief)
  want("${out}" "ring-np2-s1024.trace +ring r2 t1 +2 +1024 " "the ring run's label in the runs table")
  want("${out}" "ring-pp2-np2-s1024.trace +ring r1 t1 pp2 +2 +1024 " "the pipelined ring run's label in the runs table")
  want("${out}" "# ranking: 1 of 1 strategy pairs" "the ranking line (one pair ranked)")
  want("${out}" "ring r2 t1 +/ ring r1 t1 pp2 +predicted" "the pair's line")
  run_validate(js ${DATA}/ring-np2-s1024.trace ${DATA}/ring-pp2-np2-s1024.trace --format json)
  string(JSON a GET "${js}" runs 0 layout)
  string(JSON b GET "${js}" runs 1 layout)
  if(a STREQUAL b)
    message(FATAL_ERROR "two layouts share the label '${a}'")
  endif()
elseif(CASE STREQUAL "worst")
  string(REGEX REPLACE "(\"name\":\"attn_bwd\"[^\n]*\"time_s\":){[^}]*}" "\\1{\"median\":0,\"min\":0,\"max\":0}"
    zero "${good}")
  if(zero STREQUAL good)
    message(FATAL_ERROR "test setup: ${GOOD} has no attn_bwd op")
  endif()
  file(WRITE ${OUT}/attn-bwd-zero.trace "${zero}")
  run_validate(out ${OUT}/attn-bwd-zero.trace)
  want("${out}" "\n +[0-9]+ attn_bwd +bwd +attn [^\n]* +- \n" "attn_bwd's row, its error '-'")
  string(REGEX MATCH "# worst ops by [^\n]*\n(#   [^\n]*\n)*" worst "${out}")
  if(worst MATCHES "attn_bwd" OR worst STREQUAL "")
    message(FATAL_ERROR "worst ops (attn_bwd, measured 0 s, must not be there):\n${worst}")
  endif()
  run_validate(js ${OUT}/attn-bwd-zero.trace --format json)
  string(JSON n LENGTH "${js}" summary worst_ops)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${js}" summary worst_ops ${i} name)
    string(JSON err GET "${js}" summary worst_ops ${i} error)
    if(name STREQUAL "attn_bwd")
      message(FATAL_ERROR "json worst_ops holds attn_bwd (measured 0 s) with error ${err}")
    endif()
  endforeach()
else()
  message(FATAL_ERROR "CASE '${CASE}': not ties, labels or worst")
endif()
message(STATUS "rank_rules ${CASE}: ok")
