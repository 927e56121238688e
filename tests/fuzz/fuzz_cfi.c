// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an ELF image from memory (elf_memory) compiled into unwind rows
 * (cfi_table__new), the table's promises checked (cfi.h), then looked up.
 * Seeds (tests/fuzz/corpus/cfi/): hand-made .eh_frame images, a program built -O2
 * -fomit-frame-pointer (PLT, DRAP), one with only .debug_frame, a vDSO image.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libelf.h>

#include "ember/daemon/unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_opts o = {.max_rows = 1 << 20};
	const struct ember_unwind_row *rows;
	const struct cfi_stats *st;
	struct cfi_table *t;
	char *copy;
	size_t i, n;
	Elf *elf;

	elf_version(EV_CURRENT);
	copy = malloc(size ? size : 1); /* libelf wants a writable image */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	t = elf ? cfi_table__new(elf, NULL, &o) : NULL;
	if (t) {
		rows = cfi_table__rows(t, &n);
		st = cfi_table__stats(t);
		if (st->rows != n || st->bytes != n * sizeof(*rows) || (n && !rows))
			__builtin_trap();
		for (i = 0; i < n; i++) {
			const struct ember_unwind_row *r = &rows[i], *p = i ? &rows[i - 1] : NULL;

			/* sorted, strictly; merged; known types; the last row ends the CFI */
			if (p && (r->pc <= p->pc ||
				  (r->cfa_type == p->cfa_type && r->cfa_off == p->cfa_off &&
				   r->bp_type == p->bp_type && r->bp_off == p->bp_off)))
				__builtin_trap();
			if (r->cfa_type > EMBER_CFA_END || r->bp_type > EMBER_BP_AT_RBP)
				__builtin_trap();
			if (r->cfa_type == EMBER_CFA_NONE &&
			    (r->cfa_off < 0 || r->cfa_off >= CFI_NONE__COUNT))
				__builtin_trap();
			if (cfi_table__lookup(t, r->pc) != r)
				__builtin_trap();
		}
		if (n && rows[n - 1].cfa_type != EMBER_CFA_NONE)
			__builtin_trap();
		for (i = 0; i + 4 <= size && i < 4096; i += 4) {
			uint32_t a;

			memcpy(&a, data + i, 4);
			(void)cfi_table__lookup(t, a);
		}
		cfi_table__free(t);
	}
	elf_end(elf);
	free(copy);
	return 0;
}
