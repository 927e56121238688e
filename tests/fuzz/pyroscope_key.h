/* SPDX-License-Identifier: MIT */
/*
 * Pyroscope's series-key parser (segment.ParseKey), written again in C from its description for
 * the tests of core/formats/pyroscope.c: the app name up to the first '{' (trimmed; it must be
 * non-empty, of [a-zA-Z0-9_.-]), then "key=value" pairs: a key runs to '=' ('}' ends the
 * labels), a value to ',' or '}'; both trimmed of spaces; a key must be of [a-zA-Z0-9_] unless
 * reserved ("__name__"); a later key replaces an earlier one. Used by fuzz_pyroscope and
 * test_pyroscope.
 */
#ifndef EMBER_TEST_PYROSCOPE_KEY_H
#define EMBER_TEST_PYROSCOPE_KEY_H

#include <stdbool.h>
#include <string.h>

#define PK_MAX_LABELS 16
#define PK_MAX_LEN    1024

struct pk_key {
	char app[PK_MAX_LEN];
	char name[PK_MAX_LABELS][PK_MAX_LEN], value[PK_MAX_LABELS][PK_MAX_LEN];
	int n;
};

static inline void pk_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
		i++;
	memmove(s, s + i, n - i + 1);
}

static inline bool pk_app_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static inline bool pk_key_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

static inline void pk_put(struct pk_key *k, const char *name, const char *value)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->name[i], name)) {
			strcpy(k->value[i], value);
			return;
		}
	if (k->n < PK_MAX_LABELS) {
		strcpy(k->name[k->n], name);
		strcpy(k->value[k->n++], value);
	}
}

/* 0, or -1 where Pyroscope refuses the key (or it is longer than PK_MAX_LEN) */
static inline int pk_parse(const char *s, struct pk_key *k)
{
	enum { APP, KEY, VALUE, DONE } st = APP;
	char key[PK_MAX_LEN] = "", val[PK_MAX_LEN] = "";
	size_t kl = 0, vl = 0;

	memset(k, 0, sizeof(*k));
	if (strlen(s) >= PK_MAX_LEN)
		return -1;
	for (;; s++) {
		char c = *s ? *s : '{'; /* the parser runs over name + "{" */

		switch (st) {
		case APP:
			if (c == '{') {
				val[vl] = '\0';
				pk_trim(val);
				if (!pk_app_ok(val))
					return -1;
				strcpy(k->app, val);
				st = KEY;
				vl = 0;
			} else {
				val[vl++] = c;
			}
			break;
		case KEY:
			if (c == '}') {
				st = DONE;
			} else if (c == '=') {
				st = VALUE;
				vl = 0;
			} else {
				key[kl++] = c;
			}
			break;
		case VALUE:
			if (c == ',' || c == '}') {
				key[kl] = val[vl] = '\0';
				pk_trim(key);
				pk_trim(val);
				if (strcmp(key, "__name__") && !pk_key_ok(key))
					return -1;
				pk_put(k, key, val);
				kl = 0;
				st = KEY;
			} else {
				val[vl++] = c;
			}
			break;
		case DONE:
			break;
		}
		if (!*s)
			break;
	}
	return 0;
}

#endif
