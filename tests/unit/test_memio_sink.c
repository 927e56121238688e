// SPDX-License-Identifier: MIT
/* memio_sink: the sections into sampler options, events into their stores by quanta of weight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/profile.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/store/memio_sink.h"
#include "ember/daemon/store/store.h"

#define T0 1700000000000000000ULL

static void test_from_config(void **state)
{
	struct sampler_memio_opts o;
	struct memio_sink *k = (void *)1;
	struct ember_config c;
	char err[256] = "";

	(void)state;
	ember_config_init(&c);
	/* all off by default: no sink, no program */
	assert_int_equal(memio_sink__from_config(&c, NULL, &o, &k, err, sizeof(err)), 0);
	assert_null(k);
	assert_false(o.pagefault || o.vmgrow || o.blockio || o.malloc);
	/* malloc is opt-in per process or comm */
	c.malloc = true;
	assert_int_equal(memio_sink__from_config(&c, NULL, &o, &k, err, sizeof(err)), -EINVAL);
	assert_null(k);
	assert_non_null(strstr(err, "pid or comm"));
	snprintf(c.malloc_comm, sizeof(c.malloc_comm), "%s", "a-comm-longer-than-15");
	assert_int_equal(memio_sink__from_config(&c, NULL, &o, &k, err, sizeof(err)), -EINVAL);
	snprintf(c.malloc_comm, sizeof(c.malloc_comm), "%s", "memio");
	c.pagefault = true;
	assert_int_equal(memio_sink__from_config(&c, NULL, &o, &k, err, sizeof(err)), 0);
	assert_non_null(k);
	assert_true(o.pagefault && o.malloc && !o.vmgrow && !o.blockio);
	assert_int_equal(o.pagefault_period, 16);
	assert_int_equal(o.max_rate[EMBER_MEMIO_PAGEFAULT], 1000);
	assert_string_equal(o.malloc_comm, "memio");
	assert_non_null(memio_sink__store(k, MEMIO_STORE_PAGEFAULT));
	assert_null(memio_sink__store(k, MEMIO_STORE_VMGROW)); /* off: no store */
	assert_int_equal(memio_sink__quantum(k, MEMIO_STORE_PAGEFAULT), 16);
	assert_int_equal(memio_sink__quantum(k, MEMIO_STORE_MALLOC), 512 * 1024);
	memio_sink__free(k);
	assert_string_equal(memio_sink_unit(MEMIO_STORE_PAGEFAULT), "pages");
	assert_string_equal(memio_sink_unit(MEMIO_STORE_BLOCKIO_LAT), "nanoseconds");
	assert_string_equal(memio_sink_type(MEMIO_STORE_VMGROW), "vm_growth");
}

/* Sum of the counts of stacks whose text is @want in @s's window, or -1 for another stack. */
static uint64_t count_of(struct store *s, const char *want, size_t *ret_nstacks)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = strtab__new();
	struct profile *p = store__query(s, &f, st);
	struct sbuf sb = SBUF_INIT;
	uint64_t c, c2, total = 0;
	size_t i;

	assert_non_null(p);
	*ret_nstacks = profile__nr_stacks(p);
	for (i = 0; i < profile__nr_stacks(p); i++) {
		sbuf_reset(&sb);
		profile__stack_text(p, i, &sb);
		assert_true(profile__count_exact(p, i, &c, &c2));
		if (!strcmp(sb.buf, want))
			total += c;
	}
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
	return total;
}

/*
 * Weights are summed per kind and a record stored at each crossing of a multiple of the
 * quantum: vm growth in pages of 4 KiB (raw) into a 64 KiB quantum, exact over events.
 */
