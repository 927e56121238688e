// SPDX-License-Identifier: MIT
/*
 * cfi: .eh_frame and .debug_frame compiled into unwind rows, in two phases:
 *  1. each section is walked twice with dwarf_next_cfi: its CIEs first (their augmentation and
 *     initial instructions, once per CIE), then its FDEs, whose instructions run from their CIE's
 *     initial rules; each advance of the location writes the row of the rules before it, and the
 *     rows of all FDEs go into one array, FDE after FDE (a malformed FDE's are taken back);
 *  2. the FDEs' ranges are made disjoint (cfi.h says how), sorted, and their rows copied into the
 *     table, merged, with a NONE row wherever an FDE ends and no other begins.
 * Only the rules the rows need are tracked: the CFA, the return-address column, rbp and rsp.
 */
#include "ember/daemon/unwind/cfi.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/keysort.h"

#define REG_RBP 6
#define REG_RSP 7
#define RA_OFF	(-8) /* the return address is at CFA - 8: the call pushed it */
/* remember_state nesting: gcc writes one level, hand-written assembly a few */
#define STATE_DEPTH 64
/* executable PT_LOAD segments kept to filter FDEs; a file with more is not filtered */
#define MAX_SEGS 32

enum rule_kind {
	RULE_UNSPEC = 0, /* not mentioned */
	RULE_UNDEF,
	RULE_SAME,
	RULE_OFFSET,	 /* saved at CFA + val */
	RULE_VAL_OFFSET, /* is CFA + val */
	RULE_REGISTER,	 /* in register val */
	RULE_EXPR,	 /* saved at the address the expression computes */
	RULE_VAL_EXPR,
};

struct rule {
	uint8_t kind;
	int64_t val;
	const uint8_t *expr; /* RULE_EXPR, RULE_VAL_EXPR: in the section's data */
	uint64_t len;
};

enum cfa_kind {
	CFA_UNSET = 0,
	CFA_REG_OFF,
	CFA_EXPR,
	CFA_BROKEN, /* def_cfa_register or def_cfa_offset without a register rule to change */
};

struct cfa {
	uint8_t kind;
	uint64_t reg;
	int64_t off;
	const uint8_t *expr;
	uint64_t len;
};

enum { SLOT_RA, SLOT_BP, SLOT_SP, NR_SLOTS };

struct regs {
	struct cfa cfa;
	struct rule r[NR_SLOTS];
};

struct cie {
	uint64_t off; /* of the entry in its section */
	uint64_t caf;
	int64_t daf;
	uint64_t ra_col;
	uint8_t fde_enc;
	bool z;	     /* FDEs carry their augmentation data's length */
	bool signal; /* 'S' */
	bool bad;
	struct regs init;
};

struct fde {
	uint32_t start, end; /* 32-bit pcs: checked when read */
	size_t first;	     /* its rows in builder.raw */
	size_t n;
	bool used;
};

struct piece {
	uint64_t lo; /* the sort key */
	uint64_t hi;
	size_t fde;
};

struct section {
	Elf_Data *data;
	uint64_t addr;
	const unsigned char *ident;
	bool eh;
	struct cie *cies; /* by offset */
	size_t ncies, cap_cies;
};

/* where an FDE's instructions are: the location and the FDE's end */
struct fde_run {
	uint64_t loc, end;
	size_t first;
};

struct builder {
	struct cfi_stats *st;
	size_t max_rows;
	uint64_t max_section_bytes;
	uint64_t segs[MAX_SEGS][2];
	size_t nsegs;
	struct ember_unwind_row *raw;
	size_t nraw, cap_raw;
	struct fde *fdes;	      /* in section order */
	size_t nfdes, cap_fdes, n_eh; /* fdes[0, n_eh) are .eh_frame's */
	uint64_t *order;	      /* per FDE, start << 32 | index: sorted, FDEs by start, then
					 by section order */
	struct piece *pieces;
	size_t npieces, cap_pieces;
	struct ember_unwind_row *out;
	size_t nout, cap_out;
	struct regs stack[STATE_DEPTH];
};

struct cfi_table {
	struct ember_unwind_row *rows;
	size_t n;
	struct cfi_stats st;
};

/* --- reading ------------------------------------------------------------------------------- */

/* Makes room for @need elements exactly (array_grow doubles: for a reservation sized from the
 * section, a power of two would be up to twice that). 0 or -ENOMEM (buffer untouched). */
static int reserve(void **buf, size_t *cap, size_t need, size_t elem)
{
	void *nb;

	if (need <= *cap)
		return 0;
	if (need > SIZE_MAX / elem)
		return -ENOMEM;
	nb = realloc(*buf, need * elem);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = need;
	return 0;
}

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t byte;

	do {
		if (*p >= end)
			return false;
		byte = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		else if (byte & 0x7f)
			return false; /* more than 64 bits */
		if (shift < 64)
			shift += 7;
	} while (byte & 0x80);
	*ret = v;
	return true;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *ret)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t byte;

	do {
		if (*p >= end)
			return false;
		byte = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		if (shift < 64)
			shift += 7;
	} while (byte & 0x80);
	if (shift < 64 && (byte & 0x40))
		v |= ~(uint64_t)0 << shift;
	*ret = (int64_t)v;
	return true;
}

