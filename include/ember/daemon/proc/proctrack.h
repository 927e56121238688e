/* SPDX-License-Identifier: MIT */
#ifndef EMBER_DAEMON_PROC_PROCTRACK_H
#define EMBER_DAEMON_PROC_PROCTRACK_H

/*
 * proctrack: the one process tracker. It alone reads a process's mappings, once per
 * event: an exec (sched_process_exec, through the sampler's ring buffer), a first sample, a walk
 * cut short (dlopen since?). The unwinder, the symbolizer and the CPython reader take the
 * mappings from it instead of each reading /proc/PID/maps; an exit drops them at once.
 *
 * How: the PROCMAP_QUERY ioctl on /proc/PID/maps where the kernel has it (6.11+: one ioctl per
 * mapping, no text), else one read of /proc/PID/maps; `force_maps_read` forces the second. What
 * is kept: the file-backed mappings, the vDSO and executable anonymous ones (JIT code); not the
 * heap, the stack or anonymous data.
 *
 * Thread-safe (one mutex, held to look up and swap, never while reading /proc); a snapshot is
 * immutable and reference-counted, so a reader walks it without the lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ember/daemon/proc/procmaps.h"
#include "ember/core/base/counters.h"

struct proc_tracker_opts {
	const char *proc_root;		/* NULL: "/proc" (tests point it at a fake tree) */
	bool force_maps_read;		/* never PROCMAP_QUERY: the /proc/PID/maps text (CI tests both) */
	uint32_t max_procs;		/* processes whose mappings are kept; 0: 32768 */
	uint64_t sweep_grace_ns;	/* proc_tracker__sweep()'s; 0: PROC_SWEEP_GRACE_NS */
};

struct proc_tracker_stats {
	uint64_t reads;			/* mappings read (one per event), both ways */
	uint64_t query_reads;		/* ... with PROCMAP_QUERY */
	uint64_t text_reads;		/* ... as /proc/PID/maps text */
	uint64_t query_ioctls;		/* PROCMAP_QUERY calls */
	uint64_t read_errors;		/* gone (an exited process), unreadable */
	uint64_t reused;		/* asked and answered from the last read: no /proc work */
	uint64_t stale_used;		/* a read failed (gone): the last one answered */
	uint64_t exec_images;		/* execs with the executable's mapping from the kernel */
	uint64_t exec_image_used;	/* ... whose process was gone at its first read: named
					   from that image (once per process) */
	uint64_t image_rereads;		/* proc_tracker__image_maps(): the snapshot was of an
					   earlier image (not the executable's): read again */
	uint64_t exe_reads;		/* proc_tracker__exe_id(): /proc/PID/exe stat'ed... */
	uint64_t exe_reused;		/* ... answered from the last one (one for all readers) */
	uint64_t exe_paths;		/* proc_tracker__exe_path(): executables' paths from the
					   mappings (no readlink) */
	uint64_t cgroup_reads;		/* proc_tracker__cgroup(): /proc/PID/cgroup read */
	uint64_t events;		/* invalidations: exec, first sample, refresh */
	uint64_t execs;			/* execs notified */
	uint64_t execs_gone;		/* ... with the exit in the same batch: nothing read */
	uint64_t forks;			/* new processes by fork notified (not threads) */
	uint64_t forks_gone;		/* ... with their exec or exit in the same batch: not adopted */
	uint64_t fork_copies;		/* ... given their parent's mappings (no /proc read) */
	uint64_t fork_lists;		/* ... listed for the walker with their parent's list */
	uint64_t fork_parent_reads;	/* ... whose parent was unknown: read once, for all its forks */
	uint64_t fork_copies_filled;	/* ... whose copy lacked the libraries (the parent's exec
					   image, or a read while its loader mapped them), made
					   whole from the parent when a sample was named by it */
	uint64_t gone_known;		/* asks about a process whose exit was told: answered
					   "gone" with no /proc work */
	uint64_t first_sample_forked;	/* first samples of forks named from their fork's copy:
					   no /proc read (proc_tracker__first_sample()) */
	uint64_t exits;			/* exits notified (the process's state dropped if held) */
	uint64_t swept;			/* ... found gone by the sweep (an exit not notified) */
	uint64_t not_kept;		/* read but not kept: max_procs reached (counted skip) */
	uint64_t ident_checks;		/* mappings' identities checked (mapfile_stat), once per snapshot */
	uint64_t ident_reused;		/* ... asked again of the same snapshot: answered from it */
	uint64_t ident_failed;		/* ... that failed (gone, refused): not kept, asked again */
	uint64_t names_refused;		/* new frame names past their process's share */
	uint64_t names_unowned;		/* ... charged to no share: a process not held */
	uint64_t names_share_max;	/* the largest share charged now (bytes), all processes */
	uint64_t procs;			/* processes known now */
	uint64_t mappings;		/* mappings kept now, all processes */
	uint64_t mem_bytes;		/* their memory: the table, a read's scratch, and every
					   snapshot alive in this process (snapshot_bytes) */
	uint64_t snapshot_bytes;	/* snapshots alive, wherever held (readers', retired
					   images', forks'), each counted once */
	uint64_t ext_ended;		/* stages' states whose image ended (exec, exit, sweep) */
	uint64_t ext_swept;		/* ... found gone by the sweep (no exit told) */
	bool procmap_query;		/* the kernel answers PROCMAP_QUERY and it is used */
};

