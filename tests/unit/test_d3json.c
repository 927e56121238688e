// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/d3json.h"
#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static const struct {
	const char *folded, *root, *json;
} cases[] = {
	{ "", NULL, "{\"name\":\"root\",\"value\":0}\n" },
	{ "a 1\n", "all", "{\"name\":\"all\",\"value\":1,\"children\":[{\"name\":\"a\",\"value\":1}]}\n" },
	/* inclusive values, children by name, one node per name under a parent */
	{ "m;b;x 2\nm;a 3\nm;b 1\nm;b;y 4\nz\\q 1\n", NULL,
	  "{\"name\":\"root\",\"value\":11,\"children\":["
	  "{\"name\":\"m\",\"value\":10,\"children\":["
	  "{\"name\":\"a\",\"value\":3},"
	  "{\"name\":\"b\",\"value\":7,\"children\":[{\"name\":\"x\",\"value\":2},{\"name\":\"y\",\"value\":4}]}]},"
	  "{\"name\":\"z\\\\q\",\"value\":1}]}\n" },
	/* a frame name that is a prefix of a sibling's, fractional counts, zero counts dropped */
	{ "a;b!c 0.5\na;b;c 1\na;b 0\n", NULL,
	  "{\"name\":\"root\",\"value\":1.5,\"children\":[{\"name\":\"a\",\"value\":1.5,\"children\":["
	  "{\"name\":\"b\",\"value\":1,\"children\":[{\"name\":\"c\",\"value\":1}]},"
	  "{\"name\":\"b!c\",\"value\":0.5}]}]}\n" },
};

static void test_cases(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strtab *st = strtab__new();
		struct profile *p = profile__new(st);
		struct lineread *lr = lineread__new_mem(cases[i].folded, strlen(cases[i].folded), 0);
		struct folded_read_opts o = { .columns = FOLDED_COLUMNS_ONE, .strict = true };
		struct sbuf sb = SBUF_INIT;

		assert_int_equal(folded_read(lr, p, &o, NULL, NULL), 0);
		assert_int_equal(d3json_write_profile(p, cases[i].root, &sb), 0);
		assert_string_equal(sb.buf, cases[i].json);
		sbuf_fini(&sb);
		lineread__free(lr);
		profile__free(p);
		strtab__free(st);
	}
}

/* a deep stack does not recurse: 100000 frames */
static void test_deep(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	size_t n = 100000, i;
	uint32_t *f = malloc(n * sizeof(*f));
	struct sbuf sb = SBUF_INIT;

	for (i = 0; i < n; i++)
		f[i] = (uint32_t)strtab__intern(st, i % 2 ? "b" : "a", 1);
	assert_true(profile__add(p, f, n, 1) >= 0);
	assert_int_equal(d3json_write_profile(p, NULL, &sb), 0);
	assert_true(sb.len > n * 20);
	assert_string_equal(sb.buf + sb.len - 4, "]}]}\n" + 1);
	sbuf_fini(&sb);
	free(f);
	profile__free(p);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_deep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
