// SPDX-License-Identifier: MIT
/*
 * ingest: [filter] (comm globs, cgroup prefixes), the marker frames and flags of groups without a
 * stack, the one idle rule, naming through the symbolizer and its cache, and what the sink gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/clock.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/proc/proctrack.h"
#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/symbols/symbolizer.h"

#include "helpers.h"

struct fixture {
	struct strtab *names;
	struct symbolizer *sym;
	struct ingest *in;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->names = strtab__new();
	f->sym = f->names ? symbolizer__new(NULL, f->names) : NULL;
	f->in = f->sym ? ingest__new(f->sym, f->names) : NULL;
	*state = f;
	return f->in ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ingest__free(f->in);
	symbolizer__free(f->sym);
	strtab__free(f->names);
	free(f);
	return 0;
}

/* Writes @text as the fake /proc's @pid/cgroup under @root. */
static void fake_cgroup(const char *root, uint32_t pid, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/cgroup", root, pid);
	assert_int_equal(helpers_write_file(path, text, 0644), 0);
}

/* [filter]'s cgroup answers kept in each process's state of the process tracker: read once per
 * image (then every 10 s), the old image's answer for its samples named after its exec or exit
 * (the pid another process's by then), read anew for the new one, and after a reload */
static void test_filter_procs(void **state)
{
	struct fixture *f = *state;
	char root[256];
	struct proc_tracker_opts o = { .proc_root = root };
	struct proc_tracker *pt;
	struct ingest_stats st;
	uint64_t t_exec, t_exit, reads0, kept0;

	assert_int_equal(helpers_tmpdir_new(root, sizeof(root), "ingest"), 0);
	pt = proc_tracker__new(&o);
	assert_non_null(pt);
	assert_int_equal(ingest__set_procs(f->in, pt), 0);
	ingest__stats(f->in, &st); /* the fixture's ingest: other tests' counts */
	reads0 = st.cgroup_reads;
	kept0 = st.cgroup_kept;
	fake_cgroup(root, 42, "1:name=systemd:/x\n0::/system.slice/a.service\n");
	assert_int_equal(ingest__set_filter(f->in, NULL, "/system.slice/a.service"), 0);
	assert_true(ingest__excluded_at(f->in, 42, "x", 0));
	assert_true(ingest__excluded_at(f->in, 42, "x", mono_ns()));
	ingest__stats(f->in, &st);
	assert_int_equal(st.cgroup_reads - reads0, 1);
	assert_int_equal(st.cgroup_kept - kept0, 1);
	/* an exec: the new image is in another cgroup (as if moved meanwhile) */
	fake_cgroup(root, 42, "0::/user.slice/u.scope\n");
	t_exec = mono_ns();
	proc_tracker__exec(pt, 42, false, NULL, t_exec);
	assert_true(ingest__excluded_at(f->in, 42, "x", t_exec - 1)); /* the old image's */
	assert_false(ingest__excluded_at(f->in, 42, "x", t_exec + 1)); /* read anew */
	assert_false(ingest__excluded_at(f->in, 42, "x", 0));
	ingest__stats(f->in, &st);
	assert_int_equal(st.cgroup_reads - reads0, 2);
	/* its exit, and the pid taken by a process of the excluded service */
	t_exit = mono_ns();
	proc_tracker__exit_at(pt, 42, t_exit);
	fake_cgroup(root, 42, "0::/system.slice/a.service/sub\n");
	assert_false(ingest__excluded_at(f->in, 42, "x", t_exit - 1));
	assert_true(ingest__excluded_at(f->in, 42, "x", 0));
	ingest__stats(f->in, &st);
	assert_int_equal(st.cgroup_reads - reads0, 3);
	/* a reload: the answers kept were for the old prefixes */
	assert_int_equal(ingest__set_filter(f->in, NULL, "/user.slice"), 0);
	assert_false(ingest__excluded_at(f->in, 42, "x", 0));
	ingest__stats(f->in, &st);
	assert_int_equal(st.cgroup_reads - reads0, 4);
	/* gone: nothing to exclude it by, and nothing kept for it */
	assert_false(ingest__excluded_at(f->in, 43, "x", 0));
	/* without the tracker: every ask reads (the real /proc: our own cgroup, "/" matching any) */
	assert_int_equal(ingest__set_procs(f->in, NULL), 0);
	assert_int_equal(ingest__set_filter(f->in, NULL, "/"), 0);
	assert_int_equal(ingest__excluded(f->in, (uint32_t)getpid(), "x"),
			 ingest__excluded(f->in, (uint32_t)getpid(), "x"));
	ingest__stats(f->in, &st);
	assert_int_equal(st.cgroup_reads - reads0, 7);
	assert_int_equal(ingest__set_filter(f->in, NULL, NULL), 0); /* for the tests after */
	helpers_tmpdir_rm(root);
	proc_tracker__free(pt);
}

