// SPDX-License-Identifier: MIT
/* offcpu_sink: off-CPU events into their store (include/ember/daemon/store/offcpu_sink.h). */
#include "ember/daemon/store/offcpu_sink.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/types.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/errbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/store/store.h"

#define MAX_FRAMES 1024

/* The root frame of each kind: the blocked state, as flamegraph.pl users read it. */
static const char *const state_frame[EMBER_KIND_NR] = {
	[EMBER_KIND_OFFCPU_S] = "[off-cpu S interruptible]",
	[EMBER_KIND_OFFCPU_D] = "[off-cpu D uninterruptible]",
	[EMBER_KIND_OFFCPU_R] = "[off-cpu R waiting for a CPU]",
};

struct offcpu_sink {
	struct store *store;
	struct store *wakeup; /* wakers (EMBER_KIND_WAKEUP); NULL: dropped, counted */
	uint64_t wakeup_events, wakeup_quanta, wakeup_dropped;
	const struct strtab *names;
	uint64_t quantum_ns;
	int32_t *frame_map; /* names id -> store frame id, -1 unknown */
	size_t frame_map_cap;
	uint64_t compactions;
	int64_t real_off_ns;
	struct store_sample *batch;
	size_t batch_cap;
	uint64_t events, quanta;
	uint32_t frames[MAX_FRAMES + 1];
};

