# The CMake package tests (ctest cmake_package_consumer_*): installs the build in BUILD_DIR into a
# temporary prefix (or uses PREFIX, an install made otherwise, e.g. the unpacked .deb), then
# configures, builds and runs the consumer project in CONSUMER_DIR against that prefix only, with
# the build's compiler and flags (a TSan build's consumer must be instrumented too). COMPONENTS is
# what lib/cmake/consumer asks for and links (separated by commas). With CHECK_MISSING, a request for a component that
# does not exist must fail to configure.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -DCXX_COMPILER=... -DCXX_FLAGS=...
#         -DBUILD_TYPE=... [-DCOMPONENTS=a,b] [-DPREFIX=...] [-DCUDA_COMPILER=... -DCUDA_ARCHITECTURES=...]
#         [-DCHECK_MISSING=ON] [-DCONFIG=...] -P consumer_test.cmake
foreach(var WORK_DIR CONSUMER_DIR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: set -D${var}=...")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/script_run.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
if(NOT PREFIX)
  if(NOT DEFINED BUILD_DIR)
    message(FATAL_ERROR "consumer_test.cmake: set -DBUILD_DIR=... or -DPREFIX=...")
  endif()
  set(PREFIX ${WORK_DIR}/prefix)
  run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} ${config_args})
endif()

set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -DCMAKE_PREFIX_PATH=${PREFIX}
              -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(COMPONENTS)
  # An initial cache file: a list would not survive being one argument of the commands here.
  string(REPLACE "," ";" components "${COMPONENTS}")
  file(WRITE ${WORK_DIR}/components.cmake "set(CUDAPOOL_COMPONENTS \"${components}\" CACHE STRING \"\")\n")
  list(APPEND configure -C ${WORK_DIR}/components.cmake)
endif()
if(CUDA_COMPILER)
  list(APPEND configure -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
endif()
get_filename_component(consumer_name ${CONSUMER_DIR} NAME)
run("configure ${consumer_name} (${COMPONENTS})" ${configure} -B ${WORK_DIR}/build)
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build ${config_args} -j 2)
find_program(consumer cudapool_consumer PATHS ${WORK_DIR}/build ${WORK_DIR}/build/${CONFIG} NO_DEFAULT_PATH REQUIRED)
run("run the consumer" ${consumer})
message(STATUS "${last_output}")
foreach(component IN LISTS components)
  if(NOT last_output MATCHES "consumer: ok \\([a-z ]*${component}[ )]")
    message(FATAL_ERROR "the consumer did not exercise component ${component}")
  endif()
endforeach()

if(CHECK_MISSING)
  execute_process(COMMAND ${configure} -B ${WORK_DIR}/build_bad_component -DCUDAPOOL_EXTRA_COMPONENTS=no_such_component
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(status EQUAL 0 OR NOT "${out}${err}" MATCHES "no component 'no_such_component'")
    message(FATAL_ERROR "a missing component must fail find_package with a message naming it "
                        "(status ${status}):\n${out}\n${err}")
  endif()
  message(STATUS "a missing component is refused: ok")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
