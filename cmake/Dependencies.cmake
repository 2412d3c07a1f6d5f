# Dependency probes. Every dependency comes from a Debian 12 package; each probe prints what it
# found, and a missing required one stops configuration naming the package to install.
find_package(PkgConfig QUIET)
find_package(Threads REQUIRED)

function(clspeech_found what detail)
  message(STATUS "[found]   ${what}: ${detail}")
endfunction()
function(clspeech_missing what package)
  message(FATAL_ERROR "[missing] ${what}. Install it with:  apt-get install -y ${package}")
endfunction()

if(NOT PKG_CONFIG_FOUND)
  clspeech_missing("pkg-config" "pkg-config")
endif()

find_path(CLSPEECH_CL_HEADER CL/cl.h)
if(NOT CLSPEECH_CL_HEADER)
  clspeech_missing("OpenCL C headers (CL/cl.h)" "opencl-c-headers")
endif()
find_package(OpenCL QUIET)
if(NOT OpenCL_FOUND)
  clspeech_missing("OpenCL ICD loader (libOpenCL.so)" "ocl-icd-opencl-dev")
endif()
clspeech_found("OpenCL" "${OpenCL_LIBRARY} (headers ${OpenCL_INCLUDE_DIR}, OpenCL ${OpenCL_VERSION_STRING})")

find_package(CLBlast QUIET CONFIG)
if(NOT CLBlast_FOUND)
  clspeech_missing("CLBlast (GEMM)" "libclblast-dev")
endif()
pkg_check_modules(CLBLAST_PC QUIET clblast)
clspeech_found("CLBlast" "${CLBlast_DIR} (version ${CLBLAST_PC_VERSION})")

find_package(clFFT QUIET CONFIG)
if(NOT clFFT_FOUND)
  clspeech_missing("clFFT (FFT)" "libclfft-dev")
endif()
clspeech_found("clFFT" "${clFFT_DIR} (version ${clFFT_VERSION})")

pkg_check_modules(SNDFILE QUIET IMPORTED_TARGET sndfile)
if(NOT SNDFILE_FOUND)
  clspeech_missing("libsndfile (audio input)" "libsndfile1-dev")
endif()
clspeech_found("libsndfile" "${SNDFILE_LINK_LIBRARIES} (version ${SNDFILE_VERSION})")

pkg_check_modules(SAMPLERATE QUIET IMPORTED_TARGET samplerate)
if(NOT SAMPLERATE_FOUND)
  clspeech_missing("libsamplerate (resampling)" "libsamplerate0-dev")
endif()
clspeech_found("libsamplerate" "${SAMPLERATE_LINK_LIBRARIES} (version ${SAMPLERATE_VERSION})")

pkg_check_modules(NETTLE QUIET IMPORTED_TARGET nettle)
if(NOT NETTLE_FOUND)
  clspeech_missing("nettle (SHA-256 of cache keys and files)" "nettle-dev")
endif()
clspeech_found("nettle" "${NETTLE_LINK_LIBRARIES} (version ${NETTLE_VERSION})")

pkg_check_modules(JANSSON QUIET IMPORTED_TARGET jansson)
if(NOT JANSSON_FOUND)
  clspeech_missing("jansson (the command's JSON output)" "libjansson-dev")
endif()
clspeech_found("jansson" "${JANSSON_LINK_LIBRARIES} (version ${JANSSON_VERSION})")

# PoCL is a run-time dependency (the CPU OpenCL driver), not a build one: report, never fail.
file(GLOB CLSPEECH_ICDS /etc/OpenCL/vendors/*.icd)
if(CLSPEECH_ICDS)
  string(REPLACE ";" ", " _icds "${CLSPEECH_ICDS}")
  clspeech_found("OpenCL drivers (ICDs)" "${_icds}")
else()
  message(WARNING "[missing] no OpenCL driver is registered in /etc/OpenCL/vendors: clspeech will find no "
                  "device at run time. For the CPU: apt-get install -y pocl-opencl-icd")
endif()
