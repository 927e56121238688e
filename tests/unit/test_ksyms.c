// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/daemon/symbols/ksyms.h"
#include "ember/core/base/parse.h"

static const struct {
	const char *line;
	int ret;
	uint64_t addr;
	char type;
	const char *name, *module;
} cases[] = {
	{ "ffffffff810a1b20 T schedule", 0, 0xffffffff810a1b20, 'T', "schedule", NULL },
	{ "ffffffffc0a01000 t ext4_fill_super\t[ext4]", 0, 0xffffffffc0a01000, 't',
	  "ext4_fill_super", "ext4" },
	{ "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]", 0, 0xffffffffc0201000, 't',
	  "ftrace_trampoline", "__builtin__ftrace" },
	{ "0000000000000000 D jiffies", 0, 0, 'D', "jiffies", NULL },
	{ "ffffffffa0000000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]", 0,
	  0xffffffffa0000000, 't', "bpf_prog_6deef7357e7b4530_sd_fw_ingress", "bpf" },
	{ "ffffffff81000000 T _stext\r", 0, 0xffffffff81000000, 'T', "_stext", NULL },
	{ .line = "", .ret = -EINVAL },
	{ .line = "ffffffff81000000", .ret = -EINVAL },
	{ .line = "ffffffff81000000 T", .ret = -EINVAL },
	{ .line = "ffffffff81000000 T ", .ret = -EINVAL },
	{ .line = "ffffffff81000000 1 x", .ret = -EINVAL },
	{ .line = "xyz T x", .ret = -EINVAL },
	{ .line = "ffffffff81000000 T two words", .ret = -EINVAL },
	{ .line = "ffffffff81000000 T x\text4", .ret = -EINVAL },
	{ .line = "ffffffff81000000 T x\t[]", .ret = -EINVAL },
	{ .line = "10000000000000000 T x", .ret = -EINVAL },
};

static void test_lines(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kallsyms_line l;
		struct parse_error pe = { 0 };
		int r = kallsyms_parse_line(cases[i].line, strlen(cases[i].line), &l, &pe);

		print_message("case %zu: %s\n", i, cases[i].line);
		assert_int_equal(r, cases[i].ret);
		if (r) {
			assert_non_null(pe.reason);
			continue;
		}
		assert_int_equal(l.addr, cases[i].addr);
		assert_int_equal(l.type, cases[i].type);
		assert_int_equal(l.name_len, strlen(cases[i].name));
		assert_memory_equal(l.name, cases[i].name, l.name_len);
		if (cases[i].module) {
			assert_int_equal(l.module_len, strlen(cases[i].module));
			assert_memory_equal(l.module, cases[i].module, l.module_len);
		} else {
			assert_null(l.module);
		}
	}
}

