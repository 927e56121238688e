/* SPDX-License-Identifier: MIT */
/*
 * symbolizer: (pid, instruction pointers) -> frame names interned in a strtab.
 *
 * Kernel frames come from the kernel's own lookup when a kernel_resolve callback is given
 * (kresolve: one BPF program run per batch of new addresses, cached by function range), else from
 * /proc/kallsyms (ksyms); user frames from each process's mappings
 * (procmaps) and the ELF files behind them (elfsym: .symtab/.dynsym, separate debug info found by
 * build-id or .gnu_debuglink, optional inline frames through libdw), JIT frames from perf-map
 * files /tmp/perf-PID.map (perfmap). Names follow the folded conventions of
 * `perf script | stackcollapse-perf.pl --all`:
 *
 *   kernel function          "name_[k]"
 *   JIT function (perf map)  "name_[j]"
 *   inlined function         "name_[i]"      (inline_frames only; the containing function stays plain)
 *   user function            "name"          (demangled when demangle is on, parameters dropped)
 *   unknown in a known file  "[libc.so.6]"   or "libc.so.6+0x1a2b" with addr_offsets (file offset)
 *   unknown, no mapping      "[unknown]"     (kernel: "[unknown]_[k]"; module area: "[mod]_[k]")
 *
 * ';' in names becomes ':' and control characters '?', so that every name is a valid folded frame.
 *
 * Caches: ELF images are keyed by (device, inode) and build-id, so a library mapped by 500
 * processes is parsed once; per-process state (mappings, perf map) is keyed by pid + start time,
 * which detects pid reuse; a process's mappings are re-read when an address falls outside them
 * (dlopen, exec) at most once a second (the first time after 50 ms). All caches are bounded (LRU).
 *
 * Not thread-safe: one symbolizer belongs to the daemon's main thread.
 * Non-logging (log_debug only): failures are counted in symbolizer_stats.
 */
#ifndef EMBER_SYMBOLIZER_H
#define EMBER_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/elf/dbgfetch.h"
#include "ember/core/base/counters.h"

struct strtab;

struct proc_tracker;

struct symbolizer_opts {
	bool perf_maps;		  /* read /tmp/perf-PID.map JIT maps (via /proc/PID/root/tmp) */
	bool inline_frames;	  /* add inlined functions (libdw), annotated _[i] */
	bool demangle;		  /* demangle C++ (Itanium) and Rust names */
	bool addr_offsets;	  /* unresolved user frames as "file+0xoffset", not "[file]" */
	const char *debug_dirs;	  /* ':'-separated roots of separate debug info; NULL: "/usr/lib/debug" */
	const char *proc_root;	  /* NULL: "/proc" (tests point it elsewhere) */
	struct proc_tracker *procs; /* where mappings come from (borrowed); NULL: one of its own */
	struct filecache *files;  /* where ELF images are kept (elf/filecache.h, borrowed: the
				     daemon's one, outliving the symbolizer); NULL: its own */
	struct elfshare *share;	  /* where its images are published for other threads to borrow
				     (elfsym.h: the exporter's frameloc); NULL: none */
	const char *kallsyms_path; /* NULL: "/proc/kallsyms" */
	uint64_t (*ks_clock_ns)(void); /* tests: the clock of kallsyms reloads; NULL: monotonic */
	/*
	 * Kernel addresses -> "%pS" texts ("name+0xoff/0xsize [mod]", "0x..." for none), @n at a
	 * time into @texts + i * @text_len: kresolve__resolve(). 0 or -errno; after an error the
	 * symbolizer reads /proc/kallsyms instead. NULL: /proc/kallsyms from the start.
	 */
	int (*kernel_resolve)(void *ctx, const uint64_t *addrs, size_t n, char *texts,
			      size_t text_len);
	void *kernel_resolve_ctx;
	size_t max_pids;	  /* processes with cached state; 0: 4096 */
	size_t max_elfs;	  /* ELF images with cached symbols; 0: 512 */
	size_t max_perfmap_bytes; /* larger perf-map files are skipped (counted); 0: 64 MiB */
	uint64_t max_symbols;	  /* entries of one ELF symbol table; more: refused; 0: no bound */
	uint64_t max_perfmap_entries; /* all processes' perf maps; the rest is skipped; 0: none */
	uint64_t max_perfmap_memory;  /* ... their entries and names in bytes; one process half */
	uint64_t max_image_bytes; /* all ELF images' symbols; least recently used go; 0: no bound */
	uint64_t max_section_bytes; /* an ELF section read (inflated); more: refused; 0: none */
	struct dbgfetch *fetch;	  /* debuginfod (borrowed; NULL: none): the debug file of a
				     stripped image without a local one is fetched into
				     dbgfetch__dir(), which debug_dirs must name */
};

