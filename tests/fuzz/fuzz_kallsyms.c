// SPDX-License-Identifier: MIT
/* libFuzzer target: the /proc/kallsyms parser and the sorted table built from it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ember/daemon/symbols/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k = ksyms__from_text((const char *)data, size, NULL);
	size_t i;

	if (!k)
		return 0;
	for (i = 0; i + 8 <= size; i += 8) {
		const char *mod;
		uint64_t a;
		int idx;

		memcpy(&a, data + i, 8);
		idx = ksyms__lookup(k, a, &mod);
		if (idx >= 0 && (ksyms__addr(k, idx) > a || !ksyms__name(k, idx)[0]))
			__builtin_trap();
	}
	ksyms__free(k);
	return 0;
}
