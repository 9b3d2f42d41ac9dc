# The CMake package test (ctest cmake_package_consumer): installs the build in BUILD_DIR into a
# temporary prefix, then configures, builds and runs lib/cmake/consumer against that prefix only,
# with the build's compiler and flags (a TSan build's consumer must be instrumented too). A request
# for a component that does not exist must fail to configure.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -DCXX_COMPILER=... -DCXX_FLAGS=...
#         -DBUILD_TYPE=... [-DCONFIG=...] -P consumer_test.cmake
foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: set -D${var}=...")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " shown)
    message(FATAL_ERROR "${what} failed (${status}): ${shown}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${config_args})

set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -DCMAKE_PREFIX_PATH=${prefix}
              -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
run("configure the consumer" ${configure} -B ${WORK_DIR}/build)
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build ${config_args} -j 2)
find_program(consumer cudapool_consumer PATHS ${WORK_DIR}/build ${WORK_DIR}/build/${CONFIG} NO_DEFAULT_PATH REQUIRED)
run("run the consumer" ${consumer})
message(STATUS "${last_output}")

execute_process(COMMAND ${configure} -B ${WORK_DIR}/build_bad_component -DCUDAPOOL_EXTRA_COMPONENTS=no_such_component
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0 OR NOT "${out}${err}" MATCHES "no component 'no_such_component'")
  message(FATAL_ERROR "a missing component must fail find_package with a message naming it "
                      "(status ${status}):\n${out}\n${err}")
endif()
message(STATUS "a missing component is refused: ok")
file(REMOVE_RECURSE ${WORK_DIR})
