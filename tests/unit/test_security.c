// SPDX-License-Identifier: MIT
/*
 * emberd as a service: the listen policy, token files, the bearer check, TLS files, the new
 * config keys (values, errors with file:line, precedence), the SIGHUP reload and the
 * capability drop (in a child process). [filter] is the ingest's: test_ingest.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/service/service.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/store/store.h"

#include "helpers.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	if (helpers_tmpdir_new(dir, sizeof(dir), "sec"))
		return -1;
	log_set_level(LOG_LVL_ERROR);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(dir);
}

/* Writes @text to dir/@name with @mode; returns the path (static buffer). */
static const char *put(const char *name, const char *text, mode_t mode)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(helpers_write_file(path, text, mode), 0);
	return path;
}

static void test_loopback(void **state)
{
	static const struct {
		const char *listen;
		bool loopback;
	} cases[] = {
		{ "127.0.0.1:8080", true },	{ "127.0.0.2:80", true },
		{ "127.255.255.254:1", true },	{ "[::1]:8080", true },
		{ "[::ffff:127.0.0.1]:9", true }, { "0.0.0.0:8080", false },
		{ "10.0.0.1:8080", false },	{ "[::]:8080", false },
		{ "128.0.0.1:80", false },	{ "localhost:80", false }, /* names: not trusted */
		{ "[fe80::1]:80", false },	{ "", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (security_listen_is_loopback(cases[i].listen) != cases[i].loopback)
			fail_msg("%s: expected %d", cases[i].listen, cases[i].loopback);
	}
}

static void test_listen_policy(void **state)
{
	struct ember_config c;
	char err[512];

	(void)state;
	ember_config_init(&c);
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), 0);
	strcpy(c.listen, "0.0.0.0:8080");
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "http.insecure"));
	strcpy(c.auth_token_file, "/etc/ember/token"); /* a token alone is not enough */
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "TLS"));
	strcpy(c.tls_cert, "/etc/ember/cert.pem"); /* a cert without its key */
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "tls_key"));
	strcpy(c.tls_key, "/etc/ember/key.pem");
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), 0);
	c.auth_token_file[0] = '\0'; /* TLS alone is not enough */
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "bearer token"));
	c.insecure = true;
	assert_int_equal(security_check_listen(&c, err, sizeof(err)), 0);
}

