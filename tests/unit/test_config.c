// SPDX-License-Identifier: MIT
/* emberd's configuration: defaults, every key type, file syntax and errors, flag precedence. */
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

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"

static void test_defaults(void **state)
{
	struct ember_config c;

	ember_config_init(&c);
	assert_string_equal(c.listen, "127.0.0.1:8080");
	assert_int_equal(c.frequency_hz, 99);
	assert_int_equal(c.retention_s, 3600);
	assert_int_equal(c.memory_limit_bytes, 256ULL << 20);
	assert_int_equal(c.stack_map_entries, 0); /* automatic: sized by the sampler */
	assert_true(c.include_idle);
	assert_int_equal(c.log_level, LOG_LVL_INFO);
	assert_int_equal(c.dump_after_s, 0);
}

static void test_set(void **state)
{
	static const struct {
		const char *key, *value;
		int ret;
	} cases[] = {
		{ "sampling.frequency", "999", 0 },
		{ "sampling.frequency", "10000", 0 },
		{ "sampling.frequency", "10001", -EINVAL },
		{ "sampling.frequency", "0", -EINVAL },
		{ "sampling.frequency", "99hz", -EINVAL },
		{ "sampling.frequency", "-5", -EINVAL },
		{ "sampling.frequency", "", -EINVAL },
		{ "sampling.frequency", "99999999999999999999999", -EINVAL },
		{ "sampling.stack_map_entries", "4096", 0 },
		{ "sampling.stack_map_entries", "5000", -EINVAL },	/* not a power of 2 */
		{ "sampling.stack_map_entries", "512", -EINVAL },	/* below the minimum */
		{ "sampling.stack_map_entries", "0", 0 },		/* automatic */
		{ "sampling.counts_map_entries", "0", 0 },
		{ "sampling.ringbuf_size", "0", -EINVAL },		/* no automatic size */
		{ "sampling.ringbuf_size", "4M", 0 },
		{ "sampling.ringbuf_size", "4MiB", 0 },
		{ "sampling.ringbuf_size", "3M", -EINVAL },
		{ "sampling.ringbuf_size", "4X", -EINVAL },
		{ "sampling.include_idle", "no", 0 },
		{ "sampling.include_idle", "maybe", -EINVAL },
		{ "store.memory_limit", "1G", 0 },
		{ "store.memory_limit", "1023K", -EINVAL },
		{ "store.memory_limit", "99999999999G", -EINVAL },		/* overflow */
		{ "store.retention", "86400", 0 },
		{ "http.listen", "0.0.0.0:9000", 0 },
		{ "http.listen", "[::1]:9000", 0 },
		{ "http.listen", "localhost", -EINVAL },
		{ "http.listen", "::1:80", -EINVAL },
		{ "http.listen", "1.2.3.4:70000", -EINVAL },
		{ "http.listen", ":80", -EINVAL },
		{ "log.level", "debug", 0 },
		{ "log.level", "loud", -EINVAL },
		{ "sampling.nope", "1", -ENOENT },
		{ "frequency", "1", -ENOENT },
	};
	struct ember_config c;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ember_config_init(&c);
		err[0] = '\0';
		if (ember_config_set(&c, cases[i].key, cases[i].value, err, sizeof(err)) !=
		    cases[i].ret)
			fail_msg("%s = '%s': expected %d", cases[i].key, cases[i].value, cases[i].ret);
		if (cases[i].ret)
			assert_non_null(strstr(err, cases[i].key)); /* the message names the key */
	}
	ember_config_init(&c);
	assert_int_equal(ember_config_set(&c, "sampling.ringbuf_size", "4M", err, sizeof(err)), 0);
	assert_int_equal(c.ringbuf_bytes, 4 << 20);
	assert_int_equal(ember_config_set(&c, "log.level", "debug", err, sizeof(err)), 0);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);
}

