// SPDX-License-Identifier: MIT
/* liveness: when /healthz says stalled, and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ember/daemon/service/liveness.h"

#define S 1000000000ULL

static void test_drain_stall(void **state)
{
	struct liveness l;
	struct liveness_state ls;
	uint64_t t0;

	(void)state;
	liveness_init(&l, S / 4, true); /* tick 250 ms: a stall after 2 s (the floor) */
	t0 = l.started_ns;
	liveness_check(&l, t0 + S, &ls);
	assert_false(ls.stalled); /* starting: not yet */
	assert_true(ls.last_drain_age_s < 0 && ls.newest_sample_age_s < 0);
	liveness_drained(&l, t0 + S, t0 + S - 1000, 2);
	liveness_check(&l, t0 + S + S / 2, &ls);
	assert_false(ls.stalled);
	assert_true(ls.last_drain_age_s > 0.49 && ls.last_drain_age_s < 0.51);
	liveness_busy(&l, "drain");
	liveness_set_paused(&l, true);
	liveness_check(&l, t0 + 3 * S + S / 2, &ls);
	assert_true(ls.stalled);
	assert_non_null(strstr(ls.reason, "the drain has not run for 2.5 s"));
	assert_non_null(strstr(ls.reason, "EMBERD_TEST_PAUSE_DRAIN"));
	assert_non_null(strstr(ls.reason, "busy in 'drain'"));
	/* a drain again: ok */
	liveness_busy(&l, NULL);
	liveness_set_paused(&l, false);
	liveness_drained(&l, t0 + 4 * S, t0 + 4 * S, 2);
	liveness_check(&l, t0 + 4 * S, &ls);
	assert_false(ls.stalled);
	assert_string_equal(ls.reason, "");
}

static void test_no_samples(void **state)
{
	struct liveness l, quiet;
	struct liveness_state ls;
	uint64_t t0;

	(void)state;
	liveness_init(&l, S, true); /* tick 1 s: stall after 3 s, samples after 4 s */
	t0 = l.started_ns;
	liveness_drained(&l, t0 + S, t0 + S, 2);
	liveness_drained(&l, t0 + 6 * S, 0, 2); /* drains, but nothing new */
	liveness_check(&l, t0 + 6 * S, &ls);
	assert_true(ls.stalled);
	assert_non_null(strstr(ls.reason, "no sample for 5.0 s while 2 CPUs are sampled"));
	/* without the idle task sampled, a quiet host is no stall */
	liveness_init(&quiet, S, false);
	t0 = quiet.started_ns;
	liveness_drained(&quiet, t0 + 6 * S, 0, 2);
	liveness_check(&quiet, t0 + 6 * S, &ls);
	assert_false(ls.stalled);
}

static void test_worker_stuck(void **state)
{
	struct liveness l;
	struct liveness_state ls;
	uint64_t t0;

	(void)state;
	liveness_init(&l, S / 4, true); /* a worker is stuck after 10 ticks, at least 5 s */
	t0 = l.started_ns;
	liveness_worker_busy(&l, "naming");
	t0 = l.worker_since_ns;
	liveness_drained(&l, t0 + 4 * S, t0 + 4 * S, 2);
	liveness_check(&l, t0 + 4 * S, &ls);
	assert_false(ls.stalled);
	assert_string_equal(ls.worker_stage, "naming");
	liveness_drained(&l, t0 + 6 * S, t0 + 6 * S, 2);
	liveness_check(&l, t0 + 6 * S, &ls);
	assert_true(ls.stalled);
	assert_non_null(strstr(ls.reason, "the worker is stuck in 'naming' for 6.0 s"));
	liveness_worker_busy(&l, NULL);
	liveness_check(&l, t0 + 6 * S, &ls);
	assert_false(ls.stalled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_stall),
		cmocka_unit_test(test_no_samples),
		cmocka_unit_test(test_worker_stuck),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
