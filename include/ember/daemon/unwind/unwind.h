/* SPDX-License-Identifier: MIT */
/*
 * unwind: the tables the BPF sampler walks user stacks with (bpf/unwind.bpf.h), kept in the
 * sampler's maps. For each sampled process it reads /proc/PID/maps and gives the BPF walker the
 * list of its executable mappings, each with the range of rows of its file in the shared rows
 * array; a file's rows are compiled from its CFI (cfi.h) once a walk reaches it
 * (unwinder__reached(); until then the mapping is listed without rows, frame pointers there),
 * keyed by device and inode (and shared by build-id and size across mounts, elf/filecache.h's
 * rule: a container's libc is the host's when they are the same file). When the array is full,
 * tables no process uses go first (least recently used), then
 * tables of processes not sampled for 30 s (those are listed again, frame pointers there); a
 * table whose room would take a table in use is not built (counted as refused). Anonymous executable mappings (JIT code) and
 * files without CFI are listed with no rows: frame pointers. The vDSO's rows come from this
 * process's own vDSO (the kernel's image is the same for every process).
 *
 * Building is off the sample path and bounded: unwinder__work() builds what is queued within a
 * time budget and leaves the rest for the next call; a process whose list is not ready is walked
 * by frame pointer meanwhile (sampler_stats.user_fp_walks counts those samples).
 *
 * Main thread only; non-logging.
 */
#ifndef EMBER_UNWIND_H
#define EMBER_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/core/base/counters.h"

struct sampler;
struct dbgfetch;
struct filecache;

struct unwind_opts {
	uint32_t max_procs;		/* processes listed at once (the BPF map's size) */
	uint64_t work_budget_ns;	/* table building per unwinder__work() call */
	const char *proc_root;		/* "/proc" unless testing */
	const char *debug_dir;		/* separate debug files by build-id: ':'-separated
					 * dirs (symbols.debug_dirs; "/usr/lib/debug") */
	uint64_t max_section_bytes;	/* a CFI section read (inflated); more: refused. 0: none */
	struct dbgfetch *fetch;		/* debuginfod (borrowed; NULL: none): a file without CFI
					 * and without a local debug file gets its debug file's
					 * .debug_frame; debug_dir must name dbgfetch__dir() */
	struct proc_tracker *procs;	/* where mappings come from (borrowed); NULL: one of its own */
	struct filecache *files;	/* the daemon's file cache (borrowed, the worker's thread):
					 * a file's headers read once for every reader
					 * (elf/elffile.h); NULL: read each time */
};

#define UNWIND_OPTS_DEFAULT { .max_procs = 4096, .work_budget_ns = 20000000, \
			      .proc_root = "/proc", .debug_dir = "/usr/lib/debug", \
			      .max_section_bytes = 128ull << 20 }

struct unwind_stats {
	uint64_t rows_capacity;		/* gauge: rows the array holds */
	uint64_t rows_used;		/* gauge: rows of the tables held */
	uint64_t index_used;		/* gauge: elements of their headers and block indexes, in
					 * the same array (at most rows / 16 + 4 per table) */
	uint64_t bytes;			/* gauge: kernel memory of the rows array (8 B a row) */
	uint64_t rows_lossy;		/* rows the 8-byte form cannot hold: frame pointers there */
	uint64_t tables;		/* gauge: files with rows */
	uint64_t tables_empty;		/* gauge: files without CFI (frame pointers there) */
	uint64_t builds;		/* tables compiled */
	uint64_t build_ns;		/* ... and the time they took */
	uint64_t build_failures;	/* files that could not be read or have no CFI */
	uint64_t build_shared;		/* a file found by build-id under another device/inode */
	uint64_t headers_read;		/* files whose ELF headers the unwinder read itself (the
					 * file cache had none: no other reader had read them) */
	uint64_t debuginfod;		/* tables with a debug file's CFI from debuginfod */
	uint64_t debuginfod_pending;	/* tables built while their debug file was being fetched */
	uint64_t heap_bytes;		/* gauge: its own memory (files, processes, scratch), not the
					   kernel's rows (bytes) */
	uint64_t debuginfod_late;	/* ... dropped once it came, to be built again with it */
	uint64_t files_changed;		/* a cached (device, inode) found naming another file now */
	uint64_t evictions;		/* tables evicted for room */
	uint64_t refused;		/* tables not built: no room but tables in use (30 s) */
	uint64_t too_big;		/* tables larger than the whole array: not held */
	uint64_t procs;			/* gauge: processes listed */
	uint64_t procs_pending;		/* gauge: processes waiting for their tables */
	uint64_t procs_dropped;		/* processes not listed: the map was full */
	uint64_t dels_skipped;		/* lists the BPF program deleted at an exec or exit (no
					   bpf() call of emberd's) */
	uint64_t procs_swept;		/* forgotten by the sweep: gone without a notification */
	uint64_t ended_maps_dropped;	/* ended processes whose unbuilt mappings were not kept for
					   their late samples (more than 256 kept already) */
	uint64_t exec_lists;		/* processes listed at exec (unwinder__exec_pid) */
	uint64_t exec_seeded;		/* execs not listed: the BPF program seeded their
					   executable's table */
	uint64_t fork_notes_kept;	/* forks' first samples whose adopted list stood: no
					   read, no write */
	uint64_t reach_unlisted;	/* walks of listed processes that reached an address
					   outside their list: listed again (rate-limited) */
	uint64_t exec_unbuilt;		/* ... mappings left to frame pointers then: no table yet */
	uint64_t files_unbuilt;		/* gauge: files listed that no walk reached yet: no table
					 * built (frame pointers there until one does) */
	uint64_t files_published;	/* gauge: files whose table the walk finds through the
					 * kernel's mapping (an address its process's list lacks) */
	uint64_t build_asks;		/* files whose table a walk asked for (unwinder__reached) */
	uint64_t reach_fp_samples;	/* samples with frames in a listed file without its table
					 * yet: walked by frame pointer there */
	uint64_t reach_dropped;		/* addresses a walk reached not kept for the next list
					 * (REACH_MAX): the next sample asks again */
	uint64_t lists;			/* lists written to the BPF map */
	uint64_t maps_overflow;		/* executable mappings past EMBER_UNWIND_MAX_MAPS */
	uint64_t maps_errors;		/* /proc/PID/maps not readable (gone, denied) */
	uint64_t ready_ns_total;	/* first note to list written, summed over processes */
	uint64_t ready_count;
	struct mapfile_stats files;	/* mapped files opened and refused (proc/mapfile.h) */
};

