# The ulysim executable (included by sim/CMakeLists.txt), one folder per axis:
#   driver/    main, the command line (args*.c), the resolved request
#              (context.c), the MPI split and gather (par_mpi.c / par_serial.c:
#              exactly one is compiled in) and the writers (output.c tables
#              and CSV, output_json.c JSON); --help is args_help.c
#   plan/      the planning commands: plan, max-seq, min-gpus, sweep, presets,
#              and plan --timeline
#   validate/  prediction against measurement: validate (harness traces, runs
#              files, torch.profiler traces) and calibrate
#   trace/     trace tools: trace export|check, runs from-megatron, and the
#              per-op join of prediction and measurement they share
#   figures/   plot and reproduce
# Headers are included by name: every folder is on the include path.
set(ULYSIM_CLI_DIRS driver plan validate trace figures)
set(ULYSIM_CLI_SOURCES)
foreach(dir ${ULYSIM_CLI_DIRS})
  file(GLOB dir_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.c)
  list(APPEND ULYSIM_CLI_SOURCES ${dir_sources})
endforeach()
list(FILTER ULYSIM_CLI_SOURCES EXCLUDE REGEX "/driver/par_(mpi|serial)\\.c$")
if(MPI_C_FOUND)
  list(APPEND ULYSIM_CLI_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/driver/par_mpi.c)
else()
  list(APPEND ULYSIM_CLI_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/driver/par_serial.c)
endif()

add_executable(ulysim ${ULYSIM_CLI_SOURCES})
# Where `ulysim plot` finds its gnuplot scripts (plots/*.gp).
target_compile_definitions(ulysim PRIVATE
  ULY_PLOT_DIR_SOURCE="${CMAKE_SOURCE_DIR}/plots"
  ULY_PLOT_DIR_INSTALLED="${CMAKE_INSTALL_FULL_DATADIR}/ulysim/plots"
  ULY_PUBLISHED_DIR_SOURCE="${CMAKE_SOURCE_DIR}/traces/published"
  ULY_PUBLISHED_DIR_INSTALLED="${CMAKE_INSTALL_FULL_DATADIR}/ulysim/published")
# The published tables `ulysim reproduce` reads as runs files.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/traces/published/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ulysim/published)
list(TRANSFORM ULYSIM_CLI_DIRS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ OUTPUT_VARIABLE ULYSIM_CLI_INCLUDE_DIRS)
target_include_directories(ulysim PRIVATE ${ULYSIM_CLI_INCLUDE_DIRS})
target_link_libraries(ulysim PRIVATE ulyformats libulysim PkgConfig::CJSON GSL::gsl m)
if(MPI_C_FOUND)
  target_link_libraries(ulysim PRIVATE MPI::MPI_C)
  set(ULYSIM_CLI_MPI ON CACHE INTERNAL "ulysim is built with MPI")
else()
  set(ULYSIM_CLI_MPI OFF CACHE INTERNAL "ulysim is built with MPI")
endif()
install(TARGETS ulysim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
