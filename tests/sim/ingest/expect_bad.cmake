# expect_bad(REGEX ARGS...): `ulysim ARGS` (EXE) is bad input: exit 2 and
# exactly one line on stderr that matches REGEX. Included by the scripts here.
function(expect_bad regex)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" nl "${err}")
  list(LENGTH nl n_lines)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${regex}" OR NOT n_lines EQUAL 1)
    message(FATAL_ERROR "ulysim ${ARGN}: exit ${rc} (want 2), stderr: ${err} (want one line /${regex}/)")
  endif()
  message(STATUS "ok: ${err}")
endfunction()
