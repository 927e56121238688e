// SPDX-License-Identifier: MIT
/* emberd under systemd: sd_notify, the SIGHUP reload and [filter]
 * (include/ember/daemon/service/service.h). */
#include "ember/daemon/service/service.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"
#include "ember/daemon/service/security.h"
#include "ember/core/base/clock.h"

/* --- sd_notify -------------------------------------------------------------------------------- */

/*
 * The service manager's notification protocol (sd_notify(3), "NOTIFY_SOCKET"): one datagram of
 * "KEY=VALUE" lines to the AF_UNIX socket named by $NOTIFY_SOCKET, a path or, with a leading
 * '@', an abstract name. systemd documents it as a stable interface to implement without
 * libsystemd, which would bring six more shared libraries into emberd for these few lines.
 * 0 if sent or not running under a service manager, else -errno.
 */
static int notify(const char *msg)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len, mlen = strlen(msg);
	socklen_t salen;
	ssize_t n;
	int fd, err = 0;

	if (!name || !*name)
		return 0;
	len = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || len < 2 || len > sizeof(sa.sun_path))
		return -EAFNOSUPPORT; /* e.g. "vsock:" of newer managers: not ours to reach */
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract: not NUL-terminated, the length says */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, mlen, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != mlen)
		err = -EMSGSIZE;
	close(fd);
	return err;
}

/* The watchdog interval the manager asks for, in microseconds, as sd_watchdog_enabled(3) reads
 * it: $WATCHDOG_USEC, for this process if $WATCHDOG_PID names it; 0 when not asked. */
static uint64_t watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!us || !*us)
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	if (errno || *end || !v)
		return 0;
	if (pid && *pid) {
		unsigned long long p = strtoull(pid, &end, 10);

		if (*end || p != (unsigned long long)getpid())
			return 0;
	}
	return v;
}

void service_notify_ready(const char *status)
{
	char msg[512];
	int r;

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status ? status : "running");
	r = notify(msg);
	if (r < 0)
		log_warn("sd_notify(READY=1) failed: %s, ignoring", strerror(-r));
}

void service_watchdog_init(struct service_watchdog *w)
{
	*w = (struct service_watchdog){ .interval_ns = watchdog_usec() * 1000 };
}

void service_watchdog_ping(struct service_watchdog *w)
{
	uint64_t now = mono_ns();

	if (!w->interval_ns)
		return;
	if (w->last_ns && now - w->last_ns < w->interval_ns / 4)
		return;
	w->last_ns = now;
	(void)notify("WATCHDOG=1");
}

void service_notify_stopping(void)
{
	(void)notify("STOPPING=1");
}

/* --- SIGHUP ----------------------------------------------------------------------------------- */

/* The keys a reload applies; everything else needs a restart. */
static const char *const live_keys[] = {
	"log.level",	     "filter.exclude_comms", "filter.exclude_cgroups", "http.max_range",
	"http.max_response", "http.max_body",	     "http.auth_token_file",
	"export.otlp_endpoint", "export.otlp_interval", "export.pyroscope_url",
	"export.pyroscope_interval", "export.pyroscope_tenant", "export.basic_auth_file",
	"export.bearer_token_file", "export.ca_file", "export.client_cert", "export.client_key",
	"export.queue_memory", "export.max_message", "export.timeout", "export.retry_max",
	"export.service_rules", "export.service_regex",
};

static bool is_live(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(live_keys) / sizeof(live_keys[0]); i++)
		if (!strcmp(live_keys[i], key))
			return true;
	return false;
}

