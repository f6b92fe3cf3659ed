# sim.validate.usage: bad usage and the wrong kind of trace exit 2 with one
# line on stderr, nothing on stdout (the options are checked before the work).
function(expect rc_want regex)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL rc_want OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "ulysim ${ARGN}: exit ${rc} (want ${rc_want}), stderr: ${err} (want /${regex}/)")
  endif()
  if(rc_want EQUAL 2)
    string(REGEX MATCHALL "\n" nl "${err}")
    list(LENGTH nl n_lines)
    if(NOT n_lines EQUAL 1 OR NOT err MATCHES "\n$" OR NOT out STREQUAL "")
      message(FATAL_ERROR "ulysim ${ARGN}: want one line on stderr and nothing on stdout, got ${n_lines} lines:\n"
        "${err}--- stdout ---\n${out}")
    endif()
  endif()
  message(STATUS "ok: ulysim ${ARGN}: ${err}")
endfunction()
expect(2 "no trace given" validate)
expect(2 "unknown option --bogus" validate --bogus x.trace)
expect(2 "--max-error 'x': must be" validate --max-error x x.trace)
# limits are decimal fractions: hex (strtod's 0x10 = 16) is refused, as sizes refuse it
expect(2 "--max-error '0x10': must be a fraction in 0[.][.]100" validate --max-error 0x10 x.trace)
expect(2 "--max-run-error 'inf': must be a fraction" validate --max-run-error inf x.trace)
# an agreement is a fraction of the pairs: above 1 no run could pass
expect(2 "--min-agreement '2': must be a fraction in 0[.][.]1 " validate --min-agreement 2 x.trace)
expect(2 "--min-agreement '-0.1': must be a fraction in 0[.][.]1 " validate --min-agreement -0.1 x.trace)
expect(2 "--max-error needs a value" validate x.trace --max-error)
expect(2 "nonexistent.trace: cannot open" validate ${OUT}/nonexistent.trace)
expect(2 "-o FILE is required" calibrate x.trace)
# --name is the profile's name: 1..47 characters of [A-Za-z0-9._+-], refused before the fit, never cut
# (an empty --name: sim.cli.bad.calibrate_name_empty, as ARGN drops empty arguments)
string(REPEAT "x" 100 long_name)
expect(2 "--name 'x+[.][.][.]': 100 characters, too long [(]valid: 1[.][.]47 characters" calibrate x.trace
  -o ${OUT}/n.json --name ${long_name})
expect(2 "--name 'my profile': ' ' at 3 not allowed" calibrate x.trace -o ${OUT}/n.json --name "my profile")
string(REPEAT "x" 47 name_47)
expect(2 "x.trace: cannot open" calibrate x.trace -o ${OUT}/n.json --name ${name_47})
# a missing action: one line naming the actions, the usage is --help's
expect(2 "ulysim trace: which action[?] [(]valid: export, check; see ulysim trace --help[)]" trace)
expect(2 "unknown action 'bogus' [(]valid: export, check" trace bogus)
expect(2 "usage: ulysim trace export" trace export)
if(EXISTS ${MB})
  get_filename_component(mb_name ${MB} NAME)
  expect(2 "${mb_name}:1: a microbench trace" validate ${MB})
  expect(2 "${mb_name}:1: a microbench trace has no plan" trace export ${MB} -o ${OUT}/x.json)
  # one run given twice, by two names, would count twice in the medians
  get_filename_component(mb_dir ${MB} DIRECTORY)
  expect(2 "are the same file [(]valid: each run once[)]" validate ${MB} ${mb_dir}/./${mb_name})
  expect(2 "are the same file [(]valid: each run once[)]" calibrate ${MB} ${mb_dir}/./${mb_name} -o ${OUT}/twice.json)
  # a micro-benchmark point twice in one trace: refused by the reader, naming both lines
  file(STRINGS ${MB} mb_lines)
  list(GET mb_lines 0 first)
  list(GET mb_lines 1 second)
  list(SUBLIST mb_lines 1 -1 rest)
  string(JOIN "\n" rest_text ${rest})
  file(WRITE ${OUT}/point-twice.trace "${first}\n${second}\n${rest_text}\n")
  expect(2 "point-twice.trace:3: microbench point [(].*[)] appears twice [(]first at line 2[)]"
    calibrate ${OUT}/point-twice.trace -o ${OUT}/twice.json)
  # a point's bytes_sent against its size: the first point (an alltoall over p ranks sends (p-1)/p of
  # size_bytes) claims a million times that; calibrate fitted a bandwidth to it and then refused
  # its own profile
  string(REGEX MATCH "\"bytes_sent\":([0-9]+)" bs "${second}")
  set(sent ${CMAKE_MATCH_1})
  string(REPLACE "\"bytes_sent\":${sent}," "\"bytes_sent\":${sent}000000," second_big "${second}")
  file(WRITE ${OUT}/bytes-off.trace "${first}\n${second_big}\n${rest_text}\n")
  expect(2 "bytes-off.trace:2: microbench \"bytes_sent\" = ${sent}000000 for alltoall of [0-9]+ bytes over [0-9]+ ranks: want ${sent} "
    calibrate ${OUT}/bytes-off.trace -o ${OUT}/off.json)
  # times a million times shorter: read (the bytes agree), but the fitted link is beyond what a
  # profile holds: exit 1 naming the field, nothing written
  set(fast_lines "")
  foreach(l ${rest})
    if(l MATCHES "\"type\":\"microbench\"")
      string(REGEX REPLACE "\"time_s\":{[^}]*}" "\"time_s\":{\"median\":1e-12,\"min\":1e-12,\"max\":1e-12}" l "${l}")
    endif()
    string(APPEND fast_lines "${l}\n")
  endforeach()
  file(WRITE ${OUT}/too-fast.trace "${first}\n${fast_lines}")
  file(REMOVE ${OUT}/fast.json)
  expect(1 "nothing written to .*fast[.]json: the fitted profile: field \"intra[.]bw_GBps_per_dir\" = [0-9.e+]+: must be"
    calibrate ${OUT}/too-fast.trace -o ${OUT}/fast.json)
  if(EXISTS ${OUT}/fast.json)
    message(FATAL_ERROR "calibrate wrote ${OUT}/fast.json from a fit it refused")
  endif()
endif()
