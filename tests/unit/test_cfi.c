// SPDX-License-Identifier: MIT
/*
 * cfi: unwind rows compiled from call frame information, checked
 *  - on hand-made .eh_frame sections, table-driven: each DW_CFA_* rule, the expressions, merged
 *    and clipped rows, overlapping and malformed FDEs, CIE augmentations;
 *  - on this machine's binaries (libc, python3.11, gzip, this process's vDSO, a program built here
 *    with -O2 -fomit-frame-pointer) against libdw's own answer (dwarf_cfi_addrframe) at every
 *    row's first address, one inside it and its last one;
 *  - PLT rows, glibc's __restore_rt (SIGNAL), _start (END), a file with only .debug_frame, the
 *    same through a separate debug file and compressed, and the errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "ember/daemon/unwind/cfi.h"

#include "helpers.h"

static char tmpdir[64];
static bool have_cc;

/* --- hand-made .eh_frame sections ---------------------------------------------------------- */

#define I(s) s, sizeof(s) - 1
#define NONE_ROW(pc, why)                                                                          \
	{                                                                                          \
		pc, EMBER_CFA_NONE, why, 0, 0                                                      \
	}
#define GAP(pc) NONE_ROW(pc, CFI_NONE_GAP)
#define SP(pc, off)                                                                                \
	{                                                                                          \
		pc, EMBER_CFA_SP, off, 0, 0                                                        \
	}
#define WANT_END                                                                                   \
	{                                                                                          \
		0, 0xff, 0, 0, 0                                                                   \
	}
#define CIE_INIT "\x0c\x07\x08\x90\x01" /* def_cfa rsp+8; rip at cfa-8 */

struct syn_fde {
	uint32_t start, len;
	const char *ins;
	size_t ins_len;
};

struct want {
	uint32_t pc;
	uint8_t type;
	int32_t off;
	uint8_t bpt;
	int16_t bpo;
};

