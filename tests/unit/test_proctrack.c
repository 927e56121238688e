// SPDX-License-Identifier: MIT
/*
 * The process tracker (proc/proctrack.c): both ways of reading a process's mappings give the
 * same mappings (PROCMAP_QUERY where this kernel has it, and the /proc/PID/maps text), a read is
 * shared until the next event, an exit drops it, a gone process answers with its last read, and
 * a fake /proc tree (a regular file: no ioctl) falls back to the text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/daemon/proc/proctrack.h"

struct ent {
	uint64_t start, end, pgoff, inode;
	uint32_t maj, min;
	bool r, w, x, shared, deleted;
	int kind;
	char path[512];
};

struct list {
	struct ent e[4096];
	size_t n;
};

static int collect(const struct procmaps_entry *e, void *ctx)
{
	struct list *l = ctx;
	struct ent *x;

	if (l->n == 4096)
		return 1;
	x = &l->e[l->n++];
	*x = (struct ent){ .start = e->start, .end = e->end, .pgoff = e->pgoff, .inode = e->inode,
			   .maj = e->dev_major, .min = e->dev_minor, .r = e->r, .w = e->w,
			   .x = e->x, .shared = e->shared, .deleted = e->deleted, .kind = e->kind };
	assert_true(e->path_len < sizeof(x->path));
	memcpy(x->path, e->path, e->path_len);
	return 0;
}

static void read_list(struct proc_tracker *pt, uint32_t pid, struct list *l)
{
	struct proc_maps *m = proc_tracker__maps(pt, pid, 0);

	assert_non_null(m);
	l->n = 0;
	assert_int_equal(proc_maps__for_each(m, collect, l), 0);
	assert_int_equal(proc_maps__count(m), l->n);
	proc_maps__put(m);
}

/* A child that maps nothing more while both ways read it (this process mallocs meanwhile). */
static pid_t quiet_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	return pid;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Both ways, same mappings: addresses, offsets, devices, inodes, permissions, kinds, paths. */
static void test_both_ways_agree(void **state)
{
	struct proc_tracker_opts qo = { 0 }, to = { .force_maps_read = true };
	struct proc_tracker *q = proc_tracker__new(&qo), *t = proc_tracker__new(&to);
	struct list *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct proc_tracker_stats sq, st;
	pid_t pid = quiet_child();
	size_t i;
	bool exe = false, vdso = false;

	(void)state;
	assert_non_null(q);
	assert_non_null(t);
	read_list(q, (uint32_t)pid, a);
	read_list(t, (uint32_t)pid, b);
	proc_tracker__stats(q, &sq);
	proc_tracker__stats(t, &st);
	assert_int_equal(st.text_reads, 1);
	assert_int_equal(st.query_reads, 0);
	assert_false(st.procmap_query);
	/* the kernel has PROCMAP_QUERY (6.11+) or not: one way or the other, counted */
	assert_int_equal(sq.query_reads + sq.text_reads, 1);
	print_message("PROCMAP_QUERY: %s, %zu mappings kept, %llu ioctls\n",
		      sq.procmap_query ? "yes" : "no (text)", a->n,
		      (unsigned long long)sq.query_ioctls);
	assert_int_equal(a->n, b->n);
	assert_true(a->n >= 3);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->e[i].start, b->e[i].start);
		assert_int_equal(a->e[i].end, b->e[i].end);
		assert_int_equal(a->e[i].pgoff, b->e[i].pgoff);
		assert_int_equal(a->e[i].inode, b->e[i].inode);
		assert_int_equal(a->e[i].maj, b->e[i].maj);
		assert_int_equal(a->e[i].min, b->e[i].min);
		assert_int_equal(a->e[i].r, b->e[i].r);
		assert_int_equal(a->e[i].w, b->e[i].w);
		assert_int_equal(a->e[i].x, b->e[i].x);
		assert_int_equal(a->e[i].shared, b->e[i].shared);
		assert_int_equal(a->e[i].deleted, b->e[i].deleted);
		assert_int_equal(a->e[i].kind, b->e[i].kind);
		assert_string_equal(a->e[i].path, b->e[i].path);
		/* kept: files, the vDSO, executable anonymous memory; never the stack or heap */
		assert_true(a->e[i].kind == PROCMAPS_FILE || a->e[i].kind == PROCMAPS_VDSO ||
			    (a->e[i].kind == PROCMAPS_ANON && a->e[i].x));
		if (a->e[i].kind == PROCMAPS_VDSO)
			vdso = true;
		if (a->e[i].x && strstr(a->e[i].path, "test_proctrack"))
			exe = true;
		if (i)
			assert_true(a->e[i].start >= a->e[i - 1].end);
	}
	assert_true(exe);
	assert_true(vdso);
	end_child(pid);
	proc_tracker__free(q);
	proc_tracker__free(t);
	free(a);
	free(b);
}

