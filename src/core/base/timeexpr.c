// SPDX-License-Identifier: MIT
#include "ember/core/base/timeexpr.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_S 1000000000LL

static int fail(struct parse_error *reterr, size_t col, const char *reason, int err)
{
	if (reterr) {
		reterr->line = 0;
		reterr->col = (unsigned int)col + 1;
		reterr->reason = reason;
	}
	return err;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A decimal "DIGITS[.DIGITS]" at s[*pos..len), scaled by @unit_ns into nanoseconds. Up to 18
 * integer digits and 9 fractional digits (ns resolution; more is rejected rather than silently
 * rounded). Computed in 128 bits so that 1.5d is exact; -ERANGE past int64.
 */
static int parse_scaled(const char *s, size_t len, size_t *pos, int64_t unit_ns, int64_t *ret,
			struct parse_error *reterr)
{
	size_t i = *pos, start = i, nint = 0, nfrac = 0;
	__int128 ip = 0, fp = 0, fscale = 1, v;

	while (i < len && is_digit(s[i])) {
		if (++nint > 18)
			return fail(reterr, i, "number too long", -ERANGE);
		ip = ip * 10 + (s[i] - '0');
		i++;
	}
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && is_digit(s[i])) {
			if (++nfrac > 9)
				return fail(reterr, i, "more than 9 fractional digits", -EINVAL);
			fp = fp * 10 + (s[i] - '0');
			fscale *= 10;
			i++;
		}
	}
	if (nint == 0)
		return fail(reterr, start, "expected a number", -EINVAL);
	v = ip * unit_ns + fp * unit_ns / fscale;
	if (v > INT64_MAX)
		return fail(reterr, start, "value out of range", -ERANGE);
	*ret = (int64_t)v;
	*pos = i;
	return 0;
}

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", 1000000 },
	{ "s", NS_PER_S },
	{ "m", 60 * NS_PER_S },
	{ "h", 3600 * NS_PER_S },
	{ "d", 86400 * NS_PER_S },
};

/* Number + unit (required unless @bare_ok) spanning all of s[pos..len). */
static int parse_duration_at(const char *s, size_t len, size_t pos, bool bare_ok, int64_t *ret,
			     struct parse_error *reterr)
{
	size_t i = pos, ulen;
	unsigned int u;
	int64_t v;
	int err;

	while (i < len && (is_digit(s[i]) || s[i] == '.'))
		i++;
	ulen = len - i;
	if (ulen == 0) {
		if (!bare_ok)
			return fail(reterr, i, "relative time needs a unit (ms, s, m, h, d)", -EINVAL);
		u = 3; /* seconds */
	} else {
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
			if (strlen(units[u].name) == ulen && !memcmp(units[u].name, s + i, ulen))
				break;
		if (u == sizeof(units) / sizeof(units[0]))
			return fail(reterr, i, "unknown unit (ns, us, ms, s, m, h, d)", -EINVAL);
	}
	err = parse_scaled(s, i, &pos, units[u].ns, &v, reterr);
	if (err)
		return err;
	if (pos != i)
		return fail(reterr, pos, "unexpected character", -EINVAL);
	*ret = v;
	return 0;
}

