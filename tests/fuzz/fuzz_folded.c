// SPDX-License-Identifier: MIT
/* libFuzzer target: the folded reader, one and two columns, then the writer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum folded_columns cols[] = { FOLDED_COLUMNS_AUTO, FOLDED_COLUMNS_TWO };
	size_t i;

	for (i = 0; i < 2; i++) {
		struct folded_read_opts opts = { .columns = cols[i], .max_depth = 64,
						 .rewrite = i ? folded_strip_hex : NULL };
		struct strtab *st = strtab__new();
		struct profile *p = st ? profile__new(st) : NULL;
		struct lineread *lr = lineread__new_mem(data, size, 256);
		struct sbuf sb = SBUF_INIT;

		if (p && lr && folded_read(lr, p, &opts, NULL, NULL) == 0)
			(void)folded_write(p, &sb);
		sbuf_fini(&sb);
		lineread__free(lr);
		profile__free(p);
		strtab__free(st);
	}
	return 0;
}
