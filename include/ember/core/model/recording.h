/* SPDX-License-Identifier: MIT */
/*
 * recording: the IMMUTABLE container (the others: profile.h). A set of timestamped samples (time, pid, tid, comm, folded stack, count),
 * built once and then queried by time range from any number of threads without locks. It backs
 * what emberd serves that is not the live store: `emberd --replay` files and finished ad hoc
 * captures.
 *
 * Build phase (one thread): recording__add() per sample, in any time order; then
 * recording__freeze() sorts by time. Query phase (any threads): recording__for_each() and the
 * accessors only read. Distinct stack texts are stored once and numbered (stack_id), so a
 * consumer aggregating many samples can cache per stack.
 *
 * Memory is bounded by the caller: recording__add() refuses (-E2BIG) past @max_bytes. The bound
 * is approximate: the string tables grow in chunks (64 KiB and more), which may overshoot it by
 * one chunk.
 */
#ifndef EMBER_RECORDING_H
#define EMBER_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One sample as handed to a query callback: every pointer is borrowed for the call only. */
struct rec_sample {
	int64_t time_ns;
	int32_t pid, tid;	/* -1 when unknown */
	const char *comm;	/* NUL-terminated; "" when unknown */
	const char *stack;	/* "root;...;leaf", not NUL-terminated */
	size_t stack_len;
	uint32_t stack_id;	/* same text <=> same id, within one source */
	double count;
};

/* Return 0 to go on or a negative errno to stop (returned by the iterator). */
typedef int (*rec_sample_fn)(const struct rec_sample *s, void *ctx);

struct recording; /* opaque */

/* @max_bytes: memory bound (0: none). NULL + errno=ENOMEM; free with recording__free(). */
struct recording *recording__new(size_t max_bytes);
void recording__free(struct recording *r); /* NULL is a no-op */

/*
 * Adds a sample (stack and comm copied; @comm may be NULL). 0, -ENOMEM, -E2BIG over the memory
 * bound, -EBUSY after freeze.
 */
int recording__add(struct recording *r, int64_t time_ns, int32_t pid, int32_t tid,
		   const char *comm, const char *stack, size_t stack_len, double count);
/* Sorts by time (ties in a fixed order) and makes the recording read-only. 0 or -ENOMEM. */
int recording__freeze(struct recording *r);

/*
 * Calls @fn for each sample with @from_ns <= time < @to_ns, in time order. Only after freeze
 * (-EBUSY before). Returns 0 or what @fn returned.
 */
int recording__for_each(const struct recording *r, int64_t from_ns, int64_t to_ns,
			rec_sample_fn fn, void *ctx);

size_t recording__nr_samples(const struct recording *r);
size_t recording__nr_stacks(const struct recording *r);
double recording__total(const struct recording *r);
/* Time of the first and last sample; -ENODATA when empty. */
int recording__bounds(const struct recording *r, int64_t *ret_first_ns, int64_t *ret_last_ns);
size_t recording__mem_bytes(const struct recording *r);

#endif
