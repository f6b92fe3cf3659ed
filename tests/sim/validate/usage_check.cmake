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
  # -o naming the --base profile: refused before the fit is printed (nothing on stdout)
  execute_process(COMMAND ${EXE} presets show cpu-local OUTPUT_FILE ${OUT}/base.json)
  expect(2 "base.json: is an input of this run" calibrate ${MB} --base ${OUT}/base.json -o ${OUT}/base.json)
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
  # every time at the clock floor (1e-10 s, formats/trace_read.h): read (the bytes agree), but the
  # fitted link is beyond what a profile holds: exit 1 naming the field, nothing written
  # (and below the floor, 1e-12 s or the denormal 1e-322 s that made the fit's weights 1/t^2
  # infinite and printed "-nan": refused by the reader, naming the value and the range)
  foreach(t 1e-10 1e-12 1e-322)
    set(fast_lines "")
    foreach(l ${rest})
      if(l MATCHES "\"type\":\"microbench\"")
        string(REGEX REPLACE "\"time_s\":{[^}]*}" "\"time_s\":{\"median\":${t},\"min\":${t},\"max\":${t}}" l "${l}")
      endif()
      string(APPEND fast_lines "${l}\n")
    endforeach()
    file(WRITE ${OUT}/too-fast-${t}.trace "${first}\n${fast_lines}")
  endforeach()
  file(REMOVE ${OUT}/fast.json)
  expect(1 "nothing written to .*fast[.]json: the fitted profile: field \"intra[.]bw_GBps_per_dir\" = [0-9.e+]+: must be"
    calibrate ${OUT}/too-fast-1e-10.trace -o ${OUT}/fast.json)
  if(EXISTS ${OUT}/fast.json)
    message(FATAL_ERROR "calibrate wrote ${OUT}/fast.json from a fit it refused")
  endif()
  expect(2 "too-fast-1e-12.trace:2: \"time_s[.]median\" = 1e-12 s: above 0 but below any clock's resolution, not a measured time [(]valid: 0, or seconds in \\[1e-10, 1e[+]06\\][)]"
    calibrate ${OUT}/too-fast-1e-12.trace -o ${OUT}/fast.json)
  expect(2 "too-fast-1e-322.trace:2: \"time_s[.]median\" = 9.88131e-323 s: above 0 but below any clock's resolution"
    calibrate ${OUT}/too-fast-1e-322.trace -o ${OUT}/fast.json)
  # the overlap line of a hop of no bytes (ulyharness --mb-min 3 wrote one): it measured no
  # overlap, and calibrate wrote it into the profile
  set(zero_lines "")
  set(n_overlap 0)
  foreach(l ${rest})
    if(l MATCHES "\"type\":\"overlap\"")
      string(REGEX REPLACE "\"size_bytes\":[0-9]+" "\"size_bytes\":0" l "${l}")
      math(EXPR n_overlap "${n_overlap} + 1")
    endif()
    string(APPEND zero_lines "${l}\n")
  endforeach()
  if(n_overlap EQUAL 1)
    file(WRITE ${OUT}/overlap-0.trace "${first}\n${zero_lines}")
    expect(2 "overlap-0.trace:[0-9]+: overlap line \"size_bytes\" must be an integer in \\[1, "
      calibrate ${OUT}/overlap-0.trace -o ${OUT}/fast.json)
  endif()
  # a run whose summary says it failed (a FILE.failed): its times fit nothing; trace check
  # reads it and says so, calibrate refuses it naming the file and the summary line
  file(READ ${MB} mb_text)
  string(REGEX MATCHALL "\n" mb_nl "${mb_text}")
  list(LENGTH mb_nl n_mb_lines)
  string(REPLACE "{\"type\":\"summary\",\"ok\":true}" "{\"type\":\"summary\",\"ok\":false}" mb_failed "${mb_text}")
  file(WRITE ${OUT}/mb-failed.trace "${mb_failed}")
  expect(2 "mb-failed.trace:${n_mb_lines}: the summary says the run FAILED its checks [(]\"ok\": false[)]: the times of a wrong run are no evidence for calibration"
    calibrate ${OUT}/mb-failed.trace -o ${OUT}/fast.json)
  execute_process(COMMAND ${EXE} trace check ${OUT}/mb-failed.trace RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "trace check of a failed run's trace: exit ${rc} (want 0: it is a well-formed trace)")
  endif()
