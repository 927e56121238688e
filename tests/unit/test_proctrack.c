// SPDX-License-Identifier: MIT
/*
 * The process tracker (proc/proctrack.c): both ways of reading a process's mappings give the
 * same mappings (PROCMAP_QUERY where this kernel has it, and the /proc/PID/maps text), a read is
 * shared until the next event, an exit drops it, a gone process answers with its last read, and
 * a fake /proc tree (a regular file: no ioctl) falls back to the text; a mapping's identity is
 * checked once per snapshot, shared by a fork's copy, and a failed check is not kept.
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
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
		/* a failed assertion longjmps past end_child(): never left behind, paused */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
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
	/* m1 still held by this reader: counted, once, until its last put */
	assert_true(s.snapshot_bytes > 0);
	assert_true(s.mem_bytes >= s.snapshot_bytes);
	assert_int_equal(s.exits, 1);
	assert_true(proc_maps__count(m1) >= 3);
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	proc_maps__put(m1);
	proc_maps__put(m2);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.snapshot_bytes, 0); /* the last put gave them back */
	proc_tracker__free(pt);
}

/* An exec sets the old image's snapshot aside: a read that fails afterwards (the new image gone
 * before anyone read it) answers nothing, not the old image's mappings; what ran before the
 * exec answers for its time until the exit. */
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
	uint64_t t0 = mono_ns();

	proc_tracker__exec(pt, (uint32_t)pid, false, NULL, t0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 1);	  /* held for what ran before */
	assert_int_equal(s.mappings, 0); /* none that answers */
	end_child(pid);
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.stale_used, 0);
	{
		uint64_t t = 0;
		struct proc_maps *pre = proc_tracker__before_exec(pt, (uint32_t)pid, &t);

		assert_ptr_equal(pre, m); /* the read before the exec, shared */
		assert_int_equal(t, t0);
		proc_maps__put(pre);
		proc_tracker__exit(pt, (uint32_t)pid);
		assert_null(proc_tracker__before_exec(pt, (uint32_t)pid, &t));
	}
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.snapshot_bytes, 0);
	proc_tracker__free(pt);
}

/*
 * An exec with the new executable as the kernel told it: a live process is read as before (the
 * told image replaced by the read); one gone before any read answers with the told mapping, its
 * path and identity as given, marked as the exec's; its exit drops it.
 */
/* The names' share: charged to the process the tracker holds, refused past the limit and
 * counted, started over with a new generation, dropped with the process; a process not held is
 * charged nothing. */
static void test_names_share(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct proc_tracker_stats s;
	struct list *l = calloc(1, sizeof(*l));
	pid_t pid = quiet_child();
	struct proc_names_owner o = { .pt = pt, .pid = (uint32_t)pid };
	struct proc_names_owner none = { .pt = pt, .pid = 4000000 };

	(void)state;
	assert_non_null(l);
	assert_true(proc_tracker__admit_names(&none, 100, 1, 150)); /* not held */
	read_list(pt, (uint32_t)pid, l);
	assert_true(proc_tracker__admit_names(&o, 100, 1, 150));
	assert_false(proc_tracker__admit_names(&o, 100, 1, 150)); /* 200 > 150 */
	assert_true(proc_tracker__admit_names(&o, 50, 1, 150));	  /* 150: fits */
	assert_false(proc_tracker__admit_names(&o, 1, 1, 150));
	assert_false(proc_tracker__admit_names(&o, 151, 2, 150)); /* larger than any share */
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.names_refused, 3);
	assert_int_equal(s.names_unowned, 1);
	assert_int_equal(s.names_share_max, 0); /* generation 2: nothing charged in it yet */
	assert_true(proc_tracker__admit_names(&o, 120, 2, 150)); /* started over */
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.names_share_max, 120);
	assert_true(proc_tracker__admit_names(&o, 1000, 2, 0)); /* no limit */
	proc_tracker__exit(pt, (uint32_t)pid);
	assert_true(proc_tracker__admit_names(&o, 100, 2, 150)); /* gone: not held */
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.names_unowned, 2);
	end_child(pid);
	free(l);
	proc_tracker__free(pt);
}

