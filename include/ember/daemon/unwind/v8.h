/* SPDX-License-Identifier: MIT */
/*
 * v8: JavaScript functions by name in the stacks of Node (V8) processes, with no flag in the
 * program (no --perf-basic-prof, no agent).
 *
 *   detection   at a process's first sample (v8__sampled(), on the worker): a mapped file named
 *               node* or libnode.so* whose v8dbg_* postmortem symbols (elf/rtintro.h) are all
 *               there and consistent (uncompressed tagged pointers, frame slots where x86-64
 *               keeps them, offsets inside an object) is written to the sampler's V8 map (struct
 *               ember_v8_proc): the BPF walk then stores, after each JavaScript frame's native
 *               ip, the address of its SharedFunctionInfo (bpf/v8.bpf.h). A file whose data is
 *               missing or inconsistent is counted (procs_unsupported) and its frames keep their
 *               native names (Builtins_*, [unknown]), never a guess.
 *   names       each SharedFunctionInfo is read from the process's own memory (process_vm_readv,
 *               bounded: strings to V8_STR_MAX characters, cons/thin/sliced strings to a fixed
 *               depth), its map checked to say SharedFunctionInfo, its name taken from the
 *               String or the ScopeInfo it holds, its script's name as the file and the
 *               function's line (its ScopeInfo's start position through the line ends of the
 *               script's source, read once per script, bounded): "name (file:line)_[j]",
 *               "(anonymous) (file:line)_[j]", "name (file)_[j]" when the source cannot be
 *               read (an external string). A frame of optimized code (TurboFan's, Maglev's)
 *               is followed by the functions inlined into it at its pc, root first: the code
 *               found down from the pc, its source position table and DeoptimizationData
 *               read as the version's layout says (v8_tf_layout_for()). Cached per process by address,
 *               checked again (one read) after V8_RECHECK_NS: V8's GC moves objects. A frame
 *               that cannot be named keeps its native name (counted, frames_unnamed).
 *
 * Worker thread only (ingest); non-logging (counters in v8_stats).
 */
#ifndef EMBER_V8_H
#define EMBER_V8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/rtintro.h"
#include "ember/daemon/proc/mapfile.h"

#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"

struct sampler;
struct strtab;
struct proc_tracker;

struct v8_opts {
	uint32_t max_procs;	    /* V8 processes tracked */
	uint32_t max_names;	    /* SharedFunctionInfos named, per process */
	const char *proc_root;	    /* "/proc" unless testing */
	struct proc_tracker *procs; /* where mappings come from (borrowed); NULL: its own */
	struct filecache *files;    /* per-file facts (borrowed); NULL: one of its own */
	struct elfsym_source images; /* the symbolizer's images (elfsym.h); none: read here */
};

/* max_procs: processes looked at (V8 or not, while they live); the BPF map holds 1024 V8s */
#define V8_OPTS_DEFAULT { .max_procs = 65536, .max_names = 16384, .proc_root = "/proc" }

