/* SPDX-License-Identifier: MIT */
/*
 * log: one line per message on stderr, "PROG: level: message" (journald adds the time).
 * Core code never logs except log_debug(); the caller that decides what happens next logs once.
 */
#ifndef EMBER_LOG_H
#define EMBER_LOG_H

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_set_prog(const char *prog);		/* borrowed; default "ember" */
void log_set_level(enum log_level lvl);		/* default LOG_LVL_INFO */
enum log_level log_get_level(void);
/* Parses "error", "warn", "info", "debug". 0 or -EINVAL. */
int log_level_parse(const char *s, enum log_level *ret);

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs at error level with ": strerror(-err)" appended; returns @err (negative errno). */
int log_errno_at(enum log_level lvl, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_errno(err, ...) log_errno_at(LOG_LVL_ERROR, (err), __VA_ARGS__)

#endif