static void test_put(void **state)
{
	struct ember_config c;
	struct sampler_memio_opts o;
	struct memio_sink *k;
	struct strtab *names = strtab__new();
	char err[256];
	uint32_t ids[2];
	uint64_t times[3] = { T0, T0 + 1000, T0 + 2000 };
	uint32_t w[3] = { 8, 8, 32 }; /* pages: 32 K + 32 K + 128 K = 3 quanta of 64 K */
	struct sampler_group g = { .pid = 42,
				   .tid = 43,
				   .comm = "memio",
				   .times_ns = times,
				   .cpus = w,
				   .nr_times = 3,
				   .kind = EMBER_KIND_VMGROW };
	struct ingest_stack is = { .frames = ids, .nr_frames = 2, .g = &g };
	struct memio_sink_stats ss;
	size_t n;

	(void)state;
	ember_config_init(&c);
	c.vmgrow = true;
	c.blockio = true;
	assert_int_equal(memio_sink__from_config(&c, names, &o, &k, err, sizeof(err)), 0);
	memio_sink__set_clock_offset(k, 0);
	ids[0] = (uint32_t)strtab__intern(names, "main", 4);
	ids[1] = (uint32_t)strtab__intern(names, "grow_a", 6);
	assert_int_equal(memio_sink__put(&is, k), 0);
	assert_int_equal(
	    count_of(memio_sink__store(k, MEMIO_STORE_VMGROW), "memio;[mmap];main;grow_a", &n), 3);
	assert_int_equal(n, 1);
	/* brk under its own root; a remainder carries: 16 pages (64 K) + the nothing left */
	g.kind = EMBER_KIND_VMGROW | EMBER_VM_BRK << 8;
	w[0] = 8;
	g.nr_times = 1;
	assert_int_equal(memio_sink__put(&is, k), 0); /* 32 K: under a quantum, carried */
	assert_int_equal(
	    count_of(memio_sink__store(k, MEMIO_STORE_VMGROW), "memio;[brk];main;grow_a", &n), 0);
	assert_int_equal(memio_sink__put(&is, k), 0); /* 64 K with the carry: one */
	assert_int_equal(
	    count_of(memio_sink__store(k, MEMIO_STORE_VMGROW), "memio;[brk];main;grow_a", &n), 1);
	/* one event of 2^32 - 1 pages: capped at 65536 records, the rest counted */
	w[0] = UINT32_MAX;
	assert_int_equal(memio_sink__put(&is, k), 0);
	memio_sink__stats(k, &ss);
	assert_int_equal(ss.quanta[MEMIO_STORE_VMGROW], 3 + 1 + 65536);
	assert_true(ss.capped[MEMIO_STORE_VMGROW] > 0);
	/* block I/O: writeback's root; latency in us into 100 us quanta, spread over the wait */
	g.kind = EMBER_KIND_BLOCKIO | EMBER_BIO_WRITEBACK << 8;
	w[0] = 64 * 1024;
	assert_int_equal(memio_sink__put(&is, k), 0);
	assert_int_equal(count_of(memio_sink__store(k, MEMIO_STORE_BLOCKIO),
				  "memio;[writeback];main;grow_a", &n),
			 4); /* 64 K / 16 K */
	g.kind = EMBER_KIND_BLOCKIO_LAT | EMBER_BIO_WRITEBACK << 8;
	w[0] = 350; /* us: 3 quanta, 50 carried */
	assert_int_equal(memio_sink__put(&is, k), 0);
	assert_int_equal(count_of(memio_sink__store(k, MEMIO_STORE_BLOCKIO_LAT),
				  "memio;[writeback];main;grow_a", &n),
			 3);
	/* a kind whose section is off: nothing stored, no error; an unknown kind: refused */
	g.kind = EMBER_KIND_CYCLES; /* [pmc] off here */
	assert_int_equal(memio_sink__put(&is, k), 0);
	g.kind = EMBER_KIND_PAGEFAULT;
	assert_int_equal(memio_sink__put(&is, k), 0);
	g.kind = EMBER_KIND_OFFCPU_S;
	assert_int_equal(memio_sink__put(&is, k), -EINVAL);
	memio_sink__free(k);
	strtab__free(names);
}

/* [pmc]: cycles and instructions without a root frame (their stacks diff one against the other) */
static void test_pmc(void **state)
{
	struct ember_config c;
	struct sampler_memio_opts o;
	struct memio_sink *k;
	struct strtab *names = strtab__new();
	char err[256];
	uint32_t ids[2];
	uint64_t times[1] = { T0 };
	uint32_t w[1] = { 2000000 }; /* two periods */
	struct sampler_group g = { .pid = 42,
				   .tid = 43,
				   .comm = "burn",
				   .times_ns = times,
				   .cpus = w,
				   .nr_times = 1,
				   .kind = EMBER_KIND_CYCLES };
	struct ingest_stack is = { .frames = ids, .nr_frames = 2, .g = &g };
	size_t n;

	(void)state;
	ember_config_init(&c);
	c.pmc = true;
	assert_int_equal(memio_sink__from_config(&c, names, &o, &k, err, sizeof(err)), 0);
	assert_true(o.pmc);
	assert_int_equal(o.pmc_period, 1000000);
	memio_sink__set_clock_offset(k, 0);
	ids[0] = (uint32_t)strtab__intern(names, "main", 4);
	ids[1] = (uint32_t)strtab__intern(names, "spin", 4);
	assert_int_equal(memio_sink__put(&is, k), 0);
	assert_int_equal(count_of(memio_sink__store(k, MEMIO_STORE_CYCLES), "burn;main;spin", &n),
			 2);
	g.kind = EMBER_KIND_INSTRUCTIONS;
	w[0] = 1000000;
	assert_int_equal(memio_sink__put(&is, k), 0);
	assert_int_equal(
	    count_of(memio_sink__store(k, MEMIO_STORE_INSTRUCTIONS), "burn;main;spin", &n), 1);
	assert_string_equal(memio_sink_type(MEMIO_STORE_CYCLES), "cycles");
	assert_string_equal(memio_sink_unit(MEMIO_STORE_INSTRUCTIONS), "count");
	memio_sink__free(k);
	strtab__free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_config),
		cmocka_unit_test(test_put),
		cmocka_unit_test(test_pmc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