/* struct proc_tracker_stats described once (proctrack_counters.c, core/base/counters.h) */
extern const struct counter_desc proc_tracker_counters[];
extern const size_t proc_tracker_counters_n;

struct proc_tracker;
struct proc_maps;			/* one process's mappings at one read: immutable */

/* NULL + errno. */
struct proc_tracker *proc_tracker__new(const struct proc_tracker_opts *o);
void proc_tracker__free(struct proc_tracker *pt);	/* NULL is a no-op */

/* An event for @pid (exec, a first sample, a refresh): its next proc_tracker__maps() reads. */
void proc_tracker__invalidate(struct proc_tracker *pt, uint32_t pid);

/*
 * @pid's first sample: as proc_tracker__invalidate(), except for a forked process that still
 * holds its fork's copy of its parent's snapshot (no read and no exec since the fork): that copy
 * stays its snapshot, no /proc read (the child runs its parent's image; what it mapped since is
 * read when a sample falls outside it, as for any process). True when the copy was kept
 * (counted: first_sample_forked).
 */
bool proc_tracker__first_sample(struct proc_tracker *pt, uint32_t pid);

/*
 * True when @pid's leader exited (proc_tracker__exit()) and no fork or exec of the pid was told
 * since, within 30 s: its /proc entry has no mappings or executable to read (counted:
 * gone_known). proc_tracker__maps() and proc_tracker__exe_id() answer such a pid with
 * ESRCH without /proc work; readers with /proc paths of their own ask this first.
 */
bool proc_tracker__gone(struct proc_tracker *pt, uint32_t pid);

/*
 * When @pid began (CLOCK_MONOTONIC), as its fork's event told (kept through its execs): 0 and
 * *@ret_ns, or -ENOENT when no fork of it was seen (a process older than emberd, a fork whose
 * event was lost) or its time was not given.
 */
int proc_tracker__born(struct proc_tracker *pt, uint32_t pid, uint64_t *ret_ns);

/*
 * @pid called exec: as proc_tracker__invalidate(), counted. @gone: its exit is already known
 * (exec and exit in one batch of events): nothing is read for it, counted. The old image's
 * snapshot no longer answers proc_tracker__maps() (proc_tracker__before_exec() has it). @img (NULL, or inode 0: none): the new image's executable mapping as the
 * kernel told it at the exec (a file mapping; its path may be empty): kept as the process's
 * snapshot until a read replaces it, so that a process gone before any read (it lived less
 * than the worker took to come to it) is still named by the files other processes mapped
 * (counted: exec_images; exec_image_used when a failed read answered with it).
 */
void proc_tracker__exec(struct proc_tracker *pt, uint32_t pid, bool gone,
			const struct procmaps_entry *img, uint64_t time_ns);

/*
 * The image @pid ran before its last exec (at @time_ns, the exec's time as given to
 * proc_tracker__exec()): its fork's copy of its parent's snapshot, else its last read; kept
 * until its exit, the next exec or 30 s after the exec, for its samples taken before the exec
 * and named after it (a shell's fork sampled in the shell's code, exec'd and named at the next tick: no state of
 * the symbolizer's held it at the exec). NULL + errno ENOENT when none. Release with
 * proc_maps__put().
 */
struct proc_maps *proc_tracker__before_exec(struct proc_tracker *pt, uint32_t pid,
					    uint64_t *ret_time_ns);

/*
 * The time of @pid's last exec told (proc_tracker__exec(), CLOCK_MONOTONIC) into *@ret_time_ns,
 * kept as long as proc_tracker__before_exec()'s image, whether or not an image before it was
 * held (a process exec'd twice before any read): a reader that comes to a sample after the exec
 * knows that /proc shows another image than the sample's. 0 or -ENOENT (none known).
 */
