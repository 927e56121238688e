// SPDX-License-Identifier: MIT
/*
 * The symbolizer against live processes (tests/workloads/symbols and jit), stripped copies with
 * separate debug files, /proc/kallsyms, and a fake /proc tree for the perf-map edge cases.
 * Workloads come from $OUTPUT/workloads (make workloads; the unit target builds them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ember/daemon/symbols/kresolve.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/symbols/symbolizer.h"

#include "helpers.h"

#define MAX_SYMS 8

struct child {
	pid_t pid;
	FILE *out;
	int nsyms;
	char names[MAX_SYMS][64];
	uint64_t addrs[MAX_SYMS];
};

static char tmpdir[64];
static char workloads[PATH_MAX - 64];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	if (r != 0)
		fail_msg("command failed (%d): %s", r, cmd);
}

static void sh_out(char *buf, size_t cap, const char *cmd)
{
	FILE *f = popen(cmd, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	pclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

/* Reads "name 0xaddr" lines until @until (e.g. "ready"). */
static void read_until(struct child *c, const char *until)
{
	char line[256];

	while (fgets(line, sizeof(line), c->out)) {
		char name[64];
		void *addr;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, until))
			return;
		if (sscanf(line, "%63s %p", name, &addr) == 2 && c->nsyms < MAX_SYMS) {
			snprintf(c->names[c->nsyms], sizeof(c->names[0]), "%s", name);
			c->addrs[c->nsyms++] = (uint64_t)(uintptr_t)addr;
		}
	}
	fail_msg("child %d ended before '%s'", (int)c->pid, until);
}

static uint64_t addr_of(const struct child *c, const char *name)
{
	int i;

	for (i = 0; i < c->nsyms; i++)
		if (!strcmp(c->names[i], name))
			return c->addrs[i];
	fail_msg("no address for %s", name);
	return 0;
}

static void spawn(struct child *c, const char *path, const char *const *args)
{
	const char *argv[8] = { path };
	int fds[2], i;

	memset(c, 0, sizeof(*c));
	for (i = 0; args && args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	assert_int_equal(pipe(fds), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		/* a failed assertion longjmps past reap(): never leave a workload behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	c->out = fdopen(fds[0], "r");
	read_until(c, "ready");
}

static void reap(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		waitpid(c->pid, NULL, 0);
	}
	if (c->out)
		fclose(c->out);
	c->pid = 0;
	c->out = NULL;
}

/* Symbolizes and joins the frames root first: "a;b;c". */
static const char *user_stack(struct symbolizer *s, struct strtab *st, uint32_t pid,
			      const uint64_t *ips, size_t n)
{
	static char buf[4096];
	uint32_t ids[64];
	int k, i;
	size_t len = 0;

	k = symbolizer__user(s, pid, ips, n, ids, 64);
	assert_true(k >= 0);
	buf[0] = '\0';
	for (i = 0; i < k; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ";" : "",
					strtab__str(st, ids[i]));
	return buf;
}

static const char *kernel_stack(struct symbolizer *s, struct strtab *st, const uint64_t *ips,
				size_t n)
{
	static char buf[4096];
	uint32_t ids[64];
	int k, i;
	size_t len = 0;

	k = symbolizer__kernel(s, ips, n, ids, 64);
	assert_true(k >= 0);
	buf[0] = '\0';
	for (i = 0; i < k; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ";" : "",
					strtab__str(st, ids[i]));
	return buf;
}

/* Writes @text to @path (a fake kallsyms). */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The address of text symbol @name in /proc/kallsyms, of one of @types; 0: none (or hidden). */
static uint64_t kallsyms_addr(const char *name, const char *types)
{
	char line[512], sym[256], type;
	unsigned long long a, ret = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	assert_non_null(f);
	while (!ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) &&
		    strchr(types, type))
			ret = a;
	fclose(f);
	return ret;
}

static void workload(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", workloads, name);
	if (access(buf, X_OK))
		fail_msg("missing workload %s (make workloads)", buf);
}

/* ---------------------------------------------------------------------------------------- */

static void test_live_process(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer *s;
	struct symbolizer_stats ss;
	struct child c;
	char path[PATH_MAX], cmd[PATH_MAX + 64], nmout[64];
	uint64_t leaf, outer, ips[3];

	workload(path, "symbols");
	spawn(&c, path, NULL);
	leaf = addr_of(&c, "symbols_leaf");
	outer = addr_of(&c, "symbols_outer");
	/* nm agrees on the layout: the same load bias for both functions */
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3==\"symbols_leaf\"{print $1}'", path);
	sh_out(nmout, sizeof(nmout), cmd);
	assert_true(nmout[0]);
	{
		uint64_t nm_leaf = strtoull(nmout, NULL, 16);

		snprintf(cmd, sizeof(cmd), "nm %s | awk '$3==\"symbols_outer\"{print $1}'", path);
		sh_out(nmout, sizeof(nmout), cmd);
		assert_int_equal(leaf - nm_leaf, outer - strtoull(nmout, NULL, 16));
	}

	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = leaf + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	ips[0] = outer;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_outer");
	/* a leaf in symbols_leaf called from the inlined helper inside symbols_outer */
	ips[0] = leaf + 5;
	ips[1] = addr_of(&c, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	/* again, from the caches */
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	/* nothing mapped at page 1: [unknown], and counted */
	ips[0] = 0x1000;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_true(ss.user_frames >= 6);
	assert_int_equal(ss.user_unresolved, 1);
	assert_int_equal(ss.user_no_mapping, 1);
	assert_true(ss.inline_frames >= 2);
	assert_int_equal(ss.pids_cached, 1);
	assert_true(ss.elfs_cached >= 1);
	assert_true(ss.mem_bytes > 0);
	symbolizer__free(s);

	/* without inline frames */
	o.inline_frames = false;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = leaf + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "symbols_outer;symbols_leaf");
	/* capacity: the leaf-most frames are kept, the truncation counted */
	{
		uint32_t ids[1];

		assert_int_equal(symbolizer__user(s, (uint32_t)c.pid, ips, 2, ids, 1), 1);
		assert_string_equal(strtab__str(st, ids[0]), "symbols_leaf");
		symbolizer__stats(s, &ss);
		assert_int_equal(ss.truncated_stacks, 1);
	}
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* exec/pid reuse: the replaced state still names the samples taken before the switch */
static void test_retired_state(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1];
	uint32_t ids[8];
	uint32_t pid;
	int k;

	(void)state;
	workload(path, "symbols");
	spawn(&c, path, NULL);
	pid = (uint32_t)c.pid;
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	symbolizer__note_pid(s, pid); /* captured while it runs */
	assert_false(symbolizer__has_retired(s, pid));
	symbolizer__retire_pid(s, pid, 5000); /* "exec" at t = 5000 ns */
	assert_true(symbolizer__has_retired(s, pid));
	reap(&c); /* and the process is gone: /proc cannot tell any more */
	k = symbolizer__user_at(s, pid, 4000, ips, 1, ids, 8);
	assert_int_equal(k, 1);
	assert_string_equal(strtab__str(st, ids[0]), "symbols_leaf");
	/* after the switch: the current state, captured now from nothing */
	k = symbolizer__user_at(s, pid, 6000, ips, 1, ids, 8);
	assert_int_equal(k, 1);
	assert_string_equal(strtab__str(st, ids[0]), "[unknown]");
	/* and time 0 (unknown) means the current state too */
	k = symbolizer__user_at(s, pid, 0, ips, 1, ids, 8);
	assert_string_equal(strtab__str(st, ids[0]), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_retired, 1);
	/* forget drops without keeping anything */
	symbolizer__forget_pid(s, pid);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_retired, 1);
	symbolizer__free(s);
	strtab__free(st);
}

