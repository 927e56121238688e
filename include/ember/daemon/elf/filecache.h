/* SPDX-License-Identifier: MIT */
/*
 * filecache: what emberd learned from a mapped file, computed once per file and shared by every
 * process that maps it (issue 26: "per-file facts computed once per file, per-process state is
 * only the list of mappings and its biases").
 *
 * An entry is the file's identity as the caller found it through proc/mapfile.h (an fstat of
 * the very file the mapping holds: device, inode, size and mtime; never a path a process
 * controls) and, per kind, the facts a reader derived from the file (plain data the cache owns).
 * A lookup with the same device and inode but another size or mtime is another file (tmpfs
 * gives a deleted file's inode to the next one; a file rewritten in place): the old entry goes,
 * counted as changed, and its facts are never handed out for the new file. Bounded by a number
 * of files and by bytes of facts, least recently used first; counted (filecache__stats).
 *
 * Users today: the CPython reader (unwind/python.c: the interpreter's symbols and load
 * segments). Not yet: the symbolizer's ELF images (symbols/sym_elf.c keeps its own table by
 * device and inode, shared by build-id) and the unwinder's tables (unwind/unwind.c).
 * Not thread-safe: one owner's thread. Non-logging.
 */
#ifndef EMBER_DAEMON_ELF_FILECACHE_H
#define EMBER_DAEMON_ELF_FILECACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ember/core/base/counters.h"

/* A file as an fstat of it says (plain data). */
struct filecache_id {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

/* The kinds of facts an entry may hold, one slot each. */
enum filecache_kind {
	FILECACHE_CPYTHON = 0, /* unwind/python.c: struct py_file_facts */
	FILECACHE__NR
};

struct filecache_opts {
	size_t max_files;   /* entries; 0: 1024 */
	uint64_t max_bytes; /* facts held, over all entries; 0: 16 MiB */
};

struct filecache_stats {
	uint64_t files;	    /* gauge: entries */
	uint64_t bytes;	    /* gauge: bytes of facts and entries */
	uint64_t hits;	    /* lookups that found the kind's facts for the file */
	uint64_t misses;    /* ... that did not (the caller computes and puts them) */
	uint64_t changed;   /* entries dropped: same device and inode, another size or mtime */
	uint64_t evictions; /* entries dropped for room (max_files, max_bytes) */
	uint64_t refused;   /* facts not kept: larger than max_bytes alone */
};

/* struct filecache_stats described once (filecache_counters.c, core/base/counters.h) */
extern const struct counter_desc filecache_counters[];
extern const size_t filecache_counters_n;

struct filecache; /* opaque */

/* @o may be NULL (defaults). NULL + errno (ENOMEM). Free with filecache__free(). */
struct filecache *filecache__new(const struct filecache_opts *o);
void filecache__free(struct filecache *fc); /* NULL is a no-op; frees every entry's facts */

/* The identity of the file @st describes (an fstat through proc/mapfile.h). */
void filecache_id_of(const struct stat *st, struct filecache_id *ret);

/*
 * The facts of kind @k for file @id, or NULL (counted as a miss). Borrowed: valid until the next
 * filecache__put() or filecache__free(). An entry of @id's device and inode with another size
 * or mtime is dropped first (changed).
 */
const void *filecache__get(struct filecache *fc, const struct filecache_id *id,
			   enum filecache_kind k);

/*
 * Keeps @facts (@bytes long, copied) as the kind @k facts of file @id, replacing any. Least
 * recently used entries go for room. 0, -E2BIG (more than max_bytes alone: refused, counted) or
 * -ENOMEM.
 */
int filecache__put(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		   const void *facts, size_t bytes);

void filecache__stats(const struct filecache *fc, struct filecache_stats *ret);

#endif
