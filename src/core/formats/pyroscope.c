// SPDX-License-Identifier: MIT
#include "ember/core/formats/pyroscope.h"

#include <errno.h>

static bool alnum_(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* The bytes a value keeps: none of them ends a value (',' '}'), opens labels ('{'), names one
 * ('='), is trimmed away (spaces) or needs escaping anywhere downstream (the query string is
 * URL-escaped as a whole anyway) */
static bool value_byte(unsigned char c, bool app_name)
{
	if (alnum_(c) || c == '.' || c == '-')
		return true;
	return !app_name && (c == ':' || c == '/' || c == '@' || c == '+');
}

bool pyroscope_label_name_ok(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!p || !*p || (*p >= '0' && *p <= '9'))
		return false;
	for (; *p; p++)
		if (!alnum_(*p))
			return false;
	return true;
}

void pyroscope_add_value(struct sbuf *sb, const char *s, bool app_name)
{
	size_t n = 0;

	if (!s || !*s) {
		sbuf_adds(sb, "unknown");
		return;
	}
	for (; *s && n < PYRO_VALUE_MAX; s++, n++) {
		unsigned char c = (unsigned char)*s;

		sbuf_addc(sb, value_byte(c, app_name) ? (char)c : '_');
	}
}

int pyroscope_series_name(struct sbuf *sb, const char *app, const char *suffix,
			  const struct pyro_label *labels, size_t n)
{
	const char *p;
	bool first = true;
	size_t i;

	for (p = suffix ? suffix : ""; *p; p++)
		if (!value_byte((unsigned char)*p, true))
			return -EINVAL;
	for (i = 0; i < n; i++)
		if (!pyroscope_label_name_ok(labels[i].name))
			return -EINVAL;
	pyroscope_add_value(sb, app, true);
	sbuf_adds(sb, suffix ? suffix : "");
	sbuf_addc(sb, '{');
	for (i = 0; i < n; i++) {
		if (!labels[i].value || !labels[i].value[0])
			continue;
		if (!first)
			sbuf_addc(sb, ',');
		first = false;
		sbuf_adds(sb, labels[i].name);
		sbuf_addc(sb, '=');
		pyroscope_add_value(sb, labels[i].value, false);
	}
	sbuf_addc(sb, '}');
	return 0;
}