static const struct syn_case {
	const char *name;
	const char *aug; /* NULL: "zR" */
	const char *init;
	size_t init_len; /* NULL/0: CIE_INIT */
	struct syn_fde fde[3];
	struct want rows[10];
	uint64_t malformed, overlap, cies_malformed;
} syn_cases[] = {
    {"push rbp; mov rsp,rbp", .fde = {{0x1000, 0x20, I("\x41\x0e\x10\x86\x02\x43\x0d\x06")}},
     .rows = {SP(0x1000, 8),
	      {0x1001, EMBER_CFA_SP, 16, EMBER_BP_SAVED, -16},
	      {0x1004, EMBER_CFA_BP, 16, EMBER_BP_SAVED, -16},
	      GAP(0x1020),
	      WANT_END}},
    {"remember and restore state (the CFA too)",
     .fde = {{0x1000, 0x20, I("\x0e\x10\x44\x0a\x0e\x08\x41\x0b\x42\x0e\x08")}},
     .rows = {SP(0x1000, 16), SP(0x1004, 8), SP(0x1005, 16), SP(0x1007, 8), GAP(0x1020), WANT_END}},
    {"return address in a register", .fde = {{0x1000, 0x20, I("\x41\x09\x10\x01")}},
     .rows = {SP(0x1000, 8), NONE_ROW(0x1001, CFI_NONE_RA), GAP(0x1020), WANT_END}},
    {"CFA on r10", .fde = {{0x1000, 0x20, I("\x41\x0c\x0a\x00")}},
     .rows = {SP(0x1000, 8), NONE_ROW(0x1001, CFI_NONE_CFA_REG), GAP(0x1020), WANT_END}},
    {"gcc's DRAP: r10, then *(rbp-8), rbp at *(rbp)",
     .fde = {{0x1000, 0x20,
	      I("\x41\x0c\x0a\x00\x41\x10\x06\x02\x76\x00\x41\x0f\x03\x76\x78\x06\x41"
		"\x0c\x07\x08\x41\xc6")}},
     .rows = {SP(0x1000, 8),
	      NONE_ROW(0x1001, CFI_NONE_CFA_REG),
	      {0x1003, EMBER_CFA_DEREF_BP, -8, EMBER_BP_AT_RBP, 0},
	      {0x1004, EMBER_CFA_SP, 8, EMBER_BP_AT_RBP, 0},
	      SP(0x1005, 8),
	      GAP(0x1020),
	      WANT_END}},
    {"the linker's .plt",
     .fde = {{0x1000, 0x40,
	      I("\x0e\x10\x46\x0e\x18\x4a\x0f\x0b\x77\x08\x80\x00\x3f\x1a\x3b\x2a\x33\x24"
		"\x22")}},
     .rows = {SP(0x1000, 16),
	      SP(0x1006, 24),
	      {0x1010, EMBER_CFA_PLT, 8, 0, 11},
	      GAP(0x1040),
	      WANT_END}},
    {"a .plt.sec threshold of 10, and rbp saved in a PLT row",
     .fde = {{0x1000, 0x40, I("\x0f\x0b\x77\x08\x80\x00\x3f\x1a\x3a\x2a\x33\x24\x22\x48\x86\x02")}},
     .rows =
	 {{0x1000, EMBER_CFA_PLT, 8, 0, 10}, NONE_ROW(0x1008, CFI_NONE_BP), GAP(0x1040), WANT_END}},
    {"CFA expressions of other shapes",
     .fde = {{0x1000, 0x20,
	      I("\x41\x0f\x02\x77\x08\x41\x0f\x04\x76\x78\x06\x06\x41"
		"\x0e\x10")}},
     .rows = {SP(0x1000, 8), NONE_ROW(0x1001, CFI_NONE_CFA_EXPR), GAP(0x1020), WANT_END}},
    {"rsp: val_offset(0) is the CFA, a register is not",
     .fde = {{0x1000, 0x20, I("\x41\x14\x07\x00\x41\x09\x07\x08")}},
     .rows = {SP(0x1000, 8), NONE_ROW(0x1002, CFI_NONE_SP), GAP(0x1020), WANT_END}},
    {"return address undefined: the end of the stack", .fde = {{0x1000, 0x20, I("\x44\x07\x10")}},
     .rows = {SP(0x1000, 8), {0x1004, EMBER_CFA_END, 0, 0, 0}, GAP(0x1020), WANT_END}},
    {"offsets too large for the row",
     .fde = {{0x1000, 0x20,
	      I("\x41\x0e\x80\x80\x80\x80\x08\x41\x0e\x10\x11\x06\x88\x27"
		"\x41\x11\x06\x02")}},
     .rows = {SP(0x1000, 8),
	      NONE_ROW(0x1001, CFI_NONE_RANGE),
	      {0x1003, EMBER_CFA_SP, 16, EMBER_BP_SAVED, -16},
	      GAP(0x1020),
	      WANT_END}},
    {"advance_loc1/2/4, set_loc, the _sf forms, args_size, rbp's other rules",
     .fde = {{0x1000, 0x20,
	      I("\x02\x04\x12\x07\x7e\x03\x04\x00\x13\x7d\x2e\x10\x05\x06\x02\x04\x04\x00"
		"\x00\x00\x2f\x06\x01\x44\x08\x06\x44\x14\x06\x02\x44\x06\x06\x00\x01\x1c"
		"\x10\x00\x00\x07\x06")}},
     .rows = {SP(0x1000, 8),
	      SP(0x1004, 16),
	      {0x1008, EMBER_CFA_SP, 24, EMBER_BP_SAVED, -16},
	      {0x100c, EMBER_CFA_SP, 24, EMBER_BP_SAVED, 8},
	      SP(0x1010, 24),
	      NONE_ROW(0x1014, CFI_NONE_BP),
	      SP(0x1018, 24),
	      GAP(0x1020),
	      WANT_END}},
    {"an advance past the FDE's end", .fde = {{0x1000, 0x4, I("\x48\x0e\x10")}},
     .rows = {SP(0x1000, 8), GAP(0x1004), WANT_END}},
    {"a truncated instruction skips the FDE",
     .fde = {{0x1000, 0x10, I("")}, {0x1010, 0x10, I("\x41\x0c\x07")}},
     .rows = {SP(0x1000, 8), GAP(0x1010), WANT_END}, .malformed = 1},
    {"an unknown opcode, restore_state without remember_state",
     .fde = {{0x1000, 0x10, I("\x3f")}, {0x1010, 0x10, I("\x0b")}, {0x1020, 0x10, I("\x41\xc6")}},
     .rows = {SP(0x1020, 8), GAP(0x1030), WANT_END}, .malformed = 2},
    {"overlaps: the lowest start wins, a contained FDE is dropped",
     .fde = {{0x1020, 0x40, I("\x0e\x10")}, {0x1000, 0x40, I("")}, {0x1008, 0x8, I("\x0e\x20")}},
     .rows = {SP(0x1000, 8), SP(0x1040, 16), GAP(0x1060), WANT_END}, .overlap = 2},
    {"overlaps: at equal starts the first in the section wins",
     .fde = {{0x1000, 0x10, I("\x0e\x10")}, {0x1000, 0x20, I("")}},
     .rows = {SP(0x1000, 16), SP(0x1010, 8), GAP(0x1020), WANT_END}, .overlap = 1},
    {"adjacent FDEs merge, a gap between two gets its row",
     .fde = {{0x1000, 0x10, I("")}, {0x1010, 0x10, I("")}, {0x1028, 0x8, I("")}},
     .rows = {SP(0x1000, 8), GAP(0x1020), SP(0x1028, 8), GAP(0x1030), WANT_END}},
    {"a signal frame ('S')", .aug = "zRS", .fde = {{0x1000, 0x10, I("\x0f\x04\x77\xa0\x01\x06")}},
     .rows = {{0x1000, EMBER_CFA_SIGNAL, 0, 0, 0}, GAP(0x1010), WANT_END}},
    {"personality and LSDA in the augmentation", .aug = "zPLR", .fde = {{0x1000, 0x10, I("")}},
     .rows = {SP(0x1000, 8), GAP(0x1010), WANT_END}},
    {"an unknown augmentation before 'R'", .aug = "zXR", .fde = {{0x1000, 0x10, I("")}},
     .rows = {WANT_END}, .malformed = 1, .cies_malformed = 1},
    {"an advance in the CIE's initial instructions", .init = CIE_INIT "\x41",
     .init_len = sizeof(CIE_INIT), .fde = {{0x1000, 0x10, I("")}}, .rows = {WANT_END},
     .malformed = 1, .cies_malformed = 1},
};

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4); /* x86-64: little-endian */
}