static void test_exec_image(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct procmaps_entry img = { .start = 0x400000, .end = 0x402000, .pgoff = 0x1000,
				      .inode = 77, .dev_major = 8, .dev_minor = 1, .r = true,
				      .x = true, .exec_image = true, .kind = PROCMAPS_FILE,
				      .path = "/usr/bin/burnXX", .path_len = 13 };
	struct proc_tracker_stats s;
	struct list *l = calloc(1, sizeof(*l));
	struct proc_maps *m;
	pid_t pid = quiet_child();

	(void)state;
	assert_non_null(l);
	proc_tracker__exec(pt, (uint32_t)pid, false, &img, 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exec_images, 1);
	assert_int_equal(s.procs, 1);
	read_list(pt, (uint32_t)pid, l); /* alive: read, the told image replaced */
	assert_true(l->n > 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exec_image_used, 0);
	/* again, and gone before any read */
	proc_tracker__exec(pt, (uint32_t)pid, false, &img, 1);
	end_child(pid);
	m = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m);
	l->n = 0;
	assert_int_equal(proc_maps__for_each(m, collect, l), 0);
	proc_maps__put(m);
	assert_int_equal(l->n, 1);
	assert_int_equal(l->e[0].start, 0x400000);
	assert_int_equal(l->e[0].end, 0x402000);
	assert_int_equal(l->e[0].pgoff, 0x1000);
	assert_int_equal(l->e[0].inode, 77);
	assert_int_equal(l->e[0].maj, 8);
	assert_string_equal(l->e[0].path, "/usr/bin/burn");
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exec_image_used, 1);
	assert_int_equal(s.exec_images, 2);
	proc_tracker__exit(pt, (uint32_t)pid);
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	/* no image told (inode 0), or gone in the batch with one: as before / kept for its
	 * samples until the exit */
	img.inode = 0;
	proc_tracker__exec(pt, (uint32_t)pid, true, &img, 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exec_images, 2);
	assert_int_equal(s.procs, 0);
	img.inode = 77;
	proc_tracker__exec(pt, (uint32_t)pid, true, &img, 1);
	m = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m);
	assert_int_equal(proc_maps__count(m), 1);
	proc_maps__put(m);
	proc_tracker__exit(pt, (uint32_t)pid);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.mappings, 0);
	assert_int_equal(s.snapshot_bytes, 0); /* nothing held any more */
	free(l);
	proc_tracker__free(pt);
}

/*
 * A fork whose parent the tracker never read (a shell started before emberd, never sampled):
 * the parent is read once, at its first fork, and every fork shares that read; a parent gone
 * before that read is tried once too, not at each of its forks.
 */
static void test_fork_unknown_parent(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct proc_tracker_stats s;
	struct proc_maps *m, *c;
	pid_t parent = quiet_child(), dead;
	uint32_t i, child = 4194304 + 1; /* above PID_MAX_LIMIT: never a live process */

	(void)state;
	for (i = 0; i < 300; i++) /* a fork loop: gone (exec in the same batch) or not */
		proc_tracker__fork(pt, (uint32_t)parent, child + i, i & 1, false, 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.forks, 300);
	assert_int_equal(s.fork_parent_reads, 1);
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.fork_copies, 300);
	m = proc_tracker__maps(pt, (uint32_t)parent, 0);
	assert_non_null(m);
	assert_true(proc_maps__count(m) >= 3);
	for (i = 0; i < 300; i += 299) { /* the children's copies are that read */
		c = proc_tracker__forked(pt, child + i);
		assert_ptr_equal(c, m);
		proc_maps__put(c);
		c = proc_tracker__maps(pt, child + i, 0); /* no /proc entry: the copy answers */
		assert_ptr_equal(c, m);
		proc_maps__put(c);
	}
	proc_maps__put(m);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 1);
	end_child(parent);
	/* its exec: the new image is unknown, read again at its next fork */
	proc_tracker__exec(pt, (uint32_t)parent, false, NULL, 1);
	proc_tracker__fork(pt, (uint32_t)parent, child + 1000, false, false, 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.fork_parent_reads, 2);
	assert_int_equal(s.reads, 1); /* gone now: the read failed */
	assert_int_equal(s.read_errors, 1);
	assert_int_equal(s.fork_copies, 300);
	/* gone before its first fork is seen: one read tried, not one per fork */
	dead = quiet_child();
	end_child(dead);
	for (i = 0; i < 50; i++)
		proc_tracker__fork(pt, (uint32_t)dead, child + 2000 + i, false, false, 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.fork_parent_reads, 3);
	assert_int_equal(s.read_errors, 2);
	assert_null(proc_tracker__forked(pt, child + 2000));
	proc_tracker__free(pt);
}

/* A fake /proc: the ioctl cannot work on a regular file, the text is read; sweep drops a pid
 * whose directory went. */
static void test_fake_root(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[128];
	struct proc_tracker_opts o = { .proc_root = root, .sweep_grace_ns = 1 };
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
	/* found gone: kept until a later sweep past the grace (its samples may be named yet) */
	assert_int_equal(proc_tracker__sweep(pt), 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 1);
	assert_int_equal(proc_tracker__sweep(pt), 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.procs, 0);
	assert_int_equal(s.swept, 1);
	rmdir(root);
	proc_tracker__free(pt);
	free(l);
}

