// SPDX-License-Identifier: MIT
/* libFuzzer target: ELF symbol tables read from memory (elfsym__open_mem), then looked up. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ember/daemon/elf/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym_opts o = { 0 };
	struct elfsym *e = elfsym__open_mem(data, size, &o);
	size_t i, n;

	if (!e)
		return 0;
	n = elfsym__count(e);
	for (i = 0; i < n; i++) {
		const char *name = elfsym__name(e, (int)i);
		uint64_t a = elfsym__addr(e, (int)i);

		/* every symbol has a name, and the table is sorted by address, one per address */
		if (!name || !*name || (i && a <= elfsym__addr(e, (int)i - 1)))
			__builtin_trap();
		if (elfsym__lookup(e, a) >= (int)n) /* a wrapped size may make it -ENOENT */
			__builtin_trap();
	}
	for (i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t a, v;
		int idx;

		memcpy(&a, data + i, 8);
		idx = elfsym__lookup(e, a);
		if (idx >= 0 && (size_t)idx >= n)
			__builtin_trap();
		(void)elfsym__file_to_vaddr(e, a, &v);
	}
	elfsym__free(e);
	return 0;
}