/* ember_config_print() of @c into a malloc'ed string (NULL on ENOMEM). */
static char *print_config(const struct ember_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	ember_config_print(c, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Walks the two printed configurations (same keys, same order) and calls @fn for each key whose
 * value differs, as "section.name".
 */
static void diff_configs(const char *a, const char *b, void (*fn)(const char *key, void *ctx),
			 void *ctx)
{
	char section[64] = "", key[192];

	while (*a && *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

		if (*a == '[') {
			snprintf(section, sizeof(section), "%.*s", (int)(la > 2 ? la - 2 : 0),
				 a + 1);
		} else if (la && (la != lb || memcmp(a, b, la))) {
			size_t kl = strcspn(a, " =");

			snprintf(key, sizeof(key), "%s.%.*s", section, (int)kl, a);
			fn(key, ctx);
		}
		a += la + (a[la] == '\n');
		b += lb + (b[lb] == '\n');
	}
}

struct reload_ctx {
	unsigned int live, restart;
	unsigned int changed; /* enum service_change */
};

/* What a live key's change asks the daemon to apply. */
static unsigned int change_of(const char *key)
{
	if (!strcmp(key, "log.level"))
		return SERVICE_CHANGE_LOG;
	if (!strncmp(key, "filter.", 7))
		return SERVICE_CHANGE_FILTER;
	if (!strcmp(key, "http.auth_token_file"))
		return SERVICE_CHANGE_TOKEN;
	if (!strncmp(key, "export.", 7))
		return SERVICE_CHANGE_EXPORT;
	return SERVICE_CHANGE_HTTP_LIMITS;
}

static void on_changed(const char *key, void *ctx)
{
	struct reload_ctx *rc = ctx;

	if (is_live(key)) {
		rc->live++;
		rc->changed |= change_of(key);
		log_info("reload: '%s' changed: applied", key);
	} else {
		rc->restart++;
		log_warn("reload: '%s' changed: needs a restart, keeping the running value", key);
	}
}

int service_reload(struct ember_config *cur, int argc, char **argv, unsigned int *ret_changed)
{
	struct ember_config *n = malloc(sizeof(*n));
	struct reload_ctx rc = { 0 };
	char err[1024], *pa = NULL, *pb = NULL;
	FILE *devnull = NULL;
	int r;

	*ret_changed = 0;
	if (!n)
		return log_errno(-ENOMEM, "reload failed");
	(void)notify("RELOADING=1");
	ember_config_init(n);
	devnull = fopen("/dev/null", "we");
	r = ember_config_from_args(n, argc, argv, devnull ? devnull : stderr, err, sizeof(err));
	if (r) {
		log_error("reload: %s; keeping the running configuration",
			  r < 0 ? err : "unexpected --help/--print-config");
		r = r < 0 ? r : -EINVAL;
		goto out;
	}
	/* the new token must not break the listen policy of the running socket */
	snprintf(n->listen, sizeof(n->listen), "%s", cur->listen);
	memcpy(n->tls_cert, cur->tls_cert, sizeof(n->tls_cert));
	memcpy(n->tls_key, cur->tls_key, sizeof(n->tls_key));
	n->insecure = cur->insecure;
	if (security_check_listen(n, err, sizeof(err))) {
		log_error("reload: %s; keeping the running configuration", err);
		r = -EPERM;
		goto out;
	}
	pa = print_config(cur);
	pb = print_config(n);
	if (!pa || !pb) {
		r = log_errno(-ENOMEM, "reload failed");
		goto out;
	}
	diff_configs(pa, pb, on_changed, &rc);
	/* the token file is re-read even when its name did not change (rotation) */
	memcpy(cur->auth_token_file, n->auth_token_file, sizeof(cur->auth_token_file));
	rc.changed |= SERVICE_CHANGE_TOKEN;
	cur->log_level = n->log_level;
	log_set_level((enum log_level)cur->log_level);
	memcpy(cur->exclude_comms, n->exclude_comms, sizeof(cur->exclude_comms));
	memcpy(cur->exclude_cgroups, n->exclude_cgroups, sizeof(cur->exclude_cgroups));
	cur->http_max_range_s = n->http_max_range_s;
	cur->http_max_response_bytes = n->http_max_response_bytes;
	cur->http_max_body_bytes = n->http_max_body_bytes;
	/* [export]: every key */
#define COPY(f) memcpy(&cur->f, &n->f, sizeof(cur->f))
	COPY(export_otlp_endpoint);
	COPY(export_otlp_interval_ms);
	COPY(export_pyroscope_url);
	COPY(export_pyroscope_interval_ms);
	COPY(export_pyroscope_tenant);
	COPY(export_basic_auth_file);
	COPY(export_bearer_token_file);
	COPY(export_ca_file);
	COPY(export_client_cert);
	COPY(export_client_key);
	COPY(export_queue_bytes);
	COPY(export_max_message_bytes);
	COPY(export_timeout_ms);
	COPY(export_retry_max_ms);
	COPY(export_service_rules);
	COPY(export_service_regex);
#undef COPY
	log_info("reload: %u change(s) applied, %u need a restart", rc.live, rc.restart);
	*ret_changed = rc.changed;
	r = (int)rc.live;
out:
	(void)notify("READY=1");
	if (devnull)
		fclose(devnull);
	free(pa);
	free(pb);
	free(n);
	return r;
}

int service_check_config(const struct ember_config *c)
{
	int r = emberd_security_check(c);

	ember_config_print(c, stdout);
	fflush(stdout);
	if (r) {
		log_error("configuration is not usable");
		return 2;
	}
	log_info("configuration OK");
	return 0;
}