static void write_maps(const char *root, int pid, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* @pid's fork copy (@pre false) or image before its exec: how many mappings it has. */
static size_t held_count(struct proc_tracker *pt, uint32_t pid, bool pre)
{
	uint64_t until = 0;
	struct proc_maps *m = pre ? proc_tracker__before_exec(pt, pid, &until) :
				    proc_tracker__forked(pt, pid);
	size_t n;

	assert_non_null(m);
	n = proc_maps__count(m);
	proc_maps__put(m);
	return n;
}

/*
 * A fork's copy that lacks the libraries: its parent was known only by its exec's image (a
 * seeded exec, never read) or read while its loader mapped them, and forked at once (a shell
 * script). The copy names the fork's samples from before its exec; with it as it was a deep
 * shell's fork came out "_start;[unknown];[unknown];main" (test_exec, fresh-clone run ZP4). It is
 * made whole from what the parent maps now when a sample is named by it (forked(), before the
 * fork's exec, and before_exec(), after), once; not when the parent has exec'd since the fork.
 */
static void test_fork_copy_filled(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", cmd[200];
	struct proc_tracker_opts o = { .proc_root = root };
	struct proc_tracker *pt;
	struct proc_tracker_stats s;
	struct list *l = calloc(1, sizeof(*l));
	struct proc_maps *m;
	struct procmaps_entry img = { .start = 0x400000, .end = 0x401000, .inode = 7,
				      .dev_major = 8, .dev_minor = 1, .r = true, .x = true,
				      .exec_image = true, .kind = PROCMAPS_FILE,
				      .path = "/usr/bin/bash", .path_len = 13 };
	uint64_t t;
	static const char loading[] =
		"00400000-00401000 r-xp 00000000 08:01 7 /usr/bin/bash\n"
		"7f1000000000-7f1000001000 r-xp 00000000 08:01 9 /usr/lib64/ld-linux-x86-64.so.2\n",
			  whole[] =
		"00400000-00401000 r-xp 00000000 08:01 7 /usr/bin/bash\n"
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 8 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
		"7f1000000000-7f1000001000 r-xp 00000000 08:01 9 /usr/lib64/ld-linux-x86-64.so.2\n";

	(void)state;
	assert_non_null(l);
	assert_non_null(mkdtemp(root));
	pt = proc_tracker__new(&o);
	/* read while loading, then forks: the copy made whole at its first use, once */
	write_maps(root, 42, loading);
	read_list(pt, 42, l);
	assert_int_equal(l->n, 2);
	write_maps(root, 42, whole); /* ld.so has mapped libc, then the shell forks */
	proc_tracker__fork(pt, 42, 43, false, false, mono_ns());
	m = proc_tracker__forked(pt, 43);
	assert_non_null(m);
	l->n = 0;
	assert_int_equal(proc_maps__for_each(m, collect, l), 0);
	proc_maps__put(m);
	assert_int_equal(l->n, 3);
	assert_string_equal(l->e[1].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(held_count(pt, 43, false), 3);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.fork_copies_filled, 1);
	/* a parent read whole: its copy as it is */
	write_maps(root, 50, whole);
	read_list(pt, 50, l);
	proc_tracker__fork(pt, 50, 51, false, false, mono_ns());
	assert_int_equal(held_count(pt, 51, false), 3);
	/* known by its exec's image alone (seeded, never read): the fork's copy after its own
	 * exec (before_exec) made whole too */
	write_maps(root, 70, whole);
	proc_tracker__exec(pt, 70, false, &img, mono_ns());
	proc_tracker__fork(pt, 70, 71, false, false, mono_ns());
	proc_tracker__exec(pt, 71, false, NULL, mono_ns());
	assert_int_equal(held_count(pt, 71, true), 3);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.fork_copies_filled, 2);
	/* the parent exec'd after the fork: what it maps now is another image's, not used */
	write_maps(root, 80, whole);
	proc_tracker__exec(pt, 80, false, &img, mono_ns());
	t = mono_ns();
	proc_tracker__fork(pt, 80, 81, false, false, t);
	proc_tracker__exec(pt, 80, false, &img, t + 1000);
	assert_int_equal(held_count(pt, 81, false), 1);
	/* the parent gone: as it was */
	proc_tracker__exec(pt, 90, false, &img, mono_ns());
	proc_tracker__fork(pt, 90, 91, false, false, mono_ns());
	assert_int_equal(held_count(pt, 91, false), 1);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.fork_copies_filled, 2);
	proc_tracker__free(pt);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	free(l);
}

/* A fork's copy of a shell's snapshot, its exec not handled yet: a runtime reader's look at
 * the process (proc_tracker__image_maps) reads what it maps now, once. */
static void test_image_maps(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[160], exe[160];
	struct proc_tracker_opts o = { .proc_root = root };
	struct proc_tracker *pt;
	struct proc_tracker_stats s;
	struct proc_maps *m, *c;
	struct list *l = calloc(1, sizeof(*l));
	struct stat st;
	FILE *f;
	int i;

	(void)state;
	assert_non_null(l);
	assert_non_null(mkdtemp(root));
	snprintf(exe, sizeof(exe), "%s/node", root);
	f = fopen(exe, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(stat(exe, &st), 0);
	for (i = 42; i <= 43; i++) {
		snprintf(path, sizeof(path), "%s/%d", root, i);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/%d/maps", root, i);
		f = fopen(path, "w");
		assert_non_null(f);
		if (i == 42) /* inodes other than the executable's */
			fprintf(f,
				"00400000-00401000 r-xp 00000000 08:01 %llu /usr/bin/bash\n"
				"7f0000000000-7f0000001000 r-xp 00000000 08:01 %llu /usr/lib/libc.so.6\n",
				(unsigned long long)st.st_ino + 1, (unsigned long long)st.st_ino + 2);
		else
			fprintf(f, "00400000-00401000 r-xp 00000000 %02x:%02x %llu %s\n",
				major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino, exe);
		fclose(f);
	}
	pt = proc_tracker__new(&o);
	proc_tracker__fork(pt, 42, 43, false, false, 0);
	c = proc_tracker__maps(pt, 43, 0); /* the shell's, until the exec is handled */
	read_list(pt, 43, l);
	assert_string_equal(l->e[0].path, "/usr/bin/bash");
	/* no exe link: the snapshot as it is */
	m = proc_tracker__image_maps(pt, 43);
	assert_ptr_equal(m, c);
	proc_maps__put(m);
	snprintf(path, sizeof(path), "%s/43/exe", root);
	assert_int_equal(symlink(exe, path), 0);
	/* the shell's snapshot does not map the executable: read again */
	m = proc_tracker__image_maps(pt, 43);
	assert_non_null(m);
	assert_ptr_not_equal(m, c);
	l->n = 0;
	assert_int_equal(proc_maps__for_each(m, collect, l), 0);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->e[0].path, exe);
	proc_maps__put(m);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.image_rereads, 1);
	/* now it does: answered from that read */
	m = proc_tracker__image_maps(pt, 43);
	assert_non_null(m);
	proc_maps__put(m);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.image_rereads, 1);
	proc_maps__put(c);
	proc_tracker__free(pt);
	unlink(path);
	for (i = 42; i <= 43; i++) {
		snprintf(path, sizeof(path), "%s/%d/maps", root, i);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%d", root, i);
		rmdir(path);
	}
	unlink(exe);
	rmdir(root);
	free(l);
}

