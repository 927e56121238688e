// SPDX-License-Identifier: MIT
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include <zlib.h>

#include "ember/core/base/array.h"
#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/elf/keysort.h"

#define MAX_BUILD_ID 64
#define MAX_UNSIZED 65536u /* a symbol without st_size ends at the next one, or this far */

struct esym {
	uint64_t addr, end;
	uint32_t name_off;
	uint32_t cookie;
	uint32_t seq; /* the order read (a debug file's .symtab first): the last tie-break */
	uint8_t bind;
	uint8_t sized;
};

/* A runtime's introspection symbol (elfsym.h's elfsym_rtsym), its name in rt_names. */
struct rtsym {
	uint64_t value, size;
	uint32_t name_off;
	bool object, exported;
};

struct elfsym {
	struct esym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	struct elfload load;		/* PT_LOAD segments: file offsets, mappings' bias */
	struct rtsym *rt;		/* the runtimes' introspection symbols (few: see rt_wanted) */
	size_t n_rt, rt_cap;
	char *rt_names;
	size_t rt_names_len, rt_names_cap;
	bool rt_too_many;
	bool native;			/* 64-bit little-endian x86-64: this machine's */
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
	bool debug_file;
	bool full_symtab;	/* a .symtab was read, the image's or its debug file's */
	bool has_symtab;	/* the file's own .symtab (not stripped) */
	int dbg_fd;		/* the debug file's, while build() reads it; else -1 */
	uint64_t debug_refused;	/* debug files refused: not root's, a link, a CRC or build-id
				   mismatch */
	/* DWARF for inline frames: the Elf it reads (ours) and the memory image if any */
	Elf *dw_elf;
	Dwarf *dw;
	void *mem;
	/* per symbol: the offset of its subprogram DIE + 1 (0: not looked up yet), so that inline
	 * lookups start at the function, not at the top of a CU with thousands of DIEs */
	uint64_t *sym_die;
	/* shared (elfshare__publish): references and the registry's entry, under sh->lock */
	struct elfshare *sh;	/* NULL: never published, one owner */
	unsigned int refs;	/* its owners (elfsym__ref); while sh, under sh->lock */
	unsigned int listed;	/* the registry's entries that are this image: one per file
				   published as it (a copy of the same build-id and size too) */
	bool kept;		/* its last owner let go: the registry holds it (elfshare__keep) */
	bool was_kept;		/* ... once already: freed at its next last free */
};

/* The registry of published images: few (the symbolizer's images, ~1,000 at most), looked up
 * when frameloc opens a file: a list is enough. */
struct shared_ent {
	struct elfsym *e;
	struct filecache_id id;
};

struct elfshare {
	pthread_mutex_t lock;
	struct shared_ent *ents;
	size_t n, cap;
	/* images their publisher let go, still findable until their deadline (elfshare__keep) */
	struct kept_ent {
		struct elfsym *e;
		uint64_t until_ns;
		size_t bytes;
	} kept[ELFSHARE_KEEP_MAX];
	unsigned int n_kept;
	uint64_t keep_ns, keep_bytes, kept_bytes;
	uint64_t kept_total, kept_found, kept_expired;
};

/*
 * The file is read with pread into memory of ours (ELF_C_READ), section by section as asked,
 * never mapped: a process can shrink a file it owns while we parse it, which through a mapping
 * is a SIGBUS; here a short read, an error. The fd must stay open while the Elf reads;
 * ELF_C_FDDONE before closing it for an Elf kept longer (DWARF).
 */
static Elf *elf_from_fd(int fd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return NULL;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

uint64_t elf_section_bytes(Elf_Scn *scn)
{
	GElf_Shdr sh;
	GElf_Chdr ch;

	if (!gelf_getshdr(scn, &sh))
		return UINT64_MAX;
	if (sh.sh_type == SHT_NOBITS)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED) {
		/* the header alone (the section's first bytes), not the inflated data */
		if (!gelf_getchdr(scn, &ch))
			return UINT64_MAX;
		return ch.ch_size > sh.sh_size ? ch.ch_size : sh.sh_size;
	}
	return sh.sh_size;
}

static bool has_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type == type)
			return true;
		if (name && (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name) &&
		    sh.sh_type != SHT_NOBITS)
			return true;
	}
	return false;
}

/* Entries of @elf's first section of @type (0: none). */
static size_t table_entries(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_entsize)
			return sh.sh_size / sh.sh_entsize;
	}
	return 0;
}

/*
 * Whether @elf's own .symtab holds its .dynsym's functions too: a link writes every defined
 * dynamic symbol into .symtab, so a whole table (at least as many entries) makes reading the
 * dynamic one a second copy of the same names (Node 20: 7 MB more read, 75,000 more symbols
 * sorted). A smaller .symtab (partly stripped) does not: the dynamic table is read as well.
 * (perf reads .symtab where a file has one, .dynsym otherwise.)
 */
