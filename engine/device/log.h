/* Error text and log messages of the engine: formatting into the engine's error buffer and sending
 * to the user's log callback. Nothing here prints. */
#ifndef CLS_LOG_H
#define CLS_LOG_H

#include "device/engine.h"

/* Sets the engine's error text and returns `status`, so that `return cls_fail(e, CLS_ERR_IO, ...)` reads well. */
cls_status cls_fail(cls_engine *engine, cls_status status, const char *fmt, ...) CLS_PRINTF(3, 4);
/* Appends to the error text (truncating with a marker when it is full). */
void cls_error_append(cls_engine *engine, const char *fmt, ...) CLS_PRINTF(2, 3);
/* Routes this thread's cls_fail/cls_error_append text into buf[CLS_ERROR_CAP] instead of the
 * engine's buffer (NULL: back to the engine's), so that tower threads failing at the same time do
 * not overwrite each other's text. */
void cls_error_redirect(char *buf);
/* Sends a message to the log callback, if one is set and the level passes the filter. */
void cls_log(const cls_engine *engine, cls_log_level level, const char *fmt, ...) CLS_PRINTF(3, 4);
/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL error N". */
const char *cls_cl_error_name(cl_int code);

#endif
