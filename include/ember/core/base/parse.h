/* SPDX-License-Identifier: MIT */
/* Shared by every parser of outside input: where and why a parse failed. */
#ifndef EMBER_PARSE_H
#define EMBER_PARSE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct parse_error {
	unsigned long line;	/* 1-based line number, 0 if unknown */
	unsigned int col;	/* 1-based column, 0 if unknown */
	const char *reason;	/* static string, lower case, no trailing period */
};

/* The value of a hex digit (either case), or -1. */
static inline int parse_hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * An optional 0x/0X prefix and 1..16 hex digits at @p (before @end) into *@ret. Returns the end
 * of the digits, or NULL.
 */
static inline const char *parse_hex_u64(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v = 0;
	int n = 0, d;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && parse_hexval(p[2]) >= 0)
		p += 2;
	while (p < end && (d = parse_hexval(*p)) >= 0) {
		if (++n > 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
		p++;
	}
	if (!n)
		return NULL;
	*ret = v;
	return p;
}

/*
 * A time printed as "SECONDS.FRACTION" (perf script's "158665.570607", 1 to 9 fraction digits;
 * more are cut) in the @len bytes at @s, into nanoseconds exactly: a double of the seconds
 * loses the last nanoseconds past ~10^7 s. 0, or -1 if malformed or past UINT64_MAX ns.
 */
static inline int parse_time_ns(const char *s, size_t len, uint64_t *ret)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0;
	int digits = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		sec = sec * 10 + (uint64_t)(s[i] - '0');
		if (sec > UINT64_MAX / 1000000000u)
			return -1;
	}
	if (!i || i == len || s[i] != '.')
		return -1;
	for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if (digits < 9) {
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			digits++;
		}
	if (!digits || i != len)
		return -1;
	for (; digits < 9; digits++)
		frac *= 10;
	if (sec > (UINT64_MAX - frac) / 1000000000u)
		return -1;
	*ret = sec * 1000000000u + frac;
	return 0;
}

/*
 * A time in seconds, a decimal with up to 9 fractional digits ("12", "12.020000001", ".5"),
 * exactly into nanoseconds. 0, or -EINVAL (not a number, a sign, too many digits) / -ERANGE
 * (past 2^64 ns). The ember-samples reader's, the heat map CLI's.
 */
static inline int parse_seconds_ns(const char *s, size_t len, uint64_t *ret_ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, nd = 0, nf = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (sec > (UINT64_MAX / 1000000000u) / 10 + 1)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
		i++, nd++;
	}
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (++nf > 9)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			i++;
		}
	}
	if (i != len || (!nd && !nf))
		return -EINVAL;
	while (nf++ < 9)
		frac *= 10;
	if (sec > (UINT64_MAX - frac) / 1000000000u)
		return -ERANGE;
	*ret_ns = sec * 1000000000u + frac;
	return 0;
}

#endif
