/* SPDX-License-Identifier: MIT */
/*
 * store: the LIVE container (the others: core/model/profile.h), the daemon's memory of what ran.
 * A bounded ring of timestamped samples, each referring
 * to an interned "context" (pid, tid, cpu, comm, cgroup, stack), where a stack is a sequence of interned
 * frame names, root first, whose last n_kernel frames are kernel frames.
 *
 *   frames   name -> frame id (a strtab the store owns)
 *   stacks   (frame ids, n_kernel, flags) -> stack id
 *   samples  8 bytes each: a time offset in microseconds from the base of the chunk it is in,
 *            and a context id; chunks of samples form the ring, oldest chunk evicted first
 *
 * Retention: by time (samples older than newest - retention_s are dropped on store__expire())
 * and by memory (when the store's bytes exceed max_bytes, the oldest samples go first). Every
 * evicted sample is counted in store_stats. Interned stacks are kept while any retained sample
 * refers to them: when the interned tables alone outgrow half of max_bytes, the store compacts
 * them (store_stats.compactions), and again after each quarter of its chunks dropped for memory
 * while they stay that big (tables that grow with the samples never take the whole history).
 *
 * Times are nanoseconds since the Unix epoch (CLOCK_REALTIME); the daemon converts the BPF
 * clock. Resolution kept: 1 microsecond.
 *
 * Thread-safety: every function takes the store's mutex; all of them may be called from any
 * thread. Queries copy out what they need under the lock (into a caller-owned profile, array or
 * batch of samples) so that HTTP handlers render after the lock is released. A query walks the
 * ring in batches of at most 65536 records per hold of the lock and lets a waiting writer in
 * between batches, so the daemon's ingest waits for one batch (well under a millisecond), not
 * for a whole query; samples appended or evicted during a query may or may not be in it.
 */
#ifndef EMBER_STORE_H
#define EMBER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct strtab;
struct profile;

#define STORE_DEFAULT_RETENTION_S 3600
#define STORE_DEFAULT_MAX_BYTES	  (256ULL << 20)
#define STORE_MIN_MAX_BYTES	  (1ULL << 20)
#define STORE_COMM_LEN		  16
#define STORE_MAX_CPUS		  1024 /* CPUs tallied one by one; higher ones count as unknown */

struct store; /* opaque */

/*
 * @retention_s > 0, @max_bytes >= STORE_MIN_MAX_BYTES. NULL + errno (EINVAL, ENOMEM); free with
 * store__free().
 */
struct store *store__new(uint64_t retention_s, uint64_t max_bytes);
void store__free(struct store *s); /* NULL is a no-op */

/* Changes the limits at run time (config reload); takes effect at the next append/expire. */
int store__set_limits(struct store *s, uint64_t retention_s, uint64_t max_bytes);

/* --- writing (the daemon's main thread) ----------------------------------------------------- */

/* Interns a frame name (@len bytes, no NUL or ';' expected). Returns frame id >= 0 or -ENOMEM. */
int store__intern_frame(struct store *s, const char *name, size_t len);

enum store_stack_flags {
	STORE_STACK_IDLE = 1u << 0,	    /* idle by the one rule (idle.h): the idle task, idle */
	STORE_STACK_USER_MISSING = 1u << 1, /* no user stack could be taken (-EFAULT etc.) */
	STORE_STACK_KERN_MISSING = 1u << 2, /* no kernel stack */
	STORE_STACK_TRUNCATED = 1u << 3,    /* deeper than the sampled depth */
};

/*
 * Interns a stack: @frames[0..n) are frame ids from store__intern_frame(), ROOT FIRST; the last
 * @n_kernel of them are kernel frames (kernel frames sit above user frames). @flags: a mask of
 * enum store_stack_flags. Returns the stack id >= 0, -EINVAL (bad frame id, n_kernel > n) or
 * -ENOMEM. The same content always gives the same id (until a compaction renumbers; callers
 * intern again for every batch they append and keep no ids across store__append() calls).
 */
int store__intern_stack(struct store *s, const uint32_t *frames, size_t n, size_t n_kernel,
			unsigned int flags);