static void end_entry(struct buf *b, size_t start)
{
	uint32_t len = (uint32_t)(b->n - start - 4); /* unpadded: libdw does not need it */

	memcpy(b->b + start, &len, 4);
}

/* A .eh_frame: one CIE (FDE addresses udata4, absolute), FDEs, the terminator. */
static void mk_eh_frame(struct buf *b, const struct syn_case *c)
{
	const char *aug = c->aug ? c->aug : "zR", *a;
	size_t i, cie = b->n, start;
	struct buf data = {.n = 0};

	put32(b, 0);
	put32(b, 0); /* CIE id */
	put8(b, 1);
	put(b, aug, strlen(aug) + 1);
	put8(b, 1);    /* code alignment */
	put8(b, 0x78); /* data alignment -8 */
	put8(b, 16);   /* return address column */
	for (a = aug + 1; *a; a++) {
		if (*a == 'R')
			put8(&data, DW_EH_PE_udata4);
		else if (*a == 'L')
			put8(&data, DW_EH_PE_udata4);
		else if (*a == 'P') {
			put8(&data, DW_EH_PE_pcrel | DW_EH_PE_sdata4 | DW_EH_PE_indirect);
			put32(&data, 0x1234);
		}
	}
	put8(b, (uint8_t)data.n);
	put(b, data.b, data.n);
	if (c->init)
		put(b, c->init, c->init_len);
	else
		put(b, CIE_INIT, sizeof(CIE_INIT) - 1);
	end_entry(b, cie);
	for (i = 0; i < 3 && c->fde[i].len; i++) {
		start = b->n;
		put32(b, 0);
		put32(b, (uint32_t)(b->n - cie)); /* back to the CIE */
		put32(b, c->fde[i].start);
		put32(b, c->fde[i].len);
		put8(b, strchr(aug, 'L') ? 4 : 0); /* augmentation data: the LSDA pointer */
		if (strchr(aug, 'L'))
			put32(b, 0);
		put(b, c->fde[i].ins, c->fde[i].ins_len);
		end_entry(b, start);
	}
	put32(b, 0);
}

/* An ELF image holding .eh_frame at 0x1000 (no program headers: no segment filter). */
static size_t mk_elf(uint8_t *img, size_t cap, const struct buf *eh, uint16_t machine)
{
	static const char shstr[] = "\0.eh_frame\0.shstrtab";
	Elf64_Ehdr *h = (Elf64_Ehdr *)img;
	size_t off_eh = sizeof(*h), off_str = off_eh + eh->n,
	       off_sh = (off_str + sizeof(shstr) + 7) & ~7ul;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + off_sh);

	assert_true(off_sh + 3 * sizeof(*sh) <= cap);
	memset(img, 0, off_sh + 3 * sizeof(*sh));
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_DYN;
	h->e_machine = machine;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_shoff = off_sh;
	h->e_shentsize = sizeof(*sh);
	h->e_shnum = 3;
	h->e_shstrndx = 2;
	memcpy(img + off_eh, eh->b, eh->n);
	memcpy(img + off_str, shstr, sizeof(shstr));
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC,
			     .sh_addr = 0x1000,
			     .sh_offset = off_eh,
			     .sh_size = eh->n,
			     .sh_addralign = 8};
	sh[2] = (Elf64_Shdr){.sh_name = 11,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = off_str,
			     .sh_size = sizeof(shstr),
			     .sh_addralign = 1};
	return off_sh + 3 * sizeof(*sh);
}

static struct cfi_table *syn_table(const struct syn_case *c, uint16_t machine,
				   const struct cfi_opts *o)
{
	static uint8_t img[8192];
	struct buf eh = {.n = 0};
	struct cfi_table *t;
	size_t n;
	Elf *elf;

	mk_eh_frame(&eh, c);
	n = mk_elf(img, sizeof(img), &eh, machine);
	elf = elf_memory((char *)img, n);
	assert_non_null(elf);
	t = cfi_table__new(elf, NULL, o);
	elf_end(elf);
	return t;
}

