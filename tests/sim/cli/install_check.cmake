# The installed ulysim finds its presets without the source tree.
#  MODE=install:   cmake --install BUILD into WORK/prefix; run the installed
#                  ulysim from another directory, ULYSIM_PRESETS unset.
#  MODE=relocated: copy SRC without build outputs, kernels, harness, bench and
#                  tests to WORK/src, build and install it, delete
#                  WORK/src, and run the installed ulysim: sim_preset_dir must
#                  fall back to the installed presets.
# -DMODE= -DBUILD= -DSRC= -DWORK= [-DGENERATOR=]
unset(ENV{ULYSIM_PRESETS})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)

if(MODE STREQUAL "install")
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
  message(FATAL_ERROR "MODE must be install or relocated")
endif()

find_program(installed ulysim PATHS ${prefix}/bin NO_DEFAULT_PATH)
if(NOT installed)
  message(FATAL_ERROR "no ulysim under ${prefix}/bin")
endif()
file(GLOB presets ${prefix}/share/ulysim/presets/models/*.json)
list(LENGTH presets n)
if(n LESS 9)
  message(FATAL_ERROR "presets not installed under ${prefix}/share/ulysim/presets (found ${n} models)")
endif()
execute_process(COMMAND ${installed} presets WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "llama3-8b" OR NOT out MATCHES "dgx-h100")
  message(FATAL_ERROR "installed `ulysim presets` failed (${rc}): ${err}${out}")
endif()
if(MODE STREQUAL "relocated" AND NOT out MATCHES "${prefix}/share/ulysim/presets")
  message(FATAL_ERROR "installed ulysim does not read the installed presets: ${out}")
endif()
execute_process(COMMAND ${installed} --gpus 64 --seq 1M WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "recommended:")
  message(FATAL_ERROR "installed `ulysim --gpus 64 --seq 1M` failed (${rc}): ${err}")
endif()
message(STATUS "installed ulysim (${MODE}) runs and finds its presets")