static bool symtab_covers_dynsym(Elf *elf)
{
	size_t st = table_entries(elf, SHT_SYMTAB);

	return st && st >= table_entries(elf, SHT_DYNSYM);
}

/* Appends one function symbol (name of @len bytes at @name). */
static int add_one(struct elfsym *e, uint64_t value, uint64_t size, uint8_t bind,
		   const char *name, size_t len)
{
	struct esym *s;

	if (e->names_len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (array_grow((void **)&e->syms, &e->cap, e->n + 1, sizeof(*e->syms), 256) ||
	    array_grow((void **)&e->names, &e->names_cap, e->names_len + len + 1, 1, 256))
		return -ENOMEM;
	s = &e->syms[e->n++];
	*s = (struct esym){ .addr = value,
			    .end = value + size,
			    .name_off = (uint32_t)e->names_len,
			    .seq = (uint32_t)(e->n - 1),
			    .bind = bind,
			    .sized = size > 0 };
	memcpy(e->names + e->names_len, name, len);
	e->names[e->names_len + len] = '\0';
	e->names_len += len + 1;
	return 0;
}

/*
 * The introspection symbols of the runtimes whose frames ember reads (unwind/python.c, elf/rtintro.c):
 * data objects by prefix, functions by exact name. Kept in every image so that the readers take
 * them from the symbolizer's image of the file rather than parse its tables again.
 */
static const char *const rt_object_prefixes[] = {
	"gHotSpotVM", "v8dbg_", "_ZN2v88internal7Version", "_PyRuntime", "Py_Version", "PyCode_Type",
};
static const char *const rt_functions[] = { "napi_module_register", "Py_IsNone" };

#define MAX_RTSYMS 4096u /* Node 20 has ~531 v8dbg_, HotSpot about 50 */

/* Whether a runtime symbol may start with @c (a data object's, or a function's) */
static bool rt_first(char c, bool object)
{
	return object ? c == 'g' || c == 'v' || c == '_' || c == 'P' : c == 'n' || c == 'P';
}

static bool rt_wanted(const char *name, size_t len, bool object)
{
	size_t i;

	if (!rt_first(name[0], object))
		return false;
	if (object) {
		for (i = 0; i < sizeof(rt_object_prefixes) / sizeof(rt_object_prefixes[0]); i++) {
			size_t pl = strlen(rt_object_prefixes[i]);

			if (len >= pl && !memcmp(name, rt_object_prefixes[i], pl))
				return true;
		}
		return false;
	}
	for (i = 0; i < sizeof(rt_functions) / sizeof(rt_functions[0]); i++)
		if (len == strlen(rt_functions[i]) && !memcmp(name, rt_functions[i], len))
			return true;
	return false;
}

/*
 * Keeps runtime symbol @name (@len bytes) once (a name in several tables: the first; exported
 * when any table exports it). .dynsym lists what is exported; in .symtab, a global or weak
 * symbol of default or protected visibility is.
 */
static int add_rt(struct elfsym *e, const char *name, size_t len, uint64_t value, uint64_t size,
		  bool object, bool exported)
{
	size_t i;

	for (i = 0; i < e->n_rt; i++) {
		const char *n = e->rt_names + e->rt[i].name_off;

		if (!strncmp(n, name, len) && !n[len]) {
			e->rt[i].exported |= exported;
			return 0;
		}
	}
	if (e->n_rt == MAX_RTSYMS) {
		e->rt_too_many = true;
		return 0;
	}
	if (array_grow((void **)&e->rt, &e->rt_cap, e->n_rt + 1, sizeof(*e->rt), 16) ||
	    array_grow((void **)&e->rt_names, &e->rt_names_cap, e->rt_names_len + len + 1, 1, 256))
		return -ENOMEM;
	e->rt[e->n_rt++] = (struct rtsym){ .value = value, .size = size,
					   .name_off = (uint32_t)e->rt_names_len,
					   .object = object, .exported = exported };
	memcpy(e->rt_names + e->rt_names_len, name, len);
	e->rt_names[e->rt_names_len + len] = '\0';
	e->rt_names_len += len + 1;
	return 0;
}

static bool exported_from(Elf64_Word table, uint8_t info, uint8_t other)
{
	uint8_t b = GELF_ST_BIND(info), v = GELF_ST_VISIBILITY(other);

	return table == SHT_DYNSYM ||
	       ((b == STB_GLOBAL || b == STB_WEAK) && (v == STV_DEFAULT || v == STV_PROTECTED));
}

/* A runtime symbol among the table's entries (checked before is_function: cheap first). */
static int maybe_rt(struct elfsym *e, Elf64_Word table, uint8_t info, uint8_t other,
		    uint16_t shndx, uint64_t value, uint64_t size, const char *name, size_t len)
{
	uint8_t st = GELF_ST_TYPE(info);

	if ((st != STT_OBJECT && st != STT_FUNC) || shndx == SHN_UNDEF || !len ||
	    !rt_wanted(name, len, st == STT_OBJECT))
		return 0;
	return add_rt(e, name, len, value, size, st == STT_OBJECT, exported_from(table, info, other));
}

static bool is_function(uint8_t info, uint16_t shndx, uint64_t value)
{
	uint8_t st = GELF_ST_TYPE(info);

	return (st == STT_FUNC || st == STT_GNU_IFUNC) && shndx != SHN_UNDEF && value != 0;
}

/* Bounds (elfsym_opts): 0 means none. */
struct bounds {
	uint64_t max_symbols, max_section_bytes;
};

static int add_symbols(struct elfsym *e, Elf *elf, Elf64_Word type, const struct bounds *bd)
{
	Elf_Scn *scn = NULL;
	bool native64 = gelf_getclass(elf) == ELFCLASS64;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data, *strs = NULL;
		Elf_Scn *strscn;
		size_t i, count;
		int err;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		strscn = elf_getscn(elf, sh.sh_link);
		/* sized by the file, so by whoever wrote it: refused before a byte is read */
		if ((bd->max_symbols && count > bd->max_symbols) ||
		    (bd->max_section_bytes && (elf_section_bytes(scn) > bd->max_section_bytes ||
					       (strscn && elf_section_bytes(strscn) >
								 bd->max_section_bytes))))
			return -E2BIG;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -EIO; /* a short read: the file shrank under us */
		if (strscn) {
			strs = elf_getdata(strscn, NULL);
			if (!strs)
				return -EIO;
		}
		/*
		 * A 64-bit table read in place: libelf has converted it to this machine's
		 * Elf64_Sym layout, and the string table is one block (checked bounds, NUL within).
		 * Per symbol that saves gelf_getsym's copy and elf_strptr's checks, most of the
		 * time spent reading a large table.
		 */
		if (native64 && strs && strs->d_buf && data->d_type == ELF_T_SYM &&
		    data->d_size >= count * sizeof(Elf64_Sym)) {
			const Elf64_Sym *sym = data->d_buf;
			const char *str = strs->d_buf;
			size_t str_size = strs->d_size;

			for (i = 1; i < count; i++) {
				const char *name, *nul;
				bool fn = is_function(sym[i].st_info, sym[i].st_shndx,
						      sym[i].st_value);

				if ((!fn && GELF_ST_TYPE(sym[i].st_info) != STT_OBJECT) ||
				    !sym[i].st_name || sym[i].st_name >= str_size)
					continue;
				name = str + sym[i].st_name;
				if (!fn && !rt_first(name[0], true))
					continue; /* data: only a runtime's, rarely */
				nul = memchr(name, '\0', str_size - sym[i].st_name);
				if (!nul || nul == name)
					continue;
				err = maybe_rt(e, type, sym[i].st_info, sym[i].st_other,
					       sym[i].st_shndx, sym[i].st_value, sym[i].st_size,
					       name, (size_t)(nul - name));
				if (!err && fn)
					err = add_one(e, sym[i].st_value, sym[i].st_size,
						      (uint8_t)GELF_ST_BIND(sym[i].st_info), name,
						      (size_t)(nul - name));
				if (err)
					return err;
			}
			continue;
		}
		for (i = 1; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			bool fn;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			fn = is_function(sym.st_info, sym.st_shndx, sym.st_value);
			if (!fn && GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			err = maybe_rt(e, type, sym.st_info, sym.st_other, sym.st_shndx, sym.st_value,
				       sym.st_size, name, strlen(name));
			if (!err && fn)
				err = add_one(e, sym.st_value, sym.st_size,
					      (uint8_t)GELF_ST_BIND(sym.st_info), name, strlen(name));
			if (err)
				return err;
		}
	}
	return 0;
}

static int rank_bind(uint8_t b)
{
	return b == STB_GLOBAL ? 0 : b == STB_WEAK ? 2 : 1;
}

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * Order of the names of one address, the one kept first: perf's choice among aliases
 * (choose_best_symbol in tools/perf/util/symbol.c), so that stacks read as perf's do and compare
 * with them by name. Sized first; unversioned names (no '@') before versioned ones, as perf shows
 * them; then any binding but weak, global before the others (libc's
 * local __GI___libc_write over its weak write and __write); fewer leading underscores; the longer
 * name; then the order read, as perf keeps the first of its table (@ctx: the names).
 */
static int cmp_esym_tie(const void *pa, const void *pb, void *ctx)
{
	const struct esym *a = pa, *b = pb;
	const char *names = ctx, *na = names + a->name_off, *nb = names + b->name_off;
	size_t la, lb;
	int x, y;

	if (a->sized != b->sized)
		return (a->sized < b->sized) - (a->sized > b->sized); /* sized first */
	/* a versioned name of the symbol table (glibc's __libc_start_main@@GLIBC_2.34) after the
	 * plain ones: perf shows __libc_start_main_impl there */
	x = strchr(na, '@') != NULL;
	y = strchr(nb, '@') != NULL;
	if (x != y)
		return (x > y) - (x < y);
	x = rank_bind(a->bind);
	y = rank_bind(b->bind);
	if (x != y)
		return (x > y) - (x < y);
	x = underscores(na);
	y = underscores(nb);
	if (x != y)
		return (x > y) - (x < y);
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return (la < lb) - (la > lb); /* longer first */
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static void finish_symbols(struct elfsym *e)
{
	size_t i, j;

	keysort(e->syms, e->n, sizeof(*e->syms), offsetof(struct esym, addr), cmp_esym_tie,
		e->names);
	for (i = 0, j = 0; i < e->n; i++) {
		if (j && e->syms[j - 1].addr == e->syms[i].addr)
			continue;
		e->syms[j++] = e->syms[i];
	}
	e->n = j;
	for (i = 0; i < e->n; i++) {
		struct esym *s = &e->syms[i];

		if (s->sized)
			continue;
		s->end = s->addr + MAX_UNSIZED < s->addr ? UINT64_MAX : s->addr + MAX_UNSIZED;
		if (i + 1 < e->n && e->syms[i + 1].addr < s->end)
			s->end = e->syms[i + 1].addr;
	}
}

static int read_segments(struct elfsym *e, Elf *elf)
{
	int err = elfload_read(elf, &e->load);

	return err == -E2BIG ? 0 : err; /* the first ELFLOAD_MAX_SEGS do */
}

static size_t get_build_id(Elf *elf, uint8_t *ret, size_t cap)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0 || (size_t)n > cap)
		return 0;
	memcpy(ret, p, (size_t)n);
	return (size_t)n;
}

