// SPDX-License-Identifier: MIT
/* elfsym on the symbols workload ($OUTPUT/workloads/symbols): symbols at the addresses nm gives,
 * file offsets, build-id, inline frames, and a stripped copy with its debug file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/daemon/symbols/elfsym.h"

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
	o.root = tmpdir; /* the binary's path resolves under this root */
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

static int setup(void **state)
{
	const char *out = getenv("OUTPUT");

	snprintf(bin, sizeof(bin), "%s/workloads/symbols", out && *out ? out : "build");
	if (access(bin, X_OK)) {
		fprintf(stderr, "missing %s (make workloads)\n", bin);
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ember-test-elfsym.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_debug_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