/* struct unwind_stats described once (unwind_counters.c, core/base/counters.h) */
extern const struct counter_desc unwind_counters[];
extern const size_t unwind_counters_n;

struct unwinder; /* opaque */

/*
 * Tables in @sampler's maps (borrowed; must outlive the unwinder), of the capacity the sampler
 * was made with (sampler_opts.unwind_rows). @o may be NULL (UNWIND_OPTS_DEFAULT). NULL + errno
 * (ENOMEM; EINVAL: the sampler has no tables).
 */
struct unwinder *unwinder__new(struct sampler *sampler, const struct unwind_opts *o);
void unwinder__free(struct unwinder *u); /* NULL is a no-op; the BPF lists stay in the maps */

/* A process was sampled for the first time (or its first sample after an exec): queue it. */
void unwinder__note_pid(struct unwinder *u, uint32_t pid);
/*
 * A process called exec (the process tracker's event): listed now with the tables already built
 * (a binary seen before: one more `ls`, a build's compiler), so that its first samples are walked
 * whole; files without a table stay frame pointers until its first sample notes it (no table is
 * compiled for a process that is never sampled). @seeded: the BPF program put the executable's
 * mapping with its table in the process's mapping cache at the exec, and finds the files its
 * walks reach through the kernel: not listed until its first sample (counted).
 */
void unwinder__exec_pid(struct unwinder *u, uint32_t pid, bool seeded);

/*
 * @child was made by fork from @parent: it runs its parent's image, and the BPF
 * program listed it at the fork with a copy of its parent's list: adopted here with the same
 * tables (no /proc read, no bpf() call). 0, -ENOENT (the parent is not listed: the child is
 * noted at its first sample), or -errno.
 */
int unwinder__fork_pid(struct unwinder *u, uint32_t parent, uint32_t child);
/*
 * Its mappings may have changed (a stack of it ran out of known mappings, dlopen): read them
 * again, at most once a second per process.
 */
void unwinder__refresh_pid(struct unwinder *u, uint32_t pid);
/* Its samples are being stored (ingest, per group): the tables it uses are hot, not evicted for
 * others while it runs. Cheap: at most once a second per process does anything. */
void unwinder__sampled(struct unwinder *u, uint32_t pid);
/*
 * @n addresses (@ips, leaf first: the sampled pc, then return addresses) a walk of @pid reached,
 * for @samples samples (ingest, per group): the files they are in get their tables, built at
 * the next unwinder__work(), and every process listing those files is listed again with them.
 * Cheap when every file the process lists has its table (or failed recently).
 */
void unwinder__reached(struct unwinder *u, uint32_t pid, const uint64_t *ips, size_t n,
		       uint64_t samples);
/* exec or exit: its list goes (its next sample after an exec notes it again). */
void unwinder__forget_pid(struct unwinder *u, uint32_t pid);
/*
 * The same for an exec or exit the BPF program reported at @event_ns (CLOCK_MONOTONIC, taken
 * before the program deleted the list): the list is deleted here only if written after that
 * time (a write from a read before the event, landed after the program's delete), not again
 * for every process: a bpf() call less per exec and per exit.
 */
void unwinder__forget_pid_at(struct unwinder *u, uint32_t pid, uint64_t event_ns);
/*
 * Housekeeping, e.g. every 5 s: forgets every process whose /proc entry is gone, whatever exit
 * notification was missed (a lost ring record; without the sweep, entries of exited processes
 * filled unwind.processes). Returns how many.
 */
int unwinder__sweep(struct unwinder *u);

/*
 * Lists the queued processes, building the tables they need while the budget lasts. Returns the
 * number of processes still queued, or -ENOMEM.
 */
int unwinder__work(struct unwinder *u);

void unwinder__stats(const struct unwinder *u, struct unwind_stats *ret);

struct ember_unwind_row;
struct ember_unwind_prow;
/*
 * Packs @n rows (sorted by pc, n >= 1) as one table of the BPF rows array (bpf_shared.h: the
 * header with @id, the index by address block, the rows in their 8-byte form) into *@buf
 * (grown, *@cap its room); rows the 8-byte form cannot hold add to *@ret_lossy. Returns the
 * table's elements, or 0 (no memory). Exposed for its tests.
 */
size_t unwind_pack_table(const struct ember_unwind_row *rows, size_t n, uint32_t id,
			 struct ember_unwind_prow **buf, size_t *cap, uint64_t *ret_lossy);

#endif