/* The CRC32 of the whole file at @fd (.gnu_debuglink's, zlib's polynomial). 0 or -errno. */
static int file_crc32(int fd, uint64_t size, uint32_t *ret)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	ssize_t r;

	while (off < size) {
		r = pread(fd, buf, sizeof(buf), (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		crc = crc32(crc, buf, (uInt)r);
		off += (uint64_t)r;
	}
	*ret = (uint32_t)crc;
	return 0;
}

/* The debug file open at @fd (its fstat @st) read, unless it is the image itself (@self); NULL
 * with @fd closed when not. */
static Elf *debug_elf(int fd, const struct stat *st, const struct stat *self)
{
	Elf *elf;

	if (self && st->st_dev == self->st_dev && st->st_ino == self->st_ino) {
		close(fd);
		return NULL;
	}
	elf = elf_from_fd(fd);
	if (!elf)
		close(fd);
	return elf;
}

/*
 * Opens @path as a debug file for @e: a file of the host's that root owns, in directories root
 * owns, reached without a symbolic link (proc/mapfile.h), never one a profiled process controls;
 * an ELF whose build-id, if both have one, matches; found by a debuglink and without a build-id,
 * its CRC32 must be the link's. The fd stays open in e->dbg_fd while the Elf reads.
 */
static Elf *open_debug(struct elfsym *e, const char *path, const struct stat *self,
		       const uint32_t *crc)
{
	uint8_t id[MAX_BUILD_ID];
	struct stat st;
	uint32_t c;
	size_t n;
	Elf *elf;
	int fd;

	fd = mapfile_open_trusted(path, &st);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ENOTDIR)
			e->debug_refused++;
		return NULL;
	}
	if (crc && (file_crc32(fd, (uint64_t)st.st_size, &c) || c != *crc)) {
		e->debug_refused++;
		close(fd);
		return NULL;
	}
	elf = debug_elf(fd, &st, self);
	if (!elf)
		return NULL;
	n = get_build_id(elf, id, sizeof(id));
	if (e->build_id_len && n && (n != e->build_id_len || memcmp(id, e->build_id, n))) {
		elf_end(elf);
		close(fd);
		return NULL;
	}
	e->dbg_fd = fd;
	return elf;
}