struct offcpu_sink *offcpu_sink__new(struct store *store, const struct strtab *names,
				     uint64_t quantum_ns)
{
	struct offcpu_sink *k;

	if (!store || !names || !quantum_ns) {
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	k->store = store;
	k->names = names;
	k->quantum_ns = quantum_ns;
	k->real_off_ns = (int64_t)(real_ns() - mono_ns());
	return k;
}

void offcpu_sink__free(struct offcpu_sink *k)
{
	if (!k)
		return;
	free(k->frame_map);
	free(k->batch);
	free(k);
}

void offcpu_sink__set_clock_offset(struct offcpu_sink *k, int64_t real_minus_mono_ns)
{
	k->real_off_ns = real_minus_mono_ns;
}

void offcpu_sink__counts(const struct offcpu_sink *k, uint64_t *ret_events, uint64_t *ret_quanta)
{
	*ret_events = k->events;
	*ret_quanta = k->quanta;
}

static int store_frame(struct offcpu_sink *k, uint32_t id)
{
	size_t old = k->frame_map_cap, i;
	int r;

	if (array_grow((void **)&k->frame_map, &k->frame_map_cap, (size_t)id + 1,
		       sizeof(*k->frame_map), 4096))
		return -ENOMEM;
	for (i = old; i < k->frame_map_cap; i++)
		k->frame_map[i] = -1;
	if (k->frame_map[id] >= 0)
		return k->frame_map[id];
	r = store__intern_frame(k->store, strtab__str(k->names, id), strtab__len(k->names, id));
	if (r >= 0)
		k->frame_map[id] = r;
	return r;
}

void offcpu_sink__set_wakeup_store(struct offcpu_sink *k, struct store *wakeup)
{
	k->wakeup = wakeup;
}

void offcpu_sink__wakeup_counts(const struct offcpu_sink *k, uint64_t *ret_events,
				uint64_t *ret_quanta, uint64_t *ret_dropped)
{
	*ret_events = k->wakeup_events;
	*ret_quanta = k->wakeup_quanta;
	*ret_dropped = k->wakeup_dropped;
}

/*
 * A waker: its stack under "[woke COMM S]" (the wakee's comm and state), one record per
 * quantum from the wakeup on, in the wakeup store. Frames are interned directly (the frame map
 * is the off-CPU store's).
 */
static int put_wakeup(struct offcpu_sink *k, const struct ingest_stack *st)
{
	const struct sampler_group *g = st->g;
	char top[64];
	size_t i, j, n = st->nr_frames, total = 0, at = 0;
	int id, len;

	if (!k->wakeup) {
		for (i = 0; i < g->nr_times; i++)
			k->wakeup_dropped += g->cpus[i];
		return 0;
	}
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	len = snprintf(top, sizeof(top), "[woke %s %s]", g->wakee_comm,
		       g->wakee_kind == EMBER_KIND_OFFCPU_D ? "D" : "S");
	id = store__intern_frame(k->wakeup, top, (size_t)len);
	if (id < 0)
		return id;
	k->frames[0] = (uint32_t)id;
	for (i = 0; i < n; i++) {
		id = store__intern_frame(k->wakeup, strtab__str(k->names, st->frames[i]),
					 strtab__len(k->names, st->frames[i]));
		if (id < 0)
			return id;
		k->frames[i + 1] = (uint32_t)id;
	}
	id = store__intern_stack(k->wakeup, k->frames, n + 1, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	for (i = 0; i < g->nr_times; i++)
		total += g->cpus[i];
	if (!total)
		return 0;
	if (array_grow((void **)&k->batch, &k->batch_cap, total, sizeof(*k->batch), 64))
		return -ENOMEM;
	for (i = 0; i < g->nr_times; i++) {
		uint64_t t0 = (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns);

		for (j = 0; j < g->cpus[i]; j++) {
			struct store_sample *x = &k->batch[at++];

			*x = (struct store_sample){ .time_ns = t0 + j * k->quantum_ns,
						    .stack_id = (uint32_t)id,
						    .pid = g->pid,
						    .tid = g->tid,
						    .cpu = UINT32_MAX,
						    .count = 1 };
			memcpy(x->comm, g->comm, sizeof(x->comm));
		}
	}
	k->wakeup_events += g->nr_times;
	k->wakeup_quanta += total;
	return store__append(k->wakeup, k->batch, total);
}

int offcpu_sink__put(const struct ingest_stack *st, void *ctx)
{
	struct offcpu_sink *k = ctx;
	const struct sampler_group *g = st->g;
	size_t i, j, n = st->nr_frames, total = 0, at = 0;
	uint64_t comp = store__compactions(k->store);
	int id;

	if (g->kind == EMBER_KIND_WAKEUP)
		return put_wakeup(k, st);
	if (!g->kind || g->kind >= EMBER_KIND_NR)
		return -EINVAL;
	if (comp != k->compactions) {
		for (i = 0; i < k->frame_map_cap; i++)
			k->frame_map[i] = -1;
		k->compactions = comp;
	}
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	id = store__intern_frame(k->store, state_frame[g->kind], strlen(state_frame[g->kind]));
	if (id < 0)
		return id;
	k->frames[0] = (uint32_t)id;
	for (i = 0; i < n; i++) {
		id = store_frame(k, st->frames[i]);
		if (id < 0)
			return id;
		k->frames[i + 1] = (uint32_t)id;
	}
	id = store__intern_stack(k->store, k->frames, n + 1, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	for (i = 0; i < g->nr_times; i++)
		total += g->cpus[i];
	if (!total)
		return 0;
	if (array_grow((void **)&k->batch, &k->batch_cap, total, sizeof(*k->batch), 64))
		return -ENOMEM;
	/* each quantum at its own time in the period: heat map cells get the time blocked in them */
	for (i = 0; i < g->nr_times; i++) {
		uint64_t t0 = (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns);

		for (j = 0; j < g->cpus[i]; j++) {
			struct store_sample *x = &k->batch[at++];

			*x = (struct store_sample){
				.time_ns = t0 + j * k->quantum_ns,
				.stack_id = (uint32_t)id,
				.pid = g->pid,
				.tid = g->tid,
				.cpu = UINT32_MAX,
				.count = 1,
			};
			memcpy(x->comm, g->comm, sizeof(x->comm));
		}
	}
	k->events += g->nr_times;
	k->quanta += total;
	return store__append(k->store, k->batch, total);
}

int offcpu_states_parse(const char *list, uint32_t *ret_mask)
{
	uint32_t m = 0;
	const char *p;

	for (p = list; *p; p++) {
		if (*p == ',' || isspace((unsigned char)*p))
			continue;
		if (p[1] && p[1] != ',' && !isspace((unsigned char)p[1]))
			return -EINVAL;
		switch (toupper((unsigned char)*p)) {
		case 'S':
			m |= EMBER_OFFCPU_STATE_S;
			break;
		case 'D':
			m |= EMBER_OFFCPU_STATE_D;
			break;
		case 'R':
			m |= EMBER_OFFCPU_STATE_R;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!m)
		return -EINVAL;
	*ret_mask = m;
	return 0;
}

int offcpu_opts_from_config(const struct ember_config *c, struct sampler_offcpu_opts *ret,
			    char *err, size_t errlen)
{
	struct sampler_offcpu_opts o = { .enabled = true };
	size_t n = strlen(c->offcpu_comm);

	*ret = (struct sampler_offcpu_opts){ 0 };
	if (!c->offcpu)
		return 0;
	if (offcpu_states_parse(c->offcpu_states, &o.states))
		return errbuf_set(err, errlen, -EINVAL, "states '%s': a list of S, D, R expected",
				  c->offcpu_states);
	if (c->offcpu_quantum_us > c->offcpu_min_us || c->offcpu_min_us > c->offcpu_max_us)
		return errbuf_set(err, errlen, -EINVAL,
				  "quantum_us <= min_blocked_us <= max_blocked_us expected");
	if (n > 15)
		return errbuf_set(err, errlen, -EINVAL, "comm '%s' is longer than 15 characters",
				  c->offcpu_comm);
	o.min_ns = c->offcpu_min_us * 1000;
	o.max_ns = c->offcpu_max_us * 1000;
	o.quantum_ns = c->offcpu_quantum_us * 1000;
	o.pid = (uint32_t)c->offcpu_pid;
	o.cgroup_id = c->offcpu_cgroup_id;
	memcpy(o.comm, c->offcpu_comm, n);
	o.threads = (uint32_t)c->offcpu_threads;
	*ret = o;
	return 0;
}
