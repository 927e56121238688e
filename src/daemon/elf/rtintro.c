// SPDX-License-Identifier: MIT
#include "ember/daemon/elf/rtintro.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/elfsym.h"


struct rti_sym {
	const char *name; /* the image's (elfsym.h) */
	uint64_t value, size;
	bool dyn;	  /* exported */
};

struct rti_reloc {
	uint64_t off, addend;
};

/* One file being read: its segments, the symbols of interest, its RELATIVE relocations. */
struct rti_file {
	int fd;
	Elf *elf;
	struct rti_seg {
		uint64_t off, vaddr, filesz, memsz;
	} segs[ELFLOAD_MAX_SEGS];
	unsigned int n_segs;
	struct rti_sym *syms;
	size_t n_syms;
	struct rti_reloc *rel;
	size_t n_rel;
};

static const char *const reason_names[RTI__REASONS] = {
	[RTI_OK] = "ok",
	[RTI_NOT_ELF] = "not_elf",
	[RTI_NO_TABLES] = "no_tables",
	[RTI_BAD_LAYOUT] = "bad_layout",
	[RTI_BAD_POINTER] = "bad_pointer",
	[RTI_BAD_STRING] = "bad_string",
	[RTI_TOO_MANY] = "too_many",
	[RTI_BAD_VALUE] = "bad_value",
	[RTI_MISSING] = "missing",
};

const char *rtintro_reason_name(enum rtintro_reason r)
{
	return (unsigned int)r < RTI__REASONS ? reason_names[r] : "?";
}

static int refuse(struct rtintro_stats *st, enum rtintro_reason r)
{
	if (st)
		st->reason[r]++;
	return -(int)r;
}

/*
 * Reads @len bytes at file virtual address @va as the loader lays the file out: the segment's
 * file bytes, zeros past them up to its memory size (.bss). False when no PT_LOAD holds it all.
 */
static bool rd(const struct rti_file *f, uint64_t va, void *buf, size_t len)
{
	for (unsigned int i = 0; i < f->n_segs; i++) {
		const struct rti_seg *s = &f->segs[i];
		uint64_t at = va - s->vaddr, infile;

		if (va < s->vaddr || at > s->memsz || len > s->memsz - at)
			continue;
		infile = at < s->filesz ? s->filesz - at : 0;
		if (infile > len)
			infile = len;
		if (infile && pread(f->fd, buf, infile, (off_t)(s->off + at)) != (ssize_t)infile)
			return false;
		memset((char *)buf + infile, 0, len - infile);
		return true;
	}
	return false;
}

