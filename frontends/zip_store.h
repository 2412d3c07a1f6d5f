/* A zip archive of whole files, stored uncompressed (`clspeech train --export_zip`): any unzip or
 * Python's zipfile reads it. */
#ifndef CLS_ZIP_STORE_H
#define CLS_ZIP_STORE_H

#include "clspeech/base.h"

/* Writes zip_path (by the output rule: a FIFO or device written as such) holding dir/names[i] for i in
 * 0 .. n-1 under the names names[i], each stored as it is. Each file and the archive must stay under
 * 4 GiB (no zip64). CLS_ERR_IO naming the file on a read or write failure, or when a file changes while
 * it is archived; CLS_ERR_INVALID_ARGUMENT for a file or archive too large. */
cls_status zip_store_write(const char *zip_path, const char *dir, const char *const *names, int n, cls_error *err);

#endif
