// SPDX-License-Identifier: MIT
/* memio_sink: memory and I/O events into their stores (include/ember/daemon/store/memio_sink.h). */
#include "ember/daemon/store/memio_sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
#include "ember/daemon/store/store_sink.h"

#define MAX_FRAMES 1024
/* Records one event may store (8 bytes each): a 1 TiB reservation by mmap at a 64 KiB quantum
 * would be 16 million; past this the weight is counted (capped), not stored. */
#define MEMIO_MAX_RECORDS 65536

struct memio_sink {
	struct store *store[MEMIO_STORE_NR];
	uint64_t quantum[MEMIO_STORE_NR]; /* in the store's unit */
	uint64_t acc[MEMIO_STORE_NR];	  /* weight not stored yet: < quantum */
	struct frame_memo memo[MEMIO_STORE_NR];
	const struct strtab *names;
	int64_t real_off_ns;
	struct store_sample *batch;
	size_t batch_cap;
	struct memio_sink_stats st;
	uint32_t frames[MAX_FRAMES + 1];
};

const char *memio_sink_unit(enum memio_store i)
{
	return i == MEMIO_STORE_PAGEFAULT				  ? "pages"
	       : i == MEMIO_STORE_BLOCKIO_LAT				  ? "nanoseconds"
	       : i == MEMIO_STORE_CYCLES || i == MEMIO_STORE_INSTRUCTIONS ? "count"
									  : "bytes";
}

const char *memio_sink_type(enum memio_store i)
{
	static const char *const t[MEMIO_STORE_NR] = {
		[MEMIO_STORE_PAGEFAULT] = "page_faults",
		[MEMIO_STORE_VMGROW] = "vm_growth",
		[MEMIO_STORE_BLOCKIO] = "block_io",
		[MEMIO_STORE_BLOCKIO_LAT] = "block_io_latency",
		[MEMIO_STORE_MALLOC] = "malloc",
		[MEMIO_STORE_CYCLES] = "cycles",
		[MEMIO_STORE_INSTRUCTIONS] = "instructions",
	};

	return (unsigned int)i < MEMIO_STORE_NR ? t[i] : "?";
}

/* The root frame of a record of kind @kind (with its subtype); "" none (hardware counters: the
 * stacks match the CPU samples' and each other's, for a CPI differential). */
static const char *root_frame(unsigned int kind)
{
	static const char *const bio[4] = { "[read]", "[write]", "[read-ahead]", "[writeback]" };

	switch (EMBER_KIND_BASE(kind)) {
	case EMBER_KIND_PAGEFAULT:
		return "[page fault]";
	case EMBER_KIND_VMGROW:
		return EMBER_KIND_SUB(kind) == EMBER_VM_BRK ? "[brk]" : "[mmap]";
	case EMBER_KIND_BLOCKIO:
	case EMBER_KIND_BLOCKIO_LAT:
		return bio[EMBER_KIND_SUB(kind) & 3];
	case EMBER_KIND_MALLOC:
		return "[malloc]";
	case EMBER_KIND_CYCLES:
	case EMBER_KIND_INSTRUCTIONS:
		return "";
	}
	return NULL;
}

/* The store of kind @kind, and what its raw weight unit is in the store's unit. */
static int store_of(unsigned int kind, uint64_t *ret_mul)
{
	*ret_mul = 1;
	switch (EMBER_KIND_BASE(kind)) {
	case EMBER_KIND_PAGEFAULT:
		return MEMIO_STORE_PAGEFAULT;
	case EMBER_KIND_VMGROW:
		*ret_mul = 4096; /* pages of 4 KiB */
		return MEMIO_STORE_VMGROW;
	case EMBER_KIND_BLOCKIO:
		return MEMIO_STORE_BLOCKIO;
	case EMBER_KIND_BLOCKIO_LAT:
		*ret_mul = 1000; /* microseconds */
		return MEMIO_STORE_BLOCKIO_LAT;
	case EMBER_KIND_MALLOC:
		return MEMIO_STORE_MALLOC;
	case EMBER_KIND_CYCLES:
		return MEMIO_STORE_CYCLES;
	case EMBER_KIND_INSTRUCTIONS:
		return MEMIO_STORE_INSTRUCTIONS;
	}
	return -1;
}

