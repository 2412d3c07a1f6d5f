/* Safetensors reading and writing: a round trip with metadata, a fixture written by Python, and
 * malformed files (truncated, lying header, wrong sizes) rejected with messages naming the file. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "ops_test.h"

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(data, 1, n, f);
  fclose(f);
}

int main(void) {
  char dir[] = "/tmp/clspeech-st-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char path[512], err[1024];
  snprintf(path, sizeof path, "%s/a.safetensors", dir);

  float w[6] = {1, 2, 3, 4, 5, -6.5f};
  int32_t steps[1] = {42};
  cls_tensor_desc t[2] = {{"layer_1/weights", CLS_F32, 2, {2, 3}, w}, {"global_step", CLS_I32, 0, {0}, steps}};
  const char *meta[] = {"epoch", "3", "note", "quote \" and \\ back"};
  CHECK_INT(cls_safetensors_write(path, t, 2, meta, 2, err, sizeof err), CLS_OK);
  cls_safetensors *st = NULL;
  CHECK_INT(cls_safetensors_read(path, &st, err, sizeof err), CLS_OK);
  if (st) {
    const cls_tensor_info *tw = cls_safetensors_find(st, "layer_1/weights");
    CHECK(tw && tw->ndim == 2 && tw->shape[0] == 2 && tw->shape[1] == 3 && tw->dtype == CLS_F32, "weights info");
    if (tw) CHECK(!memcmp(cls_safetensors_tensor_data(st, tw), w, sizeof w), "weights data");
    const cls_tensor_info *ts = cls_safetensors_find(st, "global_step");
    CHECK(ts && ts->ndim == 0 && cls_tensor_elements(ts) == 1, "scalar");
    if (ts) CHECK(*(const int32_t *)cls_safetensors_tensor_data(st, ts) == 42, "scalar data");
    CHECK(!strcmp(cls_safetensors_meta(st, "epoch"), "3"), "metadata");
    CHECK(!strcmp(cls_safetensors_meta(st, "note"), "quote \" and \\ back"), "escaped metadata");
    CHECK(cls_safetensors_find(st, "missing") == NULL, "missing tensor");
    CHECK((size_t)(st->data - st->file) % 8 == 0, "data section aligned to 8 bytes");
    cls_safetensors_free(st);
  }
  CHECK(access(path, F_OK) == 0, "written");

  /* The header alone: the same index and metadata, no data read. */
  CHECK_INT(cls_safetensors_read_header(path, &st, err, sizeof err), CLS_OK);
  if (st) {
    const cls_tensor_info *tw = cls_safetensors_find(st, "layer_1/weights");
    CHECK(tw && tw->ndim == 2 && tw->shape[0] == 2 && tw->shape[1] == 3, "header only: weights info");
    CHECK(!strcmp(cls_safetensors_meta(st, "epoch"), "3"), "header only: metadata");
    CHECK(st->data == NULL, "header only: no data section");
    cls_safetensors_free(st);
  }

  /* A fixture written by tests/ref/fixture_io.py. */
  st = tst_fixture("adam_odd.safetensors");
  CHECK(st && cls_safetensors_find(st, "theta0") && cls_safetensors_meta(st, "generator"), "python fixture readable");
  cls_safetensors_free(st);

  /* Malformed files. */
  char bad[512];
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  write_bytes(bad, "abc", 3);
  CHECK_INT(cls_safetensors_read(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "too short");
  CHECK_CONTAINS(err, bad);
  unsigned char lie[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
  write_bytes(bad, lie, sizeof lie);
  CHECK_INT(cls_safetensors_read(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "exceeds the file");
  CHECK_INT(cls_safetensors_read_header(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "exceeds the file");
  const char hdr[] = "{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
  unsigned char buf[128] = {0};
  buf[0] = (unsigned char)(sizeof hdr - 1);
  memcpy(buf + 8, hdr, sizeof hdr - 1);
  write_bytes(bad, buf, 8 + sizeof hdr - 1 + 8); /* only 8 of 16 data bytes */
  CHECK_INT(cls_safetensors_read(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "lies past the end of the data");
  CHECK_INT(cls_safetensors_read_header(bad, &st, err, sizeof err), CLS_ERR_IO); /* checked against the size */
  CHECK_CONTAINS(err, "lies past the end of the data");
  const char hdr2[] = "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}";
  memset(buf, 0, sizeof buf);
  buf[0] = (unsigned char)(sizeof hdr2 - 1);
  memcpy(buf + 8, hdr2, sizeof hdr2 - 1);
  write_bytes(bad, buf, 8 + sizeof hdr2 - 1 + 16);
  CHECK_INT(cls_safetensors_read(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "do not match its shape");
  snprintf(bad, sizeof bad, "%s/missing.safetensors", dir);
  CHECK_INT(cls_safetensors_read(bad, &st, err, sizeof err), CLS_ERR_IO);
  CHECK_CONTAINS(err, "cannot open");

  unlink(path);
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  unlink(bad);
  rmdir(dir);
  return check_finish("test_safetensors");
}