/* One sample (or @count samples at the same time) to append. */
struct store_sample {
	uint64_t time_ns;	/* ns since the Unix epoch */
	uint32_t stack_id;	/* from store__intern_stack() */
	uint32_t pid;		/* tgid; 0 for the idle task */
	uint32_t tid;
	uint32_t cpu;
	uint32_t count;		/* >= 1; stored as @count records of 8 bytes */
	uint64_t cgroup_id;	/* cgroup v2 id at sample time; 0: unknown */
	char comm[STORE_COMM_LEN]; /* NUL-padded; need not be NUL-terminated when 16 long */
};

/*
 * Appends @n samples (any order; times before the oldest chunk's base are clamped to it and
 * counted). Evicts the oldest samples past max_bytes. Returns 0, -EINVAL (a bad stack id: nothing
 * appended) or -ENOMEM (the samples not appended are counted in store_stats.dropped).
 */
int store__append(struct store *s, const struct store_sample *samples, size_t n);

/* Drops samples older than @now_ns - retention. Returns the number evicted. */
uint64_t store__expire(struct store *s, uint64_t now_ns);

/* --- reading (any thread) ------------------------------------------------------------------- */

enum store_root {
	STORE_ROOT_NONE = 0,	/* stacks start at the first user frame */
	STORE_ROOT_COMM,	/* "comm" as the root frame (stackcollapse-perf's default) */
	STORE_ROOT_COMM_PID,	/* "comm-PID" */
	STORE_ROOT_COMM_TID,	/* "comm-PID/TID" */
};

struct ember_regex;

struct store_filter {
	uint64_t from_ns;	/* inclusive; 0: from the oldest */
	uint64_t to_ns;		/* exclusive; 0 or UINT64_MAX: to the newest */
	int64_t pid;		/* < 0: any */
	int64_t tid;		/* < 0: any */
	/* over comm (unanchored; ember/core/base/regex.h); NULL: any. Borrowed. A query whose
	 * pattern reaches its match limit fails with -QUERY_ECOMM_LIMIT (query.h). */
	const struct ember_regex *comm_re;
	bool kernel;		/* keep kernel frames */
	bool user;		/* keep user frames */
	bool include_idle;	/* include the idle task's samples */
	enum store_root root;
	/*
	 * Workload identity (the exporters' identity.h gives both): called under the store's lock,
	 * once per context of the query, so they must not block nor call into the store. NULL: none.
	 * @ident_match: keep the context's samples? @group_name: a frame above the root (group_by;
	 * NULL result: "[none]").
	 */
	bool (*ident_match)(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg);
	const char *(*group_name)(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg);
	void *ident_arg;
};

/* Everything, all frames, idle excluded, comm as root. */
#define STORE_FILTER_INIT                                                                          \
	{                                                                                          \
		.from_ns = 0, .to_ns = 0, .pid = -1, .tid = -1, .comm_re = NULL, .kernel = true,   \
		.user = true, .include_idle = false, .root = STORE_ROOT_COMM,                      \
		.ident_match = NULL, .group_name = NULL, .ident_arg = NULL                         \
	}

/*
 * A new profile of the samples matching @f: frame names are interned into @st (caller-owned,
 * must outlive the profile; it may be shared with other profiles). A stack whose frames are all
 * filtered away (e.g. kernel-only on a user-only sample) is still counted, as an empty stack
 * (under the root frame when there is one). NULL + errno (EINVAL for a bad regex or
 * kernel == user == false, ENOMEM). Caller frees with profile__free().
 */
struct profile *store__query(struct store *s, const struct store_filter *f, struct strtab *st);

/*
 * Writes the folded profile of everything in @s (the idle task with @include_idle, stacks rooted
 * per @root) to @path (NULL or "": stdout), most samples first; logs what it wrote or why not.
 * 0 or -errno. A NULL store is a no-op.
 */
int store__dump_folded(struct store *s, bool include_idle, enum store_root root,
		       const char *path);

/* A point of a heat map: the samples in [time_ns, time_ns + bucket_ns). */
struct store_point {
	uint64_t time_ns;	/* a multiple of bucket_ns */
	uint64_t count;
};

/*
 * Counts the samples matching @f per @bucket_ns (>= 1000) bucket: *ret_points is a malloc'ed
 * array of the non-empty buckets, sorted by time, *ret_n of them (the caller frees it with
 * free(); NULL when 0). Returns 0, -EINVAL or -ENOMEM (out-params untouched on failure).
 */
int store__heatmap(struct store *s, const struct store_filter *f, uint64_t bucket_ns,
		   struct store_point **ret_points, size_t *ret_n);