/* @n bytes little-endian (the files are ELFDATA2LSB) */
static bool read_le(const uint8_t **p, const uint8_t *end, unsigned int n, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned int i;

	if ((size_t)(end - *p) < n)
		return false;
	for (i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	*ret = v;
	return true;
}

/*
 * A DW_EH_PE_@enc value at *@p, *@p being at address @field_addr for pc-relative ones. Only the
 * applications the x86-64 toolchains write for code addresses: absolute and pc-relative.
 */
static bool read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t field_addr,
			 uint64_t *ret)
{
	uint64_t v;
	int64_t s;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (!read_le(p, end, 8, &v))
			return false;
		break;
	case DW_EH_PE_udata2:
		if (!read_le(p, end, 2, &v))
			return false;
		break;
	case DW_EH_PE_sdata2:
		if (!read_le(p, end, 2, &v))
			return false;
		v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case DW_EH_PE_udata4:
		if (!read_le(p, end, 4, &v))
			return false;
		break;
	case DW_EH_PE_sdata4:
		if (!read_le(p, end, 4, &v))
			return false;
		v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case DW_EH_PE_uleb128:
		if (!read_uleb(p, end, &v))
			return false;
		break;
	case DW_EH_PE_sleb128:
		if (!read_sleb(p, end, &s))
			return false;
		v = (uint64_t)s;
		break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field_addr;
		break;
	default: /* textrel, datarel, funcrel, aligned: not for code addresses on x86-64 */
		return false;
	}
	*ret = v;
	return true;
}

/* @u * @daf as a signed offset; false on overflow */
static bool factor_u(uint64_t u, int64_t daf, int64_t *ret)
{
	return u <= INT64_MAX && !__builtin_mul_overflow((int64_t)u, daf, ret);
}

static bool factor_s(int64_t s, int64_t daf, int64_t *ret)
{
	return !__builtin_mul_overflow(s, daf, ret);
}