/* In the fake /proc @root: an empty file "prog" (its path into @exe, its stat into *@st) and the
 * folder of @pid with its "exe" link to it (the link's path into @link, the folder's into @dir). */
static void fake_exe(const char *root, uint32_t pid, char *exe, char *dir, char *link, size_t len,
		     struct stat *st)
{
	FILE *f;

	snprintf(exe, len, "%s/prog", root);
	f = fopen(exe, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(stat(exe, st), 0);
	snprintf(dir, len, "%s/%u", root, pid);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(link, len, "%s/%u/exe", root, pid);
	assert_int_equal(symlink(exe, link), 0);
}

/* The executable's identity: one stat for the readers that ask within the age they accept (the
 * first stat of a process not held yet makes its entry), again after the process's exec or a
 * fork of its pid. */
static void test_exe_id(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[160], exe[160], dir[160];
	struct proc_tracker_opts o = { .proc_root = root };
	struct proc_tracker *pt;
	struct proc_tracker_stats s;
	struct stat st;
	uint64_t dev = 0, ino = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	/* the parent's mappings, which its fork shares: the tracker holds the child */
	snprintf(dir, sizeof(dir), "%s/42", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/42/maps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "00400000-00401000 r-xp 00000000 08:01 7 /usr/bin/bash\n");
	fclose(f);
	fake_exe(root, 43, exe, dir, path, sizeof(path), &st);
	pt = proc_tracker__new(&o);
	/* not held yet: the first stat makes its entry, the second reader within the age is
	 * answered from it */
	assert_int_equal(proc_tracker__exe_id(pt, 43, PROC_EXE_MAX_AGE_NS, &dev, &ino), 0);
	assert_int_equal(ino, st.st_ino);
	assert_int_equal(dev, st.st_dev);
	assert_int_equal(proc_tracker__exe_id(pt, 43, PROC_EXE_MAX_AGE_NS, &dev, &ino), 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exe_reads, 1);
	assert_int_equal(s.exe_reused, 1);
	assert_int_equal(s.procs, 1);
	/* a fork of the pid (its exit missed) from a parent whose executable is not known: a new
	 * process, stat'ed again, then answered from that */
	proc_tracker__fork(pt, 42, 43, false, false, 0);
	assert_int_equal(proc_tracker__exe_id(pt, 43, PROC_EXE_BATCH_NS, &dev, &ino), 0);
	assert_int_equal(proc_tracker__exe_id(pt, 43, PROC_EXE_MAX_AGE_NS, &dev, &ino), 0);
	assert_int_equal(ino, st.st_ino);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exe_reads, 2);
	assert_int_equal(s.exe_reused, 2);
	/* an age of 0 asks for a stat now */
	assert_int_equal(proc_tracker__exe_id(pt, 43, 0, &dev, &ino), 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exe_reads, 3);
	/* its exec: the link names another file now, and the old answer is not given */
	unlink(path);
	assert_int_equal(symlink(root, path), 0);
	proc_tracker__exec(pt, 43, false, NULL, 1);
	assert_int_equal(proc_tracker__exe_id(pt, 43, PROC_EXE_MAX_AGE_NS, &dev, &ino), 0);
	assert_int_not_equal(ino, st.st_ino);
	/* gone: an error, nothing kept */
	unlink(path);
	assert_int_not_equal(proc_tracker__exe_id(pt, 43, 0, &dev, &ino), 0);
	proc_tracker__free(pt);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/42/maps", root);
	unlink(path);
	snprintf(dir, sizeof(dir), "%s/42", root);
	rmdir(dir);
	unlink(exe);
	rmdir(root);
}

/* The executable's path from the mappings: the mapping of /proc/PID/exe's inode, no readlink;
 * ENOENT when the snapshot does not map it (a read from before an exec). */
