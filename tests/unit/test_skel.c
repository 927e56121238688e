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

#include "sampler.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void test_open(void **state)
{
	struct sampler_bpf *skel = sampler_bpf__open();

	assert_non_null(skel);
	assert_non_null(skel->progs.do_sample);
	assert_non_null(skel->maps.stacks0);
	assert_non_null(skel->maps.stacks1);
	assert_non_null(skel->maps.counts0);
	assert_non_null(skel->maps.counts1);
	assert_non_null(skel->maps.times);
	assert_non_null(skel->maps.stats);
	assert_int_equal(bpf_program__type(skel->progs.do_sample), BPF_PROG_TYPE_PERF_EVENT);
	assert_int_equal(bpf_map__type(skel->maps.stacks0), BPF_MAP_TYPE_STACK_TRACE);
	assert_int_equal(bpf_map__type(skel->maps.times), BPF_MAP_TYPE_RINGBUF);
	assert_int_equal(bpf_map__value_size(skel->maps.counts0), sizeof(__u64));
	/* the generation switch and the idle knob are where the sampler expects them */
	assert_non_null(skel->bss);
	assert_int_equal(skel->bss->gen, 0);
	assert_true(skel->rodata->include_idle);
	sampler_bpf__destroy(skel);
}

static void test_load(void **state)
{
	struct sampler_bpf *skel;
	const char *ci = getenv("CI");

	if (geteuid() != 0) {
		if (ci && !strcmp(ci, "true"))
			fail_msg("loading BPF needs root, and CI must load it");
		skip();
	}
	skel = sampler_bpf__open();
	assert_non_null(skel);
	/* sizes are configuration: set before load, as the sampler does */
	assert_int_equal(bpf_map__set_max_entries(skel->maps.stacks0, 1024), 0);
	assert_int_equal(bpf_map__set_max_entries(skel->maps.times, 1 << 16), 0);
	assert_int_equal(sampler_bpf__load(skel), 0);
	assert_int_equal(bpf_map__max_entries(skel->maps.stacks0), 1024);
	assert_true(bpf_program__fd(skel->progs.do_sample) >= 0);
	sampler_bpf__destroy(skel);
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
