// SPDX-License-Identifier: MIT
/* elfsym on the symbols workload ($OUTPUT/workloads/symbols): symbols at the addresses nm gives,
 * file offsets, build-id, inline frames, and a stripped copy with its debug file; the name kept
 * among aliases at one address (perf's choice), on a library assembled here and on libc; images
 * shared between threads (elfshare): found for the same file only, alive while anyone holds one,
 * found no more once the last let go, an image published again replacing the old, and a borrower
 * thread finding and letting go while the publisher replaces and frees (ASan's build checks the
 * memory); the runtimes' introspection symbols kept beside the functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>
#include <sys/stat.h>

#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"

#include "helpers.h"

static char bin[PATH_MAX - 128];
static char tmpdir[64];

static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[2 * PATH_MAX], out[64] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3==\"%s\"{print $1}'", path, name);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	assert_true(out[0]);
	return strtoull(out, NULL, 16);
}

static struct elfsym *open_path(const char *path, const struct elfsym_opts *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elfsym *e;

	assert_true(fd >= 0);
	e = elfsym__open(fd, o);
	close(fd);
	return e;
}

static void test_symbols(void **state)
{
	struct elfsym_opts o = { .dwarf = true };
	struct elfsym *e = open_path(bin, &o);
	uint64_t leaf = nm_addr(bin, "symbols_leaf"), outer = nm_addr(bin, "symbols_outer");
	const char *inl[4];
	const uint8_t *id;
	uint64_t v;
	int idx;

	assert_non_null(e);
	assert_true(elfsym__count(e) > 5);
	idx = elfsym__lookup(e, leaf);
	assert_true(idx >= 0);
	assert_string_equal(elfsym__name(e, idx), "symbols_leaf");
	assert_int_equal(elfsym__addr(e, idx), leaf);
	assert_string_equal(elfsym__name(e, elfsym__lookup(e, leaf + 7)), "symbols_leaf");
	assert_string_equal(elfsym__name(e, elfsym__lookup(e, outer)), "symbols_outer");
	assert_int_equal(elfsym__lookup(e, 1), -ENOENT);
	elfsym__set_cookie(e, idx, 5);
	assert_int_equal(elfsym__cookie(e, idx), 5);
	/* gcc's PIE layout maps text at file offset == vaddr */
	assert_int_equal(elfsym__file_to_vaddr(e, leaf, &v), 0);
	assert_int_equal(v, leaf);
	assert_int_equal(elfsym__file_to_vaddr(e, 1ull << 40, &v), -ENOENT);
	assert_true(elfsym__build_id(e, &id) >= 16);
	assert_true(elfsym__has_dwarf(e));
	assert_false(elfsym__used_debug_file(e));
	/* no inline frames at the start of a real function */
	assert_int_equal(elfsym__inlines(e, leaf, inl, 4), 0);
	assert_true(elfsym__mem_bytes(e) > 0);
	elfsym__free(e);
	elfsym__free(NULL);
}

static void test_not_elf(void **state)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/text", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello\n", 6), 6);
	assert_null(elfsym__open(fd, NULL));
	assert_int_equal(errno, ENOEXEC);
	assert_null(elfsym__open_mem("\x7f" "ELF", 4, NULL));
	close(fd);
}