static void test_exe_path(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[160], exe[160], dir[160], buf[64];
	struct proc_tracker_opts o = { .proc_root = root, .force_maps_read = true };
	struct proc_tracker *pt;
	struct proc_tracker_stats s;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_exe(root, 44, exe, dir, path, sizeof(path), &st);
	snprintf(path, sizeof(path), "%s/44/maps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "00400000-00401000 r-xp 00000000 08:01 7 /usr/lib/libother.so\n");
	fprintf(f, "00500000-00501000 r-xp 00000000 08:01 %lu /usr/bin/python3.11\n",
		(unsigned long)st.st_ino);
	fclose(f);
	pt = proc_tracker__new(&o);
	assert_non_null(pt);
	assert_int_equal(proc_tracker__exe_path(pt, 44, buf, sizeof(buf)), 19);
	assert_string_equal(buf, "/usr/bin/python3.11");
	/* too small a buffer: said, not cut */
	assert_int_equal(proc_tracker__exe_path(pt, 44, buf, 8), -ENAMETOOLONG);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.exe_reads, 1); /* one stat for both */
	assert_int_equal(s.exe_paths, 1);
	/* an image whose mappings do not hold the executable: not found, for a readlink instead */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "00400000-00401000 r-xp 00000000 08:01 7 /usr/lib/libother.so\n");
	fclose(f);
	proc_tracker__invalidate(pt, 44);
	assert_int_equal(proc_tracker__exe_path(pt, 44, buf, sizeof(buf)), -ENOENT);
	proc_tracker__free(pt);
	unlink(path);
	snprintf(path, sizeof(path), "%s/44/exe", root);
	unlink(path);
	rmdir(dir);
	unlink(exe);
	rmdir(root);
}

static int find_x_file(const struct procmaps_entry *e, void *ctx)
{
	const struct procmaps_entry **ret = ctx;

	if (e->kind == PROCMAPS_FILE && e->x && e->inode) {
		*ret = e;
		return 1;
	}
	return 0;
}

static const struct procmaps_entry *first_x_file(struct proc_maps *m)
{
	const struct procmaps_entry *e = NULL;

	(void)proc_maps__for_each(m, find_x_file, &e);
	return e;
}

/* One identity check per mapping per snapshot: the second question is answered from the first,
 * a fork's copy shares it, a new read checks again, a failure (gone) is not kept. */