static void test_synthetic(void **state)
{
	size_t i, k, n;

	(void)state;
	for (i = 0; i < sizeof(syn_cases) / sizeof(syn_cases[0]); i++) {
		const struct syn_case *c = &syn_cases[i];
		struct cfi_table *t = syn_table(c, EM_X86_64, NULL);
		const struct ember_unwind_row *r;
		const struct cfi_stats *st;

		print_message("# %s\n", c->name);
		assert_non_null(t);
		r = cfi_table__rows(t, &n);
		st = cfi_table__stats(t);
		for (k = 0; c->rows[k].type != 0xff; k++) {
			const struct want *w = &c->rows[k];

			if (k >= n)
				fail_msg("%s: %zu rows, wanted more", c->name, n);
			if (r[k].pc != w->pc || r[k].cfa_type != w->type ||
			    r[k].cfa_off != w->off || r[k].bp_type != w->bpt ||
			    r[k].bp_off != w->bpo)
				fail_msg("%s: row %zu is %#x %d %d %d %d, wanted %#x %d %d %d %d",
					 c->name, k, r[k].pc, r[k].cfa_type, r[k].cfa_off,
					 r[k].bp_type, r[k].bp_off, w->pc, w->type, w->off, w->bpt,
					 w->bpo);
		}
		assert_int_equal(n, k);
		assert_int_equal(st->rows, n);
		assert_int_equal(st->bytes, n * 12);
		assert_int_equal(st->fdes_malformed, c->malformed);
		assert_int_equal(st->fdes_overlap, c->overlap);
		assert_int_equal(st->cies_malformed, c->cies_malformed);
		cfi_table__free(t);
	}
}

static void test_lookup_and_limits(void **state)
{
	struct cfi_opts o = {.max_rows = 2};
	const struct ember_unwind_row *r;
	struct cfi_table *t = syn_table(&syn_cases[0], EM_X86_64, NULL);

	(void)state;
	assert_non_null(t);
	assert_int_equal(sizeof(struct ember_unwind_row), 12);
	assert_null(cfi_table__lookup(t, 0xfff));
	assert_int_equal(cfi_table__lookup(t, 0x1000)->cfa_off, 8);
	r = cfi_table__lookup(t, 0x1003);
	assert_int_equal(r->pc, 0x1001);
	assert_int_equal(cfi_table__lookup(t, 0x1fffff)->cfa_type, EMBER_CFA_NONE);
	assert_null(cfi_table__lookup(t, 1ull << 32));
	assert_int_equal(cfi_table__stats(t)->none_rows[CFI_NONE_GAP], 1);
	assert_true(cfi_table__mem_bytes(t) >= 4 * 12);
	cfi_table__free(t);
	cfi_table__free(NULL);

	/* more rows than allowed */
	errno = 0;
	assert_null(syn_table(&syn_cases[0], EM_X86_64, &o));
	assert_int_equal(errno, E2BIG);
	/* not x86-64 */
	assert_null(syn_table(&syn_cases[0], EM_AARCH64, NULL));
	assert_int_equal(errno, ENOEXEC);
	assert_string_equal(cfi_none_reason_str(CFI_NONE_CFA_EXPR), "cfa_expr");
	assert_string_equal(cfi_none_reason_str(99), "?");
}

static void test_state_depth(void **state)
{
	static char ins[200];
	struct syn_case c = {"deep remember_state", .fde = {{0x1000, 0x10, ins, 0}}};
	struct cfi_table *t;
	size_t n;

	(void)state;
	/* 64 levels are kept, the 65th is malformed */
	memset(ins, DW_CFA_remember_state, 64);
	c.fde[0].ins_len = 64;
	t = syn_table(&c, EM_X86_64, NULL);
	assert_non_null(t);
	assert_int_equal(cfi_table__stats(t)->fdes_malformed, 0);
	cfi_table__free(t);
	memset(ins, DW_CFA_remember_state, 65);
	c.fde[0].ins_len = 65;
	t = syn_table(&c, EM_X86_64, NULL);
	assert_non_null(t);
	assert_int_equal(cfi_table__stats(t)->fdes_malformed, 1);
	assert_null(cfi_table__rows(t, &n));
	assert_int_equal(n, 0);
	cfi_table__free(t);
}

/* --- against libdw ------------------------------------------------------------------------- */

static bool op_is(const Dwarf_Op *op, uint8_t atom)
{
	return op->atom == atom;
}

/* The row libdw's reading of the CFI at @addr implies, by the same rules (cfi.h); false when no
 * FDE covers @addr. */