static void test_token_file(void **state)
{
	char tok[EMBER_TOKEN_MAX + 1], err[512];
	const char *p;
	char dpath[128];

	(void)state;
	p = put("tok", "0123456789abcdef0123\n", 0600);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "0123456789abcdef0123"); /* newline dropped */
	p = put("tok0400", "0123456789abcdef0123", 0400);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), 0);
	p = put("tok0640", "0123456789abcdef0123", 0640);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "group or others"));
	p = put("tok0604", "0123456789abcdef0123", 0604);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), -EPERM);
	p = put("short", "tiny", 0600);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "tiny")); /* never echoes the token */
	p = put("space", "0123456789 abcdef0123", 0600);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	p = put("empty", "", 0600);
	assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	snprintf(dpath, sizeof(dpath), "%s/missing", dir);
	assert_int_equal(security_read_token(dpath, tok, sizeof(tok), err, sizeof(err)), -ENOENT);
	assert_int_equal(security_read_token(dir, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	if (geteuid() == 0) {
		p = put("nobody", "0123456789abcdef0123", 0600);
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(security_read_token(p, tok, sizeof(tok), err, sizeof(err)),
				 -EPERM);
		assert_non_null(strstr(err, "owned by root"));
	}
}

/* The bearer check lives in the HTTP server (http_auth.c): one server, its token. */
static void test_auth_check(void **state)
{
	struct http_config hc;
	struct store *st = store__new(60, STORE_MIN_MAX_BYTES);
	struct http_server *srv;

	(void)state;
	assert_non_null(st);
	http_config_init(&hc);
	srv = http_server__new(&hc, st, NULL);
	assert_non_null(srv);
	assert_int_equal(http_server__set_token(srv, NULL), 0);
	assert_false(http_server__auth_enabled(srv));
	assert_true(http_server__auth_check(srv, "/api/v1/folded", NULL)); /* off: all pass */
	assert_int_equal(http_server__set_token(srv, "s3cret-token-0123456789"), 0);
	assert_true(http_server__auth_enabled(srv));
	assert_true(http_server__auth_check(srv, "/healthz", NULL));
	assert_false(http_server__auth_check(srv, "/healthz/", NULL));
	assert_false(http_server__auth_check(srv, "/api/v1/folded", NULL));
	/* the dashboard's page and static files are public; nothing else under them */
	assert_true(http_server__auth_check(srv, "/", NULL));
	assert_true(http_server__auth_check(srv, "/assets/app.js", NULL));
	assert_false(http_server__auth_check(srv, "/assets", NULL));
	assert_false(http_server__auth_check(srv, "/assetsx/app.js", NULL));
	assert_false(http_server__auth_check(srv, "//", NULL));
	assert_false(http_server__auth_check(srv, "/api/v1/stats", ""));
	assert_true(
	    http_server__auth_check(srv, "/api/v1/stats", "Bearer s3cret-token-0123456789"));
	assert_true(
	    http_server__auth_check(srv, "/api/v1/stats", "bearer  s3cret-token-0123456789 "));
	assert_false(http_server__auth_check(srv, "/api/v1/stats",
					     "Bearer s3cret-token-012345678")); /* prefix */
	assert_false(http_server__auth_check(srv, "/api/v1/stats",
					     "Bearer s3cret-token-01234567890")); /* longer */
	assert_false(
	    http_server__auth_check(srv, "/api/v1/stats", "Bearer S3cret-token-0123456789"));
	assert_false(
	    http_server__auth_check(srv, "/api/v1/stats", "Basic s3cret-token-0123456789"));
	assert_false(http_server__auth_check(srv, "/api/v1/stats", "s3cret-token-0123456789"));
	assert_false(http_server__auth_check(srv, "/api/v1/stats", "Bearer "));
	assert_int_equal(http_server__auth_failures(srv), 12);
	assert_int_equal(http_server__set_token(srv, ""), 0);
	assert_false(http_server__auth_enabled(srv));
	http_server__free(srv);
	store__free(st);
}

static void test_pem(void **state)
{
	char *pem = NULL, err[512];
	const char *p;

	(void)state;
	p = put("cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 0644);
	assert_int_equal(security_read_pem(p, false, &pem, err, sizeof(err)), 0);
	assert_non_null(strstr(pem, "MIIB"));
	free(pem);
	p = put("key.pem", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n", 0644);
	assert_int_equal(security_read_pem(p, true, &pem, err, sizeof(err)), -EPERM);
	p = put("junk.pem", "not a pem\n", 0600);
	assert_int_equal(security_read_pem(p, true, &pem, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a PEM"));
}

/* Every key added for the service: good and bad values. */
static void test_config_keys(void **state)
{
	static const struct {
		const char *key, *value;
		int ret;
	} cases[] = {
		{ "http.timeout", "1", 0 },		{ "http.timeout", "3600", 0 },
		{ "http.timeout", "0", -EINVAL },	{ "http.timeout", "3601", -EINVAL },
		{ "http.max_body", "1K", 0 },		{ "http.max_body", "16M", 0 },
		{ "http.max_body", "1023", -EINVAL },	{ "http.max_body", "17M", -EINVAL },
		{ "http.max_request", "8K", 0 },	{ "http.max_request", "1M", 0 },
		{ "http.max_request", "4K", -EINVAL },	{ "http.max_request", "2M", -EINVAL },
		{ "http.tls_cert", "/etc/ember/c.pem", 0 }, { "http.tls_cert", "", 0 },
		{ "http.tls_cert", "c.pem", -EINVAL },	{ "http.tls_key", "/k", 0 },
		{ "http.tls_key", "rel/k", -EINVAL },	{ "http.auth_token_file", "/t", 0 },
		{ "http.auth_token_file", "t", -EINVAL }, { "http.auth_token_file", "/a\tb", -EINVAL },
		{ "http.insecure", "yes", 0 },		{ "http.insecure", "sure", -EINVAL },
		{ "symbols.debug_dirs", "/usr/lib/debug:/opt/debug", 0 },
		{ "symbols.debug_dirs", "", 0 },	{ "symbols.debug_dirs", "/a:", -EINVAL },
		{ "symbols.debug_dirs", "/a:b", -EINVAL },
		{ "filter.exclude_comms", "sshd,kworker*", 0 },
		{ "filter.exclude_comms", "", 0 },	{ "filter.exclude_comms", "a,,b", -EINVAL },
		{ "filter.exclude_comms", "a, b", -EINVAL }, { "filter.exclude_comms", ",a", -EINVAL },
		{ "filter.exclude_cgroups", "/system.slice/x.service", 0 },
		{ "filter.exclude_cgroups", "a,", -EINVAL },
		{ "security.user", "ember", 0 },	{ "security.user", "", 0 },
		{ "security.user", "_ember-2", 0 },	{ "security.user", "Ember", -EINVAL },
		{ "security.user", "9x", -EINVAL },	{ "security.user", "a b", -EINVAL },
		{ "security.drop_capabilities", "no", 0 },
		{ "security.drop_capabilities", "2", -EINVAL },
		{ "security.nonsense", "1", -ENOENT },
	};
	struct ember_config c;
	char err[256];
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ember_config_init(&c);
		r = ember_config_set(&c, cases[i].key, cases[i].value, err, sizeof(err));
		if (r != cases[i].ret)
			fail_msg("%s = '%s': %d, expected %d (%s)", cases[i].key, cases[i].value, r,
				 cases[i].ret, err);
	}
	ember_config_init(&c);
	assert_string_equal(c.debug_dirs, "/usr/lib/debug");
	assert_true(c.drop_capabilities);
	assert_false(c.insecure);
	assert_int_equal(c.http_timeout_s, 30);
	assert_int_equal(c.http_max_body_bytes, 64 << 10);
	assert_int_equal(c.http_max_request_bytes, 64 << 10);
	{
		static const char text[] = "[filter]\nexclude_comms = a\n\n[security]\nuser = Bad\n";

		r = ember_config_parse(&c, text, sizeof(text) - 1, "t.conf", err, sizeof(err));
	}
	assert_int_equal(r, -EINVAL);
	assert_non_null(strstr(err, "t.conf:5:"));
	assert_non_null(strstr(err, "security.user"));
	assert_string_equal(c.exclude_comms, "a");
}

static void test_check_config_flag(void **state)
{
	char *argv[] = { "emberd", "--check-config", "-o", "http.insecure=yes", NULL };
	struct ember_config c;
	char err[256];

	(void)state;
	ember_config_init(&c);
	assert_int_equal(ember_config_from_args(&c, 4, argv, stdout, err, sizeof(err)), 0);
	assert_true(c.check_config);
	assert_true(c.insecure);
}

static void write_conf(const char *path, const char *text)
{
	assert_int_equal(helpers_write_file(path, text, 0644), 0);
}

/* SIGHUP: live keys applied, others left with "needs a restart", flags still win, bad files
 * change nothing; what changed is told to the caller (main applies it to the ingest and the
 * server). */
static void test_reload(void **state)
{
	char conf[128], tokp[128], err[512];
	char *argv[] = { "emberd", "--config", conf, "-o", "http.max_body=2K", NULL };
	struct security_files sec = {0};
	struct ember_config cur;
	unsigned int changed;

	(void)state;
	snprintf(conf, sizeof(conf), "%s/reload.conf", dir);
	snprintf(tokp, sizeof(tokp), "%s", put("rtok", "abcdefghijklmnop0123", 0600));
	write_conf(conf, "[log]\nlevel = error\n[sampling]\nfrequency = 99\n");
	ember_config_init(&cur);
	assert_int_equal(ember_config_from_args(&cur, 5, argv, stdout, err, sizeof(err)), 0);
	assert_int_equal(cur.http_max_body_bytes, 2048);

	/* live: level, filter, max_range, token file; restart: frequency; flag beats the file */
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "[log]\nlevel = error\n[sampling]\nfrequency = 49\n[filter]\n"
			 "exclude_comms = hidden*\n[http]\nmax_range = 3600\nmax_body = 8K\n"
			 "auth_token_file = %s\n", tokp);
		write_conf(conf, text);
	}
	assert_int_equal(service_reload(&cur, 5, argv, &changed), 3); /* comms, range, token */
	assert_int_equal(changed,
			 SERVICE_CHANGE_FILTER | SERVICE_CHANGE_HTTP_LIMITS | SERVICE_CHANGE_TOKEN);
	assert_int_equal(cur.frequency_hz, 99);		 /* needs a restart */
	assert_int_equal(cur.http_max_range_s, 3600);
	assert_int_equal(cur.http_max_body_bytes, 2048); /* the flag still wins */
	assert_string_equal(cur.exclude_comms, "hidden*");
	assert_string_equal(cur.auth_token_file, tokp);
	assert_int_equal(security_files_reload_token(&cur, &sec), 0);
	assert_string_equal(sec.token, "abcdefghijklmnop0123");

	/* a bad line: nothing changes, the error names file:line */
	write_conf(conf, "[log]\nlevel = debug\n[http]\nmax_range = forever\n");
	assert_true(service_reload(&cur, 5, argv, &changed) < 0);
	assert_int_equal(changed, 0);
	assert_int_equal(cur.log_level, LOG_LVL_ERROR);
	assert_int_equal(cur.http_max_range_s, 3600);
	assert_string_equal(cur.exclude_comms, "hidden*"); /* the filter stayed */

	/* the level changes live */
	write_conf(conf, "[log]\nlevel = warn\n");
	assert_true(service_reload(&cur, 5, argv, &changed) >= 1);
	assert_true(changed & SERVICE_CHANGE_LOG);
	assert_true(changed & SERVICE_CHANGE_FILTER);
	assert_int_equal(cur.log_level, LOG_LVL_WARN);
	assert_int_equal(log_get_level(), LOG_LVL_WARN);
	assert_string_equal(cur.exclude_comms, "");
	/* the token file was removed from the config: authentication off */
	assert_int_equal(security_files_reload_token(&cur, &sec), 0);
	assert_string_equal(sec.token, "");
	log_set_level(LOG_LVL_ERROR);
	security_files_fini(&sec);
}

/* In a child: drop, then /proc/self/status shows exactly the kept set. */
/* In a child: drop privileges as emberd does and check what is left; 0 or an exit code. */
static int child_checks(struct ember_config *c, pid_t victim)
{
	unsigned long long eff = ~0ULL, bnd = ~0ULL;
	char line[256];
	FILE *f;

	if (victim < 0)
		return 9;
	if (emberd_drop_privileges(c))
		return 10;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return 11;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "CapEff: %llx", &eff);
		sscanf(line, "CapBnd: %llx", &bnd);
	}
	fclose(f);
	/* no more than the kept set; CAP_SYS_ADMIN and CAP_DAC_OVERRIDE gone */
	if ((eff & ~privs_keep_mask()) || (bnd & ~privs_keep_mask()))
		return 12;
	if (!(eff & (1ULL << 19)))
		return 13;
	/* and the kept ones work: another process's /proc/PID/maps */
	snprintf(line, sizeof(line), "/proc/%d/maps", (int)victim);
	f = fopen(line, "re");
	if (!f)
		return 14;
	fclose(f);
	return 0;
}