static void test_unknown_in_file(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1];

	/* a stripped copy without debug info: its frames name the file, as perf does */
	workload(path, "symbols");
	sh("mkdir -p %s/plain && cp %s %s/plain/symbols && strip --strip-all %s/plain/symbols",
	   tmpdir, path, tmpdir, tmpdir);
	snprintf(path, sizeof(path), "%s/plain/symbols", tmpdir);
	spawn(&c, path, NULL);
	o.debug_dirs = "/nonexistent";
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[symbols]");
	/* why: the file, stripped, with its path and build-id; an address in no
	 * mapping apart */
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.nr_unresolved_files, 1);
	assert_string_equal(ss.unresolved_files[0].frame, "[symbols]");
	assert_string_equal(ss.unresolved_files[0].path, path);
	assert_int_equal(ss.unresolved_files[0].reason, UNRESOLVED_STRIPPED);
	assert_int_equal(strlen(ss.unresolved_files[0].build_id), 40);
	assert_int_equal(ss.unresolved_files[0].frames, 1);
	assert_string_equal(unresolved_reason_name(UNRESOLVED_STRIPPED), "stripped");
	ips[0] = 0x10;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[unknown]");
	ips[0] = addr_of(&c, "symbols_leaf") + 9;
	(void)user_stack(s, st, (uint32_t)c.pid, ips, 1);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.nr_unresolved_files, 2);
	assert_int_equal(ss.unresolved_files[0].frames, 2); /* most frames first */
	assert_string_equal(ss.unresolved_files[1].frame, "[unknown]");
	assert_int_equal(ss.unresolved_files[1].reason, UNRESOLVED_NO_MAPPING);
	assert_string_equal(ss.unresolved_files[1].path, "");
	symbolizer__free(s);
	o.addr_offsets = true;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_true(!strncmp(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols+0x", 10));
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* A stripped binary whose debug info lives in a build-id tree, or next to it via debuglink. */
static void test_stripped_debug_file(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX], dbg[PATH_MAX], cmd[2 * PATH_MAX], id[128], nmout[256];
	uint64_t ips[2];

	workload(path, "symbols");
	/* build-id variant */
	sh("mkdir -p %s/bid && cp %s %s/bid/symbols", tmpdir, path, tmpdir);
	snprintf(cmd, sizeof(cmd), "readelf -n %s/bid/symbols | awk '/Build ID/{print $3}'",
		 tmpdir);
	sh_out(id, sizeof(id), cmd);
	assert_true(strlen(id) > 8);
	snprintf(dbg, sizeof(dbg), "%s/debug/.build-id/%.2s", tmpdir, id);
	sh("mkdir -p %s && objcopy --only-keep-debug %s/bid/symbols %s/%s.debug && "
	   "strip --strip-all %s/bid/symbols",
	   dbg, tmpdir, dbg, id + 2, tmpdir);
	/* really stripped */
	snprintf(cmd, sizeof(cmd), "nm %s/bid/symbols 2>&1 | grep -c symbols_leaf", tmpdir);
	sh_out(nmout, sizeof(nmout), cmd);
	assert_string_equal(nmout, "0");

	snprintf(path, sizeof(path), "%s/bid/symbols", tmpdir);
	spawn(&c, path, NULL);
	snprintf(dbg, sizeof(dbg), "/nonexistent:%s/debug", tmpdir);
	o.debug_dirs = dbg;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	ips[1] = addr_of(&c, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	symbolizer__stats(s, &ss);
	assert_true(ss.elf_debuginfo >= 1);
	assert_int_equal(ss.nr_unresolved_files, 0);
	symbolizer__free(s);
	reap(&c);

	/*
	 * debuglink variant: no build-id at all. BINDIR/.debug/NAME (a place the process may
	 * control) is not read; DIR/BINDIR/NAME under a debug dir is, with the link's CRC32.
	 */
	workload(path, "symbols");
	sh("mkdir -p %s/dl/.debug && objcopy --remove-section .note.gnu.build-id %s %s/dl/symbols && "
	   "objcopy --only-keep-debug %s/dl/symbols %s/dl/.debug/symbols.debug 2>/dev/null && "
	   "strip --strip-all %s/dl/symbols && "
	   "objcopy --add-gnu-debuglink=%s/dl/.debug/symbols.debug %s/dl/symbols",
	   tmpdir, path, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	snprintf(path, sizeof(path), "%s/dl/symbols", tmpdir);
	spawn(&c, path, NULL);
	o.debug_dirs = "/nonexistent";
	o.inline_frames = false;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	ips[1] = addr_of(&c, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2), "[symbols];[symbols]");
	symbolizer__free(s);
	/* DIR/BINDIR/NAME: found, its CRC is the link's */
	sh("mkdir -p %s/dlroot%s/dl && cp %s/dl/.debug/symbols.debug %s/dlroot%s/dl/", tmpdir, tmpdir,
	   tmpdir, tmpdir, tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/dlroot", tmpdir);
	o.debug_dirs = dbg;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "symbols_outer;symbols_leaf");
	symbolizer__free(s);
	/* the same file with another CRC (a byte appended): refused, counted */
	sh("echo x >> %s/dlroot%s/dl/symbols.debug", tmpdir, tmpdir);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2), "[symbols];[symbols]");
	symbolizer__stats(s, &ss);
	assert_true(ss.elf_debug_refused >= 1);
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* The file behind the mapping was deleted: read it through /proc/PID/map_files. */
static void test_deleted_binary(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1];

	if (geteuid() != 0)
		skip(); /* map_files needs CAP_SYS_ADMIN */
	workload(path, "symbols");
	sh("mkdir -p %s/del && cp %s %s/del/symbols", tmpdir, path, tmpdir);
	snprintf(path, sizeof(path), "%s/del/symbols", tmpdir);
	spawn(&c, path, NULL);
	assert_int_equal(unlink(path), 0);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/*
 * note_pid() opens a process's files but reads their symbols only when a stack needs them; the
 * files it opened still resolve after the process exited and its binary was deleted.
 */
/* symbols.max_image_memory: an image larger than all of it is not kept, counted. */
static void test_image_memory_bound(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1];

	(void)state;
	workload(path, "symbols");
	spawn(&c, path, NULL);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	o.max_image_bytes = 64; /* no image fits */
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[symbols]");
	symbolizer__stats(s, &ss);
	assert_true(ss.elf_mem_refused >= 1);
	assert_int_equal(ss.elf_symbols, 0);
	symbolizer__free(s);
	o.max_image_bytes = 0; /* unbounded: named */
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

static void test_lazy_images(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1];
	uint32_t pid;

	(void)state;
	workload(path, "symbols");
	sh("mkdir -p %s/lazy && cp %s %s/lazy/symbols", tmpdir, path, tmpdir);
	snprintf(path, sizeof(path), "%s/lazy/symbols", tmpdir);
	spawn(&c, path, NULL);
	pid = (uint32_t)c.pid;
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	symbolizer__note_pid(s, pid);
	symbolizer__stats(s, &ss);
	assert_true(ss.elf_misses >= 2); /* the binary, libc, ld.so: seen */
	assert_int_equal(ss.elf_symbols, 0); /* and not read yet */
	reap(&c);
	assert_int_equal(unlink(path), 0); /* gone, and no file at its path */
	assert_string_equal(user_stack(s, st, pid, ips, 1), "symbols_leaf");
	symbolizer__stats(s, &ss);
	assert_true(ss.elf_symbols > 0);
	symbolizer__free(s);
	strtab__free(st);
}