int proc_tracker__last_exec(struct proc_tracker *pt, uint32_t pid, uint64_t *ret_time_ns);

/*
 * @child was made by fork from @parent: it shares its parent's last read (the same snapshot, no
 * /proc read) until an event; @gone: its exec or exit is in the same batch (counted: the walker
 * did not adopt it; the snapshot still names the samples it took before); @listed: the walker
 * adopted it with its parent's list. @time_ns (CLOCK_MONOTONIC; 0: not known): the fork's, kept as
 * the child's start (proc_tracker__born()); the parent's executable identity, when the tracker
 * has one, is the child's as of that time (proc_tracker__exe_id() answers it without a stat
 * until its exec). Counted.
 */
void proc_tracker__fork(struct proc_tracker *pt, uint32_t parent, uint32_t child, bool gone,
			bool listed, uint64_t time_ns);

/*
 * @pid's mappings: the last read if there is one since the last event and not before
 * @min_read_ns (CLOCK_MONOTONIC; 0: any), else read now; when that read fails (the process is
 * gone), the last read if any. NULL + errno (ENOENT/ESRCH: gone).
 * Release with proc_maps__put().
 */
struct proc_maps *proc_tracker__maps(struct proc_tracker *pt, uint32_t pid, uint64_t min_read_ns);

/*
 * @pid's mappings as of the image it runs now, for a reader that decides once what the process
 * is (a runtime: CPython, HotSpot, V8): proc_tracker__maps(@pid, 0) when that snapshot maps the
 * file /proc/PID/exe names (its inode number), else a read now (counted: image_rereads). The
 * last snapshot may be of an image the process left: a fork's copy of its parent's (a shell's)
 * or a read from before an exec the worker has not come to yet; judged from it, a Node or a JVM
 * started from a shell was taken for the shell, for good. When /proc/PID/exe cannot be read (the
 * process is gone), proc_tracker__maps(@pid, 0). Release with proc_maps__put().
 */
struct proc_maps *proc_tracker__image_maps(struct proc_tracker *pt, uint32_t pid);

/*
 * The device and inode of @pid's executable (/proc/PID/exe, followed): the last answer when it
 * is at most @max_age_ns old and the process has not exec'd since (an exec or exit event drops
 * it), else a stat now, kept where the process is held. One stat for every reader that looks at
 * a new process (the symbolizer, the tracker's image check, the V8 and HotSpot readers) instead
 * of one each; the age bounds how late an exec whose event was lost is seen. 0, or -errno
 * (ENOENT/ESRCH: gone). Thread-safe. Counted (exe_reads, exe_reused).
 */
#define PROC_EXE_MAX_AGE_NS (1000000000ull) /* a reader's later check for an exec */
#define PROC_EXE_BATCH_NS (20000000ull)	    /* the first looks at a new process */
int proc_tracker__exe_id(struct proc_tracker *pt, uint32_t pid, uint64_t max_age_ns,
			 uint64_t *ret_dev, uint64_t *ret_ino);

/*
 * The path of @pid's executable as its mappings name it: the file mapping, in
 * proc_tracker__maps(@pid, 0), of the inode /proc/PID/exe names (proc_tracker__exe_id(),
 * PROC_EXE_BATCH_NS: a new process's readers share one stat), NUL-terminated into @buf; no
 * readlink of /proc/PID/exe. The name is the process's to choose, as readlink's would be. Its
 * length, or -errno: ENOENT when that snapshot does not map it (a read from before an exec),
 * ENAMETOOLONG, ESRCH when gone. Counted (exe_paths).
 */
ssize_t proc_tracker__exe_path(struct proc_tracker *pt, uint32_t pid, char *buf, size_t size);

/*
 * @pid's /proc/PID/cgroup (v2's "0::/path" line, then v1's hierarchies, one per line) into *@buf
 * (grown as needed, *@cap its size; NUL-terminated, *@ret_len bytes), at most
 * PROC_CGROUP_MAX_BYTES: -EFBIG with what fit. Read at each call: a stage keeps what it derives
 * from it in its state of the process (an extension), so that a pid reused by another process
 * is read again. @pt NULL: the real /proc, not counted. 0 or -errno (ENOENT/ESRCH: gone).
 * Thread-safe. Counted (cgroup_reads).
 */
#define PROC_CGROUP_MAX_BYTES (64u << 10) /* a line per v1 hierarchy, each a path */
int proc_tracker__cgroup(struct proc_tracker *pt, uint32_t pid, char **buf, size_t *cap,
			 size_t *ret_len);
