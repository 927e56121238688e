// SPDX-License-Identifier: MIT
/*
 * elfload: a mapping's bias from the program headers, on the layouts linkers make. Tables first
 * (the rustc/lld layout, prelinked, several executable segments), then real
 * binaries built here with each toolchain there is (gcc PIE, non-PIE, -static, -static-pie;
 * clang + lld PIE and non-PIE; a second executable segment far away; libraries linked at a fixed
 * base and dlopen'ed; musl; rustc -O): each probe prints the runtime address of its probe_fn and
 * its /proc/self/maps, and the address mapped back through elfload must be the symbol's value.
 * A missing toolchain is a skip, and a failure under CI=true.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/proc/procmaps.h"

#include "helpers.h"

static char tmpdir[64];

static struct elfload table(const struct elfload_seg *s, unsigned int n)
{
	struct elfload l = { .n = n };

	memcpy(l.segs, s, n * sizeof(*s));
	return l;
}

static void test_tables(void **state)
{
	/* rustc -O (lld): R at 0, R E at offset 0x17e80 / address 0x18e80 */
	const struct elfload_seg rust[] = {
		{ .off = 0, .vaddr = 0, .filesz = 0x17e7c },
		{ .off = 0x17e80, .vaddr = 0x18e80, .filesz = 0x3dea0, .x = true },
		{ .off = 0x55d20, .vaddr = 0x57d20, .filesz = 0x28b8 },
	};
	/* a prelinked library: linked at 0x3a000000, loaded elsewhere */
	const struct elfload_seg pre[] = {
		{ .off = 0, .vaddr = 0x3a000000, .filesz = 0x1000 },
		{ .off = 0x1000, .vaddr = 0x3a001000, .filesz = 0x5000, .x = true },
	};
	/* two executable segments, the second far from the first */
	const struct elfload_seg two[] = {
		{ .off = 0, .vaddr = 0x400000, .filesz = 0x528 },
		{ .off = 0x1000, .vaddr = 0x401000, .filesz = 0x161, .x = true },
		{ .off = 0x4000, .vaddr = 0x4000000, .filesz = 5, .x = true },
	};
	struct elfload l = table(rust, 3);
	struct elfload_map m = { .start = 0x55550000 + 0x18000, .end = 0x55550000 + 0x57000,
				 .pgoff = 0x17000, .x = true };
	uint64_t bias, v;

	/* the first segment holds pgoff 0x17000 too: the executable one is the right one */
	assert_int_equal(elfload_bias(&l, &m, &bias), 0);
	assert_int_equal(bias, 0x55550000);
	assert_int_equal(elfload_vaddr(&l, &m, 0x55550000 + 0x18f00, &v), 0);
	assert_int_equal(v, 0x18f00);
	assert_int_equal(elfload_vaddr(&l, &m, 0x55550000 + 0x57000, &v), -ENOENT); /* outside */
	/* the read-only mapping of the same file: the first segment */
	m = (struct elfload_map){ .start = 0x55550000, .end = 0x55568000, .pgoff = 0 };
	assert_int_equal(elfload_bias(&l, &m, &bias), 0);
	assert_int_equal(bias, 0x55550000);

	l = table(pre, 2);
	m = (struct elfload_map){ .start = 0x7f0000001000, .end = 0x7f0000006000, .pgoff = 0x1000,
				  .x = true };
	assert_int_equal(elfload_vaddr(&l, &m, 0x7f0000001234, &v), 0);
	assert_int_equal(v, 0x3a001234);

	l = table(two, 3);
	m = (struct elfload_map){ .start = 0x4000000, .end = 0x4001000, .pgoff = 0x4000, .x = true };
	assert_int_equal(elfload_vaddr(&l, &m, 0x4000002, &v), 0);
	assert_int_equal(v, 0x4000002);
	m = (struct elfload_map){ .start = 0x401000, .end = 0x402000, .pgoff = 0x1000, .x = true };
	assert_int_equal(elfload_bias(&l, &m, &bias), 0);
	assert_int_equal(bias, 0);
	/* no segment holds the offset */
	m.pgoff = 0x9000;
	assert_int_equal(elfload_bias(&l, &m, &bias), -ENOENT);
	l.n = 0;
	assert_int_equal(elfload_bias(&l, &m, &bias), -ENOENT);
}

static void test_read_limits(void **state)
{
	struct elfload l;

	assert_int_equal(elfload_read(NULL, &l), -ENOEXEC);
	assert_int_equal(l.n, 0);
}

/* --- real binaries ------------------------------------------------------------------------- */