static int reloc_cmp(const void *a, const void *b)
{
	const struct rti_reloc *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * A pointer stored at @va as the loaded image would hold it, in file virtual addresses: the
 * RELATIVE relocation's addend when one targets @va (what ld.so adds the load base to), else the
 * file's own bytes (an executable, or a pointer the static linker resolved).
 */
static bool rd_ptr(const struct rti_file *f, uint64_t va, uint64_t *ret)
{
	size_t lo = 0, hi = f->n_rel;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->rel[mid].off == va) {
			*ret = f->rel[mid].addend;
			return true;
		}
		if (f->rel[mid].off < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return rd(f, va, ret, sizeof(*ret));
}

/* A NUL-terminated name at @va, at most RTI_MAX_NAME bytes with the NUL. */
static enum rtintro_reason rd_str(const struct rti_file *f, uint64_t va, char *buf)
{
	size_t got = 0;

	/* Read in small steps: a name near a segment's end must not need bytes past it. */
	while (got < RTI_MAX_NAME) {
		size_t step = RTI_MAX_NAME - got < 16 ? RTI_MAX_NAME - got : 16;

		if (!rd(f, va + got, buf + got, step)) {
			/* byte by byte for the last few bytes of a segment */
			if (!rd(f, va + got, buf + got, 1))
				return RTI_BAD_POINTER;
			step = 1;
		}
		if (memchr(buf + got, 0, step))
			return RTI_OK;
		got += step;
	}
	return RTI_BAD_STRING;
}

static void file_close(struct rti_file *f)
{
	free(f->syms);
	free(f->rel);
	if (f->elf)
		elf_end(f->elf);
	memset(f, 0, sizeof(*f));
}

static bool wanted(const char *name, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/* @name is one of @funcs (exact names; NULL: none) */
static bool listed(const char *name, const char *const *funcs)
{
	for (; funcs && *funcs; funcs++)
		if (!strcmp(name, *funcs))
			return true;
	return false;
}

static enum rtintro_reason add_relocs(struct rti_file *f, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || !sh->sh_entsize)
		return RTI_OK;
	n = sh->sh_size / sh->sh_entsize;
	if (n > RTI_MAX_RELOCS - f->n_rel)
		return RTI_TOO_MANY;
	struct rti_reloc *grown = realloc(f->rel, (f->n_rel + n) * sizeof(*grown));
	if (!grown && n)
		return RTI_TOO_MANY;
	f->rel = grown;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;

		if (!gelf_getrela(d, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE)
			continue;
		f->rel[f->n_rel++] = (struct rti_reloc){ r.r_offset, (uint64_t)r.r_addend };
	}
	return RTI_OK;
}

/*
 * Sets @f up for the file open at @fd whose image (elfsym.h) is @es: its load segments, the
 * runtime symbols @es kept that are data objects named by @prefixes or functions named in
 * @funcs (NULL: none), and (@relocs) the file's RELATIVE relocations, read here: no other reader
 * of the file needs them.
 */
static enum rtintro_reason file_open(struct rti_file *f, int fd, const struct elfsym *es,
				     const char *const *prefixes, const char *const *funcs,
				     bool relocs)
{
	const struct elfload *l;
	struct elfsym_rtsym rs;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	if (!es || !elfsym__native(es))
		return RTI_NOT_ELF;
	l = elfsym__load(es);
	for (unsigned int i = 0; i < l->n && f->n_segs < ELFLOAD_MAX_SEGS; i++) {
		if (l->segs[i].filesz > l->segs[i].memsz)
			continue;
		f->segs[f->n_segs++] = (struct rti_seg){ l->segs[i].off, l->segs[i].vaddr,
							 l->segs[i].filesz, l->segs[i].memsz };
	}
	if (!f->n_segs)
		return RTI_NOT_ELF;
	if (elfsym__rt_too_many(es))
		return RTI_TOO_MANY;
	f->syms = calloc(elfsym__rt_count(es) + 1, sizeof(*f->syms));
	if (!f->syms)
		return RTI_TOO_MANY;
	for (size_t i = 0; elfsym__rt_sym(es, i, &rs); i++)
		if (rs.object ? wanted(rs.name, prefixes) : listed(rs.name, funcs))
			f->syms[f->n_syms++] = (struct rti_sym){ rs.name, rs.value, rs.size,
								 rs.exported };
	if (relocs) {
		Elf_Scn *scn = NULL;
		enum rtintro_reason r = RTI_OK;

		elf_version(EV_CURRENT);
		f->elf = elf_begin(fd, ELF_C_READ, NULL); /* pread, never mapped (elfsym.h) */
		if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
			return RTI_NOT_ELF;
		while ((scn = elf_nextscn(f->elf, scn)) && r == RTI_OK) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
				r = add_relocs(f, scn, &sh);
		}
		if (r != RTI_OK)
			return r;
		if (f->n_rel)
			qsort(f->rel, f->n_rel, sizeof(*f->rel), reloc_cmp);
	}
	if (!f->n_syms)
		return RTI_NO_TABLES;
	return RTI_OK;
}

/* The image of the file open at @fd, read here (the fd-only calls): NULL when it is no ELF. */
static struct elfsym *own_image(int fd)
{
	return elfsym__open(fd, NULL);
}

