// SPDX-License-Identifier: MIT
/*
 * runtime: the set of language runtimes' readers (unwind/runtime.h): readers added (a reader not
 * made is not), found by name, at most RUNTIME_MAX; notes, samples, carrying names and pruning
 * reach each reader that has the operation, in the order added; a failed carry is reported with
 * the first failing reader's name, the others still carried. And the three readers' operations
 * as the ingest relies on them: how each one's frames come out of the walk.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/unwind/runtime.h"

struct fake {
	int noted, sampled, carried, pruned, carry_err;
	uint32_t pid;
};

static void f_noted(void *rt, uint32_t pid)
{
	((struct fake *)rt)->noted++;
	((struct fake *)rt)->pid = pid;
}

static void f_sampled(void *rt, uint32_t pid)
{
	((struct fake *)rt)->sampled++;
	((struct fake *)rt)->pid = pid;
}

static int f_carry(void *rt)
{
	((struct fake *)rt)->carried++;
	return ((struct fake *)rt)->carry_err;
}

static void f_prune(void *rt)
{
	((struct fake *)rt)->pruned++;
}

static const struct runtime_ops all = { .name = "all", .noted = f_noted, .sampled = f_sampled,
					.names_carry = f_carry, .prune = f_prune };
static const struct runtime_ops bare = { .name = "bare" };

static void test_set(void **state)
{
	struct runtime_set s = { .n = 0 };
	struct fake a = { 0 }, b = { 0 }, c = { .carry_err = -ENOMEM }, d = { 0 };
	const char *failed = "x";

	(void)state;
	assert_int_equal(runtime_set_add(&s, &all, NULL), 0); /* not made: not added */
	assert_int_equal(s.n, 0);
	assert_int_equal(runtime_set_add(&s, &all, &a), 0);
	assert_int_equal(runtime_set_add(&s, &bare, &b), 0);
	assert_int_equal(runtime_set_add(&s, &all, &c), 0);
	assert_int_equal(runtime_set_add(&s, &all, &d), 0);
	assert_int_equal(runtime_set_add(&s, &all, &a), -ENOSPC);
	assert_int_equal(s.n, RUNTIME_MAX);
	assert_ptr_equal(runtime_set_get(&s, "bare"), &b);
	assert_ptr_equal(runtime_set_get(&s, "all"), &a); /* the first of that name */
	assert_null(runtime_set_get(&s, "none"));
	runtime_set_noted(&s, 42);
	runtime_set_sampled(&s, 43);
	runtime_set_prune(&s);
	assert_int_equal(a.noted + c.noted + d.noted, 3);
	assert_int_equal(a.sampled + c.sampled + d.sampled, 3);
	assert_int_equal(a.pid, 43);
	assert_int_equal(d.pruned, 1);
	assert_int_equal(b.noted + b.sampled + b.pruned, 0);
	/* c fails: reported by name, d carried all the same */
	assert_int_equal(runtime_set_names_carry(&s, &failed), -ENOMEM);
	assert_string_equal(failed, "all");
	assert_int_equal(d.carried, 1);
	c.carry_err = 0;
	assert_int_equal(runtime_set_names_carry(&s, &failed), 0);
	assert_null(failed);
}

/* The three readers: each names the frames of the walk's words its own way (bpf_shared.h) */
static void test_readers(void **state)
{
	(void)state;
	assert_string_equal(python_runtime_ops.name, "python");
	assert_int_equal(python_runtime_ops.words, RUNTIME_WORDS_NONE);
	assert_non_null(python_runtime_ops.merge);
	assert_null(python_runtime_ops.frame_names);
	assert_non_null(python_runtime_ops.noted);
	assert_string_equal(v8_runtime_ops.name, "v8");
	assert_int_equal(v8_runtime_ops.words, RUNTIME_WORDS_AFTER);
	assert_int_equal(v8_runtime_ops.ustack_flag, EMBER_USTACK_V8);
	assert_non_null(v8_runtime_ops.frame_names);
	assert_non_null(v8_runtime_ops.sampled);
	assert_string_equal(hotspot_runtime_ops.name, "hotspot");
	assert_int_equal(hotspot_runtime_ops.words, RUNTIME_WORDS_IN_PLACE);
	assert_int_equal(hotspot_runtime_ops.ustack_flag, EMBER_USTACK_HS);
	assert_non_null(hotspot_runtime_ops.frame_names);
	/* no two readers claim one stack */
	assert_int_equal(v8_runtime_ops.ustack_flag & hotspot_runtime_ops.ustack_flag, 0);
	assert_true(v8_runtime_ops.max_frames <= RUNTIME_MAX_FRAMES);
	assert_true(hotspot_runtime_ops.max_frames <= RUNTIME_MAX_FRAMES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_readers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