int memio_sink__put(const struct ingest_stack *st, void *ctx)
{
	struct memio_sink *k = ctx;
	const struct sampler_group *g = st->g;
	size_t i, j, n = st->nr_frames, at = 0, total = 0, r = 0;
	const char *root = root_frame(g->kind);
	uint64_t mul, q, spread;
	int id, m = store_of(g->kind, &mul);
	struct store *s;

	if (m < 0 || !root)
		return -EINVAL;
	s = k->store[m];
	if (!s)
		return 0; /* its section is off: cannot come */
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	if (*root) {
		id = store__intern_frame(s, root, strlen(root));
		if (id < 0)
			return id;
		k->frames[r++] = (uint32_t)id;
	}
	id = frame_memo__intern(&k->memo[m], s, k->names, st->frames, n, k->frames + r);
	if (id < 0)
		return id;
	id = store__intern_stack(s, k->frames, n + r, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	/* latency quanta each at their own time in the wait, as off-CPU time's: a heat map cell
	 * holds the time in flight that fell in it; the others at the event */
	spread = m == MEMIO_STORE_BLOCKIO_LAT ? k->quantum[m] : 0;
	for (i = 0; i < g->nr_times; i++) {
		uint64_t w = (uint64_t)g->cpus[i] * mul, t0;

		k->acc[m] += w;
		q = k->acc[m] / k->quantum[m];
		k->acc[m] -= q * k->quantum[m];
		if (q > MEMIO_MAX_RECORDS) {
			k->st.capped[m] += (q - MEMIO_MAX_RECORDS) * k->quantum[m];
			q = MEMIO_MAX_RECORDS;
		}
		if (!q)
			continue;
		if (array_grow((void **)&k->batch, &k->batch_cap, total + q, sizeof(*k->batch), 64))
			return -ENOMEM;
		t0 = (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns);
		for (j = 0; j < q; j++) {
			struct store_sample *x = &k->batch[at++];

			*x = (struct store_sample){ .time_ns = t0 + j * spread,
						    .stack_id = (uint32_t)id,
						    .pid = g->pid,
						    .tid = g->tid,
						    .cpu = UINT32_MAX,
						    .count = 1,
						    .cgroup_id = g->cgroup_id };
			memcpy(x->comm, g->comm, sizeof(x->comm));
		}
		total += q;
	}
	k->st.events[m] += g->nr_times;
	k->st.quanta[m] += total;
	return total ? store__append(s, k->batch, total) : 0;
}

void memio_sink__free(struct memio_sink *k)
{
	int i;

	if (!k)
		return;
	for (i = 0; i < MEMIO_STORE_NR; i++) {
		store__free(k->store[i]);
		frame_memo__fini(&k->memo[i]);
	}
	free(k->batch);
	free(k);
}

void memio_sink__set_clock_offset(struct memio_sink *k, int64_t real_minus_mono_ns)
{
	k->real_off_ns = real_minus_mono_ns;
}

struct store *memio_sink__store(const struct memio_sink *k, enum memio_store i)
{
	return k && (unsigned int)i < MEMIO_STORE_NR ? k->store[i] : NULL;
}

uint64_t memio_sink__quantum(const struct memio_sink *k, enum memio_store i)
{
	return k && (unsigned int)i < MEMIO_STORE_NR ? k->quantum[i] : 0;
}

void memio_sink__expire(struct memio_sink *k, uint64_t now_ns)
{
	int i;

	for (i = 0; k && i < MEMIO_STORE_NR; i++)
		if (k->store[i])
			(void)store__expire(k->store[i], now_ns);
}

void memio_sink__stats(const struct memio_sink *k, struct memio_sink_stats *ret)
{
	struct store_stats st;
	int i;

	*ret = k ? k->st : (struct memio_sink_stats){ 0 };
	for (i = 0; k && i < MEMIO_STORE_NR; i++) {
		if (!k->store[i])
			continue;
		store__stats(k->store[i], &st);
		ret->bytes += st.bytes;
	}
}

int memio_sink__from_config(const struct ember_config *c, const struct strtab *names,
			    struct sampler_memio_opts *ret_opts, struct memio_sink **ret_sink,
			    char *err, size_t errlen)
{
	struct sampler_memio_opts o = { 0 };
	uint64_t mem[MEMIO_STORE_NR] = { c->pagefault_memory_bytes, c->vmgrow_memory_bytes,
					 c->blockio_memory_bytes,   c->blockio_memory_bytes,
					 c->malloc_memory_bytes,    c->pmc_memory_bytes,
					 c->pmc_memory_bytes };
	bool on[MEMIO_STORE_NR] = { c->pagefault, c->vmgrow, c->blockio, c->blockio,
				    c->malloc,	  c->pmc,    c->pmc };
	struct memio_sink *k;
	size_t n = strlen(c->malloc_comm);
	int i;

	*ret_sink = NULL;
	*ret_opts = o;
	if (!c->pagefault && !c->vmgrow && !c->blockio && !c->malloc && !c->pmc)
		return 0;
	if (c->malloc && !c->malloc_pid && !n)
		return errbuf_set(err, errlen, -EINVAL,
				  "[malloc]: pid or comm needed (malloc is traced per process)");
	if (n > 15)
		return errbuf_set(err, errlen, -EINVAL,
				  "[malloc]: comm '%s' is longer than 15 characters",
				  c->malloc_comm);
	if (strlen(c->malloc_library) >= sizeof(o.malloc_lib))
		return errbuf_set(err, errlen, -EINVAL, "[malloc]: library path too long");
	o.pagefault = c->pagefault;
	o.pagefault_period = c->pagefault_period;
	o.vmgrow = c->vmgrow;
	o.blockio = c->blockio;
	o.blockio_inflight = (uint32_t)c->blockio_inflight;
	o.malloc = c->malloc;
	o.malloc_pid = (uint32_t)c->malloc_pid;
	memcpy(o.malloc_comm, c->malloc_comm, n);
	strcpy(o.malloc_lib, c->malloc_library);
	o.malloc_interval = c->malloc_interval;
	o.pmc = c->pmc;
	o.pmc_period = c->pmc_period;
	o.max_rate[EMBER_MEMIO_PAGEFAULT] = c->pagefault_max_rate;
	o.max_rate[EMBER_MEMIO_VMGROW] = c->vmgrow_max_rate;
	o.max_rate[EMBER_MEMIO_BLOCKIO] = c->blockio_max_rate;
	o.max_rate[EMBER_MEMIO_MALLOC] = c->malloc_max_rate;
	k = calloc(1, sizeof(*k));
	if (!k)
		return errbuf_set(err, errlen, -ENOMEM, "cannot create the memory and I/O stores");
	k->names = names;
	k->real_off_ns = real_minus_mono_ns();
	k->quantum[MEMIO_STORE_PAGEFAULT] = c->pagefault_period; /* a sample: one record */
	k->quantum[MEMIO_STORE_VMGROW] = c->vmgrow_quantum;
	k->quantum[MEMIO_STORE_BLOCKIO] = c->blockio_quantum;
	k->quantum[MEMIO_STORE_BLOCKIO_LAT] = c->blockio_latency_quantum_us * 1000;
	k->quantum[MEMIO_STORE_MALLOC] = c->malloc_interval; /* a sample: one record */
	k->quantum[MEMIO_STORE_CYCLES] = c->pmc_period;
	k->quantum[MEMIO_STORE_INSTRUCTIONS] = c->pmc_period;
	for (i = 0; i < MEMIO_STORE_NR; i++) {
		if (!on[i])
			continue;
		k->store[i] = store__new(c->retention_s, mem[i]);
		if (!k->store[i]) {
			memio_sink__free(k);
			return errbuf_set(err, errlen, -ENOMEM, "cannot create the %s store",
					  memio_sink_type((enum memio_store)i));
		}
	}
	*ret_opts = o;
	*ret_sink = k;
	return 0;
}
