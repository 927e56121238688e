/* SPDX-License-Identifier: MIT */
/*
 * frameloc: where a symbolized native frame lives, for OTLP's mappings. The store keeps frame
 * names, not addresses (0 bytes more per sample); at export time, a frame named by an ELF symbol
 * ("work", "malloc") is looked up by name in the executable file mappings of its process
 * (the process tracker's read, proctrack.h, in address order: the executable first), giving the mapped file, its GNU build
 * id and the file offset of the function's first instruction (the symbol's address through the
 * PT_LOAD segment that holds it). A backend that symbolizes again finds the same function; the
 * address is the function's start, not the sampled instruction's (its line is the function's
 * first).
 *
 * Files are opened as the symbolizer opens them (mapfile_open(): nothing on the path a process
 * controls is followed) to check that they are the file the symbolizer's published image was
 * read from (frameloc__set_share()): their symbols are that image's, and frameloc parses no file
 * itself. A file the symbolizer holds no image of (none of its frames named yet, or let go) is
 * not opened, counted as unshared and looked for again in a later round. Images are kept by
 * (device, inode), at most
 * FRAMELOC_FILES (LRU), at most FRAMELOC_LOADS_PER_ROUND opened per round (a process's frames
 * in files not read yet have no mapping this round; counted); a process's mappings are asked of the tracker once per image
 * (an exec or exit notified starts a new one: the tracker's read since the exec if it has one,
 * or the last one of a process gone since) and again, newer, every FRAMELOC_REREAD_ROUNDS
 * rounds (dlopen), within
 * FRAMELOC_ROUND_CPU_NS of the thread's CPU per round (past it, the processes not read yet
 * have no mappings this round: counted as deferred). Not found (a gone process, a name no symbol
 * of its files has: C++ names, which the symbolizer demangles, Python, JIT and kernel frames
 * are not looked up) is counted, not an error. Not thread-safe: the exporter's thread owns one.
 */
#ifndef EMBER_FRAMELOC_H
#define EMBER_FRAMELOC_H

#include <stddef.h>
#include <stdint.h>

#define FRAMELOC_FILES 64
#define FRAMELOC_LOADS_PER_ROUND 8 /* files opened and indexed per round at most */
/* CPU (the thread's) for reading maps and files per round: past it, new processes wait */
#define FRAMELOC_ROUND_CPU_NS (20 * 1000000ULL)
#define FRAMELOC_REREAD_ROUNDS 6

struct frameloc_hit {
	const char *file;	/* the mapping's path as maps shows it; borrowed until the next round */
	const char *build_id;	/* hex, "" unknown */
	uint64_t offset;	/* file offset of the function's start */
};

struct frameloc_stats {
	uint64_t found, not_found;	/* frame lookups */
	uint64_t files_read, files_failed, maps_read;
	uint64_t files_deferred;	/* past FRAMELOC_LOADS_PER_ROUND: left to a later round */
	uint64_t procs_deferred;	/* past FRAMELOC_ROUND_CPU_NS: maps not read this round */
	uint64_t procs_refused;		/* lookups in a process not held: MAX_PIDS images held */
	uint64_t load_ns;		/* time spent opening and indexing files */
	uint64_t files_borrowed;	/* ... of files_read: the symbolizer's image borrowed (all of
					   them: frameloc parses no file itself) */
	uint64_t files_unshared;	/* files looked for that the symbolizer holds no image of
					   (never read: none of their frames named), left alone */
};

struct frameloc; /* opaque */

/* @procs: the process tracker, borrowed (thread-safe), which keeps the processes' state as an
 * extension; @proc_root (the files' opener): "/proc" when NULL. NULL + errno (ENOMEM, ENOSPC: no
 * room for an extension). */
struct proc_tracker;
struct frameloc *frameloc__new(struct proc_tracker *procs, const char *proc_root);
void frameloc__free(struct frameloc *fl); /* NULL is a no-op */

/* The symbolizer's published images (@share: borrowed, outliving @fl), the only symbols frameloc
 * reads (none without: nothing located); called before @fl is used (its thread not started). */
struct elfshare;
void frameloc__set_share(struct frameloc *fl, struct elfshare *share);

/* A new export round: processes' maps are read again when asked. */
void frameloc__round(struct frameloc *fl);

/*
 * The location of the native frame @name (NUL-terminated) in process @pid's current image (what
 * is kept of a process is the tracker's extension: its exec or exit ends it, and the next image's
 * maps are read again): 0, or -ENOENT. @ret's strings are borrowed until a lookup in another
 * process (which may evict files).
 */
int frameloc__find(struct frameloc *fl, uint32_t pid, const char *name, struct frameloc_hit *ret);

void frameloc__stats(const struct frameloc *fl, struct frameloc_stats *ret);

#endif
