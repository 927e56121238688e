/* SPDX-License-Identifier: MIT */
/*
 * service: emberd as a systemd service (service.c) — readiness and watchdog (sd_notify), the
 * SIGHUP reload, and the sample filters of [filter]. All of it runs on the main thread.
 */
#ifndef EMBER_SERVICE_H
#define EMBER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ember_config;
struct http_server;

/* READY=1 with a STATUS line, once sampling and HTTP are up. No-op outside systemd. */
void service_notify_ready(const char *status);
/* WATCHDOG=1 when WatchdogSec= is set, at most every quarter of it: call from the main loop. */
void service_watchdog(void);
/* STOPPING=1. */
void service_notify_stopping(void);

/*
 * The command line to re-read on SIGHUP (argv is borrowed: main's, valid until exit). The
 * config file named by --config is re-read and the other flags applied on top again, so the
 * precedence default < file < flag holds after a reload too.
 */
void service_set_args(int argc, char **argv);

/*
 * SIGHUP: rebuilds the configuration; applies what can change live (log.level, [filter],
 * http.max_range, http.max_response, http.max_body, http.auth_token_file and the token itself)
 * into @cur and the running @srv (may be NULL), and logs each other changed key as "needs a
 * restart". A bad file keeps everything as it was. Logs; returns the number of keys applied or
 * -errno.
 */
int service_reload(struct ember_config *cur, struct http_server *srv);

/*
 * `emberd --check-config`: the file and flags were parsed already; checks the rest (listen
 * policy, token and TLS files, the user), prints the effective configuration on stdout and
 * returns the exit status (0 valid, 2 not).
 */
int service_check_config(const struct ember_config *c);

/* --- [filter] ---------------------------------------------------------------------------- */

/* Sets the filters from @c (copied). 0 or -EINVAL (a bad glob list). */
int filter_set(const struct ember_config *c);
/*
 * True when samples of @pid with @comm are excluded (filter.exclude_comms: fnmatch globs on the
 * comm; filter.exclude_cgroups: prefixes of the process's cgroup v2 path, read from
 * /proc/PID/cgroup and cached per pid for 10 s). Counts @nr_samples as excluded when true.
 */
bool filter_excluded(uint32_t pid, const char *comm, uint64_t nr_samples);
/* Samples excluded since start (any thread). */
uint64_t filter_excluded_total(void);
/* Frees the filter state. */
void filter_fini(void);

#endif