static void test_debug_file(void **state)
{
	char cmd[4 * PATH_MAX], path[256], dirs[256];
	struct elfsym_opts o = { .dwarf = true };
	struct elfsym *e;
	uint64_t leaf = nm_addr(bin, "symbols_leaf");
	int idx;

	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p %s/bin %s/dbg/bin; cp %s %s/bin/symbols; "
		 "objcopy --only-keep-debug %s/bin/symbols %s/dbg/bin/symbols.debug; "
		 "strip --strip-all %s/bin/symbols; "
		 "objcopy --add-gnu-debuglink=%s/dbg/bin/symbols.debug %s/bin/symbols",
		 tmpdir, tmpdir, bin, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/bin/symbols", tmpdir);
	/* without the debug dir: only .dynsym, which lacks the static functions */
	o.debug_dirs = "/nonexistent";
	o.path = path;
	e = open_path(path, &o);
	assert_non_null(e);
	idx = elfsym__lookup(e, leaf);
	assert_true(idx < 0 || strcmp(elfsym__name(e, idx), "symbols_leaf"));
	assert_false(elfsym__used_debug_file(e));
	elfsym__free(e);
	/* DIR/BINDIR/NAME: the debug dir mirrors the binary's directory */
	snprintf(dirs, sizeof(dirs), "/nonexistent:%s/dbg", tmpdir);
	snprintf(path, sizeof(path), "/bin/symbols");
	o.debug_dirs = dirs;
	e = NULL;
	{
		char real[256];

		snprintf(real, sizeof(real), "%s/bin/symbols", tmpdir);
		e = open_path(real, &o);
	}
	assert_non_null(e);
	assert_true(elfsym__used_debug_file(e));
	assert_true(elfsym__has_dwarf(e));
	idx = elfsym__lookup(e, leaf + 3);
	assert_true(idx >= 0);
	assert_string_equal(elfsym__name(e, idx), "symbols_leaf");
	elfsym__free(e);
}

/*
 * Aliases at one address: each case is one function with these names, each NAME:BIND with BIND
 * g (global), w (weak) or l (local), and ":u" for a name without a size; the name elfsym keeps
 * is perf's (tools/perf/util/symbol.c, choose_best_symbol): sized, then not weak, then global,
 * then fewer leading underscores, then the longer name, then the first in .symtab (want NULL:
 * asked of readelf).
 */
static const struct {
	const char *names;
	const char *want;
} alias_cases[] = {
	/* libc6-dbg's .symtab at libc's write: the local __GI___libc_write, as perf names it */
	{ "write:w __write:w __libc_write:l __GI___libc_write:l __GI_write:l __GI___write:l",
	  "__GI___libc_write" },
	{ "glob:g local_longer_name:l", "glob" },			/* global over local */
	{ "weak_longer_name:w loc:l", "loc" },				/* local over weak */
	{ "weak_longer_name2:w glob2:g", "glob2" },			/* global over weak */
	{ "__alias_longer_name:g _al:g", "_al" },			/* fewer underscores ... */
	{ "_ab:g abcd:g", "abcd" },					/* ... before length */
	{ "ab:g abcdef:g abc:g", "abcdef" },				/* the longer name */
	{ "unsized_global:g:u sized_weak:w", "sized_weak" },		/* sized first */
	{ "tie_b1:g tie_a1:g", NULL },					/* the first in .symtab */
	{ "tie_b2:l tie_a2:l", NULL },
};

/* The name of @names (a case's names) that `readelf` lists first in .symtab. */
static void first_in_symtab(const char *so, const char *names, char *ret, size_t cap)
{
	char cmd[2 * PATH_MAX], re[256] = "";
	size_t n = 0;
	FILE *f;

	/* NAME:BIND NAME:BIND -> NAME|NAME */
	for (; *names && n + 1 < sizeof(re); names++) {
		if (*names == ':')
			names += strcspn(names, " ") - 1;
		else
			re[n++] = *names == ' ' ? '|' : *names;
	}
	re[n] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "readelf -Ws %s | awk -v re='^(%s)$' '/Symbol table .\\.symtab/ { t = 1 } "
		 "t && $8 ~ re { print $8; exit }'",
		 so, re);
	f = popen(cmd, "r");
	assert_non_null(f);
	ret[0] = '\0';
	if (fgets(ret, (int)cap, f))
		ret[strcspn(ret, "\n")] = '\0';
	pclose(f);
	assert_true(ret[0]);
}

