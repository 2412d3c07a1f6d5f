/* The check every test that reads the repository's data/ (CLS_TEST_DATA) makes before its first case:
 * each file data/SHA256SUMS lists is there and readable. A clone or build without its data then fails
 * naming each missing file, never in a crash of whichever case reads it first. The list is the
 * manifest's (one source of truth, which the `data_files` CTest test also checks by digest).
 * Include after check.h. */
#ifndef CLS_DATA_PRESENT_H
#define CLS_DATA_PRESENT_H

#include <stdio.h>
#include <string.h>

#ifndef CLS_TEST_DATA
#error "CLS_TEST_DATA must name the repository's data folder"
#endif

/* 1 when every file of the manifest opens; else 0, each missing one counted as a failed check. */
static inline int data_present(void) {
  const char *manifest = CLS_TEST_DATA "/SHA256SUMS";
  FILE *m = fopen(manifest, "r");
  CHECK(m != NULL, "the test data's manifest %s cannot be read: this checkout has no data/ folder, or the build "
                   "was configured with another CLSPEECH_TEST_DATA", manifest);
  if (!m) return 0;
  int missing = 0, listed = 0;
  char line[1024], path[1200];
  while (fgets(line, sizeof line, m)) {
    char *name = strstr(line, "  "); /* sha256sum's "DIGEST  NAME" */
    if (!name) continue;
    name += 2;
    name[strcspn(name, "\r\n")] = '\0';
    snprintf(path, sizeof path, "%s/%s", CLS_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    listed++;
    CHECK(f != NULL, "test data missing: %s (listed in %s)", path, manifest);
    if (f) fclose(f);
    else missing++;
  }
  fclose(m);
  CHECK(listed > 0, "the test data's manifest %s lists no file", manifest);
  return missing == 0 && listed > 0;
}

#endif
