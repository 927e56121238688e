// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ember/daemon/symbols/demangle.h"
#include "ember/core/base/sbuf.h"

static const struct {
	const char *raw, *want;
	bool changed;
} cases[] = {
	{ "main", "main", false },
	{ "_Z3fooi", "foo", true },
	{ "_ZN2ns3Foo3barEv", "ns::Foo::bar", true },
	{ "_ZNK2ns3Foo3bazERKi", "ns::Foo::baz", true },		/* const method */
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back",
	  true },
	{ "_ZN12_GLOBAL__N_14workEv", "(anonymous namespace)::work", true },
	{ "_ZN3FooclEi", "Foo::operator()", true },
	{ "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()", true },
	{ "__Z3fooi", "foo", true },
	/* Rust legacy: hash trimmed, escapes decoded */
	{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place", true },
	{ "_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h1a2b3c4d5e6f7a8bE",
	  "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop", true },
	{ "_ZN5hello4main17hdeadbeefdeadbeefE", "hello::main", true },
	/* not mangled, or not demangleable: as is */
	{ "_Znotmangled", "_Znotmangled", false },
	{ "_RNvCs1234_5hello4main", "_RNvCs1234_5hello4main", false },
	{ "_Z", "_Z", false },
	{ "", "", false },
};

static void test_names(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbuf sb = SBUF_INIT;
		bool ch;

		print_message("case %zu: %s\n", i, cases[i].raw);
		ch = demangle_append(&sb, cases[i].raw);
		assert_int_equal(sbuf_error(&sb), 0);
		assert_string_equal(sb.buf ? sb.buf : "", cases[i].want);
		assert_int_equal(ch, cases[i].changed);
		sbuf_fini(&sb);
	}
}

static void test_strip_params(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} c[] = {
		{ "f(int)", 1 },
		{ "ns::f(int) const", 5 },
		{ "ns::f(int) const &", 5 },
		{ "f(void (*)(int))", 1 },
		{ "no_params", 9 },
		{ "broken(", 7 },
		{ "broken)", 7 },
		{ "(x)", 3 }, /* nothing before the list: keep */
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_int_equal(demangle_strip_params(c[i].s, strlen(c[i].s)), c[i].len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_strip_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