/* The debug file of @e's build-id in debug dir @dir (elffile_open_debug(): the one lookup by
 * build-id, with the same trust rule; a file whose own build-id is another is refused). */
static Elf *open_debug_by_id(struct elfsym *e, const char *dir, const struct stat *self)
{
	struct stat st;
	Elf *elf;
	int fd;

	fd = elffile_open_debug(dir, e->build_id, e->build_id_len, &st, NULL, NULL,
				&e->debug_refused);
	if (fd < 0)
		return NULL;
	elf = debug_elf(fd, &st, self);
	if (elf)
		e->dbg_fd = fd;
	return elf;
}

static bool fits(int n)
{
	return n >= 0 && n < PATH_MAX;
}

/*
 * Tries every candidate place of the separate debug file under the configured debug dirs of the
 * host (DIR/.build-id/ab/cdef.debug, DIR/BINDIR/NAME); returns the first that fits. Never in the
 * process's root, nor next to the binary: places the process may control.
 */
static Elf *find_debug(struct elfsym *e, Elf *elf, const struct elfsym_opts *o,
		       const struct stat *self)
{
	const char *dirs = o->debug_dirs ? o->debug_dirs : "/usr/lib/debug";
	char path[PATH_MAX], bindir[PATH_MAX];
	const char *link, *d;
	GElf_Word crc;
	Elf *dbg;

	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link && (strchr(link, '/') || !link[0]))
		link = NULL; /* a name, not a path */
	bindir[0] = '\0';
	if (o->path && o->path[0] == '/') {
		const char *slash = strrchr(o->path, '/');

		snprintf(bindir, sizeof(bindir), "%.*s", (int)(slash - o->path), o->path);
	}
	for (d = dirs; *d;) {
		const char *colon = strchr(d, ':');
		int dl = (int)(colon ? (size_t)(colon - d) : strlen(d));

		if (dl > 0 && e->build_id_len > 1 &&
		    fits(snprintf(path, sizeof(path), "%.*s", dl, d)) &&
		    (dbg = open_debug_by_id(e, path, self)))
			return dbg;
		if (dl > 0 && link && o->path) {
			/* without a build-id, only the link's CRC says it is this file's */
			if (fits(snprintf(path, sizeof(path), "%.*s%s/%s", dl, d, bindir, link)) &&
			    (dbg = open_debug(e, path, self, e->build_id_len ? NULL : &crc)))
				return dbg;
		}
		d += dl + (colon ? 1 : 0);
	}
	return NULL;
}

