/* The model package's layout on disk (see clspeech/package.h), shared by its writer and its reader:
 * the header's and the table entry's fields at their byte offsets, the section names, and the
 * checksum. The engine only; the fuzz target uses the checksum to make mutated inputs pass it. */
#ifndef CLS_PACKAGE_FORMAT_H
#define CLS_PACKAGE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define PKG_MAGIC "\x89" "CLSM\r\n\x1a"
#define PKG_MAGIC_BYTES 8
#define PKG_HEADER_BYTES 64
#define PKG_ENTRY_BYTES 128
#define PKG_ALIGN 64
#define PKG_NAME_BYTES 80
#define PKG_MAX_SECTIONS 64

/* header field offsets */
#define PKG_H_VERSION 8
#define PKG_H_HEADER_BYTES 12
#define PKG_H_N_SECTIONS 16
#define PKG_H_ENTRY_BYTES 20
#define PKG_H_FILE_SIZE 24
#define PKG_H_CHECKSUM 32
#define PKG_CHECKSUM_BYTES 32

/* table entry field offsets */
#define PKG_E_DTYPE 80
#define PKG_E_NDIM 84
#define PKG_E_SHAPE 88
#define PKG_E_OFFSET 104
#define PKG_E_SIZE 112

enum { PKG_DTYPE_BYTES = 0, PKG_DTYPE_F32 = 1 };

#define PKG_SECTION_META "meta"
#define PKG_SECTION_ALPHABET "alphabet"
#define PKG_SECTION_SCORER "scorer"
/* The binary language model's magic bytes (decode/lm_binary.h), which a scorer section starts with. */
#define PKG_LM_MAGIC "\x89" "CLSLM\r\n"
#define PKG_LM_MAGIC_BYTES 8

/* SHA-256 of the file's `size` bytes with the checksum field read as zeros (size >= PKG_HEADER_BYTES). */
void cls_package_checksum(const void *file, size_t size, uint8_t out[PKG_CHECKSUM_BYTES]);

/* The file name an opened package's errors give. */
struct cls_package;
const char *cls_package_name(const struct cls_package *pkg);

/* true on a little-endian host (the format's byte order: floats are copied as they are). */
int cls_package_host_le(void);

#endif
