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
  char path[512];
  cls_error err;
  snprintf(path, sizeof path, "%s/a.safetensors", dir);

  float w[6] = {1, 2, 3, 4, 5, -6.5f};
  int32_t steps[1] = {42};
  cls_tensor_desc t[2] = {{"layer_1/weights", CLS_F32, 2, {2, 3}, w}, {"global_step", CLS_I32, 0, {0}, steps}};
  const char *meta[] = {"epoch", "3", "note", "quote \" and \\ back"};
  CHECK_INT(cls_safetensors_write(path, t, 2, meta, 2, &err), CLS_OK);
  cls_safetensors *st = NULL;
  CHECK_INT(cls_safetensors_read(path, &st, &err), CLS_OK);
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
  CHECK_INT(cls_safetensors_read_header(path, &st, &err), CLS_OK);
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
  CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "too short");
  CHECK_CONTAINS(err.text, bad);
  unsigned char lie[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
  write_bytes(bad, lie, sizeof lie);
  CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "exceeds the file");
  CHECK_INT(cls_safetensors_read_header(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "exceeds the file");
  const char hdr[] = "{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
  unsigned char buf[128] = {0};
  buf[0] = (unsigned char)(sizeof hdr - 1);
  memcpy(buf + 8, hdr, sizeof hdr - 1);
  write_bytes(bad, buf, 8 + sizeof hdr - 1 + 8); /* only 8 of 16 data bytes */
  CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "lies past the end of the data");
  CHECK_INT(cls_safetensors_read_header(bad, &st, &err), CLS_ERR_IO); /* checked against the size */
  CHECK_CONTAINS(err.text, "lies past the end of the data");
  const char hdr2[] = "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}";
  memset(buf, 0, sizeof buf);
  buf[0] = (unsigned char)(sizeof hdr2 - 1);
  memcpy(buf + 8, hdr2, sizeof hdr2 - 1);
  write_bytes(bad, buf, 8 + sizeof hdr2 - 1 + 16);
  CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "do not match its shape");
  snprintf(bad, sizeof bad, "%s/missing.safetensors", dir);
  CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "cannot open");

  /* Hostile headers (issue 15): a header ending the file on a digit is read within its bytes (ASan
   * caught strtoll reading past them); a shape whose element count passes 2^63 is refused, not
   * wrapped to 0 bytes; a folder is not read as a file of 2^63 bytes; a name twice is refused. */
  const char *hostile[][2] = {
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4", "expected"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}",
       "do not match its shape"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,0]}}", "too large"},
      {"{\"x\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
       "\"x\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", "appears twice"},
      {"{\"\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", "empty"}};
  snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
  for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
    const size_t hl = strlen(hostile[i][0]);
    unsigned char *h = calloc(1, 8 + hl);
    h[0] = (unsigned char)hl;
    memcpy(h + 8, hostile[i][0], hl);
    write_bytes(bad, h, 8 + hl);
    CHECK_INT(cls_safetensors_read(bad, &st, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, hostile[i][1]);
    CHECK_CONTAINS(err.text, bad);
    CHECK_INT(cls_safetensors_parse(h, 8 + hl, "in-memory", &st, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, hostile[i][1]);
    free(h);
  }
  cls_tensor_info huge = {.ndim = 2, .shape = {(int64_t)1 << 32, (int64_t)1 << 32}};
  CHECK_INT(cls_tensor_elements(&huge), -1);
  CHECK_INT(cls_safetensors_read(dir, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "not a regular file");
  CHECK_INT(cls_safetensors_read_header(dir, &st, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "not a regular file");

  unlink(path);
  unlink(bad);
  rmdir(dir);
  return check_finish("test_safetensors");
}
