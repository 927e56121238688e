/* SPDX-License-Identifier: MIT */
/*
 * memio_sink: where memory and I/O events go (bpf/memio.bpf.h). An ingest_sink_fn for groups of
 * kind EMBER_KIND_PAGEFAULT .. EMBER_KIND_MALLOC (bpf_shared.h): the named stack gets its kind's
 * root frame ("[page fault]", "[mmap]", "[brk]", "[read]", "[write]", "[read-ahead]",
 * "[writeback]", "[malloc]") and each event becomes records of its kind's store, one per
 * quantum of its weight (pages, bytes or nanoseconds): a record stands for a quantum, so that
 * counts times the quantum are the weight in profiles and heat maps alike. A kind's weights are
 * summed and a record is stored at each crossing of a multiple of its quantum, by the event
 * that crossed it (the remainder carries to the next event): exact totals, each stack within a
 * quantum per event. Worker thread only.
 */
#ifndef EMBER_MEMIO_SINK_H
#define EMBER_MEMIO_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct ingest_stack;
struct store;
struct strtab;
struct ember_config;
struct sampler_memio_opts;

/* The stores, by what event= reads. */
enum memio_store {
	MEMIO_STORE_PAGEFAULT = 0, /* pages */
	MEMIO_STORE_VMGROW,	   /* bytes */
	MEMIO_STORE_BLOCKIO,	   /* bytes */
	MEMIO_STORE_BLOCKIO_LAT,   /* nanoseconds (weight=latency) */
	MEMIO_STORE_MALLOC,	   /* bytes */
	MEMIO_STORE_CYCLES,	   /* cycles ([pmc]: no root frame, the stacks as CPU samples') */
	MEMIO_STORE_INSTRUCTIONS,  /* instructions */
	MEMIO_STORE_NR,
};

struct memio_sink; /* opaque */

/*
 * [pagefault], [vmgrow], [blockio], [malloc], [pmc] from @c: *@ret_opts for the sampler, and when
 * any is on *@ret_sink, a sink that owns a store per kind on (memory_limit and store.retention
 * each); NULL when all are off. @names: the ingest's, borrowed. 0, or -EINVAL / -ENOMEM with @err.
 */
int memio_sink__from_config(const struct ember_config *c, const struct strtab *names,
			    struct sampler_memio_opts *ret_opts, struct memio_sink **ret_sink,
			    char *err, size_t errlen);
void memio_sink__free(struct memio_sink *k); /* NULL is a no-op */

/* CLOCK_REALTIME - CLOCK_MONOTONIC, refreshed before each batch. */
void memio_sink__set_clock_offset(struct memio_sink *k, int64_t real_minus_mono_ns);

/* The ingest_sink_fn; @ctx is the memio_sink. 0 or -errno. */
int memio_sink__put(const struct ingest_stack *st, void *ctx);

/* Kind @i's store (borrowed; NULL when off or @k NULL) and what one record stands for in its
 * unit (memio_sink_unit()). */
struct store *memio_sink__store(const struct memio_sink *k, enum memio_store i);
uint64_t memio_sink__quantum(const struct memio_sink *k, enum memio_store i);
/* "pages", "bytes", "nanoseconds", "count"; and the sample type ("page_faults", "vm_growth",
 * "block_io", "block_io_latency", "malloc", "cycles", "instructions"): static strings. */
const char *memio_sink_unit(enum memio_store i);
const char *memio_sink_type(enum memio_store i);

void memio_sink__expire(struct memio_sink *k, uint64_t now_ns);

/* The sink's counters: per kind, events stored, records (quanta) stored, and the weight not
 * stored because one event's records were capped (MEMIO_MAX_RECORDS per event). */
struct memio_sink_stats {
	uint64_t events[MEMIO_STORE_NR];
	uint64_t quanta[MEMIO_STORE_NR];
	uint64_t capped[MEMIO_STORE_NR];
	uint64_t bytes; /* gauge: the stores' memory (store_stats.bytes of each) */
};
void memio_sink__stats(const struct memio_sink *k, struct memio_sink_stats *ret);
extern const struct counter_desc memio_sink_counters[];
extern const size_t memio_sink_counters_n;

#endif