/*
 * A runtime reader's image (symbolizer__image_get): the symbolizer's own, read once; the
 * process's frames named later from that very image, no second parse (elf_symbols counts the
 * symbols of each parse).
 */
static void test_lent_image(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct elfsym *es, *again;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[1], parsed;
	int fd;

	(void)state;
	workload(path, "symbols");
	spawn(&c, path, NULL);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = symbolizer__image_get(s, fd, path);
	assert_non_null(es);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.elf_lent, 1);
	parsed = ss.elf_symbols;
	assert_int_equal(parsed, elfsym__count(es));
	again = symbolizer__image_get(s, fd, path); /* from its cache */
	assert_ptr_equal(again, es);
	elfsym__free(again);
	close(fd);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.elf_lent, 2);
	assert_int_equal(ss.elf_errors, 0);
	/* the binary's symbols were not parsed again: one image's held, the lent one */
	assert_int_equal(ss.elf_symbols, parsed);
	symbolizer__free(s);
	/* outlives the symbolizer: its own reference (ASan's build checks) */
	assert_true(elfsym__lookup(es, elfsym__addr(es, 0)) >= 0);
	elfsym__free(es);

	/* too big for the symbolizer to keep: the reader has it for its own use, read once */
	o.max_image_bytes = 64;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = symbolizer__image_get(s, fd, path);
	close(fd);
	assert_non_null(es);
	assert_true(elfsym__count(es) > 0);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.elf_mem_refused, 1);
	assert_int_equal(ss.elf_lent, 1);
	assert_int_equal(ss.elf_symbols, 0); /* none kept */
	elfsym__free(es);
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* note_pid() captures a process that exits before its samples are symbolized. */
static void test_short_lived(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX], proc[64];
	uint64_t ips[2];
	uint32_t pid;

	workload(path, "symbols");
	spawn(&c, path, NULL); /* until killed: no timer to race a slow test */
	pid = (uint32_t)c.pid;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	symbolizer__note_pid(s, pid);
	kill(c.pid, SIGKILL);
	waitpid(c.pid, NULL, 0);
	c.pid = 0;
	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	assert_int_not_equal(access(proc, F_OK), 0); /* really gone */
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	ips[1] = addr_of(&c, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	/* an address outside the captured mappings: [unknown], and no /proc retries storm */
	ips[0] = 0x1000;
	assert_string_equal(user_stack(s, st, pid, ips, 1), "[unknown]");
	assert_string_equal(user_stack(s, st, pid, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_true(ss.maps_reads <= 2);
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/*
 * A process gone before the symbolizer's first look at it (a shell's fork that lived a few ms,
 * drained late under load): the process tracker's last snapshot (read at its fork or exec) names
 * its samples, with the images already read for another process of the same file (its parent);
 * they were all "[unknown]" (test_unwind's towers of them).
 */
static void test_gone_before_first_look(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct strtab *st = strtab__new();
	struct proc_tracker_stats ps;
	struct proc_maps *m;
	struct symbolizer *s;
	struct child parent, c;
	char path[PATH_MAX];
	uint64_t ips[2];
	uint32_t pid;

	(void)state;
	assert_non_null(pt);
	workload(path, "symbols");
	spawn(&parent, path, NULL);
	spawn(&c, path, NULL); /* until killed: no timer to race a slow test */
	pid = (uint32_t)c.pid;
	m = proc_tracker__maps(pt, pid, 0); /* the read at its fork or exec */
	assert_non_null(m);
	proc_maps__put(m);
	proc_tracker__invalidate(pt, pid); /* its first sample's event, as emberd_on_new_pid() */
	o.procs = pt;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&parent, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)parent.pid, ips, 1), "symbols_leaf");
	kill(c.pid, SIGKILL);
	waitpid(c.pid, NULL, 0);
	c.pid = 0;
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	ips[1] = addr_of(&c, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	proc_tracker__stats(pt, &ps);
	assert_int_equal(ps.stale_used, 1);
	/* nothing known of it at all: "[unknown]", as before */
	proc_tracker__exit(pt, pid);
	symbolizer__forget_pid(s, pid);
	assert_string_equal(user_stack(s, st, pid, ips, 1), "[unknown]");
	symbolizer__free(s);
	proc_tracker__free(pt);
	reap(&parent);
	strtab__free(st);
}

/*
 * A short-lived process named after it is gone (from the tracker's snapshot) first: its file
 * cannot be opened through it any more, which is not the file's failure: a live process mapping
 * the same file right after is named (it was "[symbols]" for ELF_RETRY_NS, 5 s, for every
 * process of that binary: test_proctrack's query phase, 0 of 300 samples named once).
 */
static void test_gone_then_live(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct proc_maps *m;
	struct symbolizer *s;
	struct child live, c;
	char path[PATH_MAX];
	uint64_t ips[1];
	uint32_t pid;

	(void)state;
	assert_non_null(pt);
	workload(path, "symbols");
	spawn(&c, path, NULL); /* until killed: no timer to race a slow test */
	pid = (uint32_t)c.pid;
	m = proc_tracker__maps(pt, pid, 0); /* the read at its fork or exec */
	assert_non_null(m);
	proc_maps__put(m);
	proc_tracker__invalidate(pt, pid);
	o.procs = pt;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	kill(c.pid, SIGKILL);
	waitpid(c.pid, NULL, 0);
	c.pid = 0;
	assert_string_not_equal(user_stack(s, st, pid, ips, 1), "symbols_leaf");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.elf_unreachable, 1);
	assert_int_equal(ss.elf_errors, 0);
	spawn(&live, path, NULL);
	ips[0] = addr_of(&live, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)live.pid, ips, 1), "symbols_leaf");
	symbolizer__free(s);
	proc_tracker__free(pt);
	reap(&live);
	strtab__free(st);
}

/* A process of another image (/bin/sleep) standing for a fork after its exec. */
/* Whether the maps file @path names @file (a mapping of it). */
static bool maps_hold(const char *path, const char *file)
{
	char line[PATH_MAX + 128];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, file) != NULL;
	fclose(f);
	return found;
}

static pid_t spawn_other(void)
{
	char path[64], exe[PATH_MAX];
	pid_t pid = fork();
	ssize_t n = 0;
	int i;

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (i = 0; i < 200; i++) { /* exec'ed: its executable is sleep */
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n > 0 && (exe[n] = '\0', strstr(exe, "sleep")))
			break;
		usleep(10000);
	}
	assert_true(n > 0 && strstr(exe, "sleep"));
	/* ... and its maps are sleep's: the exe link changes at the exec's start, the ELF
	 * segments are mapped after it (a read between the two, on a loaded host, met neither
	 * image: an ASan run beside the integration tests) */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (i = 0; i < 200 && !maps_hold(path, exe); i++)
		usleep(10000);
	assert_true(maps_hold(path, exe));
	return pid;
}

/*
 * A fork of another program's parent read (its first look: the new image, "[unknown]"), then its
 * exec at @t: the sample before @t (@ips, the parent's code) is named with the fork's copy.
 */
static void read_then_exec(struct symbolizer *s, struct strtab *st, struct proc_tracker *pt,
			   uint32_t pid, uint64_t t, const uint64_t *ips)
{
	uint32_t ids[8];

	proc_tracker__invalidate(pt, pid); /* as emberd_on_new_pid() */
	symbolizer__note_pid(s, pid);
	/* named at the first look: the read shows another image than the fork's copy, whose
	 * exec no event told yet (before, "[unknown]" until the exec's event came: a batch's
	 * samples are named before the next batch's exec) */
	assert_string_equal(user_stack(s, st, pid, ips, 1), "symbols_leaf");
	symbolizer__retire_pid(s, pid, t);
	assert_int_equal(symbolizer__user_at(s, pid, t - 1000, ips, 1, ids, 8), 1);
	assert_string_equal(strtab__str(st, ids[0]), "symbols_leaf");
}