static void test_identity_once(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	struct proc_tracker_stats s;
	const struct procmaps_entry *e, *e2;
	struct proc_maps *m, *mf, *m2;
	struct stat st, st2, ref;
	const uint32_t fake = 4000000; /* above pid_max's limit: no such process */
	pid_t child = quiet_child();

	(void)state;
	assert_non_null(pt);
	m = proc_tracker__maps(pt, (uint32_t)child, 0);
	assert_non_null(m);
	e = first_x_file(m);
	assert_non_null(e);
	assert_int_equal(proc_tracker__identity(pt, m, e, (uint32_t)child, &st), 0);
	assert_int_equal(st.st_ino, e->inode);
	assert_true(S_ISREG(st.st_mode));
	{
		char path[600];

		snprintf(path, sizeof(path), "%.*s", (int)e->path_len, e->path);
		assert_int_equal(stat(path, &ref), 0);
		assert_int_equal(st.st_size, ref.st_size);
		assert_int_equal(st.st_mtim.tv_sec, ref.st_mtim.tv_sec);
		assert_int_equal(st.st_mtim.tv_nsec, ref.st_mtim.tv_nsec);
		assert_int_equal(st.st_uid, ref.st_uid);
		assert_int_equal(st.st_dev, ref.st_dev);
	}
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.ident_checks, 1);
	assert_int_equal(s.ident_reused, 0);
	/* asked again (another reader): the same answer, no check */
	memset(&st2, 0xff, sizeof(st2));
	assert_int_equal(proc_tracker__identity(pt, m, e, (uint32_t)child, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	assert_int_equal(st2.st_size, st.st_size);
	assert_int_equal(st2.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.ident_checks, 1);
	assert_int_equal(s.ident_reused, 1);
	/* a fork's copy is the same snapshot: its readers' questions are answered (the fake pid
	 * could not be checked: a check would fail) */
	proc_tracker__fork(pt, (uint32_t)child, fake, false, false, 0);
	mf = proc_tracker__maps(pt, fake, 0);
	assert_ptr_equal(mf, m);
	assert_int_equal(proc_tracker__identity(pt, mf, e, fake, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.ident_checks, 1);
	assert_int_equal(s.ident_reused, 2);
	assert_int_equal(s.ident_failed, 0);
	proc_maps__put(mf);
	/* not the snapshot's entry, not a file: refused, nothing checked */
	m2 = proc_tracker__maps(pt, fake, 0);
	assert_int_equal(proc_tracker__identity(pt, m, NULL, (uint32_t)child, &st2), -EINVAL);
	proc_maps__put(m2);
	/* an event: a new read, checked again */
	proc_tracker__invalidate(pt, (uint32_t)child);
	m2 = proc_tracker__maps(pt, (uint32_t)child, 0);
	assert_non_null(m2);
	assert_ptr_not_equal(m2, m);
	e2 = first_x_file(m2);
	assert_non_null(e2);
	assert_int_equal(proc_tracker__identity(pt, m2, e, (uint32_t)child, &st2), -EINVAL);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.ident_checks, 1);
	/* gone: the check fails, and is not kept (asked again, checked again) */
	end_child(child);
	assert_int_not_equal(proc_tracker__identity(pt, m2, e2, (uint32_t)child, &st2), 0);
	assert_int_not_equal(proc_tracker__identity(pt, m2, e2, (uint32_t)child, &st2), 0);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.ident_checks, 1);
	assert_int_equal(s.ident_failed, 2);
	/* the first snapshot's answer stays: it is its own */
	assert_int_equal(proc_tracker__identity(pt, m, e, (uint32_t)child, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	proc_maps__put(m2);
	proc_maps__put(m);
	proc_tracker__free(pt);
}

/*
 * An exit told is remembered: the pid's maps and executable are answered "gone" (ESRCH) with no
 * /proc work, though this child still lives here to show that none was done; a fork of the pid
 * makes it a process again. A fork's first sample keeps the fork's copy (no read), its start is
 * the fork's time (kept through its exec) and its executable its parent's (no stat); after its
 * exec a first sample reads again.
 */
static void test_gone_and_forks(void **state)
{
	struct proc_tracker *pt = proc_tracker__new(NULL);
	uint64_t dev, ino, pdev, pino, born = 0, t = mono_ns();
	struct proc_tracker_stats s;
	struct proc_maps *m, *pm;
	pid_t pid = quiet_child();

	(void)state;
	assert_false(proc_tracker__gone(pt, (uint32_t)pid));
	assert_int_equal(proc_tracker__born(pt, (uint32_t)pid, &born), -ENOENT);
	proc_tracker__exit(pt, (uint32_t)pid);
	assert_true(proc_tracker__gone(pt, (uint32_t)pid));
	errno = 0;
	assert_null(proc_tracker__maps(pt, (uint32_t)pid, 0));
	assert_int_equal(errno, ESRCH);
	assert_int_equal(proc_tracker__exe_id(pt, (uint32_t)pid, PROC_EXE_MAX_AGE_NS, &dev, &ino),
			 -ESRCH);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 0);
	assert_int_equal(s.read_errors, 0);
	assert_int_equal(s.exe_reads, 0);
	assert_int_equal(s.gone_known, 3);

	/* the parent's executable known (one stat), then the pid forked from it */
	assert_int_equal(proc_tracker__exe_id(pt, (uint32_t)getpid(), PROC_EXE_MAX_AGE_NS, &pdev,
					      &pino), 0);
	pm = proc_tracker__maps(pt, (uint32_t)getpid(), 0);
	assert_non_null(pm);
	proc_tracker__fork(pt, (uint32_t)getpid(), (uint32_t)pid, false, true, t);
	assert_false(proc_tracker__gone(pt, (uint32_t)pid));
	assert_int_equal(proc_tracker__born(pt, (uint32_t)pid, &born), 0);
	assert_int_equal(born, t);
	assert_true(proc_tracker__first_sample(pt, (uint32_t)pid));
	m = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_ptr_equal(m, pm); /* the fork's copy: its parent's read, not one of its own */
	proc_maps__put(m);
	/* (the fork's copy keeps its parent's stat time: asked within a second, not the daemon's
	 * 20 ms of a first look, which an ASan run at nice 19 beside the other lane outlasted
	 * between the parent's stat and here, fresh-clone run ZK8: a second stat) */
	assert_int_equal(proc_tracker__exe_id(pt, (uint32_t)pid, PROC_EXE_MAX_AGE_NS, &dev, &ino), 0);
	assert_int_equal(dev, pdev);
	assert_int_equal(ino, pino);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 1);	  /* the parent's only */
	assert_int_equal(s.exe_reads, 1); /* the parent's only */
	assert_int_equal(s.first_sample_forked, 1);

	/* exec'd: still born at the fork; its first sample now reads */
	proc_tracker__exec(pt, (uint32_t)pid, false, NULL, t + 1000);
	assert_int_equal(proc_tracker__born(pt, (uint32_t)pid, &born), 0);
	assert_int_equal(born, t);
	assert_false(proc_tracker__first_sample(pt, (uint32_t)pid));
	m = proc_tracker__maps(pt, (uint32_t)pid, 0);
	assert_non_null(m);
	assert_ptr_not_equal(m, pm);
	proc_maps__put(m);
	proc_tracker__stats(pt, &s);
	assert_int_equal(s.reads, 2);
	assert_int_equal(s.first_sample_forked, 1);
	proc_maps__put(pm);
	end_child(pid);
	proc_tracker__free(pt);
}

/* Extensions: a stage's state per process image, made when asked, ended by exec, exit and the
 * sweep (the stage told), kept keep_ns for samples named late, then released once. */
struct ext_log {
	int ended, released;
	uint32_t last_pid;
	uint64_t last_event_ns; /* the ended's event time */
};

static void ext_ended_cb(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct ext_log *g = ctx;

	g->last_event_ns = event_ns;
	g->ended++;
	g->last_pid = pid;
	*(int *)state += 100; /* the stage marks it: seen through ext_last */
}

static void ext_release_cb(void *ctx, uint32_t pid, void *state)
{
	struct ext_log *g = ctx;

	(void)pid;
	(void)state;
	g->released++;
}

