# timeout_scale.cmake: included by the test scripts that run a program with
# execute_process(... TIMEOUT): sets uly_timeout_scale from the environment
# tests/CMakeLists.txt gives every test (5 in a sanitizer build, else 1), so
# an inner timeout grows with the test's own.
set(uly_timeout_scale 1)
if("$ENV{ULY_TEST_TIMEOUT_SCALE}" MATCHES "^[1-9][0-9]*$")
  set(uly_timeout_scale $ENV{ULY_TEST_TIMEOUT_SCALE})
endif()
# uly_timeout(VAR SECONDS): VAR = SECONDS scaled.
function(uly_timeout var seconds)
  math(EXPR s "${seconds} * ${uly_timeout_scale}")
  set(${var} ${s} PARENT_SCOPE)
endfunction()
