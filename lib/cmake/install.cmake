# The installable CMake package:
#   find_package(cudapool CONFIG REQUIRED COMPONENTS tls stream)
#   target_link_libraries(app PRIVATE cudapool::tls cudapool::stream)
# Components (one export file each, so that a consumer finds only what it uses needs):
#   core (always), mutex, lockfree, tls, stream (needs oneTBB), registry (all variants), adapters.
# Headers: the public ones (lib/include/cudapool/) go to <prefix>/include/cudapool/, the internal
# ones they include (lib/core/*.hpp) to <prefix>/include/cudapool/detail/core/, so consumers and
# the library's own code include the same names (<cudapool/tls_pool.hpp>, and inside it
# <cudapool/detail/core/basic_pool.hpp>); every exported target carries <prefix>/include. Besides the package:
# libcudapool_torch.so (<prefix>/lib), its Python package (<prefix>/lib/python3/dist-packages) and
# the stress and bench tools (<prefix>/bin); lib/cmake/package.cmake makes a .deb of all of it.
option(CUDAPOOL_INSTALL "Generate the install rules and the CMake package" ${cudapool_top_level})
if(NOT CUDAPOOL_INSTALL)
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(cudapool_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cudapool)
set(cudapool_components core ${CUDAPOOL_VARIANTS} registry adapters)

foreach(component IN LISTS cudapool_components)
  install(TARGETS cudapool_${component} EXPORT cudapool-${component}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT cudapool-${component} NAMESPACE cudapool:: DESTINATION ${cudapool_cmake_dir}
          FILE cudapool-${component}-targets.cmake)
endforeach()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/cudapool DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/core/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cudapool/detail/core
        FILES_MATCHING PATTERN "*.hpp"
        PATTERN "json.hpp" EXCLUDE   # nlohmann-json: needed to build only
        PATTERN "model" EXCLUDE)     # the Relacy model tests' headers

# The PyTorch allocator (not a CMake component: PyTorch loads it by path, python/ finds it in
# <prefix>/lib); its C header is <cudapool/cudapool_torch.h>.
if(TARGET cudapool_torch)
  install(TARGETS cudapool_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# Its Python package, where Debian's python3 looks (<prefix>/lib/python3/dist-packages: /usr for
# the .deb; with another prefix, PYTHONPATH or `pip install ./python`).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/cudapool DESTINATION lib/python3/dist-packages
        PATTERN __pycache__ EXCLUDE)
# The tools.
foreach(tool stress bench)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

set(CUDAPOOL_PACKAGE_COMPONENTS ${cudapool_components})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cudapool-config.cmake.in
                              ${PROJECT_BINARY_DIR}/cudapool-config.cmake
                              INSTALL_DESTINATION ${cudapool_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cudapool-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cudapool-config.cmake ${PROJECT_BINARY_DIR}/cudapool-config-version.cmake
        DESTINATION ${cudapool_cmake_dir})

# The package tests: `cmake_package_install` installs this build into a temporary prefix, then
# each `cmake_package_consumer_<name>` configures, builds and runs a consumer project against that
# prefix with this build's compiler and flags: lib/cmake/consumer once per component (and once with
# all of them), lib/cmake/consumer_cu (a .cu source with thrust_allocator, nvcc) when the toolkit
# was found; it skips at run time without a GPU.
if(CUDAPOOL_BUILD_TESTS)
  set(cudapool_test_prefix ${PROJECT_BINARY_DIR}/package_test/prefix)
  add_test(NAME cmake_package_install
           COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix ${cudapool_test_prefix} --config $<CONFIG>)
  set_tests_properties(cmake_package_install PROPERTIES FIXTURES_SETUP cudapool_installed TIMEOUT 120
                       RESOURCE_LOCK cudapool_install_tree)
  set(cudapool_consumer_args -DPREFIX=${cudapool_test_prefix}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER} "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
      -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -DCONFIG=$<CONFIG>)
  if(CUDAPOOL_HAS_CUDA)
    list(APPEND cudapool_consumer_args -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}
         "-DCUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  string(REPLACE ";" "," cudapool_all_components "${cudapool_components}")  # a list in one argument
  foreach(name IN LISTS cudapool_components ITEMS all)
    set(components ${name})
    set(extra)
    if(name STREQUAL "all")
      set(components "${cudapool_all_components}")
    elseif(name STREQUAL "core")
      set(extra -DCHECK_MISSING=ON)
    endif()
    add_test(NAME cmake_package_consumer_${name}
             COMMAND ${CMAKE_COMMAND} ${cudapool_consumer_args} "-DCOMPONENTS=${components}" ${extra}
                     -DWORK_DIR=${PROJECT_BINARY_DIR}/package_test/${name}
                     -DCONSUMER_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer
                     -P ${CMAKE_CURRENT_LIST_DIR}/consumer_test.cmake)
    set_tests_properties(cmake_package_consumer_${name} PROPERTIES FIXTURES_REQUIRED cudapool_installed TIMEOUT 300)
  endforeach()
  if(CUDAPOOL_HAS_CUDA)
    add_test(NAME cmake_package_consumer_cu
             COMMAND ${CMAKE_COMMAND} ${cudapool_consumer_args}
                     -DWORK_DIR=${PROJECT_BINARY_DIR}/package_test/cu
                     -DCONSUMER_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer_cu
                     -P ${CMAKE_CURRENT_LIST_DIR}/consumer_test.cmake)
    set_tests_properties(cmake_package_consumer_cu PROPERTIES FIXTURES_REQUIRED cudapool_installed TIMEOUT 300
                         SKIP_REGULAR_EXPRESSION "consumer: skipped")
  endif()
endif()