/* The defaults above, all booleans on except addr_offsets. */
#define SYMBOLIZER_OPTS_DEFAULT                                                                \
	{ .perf_maps = true, .inline_frames = true, .demangle = true, .addr_offsets = false }

/* Why frames of one file or mapping stayed unresolved ("47 % unresolved" said no more). */
enum unresolved_reason {
	UNRESOLVED_NO_MAPPING = 0, /* the address is in no mapping of the process: "[unknown]" */
	UNRESOLVED_JIT,		   /* anonymous executable memory (JIT code) no perf map names */
	UNRESOLVED_NOT_READ,	   /* the file's symbols could not be read (refused, bound, not ELF) */
	UNRESOLVED_STRIPPED,	   /* stripped (no .symtab) and no separate debug file found */
	UNRESOLVED_NO_SYMBOL,	   /* full symbols read, none covers the address */
	UNRESOLVED_KERNEL,	   /* a kernel address without a symbol */
	UNRESOLVED__NR,
};

/* "no_mapping", "jit", "not_read", "stripped", "no_symbol", "kernel". Static. */
const char *unresolved_reason_name(enum unresolved_reason r);

#define SYMBOLIZER_UNRESOLVED_FILES 64

/*
 * One file (or kind of mapping) whose frames stayed unresolved: the frame the graphs show
 * ("[libfoo.so]", or "libfoo.so+0x..." with addr_offsets: @frame is then "libfoo.so"), its
 * path in the process, its GNU build-id in hex, why, and how many frames so far. The table keeps
 * the files with the most frames (a new file replaces the one with the fewest). Plain data.
 */
struct unresolved_file {
	char frame[64];
	char path[160];
	char build_id[41];
	uint8_t reason;		/* enum unresolved_reason */
	bool deleted;		/* the mapped file was deleted or replaced since it was mapped */
	uint64_t frames;
};

/* Counters since symbolizer__new() (gauges say so). All plain data. */
struct symbolizer_stats {
	uint64_t kernel_frames;		/* kernel ips symbolized */
	uint64_t kernel_unresolved;	/* ... of which no symbol was found */
	uint64_t user_frames;		/* user ips symbolized */
	uint64_t user_unresolved;	/* ... of which no symbol: "[file]", "file+0x..", "[unknown]" */
	uint64_t user_no_mapping;	/* ... of which in no mapping of the process ("[unknown]") */
	uint64_t jit_frames;		/* ... of which resolved through a perf map */
	uint64_t inline_frames;		/* _[i] frames added */
	uint64_t truncated_stacks;	/* more frames than the caller's capacity */

	uint64_t kallsyms_symbols;	/* gauge: symbols loaded */
	uint64_t kallsyms_modules;	/* gauge: module symbols among them */
	bool kallsyms_restricted;	/* gauge: addresses read as zero (kptr_restrict / no root) */
	uint64_t kallsyms_loads;	/* (re)loads, e.g. after a module load */
	bool kernel_resolver;		/* gauge: kernel_resolve in use (not kallsyms) */
	uint64_t kernel_lookups;	/* addresses asked of kernel_resolve */
	uint64_t kernel_functions;	/* gauge: function ranges it gave, cached */