static const char probe_c[] =
	"#include <stdio.h>\n"
	"#include <dlfcn.h>\n"
	"#ifdef FAR\n"
	"__attribute__((section(\"farcode\")))\n"
	"#endif\n"
	"__attribute__((noinline)) int probe_fn(int x) { return x * 3 + 1; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	char line[1024];\n"
	"	FILE *f;\n"
	"	printf(\"addr %lx probe_fn\\n\", (unsigned long)&probe_fn);\n"
	"#ifndef NODL\n"
	"	for (int i = 1; i < argc; i++) {\n"
	"		void *h = dlopen(argv[i], RTLD_NOW);\n"
	"		void *s = h ? dlsym(h, \"lib_fn\") : NULL;\n"
	"		if (s) printf(\"addr %lx lib_fn\\n\", (unsigned long)s);\n"
	"	}\n"
	"#endif\n"
	"	f = fopen(\"/proc/self/maps\", \"r\");\n"
	"	while (f && fgets(line, sizeof(line), f)) fputs(line, stdout);\n"
	"	return probe_fn(1) == 4 ? 0 : 1;\n"
	"}\n";
static const char lib_c[] = "__attribute__((noinline)) int lib_fn(int x) { return x * 5 + 2; }\n";
static const char probe_rs[] =
	"use std::io::Write;\n"
	"#[inline(never)]\n#[no_mangle]\npub extern \"C\" fn probe_fn(x: u64) -> u64 { x * 3 + 1 }\n"
	"fn main() {\n"
	"    let f: extern \"C\" fn(u64) -> u64 = probe_fn;\n"
	"    println!(\"addr {:x} probe_fn\", f as usize);\n"
	"    let m = std::fs::read_to_string(\"/proc/self/maps\").unwrap();\n"
	"    std::io::stdout().write_all(m.as_bytes()).unwrap();\n"
	"    std::process::exit(if std::hint::black_box(probe_fn)(1) == 4 { 0 } else { 1 });\n"
	"}\n";

/* The value of function symbol @name in @path (.symtab, else .dynsym); 0 if none. */
static uint64_t sym_value(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	uint64_t v = 0;
	GElf_Shdr sh;
	Elf *elf;

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!v && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Sym sym;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || !d || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				v = sym.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return v;
}

struct probe {
	char out[256 * 1024];
	size_t len;
	unsigned int checked;
};

struct find {
	uint64_t addr;
	struct procmaps_entry e;
	char path[PATH_MAX];
	bool found;
};

static int find_map(const struct procmaps_entry *e, void *ctx)
{
	struct find *f = ctx;

	if (f->addr < e->start || f->addr >= e->end || e->kind != PROCMAPS_FILE ||
	    e->path_len >= sizeof(f->path))
		return 0;
	f->e = *e;
	memcpy(f->path, e->path, e->path_len);
	f->path[e->path_len] = '\0';
	f->found = true;
	return 1;
}