endif()
# the same for a plan trace given to validate and to calibrate --kernels
if(EXISTS ${TRACE} AND EXISTS ${MB})
  file(READ ${TRACE} t_text)
  string(REGEX MATCHALL "\n" t_nl "${t_text}")
  list(LENGTH t_nl n_t_lines)
  string(REPLACE "\"ok\":true,\"bytes_ok\":true,\"check\":{\"ok\":true" "\"ok\":false,\"bytes_ok\":true,\"check\":{\"ok\":false"
    t_failed "${t_text}")
  file(WRITE ${OUT}/plan.trace.failed "${t_failed}")
  expect(2 "plan.trace.failed:${n_t_lines}: the summary says the run FAILED its checks [(]its result differs from the float64 reference[)]: the times of a wrong run are no evidence for validation"
    validate ${OUT}/plan.trace.failed --max-error none)
  expect(2 "--kernels .*plan.trace.failed:${n_t_lines}: the summary says the run FAILED its checks [(]its result differs from the float64 reference[)]: the times of a wrong run are no evidence for calibration"
    calibrate ${MB} --kernels ${OUT}/plan.trace.failed -o ${OUT}/fast.json)
endif()

# --- options of validate, calibrate and trace (TRACE: a plan trace, MB: a micro-benchmark).
# Bad usage, one case a line: "name|regex of the one stderr line|arguments" (%T% the plan
# trace, %MB% the micro-benchmark, %OUT% the output directory); exit 2, nothing on stdout.
if(EXISTS ${TRACE} AND EXISTS ${MB})
  set(BAD_OPTIONS
    # a single-valued option given twice: refused naming both values, not the last taken in silence
    "validate_max_error_twice|--max-error given twice [(]'5', then '50'|validate %T% --max-error 5 --max-error 50"
    "validate_max_run_error_twice|--max-run-error given twice [(]'0.1', then '0.2'|validate %T% --max-run-error=0.1 --max-run-error 0.2"
    "validate_min_agreement_twice|--min-agreement given twice|validate %T% --min-agreement 0.5 --min-agreement 0.9"
    "validate_format_twice|--format given twice [(]'json', then 'table'|validate %T% --format json --format=table"
    "validate_runs_format_twice|--format given twice [(]'csv', then 'json'|validate --runs %OUT%/r.csv --format csv --format json"
    "validate_runs_max_err_twice|--max-run-error given twice [(]'0.05', then '10%'|validate --runs=%OUT%/r.csv --max-run-error=0.05 --max-run-error 10%"
    # one convention for limits in every mode: fractions, or percent with its sign; the percent without a sign of before is refused
    "validate_runs_old_pct|--max-err '10': validate's limits are fractions in every mode now [(]valid: --max-run-error 0.1, or --max-run-error 10%[)]|validate --runs %OUT%/r.csv --max-err 10"
    "validate_pct_sign_only|--max-error '%': must be a fraction|validate %T% --max-error %"
    "export_cluster_twice|--cluster given twice [(]'cpu-local', then 'dgx-h100'|trace export %T% -o %OUT%/t.json --cluster cpu-local --cluster dgx-h100"
    "export_out_twice|-o given twice [(]'[^']+', then '[^']+'|trace export %T% -o %OUT%/a.json --output=%OUT%/b.json"
    "calibrate_out_twice|-o given twice|calibrate %MB% -o %OUT%/a.json -o %OUT%/b.json"
    "calibrate_base_twice|--base given twice [(]'cpu-local', then 'dgx-h100'|calibrate %MB% -o %OUT%/a.json --base=cpu-local --base dgx-h100"
    "calibrate_name_twice|--name given twice [(]'a', then 'b'|calibrate %MB% -o %OUT%/a.json --name a --name=b"
    # a switch given a value: refused naming it
    "validate_brief_value|--brief takes no value [(]got '1'|validate %T% --brief=1"
    "check_help_value|--help takes no value|trace check --help=1 %T%"
    # validate's three modes, one at a time: the message says so, not "unknown option" or "unknown command"
    "validate_runs_and_torch|--runs and --torch-trace cannot be combined|validate --runs %OUT%/r.csv --torch-trace %OUT%/t.json"
    "validate_trace_and_torch|'[^']+': a harness trace and --torch-trace cannot be combined|validate %T% --torch-trace %OUT%/t.json"
    "validate_torch_and_trace|'[^']+': a harness trace and --torch-trace cannot be combined|validate --torch-trace %OUT%/t.json --gpus 1 --causal %T%"
    "validate_trace_and_runs|'[^']+': a harness trace and --runs cannot be combined|validate %T% --runs %OUT%/r.csv"
    # --kernels with no trace after it would skip the compute fit in silence
    "calibrate_kernels_empty|--kernels needs a plan trace after it [(]got nothing|calibrate %MB% -o %OUT%/k.json --kernels"
    "calibrate_kernels_then_option|--kernels needs a plan trace after it [(]got the option '-o'|calibrate %MB% --kernels -o %OUT%/k.json"
    # trace check: every option before any file is read or any line printed
    "check_option_after_file|unknown option -o|trace check %T% -o %OUT%/te.json"
  )
  foreach(case IN LISTS BAD_OPTIONS)
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 1 regex)
    list(GET parts 2 args)
    string(REPLACE "%T%" "${TRACE}" args "${args}")
    string(REPLACE "%MB%" "${MB}" args "${args}")
    string(REPLACE "%OUT%" "${OUT}" args "${args}")
    string(REPLACE " " ";" args "${args}")
    expect(2 "${regex}" ${args})
  endforeach()
  foreach(f k.json a.json b.json)
    if(EXISTS ${OUT}/${f})
      message(FATAL_ERROR "bad usage wrote ${OUT}/${f}")
    endif()
  endforeach()

  # --opt=VALUE is --opt VALUE: the same output from both forms (and the value used: the name written)
  function(same_both what)
    cmake_parse_arguments(S "" "" "SPACED;EQUALS;FILES" ${ARGN})
    execute_process(COMMAND ${EXE} ${S_SPACED} RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
    execute_process(COMMAND ${EXE} ${S_EQUALS} RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2 ERROR_VARIABLE err2)
    # the same status, not bad usage (validate may exit 1: --min-agreement with no pairs to rank)
    if(NOT rc1 EQUAL rc2 OR rc1 EQUAL 2 OR NOT rc1 MATCHES "^[01]$")
      message(FATAL_ERROR "${what}: exit ${rc1} (${S_SPACED}: ${err1}) and ${rc2} (${S_EQUALS}: ${err2}), "
        "want the same, 0 or 1")
    endif()
    if(S_FILES)
      list(GET S_FILES 0 f1)
      list(GET S_FILES 1 f2)
      file(READ ${f1} out1)
      file(READ ${f2} out2)
    endif()
    if(NOT out1 STREQUAL out2)
      message(FATAL_ERROR "${what}: --opt=VALUE gave other output than --opt VALUE")
    endif()
    message(STATUS "ok: ${what}: --opt=VALUE as --opt VALUE")
  endfunction()
  same_both("validate"
    SPACED validate ${TRACE} --cluster cpu-local --max-error none --max-run-error none --min-agreement 0 --format json
    EQUALS validate ${TRACE} --cluster=cpu-local --max-error=none --max-run-error=none --min-agreement=0 --format=json)
  file(REMOVE ${OUT}/eq1.json ${OUT}/eq2.json)
  same_both("trace export"
    SPACED trace export ${TRACE} -o ${OUT}/eq1.json --cluster cpu-local
    EQUALS trace export ${TRACE} --output=${OUT}/eq2.json --cluster=cpu-local FILES ${OUT}/eq1.json ${OUT}/eq2.json)
  same_both("calibrate"
    SPACED calibrate ${MB} -o ${OUT}/eq1.json --base dgx-h100 --name eqname
    EQUALS calibrate ${MB} --output=${OUT}/eq2.json --base=dgx-h100 --name=eqname FILES ${OUT}/eq1.json ${OUT}/eq2.json)
  file(READ ${OUT}/eq2.json prof)
  if(NOT prof MATCHES "\"name\":[ \t]*\"eqname\"")
    message(FATAL_ERROR "calibrate --name=eqname: the profile is not named eqname")
  endif()

  # trace check: one line per file, every file (a missing one its own line on stderr); the
  # exit status the worst of them
  execute_process(COMMAND ${EXE} trace check ${OUT}/missing-1.trace ${TRACE} ${OUT}/missing-2.trace
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" nl_out "${out}")
  string(REGEX MATCHALL "\n" nl_err "${err}")
  list(LENGTH nl_out n_out)
  list(LENGTH nl_err n_err)
  if(NOT rc EQUAL 2 OR NOT n_out EQUAL 1 OR NOT out MATCHES ": ok: plan trace" OR NOT n_err EQUAL 2
     OR NOT err MATCHES "missing-1[.]trace: cannot open.*\nulysim trace check: .*missing-2[.]trace: cannot open")
    message(FATAL_ERROR "trace check of a missing, a good and a missing trace: exit ${rc} (want 2), stdout:\n"
      "${out}(want one ok line), stderr:\n${err}(want one line for each missing file)")
  endif()
  execute_process(COMMAND ${EXE} trace check ${TRACE} ${MB} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" nl_out "${out}")
  list(LENGTH nl_out n_out)
  if(NOT rc EQUAL 0 OR NOT n_out EQUAL 2 OR NOT err STREQUAL "")
    message(FATAL_ERROR "trace check of two good traces: exit ${rc}, stdout:\n${out}stderr:\n${err}")
  endif()
  message(STATUS "ok: trace check reports every file")
endif()