/* One sample as store__foreach_sample() shows it; everything borrowed for the callback only. */
struct store_sample_view {
	uint64_t time_ns;
	uint32_t pid, tid, cpu;
	uint64_t cgroup_id;		/* 0: unknown */
	/* the same number, the same (pid, tid, cpu, comm, cgroup, stack) within one
	 * store__foreach_sample() call (an equal context may also get another number): 0, 1, 2...
	 * so that a caller may cache its work per context */
	uint32_t context;
	const char *comm;		/* NUL-terminated */
	const char *const *frames;	/* root first, after the filter's frame selection and root */
	size_t nr_frames;
	unsigned int flags;		/* enum store_stack_flags */
};

/* Returns 0 to go on, anything else stops the walk and is returned by store__foreach_sample(). */
typedef int (*store_sample_fn)(const struct store_sample_view *v, void *ctx);

/*
 * Calls @fn for every sample matching @f, in storage order (roughly by time), at most @max
 * samples (0: no limit). The samples are copied out under the lock a batch at a time (times,
 * contexts and their frame names into memory of the call's own) and @fn runs WITHOUT the lock:
 * it may take its time (render, send) and call into the store. Returns 0, @fn's non-zero value
 * (the walk stops there), -EINVAL or -ENOMEM.
 */
int store__foreach_sample(struct store *s, const struct store_filter *f, size_t max,
			  store_sample_fn fn, void *ctx);

/* A position in append order: every sample appended after it is after it, whatever its time. */
struct store_cursor {
	uint64_t seq;	/* a chunk */
	uint32_t idx;	/* a record in it */
};

/* The position past every sample appended so far. */
void store__cursor_end(struct store *s, struct store_cursor *ret);

/*
 * Like store__foreach_sample(), but in append order from *@cursor to the last sample appended
 * (@f's time range still applies; max: none): *@cursor moves past what was walked, so that the
 * next call sees only samples appended since, late ones included. *@ret_gap is set when the
 * cursor's chunk had been evicted meanwhile (samples lost to the walker: it resumes at the
 * oldest kept). Returns like store__foreach_sample(); on a failure the cursor stays at the start
 * of the batch that failed (its samples may be walked again).
 */
int store__foreach_since(struct store *s, const struct store_filter *f, struct store_cursor *cursor,
			 store_sample_fn fn, void *ctx, bool *ret_gap);

struct store_stats {
	uint64_t samples;	  /* held now */
	uint64_t appended;	  /* ever appended */
	uint64_t evicted_time;	  /* dropped by retention time */
	uint64_t evicted_memory;  /* dropped by the memory limit */
	uint64_t dropped;	  /* could not be appended (ENOMEM) */
	uint64_t clamped;	  /* times moved forward to a chunk base (out-of-order input) */
	uint64_t comms_escaped;	  /* samples whose comm held ';' or control bytes (escaped) */
	uint64_t compactions;	  /* rebuilds of the interned tables */
	uint64_t frames;	  /* interned frame names */
	uint64_t stacks;	  /* interned stacks */
	uint64_t contexts;	  /* interned (pid, tid, cpu, comm, cgroup, stack) */
	uint64_t bytes;		  /* memory held, all of it */
	uint64_t sample_bytes;	  /* ... of which sample records (8 per sample + chunk headers) */
	uint64_t max_bytes;
	uint64_t retention_s;
	uint64_t oldest_ns;	  /* 0 when empty */
	uint64_t newest_ns;	  /* 0 when empty */
};

void store__stats(struct store *s, struct store_stats *ret);

/* struct store_stats described once (store_counters.c, core/base/counters.h) */
extern const struct counter_desc store_counters[];
extern const size_t store_counters_n;

/*
 * Samples appended since start, by CPU: fills @ret[0..min(n, cpus)) and *@ret_unknown (samples of
 * no known CPU: untimed ones, or CPUs >= STORE_MAX_CPUS); returns the number of CPUs seen (the
 * highest CPU appended + 1), which may exceed @n.
 */
size_t store__cpu_samples(struct store *s, uint64_t *ret, size_t n, uint64_t *ret_unknown);

/*
 * Number of compactions so far: frame and stack ids from before a change are void. Cheap; the
 * writer checks it before reusing cached frame ids.
 */
uint64_t store__compactions(struct store *s);

#endif
