// SPDX-License-Identifier: MIT
/*
 * unwind: the tables in a real sampler's maps (root, BPF; a failure under CI without them).
 * A process is listed with its mappings, and a file gets its table only when a walk reaches it
 * (frame pointers there until then, counted); once built, every process listing
 * the file is listed again with it, and a second process mapping the same files shares them, a file bigger than the whole array is not held (counted),
 * a table no process uses is evicted for room, tables in use are not (the build is refused), and
 * a forgotten process leaves the map. A table's index by address block (no BPF needed) leads the
 * walker's search to the row a search of the whole file finds, for every address.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ember/core/base/clock.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/unwind/unwind.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static bool need_root(void)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return true;
	if (ci && !strcmp(ci, "true"))
		fail_msg("the unwind tables need root (BPF), and CI must test them");
	return false;
}

/* A sampler whose rows array holds @rows rows (8 bytes each). */
static struct sampler *new_sampler(uint32_t rows)
{
	struct sampler_opts o = { .freq_hz = 9, .ringbuf_bytes = 1 << 16, .tick_ms = 1000,
				  .unwind_rows = rows, .unwind_procs = 64 };
	struct sampler *s = NULL;
	char err[256];

	libbpf_set_print(silent);
	if (sampler__new(&o, &s, err, sizeof(err))) {
		print_error("sampler: %s\n", err);
		return NULL;
	}
	return s;
}

/* The fd of the sampling program's map named @name (by the program's map ids), or -1. */
static int prog_map_fd(struct sampler *s, const char *name)
{
	struct sampler_stats st;
	struct bpf_prog_info pi = { 0 };
	uint32_t ids[64], len = sizeof(pi), i;
	int pfd, fd;

	sampler__stats(s, &st);
	pfd = bpf_prog_get_fd_by_id(st.prog_id);
	if (pfd < 0)
		return -1;
	pi.nr_map_ids = 64;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(pfd, &pi, &len)) {
		close(pfd);
		return -1;
	}
	close(pfd);
	for (i = 0; i < pi.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = { 0 };
		uint32_t ml = sizeof(mi);

		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Rows are written through a mapping of the array's pages (no bpf() call): what the walker
 * reads is what was written, at a start that is not page-aligned and across pages, and the
 * rows around are untouched.
 */
static void test_rows_written(void **state)
{
	enum { START = 1234, N = 3000 };
	struct ember_unwind_prow rows[N], got;
	struct sampler_stats st;
	struct sampler *s;
	uint32_t k;
	int fd;

	(void)state;
	if (!need_root())
		skip();
	s = new_sampler(100000);
	assert_non_null(s);
	for (k = 0; k < N; k++)
		rows[k] = (struct ember_unwind_prow){ .pc = 0x1000 + k * 7, .rule = k ^ 0x5a5a };
	sampler__stats(s, &st);
	assert_int_equal(st.rows_mapped_writes, 0);
	assert_int_equal(sampler__unwind_write_rows(s, START, rows, N), 0);
	sampler__stats(s, &st);
	assert_int_equal(st.rows_mapped_writes, 1);
	fd = prog_map_fd(s, "unwind_rows");
	assert_true(fd >= 0);
	for (k = 0; k < N; k++) {
		assert_int_equal(bpf_map_lookup_elem(fd, &(uint32_t){ START + k }, &got), 0);
		assert_int_equal(got.pc, rows[k].pc);
		assert_int_equal(got.rule, rows[k].rule);
	}
	assert_int_equal(bpf_map_lookup_elem(fd, &(uint32_t){ START - 1 }, &got), 0);
	assert_int_equal(got.pc, 0);
	assert_int_equal(bpf_map_lookup_elem(fd, &(uint32_t){ START + N }, &got), 0);
	assert_int_equal(got.pc, 0);
	/* out of the array: refused, nothing written */
	assert_int_equal(sampler__unwind_write_rows(s, 100000 - 10, rows, 11), -EINVAL);
	close(fd);
	sampler__free(s);
}

/* A child that sleeps: a process mapping @path (NULL: this binary forked), pid or -1. */
static pid_t spawn(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with a test that failed before reaping it */
		if (path)
			execl(path, path, "-c", "import time; time.sleep(30)", (char *)NULL);
		pause();
		_exit(0);
	}
	usleep(300000); /* exec and ld.so done */
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void work_all(struct unwinder *u)
{
	int i;

	for (i = 0; i < 200 && unwinder__work(u) > 0; i++)
		;
}

/* The start of @pid's first executable file mapping whose path contains @needle (NULL: any),
 * read from @root/@pid/maps; 0: none. With @reach_u, a walk of @pid reached it (every one when
 * @needle is NULL). */
static uint64_t exec_maps(const char *root, uint32_t pid, const char *needle,
			  struct unwinder *reach_u)
{
	char path[600], line[1024], perms[8], file[512];
	unsigned long long start, end, ino;
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", root, pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %511s", &start, &end, perms, &ino,
			   file) < 4 || perms[2] != 'x' || !ino)
			continue;
		if (needle && !strstr(file, needle))
			continue;
		if (reach_u) {
			uint64_t pc = start;

			unwinder__reached(reach_u, pid, &pc, 1, 1); /* a walk's sampled pc there */
		}
		if (!found)
			found = start;
		if (needle)
			break;
	}
	fclose(f);
	return found;
}

