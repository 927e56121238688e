// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the Pyroscope series name (core/formats/pyroscope.c) of an app name and
 * four label values taken from the input (split at NUL bytes), parsed back by Pyroscope's rules
 * (pyroscope_key.h): the key must be accepted, name the app, and carry exactly the labels given
 * (those with a value), each with its value as written, whatever bytes the values held.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/pyroscope.h"
#include "pyroscope_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void want_value(const char *written, const char *given, bool app)
{
	struct sbuf v = SBUF_INIT;

	pyroscope_add_value(&v, given, app);
	if (!v.buf || strcmp(written, v.buf))
		__builtin_trap();
	sbuf_fini(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "service_name", "container_id", "pod_uid",
					     "hostname" };
	char *buf = malloc(size + 1), *part[5] = { 0 };
	struct pyro_label l[4];
	struct sbuf sb = SBUF_INIT;
	struct pk_key *k = malloc(sizeof(*k));
	size_t i, np = 0;
	int j, have = 0;

	if (!buf || !k)
		goto out;
	memcpy(buf, data, size);
	buf[size] = '\0';
	part[np++] = buf;
	for (i = 0; i < size && np < 5; i++)
		if (!buf[i])
			part[np++] = buf + i + 1;
	for (i = 0; i < 4; i++)
		l[i] = (struct pyro_label){ names[i], part[i + 1] };
	if (pyroscope_series_name(&sb, part[0], ".cpu", l, 4) || !sb.buf)
		__builtin_trap();
	if (pk_parse(sb.buf, k))
		__builtin_trap(); /* Pyroscope would refuse it */
	{
		struct sbuf app = SBUF_INIT;

		pyroscope_add_value(&app, part[0], true);
		sbuf_adds(&app, ".cpu");
		if (strcmp(k->app, app.buf))
			__builtin_trap();
		sbuf_fini(&app);
	}
	for (i = 0; i < 4; i++) {
		if (!l[i].value || !l[i].value[0])
			continue;
		have++;
		for (j = 0; j < k->n && strcmp(k->name[j], names[i]); j++)
			;
		if (j == k->n)
			__builtin_trap();
		want_value(k->value[j], l[i].value, false);
	}
	if (k->n != have) /* a label nobody gave */
		__builtin_trap();
	/* a bad label name is refused, nothing written */
	{
		struct pyro_label bad = { part[1] ? part[1] : "", "x" };
		size_t before = sb.len;

		if (!pyroscope_series_name(&sb, "a", "", &bad, 1) !=
		    pyroscope_label_name_ok(bad.name))
			__builtin_trap();
		if (!pyroscope_label_name_ok(bad.name) && sb.len != before)
			__builtin_trap();
	}
out:
	sbuf_fini(&sb);
	free(k);
	free(buf);
	return 0;
}