/*
 * A shell's fork sampled in its parent's code, whose exec /proc shows before its first sample
 * is drained: the samples before the exec are named with the fork's copy of its parent's
 * snapshot, not with the new image's mappings (which named them all "[unknown]"): when the exec
 * is known at the first look (note_pid_before_exec), and when it comes after a read (retire).
 */
static void test_fork_then_exec(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct proc_maps *m;
	struct symbolizer *s;
	struct child parent;
	char path[PATH_MAX];
	uint64_t ips[1], t;
	uint32_t ids[8];
	pid_t a, b, c, d, e;
	int k;

	(void)state;
	assert_non_null(pt);
	workload(path, "symbols");
	spawn(&parent, path, NULL);
	a = spawn_other();
	b = spawn_other();
	c = spawn_other();
	e = spawn_other();
	d = fork(); /* this program's image, as its fork copy has it */
	if (d == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, whatever fails */
		pause();
		_exit(0);
	}
	assert_true(d > 0);
	m = proc_tracker__maps(pt, (uint32_t)parent.pid, 0);
	assert_non_null(m);
	proc_maps__put(m);
	m = proc_tracker__maps(pt, (uint32_t)getpid(), 0);
	assert_non_null(m);
	proc_maps__put(m);
	proc_tracker__fork(pt, (uint32_t)parent.pid, (uint32_t)a, false, false, 0);
	proc_tracker__fork(pt, (uint32_t)parent.pid, (uint32_t)b, false, false, 0);
	proc_tracker__fork(pt, (uint32_t)parent.pid, (uint32_t)c, false, false, 0);
	proc_tracker__fork(pt, (uint32_t)getpid(), (uint32_t)d, false, false, 0);
	o.procs = pt;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&parent, "symbols_leaf") + 5; /* the fork's pc: its parent's code */
	assert_string_equal(user_stack(s, st, (uint32_t)parent.pid, ips, 1), "symbols_leaf");

	/* the exec known at the first look */
	symbolizer__note_pid_before_exec(s, (uint32_t)a);
	t = 5000;
	symbolizer__retire_pid(s, (uint32_t)a, t); /* the exec at t */
	k = symbolizer__user_at(s, (uint32_t)a, t - 1000, ips, 1, ids, 8);
	assert_int_equal(k, 1);
	assert_string_equal(strtab__str(st, ids[0]), "symbols_leaf");

	/* read first (the new image), the exec known later: at t, before the read */
	read_then_exec(s, st, pt, (uint32_t)b, t, ips);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_before_exec, 2);

	/*
	 * read in the exec's own window: the kernel maps the new image ~100 us (under load, ms)
	 * before the exec tracepoint fires, so the read is older than the exec event and still of
	 * the new image (test_unwind's towers of 127 "[unknown]" in a shell fork's execve)
	 */
	read_then_exec(s, st, pt, (uint32_t)c, mono_ns() + 1000000000ull /* after the read */, ips);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_before_exec, 3);

	/* a read of the fork's own image (before its exec) is kept: it is the image, read later */
	proc_tracker__invalidate(pt, (uint32_t)d);
	symbolizer__note_pid(s, (uint32_t)d);
	symbolizer__retire_pid(s, (uint32_t)d, mono_ns() + 1000000000ull);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_before_exec, 3);

	/*
	 * never noted before its exec (a listed fork: no first-sample event), its sample before
	 * the exec named after it (at the next tick): the tracker's copy of what ran before
	 * names it, the samples after the exec are the new image's (a deep shell's fork: 115
	 * frames of "[unknown]" under load, test_exec)
	 */
	proc_tracker__fork(pt, (uint32_t)parent.pid, (uint32_t)e, false, true, 0);
	t = mono_ns();
	symbolizer__retire_pid(s, (uint32_t)e, t); /* nothing held: no state of it yet */
	proc_tracker__exec(pt, (uint32_t)e, false, NULL, t);
	assert_int_equal(symbolizer__user_at(s, (uint32_t)e, t - 1000, ips, 1, ids, 8), 1);
	assert_string_equal(strtab__str(st, ids[0]), "symbols_leaf");
	assert_int_equal(symbolizer__user_at(s, (uint32_t)e, t + 1000, ips, 1, ids, 8), 1);
	assert_string_not_equal(strtab__str(st, ids[0]), "symbols_leaf");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_before_exec, 4);

	symbolizer__free(s);
	proc_tracker__free(pt);
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	kill(c, SIGKILL);
	kill(d, SIGKILL);
	kill(e, SIGKILL);
	waitpid(e, NULL, 0);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	waitpid(c, NULL, 0);
	waitpid(d, NULL, 0);
	reap(&parent);
	strtab__free(st);
}

static void test_kernel(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	uint64_t sched = kallsyms_addr("schedule", "T"), other = kallsyms_addr("do_nanosleep", "tT");
	uint64_t ips[2];

	if (!sched || !other) {
		strtab__free(st);
		skip(); /* kptr_restrict or not root: addresses read as zero */
	}
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = sched + 1;
	assert_string_equal(kernel_stack(s, st, ips, 1), "schedule_[k]");
	/* leaf first in, root first out */
	ips[0] = sched + 1;
	ips[1] = other + 2;
	assert_string_equal(kernel_stack(s, st, ips, 2), "do_nanosleep_[k];schedule_[k]");
	symbolizer__stats(s, &ss);
	assert_true(ss.kallsyms_symbols > 1000);
	assert_false(ss.kallsyms_restricted);
	assert_int_equal(ss.kernel_frames, 3);
	assert_int_equal(ss.kernel_unresolved, 0);
	symbolizer__free(s);
	strtab__free(st);
}

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* A kernel address in no symbol reloads kallsyms (a module may have come), at most every 10 s;
 * one that a reload did not resolve does not reload again, and fruitless reloads back off. */