/* Walks of @pid reached every file it maps: their tables are built. */
static void reach_all(struct unwinder *u, const char *root, uint32_t pid)
{
	(void)exec_maps(root, pid, NULL, u);
	work_all(u);
}

static void test_list_and_share(void **state)
{
	struct sampler *s;
	struct unwinder *u;
	struct unwind_stats st;
	uint64_t tables, t0;
	pid_t child;

	(void)state;
	if (!need_root())
		skip();
	s = new_sampler(1 << 20);
	assert_non_null(s);
	u = unwinder__new(s, NULL);
	assert_non_null(u);
	unwinder__note_pid(u, (uint32_t)getpid());
	work_all(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	/* listed, but no walk reached its files yet: the vDSO's table only, none built */
	assert_int_equal(st.builds, 0);
	assert_int_equal(st.tables, 1);
	assert_true(st.files_unbuilt >= 3);
	reach_all(u, "/proc", (uint32_t)getpid());
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.procs_pending, 0);
	assert_int_equal(st.files_unbuilt, 0);
	assert_true(st.build_asks >= 3);
	assert_true(st.tables >= 3); /* libc, ld.so, this binary (and the vDSO) */
	assert_true(st.rows_used > 20000 && st.rows_used <= st.rows_capacity);
	/* the headers and block indexes: bounded by the rows they index */
	assert_true(st.index_used >= 2 * st.tables &&
		    st.index_used <= st.rows_used / 16 + 4 * st.tables);
	assert_true(st.rows_used + st.index_used <= st.rows_capacity);
	assert_int_equal(st.rows_capacity, 1 << 20);
	assert_int_equal(st.bytes, (uint64_t)(1 << 20) * 8);
	assert_int_equal(st.ready_count, 1);
	tables = st.tables;
	/* a fork maps the same files: listed without a new table */
	child = spawn(NULL);
	unwinder__note_pid(u, (uint32_t)child);
	work_all(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 2);
	assert_int_equal(st.tables, tables);
	/* forgotten: its list leaves the map */
	unwinder__forget_pid(u, (uint32_t)child);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(sampler__unwind_del_proc(s, (uint32_t)child), -ENOENT);
	/* an exec or exit the BPF program reported (it deleted the list then): a list written
	 * after that time is deleted here, one written before is left to the program's delete
	 * (not made here: the list stays, and the skip is counted) */
	t0 = mono_ns();
	unwinder__note_pid(u, (uint32_t)child);
	work_all(u);
	unwinder__forget_pid_at(u, (uint32_t)child, t0);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.dels_skipped, 0);
	assert_int_equal(sampler__unwind_del_proc(s, (uint32_t)child), -ENOENT);
	unwinder__note_pid(u, (uint32_t)child);
	work_all(u);
	unwinder__forget_pid_at(u, (uint32_t)child, mono_ns());
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.dels_skipped, 1);
	assert_int_equal(sampler__unwind_del_proc(s, (uint32_t)child), 0);
	reap(child);
	/* a process that does not exist: nothing listed, counted */
	unwinder__note_pid(u, 999999999);
	work_all(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);
	assert_true(st.maps_errors >= 1);
	unwinder__free(u);
	sampler__free(s);
}

/*
 * two processes of this binary listed, no table built; a walk of one reaches
 * libc: libc's table is built with this binary's (every whole walk ends in the executable and
 * the C library), not ld.so's, and both lists are written again with them (the other's without
 * a /proc read); its samples meanwhile are counted as walked by frame pointer there. A walk
 * reaching a built file asks nothing more; one reaching ld.so builds it.
 */