/* What the sink saw: the folded text of the last stack and its flags. */
struct seen {
	struct sbuf text;
	unsigned int flags;
	size_t nr_kernel, calls;
	const struct ingest *in;
};

static int sink(const struct ingest_stack *st, void *ctx)
{
	struct seen *s = ctx;
	const struct strtab *names = ingest__names(s->in);
	size_t i;

	sbuf_reset(&s->text);
	for (i = 0; i < st->nr_frames; i++) {
		if (i)
			sbuf_addc(&s->text, ';');
		sbuf_add(&s->text, strtab__str(names, st->frames[i]),
			 strtab__len(names, st->frames[i]));
	}
	sbuf_addc(&s->text, '\0');
	s->flags = st->flags;
	s->nr_kernel = st->nr_kernel;
	s->calls++;
	return 0;
}

static void test_filter(void **state)
{
	struct fixture *f = *state;
	char line[512] = "", cg[512] = "", list[600];
	FILE *fp;

	assert_int_equal(ingest__set_filter(f->in, "sshd,kworker/*,ba?h", ""), 0);
	assert_true(ingest__excluded(f->in, 0, "sshd"));
	assert_true(ingest__excluded(f->in, 0, "kworker/0:1"));
	assert_true(ingest__excluded(f->in, 0, "bash"));
	assert_false(ingest__excluded(f->in, 0, "sshd2"));
	assert_false(ingest__excluded(f->in, 0, "zsh"));
	/* our own cgroup (v2) */
	fp = fopen("/proc/self/cgroup", "re");
	if (fp) {
		while (fgets(line, sizeof(line), fp))
			if (!strncmp(line, "0::", 3))
				snprintf(cg, sizeof(cg), "%.*s", (int)strcspn(line + 3, "\n"),
					 line + 3);
		fclose(fp);
	}
	if (cg[0]) {
		snprintf(list, sizeof(list), "/nonexistent,%s", cg);
		assert_int_equal(ingest__set_filter(f->in, NULL, list), 0);
		assert_true(ingest__excluded(f->in, (uint32_t)getpid(), "x"));
		assert_int_equal(ingest__set_filter(f->in, NULL, "/nonexistent.slice"), 0);
		assert_false(ingest__excluded(f->in, (uint32_t)getpid(), "x"));
	}
	/* an excluded group reaches no sink and is counted, samples not groups */
	{
		uint64_t times[3] = { 1, 2, 3 };
		uint32_t cpus[3] = { 0 };
		struct sampler_group g = { .pid = 42,
					   .tid = 42,
					   .comm = "sshd",
					   .times_ns = times,
					   .cpus = cpus,
					   .nr_times = 3,
					   .untimed = 2,
					   .user_err = -EFAULT,
					   .kernel_err = -EFAULT };
		struct seen s = { .in = f->in };
		uint64_t before = ingest__filtered(f->in);

		assert_int_equal(ingest__set_filter(f->in, "sshd", NULL), 0);
		assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
		assert_int_equal(s.calls, 0);
		assert_int_equal(ingest__filtered(f->in) - before, 5);
		sbuf_fini(&s.text);
	}
	assert_int_equal(ingest__set_filter(f->in, NULL, NULL), 0);
}