/*
 * DWARF only when every debug section fits the bound, and not with a .gnu_debugaltlink: libdw
 * would open the file it names itself (any path, blocking, following links).
 */
static bool dwarf_ok(Elf *elf, const struct bounds *bd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".gnu_debugaltlink"))
			return false;
		if ((!strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8)) &&
		    bd->max_section_bytes && elf_section_bytes(scn) > bd->max_section_bytes)
			return false;
	}
	return true;
}

static struct elfsym *build(Elf *elf, const struct elfsym_opts *o, const struct stat *self)
{
	struct elfsym *e = calloc(1, sizeof(*e));
	struct bounds bd = { .max_symbols = o->max_symbols,
			     .max_section_bytes = o->max_section_bytes };
	bool has_symtab, has_dwarf;
	Elf *dbg = NULL;
	int err;

	if (!e) {
		elf_end(elf);
		errno = ENOMEM;
		return NULL;
	}
	e->dbg_fd = -1;
	e->refs = 1;
	{
		GElf_Ehdr eh;

		e->native = gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
			    eh.e_ident[EI_DATA] == ELFDATA2LSB && eh.e_machine == EM_X86_64;
	}
	err = read_segments(e, elf);
	if (err)
		goto fail;
	e->build_id_len = get_build_id(elf, e->build_id, sizeof(e->build_id));
	has_symtab = has_section(elf, SHT_SYMTAB, NULL);
	e->has_symtab = has_symtab;
	has_dwarf = has_section(elf, 0, ".debug_info");
	if (!has_symtab || (o->dwarf && !has_dwarf))
		dbg = find_debug(e, elf, o, self);
	e->full_symtab = has_symtab;
	if (dbg) {
		e->debug_file = true;
		e->full_symtab = e->full_symtab || has_section(dbg, SHT_SYMTAB, NULL);
		err = add_symbols(e, dbg, SHT_SYMTAB, &bd);
		if (err)
			goto fail;
	}
	err = add_symbols(e, elf, SHT_SYMTAB, &bd);
	if (!err && !symtab_covers_dynsym(elf))
		err = add_symbols(e, elf, SHT_DYNSYM, &bd);
	if (err)
		goto fail;
	finish_symbols(e);
	if (o->dwarf) {
		Elf *src = has_dwarf ? elf : (dbg && has_section(dbg, 0, ".debug_info") ? dbg : NULL);

		if (src && dwarf_ok(src, &bd)) {
			e->dw = dwarf_begin_elf(src, DWARF_C_READ, NULL);
			if (e->dw) {
				/* libdw has read its sections: the fd may close */
				(void)elf_cntl(src, ELF_C_FDDONE);
				e->dw_elf = src;
				if (src == elf)
					elf = NULL;
				else
					dbg = NULL;
			}
		}
	}
	if (dbg)
		elf_end(dbg);
	if (elf)
		elf_end(elf);
	if (e->dbg_fd >= 0)
		close(e->dbg_fd);
	e->dbg_fd = -1;
	return e;

fail:
	if (dbg)
		elf_end(dbg);
	elf_end(elf);
	elfsym__free(e);
	errno = -err;
	return NULL;
}

struct elfsym *elfsym__open(int fd, const struct elfsym_opts *o)
{
	static const struct elfsym_opts none = { 0 };
	struct stat st;
	Elf *elf;

	if (fstat(fd, &st))
		return NULL;
	elf = elf_from_fd(fd);
	if (!elf) {
		errno = ENOEXEC;
		return NULL;
	}
	return build(elf, o ? o : &none, &st);
}

