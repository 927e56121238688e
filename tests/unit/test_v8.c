// SPDX-License-Identifier: MIT
/*
 * v8: which V8 binaries' v8dbg_ data is taken for the BPF walk (v8_facts_check): Debian's node
 * 20 (and every EMBER_NODES/<dir>/bin/node, by default npm's official builds that make deps
 * put in $OUTPUT/node/node_modules) is accepted
 * with the frame slots and offsets it declares; each item ember relies on, changed to what a
 * layout it does not read would say, is refused with the reason counted.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <errno.h>

#include "ember/daemon/elf/rtintro.h"
#include "ember/daemon/unwind/v8.h"

#define NODE "/usr/bin/node"

static bool read_node(const char *path, struct rtintro_v8 *f)
{
	struct rtintro_stats st = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			fail_msg("%s missing under CI", path);
		return false;
	}
	r = rtintro_v8_read(fd, f, &st);
	close(fd);
	assert_int_equal(r, 0);
	return true;
}

static void check_accepted(const char *path)
{
	struct rtintro_v8 f;
	struct ember_v8_proc p;
	int why = -1;

	if (!read_node(path, &f))
		return;
	assert_true(v8_facts_check(&f, &p, &why));
	assert_int_equal(why, RTI_OK);
	/* x86-64 V8: context and function right below the saved rbp */
	assert_int_equal(p.fp_context, -8);
	assert_int_equal(p.fp_function, -16);
	assert_int_equal(p.heap_tag, 1);
	assert_int_equal(p.heap_tag_mask, 3);
	assert_int_equal(p.map_off, f.val[RTI_V8_HEAPOBJECT_MAP]);
	assert_int_equal(p.instance_type_off, f.val[RTI_V8_MAP_INSTANCE_TYPE]);
	assert_int_equal(p.shared_off, f.val[RTI_V8_JSFUNCTION_SHARED]);
	assert_int_equal(p.type_sfi, f.val[RTI_V8_TYPE_SFI]);
	assert_true(f.have[RTI_V8_SCOPEINFO_IDX_NLOCALS]);
	assert_true(f.have[RTI_V8_THIN_ACTUAL]);
	/* TurboFan's inlining data read by its version's layout, each value it declares agreeing */
	why = -1;
	print_message("# V8 %d.%d\n", f.major, f.minor);
	assert_non_null(v8_tf_layout_for(&f, &why));
	assert_int_equal(why, RTI_OK);
}

static void test_accepts_node(void **state)
{
	const char *dir = getenv("EMBER_NODES"), *out = getenv("OUTPUT");
	char cmd[600], line[512], npm[512];
	FILE *ls;

	(void)state;
	check_accepted(NODE);
	/* npm's official builds, where make deps put them (node18, node22, node24) */
	if ((!dir || !*dir) && out) {
		snprintf(npm, sizeof(npm), "%s/node/node_modules", out);
		dir = npm;
	}
	if (!dir || !*dir || access(dir, R_OK))
		return;
	snprintf(cmd, sizeof(cmd), "ls -d '%s'/*/bin/node", dir);
	ls = popen(cmd, "r");
	assert_non_null(ls);
	while (fgets(line, sizeof(line), ls)) {
		line[strcspn(line, "\n")] = '\0';
		print_message("# %s\n", line);
		check_accepted(line);
	}
	pclose(ls);
}

