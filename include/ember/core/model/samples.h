/* SPDX-License-Identifier: MIT */
/*
 * samples: the COLUMNAR container (the others: profile.h). An in-memory set of timestamped
 * samples for time-based views (flame scope heat maps, time-range flame graphs): each sample is a
 * time (ns), an interned stack id and a count.
 *
 * Compact and columnar: stacks are interned once (frame ids from a shared strtab, kept in a
 * dictionary profile), and samples are stored sorted by time as three columns: a 32-bit time
 * offset from a per-block 64-bit base, a 32-bit stack id, and a 32-bit count that is only
 * allocated once a count other than 1 is seen. That is 8 bytes per sample (12 with counts), see
 * samples__mem_bytes(). Samples added in non-decreasing time order go straight into the columns;
 * out-of-order ones are staged until samples__sort() merges them in. Queries see only sorted
 * samples. Not thread-safe; queries only read, so one writer with readers under a lock is fine.
 *
 * Filters (struct samples_filter) decide per stack, from its root frame and frames:
 *  - idle: FlameScope's rule, extended. A stack is idle when its root frame is the idle task
 *    ("swapper", "swapper/N", optionally with "-PID" or "-PID/TID") and any frame contains one
 *    of: cpuidle, cpu_idle, cpu_bringup_and_idle, native_safe_halt, xen_hypercall_sched_op,
 *    xen_hypercall_vcpu_op, default_idle, do_idle, intel_idle, acpi_idle, mwait_idle,
 *    poll_idle. Idle stacks are excluded unless include_idle.
 *  - comm/pid/tid: the root frame as stackcollapse-perf.pl writes it: "comm", "comm-PID"
 *    (--pid) or "comm-PID/TID" (--tid). The comm is the root frame up to the last '-' followed
 *    by digits (and "/digits"); a stack without a pid in its root frame never matches a pid or
 *    tid filter.
 *
 * Its text form, "ember-samples v1", is include/ember/core/formats/samples_text.h; its heat map,
 * include/ember/core/render/heatmap_samples.h.
 */
#ifndef EMBER_SAMPLES_H
#define EMBER_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


struct strtab;
struct profile;
struct sbuf;

struct samples; /* opaque */

/*
 * Borrows @st (which must outlive the set; profiles made from the set may share it).
 * NULL + errno=ENOMEM; free with samples__free().
 */
struct samples *samples__new(struct strtab *st);
void samples__free(struct samples *s); /* NULL is a no-op */

struct strtab *samples__strtab(const struct samples *s);

/*
 * Interns a stack (frame ids of the strtab, root first; @n may be 0) and returns its stack id
 * >= 0, or -ENOMEM. The same frames always give the same id.
 */
int samples__intern(struct samples *s, const uint32_t *frames, size_t n);
/*
 * Interns a folded stack text "a;b;c" (split on ';', trailing empty frames dropped: see
 * profile__add_text()), through a cache of the texts seen: a text seen before costs one hash.
 */
int samples__intern_folded(struct samples *s, const char *stack, size_t len);

/*
 * Adds @count (>= 1; 0 is a no-op) samples of stack @stack_id at @t_ns. 0, -EINVAL (unknown
 * stack id) or -ENOMEM.
 */
int samples__add(struct samples *s, uint64_t t_ns, uint32_t stack_id, uint32_t count);

/* Merges staged out-of-order samples into the sorted columns (stable). 0 or -ENOMEM. */
int samples__sort(struct samples *s);
/* Gives back spare capacity of the columns (after a load; adds may follow). Never fails. */
void samples__shrink(struct samples *s);
/* True when nothing is staged. */
bool samples__sorted(const struct samples *s);

/* Sorted sample records (runs of one stack at one time count as one record). */
size_t samples__nr(const struct samples *s);
/* Sum of the counts of sorted samples. */
uint64_t samples__total(const struct samples *s);
size_t samples__nr_stacks(const struct samples *s);
/* Time of the first/last sorted sample; 0 when empty. */
uint64_t samples__first_ns(const struct samples *s);
uint64_t samples__last_ns(const struct samples *s);

/* Record @idx (< samples__nr) of the sorted samples. */
uint64_t samples__time_ns(const struct samples *s, size_t idx);
uint32_t samples__stack_id(const struct samples *s, size_t idx);
uint32_t samples__count(const struct samples *s, size_t idx);
/* Index of the first record with time >= @t_ns (samples__nr() if none). O(log n). */
size_t samples__lower_bound(const struct samples *s, uint64_t t_ns);

/* Frames of stack @stack_id (borrowed; valid until the next intern). */
const uint32_t *samples__stack(const struct samples *s, uint32_t stack_id, size_t *ret_depth);
/* Appends the stack's text "a;b;c". */
void samples__stack_text(const struct samples *s, uint32_t stack_id, struct sbuf *sb);

/* Bytes of memory held (columns, blocks, stack dictionary; not the strtab). */
size_t samples__mem_bytes(const struct samples *s);

struct samples_filter {
	bool include_idle;	/* keep idle stacks (see above); default false */
	const char *comm;	/* borrowed; NULL: any. Exact match of the root frame's comm */
	long pid;		/* -1: any */
	long tid;		/* -1: any */
};

/* include_idle=false, comm=NULL, pid=tid=-1. */
void samples_filter_init(struct samples_filter *f);

/* True when stack @stack_id passes @f (NULL: every stack). */
bool samples__stack_matches(const struct samples *s, uint32_t stack_id,
			    const struct samples_filter *f);
/* True when the stack is idle by the rule above. */
bool samples__stack_is_idle(const struct samples *s, uint32_t stack_id);

/*
 * A cursor over the sorted samples that sums their counts over consecutive time ranges, such as
 * the cells of a heat map (render/heatmap_samples.h): each range costs about O(log(its records)
 * + 64) for no filter and for the default one (idle excluded), whatever its number of samples.
 */
struct samples_cursor; /* opaque */

/*
 * A cursor at the first sorted record at or after @start_ns, counting the samples that pass @f
 * (NULL: all; borrowed, as is @s, which must not change while the cursor lives). NULL + errno:
 * EINVAL (staged samples: call samples__sort()) or ENOMEM. Free with samples_cursor__free().
 */
struct samples_cursor *samples_cursor__new(const struct samples *s, const struct samples_filter *f,
					   uint64_t start_ns);
void samples_cursor__free(struct samples_cursor *cur); /* NULL is a no-op */
/*
 * Sum of the counts of the records from the cursor up to the first at or after @end_ns, which
 * the cursor moves to. @end_ns must not decrease from one call to the next.
 */
uint64_t samples_cursor__sum_until(struct samples_cursor *cur, uint64_t end_ns);
/* True when the cursor is past the last sorted record. */
bool samples_cursor__end(const struct samples_cursor *cur);

/*
 * Adds the samples with @start_ns <= time < @end_ns that pass @f into @dst as a profile (one
 * stack per distinct stack, counts summed). @dst may use the set's strtab (fast) or another one
 * (names interned). Returns the number of samples added (sum of counts, capped at INT_MAX) or
 * -EINVAL (staged samples) / -ENOMEM.
 */
int samples__range_profile(const struct samples *s, uint64_t start_ns, uint64_t end_ns,
			   const struct samples_filter *f, struct profile *dst);

#endif
