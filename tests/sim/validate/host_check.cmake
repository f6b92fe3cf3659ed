# sim.validate.host.CASE: which profile `ulysim validate` prices a harness
# trace with when no --cluster is given (the host profile `ulysim calibrate
# --host` writes in ULYSIM_CONFIG_DIR, found by the trace's CPU model,
# cores and ranks), that it says which, and that it warns when the trace's
# host is not the profile's. The configuration directory is a fresh one
# under OUT (never $HOME). The profiles are the recorded calibration
# (PROFILE, 2 ranks of the recording's AMD EPYC) with a "host" written in;
# the traces are a recorded run (TRACE) with its header's host rewritten.
#   found     a host profile named for the trace's host is used and named:
#             "priced on NAME (DIR/host-amd-epyc-2-np2.json)", "this host's
#             profile", no warning; its step equals --cluster PROFILE's
#   mismatch  --cluster of a profile measured on an Intel Xeon: one warning
#             naming both hosts, "ANOTHER CPU" in the report
#   cores     a host profile of the same CPU with 16 cores: warned
#   none      no host profile: a warning naming the file it looked for
#   slug      a trace of an "Intel(R) Xeon(R) Platinum 8480+" with 16 cores
#             looks for host-intel-xeon-platinum-8480-16-np2.json
#   blas      same host, another OpenBLAS kernel set: warned with the
#             OPENBLAS_CORETYPE to set
#   xdg       without ULYSIM_CONFIG_DIR: $XDG_CONFIG_HOME/ulysim
set(DIR ${OUT}/host-${CASE})
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/cfg)
file(READ ${PROFILE} prof)
file(READ ${TRACE} trace)
# the recorded run without the OpenBLAS kernel set its header names, so
# that the cases below see only what they vary (the blas case sets one)
string(REGEX REPLACE "\"blas_core\":\"[^\"]*\"," "" trace "${trace}")
set(RUN ${DIR}/run.trace)
file(WRITE ${RUN} "${trace}")

# a copy of the recorded profile with "host" written in (in place of the
# one `ulysim calibrate` wrote, where it wrote one)
function(profile_with path host_json)
  string(REGEX REPLACE "\n\t\"host\":\t{[^}]*}," "" p "${prof}")
  string(REGEX REPLACE "\n}[ \n]*$" ",\n\t\"host\": ${host_json}\n}\n" p "${p}")
  file(WRITE ${path} "${p}")
endfunction()

# a copy of the recorded trace whose header names another host
function(trace_with path cpu cores extra_sw)
  # the run's own host (hardware), not the host of the profile it embeds
  string(REPLACE "\"cpu_model\":\"AMD EPYC\",\"ranks\":" "\"cpu_model\":\"${cpu}\",\"ranks\":" t "${trace}")
  string(REPLACE "\"cores_online\":2," "\"cores_online\":${cores}," t "${t}")
  if(extra_sw)
    string(REPLACE "\"blas_threads\":" "${extra_sw}\"blas_threads\":" t "${t}")
  endif()
  file(WRITE ${path} "${t}")
endfunction()

# validate: out, err, rc into the caller
macro(run_validate)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV_CFG} ${EXE} validate ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 2)
    message(FATAL_ERROR "validate ${ARGN}: exit 2: ${err}")
  endif()
endmacro()
macro(want what text regex)
  if(NOT "${text}" MATCHES "${regex}")
    message(FATAL_ERROR "${CASE}: ${what} lacks /${regex}/:\n${text}")
  endif()
endmacro()
macro(want_no what text regex)
  if("${text}" MATCHES "${regex}")
    message(FATAL_ERROR "${CASE}: ${what} has /${regex}/:\n${text}")
  endif()
endmacro()
set(ENV_CFG ULYSIM_CONFIG_DIR=${DIR}/cfg)
set(AMD "{\"cpu_model\": \"AMD EPYC\", \"cores\": 2, \"ranks\": 2}")

if(CASE STREQUAL "found")
  profile_with(${DIR}/cfg/host-amd-epyc-2-np2.json "${AMD}")
  run_validate(${RUN})
  want(stdout "${out}" "priced on [^ ]+ [(]${DIR}/cfg/host-amd-epyc-2-np2[.]json[)]")
  want(stdout "${out}" "# host: [^\n]*this host's profile [(]ulysim calibrate --host[)][^\n]*the same CPU")
  want_no(stderr "${err}" "warning")
  string(REGEX MATCH "step [0-9.]+ ms predicted" step_host "${out}")
  run_validate(${RUN} --cluster ${PROFILE})
  string(REGEX MATCH "step [0-9.]+ ms predicted" step_given "${out}")
  if(NOT step_host OR NOT step_host STREQUAL step_given)
    message(FATAL_ERROR "found: the host profile priced '${step_host}', the same profile by --cluster '${step_given}'")
  endif()
