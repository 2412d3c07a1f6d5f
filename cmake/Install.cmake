# `cmake --install`: libclspeech (static, the kernels embedded), the public headers of include/clspeech/
# (not include/clspeech/internal/, the headers of the command, the bench programs and the tests), the
# CMake package (find_package(clspeech) -> clspeech::clspeech), clspeech.pc for pkg-config, and the
# clspeech command. The version is the project()'s.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(clspeech_engine PROPERTIES EXPORT_NAME clspeech)
if(CLSPEECH_SANITIZE)
  # The installed library holds sanitized objects: programs linking it need the runtimes too.
  target_link_options(clspeech_engine INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()
install(TARGETS clspeech_engine EXPORT clspeechTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS clspeech RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/clspeech DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "internal" EXCLUDE)

set(CLSPEECH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/clspeech)
install(EXPORT clspeechTargets NAMESPACE clspeech:: FILE clspeechTargets.cmake DESTINATION ${CLSPEECH_CMAKE_DIR})
if(MPI_C_FOUND)
  set(CLSPEECH_WITH_MPI TRUE)
else()
  set(CLSPEECH_WITH_MPI FALSE)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/clspeechConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/install/clspeechConfig.cmake INSTALL_DESTINATION ${CLSPEECH_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/clspeechConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/clspeechConfig.cmake ${CMAKE_BINARY_DIR}/install/clspeechConfigVersion.cmake
        DESTINATION ${CLSPEECH_CMAKE_DIR})

# clspeech.pc: the prefix relative to the file's folder (lib/pkgconfig -> ../..), every dependency the
# static library needs in Requires (their pkg-config modules) and Libs (the rest).
file(RELATIVE_PATH CLSPEECH_PC_UP /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
set(CLSPEECH_PC_REQUIRES "OpenCL clblast clFFT sndfile samplerate nettle libprotobuf-c libisal libutf8proc")
set(CLSPEECH_PC_LIBS "-pthread -lm")
if(MPI_C_FOUND)
  string(APPEND CLSPEECH_PC_REQUIRES " mpi-c")
endif()
if(CLSPEECH_SANITIZE)
  string(APPEND CLSPEECH_PC_LIBS " -fsanitize=address,undefined")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/clspeech.pc.in ${CMAKE_BINARY_DIR}/install/clspeech.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/clspeech.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