struct v8_stats {
	uint64_t procs;		    /* gauge: V8 processes whose JavaScript frames are read */
	uint64_t mem_bytes;	    /* gauge: the reader's processes and their names' caches */
	uint64_t procs_unsupported; /* gauge: V8 binaries whose v8dbg_ data is missing/changed */
	uint64_t procs_dropped;	    /* not tracked: max_procs reached, or the BPF map full */
	uint64_t detections;	    /* processes examined */
	uint64_t detect_ns;	    /* time examining them (files read once, cached) */
	uint64_t frames;	    /* JavaScript frames named */
	uint64_t frames_unnamed;    /* ... kept their native name: SFI unreadable, moved, not one */
	uint64_t frames_builtin;    /* ... V8's own builtins' closures (no script, no name):
				       named by their native symbol (Builtins_*) */
	uint64_t names;		    /* SharedFunctionInfos read */
	uint64_t name_rechecks;	    /* ... cached names checked again */
	uint64_t name_read_errors;  /* ... a read of the function's words failed: a name known
				       kept, none read again at its next sample */
	uint64_t name_evictions;    /* a process's name cache emptied for room (max_names) */
	uint64_t lines;		    /* names read with their function's line (file:line) */
	uint64_t lines_unknown;	    /* ... with a file and no line: no position, source unread */
	uint64_t line_sources;	    /* scripts' sources read for their line ends */
	uint64_t line_sources_unread; /* ... not read: external strings, over 16 Mi characters
				       or 1 Mi lines, the 32 MiB of all line ends taken */
	uint64_t line_sources_deferred; /* ... not read now: the characters read in the last 10 s
					 (32 Mi a process, 64 Mi in all) would be exceeded */
	uint64_t line_read_ns;	    /* time reading sources for their line ends */
	uint64_t inline_frames;	    /* frames of functions TurboFan inlined, named */
	uint64_t inline_unreadable; /* ... optimized code whose inlining data did not read (or
				       an inlined function unnamed): its frame without them */
	uint64_t inline_other_root; /* ... code that is not the frame's function's (a pc in a
				       callee's first instructions): not expanded */
	uint64_t inline_scans;	    /* code looked for from a pc (its start below it) */
	uint64_t inline_scan_misses; /* ... none there (builtins, freed code, not JIT code) */
	uint64_t inline_scan_pages; /* ... pages read for it */
	uint64_t inline_scans_deferred; /* ... not now: a window's pages (16 MiB a process, 64 MiB
					   in all, per 10 s) read */
	uint64_t inline_layouts_refused; /* V8 processes whose version's inlining data ember does
					    not know (or whose v8dbg_ data disagrees with it):
					    physical frames only */
	uint64_t reasons[RTI__REASONS]; /* why binaries were refused (rtintro.h) */
	uint64_t walk_ns_per_walk;  /* BPF: mean time of a V8 process's stack walk */
	struct ember_v8_bpf_stats bpf;
	struct mapfile_stats files;
};

extern const struct counter_desc v8_counters[];
extern const size_t v8_counters_n;

struct v8; /* opaque */

/* @sampler (its V8 map) and @names (the symbolizer's strtab) are borrowed. NULL + errno. */
struct v8 *v8__new(struct sampler *sampler, struct strtab *names, const struct v8_opts *o);
void v8__free(struct v8 *v);

/* A group of @pid's samples is being ingested: examine it if it is new (once). */
void v8__sampled(struct v8 *v, uint32_t pid);

/* The frames of the JavaScript frame whose BPF word is @word, root first, as ids in @names (at
 * most @max in @ids): its function, then those TurboFan inlined into it, down to the one running
 * at @ip (its native ip: the sampled pc when @leaf, else a return address). Count; -1: name it
 * by its native ip; -ENOMEM. */
#define V8_MAX_FRAMES 9 /* a frame and the 8 functions inlined into it, at most */
int v8__frame_names(struct v8 *v, uint32_t pid, uint64_t word, uint64_t ip, bool leaf,
		    uint32_t *ids, size_t max);

/* Housekeeping, e.g. every 5 s: forgets processes that exited or exec'ed (their BPF entry is
 * gone: the program deletes it at both). */
/* The names' table started over (core/base/strtab.h, strtab__renew()): the ids of the names held
 * are carried into it. 0, or -ENOMEM (those not carried are read again when sampled). Worker. */
int v8__names_carry(struct v8 *v);
void v8__prune(struct v8 *v);

void v8__stats(struct v8 *v, struct v8_stats *ret);

/*
 * Exposed for tests: a V8 binary's facts -> the BPF entry, refused (false) when inconsistent
 * (@why: the rtintro reason).
 */
bool v8_facts_check(const struct rtintro_v8 *f, struct ember_v8_proc *ret, int *why);

/* The layout TurboFan's inlining data is read by for the binary of @f (its V8 version's, its
 * v8dbg_ values agreeing), or NULL (@why: RTI_MISSING for a version not known, RTI_BAD_VALUE). */
struct v8_tf_layout;
const struct v8_tf_layout *v8_tf_layout_for(const struct rtintro_v8 *f, int *why);

/*
 * V8's source position table (@len bytes of a Code's source_position_table, v8_srcpos.c): the
 * SourcePosition of the last entry whose code offset is at or before @pc_off, in *@pos. 0;
 * -ENOENT when the first entry is past it (or the table is empty); -EINVAL when the bytes do
 * not decode (a number running past the end or past 64 bits, a code offset out of range).
 */
int v8_srcpos_lookup(const uint8_t *tab, size_t len, uint32_t pc_off, uint64_t *pos);

#endif