elseif(CASE STREQUAL "mismatch")
  profile_with(${DIR}/intel.json "{\"cpu_model\": \"Intel(R) Xeon(R) Platinum 8480+\", \"cores\": 16, \"ranks\": 2}")
  run_validate(${RUN} --cluster ${DIR}/intel.json)
  want(stderr "${err}" "ulysim validate: warning: [^\n]*ran on AMD EPYC, 2 cores; [^\n]*intel[.]json was measured on Intel[(]R[)] Xeon[(]R[)] Platinum 8480[+], 16 cores: its rates are not this host's")
  string(REGEX MATCHALL "warning" n "${err}")
  list(LENGTH n nw)
  if(NOT nw EQUAL 1)
    message(FATAL_ERROR "mismatch: want one warning, got ${nw}:\n${err}")
  endif()
  want(stdout "${out}" "# host: vm [(]AMD EPYC[)]; the profile was calibrated on Intel[^\n]*ANOTHER CPU")
elseif(CASE STREQUAL "cores")
  profile_with(${DIR}/cfg/host-amd-epyc-2-np2.json "{\"cpu_model\": \"AMD EPYC\", \"cores\": 16}")
  run_validate(${RUN})
  want(stderr "${err}" "warning: [^\n]*ran on AMD EPYC, 2 cores; [^\n]*was measured on AMD EPYC, 16 cores")
  want(stdout "${out}" "the same CPU with another core count")
elseif(CASE STREQUAL "none")
  run_validate(${RUN})
  want(stderr "${err}" "warning: [^\n]*ran on AMD EPYC, 2 cores with 2 ranks, priced on the profile the trace embeds [(]cpu-local, [^\n]*no profile of its host at ${DIR}/cfg/host-amd-epyc-2-np2[.]json: ulysim calibrate --host")
  want(stdout "${out}" "priced on cpu-local [(]embedded[)]")
elseif(CASE STREQUAL "slug")
  trace_with(${DIR}/xeon.trace "Intel(R) Xeon(R) Platinum 8480+" 16 "")
  run_validate(${DIR}/xeon.trace)
  want(stderr "${err}" "ran on Intel[(]R[)] Xeon[(]R[)] Platinum 8480[+], 16 cores[^\n]*at ${DIR}/cfg/host-intel-xeon-platinum-8480-16-np2[.]json")
  # once written, it is the one used
  profile_with(${DIR}/cfg/host-intel-xeon-platinum-8480-16-np2.json
    "{\"cpu_model\": \"Intel(R) Xeon(R) Platinum 8480+\", \"cores\": 16, \"ranks\": 2}")
  run_validate(${DIR}/xeon.trace)
  want(stdout "${out}" "priced on [^ ]+ [(]${DIR}/cfg/host-intel-xeon-platinum-8480-16-np2[.]json[)]")
  want_no(stderr "${err}" "warning")
elseif(CASE STREQUAL "blas")
  profile_with(${DIR}/cfg/host-amd-epyc-2-np2.json
    "{\"cpu_model\": \"AMD EPYC\", \"cores\": 2, \"ranks\": 2, \"blas_core\": \"Haswell\"}")
  trace_with(${DIR}/zen.trace "AMD EPYC" 2 "\"blas_core\":\"Zen\",")
  run_validate(${DIR}/zen.trace)
  want(stderr "${err}" "warning: [^\n]*ran OpenBLAS's Zen kernels; [^\n]*was measured with Haswell [(]set OPENBLAS_CORETYPE=Haswell")
elseif(CASE STREQUAL "xdg")
  file(MAKE_DIRECTORY ${DIR}/xdg/ulysim)
  profile_with(${DIR}/xdg/ulysim/host-amd-epyc-2-np2.json "${AMD}")
  set(ENV_CFG --unset=ULYSIM_CONFIG_DIR XDG_CONFIG_HOME=${DIR}/xdg)
  run_validate(${RUN})
  want(stdout "${out}" "priced on [^ ]+ [(]${DIR}/xdg/ulysim/host-amd-epyc-2-np2[.]json[)]")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
message(STATUS "${CASE}: ok")
