/* The PoCL binary check on binaries written here byte by byte in PoCL's layout (versions 9 to 12):
 * a whole one is sound; the one that aborted CI (a root entry of 0 bytes: program.bc missing when
 * PoCL read its cache back) and every other defect PoCL asserts on or cannot run are broken; every
 * truncation is caught without reading past the end; other formats and versions are left unchecked.
 * The real binaries of this machine's PoCL are checked by test_kernel_cache. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "device/pocl_binary_check.h"

typedef struct buf {
  unsigned char b[4096];
  size_t n;
} buf;

static void put(buf *w, const void *p, size_t n) {
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void put_le(buf *w, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void put_le_at(buf *w, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) w->b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void put_file(buf *w, const char *name, const char *content) {
  put_le(w, strlen(name), 4);
  put(w, name, strlen(name));
  put_le(w, strlen(content), 4);
  put(w, content, strlen(content));
}

/* What to build: each field can be spoiled on its own. */
typedef struct recipe {
  uint32_t version;
  uint64_t flags;
  int root_entries;        /* the count in the header */
  int root_written;        /* root entries actually written */
  bool empty_root;         /* root entry 1 of 0 bytes */
  const char *bc_name;     /* "/program.bc" */
  const char *bc_content;  /* the bitcode */
  const char *kernel_name; /* the first kernel's */
  const char *file_name;   /* the first kernel's one file */
  const char *file_content;
  int64_t record_extra;    /* added to the first kernel's record size */
  int64_t files_extra;     /* added to its files' size */
  bool scope_vars_field;   /* write the u64 of program-scope variables */
  bool trailing_byte;
} recipe;

static recipe good(uint32_t version) {
  recipe r = {version, 4ull << 32, 1, 1, false, "/program.bc", "BC\xc0\xde bitcode", "gemm_pack_b",
              "/gemm_pack_b/0-0-0/gemm_pack_b.so", "\x7f" "ELF", 0, 0, false, false};
  return r;
}

static void build(const recipe *r, buf *w) {
  w->n = 0;
  put(w, "poclbin", 8);
  put_le(w, 0x02ee5be95d307b0cull, 8);
  put_le(w, r->version, 4);
  put_le(w, 2, 4); /* kernels */
  put_le(w, r->flags, 8);
  put_le(w, (uint64_t)r->root_entries, 4);
  put(w, "DK/IOELLIOBLOLKNFANANNBBIGLCJNEMBNOCEGDC", 41);
  if (r->scope_vars_field) put_le(w, 0, 8);
  for (int i = 0; i < r->root_written; i++) {
    size_t size_at = w->n;
    put_le(w, 0, 8);
    if (i == 0 && r->empty_root) continue;
    size_t begin = w->n;
    if (i == 0)
      put_file(w, r->bc_name, r->bc_content);
    else
      put_file(w, "/.gvar_init/x.so", "so");
    put_le_at(w, size_at, w->n - begin, 8);
  }
  for (int k = 0; k < 2; k++) {
    const char *name = k == 0 ? r->kernel_name : "ctc_alpha";
    size_t start = w->n;
    put_le(w, 0, 8);
    put_le(w, 0, 8);
    put_le(w, 9, 4);
    put_le(w, strlen(name), 4);
    put(w, name, strlen(name));
    put(w, "metadata:", 9); /* argument info and the rest PoCL keeps here; the check steps over it */
    size_t files_begin = w->n;
    if (k == 0) put_file(w, r->file_name, r->file_content); /* the second kernel has no files */
    uint64_t record = w->n - start, files = w->n - files_begin;
    if (k == 0) {
      record = (uint64_t)((int64_t)record + r->record_extra);
      files = (uint64_t)((int64_t)files + r->files_extra);
    }
    put_le_at(w, start, record, 8);
    put_le_at(w, start + 8, files, 8);
  }
  if (r->trailing_byte) w->b[w->n++] = 0;
}

static cls_pocl_binary_verdict verdict(const recipe *r, cls_error *why) {
  buf w;
  build(r, &w);
  /* an exact-size copy, so that AddressSanitizer sees any read past the end */
  unsigned char *copy = malloc(w.n);
  memcpy(copy, w.b, w.n);
  cls_pocl_binary_verdict v = cls_pocl_binary_check(copy, w.n, why);
  free(copy);
  return v;
}

#define EXPECT_BROKEN(r, needle)                                                                    \
  do {                                                                                              \
    cls_error why_;                                                                                 \
    CHECK_INT(verdict(&(r), &why_), CLS_POCL_BINARY_BROKEN);                                        \
    CHECK_CONTAINS(why_.text, needle);                                                              \
    CHECK_INT(why_.status, CLS_ERR_IO);                                                             \
  } while (0)

