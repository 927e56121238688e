/* SPDX-License-Identifier: MIT */
/*
 * elfload: where a file's loadable segments (PT_LOAD) go in memory, and so the bias of a mapping
 * of it: the runtime address minus the file's own virtual address (what `nm` and the CFI say).
 *
 * The kernel and ld.so map each PT_LOAD segment on its own: file offsets from p_offset rounded
 * down to a page, at load base + p_vaddr rounded down to a page. A mapping's bias is therefore
 *	start - pgoff - (p_vaddr - p_offset)
 * of the segment the mapping comes from, and the one rule covers every layout: GNU ld (p_vaddr ==
 * p_offset for PIE, + 0x400000 for non-PIE and static), lld and rustc (p_vaddr - p_offset is a
 * page or more: 0x18e80 at offset 0x17e80), static-pie, prelinked libraries (p_vaddr from a fixed
 * base), several executable segments. The segment is not simply "the first one holding pgoff":
 * lld packs segments back to back in the file, so the executable mapping's first page is also
 * the last page of the read-only segment before it. It is the segment whose permission (exec)
 * matches the mapping's and that holds the whole mapping. Pure functions; thread-safe.
 */
#ifndef EMBER_ELFLOAD_H
#define EMBER_ELFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#define ELFLOAD_MAX_SEGS 16

struct elfload_seg {
	uint64_t off, vaddr, filesz;
	uint64_t memsz;			/* p_memsz: past filesz, zeros (.bss) */
	bool x;				/* PF_X */
};

/* A file's PT_LOAD segments, in program header order. Plain data. */
struct elfload {
	struct elfload_seg segs[ELFLOAD_MAX_SEGS];
	unsigned int n;
};

/* A mapping of the file, as /proc/PID/maps shows it. */
struct elfload_map {
	uint64_t start, end;		/* [start, end) */
	uint64_t pgoff;			/* file offset of start */
	bool x;				/* executable */
};

/*
 * Reads @elf's PT_LOAD program headers into @ret (always set; n = 0 on failure). 0, -ENOEXEC when
 * the headers cannot be read, -E2BIG when there are more than ELFLOAD_MAX_SEGS (the first kept).
 */
int elfload_read(Elf *elf, struct elfload *ret);

/*
 * The bias of mapping @m of the file described by @l, in *@ret_bias (runtime address - virtual
 * address; modulo 2^64, so a prelinked base above the runtime address is fine). 0, or -ENOENT when
 * no segment holds the mapping's file offset (the caller decides: file offsets, or nothing).
 */
int elfload_bias(const struct elfload *l, const struct elfload_map *m, uint64_t *ret_bias);

/* 0 with *@ret_vaddr = @addr - bias for an address inside @m, else as elfload_bias(). */
int elfload_vaddr(const struct elfload *l, const struct elfload_map *m, uint64_t addr,
		  uint64_t *ret_vaddr);

#endif