static void test_reached(void **state)
{
	/* the two builds in one unwinder__work() call, whatever the machine's speed: the files
	 * are built in address order, this binary first, and under ASan (a large .eh_frame) beside
	 * the first lane its build alone outlasted the default 20 ms budget; libc's then waited for
	 * the next call, this process's list was written in each (incomplete, then whole: 3 lists
	 * with the child's, not 2; fresh-clone runs U and V, not S and T). Here the count of one
	 * call's lists is what is checked. */
	struct unwind_opts o = UNWIND_OPTS_DEFAULT;
	struct unwind_stats st, st0;
	struct sampler *s;
	struct unwinder *u;
	uint64_t libc, ldso, pc;
	pid_t child;

	(void)state;
	if (!need_root())
		skip();
	o.work_budget_ns = 60ull * 1000000000;
	s = new_sampler(1 << 20);
	assert_non_null(s);
	u = unwinder__new(s, &o);
	assert_non_null(u);
	child = spawn(NULL);
	unwinder__note_pid(u, (uint32_t)getpid());
	unwinder__note_pid(u, (uint32_t)child);
	work_all(u);
	unwinder__stats(u, &st0);
	assert_int_equal(st0.procs, 2);
	assert_int_equal(st0.builds, 0);
	assert_int_equal(st0.reach_fp_samples, 0);
	libc = exec_maps("/proc", (uint32_t)getpid(), "libc.so", NULL);
	ldso = exec_maps("/proc", (uint32_t)getpid(), "ld-linux", NULL);
	assert_true(libc && ldso);
	/* a walk of this process whose sampled pc is in libc */
	pc = libc + 16;
	unwinder__reached(u, (uint32_t)getpid(), &pc, 1, 7);
	unwinder__stats(u, &st);
	assert_int_equal(st.build_asks, 2); /* libc, and this binary with it */
	assert_int_equal(st.reach_fp_samples, 7);
	assert_int_equal(st.procs_pending, 1);
	work_all(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.builds, 2);
	assert_int_equal(st.tables, 3); /* the vDSO's, libc's, this binary's */
	assert_int_equal(st.files_unbuilt, st0.files_unbuilt - 2); /* ld.so's left */
	assert_int_equal(st.lists, st0.lists + 2); /* this process's and the child's */
	assert_int_equal(st.procs_pending, 0);
	/* libc has its table in both lists now: nothing asked, nothing counted */
	unwinder__reached(u, (uint32_t)child, &pc, 1, 3);
	unwinder__stats(u, &st);
	assert_int_equal(st.build_asks, 2);
	assert_int_equal(st.reach_fp_samples, 7);
	assert_int_equal(st.procs_pending, 0);
	/* the child's walk reaches ld.so: built, 2 lists again */
	pc = ldso + 16;
	unwinder__reached(u, (uint32_t)child, &pc, 1, 1);
	work_all(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.builds, 3);
	assert_int_equal(st.files_unbuilt, st0.files_unbuilt - 3);
	assert_int_equal(st.lists, st0.lists + 4);
	/* the child's image ends (its exit or exec): a sample of it delivered after the event
	 * still asks for the table of a file it mapped without one (its ended state keeps those
	 * mappings), counted as walked by frame pointers; its list left the map */
	pc = exec_maps("/proc", (uint32_t)child, "libcmocka", NULL) + 16;
	assert_true(pc > 16);
	unwinder__forget_pid(u, (uint32_t)child);
	unwinder__stats(u, &st0);
	assert_int_equal(st0.procs, 1);
	assert_int_equal(sampler__unwind_del_proc(s, (uint32_t)child), -ENOENT);
	unwinder__reached(u, (uint32_t)child, &pc, 1, 5);
	unwinder__stats(u, &st);
	assert_int_equal(st.build_asks, st0.build_asks + 1);
	assert_int_equal(st.reach_fp_samples, st0.reach_fp_samples + 5);
	assert_int_equal(st.procs_pending, 0); /* nothing listed for an ended image */
	reap(child);
	unwinder__free(u);
	sampler__free(s);
}