int timeexpr_parse_duration(const char *s, size_t len, int64_t *ret_ns, struct parse_error *reterr)
{
	if (len == 0)
		return fail(reterr, 0, "empty value", -EINVAL);
	if (len > TIMEEXPR_MAX_LEN)
		return fail(reterr, TIMEEXPR_MAX_LEN, "value too long", -EINVAL);
	return parse_duration_at(s, len, 0, true, ret_ns, reterr);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (eras of 400 years, March-based years). */
static int64_t days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *ry, unsigned int *rm, unsigned int *rd)
{
	int64_t era, doe, yoe, y, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*rd = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*rm = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*ry = y + (*rm <= 2);
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Exactly @n digits at s[*pos]; advances. */
static int fixed_digits(const char *s, size_t len, size_t *pos, unsigned int n, unsigned int *ret,
			struct parse_error *reterr)
{
	unsigned int v = 0, k;

	for (k = 0; k < n; k++) {
		if (*pos + k >= len || !is_digit(s[*pos + k]))
			return fail(reterr, *pos + k, "expected a digit", -EINVAL);
		v = v * 10 + (unsigned int)(s[*pos + k] - '0');
	}
	*pos += n;
	*ret = v;
	return 0;
}

static int expect(const char *s, size_t len, size_t *pos, const char *any, const char *reason,
		  struct parse_error *reterr)
{
	if (*pos >= len || !strchr(any, s[*pos]) || s[*pos] == '\0')
		return fail(reterr, *pos, reason, -EINVAL);
	(*pos)++;
	return 0;
}

static int parse_rfc3339(const char *s, size_t len, int64_t *ret_ns, struct parse_error *reterr)
{
	static const unsigned char mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned int Y, M, D, h, mi, sec, oh = 0, om = 0, dim;
	size_t pos = 0, fstart;
	int64_t frac_ns = 0, off_s = 0, secs;
	__int128 ns;
	int err;

	if ((err = fixed_digits(s, len, &pos, 4, &Y, reterr)) ||
	    (err = expect(s, len, &pos, "-", "expected '-'", reterr)) ||
	    (err = fixed_digits(s, len, &pos, 2, &M, reterr)) ||
	    (err = expect(s, len, &pos, "-", "expected '-'", reterr)) ||
	    (err = fixed_digits(s, len, &pos, 2, &D, reterr)) ||
	    (err = expect(s, len, &pos, "Tt ", "expected 'T'", reterr)) ||
	    (err = fixed_digits(s, len, &pos, 2, &h, reterr)) ||
	    (err = expect(s, len, &pos, ":", "expected ':'", reterr)) ||
	    (err = fixed_digits(s, len, &pos, 2, &mi, reterr)) ||
	    (err = expect(s, len, &pos, ":", "expected ':'", reterr)) ||
	    (err = fixed_digits(s, len, &pos, 2, &sec, reterr)))
		return err;
	if (M < 1 || M > 12)
		return fail(reterr, 5, "month out of range", -EINVAL);
	dim = mdays[M - 1] + (M == 2 && is_leap(Y));
	if (D < 1 || D > dim)
		return fail(reterr, 8, "day out of range", -EINVAL);
	if (h > 23)
		return fail(reterr, 11, "hour out of range", -EINVAL);
	if (mi > 59)
		return fail(reterr, 14, "minute out of range", -EINVAL);
	if (sec > 60) /* 60: a leap second, which Unix time folds into the next one */
		return fail(reterr, 17, "second out of range", -EINVAL);
	if (pos < len && s[pos] == '.') {
		int64_t scale = NS_PER_S;

		fstart = ++pos;
		while (pos < len && is_digit(s[pos])) {
			if (pos - fstart >= 9)
				return fail(reterr, pos, "more than 9 fractional digits", -EINVAL);
			scale /= 10;
			frac_ns += (s[pos] - '0') * scale;
			pos++;
		}
		if (pos == fstart)
			return fail(reterr, pos, "expected a digit", -EINVAL);
	}
	if (pos < len && (s[pos] == 'Z' || s[pos] == 'z')) {
		pos++;
	} else if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
		int sign = s[pos] == '-' ? -1 : 1;

		pos++;
		if ((err = fixed_digits(s, len, &pos, 2, &oh, reterr)) ||
		    (err = expect(s, len, &pos, ":", "expected ':'", reterr)) ||
		    (err = fixed_digits(s, len, &pos, 2, &om, reterr)))
			return err;
		if (oh > 23 || om > 59)
			return fail(reterr, pos - 5, "offset out of range", -EINVAL);
		off_s = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return fail(reterr, pos, "expected 'Z' or a UTC offset", -EINVAL);
	}
	if (pos != len)
		return fail(reterr, pos, "unexpected character", -EINVAL);
	secs = days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + sec - off_s;
	ns = (__int128)secs * NS_PER_S + frac_ns;
	if (ns > INT64_MAX || ns < INT64_MIN)
		return fail(reterr, 0, "time out of range", -ERANGE);
	*ret_ns = (int64_t)ns;
	return 0;
}

int timeexpr_parse(const char *s, size_t len, int64_t now_ns, int64_t *ret_ns,
		   struct parse_error *reterr)
{
	size_t pos = 0;
	int64_t v;
	__int128 r;
	int err, sign;

	if (len == 0)
		return fail(reterr, 0, "empty time", -EINVAL);
	if (len > TIMEEXPR_MAX_LEN)
		return fail(reterr, TIMEEXPR_MAX_LEN, "time expression too long", -EINVAL);
	if (len >= 3 && !memcmp(s, "now", 3)) {
		if (len == 3) {
			*ret_ns = now_ns;
			return 0;
		}
		pos = 3;
		if (s[pos] != '-' && s[pos] != '+')
			return fail(reterr, pos, "expected '-' or '+' after 'now'", -EINVAL);
	}
	if (s[pos] == '-' || s[pos] == '+') {
		sign = s[pos] == '-' ? -1 : 1;
		err = parse_duration_at(s, len, pos + 1, false, &v, reterr);
		if (err)
			return err;
		r = (__int128)now_ns + sign * (__int128)v;
		if (r > INT64_MAX || r < INT64_MIN)
			return fail(reterr, pos, "time out of range", -ERANGE);
		*ret_ns = (int64_t)r;
		return 0;
	}
	/* RFC 3339 has a '-' at column 5; Unix seconds never do. */
	if (len > 4 && s[4] == '-')
		return parse_rfc3339(s, len, ret_ns, reterr);
	err = parse_scaled(s, len, &pos, NS_PER_S, &v, reterr);
	if (err)
		return err;
	if (pos != len)
		return fail(reterr, pos, "not a time (Unix seconds, RFC 3339, now or -90s)", -EINVAL);
	*ret_ns = v;
	return 0;
}

char *timeexpr_format_rfc3339(int64_t ns, char *buf, size_t size)
{
	int64_t secs = ns / NS_PER_S, rem = ns % NS_PER_S, days, sod, y;
	unsigned int m, d;

	if (rem < 0) {
		rem += NS_PER_S;
		secs--;
	}
	days = secs / 86400;
	sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, size, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)y, m, d,
		 (unsigned int)(sod / 3600), (unsigned int)(sod / 60 % 60), (unsigned int)(sod % 60),
		 (unsigned int)(rem / 1000000));
	return buf;
}