struct elfsym *elfsym__open_mem(const void *image, size_t len, const struct elfsym_opts *o)
{
	static const struct elfsym_opts none = { 0 };
	struct elfsym *e;
	void *copy = malloc(len ? len : 1);
	Elf *elf;

	if (!copy)
		return NULL;
	memcpy(copy, image, len);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		free(copy);
		errno = ENOEXEC;
		return NULL;
	}
	e = build(elf, o ? o : &none, NULL);
	if (!e) {
		free(copy);
		return NULL;
	}
	if (e->dw_elf)
		e->mem = copy; /* DWARF reads it */
	else
		free(copy);
	return e;
}

static void unlist(struct elfshare *sh, const struct elfsym *e)
{
	size_t i;

	for (i = 0; i < sh->n;) {
		if (sh->ents[i].e == e)
			sh->ents[i] = sh->ents[--sh->n];
		else
			i++;
	}
}

struct elfsym *elfsym__ref(struct elfsym *e)
{
	if (!e)
		return NULL;
	if (e->sh) {
		pthread_mutex_lock(&e->sh->lock);
		e->refs++;
		pthread_mutex_unlock(&e->sh->lock);
	} else {
		e->refs++;
	}
	return e;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Takes kept entry @i out (its reference the caller's to let go), under sh->lock. */
static struct elfsym *unkeep(struct elfshare *sh, unsigned int i)
{
	struct elfsym *e = sh->kept[i].e;

	sh->kept_bytes -= sh->kept[i].bytes;
	sh->kept[i] = sh->kept[--sh->n_kept];
	e->kept = false;
	return e;
}

/*
 * Under sh->lock: @e's last owner lets go. Kept instead (true: its reference is the registry's
 * now) while the registry keeps images and it is findable; the oldest kept image past the
 * bounds, or one past its deadline, goes into *@ret_drop for the caller to free unlocked.
 */
static bool keep_last(struct elfshare *sh, struct elfsym *e, struct elfsym **ret_drop)
{
	size_t bytes = elfsym__mem_bytes(e);
	unsigned int oldest = 0;

	*ret_drop = NULL;
	if (!sh->keep_ns || !e->listed || e->was_kept || bytes > sh->keep_bytes)
		return false;
	if (sh->n_kept == ELFSHARE_KEEP_MAX || sh->kept_bytes + bytes > sh->keep_bytes) {
		for (unsigned int i = 1; i < sh->n_kept; i++)
			if (sh->kept[i].until_ns < sh->kept[oldest].until_ns)
				oldest = i;
		if (!sh->n_kept || sh->kept_bytes - sh->kept[oldest].bytes + bytes > sh->keep_bytes)
			return false; /* one more would not fit even then */
		*ret_drop = unkeep(sh, oldest);
	}
	e->kept = e->was_kept = true;
	sh->kept[sh->n_kept++] = (struct kept_ent){ e, now_ns() + sh->keep_ns, bytes };
	sh->kept_bytes += bytes;
	sh->kept_total++;
	return true;
}

/* Under sh->lock: one kept image past its deadline, taken out for the caller to free, or NULL. */
static struct elfsym *expired(struct elfshare *sh)
{
	uint64_t now;

	if (!sh->n_kept)
		return NULL;
	now = now_ns();
	for (unsigned int i = 0; i < sh->n_kept; i++) {
		if (sh->kept[i].until_ns <= now) {
			sh->kept_expired++;
			return unkeep(sh, i);
		}
	}
	return NULL;
}

/* Frees the kept images past their deadline (the registry's calls, before their own work). */
static void expire(struct elfshare *sh)
{
	struct elfsym *e;

	for (;;) {
		pthread_mutex_lock(&sh->lock);
		e = expired(sh);
		pthread_mutex_unlock(&sh->lock);
		if (!e)
			return;
		elfsym__free(e);
	}
}

void elfsym__free(struct elfsym *e)
{
	if (!e)
		return;
	if (!e->sh && e->refs > 1) {
		e->refs--;
		return;
	}
	if (e->sh) {
		struct elfsym *drop = NULL;
		bool last, kept;

		pthread_mutex_lock(&e->sh->lock);
		kept = e->refs == 1 && keep_last(e->sh, e, &drop);
		last = !kept && !--e->refs;
		if (last && e->listed)
			unlist(e->sh, e);
		pthread_mutex_unlock(&e->sh->lock);
		elfsym__free(drop);
		if (!last)
			return;
	}
	if (e->dw)
		dwarf_end(e->dw);
	if (e->dw_elf)
		elf_end(e->dw_elf);
	if (e->dbg_fd >= 0)
		close(e->dbg_fd);
	free(e->mem);
	free(e->sym_die);
	free(e->syms);
	free(e->names);
	free(e->rt);
	free(e->rt_names);
	free(e);
}

int elfsym__file_to_vaddr(const struct elfsym *e, uint64_t off, uint64_t *ret)
{
	size_t i;

	for (i = 0; i < e->load.n; i++) {
		const struct elfload_seg *s = &e->load.segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*ret = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elfload *elfsym__load(const struct elfsym *e)
{
	return &e->load;
}

int elfsym__lookup(const struct elfsym *e, uint64_t vaddr)
{
	size_t lo = keysort_upper(e->syms, e->n, sizeof(*e->syms), offsetof(struct esym, addr),
				  vaddr), i;

	/* the nearest symbol below, or one of the few before it that encloses it (nested labels) */
	for (i = lo; i > 0 && lo - i < 8; i--)
		if (vaddr < e->syms[i - 1].end)
			return (int)(i - 1);
	return -ENOENT;
}

const char *elfsym__name(const struct elfsym *e, int idx)
{
	return e->names + e->syms[idx].name_off;
}

uint64_t elfsym__addr(const struct elfsym *e, int idx)
{
	return e->syms[idx].addr;
}

uint32_t elfsym__cookie(const struct elfsym *e, int idx)
{
	return e->syms[idx].cookie;
}

void elfsym__set_cookie(struct elfsym *e, int idx, uint32_t cookie)
{
	e->syms[idx].cookie = cookie;
}

void elfsym__clear_cookies(struct elfsym *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		e->syms[i].cookie = 0;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!n)
		n = dwarf_diename(die);
	return n;
}

/*
 * Walks down from @die to the innermost scope holding @pc, appending the inlined subroutines met
 * on the way (outermost first). Only the children whose ranges hold @pc are entered, so the cost
 * is the DIEs along one path, not the whole CU (dwarf_getscopes() visits far more and was
 * ~100 us per address on libc). Returns true once the path reached a function.
 */
static bool walk_scopes(Dwarf_Die *die, Dwarf_Addr pc, const char **ret, size_t cap, size_t *n,
			Dwarf_Off *ret_sub, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		switch (tag) {
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			/* C++ puts function definitions inside these; they have no ranges */
			if (walk_scopes(&child, pc, ret, cap, n, ret_sub, depth + 1))
				return true;
			continue;
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_entry_point:
			break;
		default:
			continue;
		}
		if (dwarf_haspc(&child, pc) != 1)
			continue;
		if (tag == DW_TAG_subprogram && ret_sub && !*ret_sub)
			*ret_sub = dwarf_dieoffset(&child);
		if (tag == DW_TAG_inlined_subroutine && *n < cap) {
			const char *name = die_name(&child);

			ret[(*n)++] = name ? name : "[inlined]";
		}
		(void)walk_scopes(&child, pc, ret, cap, n, ret_sub, depth + 1);
		return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

int elfsym__inlines(struct elfsym *e, uint64_t vaddr, const char **ret, size_t cap)
{
	Dwarf_Die cudie, sub;
	Dwarf_Off off = 0;
	size_t n = 0;
	int idx;

	if (!e->dw || !cap)
		return 0;
	idx = elfsym__lookup(e, vaddr);
	if (idx >= 0 && !e->sym_die && e->n)
		e->sym_die = calloc(e->n, sizeof(*e->sym_die)); /* NULL: just slower */
	if (idx >= 0 && e->sym_die && e->sym_die[idx] > 1 &&
	    dwarf_offdie(e->dw, e->sym_die[idx] - 1, &sub) && dwarf_haspc(&sub, vaddr) == 1) {
		(void)walk_scopes(&sub, vaddr, ret, cap, &n, NULL, 1);
		return (int)n;
	}
	if (!dwarf_addrdie(e->dw, vaddr, &cudie))
		return 0;
	(void)walk_scopes(&cudie, vaddr, ret, cap, &n, &off, 0);
	if (idx >= 0 && e->sym_die && off)
		e->sym_die[idx] = off + 1;
	return (int)n;
}

size_t elfsym__build_id(const struct elfsym *e, const uint8_t **ret)
{
	*ret = e->build_id;
	return e->build_id_len;
}

bool elfsym__full_symbols(const struct elfsym *e)
{
	return e->full_symtab;
}

bool elfsym__used_debug_file(const struct elfsym *e)
{
	return e->debug_file;
}

bool elfsym__has_symtab(const struct elfsym *e)
{
	return e->has_symtab;
}

bool elfsym__has_dwarf(const struct elfsym *e)
{
	return e->dw != NULL;
}

uint64_t elfsym__debug_refused(const struct elfsym *e)
{
	return e->debug_refused;
}

size_t elfsym__rt_count(const struct elfsym *e)
{
	return e->n_rt;
}

bool elfsym__rt_sym(const struct elfsym *e, size_t i, struct elfsym_rtsym *ret)
{
	if (i >= e->n_rt)
		return false;
	*ret = (struct elfsym_rtsym){ .name = e->rt_names + e->rt[i].name_off,
				      .value = e->rt[i].value,
				      .size = e->rt[i].size,
				      .object = e->rt[i].object,
				      .exported = e->rt[i].exported };
	return true;
}

bool elfsym__rt_find(const struct elfsym *e, const char *name, struct elfsym_rtsym *ret)
{
	for (size_t i = 0; i < e->n_rt; i++)
		if (!strcmp(e->rt_names + e->rt[i].name_off, name))
			return elfsym__rt_sym(e, i, ret);
	return false;
}

bool elfsym__rt_too_many(const struct elfsym *e)
{
	return e->rt_too_many;
}

bool elfsym__native(const struct elfsym *e)
{
	return e->native;
}

size_t elfsym__count(const struct elfsym *e)
{
	return e->n;
}

size_t elfsym__mem_bytes(const struct elfsym *e)
{
	return sizeof(*e) + e->cap * sizeof(*e->syms) + e->names_cap +
	       (e->sym_die ? e->n * sizeof(*e->sym_die) : 0);
}

int elfsym_read_build_id(int fd, uint8_t *ret, size_t cap)
{
	Elf *elf;
	size_t n;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EIO;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	n = get_build_id(elf, ret, cap);
	elf_end(elf);
	return (int)n;
}

struct elfshare *elfshare__new(void)
{
	struct elfshare *sh = calloc(1, sizeof(*sh));

	if (!sh) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&sh->lock, NULL);
	return sh;
}

void elfshare__keep(struct elfshare *sh, uint64_t keep_ns, uint64_t max_bytes)
{
	if (!sh)
		return;
	pthread_mutex_lock(&sh->lock);
	sh->keep_ns = keep_ns;
	sh->keep_bytes = max_bytes;
	pthread_mutex_unlock(&sh->lock);
}

void elfshare__stats(struct elfshare *sh, struct elfshare_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!sh)
		return;
	pthread_mutex_lock(&sh->lock);
	ret->published = sh->n;
	ret->kept = sh->n_kept;
	ret->kept_bytes = sh->kept_bytes;
	ret->kept_total = sh->kept_total;
	ret->kept_found = sh->kept_found;
	ret->kept_expired = sh->kept_expired;
	pthread_mutex_unlock(&sh->lock);
}

void elfshare__free(struct elfshare *sh)
{
	if (!sh)
		return;
	for (;;) { /* the images it kept: its references */
		struct elfsym *e = NULL;

		pthread_mutex_lock(&sh->lock);
		if (sh->n_kept)
			e = unkeep(sh, sh->n_kept - 1);
		pthread_mutex_unlock(&sh->lock);
		if (!e)
			break;
		elfsym__free(e);
	}
	pthread_mutex_destroy(&sh->lock);
	free(sh->ents);
	free(sh);
}

void elfshare__publish(struct elfshare *sh, struct elfsym *e, const struct filecache_id *id)
{
	size_t i;

	if (!sh || !e || (e->sh && e->sh != sh))
		return;
	expire(sh);
	pthread_mutex_lock(&sh->lock);
	if (!e->sh) {
		e->sh = sh; /* its references so far (the publisher's) counted under the lock now */
	}
	for (i = 0; i < sh->n; i++) {
		const struct filecache_id *o = &sh->ents[i].id;

		if (o->dev == id->dev && o->ino == id->ino) {
			/* that file's entry: this image's already (its identity as now), or an
			 * older image's, which it replaces */
			sh->ents[i].e->listed--;
			sh->ents[i] = sh->ents[--sh->n];
			break;
		}
	}
	if (array_grow((void **)&sh->ents, &sh->cap, sh->n + 1, sizeof(*sh->ents), 64) == 0) {
		sh->ents[sh->n++] = (struct shared_ent){ .e = e, .id = *id };
		e->listed++;
	}
	pthread_mutex_unlock(&sh->lock);
}

bool elfshare__has(struct elfshare *sh, uint64_t ino)
{
	bool has = false;

	if (!sh)
		return false;
	expire(sh);
	pthread_mutex_lock(&sh->lock);
	for (size_t i = 0; i < sh->n && !has; i++)
		has = sh->ents[i].id.ino == ino;
	pthread_mutex_unlock(&sh->lock);
	return has;
}

struct elfsym *elfshare__find(struct elfshare *sh, const struct filecache_id *id)
{
	struct elfsym *e = NULL;
	size_t i;

	if (!sh)
		return NULL;
	expire(sh);
	pthread_mutex_lock(&sh->lock);
	for (i = 0; i < sh->n; i++) {
		if (filecache_id_same_file(&sh->ents[i].id, id)) {
			e = sh->ents[i].e;
			e->refs++;
			sh->kept_found += e->kept;
			break;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	return e;
}

size_t elfshare__count(struct elfshare *sh)
{
	size_t n;

	if (!sh)
		return 0;
	pthread_mutex_lock(&sh->lock);
	n = sh->n;
	pthread_mutex_unlock(&sh->lock);
	return n;
}

struct elfsym *elfsym_source_get(const struct elfsym_source *src, int fd, const char *path,
				 const struct elfsym_opts *fallback)
{
	if (src && src->get)
		return src->get(src->ctx, fd, path);
	return elfsym__open(fd, fallback);
}
