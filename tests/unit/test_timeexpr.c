// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ember/core/base/timeexpr.h"

#define NOW 1700000000000000000LL /* 2023-11-14T22:13:20Z */
#define S 1000000000LL

static const struct {
	const char *in;
	int ret;
	int64_t ns;
} cases[] = {
	{ "now", 0, NOW },
	{ "-90s", 0, NOW - 90 * S },
	{ "-15m", 0, NOW - 15 * 60 * S },
	{ "-2h", 0, NOW - 7200 * S },
	{ "-1d", 0, NOW - 86400 * S },
	{ "-500ms", 0, NOW - 500000000LL },
	{ "-250us", 0, NOW - 250000LL },
	{ "-7ns", 0, NOW - 7 },
	{ "-1.5m", 0, NOW - 90 * S },
	{ "now-90s", 0, NOW - 90 * S },
	{ "now+5s", 0, NOW + 5 * S },
	{ "+5s", 0, NOW + 5 * S },
	{ "1712345678", 0, 1712345678 * S },
	{ "1712345678.25", 0, 1712345678 * S + 250000000LL },
	{ "1712345678.123456789", 0, 1712345678 * S + 123456789LL },
	{ "0", 0, 0 },
	{ "12.", 0, 12 * S },
	{ "2023-11-14T22:13:20Z", 0, NOW },
	{ "2023-11-14t22:13:20z", 0, NOW },
	{ "2023-11-14 22:13:20Z", 0, NOW },
	{ "2023-11-14T22:13:20.5Z", 0, NOW + 500000000LL },
	{ "2023-11-15T00:13:20+02:00", 0, NOW },
	{ "2023-11-14T20:43:20-01:30", 0, NOW },
	{ "1970-01-01T00:00:00Z", 0, 0 },
	{ "2024-02-29T00:00:00Z", 0, 1709164800 * S },
	{ "2000-03-01T00:00:00Z", 0, 951868800 * S },
	{ "1969-12-31T23:59:59Z", 0, -1 * S },
	{ "2016-12-31T23:59:60Z", 0, 1483228800 * S },
	/* errors */
	{ "", -EINVAL, 0 },
	{ "nowx", -EINVAL, 0 },
	{ "now-", -EINVAL, 0 },
	{ "-90", -EINVAL, 0 },	/* relative needs a unit */
	{ "-90x", -EINVAL, 0 },
	{ "-s", -EINVAL, 0 },
	{ "-.5s", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
	{ "12abc", -EINVAL, 0 },
	{ "1.1234567891", -EINVAL, 0 },
	{ " 12", -EINVAL, 0 },
	{ "2023-02-29T00:00:00Z", -EINVAL, 0 },
	{ "2023-13-01T00:00:00Z", -EINVAL, 0 },
	{ "2023-11-14T24:00:00Z", -EINVAL, 0 },
	{ "2023-11-14T22:60:00Z", -EINVAL, 0 },
	{ "2023-11-14T22:13:20", -EINVAL, 0 },	/* no zone */
	{ "2023-11-14T22:13:20.Z", -EINVAL, 0 },
	{ "2023-11-14T22:13:20+2:00", -EINVAL, 0 },
	{ "2023-11-14T22:13:20Zx", -EINVAL, 0 },
	{ "2023-11-14", -EINVAL, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
	{ "9999999999999", -ERANGE, 0 },
	{ "-99999999d", -ERANGE, 0 },
	{ "9999-12-31T23:59:59Z", -ERANGE, 0 },
};

static void test_cases(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t v = 42;
		struct parse_error pe = { 0 };
		int r = timeexpr_parse(cases[i].in, strlen(cases[i].in), NOW, &v, &pe);

		if (r != cases[i].ret)
			fail_msg("'%s': ret %d, expected %d", cases[i].in, r, cases[i].ret);
		if (r == 0 && v != cases[i].ns)
			fail_msg("'%s': %lld, expected %lld", cases[i].in, (long long)v,
				 (long long)cases[i].ns);
		if (r != 0) {
			assert_int_equal(v, 42); /* untouched on failure */
			assert_non_null(pe.reason);
			assert_true(pe.col >= 1);
		}
	}
}

static void test_not_nul_terminated(void **state)
{
	int64_t v;

	assert_int_equal(timeexpr_parse("-90sXYZ", 4, NOW, &v, NULL), 0);
	assert_int_equal(v, NOW - 90 * S);
	assert_int_equal(timeexpr_parse("now", 2, NOW, &v, NULL), -EINVAL);
}

static void test_duration(void **state)
{
	int64_t v;

	assert_int_equal(timeexpr_parse_duration("2", 1, &v, NULL), 0);
	assert_int_equal(v, 2 * S);
	assert_int_equal(timeexpr_parse_duration("0.02", 4, &v, NULL), 0);
	assert_int_equal(v, 20000000LL);
	assert_int_equal(timeexpr_parse_duration("1m", 2, &v, NULL), 0);
	assert_int_equal(v, 60 * S);
	assert_int_equal(timeexpr_parse_duration("", 0, &v, NULL), -EINVAL);
	assert_int_equal(timeexpr_parse_duration("1q", 2, &v, NULL), -EINVAL);
	assert_int_equal(timeexpr_parse_duration("-1", 2, &v, NULL), -EINVAL);
}

static void test_format(void **state)
{
	char buf[40];

	assert_string_equal(timeexpr_format_rfc3339(NOW + 250000000LL, buf, sizeof(buf)),
			    "2023-11-14T22:13:20.250Z");
	assert_string_equal(timeexpr_format_rfc3339(-1, buf, sizeof(buf)),
			    "1969-12-31T23:59:59.999Z");
	assert_string_equal(timeexpr_format_rfc3339(951868800 * S, buf, sizeof(buf)),
			    "2000-03-01T00:00:00.000Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