/* Each change alone: refused, with the reason it is. */
static void test_refuses_changed(void **state)
{
	static const struct {
		int item, value, why;
		const char *what;
	} cases[] = {
		{ RTI_V8_SMI_SHIFT_SIZE, 0, RTI_BAD_VALUE, "compressed pointers" },
		{ RTI_V8_HEAP_OBJECT_TAG, 0, RTI_BAD_VALUE, "another heap tag" },
		{ RTI_V8_OFF_FP_CONTEXT, 8, RTI_BAD_VALUE, "context above the frame pointer" },
		{ RTI_V8_OFF_FP_FUNCTION, -8, RTI_BAD_VALUE, "function on the context's slot" },
		{ RTI_V8_OFF_FP_FUNCTION, -12, RTI_BAD_VALUE, "a slot not word-aligned" },
		{ RTI_V8_OFF_FP_FUNCTION, -4096, RTI_BAD_VALUE, "a slot far below" },
		{ RTI_V8_JSFUNCTION_SHARED, 1 << 20, RTI_BAD_VALUE, "a field 1 MiB in" },
		{ RTI_V8_MAP_INSTANCE_TYPE, -4, RTI_BAD_VALUE, "a negative field" },
		{ RTI_V8_TYPE_SFI, 70000, RTI_BAD_VALUE, "an instance type past 16 bits" },
		{ RTI_V8_SCOPEINFO_IDX_FIRST_VARS, 1000, RTI_BAD_VALUE, "a ScopeInfo index far in" },
	};
	struct rtintro_v8 f, g;
	struct ember_v8_proc p;
	size_t i;
	int why;

	(void)state;
	if (!read_node(NODE, &f))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		g = f;
		g.val[cases[i].item] = cases[i].value;
		why = -1;
		print_message("# %s\n", cases[i].what);
		assert_false(v8_facts_check(&g, &p, &why));
		assert_int_equal(why, cases[i].why);
	}
	/* a required item missing, or the ScopeInfo indexes it names functions by */
	g = f;
	g.missing_required = 1;
	assert_false(v8_facts_check(&g, &p, &why));
	assert_int_equal(why, RTI_MISSING);
	g = f;
	g.have[RTI_V8_SCOPEINFO_IDX_NLOCALS] = false;
	assert_false(v8_facts_check(&g, &p, &why));
	assert_int_equal(why, RTI_MISSING);
}

/* V8's source position table as V8 writes it (source-position-table.cc), for the reader's tests:
 * a number zigzag-coded, 7 bits a byte, low bits first, the high bit on all but the last */
static size_t put_vlq(uint8_t *b, size_t at, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	do {
		b[at++] = (uint8_t)((u & 0x7f) | (u > 0x7f ? 0x80 : 0));
		u >>= 7;
	} while (u);
	return at;
}

/* entries of (code offset, statement?, source position), written as deltas */
struct srcpos_entry {
	int64_t code;
	bool stmt;
	uint64_t pos;
};

static size_t put_table(uint8_t *b, const struct srcpos_entry *e, size_t n)
{
	int64_t code = 0;
	uint64_t pos = 0;
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t dc = e[i].code - code;

		at = put_vlq(b, at, e[i].stmt ? dc : -dc - 1);
		at = put_vlq(b, at, (int64_t)(e[i].pos - pos));
		code = e[i].code;
		pos = e[i].pos;
	}
	return at;
}

