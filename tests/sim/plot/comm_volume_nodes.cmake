# sim.plot.comm-volume.not_whole_nodes: a GPU count that is not whole nodes
# (12 on 8-GPU nodes) is not priced by the library; comm-volume leaves it
# out with a note rather than drawing a row of zero bytes (it drew
# "r12,0,0,0"). --data-only: the CSV alone.
execute_process(COMMAND ${ULYSIM} plot comm-volume --strategy rsa --gpus 3..24 --seq 3M --data-only
  -o ${OUT}/cv-nodes.png RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
file(STRINGS ${OUT}/cv-nodes.csv rows REGEX "^(fixed|scaled),")
list(LENGTH rows n)
foreach(row ${rows})
  if(row MATCHES "^[a-z]+,rsa,12,")
    message(FATAL_ERROR "a row for 12 GPUs, which are not whole 8-GPU nodes: ${row}")
  endif()
endforeach()
file(READ ${OUT}/cv-nodes.csv text)
if(NOT n EQUAL 6 OR NOT text MATCHES "# [^\n]*rsa, 12 GPUs [(]r12[)]: [^\n]*not a whole number of 8-GPU nodes")
  message(FATAL_ERROR "want 6 rows (3, 6, 24 GPUs in both panels) and a note for 12 GPUs, got ${n}:\n${text}")
endif()
message(STATUS "ok: ${n} rows, 12 GPUs left out with its reason")
