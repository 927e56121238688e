// SPDX-License-Identifier: MIT
#include "ember/core/formats/folded.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"

/* perl's \s: space, \t, \n, \v, \f, \r */
static inline int is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* A parsed count: exact in @n when it is an integer (@frac false); @v either way. */
struct parsed_count {
	double v;
	uint64_t n;
	bool frac;
	size_t start; /* offset of its first digit (also set for a count over 2^64-1) */
};

/*
 * Finds a trailing count "\d+(\.\d*)?" preceded by whitespace in s[0..len). Returns the length of
 * the stack before that whitespace character (as flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/),
 * and the count, -1 if the text does not end that way, or -2 for an integer count over 2^64-1.
 * An integer count (no fraction, or only zeros after the dot) is read exactly, never through a
 * double, which would round it past 2^53.
 */
static long split_count(const char *s, size_t len, struct parsed_count *ret)
{
	size_t i = len, int_end = len, k;
	char tmp[64], *ep;
	bool frac = false, over = false;
	uint64_t n = 0;

	while (i > 0 && is_digit((unsigned char)s[i - 1]))
		i--;
	if (i > 0 && s[i - 1] == '.') {
		for (k = i; k < len; k++)
			frac |= s[k] != '0';
		int_end = --i;
		while (i > 0 && is_digit((unsigned char)s[i - 1]))
			i--;
		if (i == int_end) /* ".5" : the digits before the dot are required */
			return -1;
	} else if (i == len) {
		return -1;
	}
	if (i == 0 || !is_space((unsigned char)s[i - 1]))
		return -1;
	for (k = i; k < int_end; k++) {
		unsigned int d = (unsigned int)(s[k] - '0');

		if (n > (UINT64_MAX - d) / 10)
			over = true;
		n = n * 10 + d;
	}
	ret->start = i;
	if (over && !frac)
		return -2;
	if (len - i >= sizeof(tmp))
		return -1; /* an absurdly long number is not a sample count */
	memcpy(tmp, s + i, len - i);
	tmp[len - i] = '\0';
	ret->v = strtod(tmp, &ep);
	ret->n = n;
	ret->frac = frac;
	return (long)(i - 1);
}

/* -EINVAL with the reason for a count that split_count() refused (@n < 0). */
static int count_error(long n, size_t col, const char *missing, struct parse_error *reterr)
{
	if (reterr) {
		reterr->col = (unsigned int)(col > 0xffff ? 0 : col);
		reterr->reason = n == -2 ? "sample count over 18446744073709551615" : missing;
	}
	return -EINVAL;
}

int folded_parse_line(const char *line, size_t len, enum folded_columns cols,
		      struct folded_line *ret, struct parse_error *reterr)
{
	struct parsed_count c1, c2;
	long n1, n2;
	size_t i;

	if (len && line[len - 1] == '\r')
		len--;
	for (i = 0; i < len && is_space((unsigned char)line[i]); i++)
		;
	if (i == len)
		return 0;
	n1 = split_count(line, len, &c2);
	if (n1 < 0)
		return count_error(n1, n1 == -2 ? c2.start + 1 : len + 1,
				   "expected a sample count at the end of the line", reterr);
	if (memchr(line, '\0', (size_t)n1)) {
		if (reterr) {
			reterr->col = (unsigned int)((const char *)memchr(line, '\0', (size_t)n1) - line) + 1;
			reterr->reason = "NUL byte in stack";
		}
		return -EINVAL;
	}
	n2 = cols == FOLDED_COLUMNS_ONE ? -1 : split_count(line, (size_t)n1, &c1);
	if (n2 == -2)
		return count_error(n2, c1.start + 1, NULL, reterr);
	if (n2 >= 0) {
		*ret = (struct folded_line){ .stack = line,
					     .stack_len = (size_t)n2,
					     .count = c1.v,
					     .count2 = c2.v,
					     .ncounts = 2,
					     .ucount = c1.n,
					     .ucount2 = c2.n,
					     .exact = !c1.frac && !c2.frac };
		return 1;
	}
	if (cols == FOLDED_COLUMNS_TWO)
		return count_error(n2, (size_t)n1 + 1,
				   "expected two sample counts at the end of the line", reterr);
	*ret = (struct folded_line){ .stack = line,
				     .stack_len = (size_t)n1,
				     .count = c2.v,
				     .count2 = 0,
				     .ncounts = 1,
				     .ucount = c2.n,
				     .exact = !c2.frac };
	return 1;
}

