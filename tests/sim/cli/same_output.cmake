# Two command lines (words joined by @ in A and B) print the same thing and
# exit the same way: an alias spelling against the flags it stands for.
# -DSTRIP=REGEX: what may differ, removed from both outputs first.
string(REPLACE "@" ";" a "${A}")
string(REPLACE "@" ";" b "${B}")
execute_process(COMMAND ${ULYSIM} ${a} RESULT_VARIABLE ra OUTPUT_VARIABLE oa ERROR_VARIABLE ea)
execute_process(COMMAND ${ULYSIM} ${b} RESULT_VARIABLE rb OUTPUT_VARIABLE ob ERROR_VARIABLE eb)
if(NOT ra EQUAL 0 OR NOT rb EQUAL 0)
  message(FATAL_ERROR "exit ${ra} and ${rb}:\n${ea}\n${eb}")
endif()
# STRIP (optional): a regex of what may differ (a model's name and source,
# a Hugging Face config against a preset), removed from both first
if(DEFINED STRIP)
  string(REGEX REPLACE "${STRIP}" "" oa "${oa}")
  string(REGEX REPLACE "${STRIP}" "" ob "${ob}")
endif()
if(NOT oa STREQUAL ob)
  message(FATAL_ERROR "different output:\n--- ${A}\n${oa}\n--- ${B}\n${ob}")
endif()
string(LENGTH "${oa}" n)
if(n LESS 200)
  message(FATAL_ERROR "suspiciously short output (${n} bytes):\n${oa}")
endif()
message("same output (${n} bytes)")
