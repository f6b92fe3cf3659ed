# The ulysim executable (included by sim/CMakeLists.txt). MPI stays behind
# par_mpi.c / par_serial.c: exactly one of them is compiled in.
set(ULYSIM_CLI_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/main.c
  ${CMAKE_CURRENT_SOURCE_DIR}/args.c
  ${CMAKE_CURRENT_SOURCE_DIR}/args_msg.c
  ${CMAKE_CURRENT_SOURCE_DIR}/args_alias.c
  ${CMAKE_CURRENT_SOURCE_DIR}/args_opt.c
  ${CMAKE_CURRENT_SOURCE_DIR}/context.c
  ${CMAKE_CURRENT_SOURCE_DIR}/output.c
  ${CMAKE_CURRENT_SOURCE_DIR}/cmd_plan.c
  ${CMAKE_CURRENT_SOURCE_DIR}/cmd_maxseq.c
  ${CMAKE_CURRENT_SOURCE_DIR}/cmd_mingpus.c
  ${CMAKE_CURRENT_SOURCE_DIR}/cmd_sweep.c
  ${CMAKE_CURRENT_SOURCE_DIR}/cmd_presets.c
  ${CMAKE_CURRENT_SOURCE_DIR}/commands.c)
# Subcommands of the registry in commands.c: every other cmd_*.c.
# Their helpers: trace_*.c (trace reading and writing), plot_*.c (figures),
# repro_*.c (the parts of reproduce), calib_*.c (calibrate's fits),
# validate_*.c (validate --runs, the ranking of harness runs) and timeline*.c
# (plan --timeline).
file(GLOB ULYSIM_CMD_EXTRA CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmd_*.c
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_*.c ${CMAKE_CURRENT_SOURCE_DIR}/plot_*.c
  ${CMAKE_CURRENT_SOURCE_DIR}/timeline*.c
  ${CMAKE_CURRENT_SOURCE_DIR}/repro_*.c ${CMAKE_CURRENT_SOURCE_DIR}/calib_*.c
  ${CMAKE_CURRENT_SOURCE_DIR}/validate_*.c)
list(APPEND ULYSIM_CLI_SOURCES ${ULYSIM_CMD_EXTRA})
list(REMOVE_DUPLICATES ULYSIM_CLI_SOURCES)
if(MPI_C_FOUND)
  list(APPEND ULYSIM_CLI_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/par_mpi.c)
else()
  list(APPEND ULYSIM_CLI_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/par_serial.c)
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
target_include_directories(ulysim PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(ulysim PRIVATE ulyformats libulysim PkgConfig::CJSON GSL::gsl m)
if(MPI_C_FOUND)
  target_link_libraries(ulysim PRIVATE MPI::MPI_C)
  set(ULYSIM_CLI_MPI ON CACHE INTERNAL "ulysim is built with MPI")
else()
  set(ULYSIM_CLI_MPI OFF CACHE INTERNAL "ulysim is built with MPI")
endif()
install(TARGETS ulysim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
