// SPDX-License-Identifier: MIT
/* The Pyroscope series name: what a process names cannot end a value or add a label, checked by
 * Pyroscope's own parsing rules (tests/fuzz/pyroscope_key.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ember/core/formats/pyroscope.h"
#include "../fuzz/pyroscope_key.h"

static const char *label_of(const struct pk_key *k, const char *name)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->name[i], name))
			return k->value[i];
	return NULL;
}

static void test_injection(void **state)
{
	/* the executable name, and a unit name alike */
	const char *evil = "nginx,service_name=payments}<b>";
	struct pyro_label l[] = { { "service_name", evil },
				  { "container_id", "" },
				  { "pod_uid", NULL },
				  { "hostname", "vm" } };
	struct sbuf sb = SBUF_INIT;
	struct pk_key k;

	(void)state;
	assert_int_equal(pyroscope_series_name(&sb, evil, ".cpu", l, 4), 0);
	assert_string_equal(sb.buf, "nginx_service_name_payments__b_.cpu{service_name="
				    "nginx_service_name_payments__b_,hostname=vm}");
	assert_int_equal(pk_parse(sb.buf, &k), 0);
	assert_string_equal(k.app, "nginx_service_name_payments__b_.cpu");
	assert_int_equal(k.n, 2);
	assert_string_equal(label_of(&k, "service_name"), "nginx_service_name_payments__b_");
	assert_string_equal(label_of(&k, "hostname"), "vm");
	sbuf_fini(&sb);
}

static void test_values_and_names(void **state)
{
	struct pyro_label l[] = { { "container_id", " a{b}=c,\"d\"\t\xff:/@+" } };
	struct pyro_label bad[] = { { "9lives", "x" } }, bad2[] = { { "a-b", "x" } };
	struct sbuf sb = SBUF_INIT;
	struct pk_key k;
	char longv[400];

	(void)state;
	assert_int_equal(pyroscope_series_name(&sb, "", ".cpu", l, 1), 0);
	assert_string_equal(sb.buf, "unknown.cpu{container_id=_a_b__c__d___:/@+}");
	assert_int_equal(pk_parse(sb.buf, &k), 0);
	assert_string_equal(label_of(&k, "container_id"), "_a_b__c__d___:/@+");
	sbuf_reset(&sb);
	/* label names of [a-zA-Z_][a-zA-Z0-9_]* only; nothing written otherwise */
	assert_int_equal(pyroscope_series_name(&sb, "a", ".cpu", bad, 1), -EINVAL);
	assert_int_equal(pyroscope_series_name(&sb, "a", ".cpu", bad2, 1), -EINVAL);
	assert_int_equal(pyroscope_series_name(&sb, "a", ".c{u", NULL, 0), -EINVAL);
	assert_int_equal(sb.len, 0);
	assert_true(pyroscope_label_name_ok("_x9"));
	assert_false(pyroscope_label_name_ok(""));
	/* a value is cut to PYRO_VALUE_MAX bytes */
	memset(longv, 'v', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	l[0].value = longv;
	assert_int_equal(pyroscope_series_name(&sb, "a", "", l, 1), 0);
	assert_int_equal(sb.len, strlen("a{container_id=}") + PYRO_VALUE_MAX);
	sbuf_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_injection),
		cmocka_unit_test(test_values_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
