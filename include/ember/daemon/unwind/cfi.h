/* SPDX-License-Identifier: MIT */
/*
 * cfi: one x86-64 ELF file's call frame information compiled into unwind rows, the table the BPF
 * stack walker searches to find each caller's frame without frame pointers.
 *
 * Sources: the file's .eh_frame; its .debug_frame, or the separate debug file's when the file has
 * none, only for the addresses no .eh_frame FDE covers. libdw splits the sections into CIEs and
 * FDEs (dwarf_next_cfi); the DW_CFA_* programs are run here, and a row is written at each advance.
 *
 * The table: rows sorted by pc, strictly increasing; a row holds from its pc up to the next row's
 * pc; two consecutive rows never hold the same rules (merged); where an FDE ends and no other
 * begins, an EMBER_CFA_NONE row (reason CFI_NONE_GAP) starts, so the last row is always one.
 * Addresses below the first row have no CFI either.
 *
 * Overlapping FDEs (rare: hand-written assembly, linker leftovers): every address belongs to the
 * covering FDE that starts lowest, at equal starts to the one first in its section. .eh_frame's
 * FDEs are placed first; .debug_frame's fill only the addresses none of them covers.
 *
 * Malformed CFI (truncated instructions, unknown opcodes, restore_state without remember_state,
 * pointer encodings we cannot apply...) skips that FDE, or every FDE of that CIE, and is counted:
 * its addresses read as CFI_NONE_GAP. FDEs outside the file's executable segments (the address 0
 * or -1 tombstones of discarded functions in .debug_frame) and FDEs above 4 GiB are skipped too.
 * Non-logging; a table is immutable once built, so several threads may read it.
 */
#ifndef EMBER_CFI_H
#define EMBER_CFI_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>
#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"

/* The rows and their EMBER_CFA_* / EMBER_BP_* kinds are the BPF walker's: bpf_shared.h. */

/* Why a row is EMBER_CFA_NONE (its cfa_off); counted in cfi_stats.none_rows. */
enum cfi_none_reason {
	CFI_NONE_GAP = 0,  /* no FDE covers the addresses (or its FDE was malformed) */
	CFI_NONE_CFA_REG,  /* CFA = a register other than rsp/rbp plus an offset (DRAP prologues'
			      r10, hand-written assembly) */
	CFI_NONE_CFA_EXPR, /* a CFA expression of another shape, or def_cfa_offset/_register after
			      an expression */
	CFI_NONE_RA,	   /* the return address is not at CFA - 8 (in a register, elsewhere) */
	CFI_NONE_BP,	   /* rbp's rule is not same/undefined/offset(N)/DW_OP_breg6 N, or a PLT
			      row saves it */
	CFI_NONE_SP,	   /* an explicit rule for rsp (longjmp, setcontext) */
	CFI_NONE_RANGE,	   /* an offset too large for the row's fields */
	CFI_NONE__COUNT
};

struct cfi_opts {
	size_t max_rows; /* 0: no limit; more rows fail the build with -E2BIG */
	uint64_t max_section_bytes; /* .eh_frame/.debug_frame read (inflated); more: E2BIG. 0: none */
};

struct cfi_stats {
	uint64_t rows;		   /* in the table */
	uint64_t bytes;		   /* rows * sizeof(struct ember_unwind_row) */
	uint64_t fdes;		   /* FDEs with rows in the table */
	uint64_t fdes_eh_frame;	   /* well-formed FDEs read, by section */
	uint64_t fdes_debug_frame; /* (.eh_frame wins where both have one) */
	uint64_t fdes_malformed;   /* skipped: malformed, or of a malformed CIE */
	uint64_t fdes_outside;	   /* skipped: not in an executable segment, or >= 4 GiB */
	uint64_t fdes_overlap;	   /* clipped or dropped: another FDE covered their start */
	uint64_t cies;		   /* well-formed CIEs */
	uint64_t cies_malformed;   /* unknown augmentation, bad initial instructions */
	uint64_t none_rows[CFI_NONE__COUNT]; /* rows of type EMBER_CFA_NONE, by reason */
	uint64_t build_ns;		     /* wall time of cfi_table__new() */
	uint64_t build_bytes;		     /* heap the build's working arrays held at the end, its
						peak (the table's rows included); freed but the rows */
};

struct cfi_table; /* opaque, immutable */

/*
 * Compiles the CFI of @elf (borrowed; a ELFCLASS64 EM_X86_64 little-endian file), with
 * @debug_elf (borrowed, may be NULL) its separate debug file. Both may be released after the
 * call. A compressed .debug_frame is decompressed in place in its Elf (elf_compress), as libdw
 * does. @o may be NULL (no limit).
 * NULL + errno: ENOEXEC (not an x86-64 ELF file), ENOENT (neither .eh_frame nor .debug_frame),
 * E2BIG (more than o->max_rows rows), ENOMEM. Free with cfi_table__free().
 */
struct cfi_table *cfi_table__new(Elf *elf, Elf *debug_elf, const struct cfi_opts *o);
/* The same from open files (borrowed: the caller closes them); @debug_fd < 0: none. */
struct cfi_table *cfi_table__open(int fd, int debug_fd, const struct cfi_opts *o);
void cfi_table__free(struct cfi_table *t); /* NULL is a no-op */

/* The rows, sorted by pc (NULL when none); borrowed, valid until cfi_table__free(). *@ret_n =
 * their number. */
const struct ember_unwind_row *cfi_table__rows(const struct cfi_table *t, size_t *ret_n);
/*
 * The row holding @vaddr (an ELF virtual address of the file), or NULL when @vaddr is below the
 * first row or not a 32-bit address: no CFI there. Borrowed, valid until cfi_table__free().
 */
const struct ember_unwind_row *cfi_table__lookup(const struct cfi_table *t, uint64_t vaddr);
/* Borrowed, valid until cfi_table__free(). */
const struct cfi_stats *cfi_table__stats(const struct cfi_table *t);
size_t cfi_table__mem_bytes(const struct cfi_table *t);

/* "gap", "cfa_reg", "cfa_expr", "ra", "bp", "sp", "range"; "?" for another value. Static. */
const char *cfi_none_reason_str(int reason);

#endif
