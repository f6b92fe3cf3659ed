# Runs ULYSIM ARGS once serially and once under MPIEXEC with NP ranks; the
# outputs must be identical byte for byte.
# -DMPIEXEC= -DNPFLAG= -DMPIFLAGS=a;b -DNP= -DULYSIM= -DARGS=a@b@c -DOUT=prefix
include(${CMAKE_CURRENT_LIST_DIR}/../../timeout_scale.cmake)
uly_timeout(inner_timeout_s 240)
string(REPLACE "@" ";" args "${ARGS}")
execute_process(COMMAND ${ULYSIM} ${args} OUTPUT_FILE ${OUT}.serial ERROR_VARIABLE err1 RESULT_VARIABLE rc1)
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "serial run failed (${rc1}): ${err1}")
endif()
execute_process(COMMAND ${MPIEXEC} ${NPFLAG} ${NP} ${MPIFLAGS} ${ULYSIM} ${args}
  OUTPUT_FILE ${OUT}.mpi ERROR_VARIABLE err2 RESULT_VARIABLE rc2 TIMEOUT ${inner_timeout_s})
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "MPI run failed (${rc2}): ${err2}")
endif()
file(SIZE ${OUT}.serial n1)
if(n1 EQUAL 0)
  message(FATAL_ERROR "empty output")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}.serial ${OUT}.mpi RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "outputs differ: ${OUT}.serial ${OUT}.mpi")
endif()
message(STATUS "identical (${n1} bytes) with ${NP} ranks and one process")