static void test_extensions(void **state)
{
	char root[] = "/tmp/ember-proctrack.XXXXXX", path[128];
	struct proc_tracker_opts o = { .proc_root = root, .sweep_grace_ns = 1 };
	struct ext_log g = { 0 }, g2 = { 0 };
	struct proc_ext_ops ops = { .name = "t", .size = sizeof(int), .keep_ns = 0,
				    .ended = ext_ended_cb, .release = ext_release_cb, .ctx = &g };
	struct proc_ext_ops ops2 = { .name = "u", .size = 64, .keep_ns = 3600000000000ull,
				     .release = ext_release_cb, .ctx = &g2 };
	struct proc_tracker_stats st;
	struct proc_tracker *pt;
	int id, id2, *a, *b;

	(void)state;
	assert_non_null(mkdtemp(root));
	pt = proc_tracker__new(&o);
	assert_non_null(pt);
	id = proc_tracker__ext_register(pt, &ops);
	id2 = proc_tracker__ext_register(pt, &ops2);
	assert_true(id >= 0 && id2 >= 0 && id != id2);
	/* nothing until asked: a process never looked at costs the stage nothing */
	assert_null(proc_tracker__ext(pt, id, 7, false));
	assert_null(proc_tracker__ext_last(pt, id, 7));
	a = proc_tracker__ext(pt, id, 7, true);
	assert_non_null(a);
	assert_int_equal(*a, 0); /* zeroed */
	*a = 1;
	assert_ptr_equal(proc_tracker__ext(pt, id, 7, true), a); /* one per image */
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 7), a);
	assert_int_equal(proc_tracker__ext_count(pt, id), 1);
	assert_null(proc_tracker__ext(pt, id2, 7, false)); /* each stage its own */
	assert_non_null(proc_tracker__ext(pt, id2, 7, true));
	/* the exec ends the image: no current state, the ended one still answers ext_last */
	proc_tracker__exec(pt, 7, false, NULL, 1000);
	assert_int_equal(g.ended, 1);
	assert_int_equal(g.last_pid, 7);
	assert_int_equal(g.last_event_ns, 1000); /* the stage is told the exec's time */
	assert_null(proc_tracker__ext(pt, id, 7, false));
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 7), a);
	assert_int_equal(*a, 101);
	/* the new image's state is another, and answers first */
	b = proc_tracker__ext(pt, id, 7, true);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal(*b, 0);
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 7), b);
	/* ended states go at the prune past keep_ns (0 here), once; the other stage's stay */
	assert_int_equal(g.released, 0);
	proc_tracker__ext_prune(pt, id);
	assert_int_equal(g.released, 1);
	proc_tracker__ext_prune(pt, id);
	assert_int_equal(g.released, 1);
	proc_tracker__ext_prune(pt, id2);
	assert_int_equal(g2.released, 0);
	/* the exit ends the new image too */
	proc_tracker__exit(pt, 7);
	assert_int_equal(g.ended, 2);
	assert_null(proc_tracker__ext(pt, id, 7, false));
	/* a state of a process whose exit was never told: the sweep finds it gone (pid 9 has no
	 * entry under the fake root) and ends it; one that is there (pid 8) stays */
	snprintf(path, sizeof(path), "%s/8", root);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_non_null(proc_tracker__ext(pt, id, 8, true));
	assert_non_null(proc_tracker__ext(pt, id, 9, true));
	(void)proc_tracker__sweep(pt);
	assert_int_equal(g.ended, 3);
	assert_int_equal(g.last_pid, 9);
	assert_int_equal(g.last_event_ns, 0); /* a sweep: no event */
	assert_non_null(proc_tracker__ext(pt, id, 8, false));
	proc_tracker__stats(pt, &st);
	assert_int_equal(st.ext_swept, 1);
	assert_int_equal(st.ext_ended, 4); /* 7's twice (two stages at the exec), then 7, 9 */
	/* unregistered: every state released, current or ended */
	proc_tracker__ext_unregister(pt, id);
	assert_int_equal(g.released, 4); /* 7's second image, 9 and 8 (and 7's first before) */
	assert_null(proc_tracker__ext(pt, id, 8, false));
	proc_tracker__free(pt); /* the second stage's: released by the free */
	assert_int_equal(g2.released, 1);
	rmdir(path);
	rmdir(root);
}

/* Samples named after their image ended: proc_tracker__ext_at() answers with the image that ran
 * at the sample's time (an exec's and an exit's times), proc_tracker__ext_end() ends one stage's
 * state alone. */
static void test_ext_at(void **state)
{
	struct proc_tracker_opts o = { .proc_root = "/nonexistent" };
	struct ext_log g = { 0 }, g2 = { 0 };
	struct proc_ext_ops ops = { .name = "t", .size = sizeof(int), .keep_ns = 3600000000000ull,
				    .ended = ext_ended_cb, .ctx = &g };
	struct proc_ext_ops ops2 = { .name = "u", .size = sizeof(int), .ended = ext_ended_cb,
				     .keep_ns = 3600000000000ull, .ctx = &g2 };
	struct proc_tracker *pt;
	struct timespec ts;
	uint64_t now, t1, t2;
	int id, id2, *a, *b, *c;

	(void)state;
	pt = proc_tracker__new(&o);
	assert_non_null(pt);
	id = proc_tracker__ext_register(pt, &ops);
	id2 = proc_tracker__ext_register(pt, &ops2);
	assert_true(id >= 0 && id2 >= 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	t1 = now - 3000000; /* the exec, 3 ms ago */
	t2 = now - 1000000; /* the exit, 1 ms ago */
	assert_null(proc_tracker__ext_at(pt, id, 20, t1));
	a = proc_tracker__ext(pt, id, 20, true);
	*a = 1;
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t1 - 1), a); /* the current one */
	proc_tracker__exec(pt, 20, false, NULL, t1);
	b = proc_tracker__ext(pt, id, 20, true);
	*b = 2;
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t1 - 1), a); /* before the exec */
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t1), b);
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, now), b);
	proc_tracker__exit_at(pt, 20, t2);
	assert_null(proc_tracker__ext(pt, id, 20, false));
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t1 - 1), a);
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t2 - 1), b);
	/* after the exit (threads that ran on): the last image */
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t2 + 1), b);
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 20), b);
	/* the pid used again: its new process's samples, the old ones' still named */
	c = proc_tracker__ext(pt, id, 20, true);
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t2 + 1), c);
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t1 - 1), a);
	assert_ptr_equal(proc_tracker__ext_at(pt, id, 20, t2 - 1), b);
	/* one stage ends its own state: the other's stays current */
	assert_non_null(proc_tracker__ext(pt, id2, 20, true));
	g.ended = g2.ended = 0;
	proc_tracker__ext_end(pt, id, 20, 0);
	assert_int_equal(g.ended, 1);
	assert_int_equal(g2.ended, 0);
	assert_null(proc_tracker__ext(pt, id, 20, false));
	assert_non_null(proc_tracker__ext(pt, id2, 20, false));
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 20), c);
	assert_int_equal(proc_tracker__ext_count(pt, id), 3);
	proc_tracker__free(pt);
}

