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
# A required pkg-config module as PkgConfig::PREFIX (a macro, so that PREFIX_LINK_LIBRARIES and
# PREFIX_VERSION stay visible to the caller): reported when found, naming the package when not.
macro(clspeech_pkg prefix module what package)
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  if(NOT ${prefix}_FOUND)
    clspeech_missing("${what}" "${package}")
  endif()
  clspeech_found("${what}" "${${prefix}_LINK_LIBRARIES} (version ${${prefix}_VERSION})")
endmacro()

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

clspeech_pkg(SNDFILE sndfile "libsndfile (audio input)" libsndfile1-dev)
clspeech_pkg(SAMPLERATE samplerate "libsamplerate (resampling)" libsamplerate0-dev)
clspeech_pkg(UTF8PROC libutf8proc "utf8proc (NFKC and Unicode categories of imported transcripts)" libutf8proc-dev)
clspeech_pkg(NETTLE nettle "nettle (SHA-256 of cache keys and files)" nettle-dev)
clspeech_pkg(JANSSON jansson "jansson (the command's JSON output)" libjansson-dev)
clspeech_pkg(PROTOBUF_C libprotobuf-c "protobuf-c (the Event messages of TensorBoard's event files)" libprotobuf-c-dev)
find_program(CLSPEECH_PROTOC_C protoc-c)
if(NOT CLSPEECH_PROTOC_C)
  clspeech_missing("protoc-c (generates the C code of engine/base/tf_event.proto)" "protobuf-c-compiler")
endif()
clspeech_found("protoc-c" "${CLSPEECH_PROTOC_C}")

clspeech_pkg(ISAL libisal "ISA-L (CRC-32C of the event files' records)" libisal-dev)

# MPI (Open MPI) is optional: without it clspeech builds, and `train --horovod` says what to install.
option(CLSPEECH_MPI "Build --horovod (several processes under MPI) when MPI is found" ON)
if(CLSPEECH_MPI)
  find_package(MPI QUIET COMPONENTS C)
endif()
if(MPI_C_FOUND)
  clspeech_found("MPI" "${MPI_C_LIBRARIES} (MPI ${MPI_C_VERSION}, ${MPIEXEC_EXECUTABLE})")
else()
  message(STATUS "[optional] MPI not found (or CLSPEECH_MPI=OFF): train --horovod is disabled. For it: "
                 "apt-get install -y openmpi-bin libopenmpi-dev")
endif()

# PoCL is a run-time dependency (the CPU OpenCL driver), not a build one: report, never fail.
file(GLOB CLSPEECH_ICDS /etc/OpenCL/vendors/*.icd)
if(CLSPEECH_ICDS)
  string(REPLACE ";" ", " _icds "${CLSPEECH_ICDS}")
  clspeech_found("OpenCL drivers (ICDs)" "${_icds}")
else()
  message(WARNING "[missing] no OpenCL driver is registered in /etc/OpenCL/vendors: clspeech will find no "
                  "device at run time. For the CPU: apt-get install -y pocl-opencl-icd")
endif()
