# expect_output.cmake: a command must exit with STATUS (default 0) and print
# (on stdout or stderr) a line matching the regular expression WANT; a
# test that matched the output alone would pass whatever the exit status.
#   cmake -DCMD=word@word@... -DWANT=REGEX [-DSTATUS=N] -P expect_output.cmake
# The command's words are joined by @ (no path here holds one).
if(NOT DEFINED CMD OR NOT DEFINED WANT)
  message(FATAL_ERROR "expect_output.cmake: CMD and WANT are required")
endif()
if(NOT DEFINED STATUS)
  set(STATUS 0)
endif()
string(REPLACE "@" ";" words "${CMD}")
execute_process(COMMAND ${words} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${STATUS}")
  message(FATAL_ERROR "exit status ${rc}, expected ${STATUS}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${WANT}")
  message(FATAL_ERROR "no output matches \"${WANT}\"\nstdout:\n${out}\nstderr:\n${err}")
endif()
