/* Error text and log messages of the engine: formatting into the engine's own cls_error and sending
 * to the user's log callback. Nothing here prints. */
#ifndef CLS_LOG_H
#define CLS_LOG_H

#include "device/engine.h"

/* Sets the engine's own error (status and text) and returns `status`, so that
 * `return cls_fail(e, CLS_ERR_IO, ...)` reads well. For engine-level work on the caller's thread;
 * an object that may run on a worker thread (an op plan, a model, a tower) reports into its own
 * `cls_error *` sink with cls_error_set instead. */
cls_status cls_fail(cls_engine *engine, cls_status status, const char *fmt, ...) CLS_PRINTF(3, 4);
/* cls_error_wrap into the engine's own error: an inner failure passed up with context, its status kept. */
cls_status cls_fail_wrap(cls_engine *engine, cls_status status, const cls_error *inner, const char *fmt, ...)
    CLS_PRINTF(4, 5);
/* Appends to the error text (truncating with a marker when it is full). */
void cls_error_append(cls_engine *engine, const char *fmt, ...) CLS_PRINTF(2, 3);
/* The engine's own error: the sink of objects made on the engine unless told otherwise. */
cls_error *cls_engine_errors(cls_engine *engine);
/* Sends a message to the log callback, if one is set and the level passes the filter. */
void cls_log(const cls_engine *engine, cls_log_level level, const char *fmt, ...) CLS_PRINTF(3, 4);
/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL error N". */
const char *cls_cl_error_name(cl_int code);

#endif