/* The cgroup v2 path ("/a/b") in a /proc/PID/cgroup @text, NUL-terminated into @ret (cut to
 * @size - 1); "" when the text has no "0::" line. */
void proc_cgroup_v2(const char *text, char *ret, size_t size);

/*
 * The copy of its parent's snapshot that the forked process @pid was given (proc_tracker__fork),
 * kept past later reads until its exec or exit: its image before an exec that /proc may show
 * already. Never a read. NULL + errno ENOENT when none. Release with proc_maps__put().
 */
struct proc_maps *proc_tracker__forked(struct proc_tracker *pt, uint32_t pid);

/*
 * The identity of file mapping @e of snapshot @m (an entry proc_maps__for_each() passed, kind
 * PROCMAPS_FILE with an inode), reached through process @pid: mapfile_stat() (proc/mapfile.h:
 * map_files, else the path under the process's root, never opened; a regular file of the
 * mapping's inode) the first time any reader asks, then the same answer from the snapshot for
 * every reader and every process sharing it (a fork's copy): one check per mapping per
 * snapshot, not one per reader. *@ret_st: that fstat's device, inode, size, mtime, owner and
 * mode (the rest zero). 0 or -errno (mapfile_stat's; a failure is not kept: asked again, it is
 * checked again). Thread-safe. Counted (ident_*).
 *
 * What a reader may take from it: which cached file to look up (elf/filecache.h). What it reads
 * from a file it opens is keyed by that open file's own fstat, never by this answer, so a file
 * replaced after the check lends nothing to another.
 */
int proc_tracker__identity(struct proc_tracker *pt, struct proc_maps *m,
			   const struct procmaps_entry *e, uint32_t pid, struct stat *ret_st);

/*
 * The frame names' share of a process (core/base/strtab.h, strtab__intern_as()): the bytes of new
 * names it made emberd keep in the table's current generation, held with its mappings (an exec
 * keeps it: the same process; its exit drops it). Pass proc_tracker__admit_names as the admit
 * function with a struct proc_names_owner as its context: a name that would take the process's
 * share past the limit is refused, counted (names_refused); a process the tracker does not hold
 * (never read, not kept) is charged nothing, counted (names_unowned). Thread-safe.
 */
struct proc_names_owner {
	struct proc_tracker *pt;
	uint32_t pid;
};
bool proc_tracker__admit_names(void *owner, size_t cost, uint64_t generation, size_t limit);
/* Interns @len bytes at @s into @st (strtab__intern_as()), charged to @pid's share. */
struct strtab;
int proc_tracker__intern_name(struct proc_tracker *pt, uint32_t pid, struct strtab *st,
			      const char *s, size_t len);

/* @pid exited: its mappings go now (snapshots still held stay valid until put). */
void proc_tracker__exit(struct proc_tracker *pt, uint32_t pid);
/* ... at @time_ns (CLOCK_MONOTONIC, the exit event's): its stages' states end as of then. */
void proc_tracker__exit_at(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns);

/* Drops the processes that are gone (an exit not notified): those found gone by an earlier
 * sweep at least sweep_grace_ns before, so that what their samples drained since need (a
 * fork's copy, the image before an exec) stays until they are named. Returns how many. */
#define PROC_SWEEP_GRACE_NS (4ull * 1000000000ull)
int proc_tracker__sweep(struct proc_tracker *pt);

void proc_tracker__stats(struct proc_tracker *pt, struct proc_tracker_stats *ret);

/* Calls @fn for each mapping in address order; nonzero stops and is returned. */
int proc_maps__for_each(const struct proc_maps *m, procmaps_entry_fn fn, void *ctx);
size_t proc_maps__count(const struct proc_maps *m);
/* When it was read (CLOCK_MONOTONIC). */
uint64_t proc_maps__read_ns(const struct proc_maps *m);
void proc_maps__put(struct proc_maps *m);		/* NULL is a no-op */

/*
 * Extensions: a stage's per-process state, kept here instead of in a table of the stage's own
 * (the unwinder, the CPython, V8 and HotSpot readers, ingest's cgroups, the exporter's identity and
 * frame locations). ops.size bytes per process image, zeroed when made, made only when the
 * stage asks (a process it never looks at costs it nothing). The tracker's exec and exit events,
 * and its sweep (an exit whose event was lost), end the image: its state is no longer current,
 * the stage is told (ops.ended, on the events' thread, outside the tracker's lock), and the
 * state is kept ops.keep_ns more for the samples taken before and named after (a worker behind
 * under load), then released (ops.release: what the state holds; the state itself is the
 * tracker's) by proc_tracker__ext_prune(). One rule for every stage. The states of an
 * extension are used on one thread, its stage's, and the tracker's lock guards its lists only: a
 * stage on the worker (the tracker's events' thread) needs nothing more; a stage on another
 * thread either has no ops.ended and uses current states alone (frameloc, on the exporter's), or
 * guards its states with a lock of its own that its ops.ended takes too (identity, asked from the
 * exporter's and the HTTP threads). A stage bounds how many states it makes
 * (proc_tracker__ext_count()).
 */