/*
 * What the symbolizer needs of its extension: an exit that does not end its states
 * (keep_at_exit; an exec does), an image it comes to only after its end added as ended
 * (add_ended: older than the pid's other ended ones), ended states by a sample's time alone
 * (ended_at: never the current one), a current state let go unended (drop) and the oldest ended
 * ones trimmed to a count (trim).
 */
static void test_ext_stage_rules(void **state)
{
	struct proc_tracker_opts o = { .proc_root = "/nonexistent" };
	struct ext_log g = { 0 };
	struct proc_ext_ops ops = { .name = "s",
				    .size = sizeof(int),
				    .keep_ns = 3600000000000ull,
				    .ended = ext_ended_cb,
				    .release = ext_release_cb,
				    .ctx = &g,
				    .keep_at_exit = true };
	struct proc_tracker *pt;
	int id, *a, *b, *c;

	(void)state;
	pt = proc_tracker__new(&o);
	assert_non_null(pt);
	id = proc_tracker__ext_register(pt, &ops);
	assert_true(id >= 0);
	a = proc_tracker__ext(pt, id, 30, true);
	*a = 1;
	proc_tracker__exit_at(pt, 30, 500);
	assert_int_equal(g.ended, 0); /* still current */
	assert_ptr_equal(proc_tracker__ext(pt, id, 30, false), a);
	assert_false(proc_tracker__ext_has_ended(pt, id, 30));
	proc_tracker__exec(pt, 30, false, NULL, 1000); /* an exec does end it */
	assert_int_equal(g.ended, 1);
	assert_true(proc_tracker__ext_has_ended(pt, id, 30));
	/* the image before, come to later: ended at 600, older than the one ended at 1000 */
	b = proc_tracker__ext_add_ended(pt, id, 30, 600);
	assert_non_null(b);
	assert_int_equal(*b, 0);
	*b = 2;
	assert_int_equal(g.ended, 1); /* made ended: nothing to tell */
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 599), b);
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 600), a);
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 999), a);
	assert_null(proc_tracker__ext_ended_at(pt, id, 30, 1000));
	assert_ptr_equal(proc_tracker__ext_last(pt, id, 30), a); /* the newest ended */
	/* an end given as a time after now is kept as given (a read in the exec's window) */
	c = proc_tracker__ext(pt, id, 30, true);
	*c = 3;
	assert_null(proc_tracker__ext_ended_at(pt, id, 30, 5000000000000000000ull));
	proc_tracker__ext_end(pt, id, 30, 6000000000000000000ull);
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 5000000000000000000ull), c);
	/* trimmed to two: the first kept goes first (a, ended before b was added) */
	assert_int_equal(proc_tracker__ext_count(pt, id), 3);
	proc_tracker__ext_trim(pt, id, 2);
	assert_int_equal(g.released, 1);
	assert_int_equal(proc_tracker__ext_count(pt, id), 2);
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 599), b);
	assert_ptr_equal(proc_tracker__ext_ended_at(pt, id, 30, 600), c);
	/* a current state dropped: released, not ended */
	a = proc_tracker__ext(pt, id, 31, true);
	assert_non_null(a);
	proc_tracker__ext_drop(pt, id, 31);
	assert_int_equal(g.released, 2);
	assert_int_equal(g.ended, 2);
	assert_null(proc_tracker__ext(pt, id, 31, false));
	assert_false(proc_tracker__ext_has_ended(pt, id, 31));
	proc_tracker__free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways_agree),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_exec_forgets_old_image),
		cmocka_unit_test(test_exec_image),
		cmocka_unit_test(test_fork_unknown_parent),
		cmocka_unit_test(test_fork_copy_filled),
		cmocka_unit_test(test_gone_and_forks),
		cmocka_unit_test(test_fake_root),
		cmocka_unit_test(test_image_maps),
		cmocka_unit_test(test_exe_id),
		cmocka_unit_test(test_exe_path),
		cmocka_unit_test(test_identity_once),
		cmocka_unit_test(test_names_share),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_ext_at),
		cmocka_unit_test(test_ext_stage_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