static void test_kernel_reload_backoff(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	char path[PATH_MAX];
	uint64_t x[1] = { 0xffffffffc0401000ull }, y[1] = { 0xffffffffc0501000ull };
	uint64_t z[1] = { 0xffffffffc0601010ull };

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms-reload", tmpdir);
	write_text(path, "ffffffff81000000 T _stext\nffffffff81000100 T do_work\n");
	o.kallsyms_path = path;
	o.ks_clock_ns = fake_clock;
	fake_now = 1000000000ull;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
#define LOADS() (symbolizer__stats(s, &ss), ss.kallsyms_loads)
	assert_string_equal(kernel_stack(s, st, x, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 1); /* the first load; no reload right after it */
	fake_now += 11000000000ull;
	assert_string_equal(kernel_stack(s, st, x, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 2); /* 11 s later: reloaded, still unknown */
	fake_now += 60000000000ull;
	assert_string_equal(kernel_stack(s, st, x, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 2); /* the same address: known missing, no reload */
	assert_string_equal(kernel_stack(s, st, y, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 3); /* a new one, past the doubled interval (20 s) */
	fake_now += 30000000000ull;
	assert_string_equal(kernel_stack(s, st, z, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 3); /* 30 s < 40 s: backing off */
	/* a module arrives: the next reload resolves it and the interval is back to 10 s */
	write_text(path, "ffffffff81000000 T _stext\nffffffff81000100 T do_work\n"
			 "ffffffffc0601000 t newmod_fn\t[newmod]\n");
	fake_now += 11000000000ull;
	assert_string_equal(kernel_stack(s, st, z, 1), "newmod_fn_[k]");
	assert_int_equal(LOADS(), 4);
	fake_now += 11000000000ull;
	assert_string_equal(kernel_stack(s, st, y, 1), "[unknown]_[k]");
	assert_int_equal(LOADS(), 5); /* forgotten as missing after the fruitful reload */
#undef LOADS
	symbolizer__free(s);
	strtab__free(st);
}

/* A fake kernel for kernel_resolve: functions [start, start + size) with names and modules. */
static const struct {
	uint64_t start, size;
	const char *name, *mod;
} fake_ksyms[] = {
	{ 0xffffffff81000100ull, 0x100, "do_work", NULL },
	{ 0xffffffff81000200ull, 0x80, "do_more.cold", NULL },
	{ 0xffffffff81000300ull, 0, "asm_entry", NULL }, /* no size */
	{ 0xffffffffc0001000ull, 0x40, "mod_fn", "mymod" },
	{ 0xffffffffc0002000ull, 0x40, "bpf_prog_1234_handler", "bpf" },
	{ 0xffffffffc0003000ull, 0x40, "with+plus", "mod 0123abcd" }, /* module with build-id */
};
static unsigned long fake_calls;
static int fake_fail;

static int fake_resolve(void *ctx, const uint64_t *addrs, size_t n, char *texts, size_t text_len)
{
	size_t i, j;

	assert_ptr_equal(ctx, &fake_calls);
	fake_calls++;
	if (fake_fail)
		return -EPERM;
	for (i = 0; i < n; i++) {
		char *t = texts + i * text_len;

		snprintf(t, text_len, "0x%llx", (unsigned long long)addrs[i]);
		for (j = 0; j < sizeof(fake_ksyms) / sizeof(fake_ksyms[0]); j++) {
			uint64_t a = fake_ksyms[j].start, sz = fake_ksyms[j].size;

			if (addrs[i] < a || addrs[i] >= a + (sz ? sz : 1))
				continue;
			snprintf(t, text_len, "%s+0x%llx/0x%llx%s%s%s", fake_ksyms[j].name,
				 (unsigned long long)(addrs[i] - a), (unsigned long long)sz,
				 fake_ksyms[j].mod ? " [" : "",
				 fake_ksyms[j].mod ? fake_ksyms[j].mod : "",
				 fake_ksyms[j].mod ? "]" : "");
		}
	}
	return 0;
}

/* Kernel frames through kernel_resolve: names from "%pS", cached by function range (one call per
 * stack with new addresses), return addresses looked up at the call, modules and build-ids
 * dropped from the name, no symbol "[unknown]_[k]" (asked again), and /proc/kallsyms after an
 * error. */
static void test_kernel_resolve(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	char path[PATH_MAX];
	uint64_t ips[4];

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms-fallback", tmpdir);
	write_text(path, "ffffffff81000000 T _stext\nffffffff81000100 T from_kallsyms\n");
	o.kallsyms_path = path;
	o.kernel_resolve = fake_resolve;
	o.kernel_resolve_ctx = &fake_calls;
	fake_calls = 0;
	fake_fail = 0;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	/* leaf do_work; its caller's return address is do_more.cold's first byte: the call is in
	 * do_work (looked up at ip - 1) */
	ips[0] = 0xffffffff81000110ull;
	ips[1] = 0xffffffff81000200ull;
	ips[2] = 0xffffffffc0001008ull;
	assert_string_equal(kernel_stack(s, st, ips, 3), "mod_fn_[k];do_work_[k];do_work_[k]");
	assert_int_equal(fake_calls, 1);
	symbolizer__stats(s, &ss);
	assert_true(ss.kernel_resolver);
	assert_int_equal(ss.kernel_lookups, 3); /* 0x..110 and 0x..1ff: both asked, one function */
	assert_int_equal(ss.kernel_functions, 2);
	assert_int_equal(ss.kallsyms_loads, 0);
	/* other addresses in cached functions: no call */
	ips[0] = 0xffffffff810001f0ull;
	ips[1] = 0xffffffffc0001030ull;
	assert_string_equal(kernel_stack(s, st, ips, 2), "mod_fn_[k];do_work_[k]");
	assert_int_equal(fake_calls, 1);
	/* a cold part, BPF, a '+' in a name with a build-id, a symbol without a size */
	ips[0] = 0xffffffff81000210ull;
	ips[1] = 0xffffffffc0002011ull;
	ips[2] = 0xffffffffc0003011ull;
	ips[3] = 0xffffffff81000301ull;
	assert_string_equal(kernel_stack(s, st, ips, 4),
			    "asm_entry_[k];with+plus_[k];bpf_prog_1234_handler_[k];do_more.cold_[k]");
	assert_int_equal(fake_calls, 2);
	ips[0] = 0xffffffff81000301ull; /* the size-less symbol: this address only, cached */
	assert_string_equal(kernel_stack(s, st, ips, 1), "[unknown]_[k]");
	ips[0] = 0xffffffff81000300ull;
	assert_string_equal(kernel_stack(s, st, ips, 1), "asm_entry_[k]");
	assert_int_equal(fake_calls, 3); /* 0x..300 was cached by the stack before */
	/* no symbol: unknown, counted, and asked again next time */
	ips[0] = 0xffffffff82000000ull;
	assert_string_equal(kernel_stack(s, st, ips, 1), "[unknown]_[k]");
	assert_string_equal(kernel_stack(s, st, ips, 1), "[unknown]_[k]");
	assert_int_equal(fake_calls, 5);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.kernel_unresolved, 3);
	/* the resolver fails: /proc/kallsyms from then on */
	fake_fail = 1;
	ips[0] = 0xffffffff81000180ull; /* cached, but the stack has a new address too */
	ips[1] = 0xffffffff82000010ull;
	assert_string_equal(kernel_stack(s, st, ips, 2), "[unknown]_[k];from_kallsyms_[k]");
	symbolizer__stats(s, &ss);
	assert_false(ss.kernel_resolver);
	assert_int_equal(ss.kallsyms_loads, 1);
	symbolizer__free(s);
	strtab__free(st);
}

/* The real thing: the BPF program names kernel addresses as /proc/kallsyms does. Root only. */
static void test_kresolve_live(void **state)
{
	char err[256], texts[2 * 600];
	uint64_t addrs[2], sched;
	struct kresolve *kr;

	(void)state;
	kr = kresolve__new(err, sizeof(err));
	if (!kr) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("kresolve: %s", err); /* root with BTF in CI */
		skip();
	}
	sched = kallsyms_addr("schedule", "Tt");
	assert_true(sched != 0);
	addrs[0] = sched + 4;
	addrs[1] = 0x10;
	assert_int_equal(kresolve__resolve(kr, addrs, 2, texts, 600), 0);
	assert_true(!strncmp(texts, "schedule+0x4/0x", 15));
	assert_string_equal(texts + 600, "0x10");
	kresolve__free(kr);
}

static void test_kernel_restricted(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	char path[PATH_MAX];
	uint64_t ips[1] = { 0xffffffff81000123ull };

	snprintf(path, sizeof(path), "%s/kallsyms-restricted", tmpdir);
	write_text(path, "0000000000000000 T _stext\n0000000000000000 T schedule\n"
			 "0000000000000000 t ext4_fill_super\t[ext4]\n");
	o.kallsyms_path = path;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	assert_string_equal(kernel_stack(s, st, ips, 1), "[unknown]_[k]");
	symbolizer__stats(s, &ss);
	assert_true(ss.kallsyms_restricted);
	assert_int_equal(ss.kallsyms_symbols, 0);
	assert_int_equal(ss.kernel_unresolved, 1);
	symbolizer__free(s);

	/* module symbols, and a gap inside a module named after it */
	write_text(path, "ffffffff81000000 T _stext\nffffffff81000100 T do_work\n"
			 "ffffffffc0001000 t mod_a\t[mymod]\nffffffffc0100000 t mod_b\t[mymod]\n"
			 "ffffffffc0200000 t bpf_prog_1234_handler\t[bpf]\n");
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = 0xffffffffc0001004ull;
	assert_string_equal(kernel_stack(s, st, ips, 1), "mod_a_[k]");
	ips[0] = 0xffffffffc0090000ull; /* far past mod_a, before mod_b */
	assert_string_equal(kernel_stack(s, st, ips, 1), "[mymod]_[k]");
	ips[0] = 0xffffffffc0200010ull;
	assert_string_equal(kernel_stack(s, st, ips, 1), "bpf_prog_1234_handler_[k]");
	ips[0] = 0xffffffff81000104ull;
	assert_string_equal(kernel_stack(s, st, ips, 1), "do_work_[k]");
	symbolizer__free(s);
	strtab__free(st);
}

static void test_jit(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	/* grown when asked, after the first read: with a timer, a test slow to come to its first
	 * read (nice 19 beside the first lane: a fresh-clone run) read the grown map at once */
	const char *args[] = { "--grow-on-usr1", NULL };
	const char *args0x[] = { "--0x", "--junk", NULL };
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX];
	uint64_t ips[2];

	workload(path, "jit");
	spawn(&c, path, args);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "jit_alpha") + 9;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "jit_alpha_[j]");
	ips[0] = addr_of(&c, "jit_beta") + 1;
	ips[1] = addr_of(&c, "jit_alpha") + 3; /* as a return address */
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 2),
			    "jit_alpha_[j];jit_beta_[j]");
	/* the map grows: jit_gamma appears after the first read */
	assert_int_equal(kill(c.pid, SIGUSR1), 0);
	read_until(&c, "grown");
	usleep(250 * 1000);
	ips[0] = addr_of(&c, "jit_gamma") + 4;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "jit_gamma_[j]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.jit_frames, 4);
	assert_true(ss.perfmap_loads >= 2);
	assert_int_equal(ss.perfmap_symbols, 3);
	assert_int_equal(ss.perfmap_bad_lines, 0);
	symbolizer__free(s);
	reap(&c);

	/* perf maps off: the anonymous code is unknown */
	o.perf_maps = false;
	spawn(&c, path, args0x);
	s = symbolizer__new(&o, st);
	ips[0] = addr_of(&c, "jit_alpha") + 9;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[unknown]");
	/* and why: JIT code no perf map names, not "no mapping" */
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.nr_unresolved_files, 1);
	assert_string_equal(ss.unresolved_files[0].frame, "[unknown]");
	assert_int_equal(ss.unresolved_files[0].reason, UNRESOLVED_JIT);
	symbolizer__free(s);
	/* the 0x-prefixed variant, with malformed lines skipped and counted */
	o.perf_maps = true;
	s = symbolizer__new(&o, st);
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "jit_alpha_[j]");
	ips[0] = addr_of(&c, "jit_beta") + 9;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "jit_beta_[j]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_bad_lines, 4);
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* ---- a fake /proc: perf-map files that must be skipped without hanging ------------------- */