/* Groups without a stack: the markers and flags, for the store and captures alike. */
static void test_markers(void **state)
{
	static const struct {
		uint32_t pid;
		const char *comm;
		int user_err, kernel_err;
		const char *text;
		unsigned int flags;
		size_t nr_kernel;
	} cases[] = {
		/* an idle sample taken without its stack: the idle marker, idle */
		{ 0, "swapper/1", -EFAULT, -EFAULT, "[idle]_[k]", INGEST_STACK_IDLE, 1 },
		/* a user stack lost to a collision, no kernel stack (user mode) */
		{ 7, "app", -EEXIST, -EFAULT, "[stack collision]",
		  INGEST_STACK_USER_MISSING | INGEST_STACK_KERN_MISSING, 0 },
		/* both lost: the kernel form of the marker is a kernel frame */
		{ 7, "app", -ENOENT, -EEXIST, "[lost stack];[stack collision]_[k]",
		  INGEST_STACK_USER_MISSING | INGEST_STACK_KERN_MISSING, 1 },
		/* a kernel thread (no user stack, -EFAULT) whose kernel stack was lost */
		{ 9, "kworker/0:1", -EFAULT, -ENOENT, "[lost stack]_[k]",
		  INGEST_STACK_USER_MISSING | INGEST_STACK_KERN_MISSING, 1 },
	};
	struct fixture *f = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t t = 1;
		uint32_t cpu = 0;
		struct sampler_group g = { .pid = cases[i].pid,
					   .tid = cases[i].pid,
					   .times_ns = &t,
					   .cpus = &cpu,
					   .nr_times = 1,
					   .user_err = cases[i].user_err,
					   .kernel_err = cases[i].kernel_err };
		struct seen s = { .in = f->in };

		snprintf(g.comm, sizeof(g.comm), "%s", cases[i].comm);
		assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
		assert_int_equal(s.calls, 1);
		assert_string_equal(s.text.buf, cases[i].text);
		assert_int_equal(s.flags, cases[i].flags);
		assert_int_equal(s.nr_kernel, cases[i].nr_kernel);
		sbuf_fini(&s.text);
	}
}

/* A user stack of this very process is named (and a second time from the cache); the idle task's
 * kernel stack outside an idle function is CPU work (interrupts), not idle. */
static void test_named(void **state)
{
	struct fixture *f = *state;
	uint64_t ip = (uint64_t)(uintptr_t)test_markers + 8, t = 1;
	uint32_t cpu = 0;
	struct sampler_group g = { .pid = (uint32_t)getpid(),
				   .tid = (uint32_t)getpid(),
				   .comm = "test_ingest",
				   .user_ips = &ip,
				   .nr_user = 1,
				   .times_ns = &t,
				   .cpus = &cpu,
				   .nr_times = 1,
				   .kernel_err = -EFAULT };
	struct ingest_stats st;
	struct seen s = { .in = f->in };

	assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
	assert_string_equal(s.text.buf, "test_markers");
	assert_int_equal(s.flags, INGEST_STACK_KERN_MISSING);
	assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
	assert_string_equal(s.text.buf, "test_markers");
	ingest__stats(f->in, &st);
	assert_true(st.cache_hits >= 1);
	sbuf_fini(&s.text);
}

/* The address of kernel function @name in /proc/kallsyms, 0 if absent or hidden. */
static uint64_t kallsyms_addr(const char *name)
{
	char line[512], n[256], type;
	unsigned long long a, want = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (!want && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, n) == 3 && !strcmp(n, name))
			want = a;
	fclose(f);
	return want;
}

/*
 * A waker whose kernel stack has an interrupt (a timer's hrtimer_wakeup under
 * asm_sysvec_apic_timer_interrupt) was the interrupt, not the task it came in on: its user stack
 * gives way to "[interrupt]"; a waker in a system call (no interrupt) and an on-CPU sample with
 * the same frames keep theirs.
 */
