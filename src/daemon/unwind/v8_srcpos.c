// SPDX-License-Identifier: MIT
/*
 * V8's source position table: the bytes a Code object keeps (its source_position_table
 * ByteArray) that map each position in its machine code to a position in the source, as
 * src/codegen/source-position-table.cc writes them (V8 10.2 to 13.6 alike). Each entry is two
 * numbers, deltas from the entry before: the code offset, its sign saying whether the position
 * is a statement (non-negative: yes; negative: -offset - 1), then the source position (V8's
 * SourcePosition, 64 bits). Each number is zigzag-coded (value << 1 ^ value >> 63) and written
 * 7 bits a byte, least significant first, the high bit set on every byte but the last.
 * The bytes come from another process: every read is bounded, and a table that does not decode
 * is refused, never read past its end.
 */
#include "ember/daemon/unwind/v8.h"

#include <errno.h>

/* The next zigzag-coded number at *@at, or -EINVAL past @len or past 64 bits. */
static int vlq(const uint8_t *tab, size_t len, size_t *at, int64_t *ret)
{
	uint64_t u = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*at >= len || shift > 63)
			return -EINVAL;
		b = tab[(*at)++];
		u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*ret = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return 0;
}

int v8_srcpos_lookup(const uint8_t *tab, size_t len, uint32_t pc_off, uint64_t *pos)
{
	int64_t code = 0, src = 0, dc, ds;
	size_t at = 0;
	bool found = false;

	while (at < len) {
		if (vlq(tab, len, &at, &dc) || vlq(tab, len, &at, &ds))
			return -EINVAL;
		if (dc < 0)
			dc = -(dc + 1); /* not a statement */
		if (dc > UINT32_MAX)
			return -EINVAL;
		code += dc; /* both at most 2^32: no overflow */
		src = (int64_t)((uint64_t)src + (uint64_t)ds);
		if (code > UINT32_MAX)
			return -EINVAL;
		if ((uint64_t)code > pc_off)
			break; /* the entries' code offsets only grow */
		*pos = (uint64_t)src;
		found = true;
	}
	return found ? 0 : -ENOENT;
}
