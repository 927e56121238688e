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
void elfsym__free(struct elfsym *e); /* NULL is a no-op */

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
 * in place of another image published for the same device and inode. */
void elfshare__publish(struct elfshare *sh, struct elfsym *e, const struct filecache_id *id);
/* A reference to the image published for file @id (the same file: device, inode, size, mtime,
 * build-id where both know one: filecache_id_same_file()), or NULL; let go with elfsym__free(). */
struct elfsym *elfshare__find(struct elfshare *sh, const struct filecache_id *id);
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