static void test_aliases(void **state)
{
	char src[128], so[128], cmd[512], first[64];
	struct elfsym *e;
	size_t i;
	FILE *f;

	snprintf(src, sizeof(src), "%s/aliases.s", tmpdir);
	snprintf(so, sizeof(so), "%s/aliases.so", tmpdir);
	f = fopen(src, "we");
	assert_non_null(f);
	fprintf(f, "\t.text\n");
	/* per case: the labels, 3 bytes of code, then .size for the sized names */
	for (i = 0; i < sizeof(alias_cases) / sizeof(alias_cases[0]); i++) {
		char names[256], *tok, *bind, *save = NULL;
		int pass;

		fprintf(f, "\t.p2align 4\n");
		for (pass = 0; pass < 2; pass++) {
			snprintf(names, sizeof(names), "%s", alias_cases[i].names);
			for (tok = strtok_r(names, " ", &save); tok;
			     tok = strtok_r(NULL, " ", &save)) {
				bind = strchr(tok, ':');
				*bind++ = '\0';
				if (pass == 1) {
					if (!strstr(bind, ":u"))
						fprintf(f, "\t.size %s, 3\n", tok);
					continue;
				}
				if (*bind == 'g')
					fprintf(f, "\t.globl %s\n", tok);
				else if (*bind == 'w')
					fprintf(f, "\t.weak %s\n", tok);
				fprintf(f, "\t.type %s, @function\n%s:\n", tok, tok);
			}
			if (pass == 0)
				fprintf(f, "\tnop\n\tnop\n\tret\n");
		}
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o %s %s", so, src);
	assert_int_equal(system(cmd), 0);

	e = open_path(so, NULL);
	assert_non_null(e);
	for (i = 0; i < sizeof(alias_cases) / sizeof(alias_cases[0]); i++) {
		char any[64];
		const char *want = alias_cases[i].want;
		int idx;

		snprintf(any, sizeof(any), "%.*s", (int)strcspn(alias_cases[i].names, ":"),
			 alias_cases[i].names);
		if (!want) {
			first_in_symtab(so, alias_cases[i].names, first, sizeof(first));
			want = first;
		}
		idx = elfsym__lookup(e, nm_addr(so, any) + 1);
		assert_true(idx >= 0);
		if (strcmp(elfsym__name(e, idx), want))
			fail_msg("case %zu (%s): '%s', want '%s'", i, alias_cases[i].names,
				 elfsym__name(e, idx), want);
	}
	elfsym__free(e);
}


/*
 * The runtimes' introspection symbols (elfsym.h): data objects by prefix (exported or not, in
 * .symtab only once stripped of it: gone), functions by exact name, nothing else; a name as
 * data where a function is wanted is not kept. And an image's own references (elfsym__ref):
 * alive until the last free (ASan's build checks).
 */
static void test_runtime_symbols(void **state)
{
	static const char *const asm_text =
		"\t.data\n"
		"\t.globl v8dbg_frametype_A\n\t.type v8dbg_frametype_A, @object\n"
		"\t.size v8dbg_frametype_A, 4\nv8dbg_frametype_A:\n\t.long 7\n"
		"\t.globl v8dbg_hidden_B\n\t.hidden v8dbg_hidden_B\n"
		"\t.type v8dbg_hidden_B, @object\n\t.size v8dbg_hidden_B, 4\nv8dbg_hidden_B:\n"
		"\t.long 9\n"
		"\t.type _PyRuntime, @object\n\t.size _PyRuntime, 8\n_PyRuntime:\n\t.quad 1\n"
		"\t.globl napi_module_register\n\t.type napi_module_register, @object\n"
		"\t.size napi_module_register, 8\nnapi_module_register:\n\t.quad 2\n"
		"\t.globl other_data\n\t.type other_data, @object\n\t.size other_data, 8\n"
		"other_data:\n\t.quad 3\n"
		"\t.text\n"
		"\t.globl Py_IsNone\n\t.type Py_IsNone, @function\nPy_IsNone:\n\tret\n"
		"\t.size Py_IsNone, 1\n"
		"\t.globl gHotSpotVMStructs_fn\n\t.type gHotSpotVMStructs_fn, @function\n"
		"gHotSpotVMStructs_fn:\n\tret\n\t.size gHotSpotVMStructs_fn, 1\n";
	char src[128], so[128], stripped[160], cmd[1024];
	struct elfsym_rtsym r;
	struct elfsym *e;
	FILE *f;

	(void)state;
	snprintf(src, sizeof(src), "%s/rt.s", tmpdir);
	snprintf(so, sizeof(so), "%s/rt.so", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/rt-stripped.so", tmpdir);
	f = fopen(src, "we");
	assert_non_null(f);
	fputs(asm_text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o %s %s && strip -o %s %s", so, src,
		 stripped, so);
	assert_int_equal(system(cmd), 0);

	e = open_path(so, NULL);
	assert_non_null(e);
	assert_true(elfsym__native(e));
	assert_int_equal(elfsym__rt_count(e), 4);
	assert_true(elfsym__rt_find(e, "v8dbg_frametype_A", &r));
	assert_true(r.object && r.exported);
	assert_int_equal(r.size, 4);
	assert_int_equal(r.value, nm_addr(so, "v8dbg_frametype_A"));
	assert_true(elfsym__rt_find(e, "v8dbg_hidden_B", &r));
	assert_true(r.object && !r.exported); /* hidden: a local of .symtab once linked */
	assert_true(elfsym__rt_find(e, "_PyRuntime", &r));
	assert_true(r.object && !r.exported);
	assert_int_equal(r.value, nm_addr(so, "_PyRuntime"));
	assert_true(elfsym__rt_find(e, "Py_IsNone", &r));
	assert_true(!r.object && r.exported);
	assert_int_equal(r.value, nm_addr(so, "Py_IsNone"));
	/* a function under a data prefix, data under a function's name, other data: none */
	assert_false(elfsym__rt_find(e, "gHotSpotVMStructs_fn", &r));
	assert_false(elfsym__rt_find(e, "napi_module_register", &r));
	assert_false(elfsym__rt_find(e, "other_data", &r));
	assert_false(elfsym__rt_too_many(e));
	/* two owners: the first free leaves it whole */
	assert_ptr_equal(elfsym__ref(e), e);
	elfsym__free(e);
	assert_true(elfsym__rt_find(e, "Py_IsNone", &r));
	assert_string_equal(r.name, "Py_IsNone");
	elfsym__free(e);

	/* stripped: .dynsym alone, only what is exported */
	e = open_path(stripped, NULL);
	assert_non_null(e);
	assert_int_equal(elfsym__rt_count(e), 2);
	assert_true(elfsym__rt_find(e, "v8dbg_frametype_A", &r));
	assert_true(r.exported);
	assert_true(elfsym__rt_find(e, "Py_IsNone", &r));
	assert_false(elfsym__rt_find(e, "v8dbg_hidden_B", &r));
	elfsym__free(e);
}

/* libc's write: with libc6-dbg's debug file perf names it __GI___libc_write (a local alias in
 * the debug file's .symtab), without it write (.dynsym's weak write and __write). */
static void test_libc_write(void **state)
{
	char path[PATH_MAX], dbg[PATH_MAX];
	const uint8_t *id;
	struct elfsym *e;
	size_t n, i;
	void *libc, *fn;
	Dl_info info;
	int idx, len;

	/* libc's own write, not a sanitizer's interceptor of that name */
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(libc);
	fn = dlsym(libc, "write");
	assert_true(fn && dladdr(fn, &info) && info.dli_fname);
	snprintf(path, sizeof(path), "%s", info.dli_fname);
	e = open_path(path, NULL);
	assert_non_null(e);
	n = elfsym__build_id(e, &id);
	len = snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", n ? id[0] : 0);
	for (i = 1; i < n; i++)
		len += snprintf(dbg + len, sizeof(dbg) - (size_t)len, "%02x", id[i]);
	snprintf(dbg + len, sizeof(dbg) - (size_t)len, ".debug");
	idx = elfsym__lookup(e, (uint64_t)((uintptr_t)fn - (uintptr_t)info.dli_fbase));
	assert_true(idx >= 0);
	assert_string_equal(elfsym__name(e, idx),
			    n && !access(dbg, R_OK) ? "__GI___libc_write" : "write");
	elfsym__free(e);
	dlclose(libc);
}

static void id_of(const char *path, struct filecache_id *ret)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	filecache_id_of(&st, ret);
}

static void test_share(void **state)
{
	struct elfshare *sh = elfshare__new();
	uint64_t leaf = nm_addr(bin, "symbols_leaf");
	struct elfsym *a = open_path(bin, NULL), *b, *c;
	struct filecache_id id, other;
	int idx;

	(void)state;
	assert_non_null(sh);
	assert_non_null(a);
	id_of(bin, &id);
	assert_null(elfshare__find(sh, &id)); /* nothing published */
	elfshare__publish(sh, a, &id);
	assert_int_equal(elfshare__count(sh), 1);
	/* another file (another size at the same device and inode: changed): not it */
	other = id;
	other.size++;
	assert_null(elfshare__find(sh, &other));
	b = elfshare__find(sh, &id);
	assert_ptr_equal(b, a);
	/* the publisher lets go first: the borrower's image stays whole */
	elfsym__free(a);
	idx = elfsym__lookup(b, leaf);
	assert_true(idx >= 0);
	assert_string_equal(elfsym__name(b, idx), "symbols_leaf");
	assert_int_equal(elfshare__count(sh), 1); /* still held: still found */
	c = elfshare__find(sh, &id);
	assert_ptr_equal(c, b);
	elfsym__free(c);
	elfsym__free(b); /* the last: freed, and found no more */
	assert_int_equal(elfshare__count(sh), 0);
	assert_null(elfshare__find(sh, &id));

	/* published again for the same file (a debug file came): the new one is found; the old
	 * one's last free leaves the new entry alone */
	a = open_path(bin, NULL);
	b = open_path(bin, NULL);
	elfshare__publish(sh, a, &id);
	c = elfshare__find(sh, &id); /* a borrower of the old one */
	assert_ptr_equal(c, a);
	elfshare__publish(sh, b, &id);
	assert_int_equal(elfshare__count(sh), 1);
	elfsym__free(a);
	elfsym__free(c); /* the old one's last */
	assert_int_equal(elfshare__count(sh), 1);
	c = elfshare__find(sh, &id);
	assert_ptr_equal(c, b);
	elfsym__free(c);
	elfsym__free(b);
	assert_int_equal(elfshare__count(sh), 0);
	elfshare__free(sh);
}

/*
 * One image published as two files (a copy of the same build-id and size: read once), found as
 * either, gone with its last free; and kept (elfshare__keep) past its last owner's free until
 * its deadline, found meanwhile, then freed (ASan's build checks), a second last free not kept
 * again; an image larger than the keep bound not kept at all.
 */
static void test_share_keep_and_copies(void **state)
{
	struct elfshare *sh = elfshare__new();
	struct elfsym *a = open_path(bin, NULL), *b;
	struct filecache_id id, copy;
	struct elfshare_stats ss;

	(void)state;
	assert_non_null(sh);
	assert_non_null(a);
	id_of(bin, &id);
	copy = id;
	copy.ino++; /* another inode: the copy */
	elfshare__publish(sh, a, &id);
	elfshare__publish(sh, a, &copy);
	assert_int_equal(elfshare__count(sh), 2);
	assert_true(elfshare__has(sh, id.ino) && elfshare__has(sh, copy.ino));
	b = elfshare__find(sh, &copy);
	assert_ptr_equal(b, a);
	elfsym__free(b);
	elfshare__publish(sh, a, &copy); /* again as the copy: still one entry for it */
	assert_int_equal(elfshare__count(sh), 2);
	elfsym__free(a); /* no keeping: gone, as both */
	assert_int_equal(elfshare__count(sh), 0);
	assert_false(elfshare__has(sh, copy.ino));

	/* kept for 300 ms after the last owner's free */
	elfshare__keep(sh, 300 * 1000000ull, 1ull << 30);
	a = open_path(bin, NULL);
	elfshare__publish(sh, a, &id);
	elfsym__free(a);
	elfshare__stats(sh, &ss);
	assert_int_equal(ss.kept, 1);
	assert_int_equal(ss.kept_total, 1);
	assert_true(ss.kept_bytes > 0);
	b = elfshare__find(sh, &id);
	assert_ptr_equal(b, a);
	assert_true(elfsym__lookup(b, nm_addr(bin, "symbols_leaf")) >= 0);
	elfsym__free(b); /* a borrower's free: still kept */
	elfshare__stats(sh, &ss);
	assert_int_equal(ss.kept, 1);
	assert_int_equal(ss.kept_found, 1);
	usleep(400 * 1000);
	assert_null(elfshare__find(sh, &id)); /* past its deadline: freed */
	elfshare__stats(sh, &ss);
	assert_int_equal(ss.kept, 0);
	assert_int_equal(ss.kept_expired, 1);
	assert_int_equal(elfshare__count(sh), 0);

	/* larger than the bound: not kept */
	elfshare__keep(sh, 300 * 1000000ull, 16);
	a = open_path(bin, NULL);
	elfshare__publish(sh, a, &id);
	elfsym__free(a);
	assert_int_equal(elfshare__count(sh), 0);

	/* kept when the registry goes: freed with it */
	elfshare__keep(sh, 60 * 1000000000ull, 1ull << 30);
	a = open_path(bin, NULL);
	elfshare__publish(sh, a, &id);
	elfsym__free(a);
	assert_int_equal(elfshare__count(sh), 1);
	elfshare__free(sh);
}

struct borrower {
	struct elfshare *sh;
	struct filecache_id id;
	uint64_t leaf;
	int stop;
	unsigned long found;
};

static void *borrow_loop(void *arg)
{
	struct borrower *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		struct elfsym *e = elfshare__find(b->sh, &b->id);
		int idx;

		if (!e)
			continue;
		idx = elfsym__lookup(e, b->leaf);
		if (idx >= 0 && !strcmp(elfsym__name(e, idx), "symbols_leaf"))
			b->found++;
		elfsym__free(e);
	}
	return NULL;
}