static void test_parse(void **state)
{
	const char *text = "# comment\n"
			   "\n"
			   "[sampling]\r\n"
			   "  frequency = 49   # trailing comment\n"
			   "include_idle=off ; ini comment\n"
			   "[store]\n"
			   "memory_limit = \"64M\"\n"
			   "[http]\n"
			   "listen = 127.0.0.1:9999\n";
	struct ember_config c;
	char err[256];

	ember_config_init(&c);
	assert_int_equal(ember_config_parse(&c, text, strlen(text), "t.conf", err, sizeof(err)), 0);
	assert_int_equal(c.frequency_hz, 49);
	assert_false(c.include_idle);
	assert_int_equal(c.memory_limit_bytes, 64 << 20);
	assert_string_equal(c.listen, "127.0.0.1:9999");
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text, *msg;
		int ret;
	} cases[] = {
		{ "frequency = 5\n", "t.conf:1: key outside a [section]", -EINVAL },
		{ "[sampling]\nfrequency 5\n", "t.conf:2: expected 'key = value'", -EINVAL },
		{ "[sampling]\n\n= 5\n", "t.conf:3: empty key", -EINVAL },
		{ "[sampling\n", "t.conf:1: bad section header", -EINVAL },
		{ "[]\n", "t.conf:1: bad section header", -EINVAL },
		{ "[sampling]\nbogus = 1\n", "t.conf:2: unknown key 'sampling.bogus'", -ENOENT },
		{ "[sampling]\nfrequency = 0\n", "t.conf:2: sampling.frequency: 0 is out of range",
		  -EINVAL },
	};
	struct ember_config c;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ember_config_init(&c);
		assert_int_equal(ember_config_parse(&c, cases[i].text, strlen(cases[i].text),
						    "t.conf", err, sizeof(err)),
				 cases[i].ret);
		if (strncmp(err, cases[i].msg, strlen(cases[i].msg)))
			fail_msg("case %zu: '%s' does not start with '%s'", i, err, cases[i].msg);
	}
	/* NUL bytes and very long lines are errors, not crashes */
	ember_config_init(&c);
	assert_int_equal(ember_config_parse(&c, "[a]\0x\n", 6, "t", err, sizeof(err)), -EINVAL);
	{
		char *big = malloc(5000);

		memset(big, 'x', 4999);
		big[4999] = '\n';
		assert_int_equal(ember_config_parse(&c, big, 5000, "t", err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "too long"));
		free(big);
	}
}

static void test_args(void **state)
{
	char path[] = "/tmp/ember-test-config-XXXXXX";
	const char *text = "[sampling]\nfrequency = 49\n[store]\nretention = 60\n";
	struct ember_config c;
	char err[512];
	FILE *out = fopen("/dev/null", "we");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	{
		/* the flag beats the file wherever it appears; the file beats the default */
		char *argv[] = { "emberd", "--frequency", "199", "--config", path, "-v",
				 "-o", "sampling.tick_ms=100", "--dump-after", "5", NULL };

		ember_config_init(&c);
		assert_int_equal(ember_config_from_args(&c, 10, argv, out, err, sizeof(err)), 0);
		assert_int_equal(c.frequency_hz, 199);
		assert_int_equal(c.retention_s, 60);
		assert_int_equal(c.tick_ms, 100);
		assert_int_equal(c.dump_after_s, 5);
		assert_int_equal(c.log_level, LOG_LVL_DEBUG);
		assert_string_equal(c.config_path, path);
	}
	{
		char *argv[] = { "emberd", "--memory-limit", "2K", NULL };

		ember_config_init(&c);
		assert_int_equal(ember_config_from_args(&c, 3, argv, out, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "--memory-limit"));
	}
	{
		char *argv[] = { "emberd", "--config", "/nonexistent/emberd.conf", NULL };

		ember_config_init(&c);
		assert_int_equal(ember_config_from_args(&c, 3, argv, out, err, sizeof(err)), -ENOENT);
		assert_non_null(strstr(err, "/nonexistent/emberd.conf"));
	}
	{
		char *argv[] = { "emberd", "--bogus", NULL };

		ember_config_init(&c);
		assert_int_equal(ember_config_from_args(&c, 2, argv, out, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "--bogus"));
	}
	{
		char *argv[] = { "emberd", "extra", NULL };

		ember_config_init(&c);
		assert_int_equal(ember_config_from_args(&c, 2, argv, out, err, sizeof(err)), -EINVAL);
	}
	{
		char *argv[] = { "emberd", "--help", NULL };

		assert_int_equal(ember_config_from_args(&c, 2, argv, out, err, sizeof(err)), 1);
	}
	unlink(path);
	fclose(out);
}