/* Checks every "addr HEX NAME" line of @p's output against the maps it printed. */
static void check_probe(const char *what, struct probe *p)
{
	const char *s = p->out;

	while ((s = strstr(s, "addr ")) && (s == p->out || s[-1] == '\n')) {
		struct find f = { 0 };
		char name[64];
		struct elfload l;
		struct elfload_map m;
		uint64_t want, got = 0;
		int fd, err;
		Elf *elf;

		assert_int_equal(sscanf(s, "addr %" SCNx64 " %63s", &f.addr, name), 2);
		s += 5;
		(void)procmaps_parse(p->out, p->len, find_map, &f, NULL);
		assert_true(f.found);
		fd = open(f.path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		err = elfload_read(elf, &l);
		elf_end(elf);
		close(fd);
		assert_int_equal(err, 0);
		m = (struct elfload_map){ .start = f.e.start, .end = f.e.end, .pgoff = f.e.pgoff,
					  .x = f.e.x };
		want = sym_value(f.path, name);
		err = elfload_vaddr(&l, &m, f.addr, &got);
		print_message("%s: %s at 0x%" PRIx64 " in %s (pgoff 0x%" PRIx64 "): vaddr 0x%" PRIx64
			      ", symbol 0x%" PRIx64 "\n", what, name, f.addr, f.path, f.e.pgoff, got,
			      want);
		assert_int_equal(err, 0);
		assert_true(want != 0);
		assert_int_equal(got, want);
		p->checked++;
	}
}

static bool have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* Builds with @cmd (run in tmpdir), runs ./probe @args, checks @min_checked addresses. */
static void build_and_check(const char *what, const char *tool, const char *cmd, const char *args,
			    unsigned int min_checked)
{
	static struct probe p;
	char sh[2048];
	FILE *f;

	if (!have(tool)) {
		print_message("%s: no %s\n", what, tool);
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("%s: no %s (a failure under CI)", what, tool);
		return;
	}
	snprintf(sh, sizeof(sh), "cd %s && rm -f probe && %s >build.log 2>&1", tmpdir, cmd);
	if (system(sh) != 0) {
		snprintf(sh, sizeof(sh), "cat %s/build.log >&2", tmpdir);
		(void)system(sh);
		fail_msg("%s: build failed: %s", what, cmd);
	}
	snprintf(sh, sizeof(sh), "cd %s && ./probe %s", tmpdir, args);
	f = popen(sh, "r");
	assert_non_null(f);
	p.len = fread(p.out, 1, sizeof(p.out) - 1, f);
	p.out[p.len] = '\0';
	assert_int_equal(pclose(f), 0);
	p.checked = 0;
	check_probe(what, &p);
	assert_true(p.checked >= min_checked);
}

static void test_gcc(void **state)
{
	build_and_check("gcc PIE", "gcc", "gcc -O2 -o probe probe.c -ldl", "", 1);
	build_and_check("gcc non-PIE", "gcc", "gcc -O2 -no-pie -fno-pie -o probe probe.c -ldl", "", 1);
	build_and_check("gcc -static", "gcc", "gcc -O2 -static -DNODL -o probe probe.c", "", 1);
	build_and_check("gcc -static-pie", "gcc", "gcc -O2 -static-pie -DNODL -o probe probe.c", "",
			1);
	/* a second executable segment at 64 MiB: p_vaddr - p_offset differs from the first's */
	build_and_check("gcc two executable segments", "gcc",
			"gcc -O2 -no-pie -fno-pie -DFAR -o probe probe.c -ldl "
			"-Wl,--section-start=farcode=0x4000000", "", 1);
	build_and_check("gcc PIE, second executable segment", "gcc",
			"gcc -O2 -DFAR -o probe probe.c -ldl -Wl,--section-start=farcode=0x200000",
			"", 1);
	/* libraries linked at a fixed base (what prelink does), loaded wherever ld.so puts them */
	build_and_check("gcc library linked at 0x10000000", "gcc",
			"gcc -O2 -shared -fPIC -o lib.so lib.c -Wl,-Ttext-segment=0x10000000 && "
			"gcc -O2 -o probe probe.c -ldl", "./lib.so", 2);
}

static void test_lld(void **state)
{
	build_and_check("clang + lld PIE", "ld.lld",
			"clang -O2 -fomit-frame-pointer -fuse-ld=lld -o probe probe.c -ldl", "", 1);
	build_and_check("clang + lld non-PIE", "ld.lld",
			"clang -O2 -fuse-ld=lld -no-pie -fno-pie -o probe probe.c -ldl", "", 1);
	build_and_check("lld library at image base 0x20000000", "ld.lld",
			"clang -O2 -fuse-ld=lld -shared -fPIC -o lib.so lib.c "
			"-Wl,--image-base=0x20000000 && clang -O2 -fuse-ld=lld -o probe probe.c -ldl",
			"./lib.so", 2);
}

static void test_musl(void **state)
{
	build_and_check("musl-gcc", "musl-gcc", "musl-gcc -O2 -DNODL -o probe probe.c", "", 1);
	build_and_check("musl-gcc -static", "musl-gcc", "musl-gcc -O2 -static -DNODL -o probe probe.c",
			"", 1);
}

static void test_rustc(void **state)
{
	build_and_check("rustc -O", "rustc", "rustc -O -o probe probe.rs", "", 1);
}

static int setup(void **state)
{
	char path[128];

	(void)state;
	elf_version(EV_CURRENT);
	if (helpers_tmpdir_new(tmpdir, sizeof(tmpdir), "elfload"))
		return -1;
	snprintf(path, sizeof(path), "%s/probe.c", tmpdir);
	if (helpers_write_file(path, probe_c, 0644))
		return -1;
	snprintf(path, sizeof(path), "%s/lib.c", tmpdir);
	if (helpers_write_file(path, lib_c, 0644))
		return -1;
	snprintf(path, sizeof(path), "%s/probe.rs", tmpdir);
	return helpers_write_file(path, probe_rs, 0644);
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_read_limits),
		cmocka_unit_test(test_gcc),
		cmocka_unit_test(test_lld),
		cmocka_unit_test(test_musl),
		cmocka_unit_test(test_rustc),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
