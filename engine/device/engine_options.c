/* cls_engine_options_from_environment (see clspeech.h): the one place in the engine that reads
 * environment variables. It reads exactly these:
 *   CLSPEECH_KERNEL_CACHE      0/off/OFF/no/false turn the kernel binary cache (and GEMM tuning files) off
 *   CLSPEECH_KERNEL_CACHE_DIR  the cache folder; when unset or empty the XDG default below
 *   XDG_CACHE_HOME             the default folder is $XDG_CACHE_HOME/clspeech/kernels,
 *   HOME                       or when that is unset or empty $HOME/.cache/clspeech/kernels
 *   CLSPEECH_KERNEL_OPTIONS    extra OpenCL build options per device: SEL=OPTIONS;SEL=OPTIONS
 *   CLSPEECH_DEVICES           the device selection when the caller gives none
 *   CLSPEECH_GEMM_TUNING       0/off/OFF/no/false turn loading the stored GEMM tuning off
 *   POCL_CACHE_DIR             PoCL's kernel cache folder, where the build lock for PoCL devices lives; when
 *                              unset or empty PoCL's own default: $XDG_CACHE_HOME/pocl/kcache (when not
 *                              empty), else $HOME/.cache/pocl/kcache (when set), else /tmp/pocl/kcache
 * Everything else in the engine takes these values from the options it was created with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "clspeech/clspeech.h"
#include "device/kernel_cache.h"

cls_engine_options cls_engine_options_from_environment(void) {
  cls_engine_options o;
  memset(&o, 0, sizeof o);
  o.log_level = CLS_LOG_DEBUG;
  o.kernel_cache = !cls_setting_off(getenv("CLSPEECH_KERNEL_CACHE"));
  cls_cache_dir_resolve(getenv("CLSPEECH_KERNEL_CACHE_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME"), "kernels",
                        o.kernel_cache_dir, CLS_KERNEL_CACHE_DIR_MAX + 1);
  o.kernel_options = getenv("CLSPEECH_KERNEL_OPTIONS");
  o.default_devices = getenv("CLSPEECH_DEVICES");
  o.gemm_tuning = !cls_setting_off(getenv("CLSPEECH_GEMM_TUNING"));
  /* PoCL's rule for its cache folder (PoCL 1.x to 7.x); a path that does not fit leaves it unknown. */
  const char *pocl = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n;
  if (pocl && *pocl)
    n = snprintf(o.pocl_cache_dir, sizeof o.pocl_cache_dir, "%s", pocl);
  else if (xdg && *xdg)
    n = snprintf(o.pocl_cache_dir, sizeof o.pocl_cache_dir, "%s/pocl/kcache", xdg);
  else if (home) /* set, even empty, as PoCL takes it */
    n = snprintf(o.pocl_cache_dir, sizeof o.pocl_cache_dir, "%s/.cache/pocl/kcache", home);
  else
    n = snprintf(o.pocl_cache_dir, sizeof o.pocl_cache_dir, "/tmp/pocl/kcache");
  if (n < 0 || (size_t)n >= sizeof o.pocl_cache_dir) o.pocl_cache_dir[0] = '\0';
  return o;
}
