/* SPDX-License-Identifier: MIT */
/*
 * store_sink: where the live ingest's stacks go. An ingest_sink_fn (ingest.h) that interns the
 * stack's frames into the store (the ingest's frame ids mapped to the store's, remembered until
 * the store compacts) and appends one store_sample per sample of the group: its time converted
 * from the BPF clock (CLOCK_MONOTONIC) to Unix time, untimed samples at the wall clock of the
 * call. Main thread only (like the ingest that calls it).
 */
#ifndef EMBER_STORE_SINK_H
#define EMBER_STORE_SINK_H

#include <stddef.h>
#include <stdint.h>

struct ingest_stack;
struct store;
struct strtab;

/*
 * The ingest's frame ids (names ids) mapped to a store's frame ids, remembered until that store
 * compacts (it renumbers its frames then). Zeroed to start; frame_memo_fini() frees it. Each
 * sink into a store keeps one (store_sink, offcpu_sink).
 */
struct frame_memo {
	int32_t *map;	      /* names id -> store frame id, -1 unknown */
	size_t cap;
	uint64_t compactions; /* the store's compactions map is valid for */
	uint64_t names_gen;   /* ... and the names' generation (strtab__generation()) */
};

/* Interns the frames @ids[0..n) (@names' ids) into @store, their store ids into @ret. 0 or
 * -ENOMEM. */
int frame_memo__intern(struct frame_memo *m, struct store *store, const struct strtab *names,
		       const uint32_t *ids, size_t n, uint32_t *ret);
void frame_memo__fini(struct frame_memo *m);

struct store_sink; /* opaque */

/* @store and @names (the ingest's names) are borrowed and must outlive the sink. NULL + errno. */
struct store_sink *store_sink__new(struct store *store, const struct strtab *names);
void store_sink__free(struct store_sink *k); /* NULL is a no-op */

/* Before each drain: CLOCK_REALTIME - CLOCK_MONOTONIC, for the sample times of that drain. */
void store_sink__set_clock_offset(struct store_sink *k, int64_t real_minus_mono_ns);

/* The ingest_sink_fn: @ctx is the store_sink. 0 or -errno (-ENOMEM, -EINVAL). */
int store_sink__put(const struct ingest_stack *st, void *ctx);

#endif
