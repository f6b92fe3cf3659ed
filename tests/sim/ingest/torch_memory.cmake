# sim.ingest.torch_memory: a torch.profiler trace whose JSON tree would not
# fit in the memory the process may take is refused before it is read: exit
# 2, one line naming the need and the room (the reader once parsed what it
# could and failed part-way). The room is set with `ulimit -v` (64 MiB);
# the file is 16 MiB (valid JSON padded with spaces), which needs about 10
# times that.
file(MAKE_DIRECTORY ${OUT})
set(f ${OUT}/padded.trace.json)
string(REPEAT " " 1048576 mib)
file(WRITE ${f} "{\"traceEvents\":[")
foreach(i RANGE 1 16)
  file(APPEND ${f} "${mib}")
endforeach()
file(APPEND ${f} "]}\n")
execute_process(COMMAND sh -c "ulimit -v 65536 && exec \"$0\" validate --torch-trace \"$1\" --gpus 1 --seq 4K"
  ${EXE} ${f} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(want "padded[.]trace[.]json: 16[.]0 MiB of JSON needs about 160 MiB of memory to read, but the room under this process's address-space limit [(]ulimit -v[)] is [0-9]+ MiB [(]valid: ")
if(NOT rc EQUAL 2 OR NOT err MATCHES "${want}" OR NOT out STREQUAL "")
  message(FATAL_ERROR "exit ${rc} (want 2), stderr: ${err} (want /${want}/), stdout: ${out}")
endif()
message(STATUS "ok: ${err}")
