/* Error text and log messages of the engine (see log.h). Owns the engine's error buffer and the
 * translation of OpenCL error codes into names; never writes to stdout or stderr. */
#include "device/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char *redirect;

void cls_error_redirect(char *buf) { redirect = buf; }

static char *error_buffer(cls_engine *engine) { return redirect ? redirect : engine->error; }

static void append_v(cls_engine *engine, const char *fmt, va_list ap) {
  char *error = error_buffer(engine);
  size_t used = strlen(error);
  if (used >= CLS_ERROR_CAP - 1) return;
  int n = vsnprintf(error + used, CLS_ERROR_CAP - used, fmt, ap);
  if (n >= 0 && (size_t)n >= CLS_ERROR_CAP - used) {
    static const char marker[] = "\n... (truncated)";
    memcpy(error + CLS_ERROR_CAP - sizeof marker, marker, sizeof marker);
  }
}

cls_status cls_fail(cls_engine *engine, cls_status status, const char *fmt, ...) {
  if (!engine) return status;
  error_buffer(engine)[0] = '\0';
  va_list ap;
  va_start(ap, fmt);
  append_v(engine, fmt, ap);
  va_end(ap);
  return status;
}

void cls_error_append(cls_engine *engine, const char *fmt, ...) {
  if (!engine) return;
  va_list ap;
  va_start(ap, fmt);
  append_v(engine, fmt, ap);
  va_end(ap);
}

void cls_log(const cls_engine *engine, cls_log_level level, const char *fmt, ...) {
  if (!engine || !engine->options.log || level < engine->options.log_level) return;
  char buf[CLS_ERROR_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  engine->options.log(engine->options.log_user, level, buf);
}

const char *cls_cl_error_name(cl_int code) {
  switch (code) {
#define CASE(c) case c: return #c
    CASE(CL_SUCCESS);
    CASE(CL_DEVICE_NOT_FOUND);
    CASE(CL_DEVICE_NOT_AVAILABLE);
    CASE(CL_COMPILER_NOT_AVAILABLE);
    CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CASE(CL_OUT_OF_RESOURCES);
    CASE(CL_OUT_OF_HOST_MEMORY);
    CASE(CL_PROFILING_INFO_NOT_AVAILABLE);
    CASE(CL_BUILD_PROGRAM_FAILURE);
    CASE(CL_INVALID_VALUE);
    CASE(CL_INVALID_DEVICE);
    CASE(CL_INVALID_PLATFORM);
    CASE(CL_INVALID_CONTEXT);
    CASE(CL_INVALID_COMMAND_QUEUE);
    CASE(CL_INVALID_MEM_OBJECT);
    CASE(CL_INVALID_BINARY);
    CASE(CL_INVALID_BUILD_OPTIONS);
    CASE(CL_INVALID_PROGRAM);
    CASE(CL_INVALID_PROGRAM_EXECUTABLE);
    CASE(CL_INVALID_KERNEL_NAME);
    CASE(CL_INVALID_KERNEL);
    CASE(CL_INVALID_ARG_INDEX);
    CASE(CL_INVALID_ARG_VALUE);
    CASE(CL_INVALID_ARG_SIZE);
    CASE(CL_INVALID_KERNEL_ARGS);
    CASE(CL_INVALID_WORK_DIMENSION);
    CASE(CL_INVALID_WORK_GROUP_SIZE);
    CASE(CL_INVALID_WORK_ITEM_SIZE);
    CASE(CL_INVALID_GLOBAL_OFFSET);
    CASE(CL_INVALID_EVENT_WAIT_LIST);
    CASE(CL_INVALID_EVENT);
    CASE(CL_INVALID_OPERATION);
    CASE(CL_INVALID_BUFFER_SIZE);
    CASE(CL_INVALID_GLOBAL_WORK_SIZE);
#undef CASE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: {
      static _Thread_local char buf[32];
      snprintf(buf, sizeof buf, "CL error %d", (int)code);
      return buf;
    }
  }
}
