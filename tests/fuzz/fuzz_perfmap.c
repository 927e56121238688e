// SPDX-License-Identifier: MIT
/* libFuzzer target: the perf-map parser and table, fed in two pieces as a growing file is. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ember/daemon/symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__new();
	const char *text = (const char *)data;
	size_t cut = size ? data[0] % (size + 1) : 0, used = 0, used2 = 0, i;
	unsigned long bad = 0;
	char buf[8192];

	if (!pm)
		return 0;
	if (perfmap__add_text(pm, text, cut, &used, &bad) == 0 && used <= cut &&
	    size - used <= sizeof(buf)) {
		/* the unconsumed tail comes again with the rest, as the symbolizer does */
		memcpy(buf, text + used, size - used);
		(void)perfmap__add_text(pm, buf, size - used, &used2, &bad);
		if (used2 > size - used)
			__builtin_trap();
	}
	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t a;
		int idx;

		memcpy(&a, data + i, 8);
		idx = perfmap__lookup(pm, a);
		if (idx >= 0) {
			size_t len;
			const char *n = perfmap__name(pm, idx, &len);

			if (strlen(n) != len || !len)
				__builtin_trap();
		}
	}
	perfmap__free(pm);
	return 0;
}
