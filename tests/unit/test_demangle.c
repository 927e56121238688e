// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ember/daemon/symbols/demangle.h"
#include "ember/core/base/sbuf.h"

/*
 * Real symbols (nm) of binaries built here, with the name `perf report` (Debian's perf 6.1)
 * printed for each where it sampled it (marked "perf"), the others from c++filt without -p.
 */
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
	{ "_Z4spinIlET_S0_S0_", "spin<long>", true },		/* no return type */
	/* g++ -O2 clones: the base name (perf: "ns::heavy") */
	{ "_ZN2nsL5heavyERNS_3AccEli.constprop.0.isra.0", "ns::heavy", true },	/* perf */
	{ "_ZN2ns5heavyERNS_3AccEli.cold", "ns::heavy", true },
	{ "_ZN2ns5visitEPNS_4NodeEl.part.0", "ns::visit", true },
	/* clang++ -O2 -flto=thin: a static function promoted by ThinLTO */
	{ "_ZN2nsL6helperEl.llvm.3446798749643993023", "ns::helper", true },
	/* a C one is no mangled name: as perf shows it */
	{ "helper.llvm.10013984209824807835", "helper.llvm.10013984209824807835", false },
	/* Rust legacy (rustc -O): hash dropped, escapes decoded, .llvm. stripped */
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17ha276d3608e6ff927E"
	  ".llvm.15756518843791540908", "hashbrown::raw::RawTable<T,A>::reserve_rehash", true }, /* perf */
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17ha276d3608e6ff927E",
	  "hashbrown::raw::RawTable<T,A>::reserve_rehash", true },
	{ "_ZN78_$LT$rustwork..engine..Mixer$LT$u64$GT$$u20$as$u20$rustwork..engine..Stage$GT$"
	  "3run17h3b61604c4b89a9a8E", "<rustwork::engine::Mixer<u64> as rustwork::engine::Stage>::run",
	  true },
	{ "_ZN8rustwork6engine8checksum17hb6f618866b35ac78E", "rustwork::engine::checksum", true },
	{ "_ZN2pv4grow17hbbe2454725da61a8E", "pv::grow", true },	/* perf */
	{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place", true },
	/* Rust v0 (rustc -C symbol-mangling-version=v0, and Rust 1.95's own std) */
	{ "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal", true },
	{ "_RNvXNtCs8aSpJvDetbq_8rustwork6engineINtB2_5MixeryENtB2_5Stage3run",
	  "<rustwork::engine::Mixer<u64> as rustwork::engine::Stage>::run", true },
	{ "_RNvNtCs8aSpJvDetbq_8rustwork6engine8checksum", "rustwork::engine::checksum", true },
	{ "_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTjjEE14reserve_rehashNCINvNtB8_3map11"
	  "make_hasherjjNtNtNtCsjrHSEGnQ3l9_3std4hash6random11RandomStateE0ECs71riGNamEYU_2pv"
	  ".llvm.903033711287108488",
	  "<hashbrown::raw::RawTable<(usize, usize)>>::reserve_rehash::<hashbrown::map::make_hasher<"
	  "usize, usize, std::hash::random::RandomState>::{closure#0}>", true },	/* perf */
	/* not mangled, or not demangleable: as is */
	{ "_Znotmangled", "_Znotmangled", false },
	{ "_RNotRust", "_RNotRust", false },
	{ "_Z", "_Z", false },
	{ "_R", "_R", false },
	{ "x.llvm.", "x.llvm.", false },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
