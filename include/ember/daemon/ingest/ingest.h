/* SPDX-License-Identifier: MIT */
/*
 * ingest: the sampler's groups become named stacks. The one way from the BPF maps to a sink, for
 * the live store and for ad hoc captures alike. For each group (pid, tid, comm, kernel and user
 * addresses, sample times) of a drain:
 *
 *   1. [filter]: samples of an excluded comm (fnmatch globs) or cgroup (path prefixes of the
 *      process's cgroup v2, read from /proc/PID/cgroup, cached 10 s per pid) are counted and
 *      dropped;
 *   2. the symbolizer names the frames: user frames root first, then kernel frames; a short-lived
 *      cache of symbolized stacks saves asking again for a stack seen lately: keyed by file
 *      and offset (symbolizer__user_keys()) when every frame is named by its file's symbols,
 *      so a new process of a known binary reuses them, else by pid, addresses and the
 *      process's symbol version (direct-mapped, keys compared whole); a CPython process's Python
 *      frames replace the eval-loop frames that ran them (python.h);
 *   3. marker frames stand where a stack is missing: "[lost stack]" / "[stack collision]" (and
 *      their "_[k]" kernel forms) for a stack the sampler could not keep, "[idle]_[k]" for an
 *      idle sample taken without its stack, "[truncated]" at the root of a user stack whose
 *      walk could not reach the outermost frame; flags say what is missing, truncated or idle
 *      (the one idle rule, idle.h);
 *   4. the sink gets the stack, as ids of the symbolizer's names (ingest__names()), with the
 *      group's samples.
 *
 * Not thread-safe: the main thread only (like the symbolizer it drives), except
 * ingest__filtered(), which any thread may call. Non-logging.
 */
#ifndef EMBER_INGEST_H
#define EMBER_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct sampler_group;
struct strtab;
struct symbolizer;

enum ingest_stack_flags {
	INGEST_STACK_IDLE = 1u << 0,	     /* the idle task, in an idle function (idle.h) */
	INGEST_STACK_USER_MISSING = 1u << 1, /* no user stack (kernel thread, or it was lost) */
	INGEST_STACK_KERN_MISSING = 1u << 2, /* no kernel stack */
	INGEST_STACK_TRUNCATED = 1u << 3,    /* deeper than the sampled depth */
};

/* A named stack and the samples that had it; everything borrowed for the sink call only. */
struct ingest_stack {
	const uint32_t *frames; /* ids in ingest__names(), ROOT FIRST: user, then kernel */
	size_t nr_frames;
	size_t nr_kernel;	       /* the last nr_kernel frames are kernel frames */
	unsigned int flags;	       /* enum ingest_stack_flags */
	const struct sampler_group *g; /* pid, tid, comm, times_ns, cpus, untimed */
};

/* Return 0 to go on, < 0 to stop the drain (returned by ingest__group()). */
typedef int (*ingest_sink_fn)(const struct ingest_stack *st, void *ctx);

struct ingest_stats {
	uint64_t groups;		   /* groups handed to ingest__group() */
	uint64_t filtered;		   /* samples excluded by [filter] */
	uint64_t cache_hits, cache_misses; /* the symbolized-stack cache */
	uint64_t cache_file_hits;	   /* hits on a stack named for another process of the
					      same files (keyed by file and offset) */
	uint64_t irq_wakers;		   /* wakers that were an interrupt: "[interrupt]" in
					      place of the task it came in on */
	uint64_t cgroup_reads;		   /* [filter]: /proc/PID/cgroup read for a process's
					      answer (its first sample, then every 10 s) */
	uint64_t cgroup_kept;		   /* ... answered from its state (the process
					      tracker's extension "filter") */
	uint64_t mem_bytes;		   /* gauge: its memory (the stack cache) */
};

/* struct ingest_stats described once (ingest_counters.c, core/base/counters.h) */
extern const struct counter_desc ingest_counters[];
extern const size_t ingest_counters_n;

struct ingest; /* opaque */

/*
 * @sym and @names (the symbolizer's strtab) are borrowed and must outlive the ingest. NULL +
 * errno (ENOMEM). Free with ingest__free().
 */
struct ingest *ingest__new(struct symbolizer *sym, struct strtab *names);
void ingest__free(struct ingest *in); /* NULL is a no-op */

/*
 * [filter]: @exclude_comms is a ','-separated list of fnmatch globs, @exclude_cgroups of cgroup
 * v2 path prefixes ("" or NULL: none); both copied. Replaces the previous filter (a reload).
 * 0 or -EINVAL (a list too long).
 */
int ingest__set_filter(struct ingest *in, const char *exclude_comms, const char *exclude_cgroups);

/* The unwind tables (may be NULL): a user stack whose walk was cut short asks them to read its
 * process's mappings again. Borrowed. */
struct unwinder;
void ingest__set_unwinder(struct ingest *in, struct unwinder *u);
/* The unwind tables set, or NULL. Borrowed. */
struct unwinder *ingest__unwinder(const struct ingest *in);

/* The language runtimes' readers (unwind/runtime.h): each names the frames its BPF walk marked
 * in the user stacks of the processes it reads. Borrowed: main.c adds each it made. 0, or
 * -ENOSPC. */
struct runtime_ops;
int ingest__add_runtime(struct ingest *in, const struct runtime_ops *ops, void *rt);
/* The set (runtime_set_*() over all of them: notes, carrying names, pruning). */
struct runtime_set;
const struct runtime_set *ingest__runtimes(const struct ingest *in);

/*
 * The process tracker (may be NULL; borrowed, outlives the ingest): [filter]'s cgroup answer
 * for a process is kept in its state there (an extension), read from /proc/PID/cgroup at the
 * process's first sample and every 10 s after, and kept a while after its exec or exit for the
 * samples of that image drained later; a pid reused by another process is read anew. Without
 * it, every ask reads /proc. 0 or -errno (the tracker's extensions all taken).
 */
struct proc_tracker;
int ingest__set_procs(struct ingest *in, struct proc_tracker *pt);

/* True when [filter] excludes the samples of @pid with @comm (not counted): @time_ns
 * (CLOCK_MONOTONIC, a sample's; 0: now) picks the process image they were taken in. */
bool ingest__excluded_at(struct ingest *in, uint32_t pid, const char *comm, uint64_t time_ns);
bool ingest__excluded(struct ingest *in, uint32_t pid, const char *comm);

/* Names the group's stacks and passes them to @sink (nothing when the filter excludes it).
 * 0, or what @sink returned, or -ENOMEM. */
int ingest__group(struct ingest *in, const struct sampler_group *g, ingest_sink_fn sink, void *ctx);

/* The strtab the frame ids index (the symbolizer's). Borrowed. */
const struct strtab *ingest__names(const struct ingest *in);

/* Samples excluded by [filter] since start: any thread. */
uint64_t ingest__filtered(const struct ingest *in);

/* The names were renewed (strtab__renew()): the cached stacks' ids are forgotten. */
void ingest__names_forget(struct ingest *in);

void ingest__stats(const struct ingest *in, struct ingest_stats *ret);

#endif
