// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/model/query.h"

#define NOW 1700000000000000000LL
#define S 1000000000LL

static int collect(const char *key, const char *value, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "[%s=%s]", key, value);
	return 0;
}

static void test_urlencoded(void **state)
{
	static const struct {
		const char *in;
		int ret;
		const char *pairs;
	} cases[] = {
		{ "a=1&b=2", 0, "[a=1][b=2]" },
		{ "a=%41+b&&c", 0, "[a=A b][c=]" },
		{ "k%3D=v%26w", 0, "[k==v&w]" },
		{ "", 0, "" },
		{ "=x", 0, "[=x]" },
		{ "a=%4", -EINVAL, "" },
		{ "a=%zz", -EINVAL, "" },
		{ "a=%00", -EINVAL, "" },
		{ "%", -EINVAL, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[512] = "";
		struct query_error qe = { .status = 0 };
		int r = query_urlencoded_parse(cases[i].in, strlen(cases[i].in), collect, out, &qe);

		if (r != cases[i].ret)
			fail_msg("'%s': %d", cases[i].in, r);
		if (r == 0)
			assert_string_equal(out, cases[i].pairs);
		else
			assert_int_equal(qe.status, 400);
	}
}

static void test_urlencoded_limits(void **state)
{
	char big[4000], out[512] = "";
	struct query_error qe;
	size_t i;

	memset(big, 0, sizeof(big));
	for (i = 0; i < QUERY_MAX_PAIRS + 1; i++)
		strcat(big, "a=1&");
	out[0] = '\0';
	assert_int_equal(query_urlencoded_parse(big, strlen(big), collect, out, &qe), -EINVAL);
	assert_string_equal(qe.reason, "too many parameters");
	memset(big, 'x', sizeof(big));
	memcpy(big, "key=", 4);
	assert_int_equal(query_urlencoded_parse(big, sizeof(big), collect, out, &qe), -EINVAL);
	assert_string_equal(qe.param, "key");
	assert_string_equal(qe.reason, "too long");
}

static void test_common(void **state)
{
	struct query_common q;
	struct query_error qe;

	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "from", "-90s", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "pid", "1234", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "comm", "^bu?rn$", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "idle", "1", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "kernel", "false", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "title", "x", NOW, &qe), 0);
	assert_int_equal(query_common_finish(&q, NOW, 60 * S, 3600 * S, &qe), 0);
	assert_int_equal(q.from_ns, NOW - 90 * S);
	assert_int_equal(q.to_ns, NOW);
	assert_int_equal(q.pid, 1234);
	assert_int_equal(q.tid, -1);
	assert_int_equal(q.idle, QUERY_FLAG_ON);
	assert_int_equal(q.kernel, QUERY_FLAG_OFF);
	assert_int_equal(q.user, QUERY_FLAG_UNSET);
	assert_int_equal(query_common_match_comm(&q, "burn", 4), 1);
	assert_int_equal(query_common_match_comm(&q, "brn", 3), 1);
	assert_int_equal(query_common_match_comm(&q, "burner", 6), 0);
	/* a second comm replaces the first without leaking it */
	assert_int_equal(query_common_set(&q, "comm", "x", NOW, &qe), 1);
	assert_int_equal(query_common_match_comm(&q, "xyz", 3), 1);
	/* glibc's regexec() crashed emberd on this: refused with the reason, 400 */
	assert_int_equal(query_common_set(&q, "comm", "(|)(\\1\\1)*", NOW, &qe), -EINVAL);
	assert_int_equal(qe.status, 400);
	assert_string_equal(qe.param, "comm");
	assert_non_null(strstr(qe.reason, "backreferences"));
	/* ... and glibc grew to 7 GB on this one */
	assert_int_equal(query_common_set(&q, "comm", "a{1,32767}{1,32767}", NOW, &qe), -EINVAL);
	assert_int_equal(qe.status, 400);
	/* the earlier pattern stays */
	assert_int_equal(query_common_match_comm(&q, "xyz", 3), 1);
	/* one that reaches its match limit on a subject: an error, not a non-match */
	assert_int_equal(query_common_set(&q, "comm", "(.*.*)*[[:digit:]]", NOW, &qe), 1);
	assert_int_equal(query_common_match_comm(&q, "aaaaaaaaaaaaaa!", 15), -QUERY_ECOMM_LIMIT);
	/* focus= and ignore=: per frame, bits; their limit apart from comm's (a 400 naming
	 * neither); an empty value clears; a second replaces the first without leaking it */
	assert_int_equal(query_common_set(&q, "focus", "^burn_", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "focus", "^spin$", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "ignore", "x", NOW, &qe), 1);
	assert_int_equal(query_common_match_frame(&q, "spin", 4), QUERY_FRAME_FOCUS);
	assert_int_equal(query_common_match_frame(&q, "spinx", 5), QUERY_FRAME_IGNORE);
	assert_int_equal(query_common_match_frame(&q, "burn_a", 6), 0);
	assert_int_equal(query_common_set(&q, "ignore", "(.*.*)*[[:digit:]]", NOW, &qe), 1);
	assert_int_equal(query_common_match_frame(&q, "aaaaaaaaaaaaaa!", 15), -QUERY_EFRAME_LIMIT);
	assert_int_equal(query_common_set(&q, "ignore", "", NOW, &qe), 1);
	assert_null(q.ignore_re);
	assert_int_equal(query_common_set(&q, "focus", "(", NOW, &qe), -EINVAL);
	assert_string_equal(qe.param, "focus");
	/* a copy that borrows the pattern leaves it to its owner */
	{
		struct query_common b = q;

		b.comm_borrowed = true;
		query_common_fini(&b);
		assert_int_equal(query_common_match_comm(&q, "a1", 2), 1);
		assert_int_equal(query_common_match_frame(&q, "spin", 4), QUERY_FRAME_FOCUS);
	}
	query_common_fini(&q);
}

