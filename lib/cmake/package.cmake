# The Debian package: `cpack -G DEB` in the build directory (or `cmake --build B --target package`)
# gives libcudapool-dev_<version>_amd64.deb with what `cmake --install` installs under /usr: the
# headers, the static libraries, the CMake package, libcudapool_torch.so, the stress and bench tools
# and the Python package (lib/python3/dist-packages/cudapool). The ctest `debian_package` unpacks it
# into a scratch root (dpkg -x) and builds and runs the consumers against that root.
if(NOT CUDAPOOL_INSTALL)
  return()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libcudapool-dev)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "cudapool developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>_<architecture>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# What a consumer of the static libraries and the CMake package needs (the stream variant's oneTBB,
# the C++ toolchain); the shared libraries the tools and libcudapool_torch.so load are added by
# dpkg-shlibdeps. The CUDA toolkit is NVIDIA's, not a Debian package: a CUDA build's consumers
# need it installed (the package's CMake files look for it where the build found it first).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libtbb-dev, g++ (>= 4:12), cmake (>= 3.25)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Lock-free, thread-safe pools for CUDA device memory (C++20): headers, static libraries and the\nCMake package (find_package(cudapool CONFIG COMPONENTS ...)), the PyTorch allocator\nlibcudapool_torch.so and its Python package (cudapool.torch), and the stress and bench tools.")
include(CPack)

if(CUDAPOOL_BUILD_TESTS)
  find_program(CUDAPOOL_DPKG_DEB dpkg-deb)
  find_program(CUDAPOOL_DPKG dpkg)
  if(CUDAPOOL_DPKG_DEB AND CUDAPOOL_DPKG)
    execute_process(COMMAND ${CUDAPOOL_DPKG} --print-architecture OUTPUT_VARIABLE cudapool_deb_arch
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    add_test(NAME debian_package
             COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DWORK_DIR=${PROJECT_BINARY_DIR}/debian_test
                     -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DCPACK=${CMAKE_CPACK_COMMAND}
                     -DPACKAGE_FILE=${CPACK_PACKAGE_NAME}_${CPACK_PACKAGE_VERSION}_${cudapool_deb_arch}.deb
                     -DCXX_COMPILER=${CMAKE_CXX_COMPILER} "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
                     -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -DHAS_CUDA=${CUDAPOOL_HAS_CUDA}
                     "-DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}" "-DCUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}"
                     -P ${CMAKE_CURRENT_LIST_DIR}/debian_test.cmake)
    # cpack installs this build too: not at the same time as cmake_package_install.
    set_tests_properties(debian_package PROPERTIES TIMEOUT 600 RESOURCE_LOCK cudapool_install_tree)
  endif()
endif()