	uint64_t pids_cached;		/* gauge */
	uint64_t pid_hits, pid_misses;	/* per-process state found / created */
	uint64_t pid_evictions;		/* dropped by the LRU bound */
	uint64_t pid_reuses;		/* cached pid found with a new start time: state dropped */
	uint64_t pid_execs;		/* cached process found running another executable: dropped */
	uint64_t pid_retired;		/* states kept after exec/reuse for samples taken before */
	uint64_t pid_gone;		/* processes whose /proc entry had vanished (dropped later) */
	uint64_t pid_born_from_fork;	/* processes whose start was their fork's event: no
					   /proc/PID/stat read */
	uint64_t pid_before_exec;	/* states of a fork's image before its exec named with its
					 * copy of its parent's, not /proc's new image */
	uint64_t maps_reads;		/* /proc/PID/maps reads */
	uint64_t maps_errors;		/* ... that failed (process gone, no permission) */

	uint64_t elfs_cached;		/* gauge */
	uint64_t elf_hits, elf_misses;	/* lookups of an image by (dev, inode) */
	uint64_t elf_buildid_hits;	/* ... found by build-id instead (same file, other inode) */
	uint64_t elf_headers_read;	/* files whose ELF headers the symbolizer read itself (the
					 * file cache had none: no other reader had read them) */
	uint64_t elf_lent;		/* images handed to a runtime reader (symbolizer__image_get):
					 * its symbols, read once for both */
	uint64_t elf_evictions;		/* dropped by the LRU bound */
	uint64_t elf_changed;		/* dropped: the file under that (dev, inode) is another now */
	uint64_t elf_mem_evictions;	/* images dropped to stay within max_image_bytes */
	uint64_t elf_mem_refused;	/* images not kept: larger than max_image_bytes alone */
	uint64_t elf_errors;		/* files that could not be opened or parsed */
	uint64_t elf_unreachable;	/* ... not opened through a process gone meanwhile: not the
					 * file's failure, tried again through the next process */
	uint64_t elf_debuginfo;		/* separate debug files used */
	uint64_t elf_symbols;		/* gauge: symbols held over all cached images */
	uint64_t elf_too_big;		/* ... refused: a table or section past its bound */
	uint64_t elf_short_reads;	/* ... refused: the file shrank while read */
	uint64_t elf_debug_refused;	/* debug files refused: not root's, a link, a CRC mismatch */
	uint64_t elf_debuginfod;	/* images read again with a debug file debuginfod served */
	uint64_t elf_debug_pending;	/* images read while their debug file was being fetched
					   (or refused for now): named from .dynsym meanwhile */
	uint64_t elf_debug_late;	/* ... read again once it came */
	bool debuginfod;		/* gauge: fetching from DEBUGINFOD_URLS */
	struct dbgfetch_stats fetch;	/* its counters (zeros without) */

	uint64_t perfmap_loads;		/* perf-map files read (first time or because they grew) */
	uint64_t perfmap_symbols;	/* gauge: JIT symbols held */
	uint64_t perfmap_bytes;		/* gauge: ... their entries and names, bytes */
	uint64_t perfmap_bad_lines;	/* malformed lines skipped */
	uint64_t perfmap_skip_missing;	/* no perf map for a process that has an anon exec area */
	uint64_t perfmap_skip_not_regular; /* FIFO, device, /dev/zero symlink... skipped */
	uint64_t perfmap_skip_too_big;	/* over max_perfmap_bytes or max_perfmap_entries */
	uint64_t perfmap_skip_owner;	/* not the process's user's nor root's, or writable by others */
	uint64_t perfmap_skip_error;	/* read errors */
	uint64_t perfmap_skip_stale;	/* last written before the process began: an earlier one's */

	uint64_t mem_bytes;		/* gauge: memory held by the caches (approximate) */
	uint64_t names_bytes;		/* gauge: the names' table (strtab__mem_bytes()) */
	uint64_t names_refused;		/* new names past the table's bound: "[name refused]" */
	uint64_t names_renewals;	/* the table started over, keeping the names still held */
	struct mapfile_stats files;	/* mapped files opened and refused (proc/mapfile.h) */

	/* the files behind unresolved frames, most frames first: nr_unresolved_files of them */
	struct unresolved_file unresolved_files[SYMBOLIZER_UNRESOLVED_FILES];
	uint32_t nr_unresolved_files;
};

struct symbolizer; /* opaque */

