# libulysim as a user gets it: install the build into WORK, then compile and
# run a program against the installed header and library through pkg-config.
# -DBUILD= -DWORK= -DCC= -DSRC= [-DEXTRA=flags, e.g. the sanitizers the library was built with]
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${err}")
endif()
set(ENV{PKG_CONFIG_PATH} ${WORK}/prefix/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs --static ulysim
  RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config ulysim failed: ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CC} ${SRC} ${flags} ${EXTRA} -o ${WORK}/user RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling against the installed libulysim failed: ${err}")
endif()
execute_process(COMMAND ${WORK}/user RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^ok 1048576 usp")
  message(FATAL_ERROR "the program built against the installed library printed '${out}' (rc ${rc})")
endif()
