# script_run.cmake - run(<what> <command...>) for the -P test scripts (consumer_test.cmake,
# debian_test.cmake): runs the command, fails the test with its output when it exits nonzero,
# and leaves its standard output in `last_output`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " shown)
    message(FATAL_ERROR "${what} failed (${status}): ${shown}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