/* 100000 rows: libc and this binary fit; python3.11's 65000-row table only once libc's is free */
static void test_room(void **state)
{
	const char *py = "/usr/bin/python3.11";
	struct sampler *s;
	struct unwinder *u;
	struct unwind_stats st;
	pid_t a, b;

	(void)state;
	if (!need_root())
		skip();
	if (access(py, X_OK))
		skip();
	/* smaller than one table: not held, counted */
	s = new_sampler(4096);
	assert_non_null(s);
	u = unwinder__new(s, NULL);
	assert_non_null(u);
	unwinder__note_pid(u, (uint32_t)getpid());
	work_all(u);
	reach_all(u, "/proc", (uint32_t)getpid());
	unwinder__stats(u, &st);
	assert_true(st.too_big >= 1); /* libc's 28000 rows */
	assert_int_equal(st.procs, 1); /* listed all the same: frame pointers there */
	unwinder__free(u);
	sampler__free(s);

	s = new_sampler(100000);
	assert_non_null(s);
	u = unwinder__new(s, NULL);
	assert_non_null(u);
	a = spawn(NULL); /* libc + this binary */
	unwinder__note_pid(u, (uint32_t)a);
	unwinder__sampled(u, (uint32_t)a); /* in use: its tables stay */
	work_all(u);
	reach_all(u, "/proc", (uint32_t)a);
	b = spawn(py); /* python3.11 + libc (shared) + libm, ...: no room for python's while a runs */
	unwinder__note_pid(u, (uint32_t)b);
	work_all(u);
	reach_all(u, "/proc", (uint32_t)b);
	unwinder__stats(u, &st);
	assert_int_equal(st.evictions, 0);
	assert_true(st.refused >= 1);
	/* a is gone: its tables are unused and go for python's */
	unwinder__forget_pid(u, (uint32_t)a);
	unwinder__forget_pid(u, (uint32_t)b);
	reap(a);
	usleep(100000);
	unwinder__note_pid(u, (uint32_t)b);
	work_all(u);
	reach_all(u, "/proc", (uint32_t)b);
	unwinder__stats(u, &st);
	assert_true(st.rows_used <= st.rows_capacity);
	reap(b);
	unwinder__free(u);
	sampler__free(s);
}

/* Writes @text to @dir/@name. */
static void put_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

/*
 * A process whose files cannot be opened any more (it exited between the read of its maps and
 * the opening of its files: a short-lived one) is not the files' failure: the next process that
 * maps them gets their tables at once. (Marked failed, libc stayed without a table for a minute
 * for every process: a CI run walked sysloop by frame pointer for its whole life.) A fake /proc:
 * PID A has its maps but no root/ nor map_files/; PID B the same maps and root -> /.
 */