static const struct rti_sym *sym(const struct rti_file *f, const char *name)
{
	for (size_t i = 0; i < f->n_syms; i++)
		if (!strcmp(f->syms[i].name, name))
			return &f->syms[i];
	return NULL;
}

/* The 8-byte content of symbol @name (a stride, an offset) into *@ret. */
static bool sym_u64(const struct rti_file *f, const char *name, uint64_t *ret)
{
	const struct rti_sym *s = sym(f, name);

	return s && rd(f, s->value, ret, sizeof(*ret));
}

/* ---------------------------------------------------------------- HotSpot */

struct hs_item_desc {
	const char *type, *field, *name;
	char kind;
	bool required;
};

static const struct hs_item_desc hs_items[RTI_HS__COUNT] = {
#define RTI_X(id, t, f, k, r) [RTI_HS_##id] = { t, f, t "::" f, k, r },
	RTI_HOTSPOT_ITEMS(RTI_X)
#undef RTI_X
};

const char *rtintro_hs_item_name(enum rtintro_hs_item id)
{
	return (unsigned int)id < RTI_HS__COUNT ? hs_items[id].name : "?";
}

bool rtintro_hs_item_required(enum rtintro_hs_item id)
{
	return (unsigned int)id < RTI_HS__COUNT && hs_items[id].required;
}

/* Which of the '|'-separated @alts @name is: 1 for the first, 0 for none. */
static unsigned int alt_match(const char *alts, const char *name)
{
	size_t n = strlen(name);
	unsigned int k = 1;

	for (const char *p = alts;; k++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && !memcmp(p, name, n))
			return k;
		if (!bar)
			return 0;
		p = bar + 1;
	}
}

enum hs_table { HS_STRUCTS, HS_TYPES, HS_INTS, HS_LONGS };

/* A table's symbols: its pointer, its stride, and the members' offset symbols (NULL: none). */
struct hs_table_desc {
	const char *base, *stride;
	const char *member[4];	/* structs: type, field, static flag, offset, (address below) */
	const char *address;
};

static const struct hs_table_desc hs_tables[] = {
	[HS_STRUCTS] = { "gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride",
			 { "gHotSpotVMStructEntryTypeNameOffset",
			   "gHotSpotVMStructEntryFieldNameOffset",
			   "gHotSpotVMStructEntryIsStaticOffset",
			   "gHotSpotVMStructEntryOffsetOffset" },
			 "gHotSpotVMStructEntryAddressOffset" },
	[HS_TYPES] = { "gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride",
		       { "gHotSpotVMTypeEntryTypeNameOffset", NULL, NULL,
			 "gHotSpotVMTypeEntrySizeOffset" }, NULL },
	[HS_INTS] = { "gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride",
		      { "gHotSpotVMIntConstantEntryNameOffset", NULL, NULL,
			"gHotSpotVMIntConstantEntryValueOffset" }, NULL },
	[HS_LONGS] = { "gHotSpotVMLongConstants", "gHotSpotVMLongConstantEntryArrayStride",
		       { "gHotSpotVMLongConstantEntryNameOffset", NULL, NULL,
			 "gHotSpotVMLongConstantEntryValueOffset" }, NULL },
};

/*
 * Records one entry into the items it names. Where a JDK has both an old and a new name (JDK 17
 * has CodeBlob::_code_end and _data_offset), the earlier alternative of the list wins whatever
 * the table order: @rank keeps the rank of what each item holds.
 */
