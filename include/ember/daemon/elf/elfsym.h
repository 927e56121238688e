/* SPDX-License-Identifier: MIT */
/*
 * elfsym: the function symbols of one ELF image, sorted for binary search, plus optional inline
 * frames from its DWARF (libdw).
 *
 * Symbols come from .symtab, .dynsym and, when the image is stripped (no .symtab) or lacks DWARF
 * that inline frames need, from its separate debug file: found by build-id
 * (DIR/.build-id/ab/cdef....debug) or by .gnu_debuglink (DIR/BINDIR/NAME) under each debug dir
 * of the host, only if root owns it and every directory on the way and no symbolic link leads
 * there (never in a process's root nor next to its binary: places it may control). A debug file
 * whose build-id differs from the image's is ignored; one found by debuglink for an image
 * without build-id must have the link's CRC32.
 *
 * Files are read with pread into memory of ours (libelf's ELF_C_READ), never mapped: a file that
 * shrinks under the parser is an error (EIO), not a SIGBUS. Tables and sections the file sizes
 * are bounded (elfsym_opts) before they are read: E2BIG.
 *
 * Addresses here are the image's own virtual addresses (what `nm` prints); elfsym__file_to_vaddr()
 * turns a file offset (from /proc/PID/maps: addr - start + pgoff) into one.
 * Non-logging; not thread-safe.
 */
#ifndef EMBER_ELFSYM_H
#define EMBER_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct elfsym_opts {
	const char *debug_dirs;	/* ':'-separated; NULL: "/usr/lib/debug" */
	const char *path;	/* the image's path in its process (for .gnu_debuglink); may be NULL */
	bool dwarf;		/* keep DWARF open for elfsym__inlines() */
	uint64_t max_symbols;	/* entries of one symbol table; more: E2BIG. 0: no bound */
	uint64_t max_section_bytes; /* a section read (inflated); more: E2BIG (DWARF: none). 0: none */
};

struct elfsym; /* opaque */
struct elfload;

/*
 * Reads the image open at @fd (borrowed: the caller closes it; the image stays usable after).
 * NULL + errno: ENOEXEC (not ELF), ENOMEM, EIO (short read: the file shrank), E2BIG (a bound).
 */
struct elfsym *elfsym__open(int fd, const struct elfsym_opts *o);
/* The same from memory (copied), e.g. the vDSO image. */
struct elfsym *elfsym__open_mem(const void *image, size_t len, const struct elfsym_opts *o);
/* One more owner of @e (returned): each elfsym__free() lets one go, the last frees it. */
struct elfsym *elfsym__ref(struct elfsym *e);
void elfsym__free(struct elfsym *e); /* NULL is a no-op */

/*
 * The introspection symbols of the managed runtimes ember reads, kept from the image's tables
 * (and its debug file's) as they are read: data objects named gHotSpotVM*, v8dbg_*,
 * _ZN2v88internal7Version*, _PyRuntime, Py_Version, PyCode_Type; functions napi_module_register
 * and Py_IsNone. The CPython, V8 and HotSpot readers take them from the symbolizer's image of the
 * file (elfsym_source) instead of parsing its tables again. At most 4096, the first found
 * (elfsym__rt_too_many() then).
 */
struct elfsym_rtsym {
	const char *name;	/* borrowed until elfsym__free() */
	uint64_t value, size;	/* st_value (a virtual address), st_size */
	bool object;		/* STT_OBJECT, else a function */
	bool exported;		/* in .dynsym, or global/weak and visible in .symtab */
};
size_t elfsym__rt_count(const struct elfsym *e);
bool elfsym__rt_sym(const struct elfsym *e, size_t i, struct elfsym_rtsym *ret);
bool elfsym__rt_find(const struct elfsym *e, const char *name, struct elfsym_rtsym *ret);
bool elfsym__rt_too_many(const struct elfsym *e);
/* A 64-bit little-endian x86-64 image: one whose words this machine reads as they are. */
bool elfsym__native(const struct elfsym *e);

/*
 * Who reads a mapped file's image for the other readers of its thread: the symbolizer, on the
 * worker, which keeps what it reads (with its debug file, under its memory budget) to name
 * frames. get() returns a reference to the image of the file open at @fd (borrowed, left open;
 * @path: its path in the process, for .gnu_debuglink), read now if it holds none, to let go with
 * elfsym__free(); NULL + errno when it cannot or will not (too big: E2BIG).
 */
struct elfsym_source {
	struct elfsym *(*get)(void *ctx, int fd, const char *path);
	void *ctx;
};
/* Through @src when set, else elfsym__open(@fd, @fallback): the one way a reader gets an image. */
struct elfsym *elfsym_source_get(const struct elfsym_source *src, int fd, const char *path,
				 const struct elfsym_opts *fallback);

/* 0 with *@ret set, or -ENOENT when no PT_LOAD segment holds file offset @off. */
int elfsym__file_to_vaddr(const struct elfsym *e, uint64_t off, uint64_t *ret);

/* Its PT_LOAD segments, for elfload_vaddr() (a mapping's bias); borrowed until elfsym__free(). */
const struct elfload *elfsym__load(const struct elfsym *e);

