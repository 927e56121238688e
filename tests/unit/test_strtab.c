// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/strtab.h"

static void test_intern_stable_ids(void **state)
{
	struct strtab *st = strtab__new();
	const char *first;
	char name[32];
	int i, id;

	assert_non_null(st);
	assert_int_equal(strtab__intern(st, "main", 4), 0);
	assert_int_equal(strtab__intern(st, "foo", 3), 1);
	assert_int_equal(strtab__intern(st, "mainx", 4), 0); /* only 4 bytes count */
	assert_int_equal(strtab__intern(st, "", 0), 2);	     /* the empty name is a name */
	first = strtab__str(st, 0);
	/* grow far past the initial table and chunk: ids and pointers must not move */
	for (i = 0; i < 200000; i++) {
		int n = snprintf(name, sizeof(name), "fn_%d", i);

		id = strtab__intern(st, name, (size_t)n);
		assert_int_equal(id, i + 3);
	}
	assert_ptr_equal(strtab__str(st, 0), first);
	assert_string_equal(strtab__str(st, 0), "main");
	assert_int_equal(strtab__find(st, "fn_123456", 9), 123456 + 3);
	assert_int_equal(strtab__find(st, "nope", 4), -ENOENT);
	assert_int_equal(strtab__count(st), 200003);
	assert_true(strtab__mem_bytes(st) > 200000 * 8);
	strtab__free(st);
}

static void test_binary_names(void **state)
{
	struct strtab *st = strtab__new();
	char big[300000];
	int a, b, c;

	memset(big, 'x', sizeof(big));
	a = strtab__intern(st, "a\xff b", 4);
	b = strtab__intern(st, big, sizeof(big)); /* larger than a chunk */
	c = strtab__intern(st, "after", 5);
	assert_true(a >= 0 && b > a && c > b);
	assert_int_equal(strtab__len(st, (uint32_t)b), sizeof(big));
	assert_memory_equal(strtab__str(st, (uint32_t)a), "a\xff b", 5);
	assert_string_equal(strtab__str(st, (uint32_t)c), "after");
	assert_int_equal(strtab__intern(st, big, sizeof(big)), b);
	strtab__free(st);
	strtab__free(NULL);
}

/* A long name, distinct per @i. */
static size_t long_name(char *buf, size_t size, int i)
{
	memset(buf, 'x', size);
	return (size_t)snprintf(buf, size, "f%08d_", i) + size / 2;
}

/* The byte bound: memory never past it, new names past it refused (counted) as the placeholder,
 * names kept before it still answered with their ids. */
static void test_limit(void **state)
{
	struct strtab *st = strtab__new();
	char buf[4096];
	size_t max = 1u << 20, len;
	int i, id, refused, first, nref = 0;

	(void)state;
	first = strtab__intern(st, "main", 4);
	assert_int_equal(strtab__set_limit(st, max, "[name refused]"), 0);
	refused = strtab__find(st, "[name refused]", 14);
	assert_true(refused >= 0);
	for (i = 0; i < 2000; i++) {
		len = long_name(buf, sizeof(buf), i);
		id = strtab__intern(st, buf, len);
		assert_true(id >= 0);
		assert_true(strtab__mem_bytes(st) <= max);
		if (id == refused)
			nref++;
		else
			assert_memory_equal(strtab__str(st, (uint32_t)id), buf, len);
	}
	/* 2000 names of ~2 KiB: 4 MiB, a quarter of them fit */
	assert_true(nref > 1000 && nref < 2000);
	assert_int_equal(strtab__refused(st), (uint64_t)nref);
	assert_int_equal(strtab__intern(st, "main", 4), first); /* kept: still found */
	assert_int_equal(strtab__intern(st, "[name refused]", 14), refused);
	strtab__free(st);
}

/* A share in the test: what was charged, per generation */
struct share {
	uint64_t gen;
	size_t bytes;
	int asked;
};

static bool admit(void *ctx, size_t cost, uint64_t gen, size_t limit)
{
	struct share *sh = ctx;

	sh->asked++;
	if (sh->gen != gen) {
		sh->gen = gen;
		sh->bytes = 0;
	}
	if (limit && sh->bytes + cost > limit)
		return false;
	sh->bytes += cost;
	return true;
}

/* Shares: a new name is offered to its owner's share with its cost and refused past the share's
 * bound (counted, the placeholder); a name already in the table is not charged again, whoever
 * asks; another owner's room is untouched; a renewal starts the shares over. */
