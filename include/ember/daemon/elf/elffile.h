/* SPDX-License-Identifier: MIT */
/*
 * elffile: what a mapped file's ELF headers say, read in one pass of libelf once per file and
 * kept in the daemon's file cache (elf/filecache.h, kind FILECACHE_ELF) for every reader on the
 * worker's thread: whether it is ELF at all, its GNU build-id, its load segments (a mapping's
 * bias), whether it has a full symbol table and an .eh_frame. The symbolizer
 * (its images are shared by build-id), the unwinder (its tables by build-id, its debug file, its
 * biases) and the runtime readers ask here first instead of each opening the file with libelf
 * for the same headers; what each reads beyond them (symbols, CFI, introspection data) stays
 * its own.
 *
 * And the one lookup of a separate debug file by build-id (DIR/.build-id/ab/cdef....debug under
 * each configured debug dir): root's file in root's directories, reached without a symbolic
 * link (mapfile_open_trusted()), an ELF whose own build-id is the one asked for; never in a
 * process's root nor next to its binary (places a process controls).
 *
 * Files are read with pread (libelf's ELF_C_READ), never mapped (elfsym.h's rule). The cache is
 * the caller's (one thread); the functions are non-logging.
 */
#ifndef EMBER_DAEMON_ELF_ELFFILE_H
#define EMBER_DAEMON_ELF_ELFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/filecache.h"

/* Plain data (copied into the file cache). */
struct elffile_facts {
	int err;	      /* 0; -ENOEXEC: not ELF (nothing else is set); -EIO: unreadable */
	bool has_symtab;      /* a .symtab: not stripped */
	bool has_eh_frame;    /* .eh_frame with contents */
	uint16_t machine;     /* e_machine */
	uint8_t build_id_len; /* 0: none */
	uint8_t build_id[FILECACHE_BUILD_ID_MAX];
	struct elfload load; /* its first ELFLOAD_MAX_SEGS PT_LOAD segments */
};

/*
 * The facts of the file open at @fd, whose fstat is @st (as proc/mapfile.h opened it): those
 * kept in @fc for this very file (device, inode, size, mtime: no read at all), or read now from
 * @fd and kept. Copied to *@ret; *@ret_id (may be NULL) is the file's identity with its build-id
 * (the key every reader shares its own facts under). @fc may be NULL (read, not kept). Returns
 * 1 when the file was read now, 0 when the cache knew it.
 */
int elffile_facts(struct filecache *fc, int fd, const struct stat *st, struct elffile_facts *ret,
		  struct filecache_id *ret_id);

/* The facts of the ELF image open with libelf (no cache): the same pass, for a caller that
 * holds an Elf already (an image in memory, a debug file). */
void elffile_facts_of_elf(Elf *elf, struct elffile_facts *ret);

/*
 * Opens the separate debug file of build-id @bid (@len bytes, at least 2) in one of @dirs
 * (':'-separated; NULL: "/usr/lib/debug"): DIR/.build-id/ab/cdef....debug, root's file in root's
 * directories reached without a symbolic link, whose own build-id is @bid (another is skipped:
 * counted in *@ret_refused, may be NULL, as is a file refused by the opener). The fd (O_RDONLY,
 * the caller closes it) and its fstat in *@ret_st (may be NULL); *@ret_dir, *@ret_dir_len (may
 * be NULL) the dir it was found in (within @dirs). -ENOENT when none.
 */
int elffile_open_debug(const char *dirs, const uint8_t *bid, size_t len, struct stat *ret_st,
		       const char **ret_dir, size_t *ret_dir_len, uint64_t *ret_refused);

#endif /* EMBER_DAEMON_ELF_ELFFILE_H */