static void test_share_threads(void **state)
{
	struct borrower b = { .sh = elfshare__new(), .leaf = nm_addr(bin, "symbols_leaf") };
	pthread_t t;
	int i;

	(void)state;
	assert_non_null(b.sh);
	id_of(bin, &b.id);
	assert_int_equal(pthread_create(&t, NULL, borrow_loop, &b), 0);
	/* the publisher's life of an image: read, published, let go (its last free, or the
	 * borrower's) */
	for (i = 0; i < 200; i++) {
		struct elfsym *e = open_path(bin, NULL);

		elfshare__publish(b.sh, e, &b.id);
		usleep(200);
		elfsym__free(e);
	}
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	assert_true(b.found > 0); /* the borrower did find and read them */
	assert_int_equal(elfshare__count(b.sh), 0);
	elfshare__free(b.sh);
}

static int setup(void **state)
{
	const char *out = getenv("OUTPUT");

	snprintf(bin, sizeof(bin), "%s/workloads/symbols", out && *out ? out : "build");
	if (access(bin, X_OK)) {
		fprintf(stderr, "missing %s (make workloads)\n", bin);
		return -1;
	}
	return helpers_tmpdir_new(tmpdir, sizeof(tmpdir), "elfsym");
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_libc_write),
		cmocka_unit_test(test_runtime_symbols),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_share_keep_and_copies),
		cmocka_unit_test(test_share_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