#define FAKE_PID 4242
#define FAKE_NSPID 77
#define JIT_BASE 0x7f0000001000ull

static void fake_proc(const char *proc, unsigned long long start_time)
{
	char path[PATH_MAX];
	FILE *f;

	sh("mkdir -p %s/%d/root/tmp", proc, FAKE_PID);
	snprintf(path, sizeof(path), "%s/%d/stat", proc, FAKE_PID);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "%d (jit (x) y) S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 "
		   "100 0\n", FAKE_PID, start_time);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/status", proc, FAKE_PID);
	f = fopen(path, "we");
	fprintf(f, "Name:\tjit\nPid:\t%d\nNSpid:\t%d\t%d\n", FAKE_PID, FAKE_PID, FAKE_NSPID);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/maps", proc, FAKE_PID);
	f = fopen(path, "we");
	fprintf(f, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0 \n"
		   "7f0000100000-7f0000200000 rw-p 00000000 00:00 0 \n");
	fclose(f);
}

static struct symbolizer *fake_symbolizer(struct strtab *st, const char *proc, size_t max)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;

	o.proc_root = proc;
	o.max_perfmap_bytes = max;
	return symbolizer__new(&o, st);
}

static void test_perfmap_files(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	char proc[128], map[PATH_MAX];
	uint64_t ips[1] = { JIT_BASE + 0x10 };
	uint64_t v1, v2;
	FILE *f;

	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	fake_proc(proc, 1000);
	snprintf(map, sizeof(map), "%s/%d/root/tmp/perf-%d.map", proc, FAKE_PID, FAKE_NSPID);

	/* a FIFO: opening it must not block, and it is skipped */
	assert_int_equal(mkfifo(map, 0600), 0);
	s = fake_symbolizer(st, proc, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_skip_not_regular, 1);
	symbolizer__free(s);
	unlink(map);

	/* a symlink to /dev/zero: skipped, never read forever */
	assert_int_equal(symlink("/dev/zero", map), 0);
	s = fake_symbolizer(st, proc, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_skip_not_regular, 1);
	symbolizer__free(s);
	unlink(map);

	/* too big for the configured cap */
	f = fopen(map, "we");
	fprintf(f, "%llx 100 big_one\n", (unsigned long long)JIT_BASE);
	fprintf(f, "%0200d\n", 0);
	fclose(f);
	s = fake_symbolizer(st, proc, 64);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_skip_too_big, 1);
	symbolizer__free(s);
	unlink(map);

	/* missing: counted once however many samples ask */
	s = fake_symbolizer(st, proc, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_skip_missing, 1);
	assert_int_equal(ss.user_unresolved, 2);
	symbolizer__free(s);

	/* a truncated last line waits for its newline; the NSpid names the file */
	f = fopen(map, "we");
	fprintf(f, "%llx 20 first fn (with spaces)\n%llx 2", (unsigned long long)JIT_BASE,
		(unsigned long long)JIT_BASE + 0x20);
	fclose(f);
	s = fake_symbolizer(st, proc, 0);
	assert_int_equal(symbolizer__pid_version(s, FAKE_PID), 0); /* not read yet */
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "first fn (with spaces)_[j]");
	v1 = symbolizer__pid_version(s, FAKE_PID);
	assert_int_not_equal(v1, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "first fn (with spaces)_[j]");
	assert_int_equal(symbolizer__pid_version(s, FAKE_PID), v1); /* nothing read again */
	ips[0] = JIT_BASE + 0x25;
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	f = fopen(map, "ae");
	/* and a name with control bytes (the process writes its names): escaped as comms are */
	fprintf(f, "0 second;fn\n%llx 10 esc\x1b[1mname\x7f\n", (unsigned long long)JIT_BASE + 0x40);
	fclose(f);
	usleep(250 * 1000);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "second:fn_[j]");
	ips[0] = JIT_BASE + 0x44;
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "esc\\x1b[1mname\\x7f_[j]");
	ips[0] = JIT_BASE + 0x25;
	/* new JIT symbols read: answers kept for this process must be asked again */
	v2 = symbolizer__pid_version(s, FAKE_PID);
	assert_int_not_equal(v2, 0);
	assert_int_not_equal(v2, v1);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_symbols, 3);
	assert_int_equal(ss.perfmap_bad_lines, 0);

	/* pid reuse: a new start time drops the cached state */
	fake_proc(proc, 2000);
	assert_int_equal(symbolizer__prune(s), 1);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_reuses, 1);
	assert_int_equal(ss.pids_cached, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "second:fn_[j]");
	assert_int_not_equal(symbolizer__pid_version(s, FAKE_PID), 0);
	assert_int_not_equal(symbolizer__pid_version(s, FAKE_PID), v2); /* a new process */
	/* the process is gone: its state stays a grace period for late samples, counted */
	sh("rm -rf %s/%d", proc, FAKE_PID);
	assert_int_equal(symbolizer__prune(s), 0);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pid_gone, 1);
	assert_int_equal(ss.pids_cached, 1);
	assert_int_equal(symbolizer__pid_version(s, FAKE_PID), 0); /* gone: nothing to keep */
	symbolizer__forget_pid(s, FAKE_PID);
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.pids_cached, 0);
	symbolizer__free(s);
	strtab__free(st);
}

