/* SPDX-License-Identifier: MIT */
/*
 * pyroscope: the series name of a Pyroscope ingest request ("app.cpu{label=value,...}", the
 * `name` query parameter), built so that it parses back, by Pyroscope's own key parser, to the
 * labels given and no other.
 *
 * Pyroscope's parser (segment.ParseKey) takes the app name up to the first '{' and allows in it
 * only [a-zA-Z0-9_.-]; label names [a-zA-Z0-9_]; a value runs to the next ',' or '}' and is
 * trimmed of spaces; it knows no quoting (a '"' would become part of the value) and no escape.
 * So what a process names (its executable, its unit, its container) is written within those
 * sets: every other byte of an app name or a value becomes '_', an empty one "unknown", each
 * cut to PYRO_VALUE_MAX bytes. A label name must match [a-zA-Z_][a-zA-Z0-9_]* (the caller's,
 * checked); a label with an empty value is left out (Pyroscope drops it too).
 */
#ifndef EMBER_PYROSCOPE_H
#define EMBER_PYROSCOPE_H

#include <stdbool.h>
#include <stddef.h>

#include "ember/core/base/sbuf.h"

#define PYRO_VALUE_MAX 128

struct pyro_label {
	const char *name;
	const char *value; /* NULL or "": left out */
};

/* true if @name matches [a-zA-Z_][a-zA-Z0-9_]* */
bool pyroscope_label_name_ok(const char *name);
/* Appends @app (made an app name), @suffix (".cpu": written as is, must be of the app name's
 * set) and "{labels}". 0, or -EINVAL for a bad label name or suffix (nothing appended). */
int pyroscope_series_name(struct sbuf *sb, const char *app, const char *suffix,
			  const struct pyro_label *labels, size_t n);
/* Appends @s made a value (or an app name: the same set less ':', '/', '@' and '+') */
void pyroscope_add_value(struct sbuf *sb, const char *s, bool app_name);

#endif