/* Index of the function containing @vaddr, or -ENOENT. */
int elfsym__lookup(const struct elfsym *e, uint64_t vaddr);
/* Borrowed, NUL-terminated (raw, not demangled): valid until elfsym__free(). */
const char *elfsym__name(const struct elfsym *e, int idx);
uint64_t elfsym__addr(const struct elfsym *e, int idx);
/* A caller's value attached to symbol @idx (0 until set). */
uint32_t elfsym__cookie(const struct elfsym *e, int idx);
void elfsym__set_cookie(struct elfsym *e, int idx, uint32_t cookie);
/* Every symbol's value back to 0 (the values the caller attached mean nothing any more). */
void elfsym__clear_cookies(struct elfsym *e);

/*
 * The functions inlined at @vaddr, OUTERMOST FIRST (the caller of each is the previous one, and
 * the first one's caller is the symbol elfsym__lookup() finds). Names are linkage names when
 * DWARF has them (mangled: demangle them), else plain names; borrowed until elfsym__free().
 * Returns how many were written to @ret (at most @cap; innermost dropped beyond), 0 when none or
 * when the image has no DWARF.
 */
int elfsym__inlines(struct elfsym *e, uint64_t vaddr, const char **ret, size_t cap);

/* The GNU build-id (borrowed) and its length, 0 when none. */
size_t elfsym__build_id(const struct elfsym *e, const uint8_t **ret);
/* True when the image or its separate debug file had a full symbol table (.symtab): false for a
 * stripped binary whose .dynsym (exported functions only) is all there was. */
bool elfsym__full_symbols(const struct elfsym *e);
/* True when symbols or DWARF came from a separate debug file. */
bool elfsym__used_debug_file(const struct elfsym *e);
bool elfsym__has_dwarf(const struct elfsym *e);
/* The file has a .symtab of its own (is not stripped). */
bool elfsym__has_symtab(const struct elfsym *e);
size_t elfsym__count(const struct elfsym *e);
size_t elfsym__mem_bytes(const struct elfsym *e);

/* Debug files refused for @e: not root's, reached through a link, or a CRC mismatch. */
uint64_t elfsym__debug_refused(const struct elfsym *e);

/*
 * Images shared between threads: the symbolizer (on the worker) publishes each image it read
 * under its file's identity, and the exporter's frameloc borrows the image of a file it needs
 * instead of parsing the file again. What a borrower reads is what never changes after
 * elfsym__open() (names, addresses, load segments, build-id); the cookies and DWARF stay the
 * publisher's. An image is freed by the last elfsym__free() of it (the publisher's or a
 * borrower's), and is found no more from then on. Thread-safe (one mutex, taken only to
 * publish, find and free a published image: never per symbol).
 */
struct elfshare;
struct filecache_id;
struct elfshare *elfshare__new(void); /* NULL + errno */
/* Every image still published must have been freed (their last elfsym__free()) before. */
void elfshare__free(struct elfshare *sh); /* NULL is a no-op */
/* @e (the caller's, whose reference stays the caller's) findable as file @id from now on,
 * in place of another image published for the same device and inode. One image may be
 * published as several files (copies of one build-id and size, read once). */
void elfshare__publish(struct elfshare *sh, struct elfsym *e, const struct filecache_id *id);
/* A reference to the image published for file @id (the same file: device, inode, size, mtime,
 * build-id where both know one: filecache_id_same_file()), or NULL; let go with elfsym__free(). */
struct elfsym *elfshare__find(struct elfshare *sh, const struct filecache_id *id);
/* Whether an image is published under inode @ino, on any device (the device /proc/PID/maps
 * shows is not always st_dev: btrfs subvolumes, overlayfs): a hint before the file is opened
 * and checked (elfshare__find()), never a match on its own. */
bool elfshare__has(struct elfshare *sh, uint64_t ino);
/*
 * Keeps each published image findable for @keep_ns after its last owner let it go (the
 * symbolizer's, when the processes that mapped the file are gone), within @max_bytes of images
 * so kept (elfsym__mem_bytes(); the oldest let go first) and ELFSHARE_KEEP_MAX of them, so
 * that a borrower working later than the publisher (the exporter, a round behind) still finds
 * the file's image instead of parsing it again. Kept once: its next last free frees it.
 * 0: none kept (the default).
 */
#define ELFSHARE_KEEP_MAX 64
void elfshare__keep(struct elfshare *sh, uint64_t keep_ns, uint64_t max_bytes);
struct elfshare_stats {
	uint64_t published;		/* gauge: images findable */
	uint64_t kept, kept_bytes;	/* gauges: ... of them held only by the registry */
	uint64_t kept_total;		/* images kept after their last owner let go */
	uint64_t kept_found;		/* ... found by a borrower meanwhile */
	uint64_t kept_expired;		/* ... freed at their deadline */
};
void elfshare__stats(struct elfshare *sh, struct elfshare_stats *ret);
/* Images published and not freed (a gauge) */
size_t elfshare__count(struct elfshare *sh);

/*
 * The bytes section @scn holds once read, inflated if SHF_COMPRESSED, from its headers alone
 * (nothing inflated); UINT64_MAX when they cannot be read. For bounds on what a file sizes.
 */
uint64_t elf_section_bytes(Elf_Scn *scn);

/* Reads only the build-id of the image open at @fd (borrowed). Length written (<= @cap) or -errno. */
int elfsym_read_build_id(int fd, uint8_t *ret, size_t cap);

#endif