static void test_drop_privileges(void **state)
{
	struct ember_config c;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(privs_keep_mask(),
			 (1ULL << 2) | (1ULL << 19) | (1ULL << 34) | (1ULL << 38) | (1ULL << 39) |
				 (1ULL << 40));
	if (geteuid() != 0)
		skip();
	ember_config_init(&c);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int lifeline[2], rc;
		pid_t victim;

		/* the victim lives until its parent exits (end of file on the pipe): once its
		 * privileges are dropped, the parent cannot kill another user's process */
		if (pipe(lifeline))
			_exit(8);
		victim = fork(); /* another user's process */
		if (victim == 0) {
			char b;

			close(lifeline[1]);
			if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
				_exit(1);
			while (read(lifeline[0], &b, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(lifeline[0]);
		usleep(50000);
		rc = child_checks(&c, victim);
		/* end of file for the victim, then reap it (no zombie left to an init that may
		 * not reap) */
		close(lifeline[1]);
		waitpid(victim, NULL, 0);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loopback),
	    cmocka_unit_test(test_listen_policy),
	    cmocka_unit_test(test_token_file),
	    cmocka_unit_test(test_auth_check),
	    cmocka_unit_test(test_pem),
	    cmocka_unit_test(test_config_keys),
	    cmocka_unit_test(test_check_config_flag),
	    cmocka_unit_test(test_reload),
	    cmocka_unit_test(test_drop_privileges),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
