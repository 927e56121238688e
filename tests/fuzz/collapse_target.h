/* SPDX-License-Identifier: MIT */
/*
 * The body of the collapse parsers' libFuzzer targets (fuzz_collapse_<format>.c define
 * FUZZ_COLLAPSE_FORMAT and include this): the first byte picks the options; the rest is the
 * input, read with a small line bound (so long lines are exercised), parsed once as the format
 * and once auto-detected, each aggregated, written both ways and turned into a profile.
 */
#ifndef FUZZ_COLLAPSE_FORMAT
#error "define FUZZ_COLLAPSE_FORMAT before including collapse_target.h"
#endif

#include <stddef.h>
#include <stdint.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const uint8_t *data, size_t size, uint8_t flags, enum collapse_format fmt)
{
	struct collapse_opts opts = {
		.format = fmt,
		.pid = flags & 1,
		.tid = flags & 2,
		.kernel = flags & 4,
		.jit = flags & 8,
		.addrs = flags & 16,
		.event_filter = (flags & 32) ? "cycles" : NULL,
	};
	struct collapse_agg *a = collapse_agg__new();
	struct collapse *c = a ? collapse__new(&opts, collapse_agg_sample_cb, a) : NULL;
	struct lineread *lr = lineread__new_mem(data, size, 512);
	struct strtab *st = strtab__new();
	struct profile *p = st ? profile__new(st) : NULL;
	struct sbuf sb = SBUF_INIT;

	if (c && lr && p && !collapse__read(c, lr, "fuzz") && !collapse__finish(c)) {
		(void)collapse_agg__write(a, true, &sb);
		sbuf_reset(&sb);
		(void)collapse_agg__write(a, false, &sb);
		(void)collapse_agg__to_profile(a, p);
		(void)collapse__clean(c);
	}
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
	lineread__free(lr);
	collapse__free(c);
	collapse_agg__free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = 0;

	if (size > 0) {
		flags = data[0];
		data++;
		size--;
	}
	run(data, size, flags, FUZZ_COLLAPSE_FORMAT);
	run(data, size, flags, COLLAPSE_FORMAT_AUTO);
	(void)collapse_detect((const char *)data, size);
	return 0;
}
