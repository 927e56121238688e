// SPDX-License-Identifier: MIT
#include "ember/core/base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *log_prog = "ember";
static enum log_level log_level = LOG_LVL_INFO;
static const char *const level_names[] = { "error", "warning", "info", "debug" };

void log_set_prog(const char *prog)
{
	log_prog = prog;
}

void log_set_level(enum log_level lvl)
{
	log_level = lvl;
}

enum log_level log_get_level(void)
{
	return log_level;
}

int log_level_parse(const char *s, enum log_level *ret)
{
	static const struct { const char *name; enum log_level lvl; } names[] = {
		{ "error", LOG_LVL_ERROR }, { "warn", LOG_LVL_WARN }, { "warning", LOG_LVL_WARN },
		{ "info", LOG_LVL_INFO },   { "debug", LOG_LVL_DEBUG },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*ret = names[i].lvl;
			return 0;
		}
	}
	return -EINVAL;
}

static void __attribute__((format(printf, 3, 0)))
vlog(enum log_level lvl, int err, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (lvl > log_level)
		return;
	n = snprintf(line, sizeof(line), "%s: %s: ", log_prog, level_names[lvl]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (err && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ": %s", strerror(-err));
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	/* one write per message so that concurrent lines do not interleave */
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(lvl, 0, fmt, ap);
	va_end(ap);
}

int log_errno_at(enum log_level lvl, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(lvl, err, fmt, ap);
	va_end(ap);
	return err;
}
