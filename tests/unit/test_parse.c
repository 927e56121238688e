// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ember/core/base/parse.h"

static int tns(const char *s, uint64_t *ret)
{
	return parse_time_ns(s, strlen(s), ret);
}

static void test_time_ns(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(tns("158665.570607", &v), 0);
	assert_int_equal(v, 158665570607000ULL);
	assert_int_equal(tns("0.000000001", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(tns("12.5", &v), 0);
	assert_int_equal(v, 12500000000ULL);
	/* exact where a double of the seconds is not: 10^9 s and 9 fraction digits */
	assert_int_equal(tns("1234567890.123456789", &v), 0);
	assert_int_equal(v, 1234567890123456789ULL);
	assert_true((uint64_t)(1234567890.123456789 * 1e9) != 1234567890123456789ULL);
	/* past 9 fraction digits: cut */
	assert_int_equal(tns("1.1234567899", &v), 0);
	assert_int_equal(v, 1123456789ULL);
	/* the largest that fits, and one past it */
	assert_int_equal(tns("18446744073.709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(tns("18446744073.709551616", &v), -1);
	assert_int_equal(tns("99999999999999999999.0", &v), -1);
	/* malformed */
	assert_int_equal(tns("", &v), -1);
	assert_int_equal(tns("12", &v), -1);
	assert_int_equal(tns("12.", &v), -1);
	assert_int_equal(tns(".5", &v), -1);
	assert_int_equal(tns("1.2.3", &v), -1);
	assert_int_equal(tns("-1.5", &v), -1);
	assert_int_equal(tns("1.5:", &v), -1);
	/* only @len bytes are read */
	assert_int_equal(parse_time_ns("7.25:", 4, &v), 0);
	assert_int_equal(v, 7250000000ULL);
}

static void test_hex(void **state)
{
	const char *s = "0x7f00ABcd rest", *e;
	uint64_t v = 0;

	(void)state;
	e = parse_hex_u64(s, s + strlen(s), &v);
	assert_non_null(e);
	assert_int_equal(v, 0x7f00abcdULL);
	assert_string_equal(e, " rest");
	s = "ffffffffffffffff";
	assert_non_null(parse_hex_u64(s, s + 16, &v));
	assert_int_equal(v, UINT64_MAX);
	s = "1ffffffffffffffff"; /* 17 digits */
	assert_null(parse_hex_u64(s, s + 17, &v));
	s = "0xg";
	assert_null(parse_hex_u64(s + 2, s + 3, &v));
	assert_int_equal(parse_hexval('F'), 15);
	assert_int_equal(parse_hexval('g'), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_ns),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
