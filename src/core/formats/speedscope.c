// SPDX-License-Identifier: MIT
/* speedscope: profiles as speedscope's file format (sampled profile). */
#include "ember/core/formats/speedscope.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/array.h"

struct ss_sample {
	size_t off, n;		/* into w->stacks */
	double weight;
};

struct speedscope_writer {
	const struct strtab *st;
	struct speedscope_opts opts;
	double ns_per_sample;	/* 0: weights are counts */
	uint32_t *frame_of_id;	/* strtab id -> shared.frames index + 1, 0: not yet */
	size_t frame_of_id_cap;
	uint32_t *frame_ids;	/* shared.frames index -> strtab id */
	size_t nr_frames, frames_cap;
	uint32_t *stacks;	/* the samples' frame indices, back to back */
	size_t nr_stack_entries, stacks_cap;
	struct ss_sample *samples;
	size_t nr_samples, samples_cap;
	double total;
};

struct speedscope_writer *speedscope_writer__new(const struct strtab *st,
						 const struct speedscope_opts *opts)
{
	struct speedscope_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->st = st;
	if (opts)
		w->opts = *opts;
	if (w->opts.counts_ns)
		w->ns_per_sample = 1; /* weights in ns: the counts themselves */
	else if (w->opts.freq_hz)
		w->ns_per_sample = 1e9 / (double)w->opts.freq_hz;
	return w;
}

void speedscope_writer__free(struct speedscope_writer *w)
{
	if (!w)
		return;
	free(w->frame_of_id);
	free(w->frame_ids);
	free(w->stacks);
	free(w->samples);
	free(w);
}

static int frame_index(struct speedscope_writer *w, uint32_t id, uint32_t *ret)
{
	size_t old = w->frame_of_id_cap;

	if (array_grow((void **)&w->frame_of_id, &w->frame_of_id_cap, (size_t)id + 1,
		       sizeof(*w->frame_of_id), 64))
		return -ENOMEM;
	if (w->frame_of_id_cap > old)
		memset(w->frame_of_id + old, 0, (w->frame_of_id_cap - old) * sizeof(*w->frame_of_id));
	if (!w->frame_of_id[id]) {
		if (array_grow((void **)&w->frame_ids, &w->frames_cap, w->nr_frames + 1,
			       sizeof(*w->frame_ids), 64))
			return -ENOMEM;
		w->frame_ids[w->nr_frames++] = id;
		w->frame_of_id[id] = (uint32_t)w->nr_frames;
	}
	*ret = w->frame_of_id[id] - 1;
	return 0;
}

int speedscope_writer__add(struct speedscope_writer *w, const uint32_t *frames, size_t n,
			   double count)
{
	double weight;
	struct ss_sample *last;
	size_t i;

	if (!isfinite(count) || count < 0)
		return -EINVAL;
	if (count == 0)
		return 0; /* speedscope drops zero weights too */
	weight = w->ns_per_sample ? count * w->ns_per_sample : count;
	if (array_grow((void **)&w->stacks, &w->stacks_cap, w->nr_stack_entries + n,
		       sizeof(*w->stacks), 64))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (frame_index(w, frames[i], &w->stacks[w->nr_stack_entries + i]))
			return -ENOMEM;
	last = w->nr_samples ? &w->samples[w->nr_samples - 1] : NULL;
	if (last && last->n == n &&
	    !memcmp(&w->stacks[last->off], &w->stacks[w->nr_stack_entries], n * sizeof(*w->stacks))) {
		last->weight += weight;
		w->total += weight;
		return 0;
	}
	if (array_grow((void **)&w->samples, &w->samples_cap, w->nr_samples + 1,
		       sizeof(*w->samples), 64))
		return -ENOMEM;
	w->samples[w->nr_samples++] = (struct ss_sample){ .off = w->nr_stack_entries, .n = n,
							  .weight = weight };
	w->nr_stack_entries += n;
	w->total += weight;
	return 0;
}

static void add_json_str(struct sbuf *sb, const char *s)
{
	sbuf_addc(sb, '"');
	sbuf_add_json(sb, s, strlen(s));
	sbuf_addc(sb, '"');
}

int speedscope_writer__finish(struct speedscope_writer *w, struct sbuf *out)
{
	const char *name = w->opts.name ? w->opts.name : "ember";
	size_t i, k;

	sbuf_adds(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		       "\"exporter\":\"ember\",\"name\":");
	add_json_str(out, name);
	sbuf_adds(out, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
	for (i = 0; i < w->nr_frames; i++) {
		uint32_t id = w->frame_ids[i];

		sbuf_adds(out, i ? ",{\"name\":\"" : "{\"name\":\"");
		sbuf_add_json(out, strtab__str(w->st, id), strtab__len(w->st, id));
		sbuf_adds(out, "\"}");
	}
	sbuf_adds(out, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	add_json_str(out, name);
	sbuf_addf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
		  w->ns_per_sample ? "nanoseconds" : "none");
	sbuf_add_count(out, w->total);
	sbuf_adds(out, ",\"samples\":[");
	for (i = 0; i < w->nr_samples; i++) {
		const struct ss_sample *s = &w->samples[i];

		sbuf_adds(out, i ? ",[" : "[");
		for (k = 0; k < s->n; k++) {
			if (k)
				sbuf_addc(out, ',');
			sbuf_addu(out, w->stacks[s->off + k]);
		}
		sbuf_addc(out, ']');
	}
	sbuf_adds(out, "],\"weights\":[");
	for (i = 0; i < w->nr_samples; i++) {
		if (i)
			sbuf_addc(out, ',');
		sbuf_add_count(out, w->samples[i].weight);
	}
	sbuf_adds(out, "]}]}\n");
	return sbuf_error(out);
}

int speedscope_write_profile(const struct profile *p, const struct speedscope_opts *opts,
			     struct sbuf *out)
{
	struct speedscope_writer *w = speedscope_writer__new(profile__strtab(p), opts);
	size_t *order = profile__sorted(p);
	size_t i, n;
	int err = 0;

	if (!w || !order) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < profile__nr_stacks(p) && !err; i++) {
		const uint32_t *f = profile__stack(p, order[i], &n);

		err = speedscope_writer__add(w, f, n, profile__count(p, order[i]));
	}
	if (!err)
		err = speedscope_writer__finish(w, out);
out:
	free(order);
	speedscope_writer__free(w);
	return err;
}
