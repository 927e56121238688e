// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/sbuf.h"

static void test_add_and_detach(void **state)
{
	struct sbuf sb = SBUF_INIT;
	size_t len, i;
	char *s;

	sbuf_adds(&sb, "abc");
	sbuf_addc(&sb, ';');
	sbuf_addf(&sb, "%d-%s", 42, "x");
	sbuf_addu(&sb, 0);
	sbuf_addu(&sb, 18446744073709551615ULL);
	assert_string_equal(sb.buf, "abc;42-x018446744073709551615");
	for (i = 0; i < 10000; i++)
		sbuf_addc(&sb, 'z');
	assert_int_equal(sb.len, 29 + 10000);
	s = sbuf_detach(&sb, &len);
	assert_non_null(s);
	assert_int_equal(len, 29 + 10000);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	free(s);
}

static void test_long_format(void **state)
{
	struct sbuf sb = SBUF_INIT;
	char big[5000];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sbuf_adds(&sb, "<");
	sbuf_addf(&sb, "%s|%s", big, big);
	assert_int_equal(sb.len, 1 + 4999 * 2 + 1);
	assert_int_equal(sb.buf[sb.len], '\0');
	sbuf_fini(&sb);
}

static const struct {
	double v;
	const char *want;
} count_cases[] = {
	{ 0, "0" },	     { 1, "1" },	   { 42, "42" },	 { 1e15, "1000000000000000" },
	{ 0.5, "0.5" },	     { 12.25, "12.25" },   { 0.1, "0.1" },	 { 1.0 / 3, "0.333333333333333315" },
	{ 123456.789, "123456.789" }, { 1e-5, "0.00001" },	   { 2.5e-10, "0.00000000025" },
	{ 1e20, "100000000000000000000" },	{ -0.5, "-0.5" },
};

static void test_add_count(void **state)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(count_cases) / sizeof(count_cases[0]); i++) {
		sbuf_reset(&sb);
		sbuf_add_count(&sb, count_cases[i].v);
		/* whatever the text, it must read back exactly */
		assert_true(strtod(sb.buf, NULL) == count_cases[i].v);
		if (count_cases[i].v != 1.0 / 3)
			assert_string_equal(sb.buf, count_cases[i].want);
	}
	sbuf_fini(&sb);
}

static const struct {
	const char *in;
	size_t len;
	const char *xml, *json;
} esc_cases[] = {
	{ "a<b>&\"c'", 8, "a&lt;b&gt;&amp;&quot;c&#39;", "a<b>&\\\"c'" },
	{ "tab\there", 8, "tab here", "tab\\u0009here" },
	{ "\x01\x7f", 2, "??", "\\u0001\\u007f" },
	{ "caf\xc3\xa9", 5, "caf\xc3\xa9", "caf\xc3\xa9" },			/* valid UTF-8 */
	/* invalid, truncated, a surrogate: the one rule's "\xNN" (utf8.h) */
	{ "bad\xff\xc3", 5, "bad\\xff\\xc3", "bad\\\\xff\\\\xc3" },
	{ "\xed\xa0\x80", 3, "\\xed\\xa0\\x80", "\\\\xed\\\\xa0\\\\x80" },
	{ "\xf0\x9f\x94\xa5", 4, "\xf0\x9f\x94\xa5", "\xf0\x9f\x94\xa5" },	/* 4-byte */
	{ "back\\slash", 10, "back\\slash", "back\\\\slash" },
};

static void test_escapes(void **state)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		sbuf_reset(&sb);
		sbuf_add_xml(&sb, esc_cases[i].in, esc_cases[i].len);
		assert_string_equal(sb.buf, esc_cases[i].xml);
		sbuf_reset(&sb);
		sbuf_add_json(&sb, esc_cases[i].in, esc_cases[i].len);
		assert_string_equal(sb.buf, esc_cases[i].json);
	}
	sbuf_fini(&sb);
}

