// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/speedscope.h"
#include "ember/core/base/strtab.h"

static struct profile *parse(struct strtab *st, const char *text)
{
	struct profile *p = profile__new(st);
	struct lineread *lr = lineread__new_mem(text, strlen(text), 0);
	struct folded_read_opts o = { .columns = FOLDED_COLUMNS_ONE, .strict = true };

	assert_int_equal(folded_read(lr, p, &o, NULL, NULL), 0);
	lineread__free(lr);
	return p;
}

/* stacks sorted by text, frames shared, weights = counts, endValue = total */
static void test_profile(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = parse(st, "main;b 2\nmain;a\"q 3\nidle 0\n");
	struct speedscope_opts o = { .name = "t.folded" };
	struct sbuf sb = SBUF_INIT;

	assert_int_equal(speedscope_write_profile(p, &o, &sb), 0);
	assert_string_equal(
		sb.buf,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"exporter\":\"ember\",\"name\":\"t.folded\",\"activeProfileIndex\":0,"
		"\"shared\":{\"frames\":[{\"name\":\"main\"},{\"name\":\"a\\\"q\"},{\"name\":\"b\"}]},"
		"\"profiles\":[{\"type\":\"sampled\",\"name\":\"t.folded\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":5,\"samples\":[[0,1],[0,2]],\"weights\":[3,2]}]}\n");
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
}

/* time order is kept, consecutive equal stacks merge, frequency gives nanoseconds */
static void test_writer_time_order(void **state)
{
	struct strtab *st = strtab__new();
	struct speedscope_opts o = { .freq_hz = 100 };
	struct speedscope_writer *w;
	uint32_t a = (uint32_t)strtab__intern(st, "a", 1), b = (uint32_t)strtab__intern(st, "b", 1);
	uint32_t ab[] = { a, b }, ba[] = { b, a };
	struct sbuf sb = SBUF_INIT;

	w = speedscope_writer__new(st, &o);
	assert_non_null(w);
	assert_int_equal(speedscope_writer__add(w, ba, 2, 1), 0);
	assert_int_equal(speedscope_writer__add(w, ab, 2, 1), 0);
	assert_int_equal(speedscope_writer__add(w, ab, 2, 2), 0);
	assert_int_equal(speedscope_writer__add(w, ab, 0, 1), 0);
	assert_int_equal(speedscope_writer__add(w, ab, 2, 0), 0);
	assert_int_equal(speedscope_writer__add(w, ab, 2, -1), -EINVAL);
	assert_int_equal(speedscope_writer__add(w, ab, 2, NAN), -EINVAL);
	assert_int_equal(speedscope_writer__finish(w, &sb), 0);
	assert_non_null(strstr(sb.buf, "\"name\":\"ember\""));
	assert_non_null(strstr(sb.buf, "\"unit\":\"nanoseconds\",\"startValue\":0,"
					"\"endValue\":50000000,\"samples\":[[0,1],[1,0],[]],"
					"\"weights\":[10000000,30000000,10000000]}"));
	sbuf_fini(&sb);
	speedscope_writer__free(w);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_writer_time_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
