# Every strategy of the registry (the names registry_names prints, so a new
# entry is checked without editing this file) must reach each place a user
# meets strategies:
#   PART=cli      `ulysim --help` lists it (its strategies section, or under
#                 --strategy); `ulysim --strategy
#                 NAME` plans it (a table row of that name) and its JSON says
#                 "strategy": "NAME"
#   PART=plot     `ulysim plot memory` (every strategy by default) writes a
#                 CSV row for it and names it in the header's strategy column
#   PART=harness  `ulyharness --help` lists it under --strategy and
#                 `MPIEXEC -n 2 ulyharness --strategy NAME --print-plan`
#                 accepts it and prints its plan
#   -DNAMES=registry_names -DULYSIM= -DHARNESS= -DMPIEXEC= -DNPFLAG= -DOUT=dir
include(${CMAKE_CURRENT_LIST_DIR}/../../timeout_scale.cmake)
uly_timeout(inner_timeout_s 120)
execute_process(COMMAND ${NAMES} RESULT_VARIABLE rc OUTPUT_VARIABLE names ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "registry_names failed (${rc}): ${err}")
endif()
string(STRIP "${names}" names)
string(REPLACE "\n" ";" names "${names}")
list(LENGTH names n)
if(n LESS 1)
  message(FATAL_ERROR "the registry has no strategies")
endif()
message("registry: ${names}")
set(failed 0)

function(fail what)
  message(SEND_ERROR "${what}")
endfunction()

# runs a command; its stdout in var; fails on a non-zero exit
function(run_ok var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${inner_timeout_s})
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "exit ${rc}: ${ARGN}\n${err}")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# where a help text lists the strategies: its "strategies" section (a
# heading line, then indented lines), or else the --strategy option's
# paragraph: its line and the continuation lines under it (indented, not
# starting another option)
function(strategy_paragraph var help)
  string(REGEX MATCH "\nstrategies[^\n]*:(\n  [^\n]+)+" para "${help}")
  if(para STREQUAL "")
    string(REGEX MATCH "\n  --strategy [^\n]*(\n     +[^ \n-][^\n]*)*" para "${help}")
  endif()
  if(para STREQUAL "")
    message(SEND_ERROR "no --strategy option in the help")
  endif()
  set(${var} "${para}" PARENT_SCOPE)
endfunction()

# name appears in text as a word (not inside a longer name)
function(has_word var text name)
  string(REGEX MATCH "(^|[^a-z0-9-])${name}([^a-z0-9-]|$)" m "${text}")
  if(m STREQUAL "")
    set(${var} 0 PARENT_SCOPE)
  else()
    set(${var} 1 PARENT_SCOPE)
  endif()
endfunction()

if(PART STREQUAL "cli")
  run_ok(help ${ULYSIM} --help)
  strategy_paragraph(para "${help}")
  foreach(s IN LISTS names)
    has_word(ok "${para}" "${s}")
    if(NOT ok)
      fail("ulysim --help does not list '${s}' under --strategy:${para}")
    endif()
    run_ok(table ${ULYSIM} --strategy ${s} --gpus 8 --seq 32K)
    if(NOT table MATCHES "\n  ${s}\\*? +[0-9]")
      fail("ulysim --strategy ${s}: no table row for it:\n${table}")
    endif()
    run_ok(json ${ULYSIM} --strategy ${s} --gpus 8 --seq 32K --format json)
    if(NOT json MATCHES "\"strategy\":[ \t]*\"${s}\"")
      fail("ulysim --strategy ${s} --format json: no \"strategy\": \"${s}\"")
    endif()
  endforeach()
elseif(PART STREQUAL "plot")
  file(REMOVE_RECURSE "${OUT}")
  file(MAKE_DIRECTORY "${OUT}")
  run_ok(out ${ULYSIM} plot memory --data-only --gpus 8 --seq 64K -o ${OUT}/memory.png)
  file(READ "${OUT}/memory.csv" csv)
  # the header's description of the strategy column
  string(REGEX MATCH "\n# [^\n]*strategy: [^\n]*" column "${csv}")
  foreach(s IN LISTS names)
    has_word(ok "${column}" "${s}")
    if(NOT ok)
      fail("ulysim plot memory: the CSV header's strategy column does not name '${s}':${column}")
    endif()
    if(NOT csv MATCHES "\n${s},")
      fail("ulysim plot memory: no CSV row for '${s}':\n${csv}")
    endif()
  endforeach()
elseif(PART STREQUAL "harness")
  execute_process(COMMAND ${HARNESS} --help RESULT_VARIABLE rc OUTPUT_VARIABLE help ERROR_VARIABLE herr)
  strategy_paragraph(para "${help}${herr}")
  foreach(s IN LISTS names)
    has_word(ok "${para}" "${s}")
    if(NOT ok)
      fail("ulyharness --help does not list '${s}' under --strategy:${para}")
    endif()
    run_ok(plan ${MPIEXEC} ${NPFLAG} 2 ${HARNESS} --strategy ${s} --print-plan)
    if(NOT plan MATCHES "^# plan: ${s} ")
      fail("ulyharness --strategy ${s} --print-plan: no plan of ${s}:\n${plan}")
    endif()
  endforeach()
else()
  message(FATAL_ERROR "PART must be cli, plot or harness, not '${PART}'")
endif()
