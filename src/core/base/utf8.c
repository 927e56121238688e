// SPDX-License-Identifier: MIT
#include "ember/core/base/utf8.h"

#include "ember/core/base/sbuf.h"

size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) { /* the common case, byte by byte */
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

void utf8_escape_byte(char out[4], unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
}

size_t sbuf_add_utf8(struct sbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, n, changed = 0;
	char esc[4];

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i);
		if (n) {
			i += n;
			continue;
		}
		sbuf_add(sb, s + start, i - start);
		utf8_escape_byte(esc, p[i]);
		sbuf_add(sb, esc, sizeof(esc));
		i++;
		start = i;
		changed++;
	}
	sbuf_add(sb, s + start, len - start);
	return changed;
}
