// SPDX-License-Identifier: MIT
#include "ember/core/model/query.h"

#include "ember/core/base/regex.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/parse.h"
#include "ember/core/base/timeexpr.h"

static int qfail(struct query_error *reterr, const char *param, const char *reason, int status)
{
	if (reterr) {
		size_t n = 0;

		while (param && param[n] && n < sizeof(reterr->param) - 1) {
			reterr->param[n] = param[n];
			n++;
		}
		reterr->param[n] = '\0';
		reterr->reason = reason;
		reterr->status = status;
	}
	return status == 413 ? -E2BIG : -EINVAL;
}

/* Decodes s[0..len) into out (QUERY_MAX_VALUE + 1 bytes). 0 or -EINVAL with @reason. */
static int decode(const char *s, size_t len, char *out, const char **reason)
{
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (i + 2 >= len) {
				*reason = "truncated %-escape";
				return -EINVAL;
			}
			hi = parse_hexval(s[i + 1]);
			lo = parse_hexval(s[i + 2]);
			if (hi < 0 || lo < 0) {
				*reason = "malformed %-escape";
				return -EINVAL;
			}
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0') {
			*reason = "NUL byte";
			return -EINVAL;
		}
		if (o >= QUERY_MAX_VALUE) {
			*reason = "too long";
			return -EINVAL;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int query_urlencoded_parse(const char *s, size_t len, query_pair_fn cb, void *ctx,
			   struct query_error *reterr)
{
	/* static-size scratch: values are bounded, so a request cannot make us allocate */
	char key[QUERY_MAX_VALUE + 1], val[QUERY_MAX_VALUE + 1];
	size_t pos = 0, end, eq, npairs = 0;
	const char *reason = NULL;
	int err = 0;

	while (pos < len) {
		const char *amp = memchr(s + pos, '&', len - pos);

		end = amp ? (size_t)(amp - s) : len;
		if (end > pos) {
			const char *e = memchr(s + pos, '=', end - pos);

			eq = e ? (size_t)(e - s) : end;
			if (++npairs > QUERY_MAX_PAIRS)
				return qfail(reterr, NULL, "too many parameters", 400);
			if (decode(s + pos, eq - pos, key, &reason))
				return qfail(reterr, NULL, reason, 400);
			if (decode(s + eq + (eq < end), end - eq - (eq < end), val, &reason))
				return qfail(reterr, key, reason, 400);
			err = cb(key, val, ctx);
			if (err < 0)
				return err;
		}
		pos = end + 1;
	}
	return err;
}

void query_common_init(struct query_common *q)
{
	*q = (struct query_common){
		.pid = -1,
		.tid = -1,
		.kernel = QUERY_FLAG_UNSET,
		.user = QUERY_FLAG_UNSET,
		.idle = QUERY_FLAG_UNSET,
	};
}

void query_common_fini(struct query_common *q)
{
	if (!q->comm_borrowed) {
		if (q->has_comm)
			ember_regex__free(q->comm_re);
		ember_regex__free(q->focus_re);
		ember_regex__free(q->ignore_re);
	}
	q->comm_re = q->focus_re = q->ignore_re = NULL;
	q->comm_borrowed = false;
	q->has_comm = false;
}

int query_parse_u64(const char *key, const char *value, uint64_t min, uint64_t max,
		    uint64_t *ret, struct query_error *reterr)
{
	uint64_t v = 0;
	const char *p = value;

	if (!*p)
		return qfail(reterr, key, "empty value", 400);
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return qfail(reterr, key, "expected an unsigned integer", 400);
		if (v > (UINT64_MAX - 9) / 10)
			return qfail(reterr, key, "number out of range", 400);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max) {
		qfail(reterr, key, "number out of range", 400);
		if (reterr) {
			snprintf(reterr->buf, sizeof(reterr->buf), "%llu is out of range %llu..%llu",
				 (unsigned long long)v, (unsigned long long)min,
				 (unsigned long long)max);
			reterr->reason = reterr->buf;
		}
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* A range over the limit: the limit, and where it is set */
static int range_fail(struct query_error *reterr, const char *key, int64_t max_range_ns)
{
	qfail(reterr, key, "range exceeds the configured limit", 413);
	if (reterr) {
		snprintf(reterr->buf, sizeof(reterr->buf),
			 "range exceeds the configured limit of %lld s (http.max_range); ask for a "
			 "shorter one", (long long)(max_range_ns / 1000000000));
		reterr->reason = reterr->buf;
	}
	return -E2BIG;
}

/* A time that does not parse: its reason, and the forms that would */
static int time_fail(struct query_error *reterr, const char *key, const char *value,
		     const char *reason)
{
	qfail(reterr, key, reason, 400);
	if (reterr) {
		snprintf(reterr->buf, sizeof(reterr->buf),
			 "'%.24s': %s; a time is Unix seconds (1712345678.5), RFC 3339 "
			 "(2024-04-05T19:34:38Z), now, or relative to now (-15m, -2h, -1d, now-90s)",
			 value, reason);
		reterr->reason = reterr->buf;
	}
	return -EINVAL;
}

int query_parse_bool(const char *key, const char *value, bool *ret, struct query_error *reterr)
{
	if (!strcmp(value, "1") || !strcmp(value, "true")) {
		*ret = true;
		return 0;
	}
	if (!strcmp(value, "0") || !strcmp(value, "false")) {
		*ret = false;
		return 0;
	}
	return qfail(reterr, key, "expected 0 or 1", 400);
}

static int set_flag(enum query_flag *f, const char *key, const char *value,
		    struct query_error *reterr)
{
	bool b;
	int err = query_parse_bool(key, value, &b, reterr);

	if (err)
		return err;
	*f = b ? QUERY_FLAG_ON : QUERY_FLAG_OFF;
	return 1;
}

int query_common_set(struct query_common *q, const char *key, const char *value, int64_t now_ns,
		     struct query_error *reterr)
{
	struct parse_error perr = { 0 };
	uint64_t u;
	int64_t t;
	int err;

	if (!strcmp(key, "from") || !strcmp(key, "to")) {
		err = timeexpr_parse(value, strlen(value), now_ns, &t, &perr);
		if (err)
			return time_fail(reterr, key, value, perr.reason ? perr.reason : "bad time");
		if (key[0] == 'f') {
			q->from_ns = t;
			q->has_from = true;
		} else {
			q->to_ns = t;
			q->has_to = true;
		}
		return 1;
	}
	if (!strcmp(key, "pid") || !strcmp(key, "tid")) {
		/* pid_max is at most 2^22 on Linux */
		err = query_parse_u64(key, value, 0, 4194304, &u, reterr);
		if (err)
			return err;
		if (key[0] == 'p')
			q->pid = (int64_t)u;
		else
			q->tid = (int64_t)u;
		return 1;
	}
	if (!strcmp(key, "comm")) {
		size_t n = strlen(value);
		struct ember_regex *re;

		if (n > QUERY_MAX_REGEX)
			return qfail(reterr, key, "regex too long", 400);
		/* PCRE2 under limits (regex.h): glibc's regexec() recursed to a crash on
		 * (|)(\1\1)* and grew to gigabytes on a{1,32767}{1,32767} */
		re = ember_regex__new(value, n, q->comm_err, sizeof(q->comm_err));
		if (!re) {
			if (errno == ENOMEM)
				return qfail(reterr, key, "out of memory", 503);
			return qfail(reterr, key, q->comm_err, 400);
		}
		if (q->has_comm && !q->comm_borrowed)
			ember_regex__free(q->comm_re);
		q->comm_re = re;
		q->has_comm = true;
		memcpy(q->comm_src, value, n + 1);
		return 1;
	}
	if (!strcmp(key, "focus") || !strcmp(key, "ignore")) {
		bool focus = key[0] == 'f';
		struct ember_regex **slot = focus ? &q->focus_re : &q->ignore_re;
		char *src = focus ? q->focus_src : q->ignore_src;
		size_t n = strlen(value);
		struct ember_regex *re;

		if (n > QUERY_MAX_REGEX)
			return qfail(reterr, key, "regex too long", 400);
		if (!n) { /* an empty box in a form: no filter */
			if (!q->comm_borrowed)
				ember_regex__free(*slot);
			*slot = NULL;
			src[0] = '\0';
			return 1;
		}
		re = ember_regex__new(value, n, q->comm_err, sizeof(q->comm_err));
		if (!re) {
			if (errno == ENOMEM)
				return qfail(reterr, key, "out of memory", 503);
			return qfail(reterr, key, q->comm_err, 400);
		}
		/* matched per frame of every sample where a route walks samples (heat map,
		 * samples, pprof's labels): ~3x faster compiled; interpreted if that fails */
		(void)ember_regex__jit(re);
		if (!q->comm_borrowed)
			ember_regex__free(*slot);
		*slot = re;
		memcpy(src, value, n + 1);
		return 1;
	}
	if (!strcmp(key, "container") || !strcmp(key, "service") || !strcmp(key, "unit")) {
		char *dst = key[0] == 'c' ? q->container : key[0] == 's' ? q->service : q->unit;
		size_t cap = key[0] == 'c' ? sizeof(q->container) : key[0] == 's' ?
			     sizeof(q->service) : sizeof(q->unit);
		size_t n = strlen(value), i;

		if (!n || n >= cap)
			return qfail(reterr, key, "empty or too long", 400);
		for (i = 0; i < n; i++)
			if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
				return qfail(reterr, key, "control character", 400);
		if (key[0] == 'c') {
			if (n < 4)
				return qfail(reterr, key, "a container id needs 4 digits or more",
					     400);
			for (i = 0; i < n; i++)
				if (!isxdigit((unsigned char)value[i]))
					return qfail(reterr, key, "not a hexadecimal container id",
						     400);
		}
		memcpy(dst, value, n + 1);
		return 1;
	}
	if (!strcmp(key, "group_by")) {
		if (strcmp(value, "container") && strcmp(value, "pod") && strcmp(value, "service") &&
		    strcmp(value, "unit"))
			return qfail(reterr, key, "not container, pod, service or unit", 400);
		strcpy(q->group_by, value);
		return 1;
	}
	if (!strcmp(key, "kernel"))
		return set_flag(&q->kernel, key, value, reterr);
	if (!strcmp(key, "user"))
		return set_flag(&q->user, key, value, reterr);
	if (!strcmp(key, "idle"))
		return set_flag(&q->idle, key, value, reterr);
	if (!strcmp(key, "event")) {
		if (!strcmp(value, "cpu"))
			q->event = QUERY_EVENT_CPU;
		else if (!strcmp(value, "offcpu"))
			q->event = QUERY_EVENT_OFFCPU;
		else if (!strcmp(value, "wall"))
			q->event = QUERY_EVENT_WALL;
		else if (!strcmp(value, "wakeup"))
			q->event = QUERY_EVENT_WAKEUP;
		else if (!strcmp(value, "chain"))
			q->event = QUERY_EVENT_CHAIN;
		else if (!strcmp(value, "pagefault"))
			q->event = QUERY_EVENT_PAGEFAULT;
		else if (!strcmp(value, "vmgrow"))
			q->event = QUERY_EVENT_VMGROW;
		else if (!strcmp(value, "blockio"))
			q->event = QUERY_EVENT_BLOCKIO;
		else if (!strcmp(value, "malloc"))
			q->event = QUERY_EVENT_MALLOC;
		else if (!strcmp(value, "cycles"))
			q->event = QUERY_EVENT_CYCLES;
		else if (!strcmp(value, "instructions"))
			q->event = QUERY_EVENT_INSTRUCTIONS;
		else
			return qfail(reterr, key,
				     "unknown event (cpu, offcpu, wall, wakeup, chain, pagefault, "
				     "vmgrow, blockio, malloc, cycles, instructions)",
				     400);
		return 1;
	}
	if (!strcmp(key, "weight")) {
		if (!strcmp(value, "latency"))
			q->weight_latency = true;
		else if (!strcmp(value, "bytes") || !strcmp(value, "default"))
			q->weight_latency = false;
		else
			return qfail(reterr, key, "latency, bytes or default expected", 400);
		return 1;
	}
	return 0;
}

int query_common_finish(struct query_common *q, int64_t now_ns, int64_t default_ns,
			int64_t max_range_ns, struct query_error *reterr)
{
	if (!q->has_to)
		q->to_ns = now_ns;
	if (!q->has_from)
		q->from_ns = q->to_ns > INT64_MIN + default_ns ? q->to_ns - default_ns : INT64_MIN;
	if (q->from_ns > q->to_ns)
		return qfail(reterr, q->has_from ? "from" : "to", "from is after to", 400);
	if (q->weight_latency && q->event != QUERY_EVENT_BLOCKIO)
		return qfail(reterr, "weight", "weight=latency is for event=blockio", 400);
	if (max_range_ns > 0 && (__int128)q->to_ns - q->from_ns > max_range_ns)
		return range_fail(reterr, q->has_from ? "from" : "to", max_range_ns);
	return 0;
}

int query_range_b_set(struct query_range_b *b, const char *key, const char *value, int64_t now_ns,
		      struct query_error *reterr)
{
	struct parse_error pe = { 0 };
	int64_t t;

	if (!strcmp(key, "b_from") || !strcmp(key, "b_to")) {
		if (timeexpr_parse(value, strlen(value), now_ns, &t, &pe))
			return time_fail(reterr, key, value, pe.reason ? pe.reason : "bad time");
		if (key[2] == 'f') {
			b->from_ns = t;
			b->has_from = true;
		} else {
			b->to_ns = t;
			b->has_to = true;
		}
		return 1;
	}
	if (!strcmp(key, "normalize"))
		return query_parse_bool(key, value, &b->normalize, reterr) ? -EINVAL : 1;
	if (!strcmp(key, "elided"))
		return query_parse_bool(key, value, &b->elided, reterr) ? -EINVAL : 1;
	return 0;
}

int query_range_b_finish(const struct query_range_b *b, int64_t max_range_ns,
			 struct query_error *reterr)
{
	if (!b->has_from || !b->has_to)
		return qfail(reterr, b->has_from ? "b_to" : "b_from",
			     "the second range (b_from, b_to) is required", 400);
	if (b->from_ns > b->to_ns)
		return qfail(reterr, "b_from", "b_from is after b_to", 400);
	/* in 128 bits: b_to - b_from of two far apart times overflows 64 */
	if (max_range_ns > 0 && (__int128)b->to_ns - b->from_ns > max_range_ns)
		return range_fail(reterr, "b_from", max_range_ns);
	return 0;
}

int query_common_match_frame(const struct query_common *q, const char *name, size_t len)
{
	int r, bits = 0;

	if (q->focus_re) {
		r = ember_regex__match(q->focus_re, name, len);
		if (r < 0)
			return r == -E2BIG ? -QUERY_EFRAME_LIMIT : r;
		bits |= r ? QUERY_FRAME_FOCUS : 0;
	}
	if (q->ignore_re) {
		r = ember_regex__match(q->ignore_re, name, len);
		if (r < 0)
			return r == -E2BIG ? -QUERY_EFRAME_LIMIT : r;
		bits |= r ? QUERY_FRAME_IGNORE : 0;
	}
	return bits;
}

int query_common_match_comm(const struct query_common *q, const char *comm, size_t len)
{
	int r;

	if (!q->has_comm)
		return 1;
	r = ember_regex__match(q->comm_re, comm, len);
	return r == -E2BIG ? -QUERY_ECOMM_LIMIT : r;
}
