# sim.validate.run: `ulysim validate ... --format json` of the recorded strategy
# runs on the calibrated profiles, into OUT, for the acceptance checks. Exit 0
# or 1 (a limit missed) both leave a complete report; 2 is a bad trace.
string(REPLACE "@" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} validate ${args} --format json OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT (rc EQUAL 0 OR rc EQUAL 1))
  message(FATAL_ERROR "ulysim validate exited ${rc}: ${err}")
endif()
file(READ ${OUT} j)
string(JSON ok GET "${j}" ok)
string(JSON n GET "${j}" summary runs)
message(STATUS "validated ${n} recorded runs; report in ${OUT}; ${err}")