/*
 * @o is copied (strings too); NULL means SYMBOLIZER_OPTS_DEFAULT. @st is borrowed and must outlive
 * the symbolizer: every name is interned there. Without kernel_resolve, reads /proc/kallsyms lazily
 * (first kernel frame).
 * NULL + errno (ENOMEM, EINVAL); free with symbolizer__free().
 */
/* struct symbolizer_stats described once (symbolizer_counters.c, core/base/counters.h); the
 * debuginfod rows apart: rendered only while symbolizer_stats.debuginfod */
extern const struct counter_desc symbolizer_counters[];
extern const size_t symbolizer_counters_n;
extern const struct counter_desc symbolizer_debuginfod_counters[];
extern const size_t symbolizer_debuginfod_counters_n;

struct symbolizer *symbolizer__new(const struct symbolizer_opts *o, struct strtab *st);
/* [symbols] of @c as options (symbolizer_config.c): the bounds and switches; procs, fetch and the
 * kernel resolver are the caller's to set. */
struct ember_config;
void symbolizer_opts_from_config(const struct ember_config *c, struct symbolizer_opts *yo);
void symbolizer__free(struct symbolizer *s); /* NULL is a no-op */

/*
 * elfsym_source's get (elfsym.h) for the runtime readers on the symbolizer's thread (the
 * worker): @ctx is the symbolizer. The image of the file open at @fd as the symbolizer reads it
 * to name frames (its debug file, its bounds), from its cache or read now and left there, so
 * that a file a reader and the symbolizer both need is parsed once. An image larger than
 * max_image_bytes alone is not kept (elf_mem_refused) but still handed to the reader, its own
 * to free. Counted as elf_lent.
 */
struct elfsym *symbolizer__image_get(void *ctx, int fd, const char *path);

/*
 * @ips: kernel addresses as bpf_get_stackid()/bpf_get_stack() give them, leaf first, @n of them.
 * Writes frame ids ROOT FIRST into @ret (at most @cap; when more would result, the root-most are
 * dropped and truncated_stacks counts it). Returns the number written (>= 0) or -ENOMEM.
 * Zero ips are skipped.
 */
int symbolizer__kernel(struct symbolizer *s, const uint64_t *ips, size_t n, uint32_t *ret,
		       size_t cap);

/*
 * Same for user addresses of process @pid (tgid, as the host's pid namespace sees it). With
 * inline_frames one ip may give several frames. A process that has gone gives "[unknown]" frames
 * unless its mappings were captured before (symbolizer__note_pid()). Returns count or -ENOMEM.
 */
int symbolizer__user(struct symbolizer *s, uint32_t pid, const uint64_t *ips, size_t n,
		     uint32_t *ret, size_t cap);

/*
 * A pid was seen for the first time (or exec'ed): capture its mappings now, while it lives, so
 * that short-lived processes still resolve later. Cheap when the pid is already cached with the
 * same start time. Also loads ELF symbols of its files.
 */
void symbolizer__note_pid(struct symbolizer *s, uint32_t pid);

/*
 * @pid's first sample came before an exec that is already known (later in the same batch of
 * events): /proc shows the new image, which would name the old image's samples "[unknown]" (a
 * shell's fork sampled in its parent's code, then exec'ing a command). Captures the fork's copy
 * of its parent's snapshot instead (proc_tracker__forked(); nothing if none) without reading
 * /proc; the exec then retires it for the samples taken before. A live state kept already stays.
 */
void symbolizer__note_pid_before_exec(struct symbolizer *s, uint32_t pid);

/* The process exited or exec'ed: drop its state (the ELF cache stays). Unknown pids: no-op. */
void symbolizer__forget_pid(struct symbolizer *s, uint32_t pid);
/*
 * Like forget, but the state is kept (25 s, at most 1024 such) for samples of @pid taken before @until_ns
 * (CLOCK_MONOTONIC; 0: dropped as by forget) and symbolized later, through symbolizer__user_at(): an exec
 * notification, whose samples from the old image are still in flight. A state read after
 * @until_ns (the new image's) takes the fork's copy of its parent's first, if the tracker has
 * one: call before proc_tracker__exec(), which drops it.
 */