/* Folded frame names: the separator and control bytes can never reach the output as such. */
static void test_frame(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
		size_t changed;
	} cases[] = {
		{ "plain", 5, "plain", 0 },
		{ "a;b", 3, "a:b", 1 },
		/* and a byte outside UTF-8: the one rule (utf8.h) */
		{ ";\n<b>\"x%s{}\\\x7f\xff", 14, ":\\x0a<b>\"x%s{}\\\\x7f\\xff", 4 },
		{ "tab\there\r", 9, "tab\\x09here\\x0d", 2 },
		{ "nul\0in", 6, "nul\\x00in", 1 },
		{ "", 0, "", 0 },
	};
	struct sbuf sb = SBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbuf_reset(&sb);
		assert_int_equal(sbuf_add_frame(&sb, cases[i].in, cases[i].len), cases[i].changed);
		assert_int_equal(sb.len, strlen(cases[i].out));
		assert_memory_equal(sb.buf, cases[i].out, sb.len);
		assert_null(memchr(sb.buf, ';', sb.len));
		assert_null(memchr(sb.buf, '\n', sb.len));
	}
	sbuf_fini(&sb);
}

static void test_sticky_error(void **state)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_adds(&sb, "x");
	assert_int_equal(sbuf_grow(&sb, SIZE_MAX - 1), -ENOMEM);
	sbuf_adds(&sb, "more");
	assert_int_equal(sbuf_error(&sb), -ENOMEM);
	assert_int_equal(sb.len, 1);
	assert_null(sbuf_detach(&sb, NULL));
	assert_int_equal(errno, ENOMEM);
	assert_null(sb.buf);
}

struct watched {
	size_t grown; /* bytes the buffer grew by, as the watch saw it */
	int calls, periodic;
	size_t limit;	  /* fail with -ENOBUFS past this many bytes allocated */
	int cancel_after; /* fail with -ECANCELED on this call (0: never) */
};

static int watch_fn(struct sbuf *sb, size_t need, size_t new_cap, void *ctx)
{
	struct watched *w = ctx;

	assert_true(need > sb->len);
	assert_true(new_cap >= need || new_cap == sb->cap);
	if (++w->calls == w->cancel_after)
		return -ECANCELED;
	if (new_cap == sb->cap) {
		w->periodic++;
		return 0;
	}
	if (w->limit && new_cap > w->limit)
		return -ENOBUFS;
	w->grown += new_cap - sb->cap;
	return 0;
}

/* A watch sees every allocation and is called periodically; its error is sticky. */
static void test_watch(void **state)
{
	struct watched w = { 0 };
	struct sbuf_watch sw = { .fn = watch_fn, .ctx = &w };
	struct sbuf sb = SBUF_INIT;
	char chunk[1000];
	size_t i;

	memset(chunk, 'x', sizeof(chunk));
	sbuf_set_watch(&sb, &sw);
	for (i = 0; i < 1000; i++)
		sbuf_add(&sb, chunk, sizeof(chunk));
	sbuf_addf(&sb, "%d", 42);
	assert_int_equal(sbuf_error(&sb), 0);
	assert_int_equal(w.grown, sb.cap); /* every byte allocated went through the watch */
	assert_true(w.periodic >= (int)(1000000 / SBUF_WATCH_BYTES / 2));
	sbuf_fini(&sb);
	assert_null(sb.watch);

	w = (struct watched){ .limit = 64 << 10 };
	sbuf_set_watch(&sb, &sw);
	for (i = 0; i < 100; i++)
		sbuf_add(&sb, chunk, sizeof(chunk));
	assert_int_equal(sbuf_error(&sb), -ENOBUFS);
	assert_true(sb.len <= 64 << 10);
	assert_true(sb.cap <= 64 << 10);
	sbuf_fini(&sb);

	w = (struct watched){ .cancel_after = 3 };
	sbuf_set_watch(&sb, &sw);
	for (i = 0; i < 1000; i++)
		sbuf_add(&sb, chunk, sizeof(chunk));
	assert_int_equal(sbuf_error(&sb), -ECANCELED);
	assert_int_equal(w.calls, 3); /* no call once the error is sticky */
	sbuf_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_detach), cmocka_unit_test(test_long_format),
		cmocka_unit_test(test_add_count),      cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_sticky_error),   cmocka_unit_test(test_watch),
		cmocka_unit_test(test_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
