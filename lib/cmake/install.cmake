# The installable CMake package:
#   find_package(cudapool CONFIG REQUIRED COMPONENTS tls stream)
#   target_link_libraries(app PRIVATE cudapool::tls cudapool::stream)
# Components (one export file each, so that a consumer finds only what it uses needs):
#   core (always), mutex, lockfree, tls, stream (needs oneTBB), registry (all variants), adapters.
# Headers go under <prefix>/include/cudapool/, laid out as in the source tree (cudapool/*.hpp,
# core/*.hpp, <variant>/<variant>_pool.hpp, registry.hpp), so consumers include the same paths as
# the library's own code; every exported target carries that directory.
option(CUDAPOOL_INSTALL "Generate the install rules and the CMake package" ${cudapool_top_level})
if(NOT CUDAPOOL_INSTALL)
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(cudapool_include_root ${CMAKE_INSTALL_INCLUDEDIR}/cudapool)
set(cudapool_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cudapool)
set(cudapool_components core ${CUDAPOOL_VARIANTS} registry adapters)

foreach(component IN LISTS cudapool_components)
  install(TARGETS cudapool_${component} EXPORT cudapool-${component}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${cudapool_include_root})
  install(EXPORT cudapool-${component} NAMESPACE cudapool:: DESTINATION ${cudapool_cmake_dir}
          FILE cudapool-${component}-targets.cmake)
endforeach()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/cudapool DESTINATION ${cudapool_include_root}
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/core DESTINATION ${cudapool_include_root}
        FILES_MATCHING PATTERN "*.hpp")
foreach(variant IN LISTS CUDAPOOL_VARIANTS)
  install(FILES ${PROJECT_SOURCE_DIR}/variants/${variant}/${variant}_pool.hpp
          DESTINATION ${cudapool_include_root}/${variant})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/variants/registry.hpp DESTINATION ${cudapool_include_root})

set(CUDAPOOL_PACKAGE_COMPONENTS ${cudapool_components})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cudapool-config.cmake.in
                              ${PROJECT_BINARY_DIR}/cudapool-config.cmake
                              INSTALL_DESTINATION ${cudapool_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cudapool-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cudapool-config.cmake ${PROJECT_BINARY_DIR}/cudapool-config-version.cmake
        DESTINATION ${cudapool_cmake_dir})

# The package test: install this build into a temporary prefix, then configure, build and run a
# consumer project (lib/cmake/consumer) against it with this build's compiler and flags.
if(CUDAPOOL_BUILD_TESTS)
  add_test(NAME cmake_package_consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer_test
                   -DCONSUMER_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer
                   -DCXX_COMPILER=${CMAKE_CXX_COMPILER} "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
                   -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -DCONFIG=$<CONFIG>
                   -P ${CMAKE_CURRENT_LIST_DIR}/consumer_test.cmake)
  set_tests_properties(cmake_package_consumer PROPERTIES TIMEOUT 300)
endif()
