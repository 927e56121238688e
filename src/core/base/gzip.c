// SPDX-License-Identifier: MIT
/* gzip: whole buffers through zlib (gzip.h). */
#include "ember/core/base/gzip.h"

#include <errno.h>
#include <stdint.h>
#include <zlib.h>

#define INFLATE_STEP (256u << 10) /* output room made per inflate() call */

int gzip_compress(const void *data, size_t len, int level, struct sbuf *out)
{
	z_stream zs = { 0 };
	size_t bound;
	int r;

	if (level < 0 || level > 9)
		return -EINVAL;
	if (len > UINT32_MAX) /* one deflate() call takes at most uInt bytes */
		return -ENOMEM;
	if (deflateInit2(&zs, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len) + 64;
	if (sbuf_grow(out, bound)) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out->buf + out->len;
	zs.avail_out = (uInt)bound;
	r = deflate(&zs, Z_FINISH);
	if (r == Z_STREAM_END) {
		out->len += zs.total_out;
		out->buf[out->len] = '\0';
	}
	deflateEnd(&zs);
	return r == Z_STREAM_END ? 0 : -ENOMEM;
}

static int fail(const char **ret_reason, const char *reason)
{
	if (ret_reason)
		*ret_reason = reason;
	return -EINVAL;
}

int gzip_inflate(const void *data, size_t len, size_t max, struct sbuf *out,
		 const char **ret_reason)
{
	z_stream zs = { 0 };
	size_t start = out->len, room;
	int r, err = 0;

	if (len > UINT32_MAX)
		return fail(ret_reason, "compressed body over 4 GiB");
	if (inflateInit2(&zs, 15 + 32) != Z_OK) /* gzip or zlib, by the header */
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	for (;;) {
		if (sbuf_grow(out, INFLATE_STEP)) {
			err = -ENOMEM;
			break;
		}
		room = out->cap - out->len - 1;
		if (room > UINT32_MAX)
			room = UINT32_MAX;
		zs.next_out = (Bytef *)out->buf + out->len;
		zs.avail_out = (uInt)room;
		r = inflate(&zs, Z_NO_FLUSH);
		out->len += room - zs.avail_out;
		out->buf[out->len] = '\0';
		if (out->len - start > max) {
			err = -E2BIG;
			break;
		}
		if (r == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			if (inflateReset(&zs) != Z_OK) { /* another gzip member follows */
				err = -ENOMEM;
				break;
			}
			continue;
		}
		if (r == Z_OK)
			continue;
		if (r == Z_BUF_ERROR && zs.avail_out == 0)
			continue; /* output full: more room next round */
		if (r == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		}
		err = fail(ret_reason, r == Z_BUF_ERROR ? "truncated gzip stream"
							: "corrupt gzip stream");
		break;
	}
	inflateEnd(&zs);
	return err;
}
