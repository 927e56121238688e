/* SPDX-License-Identifier: MIT */
/*
 * service: emberd as a systemd service (service.c): readiness and watchdog (sd_notify) and the
 * SIGHUP reload. All of it runs on the main thread; it knows no other stage of the daemon (main
 * applies what a reload changed).
 */
#ifndef EMBER_SERVICE_H
#define EMBER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ember_config;

/* READY=1 with a STATUS line, once sampling and HTTP are up. No-op outside systemd. */
void service_notify_ready(const char *status);
/* STOPPING=1. */
void service_notify_stopping(void);

/* The watchdog the service manager asks for ($WATCHDOG_USEC, for us if $WATCHDOG_PID says so). */
struct service_watchdog {
	uint64_t interval_ns; /* 0: not asked */
	uint64_t last_ns;     /* CLOCK_MONOTONIC of the last ping */
};
void service_watchdog_init(struct service_watchdog *w);
/* WATCHDOG=1 at most every quarter of the interval: call from the main loop. */
void service_watchdog_ping(struct service_watchdog *w);

/* What a reload changed that the daemon must apply to its running parts. */
enum service_change {
	SERVICE_CHANGE_LOG = 1u << 0,	      /* log.level (applied by the reload itself) */
	SERVICE_CHANGE_FILTER = 1u << 1,      /* [filter]: the ingest's filter */
	SERVICE_CHANGE_HTTP_LIMITS = 1u << 2, /* http.max_range, max_response, max_body */
	SERVICE_CHANGE_TOKEN = 1u << 3,	      /* re-read http.auth_token_file (always) */
	SERVICE_CHANGE_EXPORT = 1u << 4,      /* [export]: the exporters' settings */
};

/*
 * SIGHUP: rebuilds the configuration from @argc/@argv (main's command line: the config file named
 * by --config is re-read and the other flags applied on top again, so the precedence default <
 * file < flag holds after a reload too). Copies what can change live (log.level, [filter],
 * http.max_range, http.max_response, http.max_body, http.auth_token_file) into @cur, sets the
 * log level, and logs each other changed key as "needs a restart". *@ret_changed: a mask of
 * enum service_change for the caller to apply to the ingest and the HTTP server. A bad file
 * keeps everything as it was (*@ret_changed 0). Logs; returns the number of keys applied or
 * -errno.
 */
int service_reload(struct ember_config *cur, int argc, char **argv, unsigned int *ret_changed);

/*
 * `emberd --check-config`: the file and flags were parsed already; checks the rest (listen
 * policy, token and TLS files, the user), prints the effective configuration on stdout and
 * returns the exit status (0 valid, 2 not).
 */
int service_check_config(const struct ember_config *c);

#endif