static void test_irq_waker(void **state)
{
	struct fixture *f = *state;
	uint64_t uip = (uint64_t)(uintptr_t)test_markers + 8, t = 1, kips[4];
	uint32_t cpu = 1;
	struct sampler_group g = { .pid = (uint32_t)getpid(),
				   .tid = (uint32_t)getpid(),
				   .comm = "test_ingest",
				   .user_ips = &uip,
				   .nr_user = 1,
				   .kernel_ips = kips,
				   .nr_kernel = 3,
				   .times_ns = &t,
				   .cpus = &cpu,
				   .nr_times = 1,
				   .kind = EMBER_KIND_WAKEUP,
				   .wakee_tid = 7,
				   .wakee_kind = EMBER_KIND_OFFCPU_S,
				   .wakee_comm = "producer" };
	struct ingest_stats st;
	struct seen s = { .in = f->in };

	/* leaf first, as bpf_get_stack() gives them */
	kips[0] = kallsyms_addr("try_to_wake_up");
	kips[1] = kallsyms_addr("hrtimer_wakeup");
	kips[2] = kallsyms_addr("asm_sysvec_apic_timer_interrupt");
	if (!kips[0] || !kips[1] || !kips[2])
		skip(); /* not x86-64, or kallsyms hidden (not root) */
	kips[0] += 4;
	kips[1] += 4;
	kips[2] += 4;
	assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
	assert_non_null(strstr(s.text.buf, "[interrupt];asm_sysvec_apic_timer_interrupt"));
	assert_ptr_equal(strstr(s.text.buf, "[interrupt]"), s.text.buf);
	assert_non_null(strstr(s.text.buf, ";try_to_wake_up"));
	assert_null(strstr(s.text.buf, "test_markers"));
	assert_int_equal(s.nr_kernel, 3);
	ingest__stats(f->in, &st);
	assert_int_equal(st.irq_wakers, 1);

	/* the same frames in an on-CPU sample: the task's, kept */
	g.kind = 0;
	assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
	assert_ptr_equal(strstr(s.text.buf, "test_markers;"), s.text.buf);
	assert_int_equal(s.nr_kernel, 3);

	/* a waker without an interrupt: its own stacks */
	g.kind = EMBER_KIND_WAKEUP;
	g.nr_kernel = 2;
	assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
	assert_ptr_equal(strstr(s.text.buf, "test_markers;"), s.text.buf);
	assert_int_equal(s.nr_kernel, 2);
	ingest__stats(f->in, &st);
	assert_int_equal(st.irq_wakers, 1);

	/* two programs on sched_waking: the tracepoint's iterator as the leaf, left out */
	memmove(kips + 1, kips, 3 * sizeof(*kips));
	kips[0] = kallsyms_addr("__traceiter_sched_waking");
	if (kips[0]) {
		kips[0] += 4;
		g.nr_kernel = 4;
		assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
		assert_ptr_equal(strstr(s.text.buf, "[interrupt]"), s.text.buf);
		assert_non_null(strstr(s.text.buf, ";try_to_wake_up"));
		assert_null(strstr(s.text.buf, "traceiter"));
		assert_int_equal(s.nr_kernel, 3);

		/* ... and a waker without an interrupt under it: its own stacks, the iterator out */
		kips[3] = kips[2]; /* hrtimer_wakeup at the root: no interrupt frame */
		g.nr_kernel = 4;
		kips[2] = kallsyms_addr("try_to_wake_up") + 4;
		assert_int_equal(ingest__group(f->in, &g, sink, &s), 0);
		assert_ptr_equal(strstr(s.text.buf, "test_markers;"), s.text.buf);
		assert_null(strstr(s.text.buf, "[interrupt]"));
		assert_null(strstr(s.text.buf, "traceiter"));
		assert_int_equal(s.nr_kernel, 3);
	}
	sbuf_fini(&s.text);
}

/* A running tests/workloads/symbols (or a copy): its pid and where its functions are. */
struct child {
	pid_t pid;
	FILE *out;
	uint64_t leaf, inline_call;
};

