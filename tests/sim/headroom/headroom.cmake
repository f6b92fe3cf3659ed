# sim.headroom.flag: usable memory is the GPU's less the headroom
# (--mem-headroom GiB, else the cluster preset's gpu.reserved_gib); the plan
# shows both, the memory total counts the headroom, and whether a plan fits
# follows it. The expectations are computed here from the default run's JSON.
set(GIB 1073741824)
set(RUN --gpus 8 --seq 128K --strategy ulysses --ulysses 8)
# the plan's JSON with the extra flags into out (a failed run stops the test)
function(plan_json out)
  execute_process(COMMAND ${ULYSIM} ${RUN} ${ARGN} --format json RESULT_VARIABLE rc OUTPUT_VARIABLE js ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(${out} "${js}" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "ulysim ${RUN} ${ARGN}: exit ${rc}: ${err}")
  endif()
endfunction()
function(field out js)
  string(JSON v GET "${js}" ${ARGN})
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

plan_json(d)
field(hbm "${d}" config cluster hbm_bytes)
field(head0 "${d}" config cluster headroom_bytes)
field(total0 "${d}" plans 0 memory total_bytes)
field(res0 "${d}" plans 0 memory terms reserved)
math(EXPR want "3 * ${GIB}") # dgx-h100's gpu.reserved_gib
if(NOT head0 EQUAL want OR NOT res0 EQUAL want)
  message(FATAL_ERROR "default headroom ${head0}, reserved term ${res0}: want the preset's ${want}")
endif()

# 10 GiB: shown, usable = HBM - 10 GiB, and the total 7 GiB more than with the default 3
plan_json(t --mem-headroom 10)
field(head "${t}" config cluster headroom_bytes)
field(usable "${t}" config cluster usable_bytes)
field(total "${t}" plans 0 memory total_bytes)
math(EXPR want_head "10 * ${GIB}")
math(EXPR want_usable "${hbm} - 10 * ${GIB}")
math(EXPR want_total "${total0} + 7 * ${GIB}")
if(NOT head EQUAL want_head OR NOT usable EQUAL want_usable OR NOT total EQUAL want_total)
  message(FATAL_ERROR "--mem-headroom 10: headroom ${head} (want ${want_head}), usable ${usable} (want "
    "${want_usable}), total ${total} (want ${want_total})")
endif()

# the plan fits or not as the headroom leaves room: the total without the
# headroom is W; a headroom of HBM - W - 1 GiB fits, HBM - W + 1 GiB does not
math(EXPR w "${total0} - ${head0}")
math(EXPR fit_gib "(${hbm} - ${w}) / ${GIB} - 1")
math(EXPR nofit_gib "(${hbm} - ${w}) / ${GIB} + 1")
plan_json(f --mem-headroom ${fit_gib})
plan_json(n --mem-headroom ${nofit_gib})
field(ff "${f}" plans 0 feasible)
field(nf "${n}" plans 0 feasible)
if(NOT ff STREQUAL "ON" OR NOT nf STREQUAL "OFF")
  message(FATAL_ERROR "headroom ${fit_gib} GiB: feasible ${ff} (want true); ${nofit_gib} GiB: ${nf} (want false)")
endif()

# the table says both
execute_process(COMMAND ${ULYSIM} ${RUN} --mem-headroom 10 OUTPUT_VARIABLE tab)
if(NOT tab MATCHES "# cluster   [^\n]*80[.]0 GiB HBM [(]70[.]0 usable, 10[.]0 headroom[)]")
  message(FATAL_ERROR "the table does not show HBM, usable and headroom:\n${tab}")
endif()

# bad values: exit 2, one line naming the value
foreach(c "100|all of cluster dgx-h100's 80.0 GiB per GPU" "x|not a size in GiB" "-1|not a size in GiB")
  string(REPLACE "|" ";" p "${c}")
  list(GET p 0 v)
  list(GET p 1 msg)
  execute_process(COMMAND ${ULYSIM} ${RUN} --mem-headroom ${v} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "--mem-headroom")
    message(FATAL_ERROR "--mem-headroom ${v}: exit ${rc}, ${err} (want 2 and '${msg}')")
  endif()
  string(FIND "${err}" "${msg}" at)
  if(at LESS 0)
    message(FATAL_ERROR "--mem-headroom ${v}: ${err} (want '${msg}')")
  endif()
endforeach()
message(STATUS "headroom: default ${head0}, 10 GiB -> usable ${usable}; fits at ${fit_gib} GiB, not at ${nofit_gib} GiB")