static bool libdw_row(Dwarf_CFI *cfi, uint64_t addr, struct ember_unwind_row *ret)
{
	struct ember_unwind_row r = {.pc = (uint32_t)addr};
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	size_t nops;
	bool signalp;
	int64_t off = 0, n = 0;
	int ra;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &fr) != 0)
		return false;
	ra = dwarf_frame_info(fr, &start, &end, &signalp);
	if (signalp) {
		r.cfa_type = EMBER_CFA_SIGNAL;
		goto out;
	}
	assert_int_equal(dwarf_frame_register(fr, ra, mem, &ops, &nops), 0);
	if (nops == 0 && ops) { /* undefined */
		r.cfa_type = EMBER_CFA_END;
		goto out;
	}
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0) {
		r.cfa_off = CFI_NONE_CFA_EXPR;
		goto out;
	}
	if (nops == 1 && op_is(&ops[0], DW_OP_bregx)) {
		off = (int64_t)ops[0].number2;
		if (ops[0].number == 7)
			r.cfa_type = EMBER_CFA_SP;
		else if (ops[0].number == 6)
			r.cfa_type = EMBER_CFA_BP;
		else
			r.cfa_off = CFI_NONE_CFA_REG;
	} else if (nops == 2 && op_is(&ops[0], DW_OP_breg6) && op_is(&ops[1], DW_OP_deref)) {
		r.cfa_type = EMBER_CFA_DEREF_BP;
		off = (int64_t)ops[0].number;
	} else if (nops == 9 && op_is(&ops[0], DW_OP_breg7) && op_is(&ops[1], DW_OP_breg16) &&
		   ops[1].number == 0 && op_is(&ops[2], DW_OP_lit15) && op_is(&ops[3], DW_OP_and) &&
		   ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit15 &&
		   op_is(&ops[5], DW_OP_ge) && op_is(&ops[6], DW_OP_lit3) &&
		   op_is(&ops[7], DW_OP_shl) && op_is(&ops[8], DW_OP_plus)) {
		r.cfa_type = EMBER_CFA_PLT;
		off = (int64_t)ops[0].number;
		r.bp_off = (int16_t)(ops[4].atom - DW_OP_lit0);
	} else {
		r.cfa_off = CFI_NONE_CFA_EXPR;
	}
	if (r.cfa_type == EMBER_CFA_NONE)
		goto out;
	/* the return address at CFA - 8 */
	assert_int_equal(dwarf_frame_register(fr, ra, mem, &ops, &nops), 0);
	if (!(nops == 2 && op_is(&ops[0], DW_OP_call_frame_cfa) &&
	      op_is(&ops[1], DW_OP_plus_uconst) && (int64_t)ops[1].number == -8)) {
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_RA};
		goto out;
	}
	/* rsp: unspecified, or the CFA (val_offset 0) */
	assert_int_equal(dwarf_frame_register(fr, 7, mem, &ops, &nops), 0);
	if (!((nops == 0 && ops) || (nops == 2 && op_is(&ops[0], DW_OP_call_frame_cfa) &&
				     op_is(&ops[1], DW_OP_stack_value)))) {
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_SP};
		goto out;
	}
	if (off < INT32_MIN || off > INT32_MAX) {
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_RANGE};
		goto out;
	}
	r.cfa_off = (int32_t)off;
	assert_int_equal(dwarf_frame_register(fr, 6, mem, &ops, &nops), 0);
	if (nops == 0)
		goto out; /* same value or undefined */
	if (nops == 1 && op_is(&ops[0], DW_OP_call_frame_cfa)) {
		r.bp_type = EMBER_BP_SAVED;
	} else if (nops == 2 && op_is(&ops[0], DW_OP_call_frame_cfa) &&
		   op_is(&ops[1], DW_OP_plus_uconst)) {
		r.bp_type = EMBER_BP_SAVED;
		n = (int64_t)ops[1].number;
	} else if (nops == 2 && op_is(&ops[0], DW_OP_call_frame_cfa) &&
		   op_is(&ops[1], DW_OP_breg6)) {
		/* DW_CFA_expression: libdw pushes the CFA first */
		r.bp_type = EMBER_BP_AT_RBP;
		n = (int64_t)ops[1].number;
	} else {
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_BP};
		goto out;
	}
	if (r.cfa_type == EMBER_CFA_PLT)
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_BP};
	else if (n < INT16_MIN || n > INT16_MAX)
		r = (struct ember_unwind_row){.pc = r.pc, .cfa_off = CFI_NONE_RANGE};
	else
		r.bp_off = (int16_t)n;
out:
	free(fr);
	*ret = r;
	return true;
}

struct tally {
	size_t addrs, mismatches;
	size_t by_type[EMBER_CFA_END + 1];
	size_t at_rbp;
};

/* Every row of @t against libdw: .eh_frame's CFI @eh first, then .debug_frame's @dbg. */
static void compare(const char *what, const struct cfi_table *t, Dwarf_CFI *eh, Dwarf_CFI *dbg,
		    struct tally *ret)
{
	const struct ember_unwind_row *rows;
	struct tally ty = {0};
	size_t n, i, k;