static const char table[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 t __local_alias\n"
	"ffffffff81001000 T do_one\n"
	"ffffffff81001000 W do_one_weak\n"
	"ffffffff81001100 D some_data\n"
	"ffffffff81002000 t do_two\n"
	"garbage\n"
	"ffffffffc0001000 t mod_fn_a\t[mymod]\n"
	"ffffffffc0001800 t mod_fn_b\t[mymod]\n"
	"ffffffffc0020000 t mod_fn_c\t[mymod]\n"
	"ffffffffc0080000 t mod_fn_d\t[mymod2]\n"
	"ffffffffc00f0000 t mod_fn_e\t[mymod2]\n"
	"ffffffffc0100000 t other_fn\t[other]\n";

static const char *lookup(struct ksyms *k, uint64_t a, const char **mod)
{
	int idx = ksyms__lookup(k, a, mod);

	return idx < 0 ? NULL : ksyms__name(k, idx);
}

static void test_table(void **state)
{
	unsigned long bad = 0;
	struct ksyms *k = ksyms__from_text(table, strlen(table), &bad);
	const char *mod;
	int idx;

	assert_non_null(k);
	assert_int_equal(bad, 1);
	assert_false(ksyms__restricted(k));
	assert_int_equal(ksyms__count(k), 9); /* aliases folded, data dropped */
	assert_int_equal(ksyms__nr_module_syms(k), 6);
	assert_null(lookup(k, 0xffffffff80ffffff, &mod));
	assert_string_equal(lookup(k, 0xffffffff81000000, NULL), "_stext"); /* global, fewer _, longer */
	assert_string_equal(lookup(k, 0xffffffff81000fff, NULL), "_stext");
	assert_string_equal(lookup(k, 0xffffffff81001000, NULL), "do_one"); /* T before W */
	assert_string_equal(lookup(k, 0xffffffff81001100, NULL), "do_one"); /* data skipped */
	assert_string_equal(lookup(k, 0xffffffff81002fff, NULL), "do_two");
	assert_null(lookup(k, 0xffffffff81002000 + KSYMS_MAX_TAIL, &mod)); /* past the last */
	assert_null(mod);
	idx = ksyms__lookup(k, 0xffffffffc0001804, NULL);
	assert_string_equal(ksyms__name(k, idx), "mod_fn_b");
	assert_string_equal(ksyms__module(k, idx), "mymod");
	assert_null(ksyms__module(k, ksyms__lookup(k, 0xffffffff81001000, NULL)));
	assert_int_equal(ksyms__addr(k, idx), 0xffffffffc0001800);
	ksyms__set_cookie(k, idx, 9);
	assert_int_equal(ksyms__cookie(k, idx), 9);
	/* within a module, symbols run to the next one, up to KSYMS_MAX_MODULE_SPAN */
	assert_string_equal(lookup(k, 0xffffffffc001ffff, NULL), "mod_fn_b");
	assert_string_equal(lookup(k, 0xffffffffc00bffff, NULL), "mod_fn_d");
	assert_null(lookup(k, 0xffffffffc00d0000, &mod));
	assert_string_equal(mod, "mymod2"); /* a gap inside mymod2 */
	/* the last one of a module ends KSYMS_MAX_TAIL later */
	assert_string_equal(lookup(k, 0xffffffffc0020000 + KSYMS_MAX_TAIL - 1, NULL), "mod_fn_c");
	assert_null(lookup(k, 0xffffffffc0020000 + KSYMS_MAX_TAIL, &mod));
	assert_null(mod);
	assert_true(ksyms__mem_bytes(k) > 0);
	ksyms__free(k);
	ksyms__free(NULL);
}

static void test_restricted(void **state)
{
	static const char zeros[] = "0000000000000000 T _stext\n0000000000000000 t x\t[m]\n";
	struct ksyms *k = ksyms__from_text(zeros, strlen(zeros), NULL);

	assert_non_null(k);
	assert_true(ksyms__restricted(k));
	assert_int_equal(ksyms__count(k), 0);
	assert_int_equal(ksyms__lookup(k, 0xffffffff81000000, NULL), -ENOENT);
	ksyms__free(k);
	k = ksyms__from_text("", 0, NULL);
	assert_non_null(k);
	assert_false(ksyms__restricted(k));
	ksyms__free(k);
}

static void test_proc_kallsyms(void **state)
{
	struct ksyms *k = ksyms__load("/proc/kallsyms", NULL);
	char line[512], name[256], type;
	unsigned long long a, want = 0;
	FILE *f;

	assert_non_null(k);
	if (ksyms__restricted(k)) {
		ksyms__free(k);
		skip();
	}
	f = fopen("/proc/kallsyms", "re");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, "schedule"))
			want = a;
	fclose(f);
	assert_true(want != 0);
	assert_string_equal(lookup(k, want + 4, NULL), "schedule");
	ksyms__free(k);
	assert_null(ksyms__load("/nonexistent/kallsyms", NULL));
	assert_int_equal(errno, ENOENT);
}

/* ksyms__load() streams the file through a buffer: lines cut at any chunk boundary, module
 * names repeated across chunks and a last line without '\n' give the same table as the text. */
static void test_load_chunks(void **state)
{
	char path[] = "/tmp/ember-ksyms-XXXXXX";
	size_t cap = 8u << 20, len = 0, i;
	char *text = malloc(cap);
	struct ksyms *a, *b;
	unsigned long bad_a = 0, bad_b = 0;
	int fd;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < 60000; i++) {
		/* names of varying length; the last third in modules, a module per 700 lines */
		len += (size_t)snprintf(text + len, cap - len, "%016llx %c fn_%zu_%.*s%s%.0zu%s\n",
					0xffffffff81000000ull + i * 64, i % 3 ? 't' : 'T', i,
					(int)(i % 37), "abcdefghijklmnopqrstuvwxyzabcdefghijkl",
					i >= 40000 ? "\t[mod" : "", i >= 40000 ? i / 700 : 0,
					i >= 40000 ? "]" : "");
		if (i % 5000 == 7)
			len += (size_t)snprintf(text + len, cap - len, "garbage line\n");
	}
	len += (size_t)snprintf(text + len, cap - len, "ffffffff90000000 T last_without_newline");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	a = ksyms__from_text(text, len, &bad_a);
	b = ksyms__load(path, &bad_b);
	unlink(path);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(bad_a, 12);
	assert_int_equal(bad_b, bad_a);
	assert_int_equal(ksyms__count(a), 60001);
	assert_int_equal(ksyms__count(b), ksyms__count(a));
	assert_int_equal(ksyms__nr_module_syms(b), ksyms__nr_module_syms(a));
	for (i = 0; i < ksyms__count(a); i++) {
		const char *ma = ksyms__module(a, (int)i);
		const char *mb = ksyms__module(b, (int)i);

		assert_int_equal(ksyms__addr(b, (int)i), ksyms__addr(a, (int)i));
		assert_string_equal(ksyms__name(b, (int)i), ksyms__name(a, (int)i));
		assert_true((!ma && !mb) || (ma && mb && !strcmp(ma, mb)));
	}
	ksyms__free(a);
	ksyms__free(b);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_restricted),
		cmocka_unit_test(test_proc_kallsyms),
		cmocka_unit_test(test_load_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
