/* Lists the OpenCL devices clspeech sees, through the public API only (clspeech/clspeech.h): the
 * smallest program embedding the engine. Exit status 0 when at least one device was found, 1 when none
 * (or no OpenCL driver), 2 when the engine could not be made.
 *   cc list_devices.c $(pkg-config --cflags --libs clspeech) -o list_devices && ./list_devices */
#include <stdio.h>

#include <clspeech/clspeech.h>

int main(void) {
  cls_engine_options options = cls_engine_options_from_environment();
  cls_engine *engine = NULL;
  cls_status st = cls_engine_create(&options, &engine);
  if (st != CLS_OK) {
    fprintf(stderr, "list_devices: %s: %s\n", cls_status_string(st), engine ? cls_engine_error(engine) : "");
    cls_engine_destroy(engine);
    return st == CLS_ERR_NO_PLATFORM || st == CLS_ERR_NO_DEVICE ? 1 : 2;
  }
  const int n = cls_engine_device_count(engine);
  printf("clspeech %s: %d OpenCL device%s\n", cls_version(), n, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    const cls_device_info *d = cls_engine_device(engine, i);
    printf("  %d:%d  %-11s %s (%s), %u compute units, %.1f GiB, %s\n", d->platform_index, d->device_index,
           cls_device_kind_name(d->kind), d->name, d->platform_name, d->compute_units,
           (double)d->global_mem_bytes / (1024.0 * 1024.0 * 1024.0), d->device_version);
  }
  cls_engine_destroy(engine);
  return n > 0 ? 0 : 1;
}