static void hs_record(struct rtintro_hotspot *h, uint8_t *rank, enum hs_table t,
		      const char *type, const char *field, bool is_static, uint64_t value,
		      uint64_t where)
{
	for (unsigned int i = 0; i < RTI_HS__COUNT; i++) {
		const struct hs_item_desc *d = &hs_items[i];
		unsigned int k = 1;

		switch (t) {
		case HS_STRUCTS:
			if ((d->kind != 'o' && d->kind != 'a') || (d->kind == 'a') != is_static ||
			    !alt_match(d->type, type) || !(k = alt_match(d->field, field)))
				continue;
			if (h->have[i] && rank[i] <= k)
				continue;
			rank[i] = (uint8_t)k;
			h->where[i] = where;
			break;
		case HS_TYPES:
			if (h->have[i] || d->kind != 's' || !alt_match(d->type, type))
				continue;
			break;
		case HS_INTS:
		case HS_LONGS:
			if (h->have[i] || d->kind != (t == HS_INTS ? 'i' : 'l') ||
			    !alt_match(d->field, type))
				continue;
			break;
		}
		h->val[i] = value;
		h->have[i] = true;
	}
}

/*
 * The entry layouts of vmStructs.hpp (VMStructEntry, VMTypeEntry, VMIntConstantEntry,
 * VMLongConstantEntry), unchanged from JDK 6 to 25. Used only when the file holds the layout
 * symbols as zero: libjvm computes them in a static constructor (they live in .bss), so only a
 * running JVM has them. The layout is then checked against the file's relocations (every entry's
 * name pointers must be relocated pointers to names), and the result says which layout was used.
 */
static const uint64_t hs_known[4][6] = {
	/* stride, name, field name, is_static, offset/size/value, address */
	[HS_STRUCTS] = { 48, 0, 8, 24, 32, 40 },
	[HS_TYPES] = { 40, 0, 0, 0, 32, 0 },
	[HS_INTS] = { 16, 0, 0, 0, 8, 0 },
	[HS_LONGS] = { 16, 0, 0, 0, 8, 0 },
};

