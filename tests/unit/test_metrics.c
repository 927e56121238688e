// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/daemon/http/metrics.h"
#include "ember/core/base/sbuf.h"

static void test_render(void **state)
{
	static const double bounds[] = { 0.001, 0.01, 0.1 };
	struct metrics *m = metrics__new();
	const char *const ok200[] = { "endpoint", "/folded", "status", "200", NULL };
	const char *const odd[] = { "endpoint", "a\"b\\c\nd", "status", "404", NULL };
	const char *const cpu0[] = { "cpu", "0", NULL };
	struct sbuf sb = SBUF_INIT;
	int req, lat, bytes, samples, unused;

	assert_non_null(m);
	samples = metrics__family(m, "ember_samples_total", METRIC_COUNTER,
				  "Samples taken, per CPU.", NULL, 0);
	req = metrics__family(m, "ember_http_requests_total", METRIC_COUNTER,
			      "HTTP requests by endpoint and status.\nSecond \\ line", NULL, 0);
	lat = metrics__family(m, "ember_http_request_duration_seconds", METRIC_HISTOGRAM,
			      "Request latency.", bounds, 3);
	bytes = metrics__family(m, "ember_store_bytes", METRIC_GAUGE, "Store size.", NULL, 0);
	unused = metrics__family(m, "ember_unused", METRIC_GAUGE, "Never set.", NULL, 0);
	assert_true(samples >= 0 && req >= 0 && lat >= 0 && bytes >= 0 && unused >= 0);
	/* same name, same type: same id; other type: error */
	assert_int_equal(metrics__family(m, "ember_store_bytes", METRIC_GAUGE, "x", NULL, 0), bytes);
	assert_int_equal(metrics__family(m, "ember_store_bytes", METRIC_COUNTER, "x", NULL, 0),
			 -EINVAL);

	assert_int_equal(metrics__add(m, req, ok200, 1), 0);
	assert_int_equal(metrics__add(m, req, ok200, 2), 0);
	assert_int_equal(metrics__add(m, req, odd, 1), 0);
	assert_int_equal(metrics__set(m, samples, cpu0, 12345678901.0), 0);
	assert_int_equal(metrics__set(m, samples, cpu0, 1), -EINVAL); /* counters only grow */
	assert_int_equal(metrics__add(m, samples, cpu0, -1), -EINVAL);
	assert_int_equal(metrics__set(m, bytes, NULL, -2.5), 0);
	assert_int_equal(metrics__observe(m, lat, NULL, 0.0005), 0);
	assert_int_equal(metrics__observe(m, lat, NULL, 0.05), 0);
	assert_int_equal(metrics__observe(m, lat, NULL, 0.05), 0);
	assert_int_equal(metrics__observe(m, lat, NULL, 7), 0);
	assert_int_equal(metrics__observe(m, bytes, NULL, 1), -EINVAL);
	assert_int_equal(metrics__set(m, lat, NULL, 1), -EINVAL);
	assert_int_equal(metrics__set(m, bytes, NULL, NAN), -EINVAL);
	assert_int_equal(metrics__set(m, 999, NULL, 1), -EINVAL);

	assert_int_equal(metrics__render(m, &sb), 0);
	assert_string_equal(
		sb.buf,
		"# HELP ember_http_request_duration_seconds Request latency.\n"
		"# TYPE ember_http_request_duration_seconds histogram\n"
		"ember_http_request_duration_seconds_bucket{le=\"0.001\"} 1\n"
		"ember_http_request_duration_seconds_bucket{le=\"0.01\"} 1\n"
		"ember_http_request_duration_seconds_bucket{le=\"0.1\"} 3\n"
		"ember_http_request_duration_seconds_bucket{le=\"+Inf\"} 4\n"
		"ember_http_request_duration_seconds_sum 7.1005\n"
		"ember_http_request_duration_seconds_count 4\n"
		"# HELP ember_http_requests_total HTTP requests by endpoint and status.\\nSecond \\\\ line\n"
		"# TYPE ember_http_requests_total counter\n"
		"ember_http_requests_total{endpoint=\"/folded\",status=\"200\"} 3\n"
		"ember_http_requests_total{endpoint=\"a\\\"b\\\\c\\nd\",status=\"404\"} 1\n"
		"# HELP ember_samples_total Samples taken, per CPU.\n"
		"# TYPE ember_samples_total counter\n"
		"ember_samples_total{cpu=\"0\"} 12345678901\n"
		"# HELP ember_store_bytes Store size.\n"
		"# TYPE ember_store_bytes gauge\n"
		"ember_store_bytes -2.5\n");
	sbuf_fini(&sb);
	metrics__free(m);
}

static void test_names_and_limits(void **state)
{
	static const double bad_bounds[] = { 1, 1 }, inf_bounds[] = { INFINITY };
	struct metrics *m = metrics__new();
	const char *const le[] = { "le", "1", NULL };
	const char *const dunder[] = { "__x", "1", NULL };
	const char *const twice[] = { "a", "1", "a", "2", NULL };
	const char *const badname[] = { "1a", "1", NULL };
	char val[32];
	const char *lb[] = { "v", val, NULL };
	int h, g, i, r = 0;

	assert_int_equal(metrics__family(m, "ember_x", METRIC_COUNTER, "c", NULL, 0), -EINVAL);
	assert_int_equal(metrics__family(m, "ember_x_total", METRIC_GAUGE, "g", NULL, 0), -EINVAL);
	assert_int_equal(metrics__family(m, "9x", METRIC_GAUGE, "g", NULL, 0), -EINVAL);
	assert_int_equal(metrics__family(m, "a-b", METRIC_GAUGE, "g", NULL, 0), -EINVAL);
	assert_int_equal(metrics__family(m, "h", METRIC_HISTOGRAM, "h", bad_bounds, 2), -EINVAL);
	assert_int_equal(metrics__family(m, "h", METRIC_HISTOGRAM, "h", inf_bounds, 1), -EINVAL);
	assert_int_equal(metrics__family(m, "h", METRIC_HISTOGRAM, "h", NULL, 0), -EINVAL);
	assert_true(metrics__family(m, "ns:x", METRIC_GAUGE, "colons are fine", NULL, 0) >= 0);
	h = metrics__family(m, "h", METRIC_HISTOGRAM, "h", bad_bounds, 1);
	g = metrics__family(m, "g", METRIC_GAUGE, "g", NULL, 0);
	assert_int_equal(metrics__observe(m, h, le, 1), -EINVAL);
	assert_int_equal(metrics__set(m, g, dunder, 1), -EINVAL);
	assert_int_equal(metrics__set(m, g, twice, 1), -EINVAL);
	assert_int_equal(metrics__set(m, g, badname, 1), -EINVAL);
	/* the series limit holds; updates past it are dropped and counted */
	for (i = 0; i < METRICS_MAX_SERIES + 10 && r == 0; i++) {
		snprintf(val, sizeof(val), "%d", i);
		r = metrics__set(m, g, lb, i);
	}
	assert_int_equal(r, -ENOSPC);
	assert_int_equal(metrics__dropped(m), 1);
	metrics__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_names_and_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
