// SPDX-License-Identifier: MIT
/* libFuzzer target: the pprof reader (gzip or plain protobuf), then the pprof and folded writers
 * on what it read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ember/core/formats/folded.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_read_opts o = { .sample_index = -1, .max_bytes = 4 << 20 };
	struct strtab *st = strtab__new();
	struct profile *p = st ? profile__new(st) : NULL;
	struct sbuf sb = SBUF_INIT;

	if (p && pprof_read(data, size, p, &o, NULL, NULL) == 0) {
		(void)folded_write(p, &sb);
		sbuf_reset(&sb);
		(void)pprof_write_profile(p, NULL, &sb);
	}
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
	return 0;
}