static void test_srcpos(void **state)
{
	/* positions with an inlining id in the high bits (a SourcePosition's layout: the reader
	 * takes the 64 bits as they are), growing and shrinking, code offsets past 2^14 */
	static const struct srcpos_entry e[] = {
		{ 0, true, 1ULL << 1 },
		{ 5, false, (1ULL << 31) | (400 << 1) },
		{ 5, true, (2ULL << 31) | (17 << 1) },
		{ 130, true, 90 << 1 },
		{ 20000, false, (65535ULL << 31) | (1000000 << 1) },
		{ 20001, true, 3 << 1 },
	};
	uint8_t b[256];
	size_t len = put_table(b, e, 6);
	uint64_t pos = 0;

	(void)state;
	assert_int_equal(v8_srcpos_lookup(b, len, 0, &pos), 0);
	assert_int_equal(pos, e[0].pos);
	assert_int_equal(v8_srcpos_lookup(b, len, 4, &pos), 0);
	assert_int_equal(pos, e[0].pos);
	/* two entries at one offset: the last of them, as V8's lookup takes */
	assert_int_equal(v8_srcpos_lookup(b, len, 5, &pos), 0);
	assert_int_equal(pos, e[2].pos);
	assert_int_equal(v8_srcpos_lookup(b, len, 129, &pos), 0);
	assert_int_equal(pos, e[2].pos);
	assert_int_equal(v8_srcpos_lookup(b, len, 19999, &pos), 0);
	assert_int_equal(pos, e[3].pos);
	assert_int_equal(v8_srcpos_lookup(b, len, 20000, &pos), 0);
	assert_int_equal(pos, e[4].pos);
	assert_int_equal(v8_srcpos_lookup(b, len, UINT32_MAX, &pos), 0);
	assert_int_equal(pos, e[5].pos);
	/* before the first entry; an empty table */
	{
		static const struct srcpos_entry late[] = { { 10, true, 8 } };
		size_t l2 = put_table(b, late, 1);

		assert_int_equal(v8_srcpos_lookup(b, l2, 9, &pos), -ENOENT);
		assert_int_equal(v8_srcpos_lookup(b, 0, 9, &pos), -ENOENT);
		assert_int_equal(v8_srcpos_lookup(b, l2, 10, &pos), 0);
		assert_int_equal(pos, 8);
	}
	/* hostile bytes: a number cut off at the end, one of more than 64 bits (ten bytes of
	 * 0xff), an entry without its position, a code offset past 32 bits */
	len = put_table(b, e, 6);
	assert_int_equal(v8_srcpos_lookup(b, len - 1, UINT32_MAX, &pos), -EINVAL);
	memset(b, 0xff, 12);
	b[12] = 0;
	assert_int_equal(v8_srcpos_lookup(b, 13, 0, &pos), -EINVAL);
	len = put_vlq(b, 0, 7);
	assert_int_equal(v8_srcpos_lookup(b, len, 100, &pos), -EINVAL);
	len = put_vlq(b, 0, 1LL << 40);
	len = put_vlq(b, len, 0);
	assert_int_equal(v8_srcpos_lookup(b, len, UINT32_MAX, &pos), -EINVAL);
}

/* The inlining layout: a version ember has not measured, or a value the binary declares that
 * disagrees with the layout's, and the inlined functions are not read (physical frames only). */
static void test_tf_layout_refused(void **state)
{
	static const struct {
		int item, value, why;
		const char *what;
	} cases[] = {
		{ RTI_V8_CODE_DEOPT_DATA, 8, RTI_BAD_VALUE, "deoptimization data moved" },
		{ RTI_V8_CODE_SOURCE_POSITIONS, 32, RTI_BAD_VALUE, "position table moved" },
		{ RTI_V8_DD_INLINING_POSITIONS, 8, RTI_BAD_VALUE, "InliningPositions' index" },
		{ RTI_V8_DD_LITERALS, 3, RTI_BAD_VALUE, "the literals' index" },
		{ RTI_V8_CODE_KIND_BASELINE, 10, RTI_BAD_VALUE, "another CodeKind enum" },
		{ RTI_V8_CODE_KIND_MASK, 31, RTI_BAD_VALUE, "a wider kind field" },
	};
	struct rtintro_v8 f, g;
	int why;

	(void)state;
	if (!read_node(NODE, &f))
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		g = f;
		g.have[cases[i].item] = true;
		g.val[cases[i].item] = cases[i].value;
		why = -1;
		print_message("# %s\n", cases[i].what);
		assert_null(v8_tf_layout_for(&g, &why));
		assert_int_equal(why, cases[i].why);
	}
	/* a version not measured (11.4), none at all */
	g = f;
	g.minor = 4;
	assert_null(v8_tf_layout_for(&g, &why));
	assert_int_equal(why, RTI_MISSING);
	g = f;
	g.major = g.minor = -1;
	assert_null(v8_tf_layout_for(&g, &why));
	/* no InstructionStream type to know its header by */
	g = f;
	g.have[RTI_V8_TYPE_ISTREAM] = false;
	assert_null(v8_tf_layout_for(&g, &why));
	assert_int_equal(why, RTI_MISSING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_node),
		cmocka_unit_test(test_refuses_changed),
		cmocka_unit_test(test_srcpos),
		cmocka_unit_test(test_tf_layout_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