int folded_add_counts(struct profile *p, const uint32_t *frames, size_t n,
		      const struct folded_line *fl)
{
	if (!fl->exact)
		return fl->ncounts == 2 ? profile__add2(p, frames, n, fl->count, fl->count2)
					: profile__add(p, frames, n, fl->count);
	return fl->ncounts == 2 ? profile__add2_u64(p, frames, n, fl->ucount, fl->ucount2)
				: profile__add_u64(p, frames, n, fl->ucount);
}

int folded_add_stack(struct profile *p, const char *stack, size_t len, double count,
		     double count2, bool two, size_t max_depth)
{
	return profile__add_text(p, stack, len, count, count2, two, max_depth);
}

int folded_add_line(struct profile *p, const struct folded_line *fl, size_t max_depth)
{
	if (!fl->exact)
		return profile__add_text(p, fl->stack, fl->stack_len, fl->count, fl->count2,
					 fl->ncounts == 2, max_depth);
	return profile__add_text_u64(p, fl->stack, fl->stack_len, fl->ucount, fl->ucount2,
				     fl->ncounts == 2, max_depth);
}

struct read_ctx {
	struct profile *p;
	const struct folded_read_opts *opts;
	struct folded_stats *stats;
	struct sbuf rw;
};

static int read_line(const char *line, size_t len, struct parse_error *perr, void *ctx)
{
	struct read_ctx *c = ctx;
	const struct folded_read_opts *opts = c->opts;
	struct folded_line fl;
	int r;

	r = folded_parse_line(line, len, opts->columns, &fl, perr);
	if (r <= 0)
		return r; /* blank, or malformed */
	if (opts->rewrite) {
		sbuf_reset(&c->rw);
		opts->rewrite(fl.stack, fl.stack_len, &c->rw, opts->rewrite_ctx);
		if (sbuf_error(&c->rw))
			return -ENOMEM;
		fl.stack = c->rw.buf ? c->rw.buf : "";
		fl.stack_len = c->rw.len;
	}
	r = folded_add_line(c->p, &fl, opts->max_depth);
	if (r == -E2BIG) {
		perr->col = 1;
		perr->reason = "stack deeper than the limit";
		return -EINVAL;
	}
	if (r == -ERANGE) {
		perr->col = 1;
		perr->reason = "the stack's count would pass 18446744073709551615";
		return -EINVAL;
	}
	if (r < 0)
		return r;
	c->stats->stacks++;
	c->stats->total += fl.count;
	return 0;
}

int folded_read(struct lineread *lr, struct profile *p, const struct folded_read_opts *opts,
		struct folded_stats *stats, struct parse_error *reterr)
{
	static const struct folded_read_opts defaults;
	struct folded_stats dummy = { 0 };
	struct read_ctx c = { .p = p, .opts = opts ? opts : &defaults,
			      .stats = stats ? stats : &dummy, .rw = SBUF_INIT };
	struct lineread_parse_opts lo = { .strict = c.opts->strict, .on_skip = c.opts->on_skip,
					  .on_skip_ctx = c.opts->on_skip_ctx, .name = c.opts->name,
					  .lines = &c.stats->lines, .skipped = &c.stats->skipped };
	int err;

	err = lineread__parse_lines(lr, &lo, read_line, &c, reterr);
	sbuf_fini(&c.rw);
	return err;
}

/*
 * Appends stack @idx as a folded line; false if it has nothing to write. Integer counts are
 * written exactly; only fractional ones go through a double.
 */
static bool emit_line(const struct profile *p, size_t idx, bool two, struct sbuf *sb)
{
	double c1 = profile__count(p, idx), c2 = profile__count2(p, idx);
	uint64_t u1, u2;
	bool exact = profile__count_exact(p, idx, &u1, &u2);

	if (exact ? u1 == 0 && (!two || u2 == 0) : c1 == 0 && (!two || c2 == 0))
		return false;
	profile__stack_text(p, idx, sb);
	sbuf_addc(sb, ' ');
	if (exact)
		sbuf_addu(sb, u1);
	else
		sbuf_add_count(sb, c1);
	if (two) {
		sbuf_addc(sb, ' ');
		if (exact)
			sbuf_addu(sb, u2);
		else
			sbuf_add_count(sb, c2);
	}
	sbuf_addc(sb, '\n');
	return true;
}

int folded_write(const struct profile *p, struct sbuf *sb)
{
	size_t *idx = profile__sorted(p), i, n = profile__nr_stacks(p);
	bool two = profile__has_count2(p);

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		emit_line(p, idx[i], two, sb);
	free(idx);
	return sbuf_error(sb);
}

