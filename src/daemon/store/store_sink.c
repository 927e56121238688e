// SPDX-License-Identifier: MIT
/* store_sink: the live ingest into the store (include/ember/daemon/store/store_sink.h). */
#include "ember/daemon/store/store_sink.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/store/store.h"

#define MAX_FRAMES 1024

struct store_sink {
	struct store *store;
	const struct strtab *names;
	struct frame_memo memo;
	int64_t real_off_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct store_sample *batch;
	size_t batch_cap;
	uint32_t frames[MAX_FRAMES];
};

struct store_sink *store_sink__new(struct store *store, const struct strtab *names)
{
	struct store_sink *k = calloc(1, sizeof(*k));

	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	k->store = store;
	k->names = names;
	k->real_off_ns = real_minus_mono_ns();
	return k;
}

void store_sink__free(struct store_sink *k)
{
	if (!k)
		return;
	frame_memo__fini(&k->memo);
	free(k->batch);
	free(k);
}

void store_sink__set_clock_offset(struct store_sink *k, int64_t real_minus_mono_ns)
{
	k->real_off_ns = real_minus_mono_ns;
}

int frame_memo__intern(struct frame_memo *m, struct store *store, const struct strtab *names,
		       const uint32_t *ids, size_t n, uint32_t *ret)
{
	uint64_t comp = store__compactions(store), gen = strtab__generation(names);
	size_t i, old;
	int r;

	if (comp != m->compactions || gen != m->names_gen) {
		/* the store renumbered its frames, or the names were renewed: forget the mapping
		 * (after a renewal, the map's size too: the ids start again from 0) */
		if (gen != m->names_gen) {
			free(m->map);
			m->map = NULL;
			m->cap = 0;
		}
		for (i = 0; i < m->cap; i++)
			m->map[i] = -1;
		m->compactions = comp;
		m->names_gen = gen;
	}
	for (i = 0; i < n; i++) {
		if (ids[i] >= m->cap) {
			old = m->cap;
			if (array_grow((void **)&m->map, &m->cap, (size_t)ids[i] + 1,
				       sizeof(*m->map), 4096))
				return -ENOMEM;
			while (old < m->cap)
				m->map[old++] = -1;
		}
		r = m->map[ids[i]];
		if (r < 0) {
			r = store__intern_frame(store, strtab__str(names, ids[i]),
						strtab__len(names, ids[i]));
			if (r < 0)
				return r;
			m->map[ids[i]] = r;
		}
		ret[i] = (uint32_t)r;
	}
	return 0;
}

void frame_memo__fini(struct frame_memo *m)
{
	free(m->map);
	*m = (struct frame_memo){ 0 };
}

int store_sink__put(const struct ingest_stack *st, void *ctx)
{
	struct store_sink *k = ctx;
	const struct sampler_group *g = st->g;
	size_t total = g->nr_times + g->untimed, i, n = st->nr_frames;
	uint64_t now_real;
	int id;

	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	id = frame_memo__intern(&k->memo, k->store, k->names, st->frames, n, k->frames);
	if (id < 0)
		return id;
	/* the ingest's flags are the store's (same bits, checked below) */
	id = store__intern_stack(k->store, k->frames, n, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	if (array_grow((void **)&k->batch, &k->batch_cap, total, sizeof(*k->batch), 64))
		return -ENOMEM;
	now_real = real_ns();
	for (i = 0; i < total; i++) {
		struct store_sample *x = &k->batch[i];

		*x = (struct store_sample){
			.time_ns = i < g->nr_times
				       ? (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns)
				       : now_real,
			.stack_id = (uint32_t)id,
			.pid = g->pid,
			.tid = g->tid,
			.cpu = i < g->nr_times ? g->cpus[i] : UINT32_MAX,
			.count = 1,
			.cgroup_id = g->cgroup_id,
		};
		memcpy(x->comm, g->comm, sizeof(x->comm));
	}
	return store__append(k->store, k->batch, total);
}

_Static_assert((unsigned int)INGEST_STACK_IDLE == (unsigned int)STORE_STACK_IDLE &&
		   (unsigned int)INGEST_STACK_USER_MISSING ==
		       (unsigned int)STORE_STACK_USER_MISSING &&
		   (unsigned int)INGEST_STACK_KERN_MISSING ==
		       (unsigned int)STORE_STACK_KERN_MISSING &&
		   (unsigned int)INGEST_STACK_TRUNCATED == (unsigned int)STORE_STACK_TRUNCATED,
	       "ingest and store stack flags must agree");