/* def_cfa's offset is not factored and unsigned: too large ones become a NONE row (range) */
static int64_t clamp_u(uint64_t u)
{
	return u > INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* --- rows ---------------------------------------------------------------------------------- */

static bool same_rules(const struct ember_unwind_row *a, const struct ember_unwind_row *b)
{
	return a->cfa_type == b->cfa_type && a->cfa_off == b->cfa_off && a->bp_type == b->bp_type &&
	       a->bp_off == b->bp_off;
}

static struct ember_unwind_row none_row(uint64_t pc, int reason)
{
	return (struct ember_unwind_row){.pc = (uint32_t)pc, .cfa_off = reason};
}

/* DW_OP_bregN sleb at *@p */
static bool match_breg(const uint8_t **p, const uint8_t *end, uint8_t op, int64_t *ret)
{
	if (*p >= end || **p != op)
		return false;
	(*p)++;
	return read_sleb(p, end, ret);
}

/* The CFA expressions a row can say (EMBER_CFA_DEREF_BP, EMBER_CFA_PLT), by their bytes. */
static int cfa_expr_type(const struct cfa *cfa, int64_t *ret_off, int16_t *ret_threshold)
{
	const uint8_t *p = cfa->expr, *end = cfa->expr + cfa->len;
	int64_t n, z;

	/* gcc's DRAP: DW_OP_breg6 N; DW_OP_deref */
	if (match_breg(&p, end, DW_OP_breg6, &n)) {
		if (end - p != 1 || p[0] != DW_OP_deref)
			return EMBER_CFA_NONE;
		*ret_off = n;
		return EMBER_CFA_DEREF_BP;
	}
	/* the linker's PLT: DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litT;
	 * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus: rsp + N, plus 8 past the stub's push */
	p = cfa->expr;
	if (!match_breg(&p, end, DW_OP_breg7, &n) || !match_breg(&p, end, DW_OP_breg16, &z) || z)
		return EMBER_CFA_NONE;
	if (end - p != 7 || p[0] != DW_OP_lit15 || p[1] != DW_OP_and || p[2] < DW_OP_lit0 ||
	    p[2] > DW_OP_lit15 || p[3] != DW_OP_ge || p[4] != DW_OP_lit3 || p[5] != DW_OP_shl ||
	    p[6] != DW_OP_plus)
		return EMBER_CFA_NONE;
	*ret_off = n;
	*ret_threshold = (int16_t)(p[2] - DW_OP_lit0);
	return EMBER_CFA_PLT;
}

/* The row of the rules @rs at @pc. */
static struct ember_unwind_row row_of(const struct cie *c, const struct regs *rs, uint64_t pc)
{
	const struct rule *ra = &rs->r[SLOT_RA], *bp = &rs->r[SLOT_BP], *sp = &rs->r[SLOT_SP];
	struct ember_unwind_row row = {.pc = (uint32_t)pc};
	int64_t off = 0, n;
	const uint8_t *p;

	if (c->signal) {
		row.cfa_type = EMBER_CFA_SIGNAL;
		return row;
	}
	if (ra->kind == RULE_UNDEF) {
		row.cfa_type = EMBER_CFA_END;
		return row;
	}
	switch (rs->cfa.kind) {
	case CFA_REG_OFF:
		if (rs->cfa.reg == REG_RSP)
			row.cfa_type = EMBER_CFA_SP;
		else if (rs->cfa.reg == REG_RBP)
			row.cfa_type = EMBER_CFA_BP;
		else
			return none_row(pc, CFI_NONE_CFA_REG);
		off = rs->cfa.off;
		break;
	case CFA_EXPR:
		row.cfa_type = (uint8_t)cfa_expr_type(&rs->cfa, &off, &row.bp_off);
		if (row.cfa_type == EMBER_CFA_NONE)
			return none_row(pc, CFI_NONE_CFA_EXPR);
		break;
	case CFA_BROKEN:
		return none_row(pc, CFI_NONE_CFA_EXPR);
	default:
		return none_row(pc, CFI_NONE_CFA_REG);
	}
	if (ra->kind != RULE_OFFSET || ra->val != RA_OFF)
		return none_row(pc, CFI_NONE_RA);
	/* rsp is the CFA unless said otherwise (libdw's x86-64 ABI rule: val_offset(0)) */
	if (sp->kind != RULE_UNSPEC && !(sp->kind == RULE_VAL_OFFSET && sp->val == 0))
		return none_row(pc, CFI_NONE_SP);
	if (off < INT32_MIN || off > INT32_MAX)
		return none_row(pc, CFI_NONE_RANGE);
	row.cfa_off = (int32_t)off;
	switch (bp->kind) {
	case RULE_UNSPEC:
	case RULE_UNDEF:
	case RULE_SAME:
		return row;
	case RULE_OFFSET:
		n = bp->val;
		row.bp_type = EMBER_BP_SAVED;
		break;
	case RULE_EXPR:
		p = bp->expr;
		if (!match_breg(&p, bp->expr + bp->len, DW_OP_breg6, &n) || p != bp->expr + bp->len)
			return none_row(pc, CFI_NONE_BP);
		row.bp_type = EMBER_BP_AT_RBP;
		break;
	default:
		return none_row(pc, CFI_NONE_BP);
	}
	if (row.cfa_type == EMBER_CFA_PLT) /* bp_off holds the threshold */
		return none_row(pc, CFI_NONE_BP);
	if (n < INT16_MIN || n > INT16_MAX)
		return none_row(pc, CFI_NONE_RANGE);
	row.bp_off = (int16_t)n;
	return row;
}

/* Appends @row to an FDE's rows (their pcs increase), merged with the previous one. */
static int raw_put(struct builder *b, const struct fde_run *f, struct ember_unwind_row row)
{
	if (b->nraw > f->first && same_rules(&b->raw[b->nraw - 1], &row))
		return 0;
	if (b->max_rows && b->nraw >= b->max_rows)
		return -E2BIG;
	if (array_grow((void **)&b->raw, &b->cap_raw, b->nraw + 1, sizeof(*b->raw), 1024))
		return -ENOMEM;
	b->raw[b->nraw++] = row;
	return 0;
}

/* Moves the location to @loc, writing the row of the rules that held until there. */
static int advance_to(struct builder *b, const struct cie *c, const struct regs *rs,
		      struct fde_run *f, uint64_t loc)
{
	int err = 0;

	if (loc < f->loc)
		return -EINVAL;
	if (loc > f->loc && f->loc < f->end)
		err = raw_put(b, f, row_of(c, rs, f->loc));
	f->loc = loc;
	return err;
}

static int advance_by(struct builder *b, const struct cie *c, const struct regs *rs,
		      struct fde_run *f, uint64_t delta)
{
	uint64_t loc;

	if (__builtin_mul_overflow(delta, c->caf, &delta) ||
	    __builtin_add_overflow(f->loc, delta, &loc))
		return -EINVAL;
	return advance_to(b, c, rs, f, loc);
}

static void set_rule(const struct cie *c, struct regs *rs, uint64_t reg, struct rule r)
{
	if (reg == c->ra_col)
		rs->r[SLOT_RA] = r;
	else if (reg == REG_RBP)
		rs->r[SLOT_BP] = r;
	else if (reg == REG_RSP)
		rs->r[SLOT_SP] = r;
}

static void restore_rule(const struct cie *c, struct regs *rs, uint64_t reg)
{
	if (reg == c->ra_col)
		rs->r[SLOT_RA] = c->init.r[SLOT_RA];
	else if (reg == REG_RBP)
		rs->r[SLOT_BP] = c->init.r[SLOT_BP];
	else if (reg == REG_RSP)
		rs->r[SLOT_SP] = c->init.r[SLOT_SP];
}

#define NEED(ok)                                                                                   \
	do {                                                                                       \
		if (!(ok))                                                                         \
			return -EINVAL;                                                            \
	} while (0)

/*
 * Runs the DW_CFA_* instructions [@p, @end) on @rs. @f NULL: a CIE's initial instructions (no
 * advance, no restore); otherwise each advance writes a row. 0, -EINVAL (malformed), -ENOMEM or
 * -E2BIG.
 */
static int run(struct builder *b, const struct section *s, const struct cie *c, struct regs *rs,
	       const uint8_t *p, const uint8_t *end, struct fde_run *f)
{
	const uint8_t *base = s->data->d_buf;
	size_t depth = 0;
	int err = 0;

	while (p < end && !err) {
		uint8_t op = *p++;
		uint64_t reg, u;
		int64_t off;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			NEED(f);
			err = advance_by(b, c, rs, f, op & 0x3f);
			continue;
		case DW_CFA_offset:
			NEED(read_uleb(&p, end, &u) && factor_u(u, c->daf, &off));
			set_rule(c, rs, op & 0x3f, (struct rule){.kind = RULE_OFFSET, .val = off});
			continue;
		case DW_CFA_restore:
			NEED(f);
			restore_rule(c, rs, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_set_loc:
			NEED(f &&
			     read_encoded(c->fde_enc, &p, end, s->addr + (uint64_t)(p - base), &u));
			err = advance_to(b, c, rs, f, u);
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
		case DW_CFA_MIPS_advance_loc8:
			NEED(f && read_le(&p, end,
					  op == DW_CFA_advance_loc1   ? 1
					  : op == DW_CFA_advance_loc2 ? 2
					  : op == DW_CFA_advance_loc4 ? 4
								      : 8,
					  &u));
			err = advance_by(b, c, rs, f, u);
			break;
		case DW_CFA_offset_extended:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u) &&
			     factor_u(u, c->daf, &off));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_OFFSET, .val = off});
			break;
		case DW_CFA_offset_extended_sf:
			NEED(read_uleb(&p, end, &reg) && read_sleb(&p, end, &off) &&
			     factor_s(off, c->daf, &off));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_OFFSET, .val = off});
			break;
		case DW_CFA_GNU_negative_offset_extended:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u) &&
			     factor_u(u, c->daf, &off) && off != INT64_MIN);
			set_rule(c, rs, reg, (struct rule){.kind = RULE_OFFSET, .val = -off});
			break;
		case DW_CFA_val_offset:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u) &&
			     factor_u(u, c->daf, &off));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_VAL_OFFSET, .val = off});
			break;
		case DW_CFA_val_offset_sf:
			NEED(read_uleb(&p, end, &reg) && read_sleb(&p, end, &off) &&
			     factor_s(off, c->daf, &off));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_VAL_OFFSET, .val = off});
			break;
		case DW_CFA_restore_extended:
			NEED(f && read_uleb(&p, end, &reg));
			restore_rule(c, rs, reg);
			break;
		case DW_CFA_undefined:
			NEED(read_uleb(&p, end, &reg));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_UNDEF});
			break;
		case DW_CFA_same_value:
			NEED(read_uleb(&p, end, &reg));
			set_rule(c, rs, reg, (struct rule){.kind = RULE_SAME});
			break;
		case DW_CFA_register:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u));
			set_rule(c, rs, reg,
				 (struct rule){.kind = RULE_REGISTER, .val = clamp_u(u)});
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u) &&
			     u <= (uint64_t)(end - p));
			set_rule(c, rs, reg,
				 (struct rule){.kind = op == DW_CFA_expression ? RULE_EXPR
									       : RULE_VAL_EXPR,
					       .expr = p,
					       .len = u});
			p += u;
			break;
		case DW_CFA_remember_state:
			NEED(depth < STATE_DEPTH);
			b->stack[depth++] = *rs;
			break;
		case DW_CFA_restore_state:
			NEED(depth > 0);
			*rs = b->stack[--depth];
			break;
		case DW_CFA_def_cfa:
			NEED(read_uleb(&p, end, &reg) && read_uleb(&p, end, &u));
			rs->cfa = (struct cfa){.kind = CFA_REG_OFF, .reg = reg, .off = clamp_u(u)};
			break;
		case DW_CFA_def_cfa_sf:
			NEED(read_uleb(&p, end, &reg) && read_sleb(&p, end, &off) &&
			     factor_s(off, c->daf, &off));
			rs->cfa = (struct cfa){.kind = CFA_REG_OFF, .reg = reg, .off = off};
			break;
		case DW_CFA_def_cfa_register:
			NEED(read_uleb(&p, end, &reg));
			if (rs->cfa.kind == CFA_REG_OFF)
				rs->cfa.reg = reg;
			else
				rs->cfa.kind = CFA_BROKEN;
			break;
		case DW_CFA_def_cfa_offset:
			NEED(read_uleb(&p, end, &u));
			if (rs->cfa.kind == CFA_REG_OFF)
				rs->cfa.off = clamp_u(u);
			else
				rs->cfa.kind = CFA_BROKEN;
			break;
		case DW_CFA_def_cfa_offset_sf:
			NEED(read_sleb(&p, end, &off) && factor_s(off, c->daf, &off));
			if (rs->cfa.kind == CFA_REG_OFF)
				rs->cfa.off = off;
			else
				rs->cfa.kind = CFA_BROKEN;
			break;
		case DW_CFA_def_cfa_expression:
			NEED(read_uleb(&p, end, &u) && u <= (uint64_t)(end - p));
			rs->cfa = (struct cfa){.kind = CFA_EXPR, .expr = p, .len = u};
			p += u;
			break;
		case DW_CFA_GNU_args_size:
			NEED(read_uleb(&p, end, &u));
			break;
		default: /* DW_CFA_GNU_window_save (SPARC, AArch64), vendor opcodes */
			return -EINVAL;
		}
	}
	return err;
}

