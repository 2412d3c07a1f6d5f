/* Names of the status codes: the small fixed strings of the
 * public API. */
#include "clspeech/base.h"

#ifndef CLSPEECH_VERSION
#define CLSPEECH_VERSION "unknown"
#endif

const char *cls_status_string(cls_status status) {
  switch (status) {
    case CLS_OK: return "CLS_OK: success";
    case CLS_ERR_INVALID_ARGUMENT: return "CLS_ERR_INVALID_ARGUMENT: invalid argument";
    case CLS_ERR_OUT_OF_MEMORY: return "CLS_ERR_OUT_OF_MEMORY: out of host memory";
    case CLS_ERR_NO_PLATFORM: return "CLS_ERR_NO_PLATFORM: no OpenCL platform";
    case CLS_ERR_NO_DEVICE: return "CLS_ERR_NO_DEVICE: no usable OpenCL device";
    case CLS_ERR_OPENCL: return "CLS_ERR_OPENCL: OpenCL call failed";
    case CLS_ERR_BUILD: return "CLS_ERR_BUILD: kernel build failed";
    case CLS_ERR_SELFTEST: return "CLS_ERR_SELFTEST: device self-test failed";
    case CLS_ERR_IO: return "CLS_ERR_IO: file input/output failed";
    case CLS_ERR_BLAS: return "CLS_ERR_BLAS: CLBlast call failed";
    case CLS_ERR_DIVERGED: return "CLS_ERR_DIVERGED: model replicas diverged";
    case CLS_ERR_WORLD: return "CLS_ERR_WORLD: another process of the run, or MPI, failed";
    case CLS_ERR_NO_STEP: return "CLS_ERR_NO_STEP: training applied no step";
    case CLS_ERR_DEVICE_OUT_OF_MEMORY: return "CLS_ERR_DEVICE_OUT_OF_MEMORY: out of device memory";
  }
  return "unknown cls_status";
}