void symbolizer__retire_pid(struct symbolizer *s, uint32_t pid, uint64_t until_ns);
/* symbolizer__user() for frames sampled at @time_ns (CLOCK_MONOTONIC; 0: unknown, the current
 * state): a process image replaced since (exec, pid reuse) is symbolized with its own state. */
int symbolizer__user_at(struct symbolizer *s, uint32_t pid, uint64_t time_ns, const uint64_t *ips,
			size_t n, uint32_t *ret, size_t cap);
/*
 * The version of what resolves @pid's addresses: it changes whenever its mappings or perf-map
 * symbols are read again or its state is replaced (exec, pid reuse), so a caller may keep
 * symbolizer__user()'s answers for a stack while it is unchanged. 0: not known (or gone).
 */
uint64_t symbolizer__pid_version(const struct symbolizer *s, uint32_t pid);
/* The running count of user frames that did not resolve (stats.user_unresolved). */
uint64_t symbolizer__user_unresolved(const struct symbolizer *s);
/*
 * The running count of unresolved user frames that may resolve later: in no mapping, in JIT code
 * (a perf map may grow), in an image not read. A frame of a read image without a symbol there
 * (a stripped binary's static function) is final and not counted.
 */
uint64_t symbolizer__user_retryable(const struct symbolizer *s);
/*
 * Stacks named by file and offset: writes one key per address of @ips (as given to
 * symbolizer__user() for @pid, @n of them) into @ret_keys: the file's image (its read symbols,
 * shared by every process mapping that file: same device and inode, checked by size and mtime
 * through this process's own mapping, or the same build-id and size under the image's rules)
 * and the address's offset in it; a zero address keys 0. Returns 1 when every address has one,
 * 0 when one has none: in no mapping, in anonymous or special memory (JIT: the process's perf
 * map), in a file whose symbols are not read or not checked for this process yet, a process not
 * cached or with a replaced state kept (symbolizer__has_retired). Reads, opens and counts
 * nothing. Two stacks with equal keys get equal names from symbolizer__user() as long as every
 * frame is named by its file's symbols (symbolizer__user_not_by_file() unchanged by the call).
 */
int symbolizer__user_keys(struct symbolizer *s, uint32_t pid, const uint64_t *ips, size_t n,
			  uint64_t *ret_keys);
/* The running count of user frames named other than by their file's symbols: a perf map's JIT
 * symbol, "[file]"/"[unknown]" (which carry the process's path). */
uint64_t symbolizer__user_not_by_file(const struct symbolizer *s);
/* Whether a replaced state of @pid is kept: results for @pid then depend on the sample time. */
bool symbolizer__has_retired(const struct symbolizer *s, uint32_t pid);

/*
 * Housekeeping, e.g. once a second: drops state of cached processes that no longer exist (or
 * whose pid was reused). Returns the number dropped.
 */
int symbolizer__prune(struct symbolizer *s);
/* The same without reading each process's start time and executable: expiry of what is known
 * gone (symbolizer__check_pid, note_pid), retired states, open files, JIT maps read. */
int symbolizer__prune_gone(struct symbolizer *s);
/* The images that ended beyond the newest 1,024 let go now: those the process tracker ended
 * itself (its sweep of gone processes, an exec or exit it was told) are not trimmed as they end
 * (the symbolizer's own ends are); called after the tracker's sweep, before the stats are
 * published. */
void symbolizer__trim_retired(struct symbolizer *s);
/* Reads @pid's start time and executable now (its leader exited, say): a process gone is
 * marked so, a pid reused or exec'ed has its state retired. */
void symbolizer__check_pid(struct symbolizer *s, uint32_t pid);

/* Re-reads /proc/kallsyms on the next kernel frame (after a module load). */
void symbolizer__reload_kernel(struct symbolizer *s);

/*
 * The names' table was renewed (strtab__renew()): forgets every id of it the symbolizer keeps
 * (the address cache, the "[unknown]" and "[base]" frames, the ids attached to kernel, perf-map
 * and ELF symbols); they are interned again as they are next needed.
 */
void symbolizer__names_forget(struct symbolizer *s);

/* Fills @ret with the counters. */
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *ret);

#endif
