// SPDX-License-Identifier: MIT
#include "ember/core/base/sbuf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/utf8.h"

void sbuf_init(struct sbuf *sb)
{
	*sb = (struct sbuf)SBUF_INIT;
}

void sbuf_fini(struct sbuf *sb)
{
	free(sb->buf);
	sbuf_init(sb);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	sb->err = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sbuf_set_watch(struct sbuf *sb, const struct sbuf_watch *w)
{
	sb->watch = w;
	sb->watch_at = sb->len + SBUF_WATCH_BYTES;
}

int sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t need, cap;
	char *nb;
	int r;

	if (sb->err)
		return sb->err;
	if (extra > SIZE_MAX - sb->len - 1)
		goto nomem;
	need = sb->len + extra + 1;
	if (need <= sb->cap) {
		/* one compare on the fast path; the periodic call of a watch */
		if (sb->watch && need >= sb->watch_at) {
			sb->watch_at = need + SBUF_WATCH_BYTES;
			r = sb->watch->fn(sb, need, sb->cap, sb->watch->ctx);
			if (r < 0)
				return sb->err = r;
		}
		return 0;
	}
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (sb->watch) {
		sb->watch_at = need + SBUF_WATCH_BYTES;
		r = sb->watch->fn(sb, need, cap, sb->watch->ctx);
		if (r < 0)
			return sb->err = r;
	}
	nb = realloc(sb->buf, cap);
	if (!nb)
		goto nomem;
	sb->buf = nb;
	sb->cap = cap;
	return 0;
nomem:
	sb->err = -ENOMEM;
	return sb->err;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	if (sbuf_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sbuf_addc(struct sbuf *sb, char c)
{
	if (sb->len + 1 >= sb->cap && sbuf_grow(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (sbuf_grow(sb, 64))
		return;
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->cap - sb->len) {
		if (sbuf_grow(sb, (size_t)n))
			return;
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sbuf_addu(struct sbuf *sb, unsigned long long v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sbuf_add(sb, tmp + i, sizeof(tmp) - (size_t)i);
}

void sbuf_add_count(struct sbuf *sb, double v)
{
	char tmp[400];
	int dec, n;

	if (v >= 0 && v < 18446744073709551616.0 && v == floor(v)) {
		sbuf_addu(sb, (unsigned long long)v);
		return;
	}
	if (!isfinite(v)) {
		sbuf_adds(sb, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
		return;
	}
	/*
	 * The fewest fractional digits that read back as the same double, never an exponent:
	 * folded readers (ours, flamegraph.pl) take only digits with an optional fraction.
	 */
	for (dec = 1; dec < 340; dec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*f", dec, v);
		if (n < 0 || (size_t)n >= sizeof(tmp))
			break;
		if (strtod(tmp, NULL) == v)
			break;
	}
	n = (int)strlen(tmp);
	while (n > 1 && tmp[n - 1] == '0')
		tmp[--n] = '\0';
	if (n > 1 && tmp[n - 1] == '.')
		tmp[--n] = '\0';
	sbuf_add(sb, tmp, (size_t)n);
}

void sbuf_add_xml(struct sbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		unsigned char c = p[i];

		switch (c) {
		case '&': sbuf_add(sb, "&amp;", 5); i++; continue;
		case '<': sbuf_add(sb, "&lt;", 4); i++; continue;
		case '>': sbuf_add(sb, "&gt;", 4); i++; continue;
		case '"': sbuf_add(sb, "&quot;", 6); i++; continue;
		case '\'': sbuf_add(sb, "&#39;", 5); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			/* XML 1.0 forbids most control characters even as references */
			sbuf_addc(sb, (c == '\t') ? ' ' : '?');
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i);
		if (!n) { /* the one rule for invalid UTF-8 (utf8.h) */
			char esc[4];

			utf8_escape_byte(esc, c);
			sbuf_add(sb, esc, sizeof(esc));
			i++;
			continue;
		}
		sbuf_add(sb, p + i, n);
		i += n;
	}
}

size_t sbuf_add_frame(struct sbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, changed = 0, n;
	char esc[4];

	while (i < len) {
		unsigned char c = p[i];

		if (c != ';' && c >= 0x20 && c != 0x7f) {
			n = c < 0x80 ? 1 : utf8_seq(p + i, len - i);
			if (n) {
				i += n;
				continue;
			}
		}
		sbuf_add(sb, s + start, i - start);
		if (c == ';') {
			sbuf_addc(sb, ':');
		} else { /* control bytes and bytes outside valid UTF-8: one escape (utf8.h) */
			utf8_escape_byte(esc, c);
			sbuf_add(sb, esc, sizeof(esc));
		}
		i++;
		start = i;
		changed++;
	}
	sbuf_add(sb, s + start, len - start);
	return changed;
}

void sbuf_add_json(struct sbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			sbuf_addc(sb, '\\');
			sbuf_addc(sb, (char)c);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			sbuf_addf(sb, "\\u%04x", c);
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i);
		if (!n) { /* the one rule for invalid UTF-8 (utf8.h), its '\\' escaped */
			char esc[4];

			utf8_escape_byte(esc, c);
			sbuf_addc(sb, '\\');
			sbuf_add(sb, esc, sizeof(esc));
			i++;
			continue;
		}
		sbuf_add(sb, p + i, n);
		i += n;
	}
}

char *sbuf_detach(struct sbuf *sb, size_t *ret_len)
{
	char *b;

	if (sb->err) {
		sbuf_fini(sb);
		errno = ENOMEM;
		return NULL;
	}
	if (!sb->buf && sbuf_grow(sb, 0)) {
		errno = ENOMEM;
		return NULL;
	}
	b = sb->buf;
	if (ret_len)
		*ret_len = sb->len;
	sbuf_init(sb);
	return b;
}

int sbuf_write_fd(const struct sbuf *sb, int fd)
{
	size_t off = 0;
	ssize_t n;

	if (sb->err)
		return sb->err;
	while (off < sb->len) {
		n = write(fd, sb->buf + off, sb->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}
