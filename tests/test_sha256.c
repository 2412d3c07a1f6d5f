/* SHA-256 (engine/base/sha256.h) against the FIPS 180-2 test vectors: "abc", the 448-bit message and
 * one million 'a' (fed whole and in uneven pieces), plus the empty message; and the context is ready
 * for a new message after final. */
#include <stdlib.h>

#include "base/sha256.h"
#include "check.h"

static void hash_hex(const void *data, size_t n, char hex[65]) {
  cls_sha256 h;
  uint8_t digest[32];
  cls_sha256_init(&h);
  cls_sha256_update(&h, data, n);
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, hex);
}

#define CHECK_HEX(actual, expected) CHECK(!strcmp((actual), (expected)), "got %s\n    expected %s", (actual), (expected))

int main(void) {
  char hex[65];
  hash_hex("abc", 3, hex);
  CHECK_HEX(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK_INT(strlen(two_blocks) * 8, 448);
  hash_hex(two_blocks, strlen(two_blocks), hex);
  CHECK_HEX(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

  hash_hex("", 0, hex);
  CHECK_HEX(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  const size_t million = 1000000;
  static const char *million_a = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  char *a = malloc(million);
  CHECK(a != NULL, "malloc");
  if (a) {
    memset(a, 'a', million);
    hash_hex(a, million, hex);
    CHECK_HEX(hex, million_a);
    /* The same message in pieces that straddle the 64-byte blocks, and with empty updates between. */
    cls_sha256 h;
    uint8_t digest[32];
    cls_sha256_init(&h);
    static const size_t pieces[] = {1, 63, 64, 65, 0, 127, 3, 1000};
    size_t done = 0;
    for (int i = 0; done < million; i = (i + 1) % 8) {
      size_t n = pieces[i] < million - done ? pieces[i] : million - done;
      cls_sha256_update(&h, a + done, n);
      done += n;
    }
    cls_sha256_final(&h, digest);
    cls_sha256_hex(digest, hex);
    CHECK_HEX(hex, million_a);
    /* After final the context starts a new message. */
    cls_sha256_update(&h, "abc", 3);
    cls_sha256_final(&h, digest);
    cls_sha256_hex(digest, hex);
    CHECK_HEX(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    free(a);
  }
  return check_finish("test_sha256");
}
