/* TFRecord framing, the container of TensorFlow's event files: each record is
 *   uint64 length | uint32 masked CRC-32C of those 8 bytes | data[length] | uint32 masked CRC-32C of data
 * all little-endian, where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. CRC-32C (Castagnoli,
 * the iSCSI polynomial of RFC 3720) comes from ISA-L's crc32_iscsi. Also a reader of a buffer of
 * records, which stops without error at a truncated last record (a writer that died mid-record) and
 * reports a damaged one. Host only. */
#ifndef CLS_TFRECORD_H
#define CLS_TFRECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clspeech/base.h"

/* The standard CRC-32C of data[0 .. n) (initial value and final XOR 0xffffffff). */
uint32_t cls_crc32c(const void *data, size_t n);
/* TensorFlow's masked form of a CRC, stored in records so that CRCs of CRCs stay well spread. */
uint32_t cls_crc32c_mask(uint32_t crc);

/* Bytes of framing around a record's data: 12 before, 4 after. */
enum { CLS_TFRECORD_HEADER = 12, CLS_TFRECORD_FOOTER = 4 };

/* The 12 header bytes for a record of n data bytes, and the 4 footer bytes for its data. */
void cls_tfrecord_header(uint64_t n, unsigned char header[CLS_TFRECORD_HEADER]);
void cls_tfrecord_footer(const void *data, size_t n, unsigned char footer[CLS_TFRECORD_FOOTER]);

/* Writes one record to f (header, data, footer; buffered by stdio). CLS_ERR_IO when fwrite fails. */
cls_status cls_tfrecord_write(FILE *f, const void *data, size_t n);

typedef enum cls_tfrecord_read {
  CLS_TFRECORD_RECORD = 1, /* *data, *n: the next record; *pos moved past it */
  CLS_TFRECORD_END = 0,    /* no whole record left: the end, or a truncated last record (ignored) */
  CLS_TFRECORD_DAMAGED = -1 /* a CRC does not match: the bytes at *pos are not a record */
} cls_tfrecord_read;

/* The record at buf[*pos ..] of a buffer of len bytes. */
cls_tfrecord_read cls_tfrecord_next(const unsigned char *buf, size_t len, size_t *pos, const unsigned char **data,
                                    size_t *n);

#endif
