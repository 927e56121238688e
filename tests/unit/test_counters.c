// SPDX-License-Identifier: MIT
/* core/base/counters.c: one table rendered as stats JSON, as Prometheus text (through
 * http/metrics.c) and in a log template. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <errno.h>
#include <string.h>

#include "ember/core/base/counters.h"
#include "ember/core/base/sbuf.h"
#include "ember/daemon/http/metrics.h"

struct toy_stats {
	uint64_t hits, misses;
	uint64_t stops[3];
	uint64_t busy_ns;
	uint32_t slots;
	bool fast;
	double rate;
	int64_t offset;
};

static const char *stop_name(unsigned int i)
{
	static const char *const names[] = { "depth", "loop", "other" };

	return i < 3 ? names[i] : "?";
}

static double hit_share(const void *p)
{
	const struct toy_stats *t = p;

	return t->hits + t->misses ? (double)t->hits / (double)(t->hits + t->misses) : 0.0;
}

static const char *mode(const void *p)
{
	return ((const struct toy_stats *)p)->fast ? "fast" : "slow";
}

#define U64(f) .off = offsetof(struct toy_stats, f), .value = COUNTER_U64

static const struct counter_desc toy[] = {
	{ .key = "hits", U64(hits), .metric = "toy_lookups_total", .type = COUNTER_COUNTER,
	  .help = "Lookups, by result.", .label = "result", .label_value = "hit" },
	{ .key = "misses", U64(misses), .metric = "toy_lookups_total", .label = "result",
	  .label_value = "miss" },
	{ .key = "hit_share", .value = COUNTER_FN, .fn = hit_share, .json_fmt = "%.3f",
	  .metric = "toy_hit_ratio", .type = COUNTER_GAUGE, .help = "Hit rate." },
	{ .key = "stops", U64(stops), .nr = 3, .name = stop_name, .array_label = "reason",
	  .metric = "toy_stops_total", .type = COUNTER_COUNTER, .help = "Walks stopped, by why." },
	{ .key = "busy_ms", U64(busy_ns), .json_scale = 1e-6, .json_fmt = "%.1f",
	  .metric = "toy_busy_seconds_total", .type = COUNTER_COUNTER, .help = "Busy time.",
	  .metric_scale = 1e-9 },
	{ .key = "slots", .off = offsetof(struct toy_stats, slots), .value = COUNTER_U32,
	  .flags = COUNTER_NO_JSON },
	{ .key = "fast", .off = offsetof(struct toy_stats, fast), .value = COUNTER_BOOL },
	{ .key = "rate", .off = offsetof(struct toy_stats, rate), .value = COUNTER_DOUBLE,
	  .json_fmt = "%.2f" },
	{ .key = "mode", .value = COUNTER_STR, .str = mode },
	{ .key = "offset", .off = offsetof(struct toy_stats, offset), .value = COUNTER_I64 },
};

static const struct toy_stats t = { .hits = 3, .misses = 1, .stops = { 5, 0, 18446744073709551615ULL },
				    .busy_ns = 2500000000ULL, .slots = 7, .fast = true,
				    .rate = 1.5, .offset = -2 };

static void test_json(void **state)
{
	struct sbuf sb = SBUF_INIT;

	counters_json(&sb, toy, COUNTERS_N(toy), &t);
	assert_int_equal(sb.err, 0);
	/* a u64 beyond 2^53 exactly; slots (no JSON) absent */
	assert_string_equal(sb.buf,
			    "\"hits\": 3, \"misses\": 1, \"hit_share\": 0.750, \"stops\": "
			    "{\"depth\": 5, \"loop\": 0, \"other\": 18446744073709551615}, "
			    "\"busy_ms\": 2500.0, \"fast\": true, \"rate\": 1.50, \"mode\": \"fast\", "
			    "\"offset\": -2, ");
	sbuf_fini(&sb);
}

static void test_prometheus(void **state)
{
	struct metrics *m = metrics__new();
	struct sbuf sb = SBUF_INIT;

	assert_non_null(m);
	assert_int_equal(metrics__declare_counters(m, toy, COUNTERS_N(toy)), 0);
	metrics__set_counters(m, toy, COUNTERS_N(toy), &t, NULL);
	assert_int_equal(metrics__render(m, &sb), 0);
	assert_string_equal(sb.buf,
			    "# HELP toy_busy_seconds_total Busy time.\n"
			    "# TYPE toy_busy_seconds_total counter\n"
			    "toy_busy_seconds_total 2.5\n"
			    "# HELP toy_hit_ratio Hit rate.\n"
			    "# TYPE toy_hit_ratio gauge\n"
			    "toy_hit_ratio 0.75\n"
			    "# HELP toy_lookups_total Lookups, by result.\n"
			    "# TYPE toy_lookups_total counter\n"
			    "toy_lookups_total{result=\"hit\"} 3\n"
			    "toy_lookups_total{result=\"miss\"} 1\n"
			    "# HELP toy_stops_total Walks stopped, by why.\n"
			    "# TYPE toy_stops_total counter\n"
			    "toy_stops_total{reason=\"depth\"} 5\n"
			    "toy_stops_total{reason=\"loop\"} 0\n"
			    "toy_stops_total{reason=\"other\"} 18446744073709551616\n");
	sbuf_fini(&sb);
	metrics__free(m);
}

/* One struct of several (an exporter's): its label pair first on every series. */
static void test_extra_labels(void **state)
{
	const char *const l[] = { "exporter", "otlp", NULL };
	struct metrics *m = metrics__new();
	struct sbuf sb = SBUF_INIT;

	assert_non_null(m);
	assert_int_equal(metrics__declare_counters(m, toy, COUNTERS_N(toy)), 0);
	metrics__set_counters(m, toy, COUNTERS_N(toy), &t, l);
	assert_int_equal(metrics__render(m, &sb), 0);
	assert_non_null(strstr(sb.buf, "\ntoy_lookups_total{exporter=\"otlp\",result=\"hit\"} 3\n"));
	assert_non_null(strstr(sb.buf, "\ntoy_stops_total{exporter=\"otlp\",reason=\"loop\"} 0\n"));
	assert_non_null(strstr(sb.buf, "\ntoy_hit_ratio{exporter=\"otlp\"} 0.75\n"));
	sbuf_fini(&sb);
	metrics__free(m);
}

static void test_format(void **state)
{
	const struct counter_source src[] = { { "t", toy, COUNTERS_N(toy), &t } };
	struct sbuf sb = SBUF_INIT;

	assert_int_equal(counters_format(&sb, "{t.hits} hits, {t.hit_share:.0f}/1, {t.slots} "
					      "slots, {t.busy_ms:.0f} ms, {t.mode}",
					 src, 1),
			 0);
	assert_string_equal(sb.buf, "3 hits, 1/1, 7 slots, 2500 ms, \"fast\"");
	sbuf_reset(&sb);
	/* an unknown key, a format that is not one double's: copied, -EINVAL */
	assert_int_equal(counters_format(&sb, "a {t.nope} b {t.hits:s} c {x.hits}", src, 1),
			 -EINVAL);
	assert_string_equal(sb.buf, "a {t.nope} b {t.hits:s} c {x.hits}");
	sbuf_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_extra_labels),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
