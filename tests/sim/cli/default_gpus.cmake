# sim.cli.default_gpus: the default GPU count on clusters whose nodes do not
# take 8 GPUs whole. One node of one GPU: the default 8 adds nodes as an
# explicit --gpus 8 does (it said "8 GPUs exceed the cluster's 1" while
# --gpus 8 fitted). Nodes of 7 GPUs: one node, 7 GPUs (the default 8 was
# refused as "--gpus 8: not a whole number of 7-GPU nodes", a flag the user
# never gave).
file(MAKE_DIRECTORY ${OUT})
file(READ ${PRESETS}/clusters/dgx-h100.json base)
foreach(case "1;128" "7;5")
  list(GET case 0 gpn)
  list(GET case 1 nodes)
  string(REPLACE "\"gpus_per_node\": 8," "\"gpus_per_node\": ${gpn}," text "${base}")
  string(REPLACE "\"nodes\": 128," "\"nodes\": ${nodes}," text "${text}")
  if(gpn EQUAL 1)
    string(REPLACE "\"nodes\": ${nodes}," "\"nodes\": 1," text "${text}")
  endif()
  file(WRITE ${OUT}/gpn${gpn}.json "${text}")
  foreach(cmd "plan" "max-seq")
    set(args)
    if(cmd STREQUAL "max-seq")
      set(args max-seq --strategy ulysses)
    endif()
    execute_process(COMMAND ${ULYSIM} ${args} --cluster ${OUT}/gpn${gpn}.json RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err)
    if(gpn EQUAL 1)
      set(want "8 GPUs")
    else()
      set(want "7 GPUs")
    endif()
    if(NOT rc EQUAL 0 OR NOT out MATCHES "${want}" OR out MATCHES "exceed the cluster")
      message(FATAL_ERROR "ulysim ${args} on ${gpn}-GPU nodes: exit ${rc} (want 0, \"${want}\"): ${err}\n${out}")
    endif()
    message(STATUS "ok: ${cmd} on ${gpn}-GPU nodes: ${want}")
  endforeach()
endforeach()
