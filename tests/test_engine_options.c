/* The engine's options and the base helpers behind them: cls_engine_options_from_environment reads
 * each CLSPEECH_* variable (and XDG_CACHE_HOME, HOME for the cache folder's default), and POCL_CACHE_DIR
 * by PoCL's rule for its folder; an engine made
 * from options set by hand reads no environment; cls_engine_create(NULL) is the environment's engine;
 * the engine keeps its own copies of the option strings. Also cls_setting_off, cls_cache_dir_resolve
 * and cls_make_dirs (engine/base/file_util.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "check.h"
#include "clspeech/clspeech.h"

static const char *vars[] = {"CLSPEECH_KERNEL_CACHE", "CLSPEECH_KERNEL_CACHE_DIR", "XDG_CACHE_HOME", "HOME",
                             "CLSPEECH_KERNEL_OPTIONS", "CLSPEECH_DEVICES", "CLSPEECH_GEMM_TUNING"};

static void clear_environment(void) {
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The index of the one device `spec` (NULL: the engine's default) selects, or -1. */
static int select_one(cls_engine *e, const char *spec) {
  int sel[64], n = 0;
  if (cls_engine_select(e, spec, sel, 64, &n) != CLS_OK || n != 1) return -1;
  return sel[0];
}

static void helpers(void) {
  const char *off[] = {"0", "off", "OFF", "no", "false"}, *on[] = {"1", "on", "yes", "true", "", "Off", "2"};
  for (size_t i = 0; i < sizeof off / sizeof *off; i++) CHECK(cls_setting_off(off[i]), "\"%s\" is off", off[i]);
  for (size_t i = 0; i < sizeof on / sizeof *on; i++) CHECK(!cls_setting_off(on[i]), "\"%s\" is not off", on[i]);
  CHECK(!cls_setting_off(NULL), "unset is not off");

  char out[64];
  CHECK(cls_cache_dir_resolve("/d", "/x", "/h", "kernels", out, sizeof out) && !strcmp(out, "/d"), "dir: %s", out);
  CHECK(cls_cache_dir_resolve("", "/x", "/h", "kernels", out, sizeof out) && !strcmp(out, "/x/clspeech/kernels"),
        "xdg: %s", out);
  CHECK(cls_cache_dir_resolve(NULL, "", "/h", "kernels", out, sizeof out) && !strcmp(out, "/h/.cache/clspeech/kernels"),
        "home: %s", out);
  CHECK(!cls_cache_dir_resolve(NULL, NULL, "", "kernels", out, sizeof out) && out[0] == '\0', "none: \"%s\"", out);
  CHECK(!cls_cache_dir_resolve(NULL, NULL, "/a/home/too/long/for/ten", "kernels", out, 10) && out[0] == '\0',
        "too long: \"%s\"", out);

  char root[] = "/tmp/clspeech-dirs-XXXXXX";
  CHECK(mkdtemp(root) != NULL, "mkdtemp");
  char deep[256], file[256], under_file[300];
  snprintf(deep, sizeof deep, "%s/a/b/c", root);
  CHECK_INT(cls_make_dirs(deep), CLS_OK);
  CHECK(is_dir(deep), "%s made", deep);
  CHECK_INT(cls_make_dirs(deep), CLS_OK); /* already there */
  snprintf(file, sizeof file, "%s/a/file", root);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL, "create %s", file);
  if (f) fclose(f);
  snprintf(under_file, sizeof under_file, "%s/sub", file);
  errno = 0;
  CHECK_INT(cls_make_dirs(under_file), CLS_ERR_IO);
  CHECK(errno == ENOTDIR, "errno %d (%s), expected ENOTDIR", errno, strerror(errno));
  CHECK_INT(cls_make_dirs(""), CLS_ERR_IO);
  unlink(file);
  rmdir(deep);
  snprintf(deep, sizeof deep, "%s/a/b", root);
  rmdir(deep);
  snprintf(deep, sizeof deep, "%s/a", root);
  rmdir(deep);
  rmdir(root);
}

static void from_environment(void) {
  clear_environment();
  cls_engine_options o = cls_engine_options_from_environment();
  CHECK(o.log == NULL && o.log_user == NULL && o.log_level == CLS_LOG_DEBUG, "no log, every level");
  CHECK(o.kernel_cache && o.gemm_tuning, "cache and tuning on by default");
  CHECK(o.kernel_options == NULL && o.default_devices == NULL, "no kernel options, default selection");
  CHECK_INT(o.kernel_cache_dir[0], 0); /* neither HOME nor XDG_CACHE_HOME */

  setenv("HOME", "/home/someone", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.kernel_cache_dir, "/home/someone/.cache/clspeech/kernels"), "from HOME: %s", o.kernel_cache_dir);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.kernel_cache_dir, "/xdg/clspeech/kernels"), "from XDG_CACHE_HOME: %s", o.kernel_cache_dir);
  setenv("CLSPEECH_KERNEL_CACHE_DIR", "/explicit", 1);
  setenv("CLSPEECH_KERNEL_CACHE", "off", 1);
  setenv("CLSPEECH_KERNEL_OPTIONS", "basic=-DCLS_WG_1D=32", 1);
  setenv("CLSPEECH_DEVICES", "basic", 1);
  setenv("CLSPEECH_GEMM_TUNING", "0", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.kernel_cache_dir, "/explicit"), "from CLSPEECH_KERNEL_CACHE_DIR: %s", o.kernel_cache_dir);
  CHECK(!o.kernel_cache, "CLSPEECH_KERNEL_CACHE=off");
  CHECK(o.kernel_options && !strcmp(o.kernel_options, "basic=-DCLS_WG_1D=32"), "CLSPEECH_KERNEL_OPTIONS");
  CHECK(o.default_devices && !strcmp(o.default_devices, "basic"), "CLSPEECH_DEVICES");
  CHECK(!o.gemm_tuning, "CLSPEECH_GEMM_TUNING=0");
  setenv("CLSPEECH_KERNEL_CACHE", "1", 1);
  setenv("CLSPEECH_GEMM_TUNING", "yes", 1);
  o = cls_engine_options_from_environment();
  CHECK(o.kernel_cache && o.gemm_tuning, "1 and yes leave them on");
}