static void test_shares(void **state)
{
	struct strtab *st = strtab__new();
	struct share a = { 0 }, b = { 0 };
	char buf[4096];
	size_t len, limit = 64u << 10;
	int i, id, refused, na = 0, nb = 0, first_a;

	(void)state;
	assert_int_equal(strtab__set_limit(st, 8u << 20, "[name refused]"), 0);
	strtab__set_share_limit(st, limit);
	assert_int_equal(strtab__share_limit(st), limit);
	refused = strtab__find(st, "[name refused]", 14);
	assert_true(strtab__is_refused(st, refused));
	len = long_name(buf, sizeof(buf), 0);
	first_a = strtab__intern_as(st, buf, len, admit, &a);
	assert_false(strtab__is_refused(st, first_a));
	assert_int_equal(a.bytes, strtab__cost(len));
	assert_true(strtab__cost(len) > len);
	/* a fills its share: ~2 KiB names, 64 KiB */
	for (i = 1; i < 200; i++) {
		len = long_name(buf, sizeof(buf), i);
		id = strtab__intern_as(st, buf, len, admit, &a);
		if (strtab__is_refused(st, id))
			na++;
	}
	assert_true(na > 150 && na < 190);
	assert_true(a.bytes <= limit);
	assert_int_equal(strtab__share_refused(st), (uint64_t)na);
	assert_int_equal(strtab__refused(st), (uint64_t)na);
	/* b's names still get in; a name a brought in costs b nothing and asks no share */
	len = long_name(buf, sizeof(buf), 0);
	assert_int_equal(strtab__intern_as(st, buf, len, admit, &b), first_a);
	assert_int_equal(b.asked, 0);
	for (i = 1000; i < 1010; i++) {
		len = long_name(buf, sizeof(buf), i);
		id = strtab__intern_as(st, buf, len, admit, &b);
		if (strtab__is_refused(st, id))
			nb++;
	}
	assert_int_equal(nb, 0);
	/* no owner: only the table's bound */
	len = long_name(buf, sizeof(buf), 2000);
	assert_false(strtab__is_refused(st, strtab__intern(st, buf, len)));
	/* a renewal: a's share starts over */
	assert_int_equal(strtab__renew(st), 0);
	strtab__renew_done(st);
	len = long_name(buf, sizeof(buf), 3000);
	id = strtab__intern_as(st, buf, len, admit, &a);
	assert_false(strtab__is_refused(st, id));
	assert_int_equal(a.bytes, strtab__cost(len));
	assert_true(strtab__is_refused(st, strtab__find(st, "[name refused]", 14)));
	strtab__free(st);
}

/* Generations: names carried keep their bytes under new ids, the others are freed; the memory
 * comes back to what the carried names need. */
static void test_renew(void **state)
{
	struct strtab *st = strtab__new();
	char buf[4096];
	size_t base, full, len;
	int i, id, keep = -1, keep2, refused, nid;

	(void)state;
	assert_int_equal(strtab__set_limit(st, 8u << 20, "[name refused]"), 0);
	base = strtab__mem_bytes(st);
	for (i = 0; i < 1000; i++) {
		len = long_name(buf, sizeof(buf), i);
		id = strtab__intern(st, buf, len);
		if (i == 500)
			keep = id;
	}
	keep2 = strtab__intern(st, "burn_c", 6);
	full = strtab__mem_bytes(st);
	assert_true(full > base + (2u << 20));
	assert_int_equal(strtab__generation(st), 0);
	assert_int_equal(strtab__renew(st), 0);
	assert_int_equal(strtab__renew(st), -EBUSY); /* one at a time */
	assert_int_equal(strtab__generation(st), 1);
	/* the old names stay readable for the carry; the table is empty but for the placeholder */
	assert_int_equal(strtab__count(st), 1);
	refused = strtab__find(st, "[name refused]", 14);
	assert_int_equal(refused, 0);
	nid = strtab__carry(st, (uint32_t)keep2);
	assert_true(nid >= 0);
	assert_string_equal(strtab__str(st, (uint32_t)nid), "burn_c");
	id = strtab__carry(st, (uint32_t)keep);
	assert_true(id >= 0 && id != nid);
	len = long_name(buf, sizeof(buf), 500);
	assert_memory_equal(strtab__str(st, (uint32_t)id), buf, len);
	assert_int_equal(strtab__carry(st, (uint32_t)keep), id); /* carried once */
	assert_int_equal(strtab__carry(st, 1000000), -EINVAL);
	strtab__renew_done(st);
	assert_int_equal(strtab__carry(st, (uint32_t)keep2), -EINVAL); /* done: nothing to carry */
	assert_int_equal(strtab__count(st), 3);
	assert_true(strtab__mem_bytes(st) < base + (256u << 10));
	/* a name not carried is new again */
	len = long_name(buf, sizeof(buf), 3);
	assert_int_equal(strtab__find(st, buf, len), -ENOENT);
	assert_int_equal(strtab__intern(st, buf, len), 3);
	strtab__free(st);
}

/* A renewal's memory is charged like the table's: the counter follows the names given back. */
static void test_renew_charge(void **state)
{
	struct strtab *st = strtab__new();
	uint64_t counter = 0;
	char buf[4096];
	size_t len;
	int i;

	(void)state;
	strtab__charge_to(st, &counter);
	for (i = 0; i < 300; i++) {
		len = long_name(buf, sizeof(buf), i);
		assert_true(strtab__intern(st, buf, len) >= 0);
	}
	assert_int_equal(counter, strtab__mem_bytes(st));
	assert_int_equal(strtab__renew(st), 0);
	strtab__renew_done(st);
	assert_int_equal(counter, strtab__mem_bytes(st));
	strtab__free(st);
	assert_int_equal(counter, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_stable_ids),
		cmocka_unit_test(test_binary_names),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_renew),
		cmocka_unit_test(test_renew_charge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
