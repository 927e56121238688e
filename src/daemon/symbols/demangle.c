// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/sbuf.h"

/* libstdc++'s demangler (cxxabi.h is C++ only, so declared here). Linked with -lstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

size_t demangle_strip_params(const char *s, size_t len)
{
	size_t end = len;
	int depth = 0;

	/* skip trailing cv/ref qualifiers and spaces after the parameter list */
	for (;;) {
		while (end && s[end - 1] == ' ')
			end--;
		if (end >= 5 && !memcmp(s + end - 5, "const", 5))
			end -= 5;
		else if (end >= 8 && !memcmp(s + end - 8, "volatile", 8))
			end -= 8;
		else if (end && s[end - 1] == '&')
			end--;
		else
			break;
	}
	if (!end || s[end - 1] != ')')
		return len;
	while (end > 0) {
		char c = s[--end];

		if (c == ')')
			depth++;
		else if (c == '(' && --depth == 0)
			break;
	}
	if (depth != 0 || end == 0)
		return len;
	return end;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* "...::h0123456789abcdef": the length without the hash, or @len when there is none. */
static size_t rust_hash_cut(const char *s, size_t len)
{
	size_t i;

	if (len < 19 || memcmp(s + len - 19, "::h", 3))
		return len;
	for (i = len - 16; i < len; i++)
		if (hexval(s[i]) < 0)
			return len;
	return len - 19;
}

static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Decodes the legacy Rust escapes of @s into @sb. */
static void rust_unescape(struct sbuf *sb, const char *s, size_t len)
{
	size_t i = 0, k;

	if (len >= 2 && s[0] == '_' && s[1] == '$')
		i = 1;
	while (i < len) {
		if (s[i] == '$') {
			for (k = 0; k < sizeof(rust_escapes) / sizeof(rust_escapes[0]); k++) {
				size_t el = strlen(rust_escapes[k].esc);

				if (len - i >= el && !memcmp(s + i, rust_escapes[k].esc, el)) {
					sbuf_addc(sb, rust_escapes[k].c);
					i += el;
					goto next;
				}
			}
			/* $uXX$: a code point in hex (ASCII ones are what rustc writes) */
			if (len - i >= 5 && s[i + 1] == 'u') {
				size_t j = i + 2;
				unsigned v = 0;

				while (j < len && j < i + 8 && hexval(s[j]) >= 0)
					v = v * 16 + (unsigned)hexval(s[j++]);
				if (j < len && s[j] == '$' && j > i + 2 && v >= 0x20 && v < 0x7f) {
					sbuf_addc(sb, (char)v);
					i = j + 1;
					goto next;
				}
			}
		} else if (s[i] == '.' && i + 1 < len && s[i + 1] == '.') {
			sbuf_add(sb, "::", 2);
			i += 2;
			goto next;
		}
		sbuf_addc(sb, s[i++]);
next:;
	}
}

bool demangle_append(struct sbuf *sb, const char *raw)
{
	const char *m = raw;
	char *out;
	size_t len, cut;
	int status = -1;

	if (m[0] == '_' && m[1] == '_' && m[2] == 'Z')
		m++; /* Mach-O style extra underscore, seen in some cross-built objects */
	if (m[0] != '_' || m[1] != 'Z') {
		sbuf_adds(sb, raw);
		return false;
	}
	out = __cxa_demangle(m, NULL, NULL, &status);
	if (!out || status != 0) {
		free(out);
		sbuf_adds(sb, raw);
		return false;
	}
	len = strlen(out);
	cut = rust_hash_cut(out, len);
	if (cut != len)
		rust_unescape(sb, out, cut);
	else
		sbuf_add(sb, out, demangle_strip_params(out, len));
	free(out);
	return true;
}