static void engines(void) {
  /* Options set by hand: the environment says otherwise and is not read. */
  clear_environment();
  setenv("CLSPEECH_DEVICES", "pthread", 1);
  setenv("CLSPEECH_KERNEL_CACHE_DIR", "/tmp/clspeech-never-used", 1);
  char devices[] = "basic", options[] = "all=-DCLS_WG_1D=32";
  cls_engine_options o;
  memset(&o, 0, sizeof o);
  o.default_devices = devices;
  o.kernel_options = options;
  cls_engine *e = NULL;
  cls_status st = cls_engine_create(&o, &e);
  CHECK(st == CLS_OK, "engine: %s", cls_engine_error(e));
  if (st != CLS_OK) {
    cls_engine_destroy(e);
    return;
  }
  CHECK(cls_engine_cache_dir(e) == NULL, "a zeroed kernel_cache is no cache");
  const cls_engine_options *kept = cls_engine_get_options(e);
  CHECK(kept->default_devices != devices && !strcmp(kept->default_devices, "basic"), "default_devices copied");
  CHECK(kept->kernel_options != options && !strcmp(kept->kernel_options, options), "kernel_options copied");
  memset(devices, 'x', sizeof devices - 1); /* the caller's strings may change after create */
  memset(options, 'x', sizeof options - 1);
  bool have_basic = false;
  for (int i = 0; i < cls_engine_device_count(e); i++) have_basic |= strstr(cls_engine_device(e, i)->name, "basic") != NULL;
  if (have_basic) {
    int i = select_one(e, NULL);
    CHECK(i >= 0 && strstr(cls_engine_device(e, i)->name, "basic"), "the option's default selection picks basic");
    CHECK_CONTAINS(cls_engine_build_options(e, i), "-DCLS_WG_1D=32");
  }
  cls_engine_destroy(e);

  /* NULL options: the environment's engine. */
  char dir[] = "/tmp/clspeech-options-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  setenv("CLSPEECH_KERNEL_CACHE_DIR", dir, 1);
  setenv("CLSPEECH_DEVICES", "basic", 1);
  e = NULL;
  st = cls_engine_create(NULL, &e);
  CHECK(st == CLS_OK, "engine: %s", cls_engine_error(e));
  if (st == CLS_OK) {
    CHECK(cls_engine_cache_dir(e) && !strcmp(cls_engine_cache_dir(e), dir), "cache dir %s", cls_engine_cache_dir(e));
    CHECK(cls_engine_get_options(e)->gemm_tuning, "tuning on");
    if (have_basic) {
      int i = select_one(e, NULL);
      CHECK(i >= 0 && strstr(cls_engine_device(e, i)->name, "basic"), "CLSPEECH_DEVICES=basic picks basic");
    }
  }
  cls_engine_destroy(e);
  rmdir(dir);
}

/* PoCL's cache folder (where the build lock for PoCL devices lives), by PoCL's own rule. POCL_CACHE_DIR
 * is put back afterwards: PoCL reads it too, and the tests keep PoCL's cache in the build folder. */
static void pocl_cache_dir_rule(void) {
  const char *was = getenv("POCL_CACHE_DIR");
  char *saved = was ? strdup(was) : NULL;
  clear_environment();
  unsetenv("POCL_CACHE_DIR");
  cls_engine_options o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.pocl_cache_dir, "/tmp/pocl/kcache"), "neither HOME nor XDG_CACHE_HOME: %s", o.pocl_cache_dir);
  setenv("HOME", "", 1); /* set but empty: PoCL still takes it */
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.pocl_cache_dir, "/.cache/pocl/kcache"), "from an empty HOME: %s", o.pocl_cache_dir);
  setenv("HOME", "/home/someone", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.pocl_cache_dir, "/home/someone/.cache/pocl/kcache"), "from HOME: %s", o.pocl_cache_dir);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.pocl_cache_dir, "/xdg/pocl/kcache"), "from XDG_CACHE_HOME: %s", o.pocl_cache_dir);
  setenv("POCL_CACHE_DIR", "/pocl-here", 1);
  o = cls_engine_options_from_environment();
  CHECK(!strcmp(o.pocl_cache_dir, "/pocl-here"), "from POCL_CACHE_DIR: %s", o.pocl_cache_dir);
  char long_dir[1100];
  memset(long_dir, 'a', sizeof long_dir - 1);
  long_dir[0] = '/';
  long_dir[sizeof long_dir - 1] = '\0';
  setenv("POCL_CACHE_DIR", long_dir, 1);
  o = cls_engine_options_from_environment();
  CHECK_INT(o.pocl_cache_dir[0], 0); /* too long for the field: unknown, not cut short */
  if (saved)
    setenv("POCL_CACHE_DIR", saved, 1);
  else
    unsetenv("POCL_CACHE_DIR");
  free(saved);
  clear_environment();
}

int main(void) {
  helpers();
  from_environment();
  pocl_cache_dir_rule();
  engines();
  clear_environment();
  return check_finish("test_engine_options");
}
