# Runs `ulysim reproduce all --format json` once and keeps its output for the
# checks (ctest fixture repro_json). -DEXE=ulysim -DOUT=file.json
execute_process(COMMAND ${EXE} reproduce all --format json
  OUTPUT_FILE ${OUT}.tmp ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ulysim reproduce all --format json exited ${rc}: ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
