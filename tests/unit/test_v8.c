// SPDX-License-Identifier: MIT
/*
 * v8: which V8 binaries' v8dbg_ data is taken for the BPF walk (v8_facts_check): Debian's node
 * 20 (and every EMBER_NODES/<dir>/bin/node: official builds unpacked beforehand) is accepted
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
}

static void test_accepts_node(void **state)
{
	const char *dir = getenv("EMBER_NODES");
	char cmd[600], line[512];
	FILE *ls;

	(void)state;
	check_accepted(NODE);
	if (!dir || !*dir)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_node),
		cmocka_unit_test(test_refuses_changed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
