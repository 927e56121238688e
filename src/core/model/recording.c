// SPDX-License-Identifier: MIT
#include "ember/core/model/recording.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/strtab.h"

struct rec_entry {
	int64_t time_ns;
	int32_t pid, tid;
	uint32_t stack_id;	/* in stacks */
	uint32_t comm_id;	/* in comms */
	double count;
};

struct recording {
	struct strtab *stacks;	/* distinct stack texts; the id is the stack_id */
	struct strtab *comms;
	struct rec_entry *e;
	size_t n, cap;
	size_t max_bytes;
	double total;
	bool frozen;
};

struct recording *recording__new(size_t max_bytes)
{
	struct recording *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->stacks = strtab__new();
	r->comms = strtab__new();
	if (!r->stacks || !r->comms) {
		recording__free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->max_bytes = max_bytes;
	return r;
}

void recording__free(struct recording *r)
{
	if (!r)
		return;
	strtab__free(r->stacks);
	strtab__free(r->comms);
	free(r->e);
	free(r);
}

size_t recording__mem_bytes(const struct recording *r)
{
	return sizeof(*r) + strtab__mem_bytes(r->stacks) + strtab__mem_bytes(r->comms) +
	       r->cap * sizeof(*r->e);
}

int recording__add(struct recording *r, int64_t time_ns, int32_t pid, int32_t tid,
		   const char *comm, const char *stack, size_t stack_len, double count)
{
	int sid, cid;

	if (r->frozen)
		return -EBUSY;
	/* the growth this add may cause (the sample array doubling) counts against the bound */
	if (r->max_bytes && recording__mem_bytes(r) + stack_len + 64 +
					(r->n == r->cap ? (r->cap ? r->cap : 1024) * sizeof(*r->e) : 0) >
				    r->max_bytes)
		return -E2BIG;
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 1024;
		struct rec_entry *ne = realloc(r->e, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		r->e = ne;
		r->cap = ncap;
	}
	sid = strtab__intern(r->stacks, stack, stack_len);
	if (sid < 0)
		return sid;
	cid = strtab__intern(r->comms, comm ? comm : "", comm ? strlen(comm) : 0);
	if (cid < 0)
		return cid;
	r->e[r->n++] = (struct rec_entry){
		.time_ns = time_ns,
		.pid = pid,
		.tid = tid,
		.stack_id = (uint32_t)sid,
		.comm_id = (uint32_t)cid,
		.count = count,
	};
	r->total += count;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct rec_entry *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
	/* qsort is not stable: the insertion order lives in the address of the original slot,
	 * which is lost, so break ties on the content to stay deterministic */
	if (x->stack_id != y->stack_id)
		return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int recording__freeze(struct recording *r)
{
	size_t i;
	bool sorted = true;

	for (i = 1; i < r->n && sorted; i++)
		sorted = r->e[i - 1].time_ns <= r->e[i].time_ns;
	if (!sorted)
		qsort(r->e, r->n, sizeof(*r->e), cmp_entry);
	r->frozen = true;
	return 0;
}

/* First index with time >= t. */
static size_t lower_bound(const struct recording *r, int64_t t)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->e[mid].time_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int recording__for_each(const struct recording *r, int64_t from_ns, int64_t to_ns,
			rec_sample_fn fn, void *ctx)
{
	size_t i;
	int err;

	if (!r->frozen)
		return -EBUSY;
	for (i = lower_bound(r, from_ns); i < r->n && r->e[i].time_ns < to_ns; i++) {
		const struct rec_entry *e = &r->e[i];
		struct rec_sample s = {
			.time_ns = e->time_ns,
			.pid = e->pid,
			.tid = e->tid,
			.comm = strtab__str(r->comms, e->comm_id),
			.stack = strtab__str(r->stacks, e->stack_id),
			.stack_len = strtab__len(r->stacks, e->stack_id),
			.stack_id = e->stack_id,
			.count = e->count,
		};

		err = fn(&s, ctx);
		if (err)
			return err;
	}
	return 0;
}

size_t recording__nr_samples(const struct recording *r)
{
	return r->n;
}

size_t recording__nr_stacks(const struct recording *r)
{
	return strtab__count(r->stacks);
}

double recording__total(const struct recording *r)
{
	return r->total;
}

int recording__bounds(const struct recording *r, int64_t *ret_first_ns, int64_t *ret_last_ns)
{
	size_t i;
	int64_t lo, hi;

	if (r->n == 0)
		return -ENODATA;
	if (r->frozen) {
		lo = r->e[0].time_ns;
		hi = r->e[r->n - 1].time_ns;
	} else {
		lo = hi = r->e[0].time_ns;
		for (i = 1; i < r->n; i++) {
			if (r->e[i].time_ns < lo)
				lo = r->e[i].time_ns;
			if (r->e[i].time_ns > hi)
				hi = r->e[i].time_ns;
		}
	}
	*ret_first_ns = lo;
	*ret_last_ns = hi;
	return 0;
}