/* One read per event, shared; an event reads again; an exit drops; gone: the last read. */
static void test_events(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct proc_maps *m1, *m2, *m3;
	struct proc_tracker_stats s;
	pid_t pid = quiet_child();

	(void)state;
	m1 = proc_tracker__maps(pt, (uint32_t)pid, 0);
	m2 = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m1);
	assert_ptr_equal(m1, m2); /* shared, not read twice */
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.reused, 1);
	assert_int_equal(s.procs, 1);
	proc_tracker__invalidate(pt, (uint32_t)pid);
	m3 = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m3);
	assert_ptr_not_equal(m3, m1); /* the event read again */
	proc_maps__put(m3);
	/* asked for a read newer than the last: read again */
	m3 = proc_tracker__maps(pt, (uint32_t)pid, proc_maps__read_ns(m1) + 1000000000ull * 3600);
	assert_non_null(m3);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 3);
	proc_maps__put(m3);
	/* gone: an event's read fails, the last read answers (counted) */
	end_child(pid);
	proc_tracker__invalidate(pt, (uint32_t)pid);
	m3 = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m3);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.stale_used, 1);
	assert_int_equal(s.read_errors, 1);
	proc_maps__put(m3);
	/* exit: dropped at once; the snapshots held stay readable */
	proc_tracker__exit(pt, (uint32_t)pid);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.mappings, 0);
	assert_int_equal(s.mem_bytes, 0);
	assert_int_equal(s.exits, 1);
	assert_true(proc_maps__count(m1) >= 3);
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	proc_maps__put(m1);
	proc_maps__put(m2);
	proc_tracker__free(pt);
}

/* An exec drops the old image's snapshot: a read that fails afterwards (the new image gone
 * before anyone read it) answers nothing, not the old image's mappings. */
static void test_exec_forgets_old_image(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct proc_tracker_stats s;
	struct proc_maps *m;
	pid_t pid = quiet_child();

	(void)state;
	m = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m);
	proc_maps__put(m);
	proc_tracker__exec(pt, (uint32_t)pid, false);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.mappings, 0);
	end_child(pid);
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.stale_used, 0);
	proc_tracker__free(pt);
}

/* A fake /proc: the ioctl cannot work on a regular file, the text is read; sweep drops a pid
 * whose directory went. */
static void test_fake_root(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[128];
	struct proc_tracker_opts o = { .proc_root = root };
	struct proc_tracker *pt;
	struct proc_tracker_stats s;
	struct list *l = calloc(1, sizeof(*l));
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/42", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/42/maps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("00400000-00401000 r--p 00000000 08:01 7 /usr/bin/x\n"
	      "00401000-00402000 r-xp 00001000 08:01 7 /usr/bin/x\n"
	      "00600000-00700000 rw-p 00000000 00:00 0 [heap]\n"
	      "7f0000000000-7f0000001000 rwxp 00000000 00:00 0\n"
	      "7f0000002000-7f0000003000 rw-p 00000000 00:00 0\n"
	      "garbage\n"
	      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n",
	      f);
	fclose(f);
	pt = proc_tracker__new(&o);
	read_list(pt, 42, l);
	assert_int_equal(l->n, 4); /* two of the file, the JIT region, the vDSO */
	assert_string_equal(l->e[1].path, "/usr/bin/x");
	assert_true(l->e[2].x && l->e[2].kind == PROCMAPS_ANON);
	assert_int_equal(l->e[3].kind, PROCMAPS_VDSO);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.text_reads, 1);
	assert_false(s.procmap_query);
	assert_int_equal(proc_tracker__sweep(pt), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/42", root);
	rmdir(path);
	assert_int_equal(proc_tracker__sweep(pt), 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.swept, 1);
	rmdir(root);
	proc_tracker__free(pt);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways_agree),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_exec_forgets_old_image),
		cmocka_unit_test(test_fake_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