static int flush(struct sbuf *sb, FILE *f)
{
	int err = sbuf_error(sb);

	if (!err && sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		err = -EIO;
	sbuf_reset(sb);
	return err;
}

int folded_write_file(const struct profile *p, FILE *f)
{
	size_t *idx = profile__sorted(p), i, n = profile__nr_stacks(p);
	bool two = profile__has_count2(p);
	struct sbuf sb = SBUF_INIT;
	int err = 0;

	if (!idx)
		return -ENOMEM;
	/* flushed in blocks so that memory does not grow with the output */
	for (i = 0; i < n && !err; i++)
		if (emit_line(p, idx[i], two, &sb) && sb.len >= (1u << 16))
			err = flush(&sb, f);
	if (!err)
		err = flush(&sb, f);
	sbuf_fini(&sb);
	free(idx);
	return err;
}

static int is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void folded_strip_hex(const char *s, size_t len, struct sbuf *out, void *ctx)
{
	size_t i = 0, j;

	(void)ctx;
	while (i < len) {
		if (s[i] == '0' && i + 2 < len && s[i + 1] == 'x' && is_hex((unsigned char)s[i + 2])) {
			for (j = i + 2; j < len && is_hex((unsigned char)s[j]); j++)
				;
			sbuf_add(out, "0x...", 5);
			i = j;
			continue;
		}
		sbuf_addc(out, s[i]);
		i++;
	}
}

const char *folded_unit_name(enum folded_unit u)
{
	return u == FOLDED_UNIT_NS ? "ns" : "samples";
}

int folded_unit_parse(const char *s, enum folded_unit *ret)
{
	if (!strcmp(s, "samples")) {
		*ret = FOLDED_UNIT_SAMPLES;
		return 0;
	}
	if (!strcmp(s, "ns") || !strcmp(s, "nanoseconds") || !strcmp(s, "period")) {
		*ret = FOLDED_UNIT_NS;
		return 0;
	}
	return -EINVAL;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The sampling rates people pick (perf's -F 99 and its default 4000, BCC's 49 and 99, odd rates
 * that avoid lockstep with timers, round ones): a period of one of these is the likelier reading
 * of counts that fit several. */
static bool sampling_rate_common(uint64_t hz)
{
	static const uint16_t rates[] = { 9,   10,  19,  20,  25,  29,   49,   50,   97,   99,
					  100, 199, 200, 249, 250, 499,  500,  997,  999,  1000,
					  1999, 2000, 2500, 4000, 4999, 5000, 9999, 10000 };
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i] == hz)
			return true;
	return false;
}

enum folded_unit folded_guess_unit(const struct profile *p, uint64_t *ret_period_ns)
{
	size_t i, n = profile__nr_stacks(p), used = 0;
	uint64_t g = 0, c, c2, freq, k;

	*ret_period_ns = 0;
	for (i = 0; i < n; i++) {
		if (!profile__count_exact(p, i, &c, &c2))
			return FOLDED_UNIT_SAMPLES;
		if (!c)
			continue;
		g = gcd_u64(c, g);
		used++;
		if (g < 100000)
			return FOLDED_UNIT_SAMPLES;
	}
	if (used < 3 || g < 100000)
		return FOLDED_UNIT_SAMPLES;
	/*
	 * The gcd is a multiple of the period when every stack has several samples. Each
	 * P = g / k that is a clock period fits the counts, and more than one may: at 99 Hz, when
	 * every stack's count happens to be a multiple of 3 (198 samples as 99 + 60 + 39), g is
	 * 30303030, a 33 Hz period, and 10101010 (99 Hz) divides it too. The largest P that is a
	 * rate profilers are run at wins (sampling_rate_common()), else the largest P at all.
	 */
	for (k = 1; k <= 100000 && g / k >= 100000; k++) {
		uint64_t per = g / k;

		if (g % k)
			continue;
		freq = (uint64_t)(1e9 / (double)per + 0.5);
		/* per is 1e9 / freq rounded either way (the kernel truncates): within 1 ns of it,
		 * not of its truncation, or 11 periods at 99 Hz (111111110) pass for 9 Hz's
		 * 111111111 and 198 samples convert to 18 */
		if (freq && fabs(1e9 / (double)freq - (double)per) < 1.0) {
			if (!*ret_period_ns)
				*ret_period_ns = per;
			if (sampling_rate_common(freq)) {
				*ret_period_ns = per;
				break;
			}
		}
	}
	return *ret_period_ns ? FOLDED_UNIT_NS : FOLDED_UNIT_SAMPLES;
}