/* --- CIEs and FDEs ------------------------------------------------------------------------- */

/* A CIE from libdw's reading of it: its augmentation, then its initial instructions. */
static void cie_parse(struct builder *b, const struct section *s, const Dwarf_CIE *e, struct cie *c)
{
	const uint8_t *p = e->augmentation_data, *end = p + e->augmentation_data_size;
	const char *a = e->augmentation;
	uint64_t skip;
	uint8_t enc;

	c->caf = e->code_alignment_factor;
	c->daf = e->data_alignment_factor;
	c->ra_col = e->return_address_register;
	c->fde_enc = DW_EH_PE_absptr;
	if (a[0] == 'z') {
		c->z = true;
		for (a++; *a && !c->bad; a++) {
			switch (*a) {
			case 'R':
				c->bad = p >= end;
				if (!c->bad)
					c->fde_enc = *p++;
				break;
			case 'L':
				c->bad = p >= end;
				p++;
				break;
			case 'P':
				c->bad = p >= end;
				if (c->bad)
					break;
				enc = *p++;
				c->bad = (enc & 0x70) == DW_EH_PE_aligned ||
					 !read_encoded(enc & 0x0f, &p, end, 0, &skip);
				break;
			case 'S':
				c->signal = true;
				break;
			default:
				/* an unknown letter: the data after it cannot be read, which only
				 * matters for an 'R' still to come ('z' sizes the whole) */
				c->bad = strchr(a, 'R') != NULL;
				goto done;
			}
		}
	} else if (a[0]) {
		c->bad = true; /* "eh" and other pre-'z' augmentations */
	}
done:
	/* the walker's registers cannot be the return address column (x86-64 uses 16) */
	if (c->ra_col == REG_RBP || c->ra_col == REG_RSP)
		c->bad = true;
	if (!c->bad)
		c->bad = run(b, s, c, &c->init, e->initial_instructions,
			     e->initial_instructions_end, NULL) != 0;
}