	rows = cfi_table__rows(t, &n);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		uint64_t a = rows[i].pc, len = i + 1 < n ? rows[i + 1].pc - a : 1;
		uint64_t addrs[3] = {a, a + (i * 2654435761u) % len, a + len - 1};

		assert_true(i == 0 || rows[i].pc > rows[i - 1].pc);
		ty.by_type[rows[i].cfa_type]++;
		ty.at_rbp += rows[i].bp_type == EMBER_BP_AT_RBP;
		for (k = 0; k < 3; k++) {
			struct ember_unwind_row want, got;

			if (k && addrs[k] == addrs[k - 1])
				continue;
			ty.addrs++;
			assert_ptr_equal(cfi_table__lookup(t, addrs[k]), &rows[i]);
			got = rows[i];
			if (!libdw_row(eh, addrs[k], &want) && !libdw_row(dbg, addrs[k], &want))
				want = (struct ember_unwind_row){.cfa_off = CFI_NONE_GAP};
			if (got.cfa_type == want.cfa_type && got.cfa_off == want.cfa_off &&
			    got.bp_type == want.bp_type && got.bp_off == want.bp_off)
				continue;
			if (ty.mismatches++ < 10)
				print_message("%s: at %#lx: ours %d %d %d %d, libdw %d %d %d %d\n",
					      what, (unsigned long)addrs[k], got.cfa_type,
					      got.cfa_off, got.bp_type, got.bp_off, want.cfa_type,
					      want.cfa_off, want.bp_type, want.bp_off);
		}
	}
	/* below the first row: no CFI for libdw either */
	if (rows[0].pc) {
		struct ember_unwind_row want;

		assert_null(cfi_table__lookup(t, rows[0].pc - 1));
		assert_false(libdw_row(eh, rows[0].pc - 1, &want) ||
			     libdw_row(dbg, rows[0].pc - 1, &want));
	}
	print_message(
	    "# %s: %zu rows, %zu addresses checked against libdw, %zu differ; sp %zu bp %zu "
	    "deref_bp %zu plt %zu signal %zu end %zu none %zu\n",
	    what, n, ty.addrs, ty.mismatches, ty.by_type[EMBER_CFA_SP], ty.by_type[EMBER_CFA_BP],
	    ty.by_type[EMBER_CFA_DEREF_BP], ty.by_type[EMBER_CFA_PLT], ty.by_type[EMBER_CFA_SIGNAL],
	    ty.by_type[EMBER_CFA_END], ty.by_type[EMBER_CFA_NONE]);
	assert_int_equal(ty.mismatches, 0);
	if (ret)
		*ret = ty;
}

struct opened {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct cfi_table *t;
};

static void open_file(const char *path, struct opened *o)
{
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(o->fd >= 0);
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(o->elf);
	o->dw = NULL;
	o->t = cfi_table__new(o->elf, NULL, NULL);
	assert_non_null(o->t);
}

static void close_file(struct opened *o)
{
	cfi_table__free(o->t);
	if (o->dw)
		dwarf_end(o->dw);
	elf_end(o->elf);
	close(o->fd);
}

/* @path against libdw's .eh_frame (and .debug_frame when @debug_frame). */
static void check_file(const char *path, bool debug_frame, struct tally *ret)
{
	struct opened o;
	Dwarf_CFI *eh;

	open_file(path, &o);
	if (debug_frame) {
		o.dw = dwarf_begin_elf(o.elf, DWARF_C_READ, NULL);
		assert_non_null(o.dw);
	}
	eh = dwarf_getcfi_elf(o.elf); /* ours: dwarf_cfi_end() */
	compare(path, o.t, eh, o.dw ? dwarf_getcfi(o.dw) : NULL, ret);
	if (eh)
		dwarf_cfi_end(eh);
	close_file(&o);
}

static void test_libc(void **state)
{
	(void)state;
	check_file("/lib/x86_64-linux-gnu/libc.so.6", false, NULL);
}

static void test_python(void **state)
{
	(void)state;
	if (access("/usr/bin/python3.11", R_OK))
		skip();
	check_file("/usr/bin/python3.11", false, NULL);
}

static void test_gzip(void **state)
{
	(void)state;
	check_file("/usr/bin/gzip", false, NULL);
}

static void test_vdso(void **state)
{
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	struct cfi_table *t;
	Dwarf_CFI *eh;
	size_t size;
	char *copy;
	Elf *elf;

	(void)state;
	assert_non_null(h);
	size = h->e_shoff + (size_t)h->e_shnum * h->e_shentsize; /* section headers come last */
	copy = malloc(size);
	assert_non_null(copy);
	memcpy(copy, h, size);
	elf = elf_memory(copy, size);
	assert_non_null(elf);
	t = cfi_table__new(elf, NULL, NULL);
	assert_non_null(t);
	eh = dwarf_getcfi_elf(elf);
	assert_non_null(eh);
	compare("vdso", t, eh, NULL, NULL);
	dwarf_cfi_end(eh);
	cfi_table__free(t);
	elf_end(elf);
	free(copy);
}

