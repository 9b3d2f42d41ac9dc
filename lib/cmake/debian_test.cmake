# The Debian package test (ctest debian_package): `cpack -G DEB` in BUILD_DIR, checks the .deb's
# name, fields and contents, unpacks it into a scratch root (dpkg -x, no root rights needed), then
# builds and runs the CMake consumers against <root>/usr (lib/cmake/consumer with every component,
# lib/cmake/consumer_cu with HAS_CUDA), runs the installed tools, and imports the installed Python
# package, which must find the installed libcudapool_torch.so by itself (not in sanitizer builds).
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DSOURCE_DIR=... -DCPACK=... -DPACKAGE_FILE=...
#         -DCXX_COMPILER=... -DCXX_FLAGS=... -DBUILD_TYPE=... -DHAS_CUDA=ON|OFF
#         [-DCUDA_COMPILER=... -DCUDA_ARCHITECTURES=...] -P debian_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/script_run.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
run("cpack -G DEB" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/out)
set(deb ${WORK_DIR}/out/${PACKAGE_FILE})
if(NOT EXISTS ${deb})
  file(GLOB made ${WORK_DIR}/out/*.deb)
  message(FATAL_ERROR "expected ${PACKAGE_FILE}, cpack made: ${made}")
endif()

run("dpkg-deb --field" dpkg-deb --field ${deb} Package Version Architecture Depends)
message(STATUS "${last_output}")
foreach(field "Package: libcudapool-dev" "Depends: .*libtbb-dev" "Depends: .*libstdc\\+\\+6")
  if(NOT last_output MATCHES "${field}")
    message(FATAL_ERROR "the package's fields lack '${field}':\n${last_output}")
  endif()
endforeach()

run("dpkg-deb --contents" dpkg-deb --contents ${deb})
set(expected
  ./usr/include/cudapool/cudapool.hpp ./usr/include/cudapool/backend.hpp
  ./usr/include/cudapool/tls_pool.hpp ./usr/include/cudapool/registry.hpp
  ./usr/include/cudapool/cudapool_torch.h ./usr/include/cudapool/detail/core/basic_pool.hpp
  ./usr/lib/libcudapool_core.a ./usr/lib/libcudapool_registry.a ./usr/lib/libcudapool_torch.so
  ./usr/lib/cmake/cudapool/cudapool-config.cmake ./usr/bin/stress ./usr/bin/bench
  ./usr/lib/python3/dist-packages/cudapool/torch.py)
foreach(path IN LISTS expected)
  string(REPLACE "+" "\\+" pattern "${path}")
  if(NOT last_output MATCHES " ${pattern}\n")
    message(FATAL_ERROR "${PACKAGE_FILE} lacks ${path}:\n${last_output}")
  endif()
endforeach()
if(last_output MATCHES "core/json\\.hpp")
  message(FATAL_ERROR "${PACKAGE_FILE} holds the internal core/json.hpp")
endif()
# One prefix: the internals under include/cudapool/detail/, not in the old layout's directories.
if(last_output MATCHES "/usr/include/cudapool/(core|mutex|lockfree|tls|stream|cudapool)/")
  message(FATAL_ERROR "${PACKAGE_FILE} holds headers in the old layout (include/cudapool/${CMAKE_MATCH_1}/)")
endif()

set(root ${WORK_DIR}/root)
run("dpkg -x" dpkg -x ${deb} ${root})

set(consumer_args -DPREFIX=${root}/usr -DCXX_COMPILER=${CXX_COMPILER} "-DCXX_FLAGS=${CXX_FLAGS}"
    -DBUILD_TYPE=${BUILD_TYPE})
run("the consumer of every component" ${CMAKE_COMMAND} ${consumer_args} -DCOMPONENTS=core,mutex,lockfree,tls,stream,registry,adapters
    -DWORK_DIR=${WORK_DIR}/consumer -DCONSUMER_DIR=${SOURCE_DIR}/lib/cmake/consumer
    -P ${SOURCE_DIR}/lib/cmake/consumer_test.cmake)
message(STATUS "${last_output}")
if(HAS_CUDA)
  run("the .cu consumer" ${CMAKE_COMMAND} ${consumer_args} -DCUDA_COMPILER=${CUDA_COMPILER}
      "-DCUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}" -DWORK_DIR=${WORK_DIR}/consumer_cu
      -DCONSUMER_DIR=${SOURCE_DIR}/lib/cmake/consumer_cu -P ${SOURCE_DIR}/lib/cmake/consumer_test.cmake)
  message(STATUS "${last_output}")
endif()

run("stress --help" ${root}/usr/bin/stress --help)
run("bench --help" ${root}/usr/bin/bench --help)

# An instrumented libcudapool_torch.so cannot be loaded into an uninstrumented python3.
if(CXX_FLAGS MATCHES "-fsanitize")
  message(STATUS "the installed Python package: not tried in a sanitizer build")
  file(REMOVE_RECURSE ${WORK_DIR})
  return()
endif()
find_program(python NAMES python3 REQUIRED)
file(WRITE ${WORK_DIR}/check.py [[
import cudapool._library
import cudapool.torch
print(cudapool._library.find())
print(cudapool.torch.memory_stats()["reserved_bytes.all.current"])
]])
run("the installed Python package" ${CMAKE_COMMAND} -E env --unset=CUDAPOOL_TORCH_LIB CUDAPOOL_BACKEND=sim
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=${root}/usr/lib/python3/dist-packages ${python} ${WORK_DIR}/check.py)
if(NOT last_output STREQUAL "${root}/usr/lib/libcudapool_torch.so\n0\n")
  message(FATAL_ERROR "the installed package must find the installed library; it printed:\n${last_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