static struct cie *find_cie(const struct section *s, uint64_t off)
{
	size_t lo = 0, hi = s->ncies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->cies[mid].off == off)
			return &s->cies[mid];
		if (s->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool in_segments(const struct builder *b, uint64_t addr)
{
	size_t i;

	if (!b->nsegs)
		return true;
	for (i = 0; i < b->nsegs; i++)
		if (addr >= b->segs[i][0] && addr < b->segs[i][1])
			return true;
	return false;
}

static int read_fde(struct builder *b, const struct section *s, const Dwarf_FDE *e)
{
	const uint8_t *p = e->start, *end = e->end, *base = s->data->d_buf;
	const struct cie *c = find_cie(s, e->CIE_pointer);
	struct fde_run f = {.first = b->nraw};
	uint64_t start, range, alen;
	struct regs rs;
	int err;

	if (!c || c->bad ||
	    !read_encoded(c->fde_enc, &p, end, s->addr + (uint64_t)(p - base), &start) ||
	    !read_encoded(c->fde_enc & 0x0f, &p, end, 0, &range))
		goto malformed;
	if (c->z) {
		if (!read_uleb(&p, end, &alen) || alen > (uint64_t)(end - p))
			goto malformed;
		p += alen;
	}
	if (!range)
		return 0;
	/* rows keep 32-bit pcs, the end's NONE row included */
	if (start > UINT32_MAX || range > UINT32_MAX - start || !in_segments(b, start)) {
		b->st->fdes_outside++;
		return 0;
	}
	f.loc = start;
	f.end = start + range;
	rs = c->init;
	err = run(b, s, c, &rs, p, end, &f);
	if (!err)
		err = advance_to(b, c, &rs, &f, f.end > f.loc ? f.end : f.loc);
	if (err == -EINVAL) {
		b->nraw = f.first;
		goto malformed;
	}
	if (err)
		return err;
	if (array_grow((void **)&b->fdes, &b->cap_fdes, b->nfdes + 1, sizeof(*b->fdes), 256))
		return -ENOMEM;
	b->fdes[b->nfdes++] = (struct fde){.start = (uint32_t)start,
					   .end = (uint32_t)f.end,
					   .first = f.first,
					   .n = b->nraw - f.first};
	if (s->eh)
		b->st->fdes_eh_frame++;
	else
		b->st->fdes_debug_frame++;
	return 0;

malformed:
	b->st->fdes_malformed++;
	return 0;
}

/* Reads one .eh_frame or .debug_frame: its CIEs, then its FDEs. */
static int read_section(struct builder *b, Elf *elf, Elf_Scn *scn, bool eh)
{
	struct section s = {.eh = eh, .ident = (const unsigned char *)elf_getident(elf, NULL)};
	Dwarf_Off off, next;
	Dwarf_CFI_Entry e;
	GElf_Shdr sh;
	int r, err = 0;

	if (!s.ident || !gelf_getshdr(scn, &sh))
		return 0;
	/* sized by the file (a 2 MB file may inflate to 2 GB): refused before it is read */
	if (b->max_section_bytes && elf_section_bytes(scn) > b->max_section_bytes)
		return -E2BIG;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return 0;
	s.data = elf_getdata(scn, NULL);
	if (!s.data && sh.sh_type != SHT_NOBITS && sh.sh_size)
		return -EIO; /* a short read: the file shrank under us */
	if (!s.data || !s.data->d_buf || !s.data->d_size)
		return 0;
	s.addr = sh.sh_addr;
	/* gcc's CFI takes 5-6 bytes a row and ~40 an FDE: room for all of them at once, rather
	 * than copies as the arrays double (untouched pages of an overestimate cost nothing) */
	if (reserve((void **)&b->raw, &b->cap_raw, b->nraw + s.data->d_size / 4, sizeof(*b->raw)) ||
	    reserve((void **)&b->fdes, &b->cap_fdes, b->nfdes + s.data->d_size / 32,
		    sizeof(*b->fdes)))
		return -ENOMEM;
	for (off = 0;; off = next) {
		r = dwarf_next_cfi(s.ident, s.data, eh, off, &next, &e);
		if (r) {
			/* libdw could not read the entry: the rest of the section is lost */
			if (r < 0)
				b->st->fdes_malformed++;
			break;
		}
		if (!dwarf_cfi_cie_p(&e))
			continue;
		if (array_grow((void **)&s.cies, &s.cap_cies, s.ncies + 1, sizeof(*s.cies), 16)) {
			err = -ENOMEM;
			goto out;
		}
		s.cies[s.ncies] = (struct cie){.off = off};
		cie_parse(b, &s, &e.cie, &s.cies[s.ncies]);
		if (s.cies[s.ncies].bad)
			b->st->cies_malformed++;
		else
			b->st->cies++;
		s.ncies++;
	}
	for (off = 0; !err; off = next) {
		if (dwarf_next_cfi(s.ident, s.data, eh, off, &next, &e))
			break;
		if (!dwarf_cfi_cie_p(&e))
			err = read_fde(b, &s, &e.fde);
	}
out:
	free(s.cies);
	return err;
}

/* --- placing the FDEs ---------------------------------------------------------------------- */

/*
 * FDEs [@from, @to) by start, then in section order: keys start << 32 | index, sorted. Linkers
 * write .eh_frame mostly in address order (not python3.11's, laid out by PGO): then the sort is
 * a check.
 */
static void sort_group(struct builder *b, size_t from, size_t to)
{
	bool sorted = true;
	size_t i;

	for (i = from; i < to; i++) {
		b->order[i] = (uint64_t)b->fdes[i].start << 32 | i;
		if (i > from && b->order[i] < b->order[i - 1])
			sorted = false;
	}
	if (!sorted)
		keysort(b->order + from, to - from, sizeof(*b->order), 0, NULL, NULL);
}

static int add_piece(struct builder *b, uint64_t lo, uint64_t hi, size_t fde)
{
	if (array_grow((void **)&b->pieces, &b->cap_pieces, b->npieces + 1, sizeof(*b->pieces),
		       256))
		return -ENOMEM;
	b->pieces[b->npieces++] = (struct piece){.lo = lo, .hi = hi, .fde = fde};
	return 0;
}

/* FDEs [@from, @to), sorted: each keeps what no FDE starting lower covered. */
static int sweep(struct builder *b, size_t from, size_t to)
{
	uint64_t covered = 0;
	size_t i;
	int err;

	for (i = from; i < to; i++) {
		size_t k = (uint32_t)b->order[i];
		const struct fde *f = &b->fdes[k];
		uint64_t lo = f->start > covered ? f->start : covered;

		if (lo > f->start)
			b->st->fdes_overlap++;
		if (lo >= f->end)
			continue;
		err = add_piece(b, lo, f->end, k);
		if (err)
			return err;
		covered = f->end;
	}
	return 0;
}

/* .debug_frame's pieces [@from, npieces) minus .eh_frame's [0, @neh), written after them. */
static int subtract(struct builder *b, size_t neh, size_t from)
{
	size_t i, n = b->npieces, j;
	int err;

	for (i = from; i < n; i++) {
		struct piece d = b->pieces[i];
		uint64_t cur = d.lo;
		size_t lo = 0, hi = neh;

		while (lo < hi) { /* the first .eh_frame piece ending above d.lo */
			size_t mid = lo + (hi - lo) / 2;

			if (b->pieces[mid].hi <= d.lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (j = lo; cur < d.hi; j++) {
			uint64_t until = j < neh && b->pieces[j].lo < d.hi ? b->pieces[j].lo : d.hi;

			if (until > cur) {
				err = add_piece(b, cur, until, d.fde);
				if (err)
					return err;
			}
			if (j >= neh)
				break;
			if (b->pieces[j].hi > cur)
				cur = b->pieces[j].hi;
		}
	}
	/* drop the uncut pieces [from, n) */
	memmove(b->pieces + from, b->pieces + n, (b->npieces - n) * sizeof(*b->pieces));
	b->npieces -= n - from;
	return 0;
}

/* Appends @row to the table: it replaces a row at the same pc (a gap's NONE row where the next
 * FDE begins), and a row with the rules of the previous one is not written. */
static int out_put(struct builder *b, struct ember_unwind_row row)
{
	if (b->nout && b->out[b->nout - 1].pc == row.pc)
		b->nout--;
	if (b->nout && same_rules(&b->out[b->nout - 1], &row))
		return 0;
	if (b->max_rows && b->nout >= b->max_rows)
		return -E2BIG;
	if (array_grow((void **)&b->out, &b->cap_out, b->nout + 1, sizeof(*b->out), 1024))
		return -ENOMEM;
	b->out[b->nout++] = row;
	return 0;
}

static int place(struct builder *b)
{
	size_t i, k, neh;
	int err;

	if (b->nfdes >= UINT32_MAX)
		return -E2BIG;
	b->order = malloc((b->nfdes + 1) * sizeof(*b->order));
	if (!b->order)
		return -ENOMEM;
	sort_group(b, 0, b->n_eh);
	sort_group(b, b->n_eh, b->nfdes);
	err = reserve((void **)&b->pieces, &b->cap_pieces, b->nfdes + 1, sizeof(*b->pieces));
	if (!err)
		err = sweep(b, 0, b->n_eh);
	neh = b->npieces;
	if (!err)
		err = sweep(b, b->n_eh, b->nfdes);
	if (!err && neh && b->npieces > neh)
		err = subtract(b, neh, neh);
	if (err)
		return err;
	if (b->npieces > neh) /* .eh_frame's pieces come sorted, .debug_frame's after them */
		keysort(b->pieces, b->npieces, sizeof(*b->pieces), offsetof(struct piece, lo), NULL,
			NULL);
	/* at most every row, and a gap row per piece */
	if (reserve((void **)&b->out, &b->cap_out, b->nraw + b->npieces + 1, sizeof(*b->out)))
		return -ENOMEM;
	for (i = 0; i < b->npieces && !err; i++) {
		const struct piece *pc = &b->pieces[i];
		struct fde *f = &b->fdes[pc->fde];
		const struct ember_unwind_row *rows = b->raw + f->first;
		struct ember_unwind_row r;

		f->used = true;
		for (k = 0; k + 1 < f->n && rows[k + 1].pc <= pc->lo; k++)
			;
		r = rows[k];
		r.pc = (uint32_t)pc->lo;
		err = out_put(b, r);
		for (k++; k < f->n && rows[k].pc < pc->hi && !err; k++)
			err = out_put(b, rows[k]);
		if (!err)
			err = out_put(b, none_row(pc->hi, CFI_NONE_GAP));
	}
	for (i = 0; i < b->nfdes; i++)
		b->st->fdes += b->fdes[i].used;
	b->st->build_bytes = sizeof(*b) + b->cap_raw * sizeof(*b->raw) +
			     b->cap_fdes * sizeof(*b->fdes) + b->nfdes * sizeof(*b->order) +
			     b->cap_pieces * sizeof(*b->pieces) + b->cap_out * sizeof(*b->out);
	return err;
}

/* --- the table ----------------------------------------------------------------------------- */

static bool is_x86_64(Elf *elf)
{
	GElf_Ehdr eh;

	return elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB &&
	       eh.e_machine == EM_X86_64;
}

/* The section @name with contents, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static void read_segments(struct builder *b, Elf *elf)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (b->nsegs == MAX_SEGS) {
			b->nsegs = 0; /* odd file: no filter */
			return;
		}
		b->segs[b->nsegs][0] = ph.p_vaddr;
		b->segs[b->nsegs][1] = ph.p_vaddr + ph.p_memsz;
		b->nsegs++;
	}
}