#define PROC_EXT_MAX 12

struct proc_ext_ops {
	const char *name;
	size_t size;		/* bytes of a process's state */
	uint64_t keep_ns;	/* an ended state kept this long */
	/* NULL: not told; @event_ns: the exec's or exit's time (CLOCK_MONOTONIC), 0 when none was
	 * told (a sweep, or an end asked for without one) */
	void (*ended)(void *ctx, uint32_t pid, void *state, uint64_t event_ns);
	void (*release)(void *ctx, uint32_t pid, void *state);	/* NULL: nothing held */
	void *ctx;
	/* an exit told does not end this stage's states (the stage keeps a process that exited
	 * as its own, for its threads' samples after the leader's exit, and lets it go itself);
	 * an exec and the sweep still do */
	bool keep_at_exit;
};

/* An extension's id (>= 0), or -EINVAL / -ENOSPC (PROC_EXT_MAX taken). */
int proc_tracker__ext_register(struct proc_tracker *pt, const struct proc_ext_ops *ops);
/* Releases every state of @ext (current and ended) and frees its id. */
void proc_tracker__ext_unregister(struct proc_tracker *pt, int ext);
/* @pid's state for its current image; @make: made (zeroed) when there is none. NULL: none (or
 * ENOMEM). */
void *proc_tracker__ext(struct proc_tracker *pt, int ext, uint32_t pid, bool make);
/* @pid's current state, else the state of its newest ended image still kept; NULL: neither. */
void *proc_tracker__ext_last(struct proc_tracker *pt, int ext, uint32_t pid);
/* The state of the image @pid ran at @time_ns (CLOCK_MONOTONIC, a sample's time): the ended
 * image whose end (its exec's or exit's time) came first after @time_ns, else the current one,
 * else the newest ended (a sample after the end: threads that ran on). NULL: none kept. */
void *proc_tracker__ext_at(struct proc_tracker *pt, int ext, uint32_t pid, uint64_t time_ns);
/* Ends @pid's current state of @ext alone, as of @time_ns (0: now): a stage that learns of an
 * exec or exit by itself (one without the tracker's events: the tests, `ember record`). */
void proc_tracker__ext_end(struct proc_tracker *pt, int ext, uint32_t pid, uint64_t time_ns);
/* The ended state of @pid whose image ran at @time_ns (the one whose end came first after it);
 * NULL: none (never the current state, unlike proc_tracker__ext_at()). */
void *proc_tracker__ext_ended_at(struct proc_tracker *pt, int ext, uint32_t pid, uint64_t time_ns);
/* Whether an ended state of @pid is kept. */
bool proc_tracker__ext_has_ended(struct proc_tracker *pt, int ext, uint32_t pid);
/* A new state (zeroed) of an image of @pid that ended at @until_ns (0: now), made ended at once
 * and older than the pid's other ended states: a stage that comes to an image only after its end
 * (what ran before an exec, as the tracker kept it). NULL: ENOMEM. */
void *proc_tracker__ext_add_ended(struct proc_tracker *pt, int ext, uint32_t pid,
				  uint64_t until_ns);
/* Releases @pid's current state of @ext now, not ended (nothing to keep: evicted, forgotten). */
void proc_tracker__ext_drop(struct proc_tracker *pt, int ext, uint32_t pid);
/* Releases @ext's oldest ended states past @max_ended (on the extension's thread). */
void proc_tracker__ext_trim(struct proc_tracker *pt, int ext, size_t max_ended);
/* @ext's states held, current and ended. */
size_t proc_tracker__ext_count(struct proc_tracker *pt, int ext);
/* Releases @ext's states ended more than keep_ns ago (on the extension's thread). */
void proc_tracker__ext_prune(struct proc_tracker *pt, int ext);
/* @fn on each state of @ext, current ones first (on the extension's thread; @fn must not call
 * the tracker's extension functions). */
void proc_tracker__ext_each(struct proc_tracker *pt, int ext,
			    void (*fn)(void *arg, uint32_t pid, void *state, bool ended), void *arg);

#endif