/* A perf map last written before its process began: another process's with that pid (runtimes
 * leave theirs in /tmp), never used for this one's names, counted; read once the process
 * writes it. */
static void test_perfmap_stale(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct timespec boot, times[2];
	char proc[128], map[PATH_MAX];
	uint64_t ips[1] = { JIT_BASE + 0x10 };
	FILE *f;

	(void)state;
	/* the process began a second ago (its start time in clock ticks after boot) */
	assert_int_equal(clock_gettime(CLOCK_BOOTTIME, &boot), 0);
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	fake_proc(proc, (unsigned long long)(boot.tv_sec - 1) * (unsigned long long)sysconf(_SC_CLK_TCK));
	snprintf(map, sizeof(map), "%s/%d/root/tmp/perf-%d.map", proc, FAKE_PID, FAKE_NSPID);
	f = fopen(map, "we");
	assert_non_null(f);
	fprintf(f, "%llx 20 old_runtime_fn\n", (unsigned long long)JIT_BASE);
	fclose(f);
	/* written an hour before */
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &times[0]), 0);
	times[0].tv_sec -= 3600;
	times[1] = times[0];
	assert_int_equal(utimensat(AT_FDCWD, map, times, 0), 0);
	s = fake_symbolizer(st, proc, 0);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "[unknown]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_skip_stale, 1); /* once per process, not per sample */
	assert_int_equal(ss.perfmap_symbols, 0);
	/* the process writes its own from scratch: now it names the code */
	f = fopen(map, "we");
	fprintf(f, "%llx 20 new_fn\n", (unsigned long long)JIT_BASE);
	fclose(f);
	usleep(250 * 1000);
	assert_string_equal(user_stack(s, st, FAKE_PID, ips, 1), "new_fn_[j]");
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.perfmap_symbols, 1);
	symbolizer__free(s);
	sh("rm -rf %s/%d", proc, FAKE_PID);
	strtab__free(st);
}

/* One image for many processes; bounded caches evict and still resolve. */
static void test_caches(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats a, b;
	struct symbolizer *s;
	struct child c1, c2;
	char path[PATH_MAX];
	uint64_t ips[1];

	workload(path, "symbols");
	spawn(&c1, path, NULL);
	spawn(&c2, path, NULL);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	symbolizer__note_pid(s, (uint32_t)c1.pid);
	symbolizer__stats(s, &a);
	symbolizer__note_pid(s, (uint32_t)c2.pid);
	symbolizer__stats(s, &b);
	assert_true(a.elf_misses >= 2); /* the binary, libc, ld.so */
	assert_int_equal(b.elf_misses, a.elf_misses);
	assert_int_equal(b.elfs_cached, a.elfs_cached);
	assert_true(b.elf_hits >= a.elf_hits + 2);
	ips[0] = addr_of(&c2, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c2.pid, ips, 1), "symbols_leaf");
	symbolizer__free(s);

	o.max_elfs = 1;
	o.max_pids = 1;
	s = symbolizer__new(&o, st);
	ips[0] = addr_of(&c1, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c1.pid, ips, 1), "symbols_leaf");
	symbolizer__note_pid(s, (uint32_t)c2.pid);
	ips[0] = addr_of(&c2, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c2.pid, ips, 1), "symbols_leaf");
	symbolizer__stats(s, &b);
	assert_int_equal(b.pids_cached, 1);
	assert_int_equal(b.elfs_cached, 1);
	assert_true(b.pid_evictions >= 1);
	assert_true(b.elf_evictions >= 1);
	symbolizer__free(s);
	reap(&c1);
	reap(&c2);
	strtab__free(st);
}

/* Junk names at the start of a renewed table: a stale id from before would name one of them. */
static void fill_junk(struct strtab *st)
{
	char name[32];
	int i;

	for (i = 0; i < 4096; i++) {
		snprintf(name, sizeof(name), "junk_%d", i);
		assert_true(strtab__intern(st, name, strlen(name)) >= 0);
	}
}

/*
 * The names' table renewed (strtab__renew()) under a symbolizer: after symbolizer__names_forget()
 * no id of the old generation is used (the address cache, the ids attached to ELF and kernel
 * symbols, "[unknown]"); the names are interned again. And its bound: names past it are
 * "[name refused]", counted.
 */
static void test_names_renewal(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	uint64_t sched = kallsyms_addr("schedule", "T");
	struct symbolizer_stats ss;
	struct symbolizer *s;
	struct child c;
	char path[PATH_MAX], name[32];
	uint64_t ips[1];
	int i;

	(void)state;
	workload(path, "symbols");
	spawn(&c, path, NULL);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	if (sched) {
		ips[0] = sched + 1;
		assert_string_equal(kernel_stack(s, st, ips, 1), "schedule_[k]");
	}
	assert_int_equal(strtab__renew(st), 0);
	symbolizer__names_forget(s);
	strtab__renew_done(st);
	fill_junk(st);
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "symbols_leaf");
	if (sched) {
		ips[0] = sched + 1;
		assert_string_equal(kernel_stack(s, st, ips, 1), "schedule_[k]");
	}
	symbolizer__stats(s, &ss);
	assert_int_equal(ss.names_renewals, 1);
	assert_int_equal(ss.names_bytes, strtab__mem_bytes(st));
	assert_int_equal(ss.names_refused, 0);

	/* the bound: a full table refuses the next new name, counted */
	assert_int_equal(strtab__renew(st), 0);
	symbolizer__names_forget(s);
	strtab__renew_done(st);
	fill_junk(st);
	assert_int_equal(strtab__set_limit(st, strtab__mem_bytes(st), "[name refused]"), 0);
	/* names as long as "symbols_leaf" until one does not fit: it would not either */
	for (i = 0;; i++) {
		snprintf(name, sizeof(name), "pad_%08d", i);
		if (strtab__intern(st, name, strlen(name)) == strtab__find(st, "[name refused]", 14))
			break;
	}
	ips[0] = addr_of(&c, "symbols_leaf") + 5;
	assert_string_equal(user_stack(s, st, (uint32_t)c.pid, ips, 1), "[name refused]");
	symbolizer__stats(s, &ss);
	assert_true(ss.names_refused >= 1);
	assert_true(ss.names_bytes <= strtab__mem_bytes(st));
	symbolizer__free(s);
	reap(&c);
	strtab__free(st);
}

/* user_keys of a two-frame stack of @c (symbols_leaf called from the inlined helper); 1 or 0. */
static int stack_keys(struct symbolizer *s, const struct child *c, uint64_t *keys)
{
	uint64_t ips[2] = { addr_of(c, "symbols_leaf") + 5, addr_of(c, "symbols_inline_call") };

	return symbolizer__user_keys(s, (uint32_t)c->pid, ips, 2, keys);
}