/* A program with a recursion, a leaf, gcc's stack realignment (DRAP: alloca and an aligned
 * local) and the PLT, built -O2 -fomit-frame-pointer with @flags into tmpdir/@name. */
static void build_prog(const char *name, const char *flags, char *path, size_t cap)
{
	static const char src[] =
	    "#include <alloca.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	    "__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }\n"
	    "__attribute__((noinline)) int drap(int n) {\n"
	    "	__attribute__((aligned(64))) char buf[128]; char *p = alloca(n + 1);\n"
	    "	memset(p, n, n + 1); snprintf(buf, sizeof(buf), \"%d\", p[n]);\n"
	    "	return buf[0] + leaf(n); }\n"
	    "__attribute__((noinline)) int rec(int n) { return n <= 0 ? leaf(n) : rec(n - 1) + "
	    "rec(n - 2) % 7; }\n"
	    "int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 5;\n"
	    "	printf(\"%d %d\\n\", drap(n), rec(n)); return 0; }\n";
	char cmd[512], srcpath[128];
	FILE *f;

	snprintf(srcpath, sizeof(srcpath), "%s/prog.c", tmpdir);
	f = fopen(srcpath, "we");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(path, cap, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof(cmd), "cc -O2 -fomit-frame-pointer %s -o %s %s", flags, path, srcpath);
	assert_int_equal(system(cmd), 0);
}

static void test_own_program(void **state)
{
	char path[256];
	struct tally ty;

	(void)state;
	if (!have_cc)
		skip();
	build_prog("prog", "", path, sizeof(path));
	check_file(path, false, &ty);
	/* gcc's DRAP rows: CFA = *(rbp - 8), rbp saved at *(rbp) */
	assert_true(ty.by_type[EMBER_CFA_DEREF_BP] > 0);
	assert_true(ty.at_rbp > 0);
	assert_true(ty.by_type[EMBER_CFA_PLT] > 0);
	assert_true(ty.by_type[EMBER_CFA_END] > 0);
}

static bool section_addr(Elf *elf, const char *name, uint64_t *ret)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		assert_non_null(gelf_getshdr(scn, &sh));
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*ret = sh.sh_addr;
			return true;
		}
	}
	return false;
}

/* .plt: PLT0 pushes (rsp+16, then +24), the stubs from .plt+16 are the expression (threshold 11) */
static void test_plt(void **state)
{
	static const char *const paths[] = {"/usr/bin/python3.11", "/usr/bin/gzip"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct ember_unwind_row *r;
		struct opened o;
		uint64_t plt = 0;

		if (access(paths[i], R_OK))
			continue;
		open_file(paths[i], &o);
		assert_true(section_addr(o.elf, ".plt", &plt));
		r = cfi_table__lookup(o.t, plt);
		assert_int_equal(r->cfa_type, EMBER_CFA_SP);
		assert_int_equal(r->cfa_off, 16);
		r = cfi_table__lookup(o.t, plt + 6);
		assert_int_equal(r->cfa_type, EMBER_CFA_SP);
		assert_int_equal(r->cfa_off, 24);
		r = cfi_table__lookup(o.t, plt + 16);
		assert_int_equal(r->cfa_type, EMBER_CFA_PLT);
		assert_int_equal(r->cfa_off, 8);
		assert_int_equal(r->bp_off, 11);
		assert_int_equal(r->bp_type, EMBER_BP_SAME);
		assert_ptr_equal(cfi_table__lookup(o.t, plt + 16 + 16 + 11), r);
		close_file(&o);
	}
}

static void on_signal(int sig)
{
	(void)sig;
}

/* glibc's __restore_rt, found as the restorer the kernel holds for our handler */
static void test_signal_trampoline(void **state)
{
	struct sigaction sa = {.sa_handler = on_signal}, old;
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} ksa;
	const struct ember_unwind_row *r;
	struct opened o;
	Dl_info info;
	uint64_t vaddr;

	(void)state;
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	assert_int_equal(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &ksa, 8), 0);
	assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
	assert_true(ksa.flags & 0x04000000); /* SA_RESTORER */
	assert_true(dladdr(ksa.restorer, &info));
	vaddr =
	    (uint64_t)ksa.restorer - (uint64_t)info.dli_fbase; /* libc's first PT_LOAD is at 0 */
	open_file(info.dli_fname, &o);
	r = cfi_table__lookup(o.t, vaddr);
	assert_non_null(r);
	assert_int_equal(r->cfa_type, EMBER_CFA_SIGNAL);
	/* glibc starts the FDE one byte early (a nop), for unwinders that look up ip - 1 */
	assert_int_equal(cfi_table__lookup(o.t, vaddr - 1)->cfa_type, EMBER_CFA_SIGNAL);
	close_file(&o);
}

