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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/symbols/symbolizer.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_named),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
