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

#include <linux/types.h>
#include "ember/daemon/sample/bpf_shared.h"
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
	assert_non_null(skel->maps.samples);
	assert_non_null(skel->maps.sample_buf);
	assert_non_null(skel->maps.stats);
	assert_int_equal(bpf_program__type(skel->progs.do_sample), BPF_PROG_TYPE_PERF_EVENT);
	assert_int_equal(bpf_map__type(skel->maps.samples), BPF_MAP_TYPE_RINGBUF);
	/* whole samples: a 64-byte header and room for every frame, per CPU */
	assert_int_equal(sizeof(struct ember_sample_rec), 64);
	assert_int_equal(bpf_map__type(skel->maps.sample_buf), BPF_MAP_TYPE_PERCPU_ARRAY);
	assert_int_equal(bpf_map__value_size(skel->maps.sample_buf),
			 sizeof(struct ember_sample_buf));
	assert_true(EMBER_SAMPLE_WORDS >=
		    2 * EMBER_MAX_STACK_DEPTH + EMBER_PY_WORDS * EMBER_PY_MAX_FRAMES);
	/* the exec counter and the idle knob are where the sampler expects them */
	assert_non_null(skel->bss);
	assert_int_equal(skel->bss->exec_seq, 0);
	assert_true(skel->rodata->include_idle);
	sampler_bpf__destroy(skel);
}

/* Calls of bpf_loop() and callback addresses (what a kernel < 5.17 refuses) in @p, as loaded. */
static int loop_uses(const struct bpf_program *p)
{
	const struct bpf_insn *in = bpf_program__insns(p);
	size_t i, n = bpf_program__insn_cnt(p);
	int uses = 0;

	for (i = 0; in && i < n; i++) {
		if (in[i].code == (BPF_JMP | BPF_CALL) && in[i].src_reg == 0 &&
		    in[i].imm == BPF_FUNC_loop)
			uses++;
		if (in[i].code == (BPF_LD | BPF_IMM | BPF_DW) && in[i].src_reg == BPF_PSEUDO_FUNC)
			uses++;
	}
	return uses;
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
	assert_int_equal(bpf_map__set_max_entries(skel->maps.samples, 1 << 16), 0);
	assert_int_equal(sampler_bpf__load(skel), 0);
	assert_int_equal(bpf_map__max_entries(skel->maps.samples), 1 << 16);
	assert_true(bpf_program__fd(skel->progs.do_sample) >= 0);
	/* the program for kernels without bpf_loop() loads and holds none of it; the
	 * walker's does */
	assert_true(bpf_program__fd(skel->progs.do_sample_fp) >= 0);
	assert_int_equal(loop_uses(skel->progs.do_sample_fp), 0);
	assert_true(loop_uses(skel->progs.do_sample) > 0);
	/* the memory and I/O programs pass this kernel's verifier, the hardware counters' too
	 * (emberd loads them only with their section on: [pmc] needs a PMU this VM lacks) */
	assert_true(bpf_program__fd(skel->progs.memio_pagefault) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_sys_exit) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_bio_queue) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_rq_complete) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_malloc) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_cycles) >= 0);
	assert_true(bpf_program__fd(skel->progs.memio_instructions) >= 0);
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
