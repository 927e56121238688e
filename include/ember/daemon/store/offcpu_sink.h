/* SPDX-License-Identifier: MIT */
/*
 * offcpu_sink: where off-CPU events go. An ingest_sink_fn (ingest.h) for groups of
 * kind != 0 (sampler.h): the named stack gets the blocked state as its root frame
 * ("[off-cpu S interruptible]", "[off-cpu D uninterruptible]", "[off-cpu R waiting for a CPU]")
 * and each event of weight q quanta becomes q records of the off-CPU store, one a quantum from
 * the period's start, so that counts are blocked time (count x quantum) in profiles and heat
 * maps alike, and a heat map cell holds the blocked time that fell in it. Worker thread only.
 */
#ifndef EMBER_OFFCPU_SINK_H
#define EMBER_OFFCPU_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct ingest_stack;
struct store;
struct strtab;
struct ember_config;
struct sampler_offcpu_opts;

struct offcpu_sink; /* opaque */

/* @store, @names borrowed, must outlive the sink. @quantum_ns > 0. NULL + errno. */
struct offcpu_sink *offcpu_sink__new(struct store *store, const struct strtab *names,
				     uint64_t quantum_ns);
void offcpu_sink__free(struct offcpu_sink *k); /* NULL is a no-op */

/* CLOCK_REALTIME - CLOCK_MONOTONIC, refreshed before each batch. */
void offcpu_sink__set_clock_offset(struct offcpu_sink *k, int64_t real_minus_mono_ns);

/* The ingest_sink_fn; @ctx is the offcpu_sink. 0 or -errno (-ENOMEM, -EINVAL). */
int offcpu_sink__put(const struct ingest_stack *st, void *ctx);

/*
 * The store of wakers (groups of kind EMBER_KIND_WAKEUP: the waker's stack under "[woke COMM
 * S|D]", weighed by the wakee's blocked time it ended); borrowed, outlives the sink. Without
 * one, wakers are dropped and counted.
 */
void offcpu_sink__set_wakeup_store(struct offcpu_sink *k, struct store *wakeup);
void offcpu_sink__wakeup_counts(const struct offcpu_sink *k, uint64_t *ret_events,
				uint64_t *ret_quanta, uint64_t *ret_dropped);
/* Chain graph: quanta with no recorded waker, and quanta of wakers or wakees not joined
 * (no memory, a waker whose wakee's record did not come within two batches). */
void offcpu_sink__chain_counts(const struct offcpu_sink *k, uint64_t *ret_nowaker,
			       uint64_t *ret_dropped);

/*
 * The store of chain stacks (borrowed): each recorded blocked (S, D) event's stack, "--", then
 * its waker's stack leaf first with "_[w]" on each frame and the waker's comm on top (depth:
 * one waker, its whole stack; "[no waker recorded]" when none was). Wakers and wakees are
 * joined by the wakee's tid and period at offcpu_sink__flush().
 */
void offcpu_sink__set_chain_store(struct offcpu_sink *k, struct store *chain);
/* After each batch: joins the batch's wakees with the wakers kept (from this batch and the two
 * before) into the chain store; drops wakers older than that (counted). 0 or -errno. */
int offcpu_sink__flush(struct offcpu_sink *k);

/* The names' table @names (the one given at creation) is being renewed (strtab__renew()),
 * between batches: the wakers waiting carry their frames' ids into the new generation (those
 * that cannot are dropped, counted). 0 or -ENOMEM. */
int offcpu_sink__names_carry(struct offcpu_sink *k, struct strtab *names);

/* The sink's counters (quanta: one of quantum_ns each). */
struct offcpu_sink_stats {
	uint64_t events, quanta;		/* off-CPU events and quanta stored */
	uint64_t wakeup_events, wakeup_quanta;	/* wakers stored */
	uint64_t chain_nowaker;			/* chain quanta with no recorded waker */
	uint64_t chain_dropped;			/* wakers or wakees not joined, wakers dropped */
	uint64_t clamped;			/* quanta whose time the three stores moved forward
						   to a chunk base (store_stats.clamped, summed) */
	uint64_t bytes, max_bytes;		/* the three stores' memory, and their one bound
						   (offcpu.memory_limit: 1/2, 1/4, 1/4) */
	uint64_t evicted[3];			/* quanta each store (off-CPU, wakers, chain) dropped
						   for its share of that bound: its oldest */
};
void offcpu_sink__stats(const struct offcpu_sink *k, struct offcpu_sink_stats *ret);
/* struct offcpu_sink_stats described once (offcpu_sink_counters.c, core/base/counters.h) */
extern const struct counter_desc offcpu_sink_counters[];
extern const size_t offcpu_sink_counters_n;
/*
 * Wakers in a chain graph's stack (1..OFFCPU_CHAIN_MAX_DEPTH; default 2): the waker of a blocked
 * period, then the waker of that waker's own last recorded blocked period before it, ...
 */
#define OFFCPU_CHAIN_MAX_DEPTH 4
void offcpu_sink__set_chain_depth(struct offcpu_sink *k, unsigned int depth);

/*
 * [offcpu] from @c: *@ret_opts for the sampler (off: zeroed, *@ret_sink NULL, returns 0); on,
 * *@ret_sink is a sink that owns its three stores (off-CPU, wakers, chain; each sharing
 * offcpu.memory_limit, a half and two quarters, and store.retention), freed with offcpu_sink__free(). @names: the
 * ingest's, borrowed. 0, or -EINVAL / -ENOMEM with the reason in @err.
 */
int offcpu_sink__from_config(const struct ember_config *c, const struct strtab *names,
			     struct sampler_offcpu_opts *ret_opts, struct offcpu_sink **ret_sink,
			     char *err, size_t errlen);
/* The stores (borrowed, NULL when none): off-CPU, wakers, chain. */
void offcpu_sink__stores(const struct offcpu_sink *k, struct store **ret_offcpu,
			 struct store **ret_wakeup, struct store **ret_chain);
/* Expires every store the sink writes (store__expire()). */
void offcpu_sink__expire(struct offcpu_sink *k, uint64_t now_ns);

/* Events and quanta appended so far. */
void offcpu_sink__counts(const struct offcpu_sink *k, uint64_t *ret_events, uint64_t *ret_quanta);

/*
 * Parses [offcpu] states: ','-separated S, D, R (case-insensitive, spaces allowed) into a mask of
 * EMBER_OFFCPU_STATE_* (bpf_shared.h). 0, or -EINVAL (an unknown state, or none).
 */
int offcpu_states_parse(const char *list, uint32_t *ret_mask);

/*
 * [offcpu] (config.h) into the sampler's options (sampler.h): *@ret zeroed and left off when
 * offcpu is off. 0, or -EINVAL with the reason in @err (bad states, R asked for, quantum > min >
 * max, a comm longer than 15 characters).
 */
int offcpu_opts_from_config(const struct ember_config *c, struct sampler_offcpu_opts *ret,
			    char *err, size_t errlen);

#endif