static bool has_reloc(const struct rti_file *f, uint64_t va)
{
	size_t lo = 0, hi = f->n_rel;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->rel[mid].off == va)
			return true;
		if (f->rel[mid].off < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static enum rtintro_reason hs_table(const struct rti_file *f, struct rtintro_hotspot *h,
				    uint8_t *rank, enum hs_table t, struct rtintro_stats *st,
				    unsigned int *count)
{
	const struct hs_table_desc *td = &hs_tables[t];
	const struct rti_sym *bs = sym(f, td->base);
	uint64_t base, stride = 0, moff[4] = { 0 }, aoff = 0;
	uint8_t e[RTI_MAX_STRIDE];
	char type[RTI_MAX_NAME], field[RTI_MAX_NAME];
	bool known;

	if (!bs || !sym(f, td->stride))
		return RTI_NO_TABLES;
	for (unsigned int m = 0; m < 4; m++)
		if (td->member[m] && !sym(f, td->member[m]))
			return RTI_NO_TABLES;
	/* the table symbol is a pointer to the array: resolved like any other pointer */
	if (!rd_ptr(f, bs->value, &base) || !base)
		return RTI_BAD_POINTER;
	/* zero (or unreadable: .bss) in the file: the layout is set at load time */
	known = !sym_u64(f, td->stride, &stride) || !stride;
	if (t == HS_STRUCTS) {
		h->stride_va = sym(f, td->stride)->value;
		h->offset_member_va = sym(f, td->member[3])->value;
	}
	if (known) {
		stride = hs_known[t][0];
		for (unsigned int m = 0; m < 4; m++)
			moff[m] = hs_known[t][m + 1];
		aoff = hs_known[t][5];
		h->layout_known = true;
	} else {
		for (unsigned int m = 0; m < 4; m++)
			if (td->member[m] && !sym_u64(f, td->member[m], &moff[m]))
				return RTI_BAD_LAYOUT;
		if (td->address && !sym_u64(f, td->address, &aoff))
			return RTI_BAD_LAYOUT;
	}
	if (stride < 8 || stride > RTI_MAX_STRIDE)
		return RTI_BAD_LAYOUT;
	for (unsigned int m = 0; m < 4; m++)
		if (td->member[m] && moff[m] > stride - (m == 2 ? 4 : 8))
			return RTI_BAD_LAYOUT;
	if (td->address && aoff > stride - 8)
		return RTI_BAD_LAYOUT;
	if (t == HS_STRUCTS) {
		h->stride = stride;
		h->offset_member = moff[3];
	}

	for (unsigned int i = 0;; i++) {
		uint64_t va = base + (uint64_t)i * stride, tp, fp = 0, value = 0, addr = 0;
		int32_t is_static = 0;
		enum rtintro_reason r;

		if (i == RTI_MAX_ENTRIES)
			return RTI_TOO_MANY;
		if (va < base || !rd(f, va, e, stride))
			return RTI_BAD_POINTER;
		if (!rd_ptr(f, va + moff[0], &tp))
			return RTI_BAD_POINTER;
		if (!tp)
			break;		/* the terminating entry */
		/* an assumed layout must agree with the relocations: names are relocated pointers */
		if (known && f->n_rel && (!has_reloc(f, va + moff[0]) ||
					  (t == HS_STRUCTS && !has_reloc(f, va + moff[1]))))
			return RTI_BAD_LAYOUT;
		if ((r = rd_str(f, tp, type)) != RTI_OK)
			return r;
		if (t == HS_STRUCTS) {
			if (!rd_ptr(f, va + moff[1], &fp) || !fp)
				return RTI_BAD_POINTER;
			if ((r = rd_str(f, fp, field)) != RTI_OK)
				return r;
			memcpy(&is_static, e + moff[2], sizeof(is_static));
			if (is_static) {
				if (!rd_ptr(f, va + aoff, &addr))
					return RTI_BAD_POINTER;
				value = addr;
			} else {
				memcpy(&value, e + moff[3], sizeof(value));
			}
		} else if (t == HS_INTS) {
			int32_t v;

			memcpy(&v, e + moff[3], sizeof(v));
			value = (uint64_t)(int64_t)v;
		} else {
			memcpy(&value, e + moff[3], sizeof(value));
		}
		hs_record(h, rank, t, type, t == HS_STRUCTS ? field : "", is_static != 0, value,
			  va + moff[3]);
		(*count)++;
		if (st)
			st->entries++;
	}
	return RTI_OK;
}

int rtintro_hotspot_read(int fd, struct rtintro_hotspot *ret, struct rtintro_stats *st)
{
	struct elfsym *es = own_image(fd);
	int r = rtintro_hotspot_read_image(fd, es, ret, st);

	elfsym__free(es);
	return r;
}

int rtintro_hotspot_read_image(int fd, const struct elfsym *es, struct rtintro_hotspot *ret,
			       struct rtintro_stats *st)
{
	static const char *const prefixes[] = { "gHotSpotVM", NULL };
	unsigned int *counts[] = { &ret->n_structs, &ret->n_types, &ret->n_ints, &ret->n_longs };
	uint8_t rank[RTI_HS__COUNT] = { 0 };
	struct rti_file f;
	enum rtintro_reason r;

	memset(ret, 0, sizeof(*ret));
	r = file_open(&f, fd, es, prefixes, NULL, true);
	if (st)
		st->relocs += f.n_rel;
	for (unsigned int t = HS_STRUCTS; r == RTI_OK && t <= HS_LONGS; t++) {
		r = hs_table(&f, ret, rank, t, st, counts[t]);
		/* the constant tables are optional; the struct and type tables are not */
		if (r == RTI_NO_TABLES && t >= HS_INTS)
			r = RTI_OK;
	}
	if (r != RTI_OK)
		goto out;

	/* Sizes and field offsets beyond any real class are a forged table, not a new JDK. */
	for (unsigned int i = 0; i < RTI_HS__COUNT; i++) {
		if (ret->have[i] && hs_items[i].kind == 's' && ret->val[i] > RTI_MAX_CLASS_SIZE) {
			r = RTI_BAD_VALUE;
			goto out;
		}
		if (!ret->have[i] && hs_items[i].required)
			ret->missing_required++;
	}
	if (ret->have[RTI_HS_VM_MAJOR]) {
		int32_t major = 0;

		if (rd(&f, ret->val[RTI_HS_VM_MAJOR], &major, sizeof(major)) && major > 0 &&
		    major < 1000)
			ret->major = major;
	}
	if (ret->have[RTI_HS_VM_RELEASE]) {
		uint64_t p;
		char s[RTI_MAX_NAME];

		/* a static const char *: the pointer, then the string it points to */
		if (rd_ptr(&f, ret->val[RTI_HS_VM_RELEASE], &p) && p && rd_str(&f, p, s) == RTI_OK)
			snprintf(ret->release, sizeof(ret->release), "%.63s", s);
	}
	if (ret->missing_required && st)
		st->reason[RTI_MISSING]++;
out:
	file_close(&f);
	return r == RTI_OK ? 0 : refuse(st, r);
}

int rtintro_hotspot_resolve(struct rtintro_hotspot *h, uint64_t bias, rtintro_read_fn read,
			    void *ctx, struct rtintro_stats *st)
{
	uint64_t stride = 0, offset_member = 0;

	h->offsets_resolved = false;
	if (!h->stride_va || !read(ctx, bias + h->stride_va, &stride, sizeof(stride)) ||
	    !read(ctx, bias + h->offset_member_va, &offset_member, sizeof(offset_member)))
		return refuse(st, RTI_BAD_POINTER);
	/* the layout the file was read with must be the one the running VM reports */
	if (stride != h->stride || offset_member != h->offset_member)
		return refuse(st, RTI_BAD_LAYOUT);
	for (unsigned int i = 0; i < RTI_HS__COUNT; i++) {
		uint64_t v;

		if (!h->have[i] || hs_items[i].kind != 'o')
			continue;
		if (!read(ctx, bias + h->where[i], &v, sizeof(v)))
			return refuse(st, RTI_BAD_POINTER);
		if (v > RTI_MAX_CLASS_SIZE)
			return refuse(st, RTI_BAD_VALUE);
		h->val[i] = v;
	}
	if (h->have[RTI_HS_VM_MAJOR]) {
		int32_t major = 0;

		if (read(ctx, bias + h->val[RTI_HS_VM_MAJOR], &major, sizeof(major)) && major > 0 &&
		    major < 1000)
			h->major = major;
	}
	if (h->have[RTI_HS_VM_RELEASE]) {
		uint64_t p = 0;
		size_t n = 0;

		/* byte by byte: the string may end just before an unmapped page */
		if (read(ctx, bias + h->val[RTI_HS_VM_RELEASE], &p, sizeof(p)) && p)
			while (n < sizeof(h->release) - 1 && read(ctx, p + n, &h->release[n], 1) &&
			       h->release[n])
				n++;
		h->release[n] = 0;
		if (n == sizeof(h->release) - 1)
			h->release[0] = 0;	/* not a NUL-terminated name: none */
	}
	h->offsets_resolved = true;
	return 0;
}

/* ---------------------------------------------------------------- V8 */

struct v8_item_desc {
	const char *names;
	bool required;
};

static const struct v8_item_desc v8_items[RTI_V8__COUNT] = {
#define RTI_X(id, n, r) [RTI_V8_##id] = { n, r },
	RTI_V8_ITEMS(RTI_X)
#undef RTI_X
};

const char *rtintro_v8_item_name(enum rtintro_v8_item id)
{
	return (unsigned int)id < RTI_V8__COUNT ? v8_items[id].names : "?";
}

bool rtintro_v8_item_required(enum rtintro_v8_item id)
{
	return (unsigned int)id < RTI_V8__COUNT && v8_items[id].required;
}

static int v8_version_part(const struct rti_file *f, const char *name)
{
	const struct rti_sym *s = sym(f, name);
	int32_t v;

	if (!s || s->size != sizeof(v) || !rd(f, s->value, &v, sizeof(v)) || v < 0 || v > 100000)
		return -1;
	return v;
}

/* V8's facts from the runtime symbols of image @es of the file open at @fd: RTI_OK or why not. */
static enum rtintro_reason v8_read(int fd, const struct elfsym *es, struct rtintro_v8 *ret,
				   struct rtintro_stats *st)
{
	static const char *const prefixes[] = { "v8dbg_", "_ZN2v88internal7Version", NULL };
	/* what every Node exports for its addons, whatever V8's symbols' visibility */
	static const char *const funcs[] = { "napi_module_register", NULL };
	struct rti_file f;
	enum rtintro_reason r;
	char name[RTI_MAX_NAME + 8];

	memset(ret, 0, sizeof(*ret));
	ret->major = ret->minor = ret->build = ret->patch = -1;
	r = file_open(&f, fd, es, prefixes, funcs, false);
	if (r != RTI_OK)
		goto out;
	for (size_t i = 0; i < f.n_syms; i++) {
		if (strncmp(f.syms[i].name, "v8dbg_", 6))
			continue;
		ret->n_symbols++;
		ret->from_symtab_only |= !f.syms[i].dyn;
	}
	if (!ret->n_symbols) {
		/* no postmortem data. A Node built without it (V8's symbols hidden, .symtab
		 * stripped) still exports N-API, often V8's version: a V8 whose data is missing,
		 * counted so; anything else is no V8 */
		r = sym(&f, "napi_module_register") || sym(&f, "_ZN2v88internal7Version6major_E")
			    ? RTI_MISSING
			    : RTI_NO_TABLES;
		goto out;
	}
	for (unsigned int i = 0; i < RTI_V8__COUNT; i++) {
		const char *p = v8_items[i].names;

		while (!ret->have[i] && *p) {
			const char *bar = strchr(p, '|');
			size_t len = bar ? (size_t)(bar - p) : strlen(p);
			const struct rti_sym *s;
			int32_t v;

			if (len > RTI_MAX_NAME)
				break;
			snprintf(name, sizeof(name), "v8dbg_%.*s", (int)len, p);
			p += len + (bar != NULL);
			s = sym(&f, name);
			if (!s)
				continue;
			/* each constant is an int object; anything else is not what we know */
			if (s->size != sizeof(v) || !rd(&f, s->value, &v, sizeof(v))) {
				if (st)
					st->reason[RTI_BAD_VALUE]++;
				break;
			}
			ret->val[i] = v;
			ret->have[i] = true;
			if (st)
				st->entries++;
		}
		if (!ret->have[i] && v8_items[i].required)
			ret->missing_required++;
	}
	ret->major = v8_version_part(&f, "_ZN2v88internal7Version6major_E");
	ret->minor = v8_version_part(&f, "_ZN2v88internal7Version6minor_E");
	ret->build = v8_version_part(&f, "_ZN2v88internal7Version6build_E");
	ret->patch = v8_version_part(&f, "_ZN2v88internal7Version6patch_E");
	if (ret->missing_required && st)
		st->reason[RTI_MISSING]++;
out:
	file_close(&f);
	return r;
}

int rtintro_v8_read(int fd, struct rtintro_v8 *ret, struct rtintro_stats *st)
{
	struct elfsym *es = own_image(fd);
	int r = rtintro_v8_read_image(fd, es, ret, st);

	elfsym__free(es);
	return r;
}

int rtintro_v8_read_image(int fd, const struct elfsym *es, struct rtintro_v8 *ret,
			  struct rtintro_stats *st)
{
	enum rtintro_reason r = v8_read(fd, es, ret, st);

	return r == RTI_OK ? 0 : refuse(st, r);
}
