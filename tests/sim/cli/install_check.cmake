# The installed ulysim finds its presets without the source tree.
#  MODE=install:   cmake --install BUILD into WORK/prefix; run the installed
#                  ulysim from another directory, ULYSIM_PRESETS unset.
#  MODE=relocated: copy SRC without build outputs, kernels, harness, bench and
#                  tests to WORK/src, build and install it, delete
#                  WORK/src, and run the installed ulysim: preset_dir must
#                  fall back to the installed presets.
#  MODE=copied:    cmake --install BUILD into WORK/prefix, copy the prefix to
#                  WORK/elsewhere and delete the original, then run the copy
#                  from another directory without ULYSIM_*: it must read the
#                  presets and gnuplot scripts beside its own executable (the
#                  copy's, checked by the directory `presets` prints and by a
#                  marker the copy's gnuplot script alone writes), not the
#                  configure-time prefix nor the source tree.
# -DMODE= -DBUILD= -DSRC= -DWORK= [-DGENERATOR=]
unset(ENV{ULYSIM_PRESETS})
unset(ENV{ULYSIM_PLOTS})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)

if(MODE STREQUAL "install" OR MODE STREQUAL "copied")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed: ${err}")
  endif()
elseif(MODE STREQUAL "relocated")
  set(src ${WORK}/src)
  file(MAKE_DIRECTORY ${src})
  # the tree without build outputs and without the optional parts the command
  # does not need (kernels, harness, bench and tests are added only if present)
  file(GLOB entries RELATIVE ${SRC} ${SRC}/*)
  foreach(e IN LISTS entries)
    if(e MATCHES "^(build.*|out|\\..*|tests|bench|kernels|harness)$")
      continue()
    endif()
    # any build tree, whatever its name (the one running this test included)
    string(FIND "${BUILD}/" "${SRC}/${e}/" at)
    if(at EQUAL 0 OR EXISTS ${SRC}/${e}/CMakeCache.txt)
      continue()
    endif()
    file(COPY ${SRC}/${e} DESTINATION ${src})
  endforeach()
  set(gen)
  if(GENERATOR)
    set(gen -G "${GENERATOR}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${src} -B ${WORK}/build ${gen} -DBUILD_TESTING=OFF
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=${prefix}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure failed: ${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build -j 2 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "build failed: ${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK}/build RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install failed: ${err}")
  endif()
  file(REMOVE_RECURSE ${src} ${WORK}/build)
else()
  message(FATAL_ERROR "MODE must be install, relocated or copied")
endif()
if(MODE STREQUAL "copied")
  file(MAKE_DIRECTORY ${WORK}/elsewhere)
  file(COPY ${prefix} DESTINATION ${WORK}/elsewhere)
  file(REMOVE_RECURSE ${prefix})
  set(prefix ${WORK}/elsewhere/prefix)
  get_filename_component(prefix ${prefix} REALPATH)
  # a marker only the copied script can write: the figure must come from it
  file(APPEND ${prefix}/share/ulysim/plots/throughput.gp
    "\nset print '${WORK}/marker.txt'\nprint 'copied script'\n")
endif()
file(MAKE_DIRECTORY ${WORK}/cwd)

find_program(installed ulysim PATHS ${prefix}/bin NO_DEFAULT_PATH)
if(NOT installed)
  message(FATAL_ERROR "no ulysim under ${prefix}/bin")
endif()
if(NOT EXISTS ${prefix}/share/man/man1/ulysim.1)
  message(FATAL_ERROR "the man page is not installed under ${prefix}/share/man/man1")
endif()
file(GLOB presets ${prefix}/share/ulysim/presets/models/*.json)
list(LENGTH presets n)
if(n LESS 9)
  message(FATAL_ERROR "presets not installed under ${prefix}/share/ulysim/presets (found ${n} models)")
endif()
execute_process(COMMAND ${installed} presets WORKING_DIRECTORY ${WORK}/cwd
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "llama3-8b" OR NOT out MATCHES "dgx-h100")
  message(FATAL_ERROR "installed `ulysim presets` failed (${rc}): ${err}${out}")
endif()
if(NOT MODE STREQUAL "install" AND NOT out MATCHES "${prefix}/share/ulysim/presets")
  message(FATAL_ERROR "installed ulysim does not read the installed presets: ${out}")
endif()
execute_process(COMMAND ${installed} --gpus 64 --seq 1M WORKING_DIRECTORY ${WORK}/cwd
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "recommended:")
  message(FATAL_ERROR "installed `ulysim --gpus 64 --seq 1M` failed (${rc}): ${err}")
endif()
find_program(gnuplot gnuplot)
if(MODE STREQUAL "copied" AND NOT gnuplot)
  message(STATUS "gnuplot not found: the copied prefix's figure is not drawn")
elseif(MODE STREQUAL "copied")
  execute_process(COMMAND ${installed} plot throughput -o ${WORK}/cwd/fig.png WORKING_DIRECTORY ${WORK}/cwd
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/cwd/fig.png)
    message(FATAL_ERROR "copied ulysim cannot draw a figure (${rc}): ${err}${out}")
  endif()
  file(READ ${WORK}/cwd/fig.png magic LIMIT 4 HEX)
  if(NOT magic STREQUAL "89504e47")
    message(FATAL_ERROR "fig.png is not a PNG (starts ${magic})")
  endif()
  if(NOT EXISTS ${WORK}/marker.txt)
    message(FATAL_ERROR "the figure was not drawn by the copied prefix's gnuplot script")
  endif()
endif()
message(STATUS "installed ulysim (${MODE}) runs and finds its presets")
