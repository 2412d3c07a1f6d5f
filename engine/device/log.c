/* Error text and log messages of the engine (see log.h). Owns writing the engine's own error (the
 * cls_error its single-threaded callers read) and the translation of OpenCL error codes into names;
 * never writes to stdout or stderr. */
#include "device/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

cls_status cls_fail(cls_engine *engine, cls_status status, const char *fmt, ...) {
  if (!engine) return status;
  cls_error_clear(&engine->error);
  va_list ap;
  va_start(ap, fmt);
  cls_error_vadd(&engine->error, fmt, ap);
  va_end(ap);
  engine->error.status = status;
  return status;
}

cls_status cls_fail_wrap(cls_engine *engine, cls_status status, const cls_error *inner, const char *fmt, ...) {
  if (!engine) return status;
  va_list ap;
  va_start(ap, fmt);
  cls_error_vwrap(&engine->error, status, inner, fmt, ap);
  va_end(ap);
  return status;
}

void cls_error_append(cls_engine *engine, const char *fmt, ...) {
  if (!engine) return;
  va_list ap;
  va_start(ap, fmt);
  cls_error_vadd(&engine->error, fmt, ap);
  va_end(ap);
}

cls_error *cls_engine_errors(cls_engine *engine) { return &engine->error; }

void cls_log(const cls_engine *engine, cls_log_level level, const char *fmt, ...) {
  if (!engine || !engine->options.log || level < engine->options.log_level) return;
  char buf[CLS_ERROR_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  engine->options.log(engine->options.log_user, level, buf);
}

/* "CL error N" for the codes the switch below does not name, made once for every negative code above
   -CODES (the core's and the extensions' ranges), so that the names are shared, constant text. */
enum { CODES = 2048 };
static char code_names[CODES][16];
static pthread_once_t codes_once = PTHREAD_ONCE_INIT;

static void name_codes(void) {
  for (int i = 1; i < CODES; i++) snprintf(code_names[i], sizeof code_names[i], "CL error %d", -i);
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
    default:
      if (code < 0 && code > -CODES) {
        pthread_once(&codes_once, name_codes);
        return code_names[-code];
      }
      return "CL error (a code out of range)";
  }
}