static void test_defaults_and_errors(void **state)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "from", "yesterday" }, { "to", "" }, { "pid", "-1" }, { "pid", "12a" },
		{ "tid", "99999999" }, { "comm", "(" }, { "kernel", "2" }, { "user", "yes" },
		{ "idle", "" },
	};
	struct query_common q;
	struct query_error qe;
	size_t i;

	query_common_init(&q);
	assert_int_equal(query_common_finish(&q, NOW, 60 * S, 0, &qe), 0);
	assert_int_equal(q.from_ns, NOW - 60 * S);
	assert_int_equal(q.to_ns, NOW);
	query_common_fini(&q);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		query_common_init(&q);
		memset(&qe, 0, sizeof(qe));
		if (query_common_set(&q, bad[i].key, bad[i].value, NOW, &qe) != -EINVAL)
			fail_msg("%s=%s accepted", bad[i].key, bad[i].value);
		assert_string_equal(qe.param, bad[i].key);
		assert_int_equal(qe.status, 400);
		assert_non_null(qe.reason);
		query_common_fini(&q);
	}

	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "from", "-10s", NOW, &qe), 1);
	assert_int_equal(query_common_set(&q, "to", "-20s", NOW, &qe), 1);
	assert_int_equal(query_common_finish(&q, NOW, 60 * S, 0, &qe), -EINVAL);
	assert_int_equal(qe.status, 400);
	query_common_fini(&q);

	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "from", "-2h", NOW, &qe), 1);
	assert_int_equal(query_common_finish(&q, NOW, 60 * S, 3600 * S, &qe), -E2BIG);
	assert_int_equal(qe.status, 413);
	assert_string_equal(qe.param, "from");
	/* the message gives the limit and its key */
	assert_string_equal(qe.reason, "range exceeds the configured limit of 3600 s "
				       "(http.max_range); ask for a shorter one");
	query_common_fini(&q);

	/* a time that does not parse: the accepted forms */
	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "from", "yesterday", NOW, &qe), -EINVAL);
	assert_non_null(strstr(qe.reason, "'yesterday': "));
	assert_non_null(strstr(qe.reason, "RFC 3339"));
	assert_non_null(strstr(qe.reason, "relative to now (-15m"));
	query_common_fini(&q);
}

