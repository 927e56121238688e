// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the ember-samples reader, then everything a reader's output feeds: the
 * writer (which must read back to the same records), a heat map of the whole span and a range
 * profile of its middle, with and without the idle filter.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ember/core/render/heatmap.h"
#include "ember/core/render/heatmap_samples.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/samples.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(struct samples *s, struct strtab *st)
{
	struct samples_filter f;
	struct heatmap_opts o;
	struct heatmap hm = { 0 };
	struct profile *p = profile__new(st);
	struct sbuf sb = SBUF_INIT;
	uint64_t first = samples__first_ns(s), last = samples__last_ns(s);

	samples_filter_init(&f);
	heatmap_opts_init(&o);
	o.column_ns = 1000000000ULL;
	if (samples__nr(s) && heatmap_opts_fit(&o, first, last) == 0 && o.columns <= 4096 &&
	    heatmap_init(&hm, &o) == 0) {
		if (heatmap_add_samples(&hm, s, &f) == 0) {
			(void)heatmap_render_json(&hm, &sb);
			sbuf_reset(&sb);
			(void)heatmap_render_svg(&hm, NULL, &sb);
		}
		heatmap_fini(&hm);
	}
	if (p) {
		f.include_idle = true;
		f.comm = "app";
		(void)samples__range_profile(s, first + (last - first) / 4, last, &f, p);
		f.comm = NULL;
		f.pid = 1;
		(void)samples__range_profile(s, first, last + (last < UINT64_MAX), &f, p);
	}
	profile__free(p);
	sbuf_fini(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strtab *st = strtab__new();
	struct samples *s = st ? samples__new(st) : NULL, *s2 = NULL;
	struct samples_read_opts opts = { .max_depth = 64 };
	struct lineread *lr = lineread__new_mem(data, size, 512), *lr2 = NULL;
	struct sbuf sb = SBUF_INIT;

	if (!s || !lr || samples_read(lr, s, &opts, NULL, NULL))
		goto out;
	exercise(s, st);
	if (samples__write(s, &sb))
		goto out;
	/* the writer's output reads back to the same records */
	s2 = samples__new(st);
	lr2 = lineread__new_mem(sb.buf ? sb.buf : "", sb.len, 0);
	if (!s2 || !lr2 || samples_read(lr2, s2, NULL, NULL, NULL))
		goto out;
	if (samples__nr(s2) != samples__nr(s) || samples__total(s2) != samples__total(s))
		abort();
	for (size_t i = 0; i < samples__nr(s); i++)
		if (samples__time_ns(s, i) != samples__time_ns(s2, i) ||
		    samples__count(s, i) != samples__count(s2, i))
			abort();
out:
	sbuf_fini(&sb);
	lineread__free(lr);
	lineread__free(lr2);
	samples__free(s);
	samples__free(s2);
	strtab__free(st);
	return 0;
}
