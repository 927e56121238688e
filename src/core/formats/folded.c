// SPDX-License-Identifier: MIT
#include "ember/core/formats/folded.h"

#include <errno.h>
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

/*
 * Finds a trailing count "\d+(\.\d*)?" preceded by whitespace in s[0..len). Returns the length of
 * the stack before that whitespace character (as flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/),
 * and the count, or -1 if the text does not end that way.
 */
static long split_count(const char *s, size_t len, double *ret_count)
{
	size_t end = len, i = len, dot = 0;
	char tmp[64], *ep;
	double v;

	while (i > 0 && is_digit((unsigned char)s[i - 1]))
		i--;
	if (i > 0 && s[i - 1] == '.') {
		dot = i - 1;
		i--;
		while (i > 0 && is_digit((unsigned char)s[i - 1]))
			i--;
		if (i == dot) /* ".5" : the digits before the dot are required */
			return -1;
	} else if (i == end) {
		return -1;
	}
	if (i == 0 || !is_space((unsigned char)s[i - 1]))
		return -1;
	if (end - i < sizeof(tmp)) {
		memcpy(tmp, s + i, end - i);
		tmp[end - i] = '\0';
		v = strtod(tmp, &ep);
	} else {
		/* an absurdly long number: strtod on a copy would do, but it is not a sample count */
		return -1;
	}
	*ret_count = v;
	return (long)(i - 1);
}

int folded_parse_line(const char *line, size_t len, enum folded_columns cols,
		      struct folded_line *ret, struct parse_error *reterr)
{
	double c1, c2;
	long n1, n2;
	size_t i;

	if (len && line[len - 1] == '\r')
		len--;
	for (i = 0; i < len && is_space((unsigned char)line[i]); i++)
		;
	if (i == len)
		return 0;
	n1 = split_count(line, len, &c2);
	if (n1 < 0) {
		if (reterr) {
			reterr->col = (unsigned int)(len + 1 > 0xffff ? 0 : len + 1);
			reterr->reason = "expected a sample count at the end of the line";
		}
		return -EINVAL;
	}
	if (memchr(line, '\0', (size_t)n1)) {
		if (reterr) {
			reterr->col = (unsigned int)((const char *)memchr(line, '\0', (size_t)n1) - line) + 1;
			reterr->reason = "NUL byte in stack";
		}
		return -EINVAL;
	}
	n2 = cols == FOLDED_COLUMNS_ONE ? -1 : split_count(line, (size_t)n1, &c1);
	if (n2 >= 0) {
		*ret = (struct folded_line){ .stack = line, .stack_len = (size_t)n2, .count = c1,
					     .count2 = c2, .ncounts = 2 };
		return 1;
	}
	if (cols == FOLDED_COLUMNS_TWO) {
		if (reterr) {
			reterr->col = (unsigned int)n1 + 1;
			reterr->reason = "expected two sample counts at the end of the line";
		}
		return -EINVAL;
	}
	*ret = (struct folded_line){ .stack = line, .stack_len = (size_t)n1, .count = c2,
				     .count2 = 0, .ncounts = 1 };
	return 1;
}

int folded_add_stack(struct profile *p, const char *stack, size_t len, double count,
		     double count2, bool two, size_t max_depth)
{
	return profile__add_text(p, stack, len, count, count2, two, max_depth);
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
	r = folded_add_stack(c->p, fl.stack, fl.stack_len, fl.count, fl.count2, fl.ncounts == 2,
			     opts->max_depth);
	if (r == -E2BIG) {
		perr->col = 1;
		perr->reason = "stack deeper than the limit";
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

/* Appends stack @idx as a folded line; false if it has nothing to write. */
static bool emit_line(const struct profile *p, size_t idx, bool two, struct sbuf *sb)
{
	double c1 = profile__count(p, idx), c2 = profile__count2(p, idx);

	if (c1 == 0 && (!two || c2 == 0))
		return false;
	profile__stack_text(p, idx, sb);
	sbuf_addc(sb, ' ');
	sbuf_add_count(sb, c1);
	if (two) {
		sbuf_addc(sb, ' ');
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
