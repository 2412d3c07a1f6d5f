/* Device selection strings (--devices, CLSPEECH_DEVICES, the device patterns of
 * CLSPEECH_KERNEL_OPTIONS): parsing and matching against device records. Pure functions over
 * cls_device_info arrays, so they are testable without any OpenCL device. */
#ifndef CLS_DEVICE_SELECT_H
#define CLS_DEVICE_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "clspeech/clspeech.h"

/* Does one selection item (trimmed: "gpu", "0:2", "pthread") match the device? */
bool cls_select_item_matches(const cls_device_info *device, const char *item);

/* Resolves `spec` (see cls_engine_select; NULL or "" selects the default) over `n` devices.
 * Writes indices to out[cap], their number to *count, and sets *defaulted_to_cpu when the default
 * fell back to CPU devices because there is no GPU (or none that is not far slower; the default never
 * takes a far slower device while another is left). An item may end in ":split=N" (N >= 2): the
 * devices it matches are to be divided into N sub-devices; split[n] (may be NULL) receives N for
 * each device index (1: whole). On an error, `err` says which item failed and lists the devices. */
/* The default selection leaves out a device whose nominal compute (compute units x clock, as its driver
 * reports them before anything runs) is below 1/CLS_SELECT_FAR_SLOWER of the best device's: a simulator
 * (Oclgrind reports 1 unit at 1 MHz) or a very weak integrated GPU beside a strong device. */
#define CLS_SELECT_FAR_SLOWER 100.0

/* Whether devices[i] is far slower than the best of devices[n] by that figure; *best (may be NULL)
 * receives the best's index. */
bool cls_select_far_slower(const cls_device_info *devices, int n, int i, int *best);

cls_status cls_select_parse(const cls_device_info *devices, int n, const char *spec, int *out, int cap, int *count,
                            bool *defaulted_to_cpu, int *split, cls_error *err);

#endif
