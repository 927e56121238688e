// SPDX-License-Identifier: MIT
/* emberd under systemd: sd_notify, the SIGHUP reload and [filter] (include/ember/daemon/service/service.h). */
#include "ember/daemon/service/service.h"

#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ember/daemon/service/config.h"
#include "ember/daemon/http/http.h"
#include "ember/core/base/log.h"
#include "ember/daemon/service/security.h"
#include "ember/core/base/clock.h"
#include "../http/http_internal.h" /* FIXME layering */

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
	service_watchdog(); /* the first ping now, not a tick later */
}

void service_watchdog(void)
{
	static int enabled = -1;
	static uint64_t usec, last;
	uint64_t now = mono_ns();

	if (enabled < 0) {
		usec = watchdog_usec();
		enabled = usec > 0;
	}
	if (!enabled)
		return;
	if (last && now - last < usec * 1000 / 4)
		return;
	last = now;
	(void)notify("WATCHDOG=1");
}

void service_notify_stopping(void)
{
	(void)notify("STOPPING=1");
}

/* --- SIGHUP ----------------------------------------------------------------------------------- */

static int saved_argc;
static char **saved_argv;

void service_set_args(int argc, char **argv)
{
	saved_argc = argc;
	saved_argv = argv;
}

/* The keys a reload applies; everything else needs a restart. */
static const char *const live_keys[] = {
	"log.level",	  "filter.exclude_comms", "filter.exclude_cgroups", "http.max_range",
	"http.max_response", "http.max_body",	  "http.auth_token_file",
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
			snprintf(section, sizeof(section), "%.*s", (int)(la > 2 ? la - 2 : 0), a + 1);
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
	bool auth_changed;
};

static void on_changed(const char *key, void *ctx)
{
	struct reload_ctx *rc = ctx;

	if (is_live(key)) {
		rc->live++;
		if (!strcmp(key, "http.auth_token_file"))
			rc->auth_changed = true;
		log_info("reload: '%s' changed: applied", key);
	} else {
		rc->restart++;
		log_warn("reload: '%s' changed: needs a restart, keeping the running value", key);
	}
}

int service_reload(struct ember_config *cur, struct http_server *srv)
{
	struct ember_config *n = malloc(sizeof(*n));
	struct reload_ctx rc = { 0 };
	char err[1024], *pa = NULL, *pb = NULL;
	FILE *devnull = NULL;
	int r;

	if (!n)
		return log_errno(-ENOMEM, "reload failed");
	(void)notify("RELOADING=1");
	ember_config_init(n);
	devnull = fopen("/dev/null", "we");
	r = ember_config_from_args(n, saved_argc, saved_argv, devnull ? devnull : stderr, err,
				   sizeof(err));
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
	r = filter_set(n);
	if (r) {
		log_error("reload: bad [filter]; keeping the running configuration");
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
	(void)emberd_security_reload(cur);
	cur->log_level = n->log_level;
	log_set_level((enum log_level)cur->log_level);
	memcpy(cur->exclude_comms, n->exclude_comms, sizeof(cur->exclude_comms));
	memcpy(cur->exclude_cgroups, n->exclude_cgroups, sizeof(cur->exclude_cgroups));
	cur->http_max_range_s = n->http_max_range_s;
	cur->http_max_response_bytes = n->http_max_response_bytes;
	cur->http_max_body_bytes = n->http_max_body_bytes;
	if (srv) {
		/* read by MHD's threads without a lock: single aligned stores */
		__atomic_store_n(&srv->cfg.max_range_s, cur->http_max_range_s, __ATOMIC_RELAXED);
		__atomic_store_n(&srv->cfg.max_response_bytes, cur->http_max_response_bytes,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&srv->cfg.max_body_bytes, cur->http_max_body_bytes,
				 __ATOMIC_RELAXED);
		/* cached answers were rendered under the old settings (limits, [filter]) */
		if (rc.live)
			http_cache_flush(srv);
	}
	log_info("reload: %u change(s) applied, %u need a restart; %llu samples excluded by "
		 "[filter] so far", rc.live, rc.restart,
		 (unsigned long long)filter_excluded_total());
	r = (int)rc.live;
out:
	(void)notify("READY=1");
	if (r < 0)
		(void)filter_set(cur); /* filter_set(n) may have run */
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

	if (!r) {
		struct ember_config tmp = *c;

		r = filter_set(&tmp);
		filter_fini();
	}
	ember_config_print(c, stdout);
	fflush(stdout);
	if (r) {
		log_error("configuration is not usable");
		return 2;
	}
	log_info("configuration OK");
	return 0;
}

/* --- [filter] --------------------------------------------------------------------------------- */

#define CG_SLOTS 1024
#define CG_TTL_NS (10 * 1000000000ULL)

static struct {
	char comms[EMBER_LIST_MAX];	/* ','-separated globs */
	char cgroups[EMBER_LIST_MAX];	/* ','-separated prefixes */
	uint64_t excluded;
	struct cg_slot {
		uint32_t pid;
		bool excluded;
		uint64_t at_ns;		/* 0: empty */
	} cg[CG_SLOTS];
} flt;

int filter_set(const struct ember_config *c)
{
	memcpy(flt.comms, c->exclude_comms, sizeof(flt.comms));
	memcpy(flt.cgroups, c->exclude_cgroups, sizeof(flt.cgroups));
	memset(flt.cg, 0, sizeof(flt.cg)); /* cached answers were for the old prefixes */
	return 0;
}

void filter_fini(void)
{
	flt.comms[0] = flt.cgroups[0] = '\0';
}

uint64_t filter_excluded_total(void)
{
	return __atomic_load_n(&flt.excluded, __ATOMIC_RELAXED); /* /api/v1/stats reads it too */
}

/* Does the ','-separated list @list hold an item for which @match(item, @s) is true? */
static bool list_any(const char *list, const char *s, bool (*match)(const char *, const char *))
{
	char item[256];
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n && n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			if (match(item, s))
				return true;
		}
		p += n + (p[n] == ',');
	}
	return false;
}

static bool glob_match(const char *glob, const char *s)
{
	return fnmatch(glob, s, 0) == 0;
}

/* @prefix matches the path itself or a path below it ("/a" matches "/a" and "/a/b", not "/ab"). */
static bool prefix_match(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return !strncmp(prefix, path, n) && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* The cgroup v2 path of @pid ("0::/path"), "" when unknown. */
static void read_cgroup(uint32_t pid, char *buf, size_t size)
{
	char path[64], line[1024];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%s", line + 3);
			break;
		}
	}
	fclose(f);
}

bool filter_excluded(uint32_t pid, const char *comm, uint64_t nr_samples)
{
	bool ex = false;

	if (flt.comms[0] && comm && list_any(flt.comms, comm, glob_match))
		ex = true;
	if (!ex && flt.cgroups[0] && pid) {
		struct cg_slot *sl = &flt.cg[pid % CG_SLOTS];
		uint64_t now = mono_ns();

		if (sl->at_ns && sl->pid == pid && now - sl->at_ns < CG_TTL_NS) {
			ex = sl->excluded;
		} else {
			char cg[1024];

			read_cgroup(pid, cg, sizeof(cg));
			ex = cg[0] && list_any(flt.cgroups, cg, prefix_match);
			*sl = (struct cg_slot){ .pid = pid, .excluded = ex, .at_ns = now };
		}
	}
	if (ex)
		__atomic_fetch_add(&flt.excluded, nr_samples, __ATOMIC_RELAXED);
	return ex;
}