/* The workload parameters are kept as text (the daemon resolves them), checked here. */
static void test_workload(void **state)
{
	struct query_common q;
	struct query_error qe;

	(void)state;
	query_common_init(&q);
	assert_string_equal(q.container, "");
	assert_string_equal(q.group_by, "");
	assert_int_equal(query_common_set(&q, "container", "3f2a9c1b", NOW, &qe), 1);
	assert_string_equal(q.container, "3f2a9c1b");
	assert_int_equal(query_common_set(&q, "service", "nginx", NOW, &qe), 1);
	assert_string_equal(q.service, "nginx");
	assert_int_equal(query_common_set(&q, "unit", "nginx.service", NOW, &qe), 1);
	assert_string_equal(q.unit, "nginx.service");
	assert_int_equal(query_common_set(&q, "group_by", "pod", NOW, &qe), 1);
	assert_string_equal(q.group_by, "pod");
	assert_true(query_common_set(&q, "container", "3f2", NOW, &qe) < 0); /* too short */
	assert_string_equal(qe.param, "container");
	assert_int_equal(qe.status, 400);
	assert_true(query_common_set(&q, "container", "xyz12345", NOW, &qe) < 0); /* not hex */
	assert_true(query_common_set(&q, "service", "", NOW, &qe) < 0);
	assert_true(query_common_set(&q, "unit", "a\x01b", NOW, &qe) < 0);
	assert_true(query_common_set(&q, "group_by", "host", NOW, &qe) < 0);
	assert_string_equal(qe.param, "group_by");
	assert_string_equal(q.group_by, "pod"); /* a refused value changes nothing */
	assert_string_equal(q.container, "3f2a9c1b");
	query_common_fini(&q);
}

static void test_u64(void **state)
{
	struct query_error qe;
	uint64_t v;

	assert_int_equal(query_parse_u64("rows", "50", 1, 1000, &v, &qe), 0);
	assert_int_equal(v, 50);
	assert_int_equal(query_parse_u64("rows", "0", 1, 1000, &v, &qe), -EINVAL);
	assert_string_equal(qe.reason, "0 is out of range 1..1000");
	assert_int_equal(query_parse_u64("rows", "99999999999999999999999", 1, 1000, &v, &qe),
			 -EINVAL);
	assert_int_equal(query_parse_u64("rows", "", 1, 1000, &v, &qe), -EINVAL);
	assert_string_equal(qe.param, "rows");
}

/* event= selects the events a query reads; anything else is a 400 */
static void test_event(void **state)
{
	static const struct {
		const char *v;
		int ret;
		enum query_event ev;
	} cases[] = {
		{ "cpu", 1, QUERY_EVENT_CPU },
		{ "offcpu", 1, QUERY_EVENT_OFFCPU },
		{ "wall", 1, QUERY_EVENT_WALL },
		{ "", -EINVAL, QUERY_EVENT_CPU },
		{ "OFFCPU", -EINVAL, QUERY_EVENT_CPU },
		{ "wakeup", 1, QUERY_EVENT_WAKEUP },
		{ "chain", 1, QUERY_EVENT_CHAIN },
		{ "chains", -EINVAL, QUERY_EVENT_CPU },
		{ "pagefault", 1, QUERY_EVENT_PAGEFAULT },
		{ "vmgrow", 1, QUERY_EVENT_VMGROW },
		{ "blockio", 1, QUERY_EVENT_BLOCKIO },
		{ "malloc", 1, QUERY_EVENT_MALLOC },
		{ "cycles", 1, QUERY_EVENT_CYCLES },
		{ "instructions", 1, QUERY_EVENT_INSTRUCTIONS },
		{ "pagefaults", -EINVAL, QUERY_EVENT_CPU },
	};
	struct query_common q;
	struct query_error qe;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		query_common_init(&q);
		assert_int_equal(q.event, QUERY_EVENT_CPU);
		assert_int_equal(query_common_set(&q, "event", cases[i].v, NOW, &qe), cases[i].ret);
		assert_int_equal(q.event, cases[i].ev);
		if (cases[i].ret < 0) {
			assert_int_equal(qe.status, 400);
			assert_string_equal(qe.param, "event");
		}
		query_common_fini(&q);
	}
	/* weight=latency: block I/O's second weight, refused with any other event */
	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "weight", "latency", NOW, &qe), 1);
	assert_true(q.weight_latency);
	assert_int_equal(query_common_set(&q, "event", "pagefault", NOW, &qe), 1);
	assert_int_equal(query_common_finish(&q, NOW, 60000000000LL, 0, &qe), -EINVAL);
	assert_string_equal(qe.param, "weight");
	assert_int_equal(query_common_set(&q, "event", "blockio", NOW, &qe), 1);
	assert_int_equal(query_common_finish(&q, NOW, 60000000000LL, 0, &qe), 0);
	assert_int_equal(query_common_set(&q, "weight", "bytes", NOW, &qe), 1);
	assert_false(q.weight_latency);
	assert_int_equal(query_common_set(&q, "weight", "time", NOW, &qe), -EINVAL);
	query_common_fini(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urlencoded),
		cmocka_unit_test(test_urlencoded_limits),
		cmocka_unit_test(test_common),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_defaults_and_errors),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_workload),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