int main(void) {
  cls_error why;
  for (uint32_t v = 9; v <= 12; v++) {
    recipe r = good(v);
    CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "version %u: a whole binary is sound (%s)", v, why.text);
    CHECK_INT(why.text[0], '\0');
  }

  /* The CI abort: PoCL 3.1 read its cache while another process rewrote program.bc. */
  recipe r = good(9);
  r.empty_root = true;
  EXPECT_BROKEN(r, "root entry 1 is empty: program.bc was missing");
  r = good(9);
  r.root_entries = r.root_written = 0;
  EXPECT_BROKEN(r, "no root entry");
  r = good(9);
  r.bc_content = "";
  EXPECT_BROKEN(r, "file 1 (/program.bc) is empty");
  r = good(10);
  r.bc_content = "";
  EXPECT_BROKEN(r, "no program.bc among the root entries");
  r = good(9);
  r.bc_name = "/other.bc";
  EXPECT_BROKEN(r, "no program.bc among the root entries");
  r = good(9);
  r.root_entries = 2; /* claims a second entry it does not have: the kernels are read as one */
  CHECK_INT(verdict(&r, &why), CLS_POCL_BINARY_BROKEN);
  r = good(9);
  r.root_entries = r.root_written = 2;
  CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "two root entries (%s)", why.text);

  /* Kernels: empty files are an assert in version 9, an empty file created in later ones. */
  r = good(9);
  r.file_content = "";
  EXPECT_BROKEN(r, "kernel 1: file 1 (/gemm_pack_b/0-0-0/gemm_pack_b.so) is empty");
  r = good(11);
  r.file_content = "";
  CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "version 11: an empty kernel file (%s)", why.text);
  r = good(9);
  r.file_name = "";
  EXPECT_BROKEN(r, "kernel 1: file 1 has no name");
  r = good(9);
  r.kernel_name = "";
  EXPECT_BROKEN(r, "kernel 1 has no name");
  r = good(9);
  r.file_name = "/../../.bashrc";
  EXPECT_BROKEN(r, "outside the program's folder");
  r = good(9);
  r.file_name = "/gemm/..";
  EXPECT_BROKEN(r, "outside the program's folder");
  r = good(9);
  r.file_name = "/gemm/a..b/..c";
  CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "dots inside names are names (%s)", why.text);
  /* Names in messages: at most 64 bytes, printable. */
  r = good(9);
  char long_name[160];
  snprintf(long_name, sizeof long_name, "/%0100d/../\x01", 7);
  r.file_name = long_name;
  char shown[100];
  snprintf(shown, sizeof shown, "(/%063d...) names a place outside", 0); /* its first 64 bytes */
  EXPECT_BROKEN(r, shown);
  r = good(9);
  r.file_name = "/a\tb/\x7f.so";
  r.file_content = "";
  EXPECT_BROKEN(r, "file 1 (/a?b/?.so) is empty");
  r = good(9);
  r.record_extra = 1000;
  EXPECT_BROKEN(r, "does not fit");
  r = good(9);
  r.record_extra = -100;
  EXPECT_BROKEN(r, "does not fit");
  r = good(9);
  r.files_extra = 1000;
  EXPECT_BROKEN(r, "does not fit");
  r = good(9);
  r.files_extra = -3; /* the files start inside the metadata, and no longer parse */
  CHECK_INT(verdict(&r, &why), CLS_POCL_BINARY_BROKEN);
  r = good(9);
  r.trailing_byte = true;
  EXPECT_BROKEN(r, "1 bytes follow the last of 2 kernels");

  /* The u64 of program-scope variables follows the hash from version 10 when flag bit 1 says so. */
  r = good(12);
  r.flags |= 2;
  r.scope_vars_field = true;
  CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "version 12 with program-scope variables (%s)", why.text);
  r.scope_vars_field = false;
  CHECK_INT(verdict(&r, &why), CLS_POCL_BINARY_BROKEN);
  r = good(9);
  r.flags |= 2; /* version 9 never wrote the field */
  CHECK(verdict(&r, &why) == CLS_POCL_BINARY_SOUND, "version 9 ignores flag bit 1 (%s)", why.text);

  /* Every truncation of a whole binary is broken (or, inside the magic, not PoCL's), never sound. */
  r = good(9);
  buf w;
  build(&r, &w);
  int sound_cuts = 0, unchecked_cuts = 0;
  for (size_t n = 0; n < w.n; n++) {
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, w.b, n);
    cls_pocl_binary_verdict v = cls_pocl_binary_check(copy, n, &why);
    sound_cuts += v == CLS_POCL_BINARY_SOUND;
    unchecked_cuts += v == CLS_POCL_BINARY_UNCHECKED;
    free(copy);
  }
  CHECK_INT(sound_cuts, 0);
  CHECK_INT(unchecked_cuts, 8); /* 0 to 7 bytes: no whole magic */

  /* Not checked: other formats, other versions; a NULL `why` is allowed. */
  static const unsigned char elf[] = "\x7f" "ELF\x02\x01\x01";
  CHECK_INT(cls_pocl_binary_check(elf, sizeof elf, &why), CLS_POCL_BINARY_UNCHECKED);
  CHECK_INT(cls_pocl_binary_check(NULL, 0, &why), CLS_POCL_BINARY_UNCHECKED);
  r = good(8);
  CHECK_INT(verdict(&r, &why), CLS_POCL_BINARY_UNCHECKED);
  r = good(13);
  CHECK_INT(verdict(&r, &why), CLS_POCL_BINARY_UNCHECKED);
  r = good(9);
  r.empty_root = true;
  build(&r, &w);
  CHECK_INT(cls_pocl_binary_check(w.b, w.n, NULL), CLS_POCL_BINARY_BROKEN);
  CHECK_INT(cls_pocl_binary_check(w.b, w.n, &why), CLS_POCL_BINARY_BROKEN);
  CHECK_INT(why.status, CLS_ERR_IO);
  return check_finish("test_pocl_binary_check");
}