static void test_print_roundtrip(void **state)
{
	struct ember_config a, b;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ember_config_init(&a);
	assert_int_equal(ember_config_set(&a, "sampling.frequency", "777", err, sizeof(err)), 0);
	assert_int_equal(ember_config_set(&a, "symbols.perf_maps", "no", err, sizeof(err)), 0);
	ember_config_print(&a, f);
	fclose(f);
	ember_config_init(&b);
	assert_int_equal(ember_config_parse(&b, buf, len, "printed", err, sizeof(err)), 0);
	assert_int_equal(b.frequency_hz, 777);
	assert_false(b.perf_maps);
	assert_string_equal(a.listen, b.listen);
	assert_int_equal(a.memory_limit_bytes, b.memory_limit_bytes);
	assert_int_equal(a.ringbuf_bytes, b.ringbuf_bytes);
	assert_int_equal(a.include_idle, b.include_idle);
	assert_int_equal(a.log_level, b.log_level);
	assert_int_equal(a.tick_ms, b.tick_ms);
	free(buf);
}

/* [export]: durations, URLs, the tenant word; the printed form reads back the same. */
static void test_export_keys(void **state)
{
	struct ember_config c, d;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	ember_config_init(&c);
	assert_int_equal(c.export_otlp_interval_ms, 10000);
	assert_string_equal(c.export_otlp_endpoint, "");
	assert_int_equal(ember_config_set(&c, "export.otlp_interval", "2s", err, sizeof(err)), 0);
	assert_int_equal(c.export_otlp_interval_ms, 2000);
	assert_int_equal(ember_config_set(&c, "export.otlp_interval", "1500ms", err, sizeof(err)), 0);
	assert_int_equal(c.export_otlp_interval_ms, 1500);
	assert_int_equal(ember_config_set(&c, "export.pyroscope_interval", "2m", err, sizeof(err)), 0);
	assert_int_equal(c.export_pyroscope_interval_ms, 120000);
	assert_int_equal(ember_config_set(&c, "export.timeout", "30", err, sizeof(err)), 0);
	assert_int_equal(c.export_timeout_ms, 30000);
	assert_int_equal(ember_config_set(&c, "export.otlp_interval", "500ms", err, sizeof(err)),
			 -EINVAL); /* below 1 s */
	assert_int_equal(ember_config_set(&c, "export.otlp_interval", "2d", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.otlp_interval", "s", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.otlp_endpoint", "http://127.0.0.1:4318", err,
					  sizeof(err)), 0);
	assert_int_equal(ember_config_set(&c, "export.otlp_endpoint", "ftp://x", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.otlp_endpoint", "http://a b", err,
					  sizeof(err)), -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.pyroscope_tenant", "team a", err,
					  sizeof(err)), -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.queue_memory", "1K", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ember_config_set(&c, "export.service_rules", "unit,container,exe", err,
					  sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	ember_config_print(&c, f);
	fclose(f);
	ember_config_init(&d);
	assert_int_equal(ember_config_parse(&d, buf, len, "printed", err, sizeof(err)), 0);
	assert_int_equal(d.export_otlp_interval_ms, 1500);
	assert_int_equal(d.export_pyroscope_interval_ms, 120000);
	assert_string_equal(d.export_otlp_endpoint, "http://127.0.0.1:4318");
	assert_string_equal(d.export_service_rules, "unit,container,exe");
	free(buf);
}

static void test_shipped_config(void **state)
{
	const char *src = getenv("SRCDIR");
	struct ember_config c;
	char path[4096], err[512];

	snprintf(path, sizeof(path), "%s/config/emberd.conf", src ? src : ".");
	if (access(path, R_OK))
		skip();
	ember_config_init(&c);
	if (ember_config_load(&c, path, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(strncmp(c.listen, "127.0.0.1:", 10), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),	cmocka_unit_test(test_set),
		cmocka_unit_test(test_parse),		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_args),		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_shipped_config), cmocka_unit_test(test_export_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