/* _start: the return address is undefined there (the kernel's entry, no caller) */
static void test_start_is_end(void **state)
{
	static const char *const paths[] = {"/usr/bin/gzip", "/usr/bin/python3.11"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct ember_unwind_row *r;
		struct opened o;
		GElf_Ehdr eh;

		if (access(paths[i], R_OK))
			continue;
		open_file(paths[i], &o);
		assert_non_null(gelf_getehdr(o.elf, &eh));
		r = cfi_table__lookup(o.t, eh.e_entry);
		assert_non_null(r);
		assert_int_equal(r->cfa_type, EMBER_CFA_END);
		close_file(&o);
	}
}

static bool same_table(const struct cfi_table *a, const struct cfi_table *b)
{
	const struct ember_unwind_row *ra, *rb;
	size_t na, nb;

	ra = cfi_table__rows(a, &na);
	rb = cfi_table__rows(b, &nb);
	return na == nb && !memcmp(ra, rb, na * sizeof(*ra));
}

static struct cfi_table *open_table(const char *path, const char *debug_path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), dfd = -1, err;
	struct cfi_table *t;

	assert_true(fd >= 0);
	if (debug_path) {
		dfd = open(debug_path, O_RDONLY | O_CLOEXEC);
		assert_true(dfd >= 0);
	}
	t = cfi_table__open(fd, dfd, NULL);
	err = errno;
	close(fd);
	if (dfd >= 0)
		close(dfd);
	errno = err;
	return t;
}

/* gcc -fno-asynchronous-unwind-tables -g writes .debug_frame; crt1.o still brings .eh_frame */
static void test_debug_frame(void **state)
{
	char both[256], only[256], stripped[256], dbg[256], z[256], cmd[2560];
	struct cfi_table *t, *t2;
	const struct cfi_stats *st;
	struct tally ty;

	(void)state;
	if (!have_cc)
		skip();
	build_prog("progdf", "-fno-asynchronous-unwind-tables -g", both, sizeof(both));
	snprintf(only, sizeof(only), "%s/progdf-noeh", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/progdf-stripped", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/progdf.debug", tmpdir);
	snprintf(z, sizeof(z), "%s/progdf-z", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr %s %s; "
		 "objcopy --only-keep-debug %s %s; objcopy --strip-debug %s %s; "
		 "objcopy --compress-debug-sections=zlib %s %s",
		 both, only, both, dbg, only, stripped, only, z);
	assert_int_equal(system(cmd), 0);

	/* .eh_frame for _start, .debug_frame for the rest */
	t = open_table(both, NULL);
	assert_non_null(t);
	st = cfi_table__stats(t);
	assert_true(st->fdes_eh_frame >= 1);
	assert_true(st->fdes_debug_frame >= 4);
	cfi_table__free(t);
	check_file(both, true, &ty);
	assert_true(ty.by_type[EMBER_CFA_DEREF_BP] > 0);
	assert_true(ty.by_type[EMBER_CFA_END] > 0);

	/* .debug_frame alone */
	t = open_table(only, NULL);
	assert_non_null(t);
	assert_int_equal(cfi_table__stats(t)->fdes_eh_frame, 0);
	check_file(only, true, NULL);

	/* the same from the separate debug file, and compressed */
	errno = 0;
	assert_null(open_table(stripped, NULL));
	assert_int_equal(errno, ENOENT);
	t2 = open_table(stripped, dbg);
	assert_non_null(t2);
	assert_true(same_table(t, t2));
	cfi_table__free(t2);
	t2 = open_table(z, NULL);
	assert_non_null(t2);
	assert_true(same_table(t, t2));
	cfi_table__free(t2);
	cfi_table__free(t);
}

static void test_errors(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/text", tmpdir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	errno = 0;
	assert_null(open_table(path, NULL));
	assert_int_equal(errno, ENOEXEC);
	errno = 0;
	assert_null(cfi_table__new(NULL, NULL, NULL));
	assert_int_equal(errno, ENOEXEC);
}

static int setup(void **state)
{
	(void)state;
	elf_version(EV_CURRENT);
	have_cc = system("cc --version >/dev/null 2>&1 && objcopy --version >/dev/null 2>&1") == 0;
	return helpers_tmpdir_new(tmpdir, sizeof(tmpdir), "cfi");
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_synthetic),	 cmocka_unit_test(test_lookup_and_limits),
	    cmocka_unit_test(test_state_depth),	 cmocka_unit_test(test_libc),
	    cmocka_unit_test(test_python),	 cmocka_unit_test(test_gzip),
	    cmocka_unit_test(test_vdso),	 cmocka_unit_test(test_own_program),
	    cmocka_unit_test(test_plt),		 cmocka_unit_test(test_signal_trampoline),
	    cmocka_unit_test(test_start_is_end), cmocka_unit_test(test_debug_frame),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
