/* SPDX-License-Identifier: MIT */
/*
 * gzip: whole buffers in and out of gzip with zlib, for the formats that carry gzip bodies (pprof
 * files, OTLP requests). The HTTP server's response compression streams and stays in
 * http_render.c (it is cancellable and charged to a memory budget).
 */
#ifndef EMBER_GZIP_H
#define EMBER_GZIP_H

#include <stddef.h>

#include "ember/core/base/sbuf.h"

/* Appends @len bytes of @data, gzip-compressed at @level (1-9; 0: zlib's default), to @out, which
 * stays NUL-terminated. 0, -EINVAL (a level out of range) or -ENOMEM. */
int gzip_compress(const void *data, size_t len, int level, struct sbuf *out);

/*
 * Appends the inflated content of @len bytes of @data to @out (NUL-terminated): gzip, several
 * members one after another as gunzip reads them, or a zlib stream. At most @max bytes: -E2BIG
 * past them. -EINVAL for a truncated or corrupt stream, with *@ret_reason (when not NULL) saying
 * which; -ENOMEM. On an error @out holds what was inflated before it.
 */
int gzip_inflate(const void *data, size_t len, size_t max, struct sbuf *out,
		 const char **ret_reason);

#endif