/*
 * Stacks named by file and offset: two processes of one binary share one file entry
 * and give a stack the same keys; a file replaced at the same path (a new inode, other symbols)
 * gets keys of its own and its own names; frames not named by a file (no mapping) give none.
 */
static void test_file_keys(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct symbolizer_stats a, b;
	struct symbolizer *s;
	struct child c1, c2, c3;
	char path[PATH_MAX], prog[PATH_MAX];
	uint64_t k1[2], k2[2], k3[2], ips[2], nbf;

	(void)state;
	workload(path, "symbols");
	snprintf(prog, sizeof(prog), "%s/keys/prog", tmpdir);
	sh("mkdir -p %s/keys && cp %s %s", tmpdir, path, prog);
	spawn(&c1, prog, NULL);
	spawn(&c2, prog, NULL);
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	/* nothing known yet: no keys (the first stack reads the process and the file) */
	assert_int_equal(stack_keys(s, &c1, k1), 0);
	symbolizer__note_pid(s, (uint32_t)c1.pid);
	assert_int_equal(stack_keys(s, &c1, k1), 0); /* pinned, symbols not read yet */
	ips[0] = addr_of(&c1, "symbols_leaf") + 5;
	ips[1] = addr_of(&c1, "symbols_inline_call");
	nbf = symbolizer__user_not_by_file(s);
	assert_string_equal(user_stack(s, st, (uint32_t)c1.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	assert_int_equal(symbolizer__user_not_by_file(s), nbf); /* named by the file alone */
	assert_int_equal(stack_keys(s, &c1, k1), 1);
	symbolizer__stats(s, &a);
	/* the second process: its own addresses (ASLR), the same file entry and the same keys */
	symbolizer__note_pid(s, (uint32_t)c2.pid);
	assert_int_equal(stack_keys(s, &c2, k2), 1);
	symbolizer__stats(s, &b);
	assert_int_equal(b.elfs_cached, a.elfs_cached);
	assert_int_equal(b.elf_misses, a.elf_misses);
	assert_memory_equal(k1, k2, sizeof(k1));
	ips[0] = addr_of(&c2, "symbols_leaf") + 5;
	ips[1] = addr_of(&c2, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c2.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");

	/* replaced: same path, a new inode with other symbols (and another size: no build-id
	 * sharing); the new process's stack has other keys and the new names */
	sh("objcopy --redefine-sym symbols_leaf=replaced_leaf_function %s %s.new && mv %s.new %s",
	   prog, prog, prog, prog);
	spawn(&c3, prog, NULL);
	symbolizer__note_pid(s, (uint32_t)c3.pid);
	ips[0] = addr_of(&c3, "symbols_leaf") + 5; /* it prints the old name, at the same offset */
	ips[1] = addr_of(&c3, "symbols_inline_call");
	assert_int_equal(ips[0] - addr_of(&c3, "symbols_outer"),
			 addr_of(&c1, "symbols_leaf") + 5 - addr_of(&c1, "symbols_outer"));
	assert_string_equal(user_stack(s, st, (uint32_t)c3.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];replaced_leaf_function");
	assert_int_equal(stack_keys(s, &c3, k3), 1);
	assert_memory_not_equal(k1, k3, sizeof(k1));
	assert_true(k1[0] != k3[0]); /* the leaf's file differs, at the same offset */
	/* the old processes keep their file's keys and names */
	assert_int_equal(stack_keys(s, &c1, k2), 1);
	assert_memory_equal(k1, k2, sizeof(k1));

	/* an address in no mapping: no keys */
	ips[0] = 0x1000;
	assert_int_equal(symbolizer__user_keys(s, (uint32_t)c1.pid, ips, 2, k2), 0);
	symbolizer__free(s);
	reap(&c1);
	reap(&c2);
	reap(&c3);
	strtab__free(st);
}

/*
 * The images live in the file cache handed over (elf/filecache.h): a copy of a binary (another
 * inode, the same build-id and size) is named from the image read for the first, not parsed
 * again; the cache outlives the symbolizer, which takes its images back when freed.
 */
static void test_images_in_file_cache(void **state)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct strtab *st = strtab__new();
	struct filecache *fc = filecache__new(NULL);
	struct filecache_stats fa, fb;
	struct symbolizer_stats a, b;
	struct symbolizer *s;
	struct child c1, c2;
	char path[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];
	uint64_t ips[2];

	(void)state;
	assert_non_null(fc);
	workload(path, "symbols");
	snprintf(p1, sizeof(p1), "%s/fc/one", tmpdir);
	snprintf(p2, sizeof(p2), "%s/fc/two", tmpdir);
	sh("mkdir -p %s/fc && cp %s %s && cp %s %s", tmpdir, path, p1, path, p2);
	spawn(&c1, p1, NULL);
	spawn(&c2, p2, NULL);
	o.files = fc;
	s = symbolizer__new(&o, st);
	assert_non_null(s);
	ips[0] = addr_of(&c1, "symbols_leaf") + 5;
	ips[1] = addr_of(&c1, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c1.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	symbolizer__stats(s, &a);
	filecache__stats(fc, &fa);
	assert_true(fa.files >= 1);
	assert_true(fa.bytes > 0);
	ips[0] = addr_of(&c2, "symbols_leaf") + 5;
	ips[1] = addr_of(&c2, "symbols_inline_call");
	assert_string_equal(user_stack(s, st, (uint32_t)c2.pid, ips, 2),
			    "symbols_outer;symbols_inlined_[i];symbols_leaf");
	symbolizer__stats(s, &b);
	filecache__stats(fc, &fb);
	assert_int_equal(b.elf_buildid_hits, a.elf_buildid_hits + 1); /* the copy: not parsed */
	assert_int_equal(b.elf_symbols, a.elf_symbols);		     /* one image's symbols */
	assert_int_equal(b.elfs_cached, a.elfs_cached + 1);	     /* two files, one image */
	assert_true(fb.shared >= fa.shared + 1);
	symbolizer__free(s); /* first: the cache keeps none of its images */
	filecache__stats(fc, &fb);
	assert_true(fb.bytes < fa.bytes);
	filecache__free(fc);
	reap(&c1);
	reap(&c2);
	strtab__free(st);
}

static int setup(void **state)
{
	(void)state;
	helpers_workloads(workloads, sizeof(workloads));
	return helpers_tmpdir_new(tmpdir, sizeof(tmpdir), "sym");
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_process),
		cmocka_unit_test(test_unknown_in_file),
		cmocka_unit_test(test_stripped_debug_file),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_lazy_images),
		cmocka_unit_test(test_lent_image),
		cmocka_unit_test(test_image_memory_bound),
		cmocka_unit_test(test_short_lived),
		cmocka_unit_test(test_gone_before_first_look), cmocka_unit_test(test_gone_then_live),
		cmocka_unit_test(test_fork_then_exec),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_restricted),
		cmocka_unit_test(test_kernel_resolve),
		cmocka_unit_test(test_kresolve_live),
		cmocka_unit_test(test_retired_state),
		cmocka_unit_test(test_kernel_reload_backoff),
		cmocka_unit_test(test_jit),
		cmocka_unit_test(test_perfmap_files),
		cmocka_unit_test(test_perfmap_stale),
		cmocka_unit_test(test_caches),
		cmocka_unit_test(test_names_renewal),
		cmocka_unit_test(test_file_keys),
		cmocka_unit_test(test_images_in_file_cache),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
