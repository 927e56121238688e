/* SPDX-License-Identifier: MIT */
/*
 * filecache: what emberd learned from a mapped file, computed once per file and shared by every
 * process that maps it ("per-file facts computed once per file, per-process state is
 * only the list of mappings and its biases").
 *
 * An entry is the file's identity as the caller found it through proc/mapfile.h (an fstat of
 * the very file the mapping holds: device, inode, size, mtime and owner; never a path a process
 * controls), its GNU build-id when the caller read one from that open file, and, per kind, what
 * a reader derived from the file: plain data the cache copies (filecache__put) or an object it
 * owns and frees with the kind's function (filecache__put_obj).
 *
 * "The same file", for every reader (filecache_id_same_file, filecache_id_shares):
 *   - the same device and inode, size and mtime, and, where both sides know one, the same
 *     build-id. The same device and inode with anything else is another file (tmpfs gives a
 *     deleted file's inode to the next one; a file rewritten in place): the old entry goes,
 *     counted as changed, and what it held is never handed out for the new file;
 *   - or another file with the same build-id and size (a copy, a container layer) whose owner
 *     is the same or root: a build-id is the file's to write, so a user's file may not name
 *     root's copy (nor another user's) and lend it its facts. A stripped copy has the build-id
 *     of the original but not its size: not the same.
 * Bounded by a number of files and by bytes, least recently used first; counted
 * (filecache__stats).
 *
 * Users, one instance for the daemon made in main.c: the CPython reader (unwind/python.c: the
 * interpreter's symbols and load segments) and the symbolizer (symbols/sym_elf.c: its ELF images,
 * found here by file and by build-id; its own table of (device, inode) entries keeps what is
 * per mapping: which entry a mapping was checked against, a file pinned open until read). The
 * unwinder's file table (unwind/unwind.c) keys its files by struct filecache_id with the same
 * rules; its tables live in the BPF rows array.
 * Not thread-safe: one owner's thread. Non-logging.
 */
#ifndef EMBER_DAEMON_ELF_FILECACHE_H
#define EMBER_DAEMON_ELF_FILECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ember/core/base/counters.h"

#define FILECACHE_BUILD_ID_MAX 64

/* A file as an fstat of it says, and its build-id if read (plain data). */
struct filecache_id {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint32_t uid;		/* the owner: who may have written its build-id */
	uint8_t build_id_len;	/* 0: none known (none read, or the file has none) */
	uint8_t build_id[FILECACHE_BUILD_ID_MAX];
};

/* The kinds of facts an entry may hold, one slot each. */
enum filecache_kind {
	FILECACHE_CPYTHON = 0, /* unwind/python.c: struct py_file_facts */
	FILECACHE_SYMBOLS,     /* symbols/sym_elf.c: struct image (an object, refcounted) */
	FILECACHE_V8,	       /* unwind/v8.c: struct v8_file_facts */
	FILECACHE_HOTSPOT,     /* unwind/hotspot.c: struct hs_file_facts */
	FILECACHE_ELF,	       /* elf/elffile.c: struct elffile_facts (every reader's) */
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
	uint64_t shared;    /* hits on another file of the same build-id and size (a copy) */
	uint64_t changed;   /* entries dropped: same device and inode, another size or mtime */
	uint64_t evictions; /* entries dropped for room (max_files, max_bytes) */
	uint64_t refused;   /* facts not kept: larger than max_bytes alone */
	uint64_t kind_bytes[FILECACHE__NR]; /* gauge: bytes of each kind's facts (of bytes) */
};

/* struct filecache_stats described once (filecache_counters.c, core/base/counters.h) */
extern const struct counter_desc filecache_counters[];
extern const size_t filecache_counters_n;

struct filecache; /* opaque */

/* Frees an object of one kind (filecache__put_obj), given @ctx (filecache__set_free). */
typedef void (*filecache_free_fn)(void *obj, void *ctx);

/* @o may be NULL (defaults). NULL + errno (ENOMEM). Free with filecache__free(). */
struct filecache *filecache__new(const struct filecache_opts *o);
void filecache__free(struct filecache *fc); /* NULL is a no-op; frees every entry's facts */

/* How objects of kind @k are freed (before any filecache__put_obj of that kind). */
void filecache__set_free(struct filecache *fc, enum filecache_kind k, filecache_free_fn fn,
			 void *ctx);

/* The identity of the file @st describes (an fstat through proc/mapfile.h); no build-id yet. */
void filecache_id_of(const struct stat *st, struct filecache_id *ret);
/* Adds the build-id read from that open file (@len 1..FILECACHE_BUILD_ID_MAX; else none). */
void filecache_id_set_build_id(struct filecache_id *id, const uint8_t *bid, size_t len);

/* True when @a and @b are one file: the same device, inode, size and mtime, and the same
 * build-id where both have one. */
bool filecache_id_same_file(const struct filecache_id *a, const struct filecache_id *b);
/*
 * True when what was read from file @have may serve file @want although they are not the same
 * file: both have the same build-id, the same size, and @have's owner is @want's or root.
 */
bool filecache_id_shares(const struct filecache_id *want, const struct filecache_id *have);

/*
 * The facts (or object) of kind @k for file @id, or NULL (counted as a miss): those of @id's
 * own entry, else, if @id has a build-id, of another file that filecache_id_shares() allows
 * (counted as shared too). Borrowed: valid until the next filecache__put*() or
 * filecache__free(). An entry of @id's device and inode that is not the same file is dropped
 * first (changed).
 */
const void *filecache__get(struct filecache *fc, const struct filecache_id *id,
			   enum filecache_kind k);
/* The same, for a kind held as objects (filecache__put_obj): the caller's to use and change. */
void *filecache__get_obj(struct filecache *fc, const struct filecache_id *id,
			 enum filecache_kind k);

/*
 * Keeps @facts (@bytes long, copied) as the kind @k facts of file @id, replacing any. Least
 * recently used entries go for room. 0, -E2BIG (more than max_bytes alone: refused, counted) or
 * -ENOMEM.
 */
int filecache__put(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		   const void *facts, size_t bytes);
/*
 * Keeps object @obj, which holds @bytes, as kind @k of file @id (its own entry), replacing any;
 * the cache owns it from this call on (freed with the kind's function on -E2BIG, -ENOMEM,
 * eviction, change or filecache__free()). 0, -E2BIG (refused, counted), -ENOMEM, or -EINVAL
 * (@obj NULL, or no free function set for @k: then the caller keeps it).
 */
int filecache__put_obj(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		       void *obj, size_t bytes);

/* Frees kind @k of file @id's own entry (the same file), if held; not counted. */
void filecache__drop(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k);
/* Frees kind @k of every entry (its user going away before the cache). */
void filecache__drop_kind(struct filecache *fc, enum filecache_kind k);

void filecache__stats(const struct filecache *fc, struct filecache_stats *ret);

#endif
