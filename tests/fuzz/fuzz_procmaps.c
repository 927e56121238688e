// SPDX-License-Identifier: MIT
/* libFuzzer target: the /proc/PID/maps parser, whole texts and single lines. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ember/core/base/parse.h"
#include "ember/daemon/proc/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const struct procmaps_entry *e, void *ctx)
{
	size_t *n = ctx;
	size_t blen;
	const char *b = procmaps_basename(e, &blen);

	/* the path and base name lie inside the input */
	if (e->end < e->start || blen > e->path_len || (e->path_len && b < e->path))
		__builtin_trap();
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps_entry e;
	struct parse_error pe;
	unsigned long bad = 0;
	size_t n = 0;

	(void)procmaps_parse((const char *)data, size, check, &n, &bad);
	if (procmaps_parse_line((const char *)data, size, &e, &pe) == 0) {
		if (e.path_len && (e.path < (const char *)data ||
				   e.path + e.path_len > (const char *)data + size))
			__builtin_trap();
	} else if (!pe.reason) {
		__builtin_trap();
	}
	return 0;
}