static void spawn(struct child *c, const char *path)
{
	char line[256], name[64];
	void *addr;
	int fds[2];

	memset(c, 0, sizeof(*c));
	assert_int_equal(pipe(fds), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	c->out = fdopen(fds[0], "r");
	while (fgets(line, sizeof(line), c->out) && strcmp(line, "ready\n")) {
		if (sscanf(line, "%63s %p", name, &addr) != 2)
			continue;
		if (!strcmp(name, "symbols_leaf"))
			c->leaf = (uint64_t)(uintptr_t)addr;
		else if (!strcmp(name, "symbols_inline_call"))
			c->inline_call = (uint64_t)(uintptr_t)addr;
	}
	assert_true(c->leaf && c->inline_call);
}

static void reap(struct child *c)
{
	kill(c->pid, SIGTERM);
	waitpid(c->pid, NULL, 0);
	fclose(c->out);
}

/* Names @c's stack (symbols_leaf called from the inlined helper) into @s. */
static void group_of(struct fixture *f, const struct child *c, struct seen *s)
{
	uint64_t ips[2] = { c->leaf + 5, c->inline_call }, t = 1;
	uint32_t cpu = 0;
	struct sampler_group g = { .pid = (uint32_t)c->pid, .tid = (uint32_t)c->pid,
				   .comm = "symbols", .user_ips = ips, .nr_user = 2,
				   .times_ns = &t, .cpus = &cpu, .nr_times = 1,
				   .kernel_err = -EFAULT };

	assert_int_equal(ingest__group(f->in, &g, sink, s), 0);
}

/*
 * Stacks named by file and offset: a second process of one binary finds the stack
 * the first one's sample named (a cache hit for another pid); a process of a file replaced at
 * the same path (new inode, other symbols) does not, and gets its own file's names.
 */
static void test_by_file(void **state)
{
	struct fixture *f = *state;
	struct seen s = { .in = f->in };
	struct ingest_stats a, b;
	struct child c1, c2, c3;
	char dir[64], wl[PATH_MAX - 64], prog[PATH_MAX], cmd[4 * PATH_MAX + 128];
	const char *stack = "symbols_outer;symbols_inlined_[i];symbols_leaf";

	helpers_workloads(wl, sizeof(wl));
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "ingest"), 0);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "cp %s/symbols %s", wl, prog);
	assert_int_equal(system(cmd), 0);
	spawn(&c1, prog);
	spawn(&c2, prog);
	symbolizer__note_pid(f->sym, (uint32_t)c1.pid);
	symbolizer__note_pid(f->sym, (uint32_t)c2.pid);
	group_of(f, &c1, &s); /* reads the file's symbols */
	assert_string_equal(s.text.buf, stack);
	group_of(f, &c1, &s); /* now keyed by file and offset */
	assert_string_equal(s.text.buf, stack);
	ingest__stats(f->in, &a);
	group_of(f, &c2, &s);
	assert_string_equal(s.text.buf, stack);
	ingest__stats(f->in, &b);
	assert_int_equal(b.cache_file_hits, a.cache_file_hits + 1);
	assert_int_equal(b.cache_misses, a.cache_misses);

	/* the file replaced (another size: no sharing by build-id either) */
	snprintf(cmd, sizeof(cmd),
		 "objcopy --redefine-sym symbols_leaf=replaced_leaf_function %s %s.new && "
		 "mv %s.new %s", prog, prog, prog, prog);
	assert_int_equal(system(cmd), 0);
	spawn(&c3, prog);
	assert_int_equal(c3.inline_call - c3.leaf, c1.inline_call - c1.leaf);
	symbolizer__note_pid(f->sym, (uint32_t)c3.pid);
	group_of(f, &c3, &s);
	assert_string_equal(s.text.buf, "symbols_outer;symbols_inlined_[i];replaced_leaf_function");
	group_of(f, &c3, &s);
	assert_string_equal(s.text.buf, "symbols_outer;symbols_inlined_[i];replaced_leaf_function");
	ingest__stats(f->in, &a);
	assert_int_equal(a.cache_file_hits, b.cache_file_hits);
	group_of(f, &c2, &s); /* and the old file's processes keep their names */
	assert_string_equal(s.text.buf, stack);
	reap(&c1);
	reap(&c2);
	reap(&c3);
	helpers_tmpdir_rm(dir);
	sbuf_fini(&s.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_filter_procs),
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_irq_waker),
		cmocka_unit_test(test_by_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