static void test_gone_is_not_failed(void **state)
{
	struct unwind_opts o = UNWIND_OPTS_DEFAULT;
	char root[] = "/tmp/ember-unwind.XXXXXX", dir[600], maps[1 << 16], link[700];
	struct unwind_stats st;
	struct sampler *s;
	struct unwinder *u;
	ssize_t n;
	FILE *f;

	(void)state;
	if (!need_root())
		skip();
	assert_non_null(mkdtemp(root));
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	n = (ssize_t)fread(maps, 1, sizeof(maps), f);
	fclose(f);
	assert_true(n > 0 && n < (ssize_t)sizeof(maps));
	snprintf(dir, sizeof(dir), "%s/4100001", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put_file(dir, "maps", maps, (size_t)n);
	snprintf(dir, sizeof(dir), "%s/4100002", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put_file(dir, "maps", maps, (size_t)n);
	snprintf(link, sizeof(link), "%s/root", dir);
	assert_int_equal(symlink("/", link), 0);

	s = new_sampler(1 << 20);
	assert_non_null(s);
	o.proc_root = root;
	u = unwinder__new(s, &o);
	assert_non_null(u);
	unwinder__note_pid(u, 4100001);
	work_all(u);
	reach_all(u, root, 4100001); /* its walks asked for them */
	unwinder__stats(u, &st);
	assert_int_equal(st.tables, 1); /* the vDSO's only: no file could be opened */
	assert_true(st.build_asks >= 3);
	unwinder__note_pid(u, 4100002);
	work_all(u);
	unwinder__stats(u, &st);
	/* libc, ld.so, this binary: still wanted, built at 4100002's list, not in a minute */
	assert_true(st.tables >= 3);
	assert_int_equal(st.files_unbuilt, 0);
	/* 4100001 exits without a notification: the sweep forgets it, not the live 4100002 */
	assert_int_equal(unwinder__sweep(u), 0);
	snprintf(dir, sizeof(dir), "%s/4100001/maps", root);
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/4100001", root);
	rmdir(dir);
	assert_int_equal(unwinder__sweep(u), 1);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs_swept, 1);
	assert_int_equal(unwinder__sweep(u), 0);
	unwinder__forget_pid(u, 4100002);
	unwinder__free(u);
	sampler__free(s);
	unlink(link);
	snprintf(dir, sizeof(dir), "%s/4100002/maps", root);
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/4100002", root);
	rmdir(dir);
	rmdir(root);
}

/* The row covering @pc the way bpf/unwind.bpf.h finds it: the index's block, then the halvings
 * over its rows. Its index among the rows, or -1 (none). */
static long index_lookup(const struct ember_unwind_prow *t, size_t total, uint32_t pc)
{
	uint32_t nblocks = t[0].rule, base = t[1].pc, shift = t[1].rule, k, lo, hi, b, n, half;
	const struct ember_unwind_prow *rows = &t[EMBER_UNWIND_HDR + nblocks];
	size_t nrows = total - EMBER_UNWIND_HDR - nblocks;

	if (pc < base)
		return -1;
	k = (pc - base) >> shift;
	if (k >= nblocks)
		k = nblocks - 1;
	lo = t[EMBER_UNWIND_HDR + k].pc;
	hi = t[EMBER_UNWIND_HDR + k].rule;
	assert_true(lo <= hi && hi < nrows);
	for (b = lo, n = hi - lo + 1; n > 1; n -= half) {
		half = n / 2;
		if (rows[b + half].pc <= pc)
			b += half;
	}
	return rows[b].pc > pc ? -1 : (long)b;
}

/* The last row with row.pc <= @pc by a search of all @n, or -1. */
static long whole_lookup(const struct ember_unwind_row *r, size_t n, uint32_t pc)
{
	long lo = 0, hi = (long)n - 1, mid, best = -1;

	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (r[mid].pc <= pc) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* Rows with dense code, sparse stretches and a 4 MiB hole (a file's text and a far section), one
 * row, and rows at the top of the 32-bit address space: every address from before the first row
 * to past the last finds the row a whole-file search finds, and the index stays under rows / 16 + 2
 * blocks. */
static void test_index(void **state)
{
	static const struct { uint32_t first; size_t n; int gaps; } cases[] = {
		{ 0x1040, 20000, 1 }, { 0x400000, 1, 0 }, { 0xfff00000u, 3000, 0 }, { 0x2000, 40, 1 },
	};
	struct ember_unwind_row *rows;
	struct ember_unwind_prow *buf = NULL;
	size_t cap = 0, c, i, total, nblocks;
	uint64_t lossy = 0, pc, end;
	uint32_t x = 12345;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		rows = calloc(cases[c].n, sizeof(*rows));
		assert_non_null(rows);
		pc = cases[c].first;
		for (i = 0; i < cases[c].n; i++) {
			x = x * 1103515245u + 12345u;
			rows[i].pc = (uint32_t)pc;
			rows[i].cfa_type = EMBER_CFA_SP;
			rows[i].cfa_off = 8 * (int32_t)(1 + i % 7);
			pc += 1 + (x >> 16) % 40; /* 1..40 bytes a row */
			if (cases[c].gaps && i % 997 == 0)
				pc += (x >> 8) % 8192; /* sparse stretches */
			if (cases[c].gaps && i == cases[c].n / 2)
				pc += 4u << 20;
		}
		total = unwind_pack_table(rows, cases[c].n, 42, &buf, &cap, &lossy);
		nblocks = buf[0].rule;
		assert_int_equal(buf[0].pc, 42);
		assert_int_equal(total, EMBER_UNWIND_HDR + nblocks + cases[c].n);
		assert_true(nblocks >= 1 && nblocks <= cases[c].n / 16 + 2);
		/* the rows themselves, in order, after the index */
		assert_int_equal(buf[EMBER_UNWIND_HDR + nblocks].pc, rows[0].pc);
		end = (uint64_t)rows[cases[c].n - 1].pc + 70000;
		if (end > 0xffffffffu)
			end = 0xffffffffu;
		for (pc = rows[0].pc >= 300 ? rows[0].pc - 300 : 0; pc <= end; pc++)
			if (index_lookup(buf, total, (uint32_t)pc) !=
			    whole_lookup(rows, cases[c].n, (uint32_t)pc))
				fail_msg("case %zu: pc %#llx: index row %ld, whole-file row %ld", c,
					 (unsigned long long)pc, index_lookup(buf, total, (uint32_t)pc),
					 whole_lookup(rows, cases[c].n, (uint32_t)pc));
		free(rows);
	}
	assert_int_equal(lossy, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_list_and_share),
		cmocka_unit_test(test_rows_written),
		cmocka_unit_test(test_reached),
		cmocka_unit_test(test_room),
		cmocka_unit_test(test_gone_is_not_failed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