struct cfi_table *cfi_table__new(Elf *elf, Elf *debug_elf, const struct cfi_opts *o)
{
	uint64_t t0 = mono_ns();
	struct cfi_table *t = NULL;
	struct builder *b = NULL;
	Elf *dfelf = elf;
	Elf_Scn *eh, *df;
	size_t i;
	int err;

	if (!is_x86_64(elf) || (debug_elf && !is_x86_64(debug_elf))) {
		err = -ENOEXEC;
		goto out;
	}
	t = calloc(1, sizeof(*t));
	b = calloc(1, sizeof(*b)); /* its state stack is 10 KiB */
	if (!t || !b) {
		err = -ENOMEM;
		goto out;
	}
	b->st = &t->st;
	b->max_rows = o ? o->max_rows : 0;
	b->max_section_bytes = o ? o->max_section_bytes : 0;
	read_segments(b, elf);
	eh = find_section(elf, ".eh_frame");
	df = find_section(elf, ".debug_frame");
	if (!df && debug_elf) {
		df = find_section(debug_elf, ".debug_frame");
		dfelf = debug_elf;
	}
	if (!eh && !df) {
		err = -ENOENT;
		goto out;
	}
	err = eh ? read_section(b, elf, eh, true) : 0;
	b->n_eh = b->nfdes;
	if (!err && df)
		err = read_section(b, dfelf, df, false);
	if (!err)
		err = place(b);
	if (err)
		goto out;
	t->rows = b->out;
	t->n = b->nout;
	b->out = NULL;
	if (!t->n) {
		free(t->rows);
		t->rows = NULL;
	} else { /* a failed shrink keeps the larger block */
		struct ember_unwind_row *shrunk = realloc(t->rows, t->n * sizeof(*t->rows));

		if (shrunk)
			t->rows = shrunk;
	}
	t->st.rows = t->n;
	t->st.bytes = t->n * sizeof(*t->rows);
	for (i = 0; i < t->n; i++)
		if (t->rows[i].cfa_type == EMBER_CFA_NONE &&
		    (size_t)t->rows[i].cfa_off < CFI_NONE__COUNT)
			t->st.none_rows[t->rows[i].cfa_off]++;
	t->st.build_ns = mono_ns() - t0;

out:
	if (b) {
		free(b->raw);
		free(b->fdes);
		free(b->order);
		free(b->pieces);
		free(b->out);
		free(b);
	}
	if (err) {
		cfi_table__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

struct cfi_table *cfi_table__open(int fd, int debug_fd, const struct cfi_opts *o)
{
	Elf *elf, *dbg = NULL;
	struct cfi_table *t = NULL;
	int err = EIO;

	elf_version(EV_CURRENT);
	/* read with pread into our memory, never mapped: a file that shrinks is an error, not a
	 * SIGBUS (elfsym.h) */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (debug_fd >= 0)
		dbg = elf_begin(debug_fd, ELF_C_READ, NULL);
	if (elf && (debug_fd < 0 || dbg)) {
		t = cfi_table__new(elf, dbg, o);
		err = errno;
	}
	elf_end(dbg);
	elf_end(elf);
	if (!t)
		errno = err;
	return t;
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct ember_unwind_row *cfi_table__rows(const struct cfi_table *t, size_t *ret_n)
{
	*ret_n = t->n;
	return t->rows;
}

const struct ember_unwind_row *cfi_table__lookup(const struct cfi_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->n;

	if (vaddr > UINT32_MAX)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

const struct cfi_stats *cfi_table__stats(const struct cfi_table *t)
{
	return &t->st;
}

size_t cfi_table__mem_bytes(const struct cfi_table *t)
{
	return sizeof(*t) + t->n * sizeof(*t->rows);
}

const char *cfi_none_reason_str(int reason)
{
	static const char *const names[CFI_NONE__COUNT] = {
	    [CFI_NONE_GAP] = "gap",
	    [CFI_NONE_CFA_REG] = "cfa_reg",
	    [CFI_NONE_CFA_EXPR] = "cfa_expr",
	    [CFI_NONE_RA] = "ra",
	    [CFI_NONE_BP] = "bp",
	    [CFI_NONE_SP] = "sp",
	    [CFI_NONE_RANGE] = "range",
	};

	return reason >= 0 && reason < CFI_NONE__COUNT ? names[reason] : "?";
}
