// SPDX-License-Identifier: MIT
/* The BPF pipeline end to end: the generated skeleton opens, and as root it loads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "profiler.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void test_open(void **state)
{
	struct profiler_bpf *skel = profiler_bpf__open();

	assert_non_null(skel);
	assert_non_null(skel->progs.do_sample);
	assert_non_null(skel->maps.stacks);
	assert_non_null(skel->maps.counts);
	assert_int_equal(bpf_program__type(skel->progs.do_sample), BPF_PROG_TYPE_PERF_EVENT);
	profiler_bpf__destroy(skel);
}

static void test_load(void **state)
{
	struct profiler_bpf *skel;
	const char *ci = getenv("CI");

	if (geteuid() != 0) {
		if (ci && !strcmp(ci, "true"))
			fail_msg("loading BPF needs root, and CI must load it");
		skip();
	}
	skel = profiler_bpf__open_and_load();
	assert_non_null(skel);
	assert_true(bpf_program__fd(skel->progs.do_sample) >= 0);
	profiler_bpf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_load),
	};

	libbpf_set_print(silent);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
