// SPDX-License-Identifier: MIT
/* The "ember-samples v1" text format of a struct samples (docs/formats.md). */
#include "ember/core/formats/samples_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/lineread.h"
#include "ember/core/base/parse.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/samples.h"

void samples_format_line(struct sbuf *sb, uint64_t t_ns, const char *stack, size_t len,
			 uint64_t count)
{
	char frac[16];

	sbuf_addu(sb, t_ns / 1000000000ULL);
	snprintf(frac, sizeof(frac), ".%09llu ", (unsigned long long)(t_ns % 1000000000ULL));
	sbuf_adds(sb, frac);
	sbuf_add(sb, stack, len);
	sbuf_addc(sb, ' ');
	sbuf_addu(sb, count);
	sbuf_addc(sb, '\n');
}

static int bad(struct parse_error *reterr, unsigned int col, const char *reason)
{
	if (reterr) {
		reterr->col = col;
		reterr->reason = reason;
	}
	return -EINVAL;
}

/* Parses the trailing count token "digits[.zeros]" exactly. */
static int parse_count(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (i < len && s[i] == '.')
		for (i++; i < len; i++)
			if (s[i] != '0')
				return -EINVAL;
	*ret = v;
	return 0;
}

static bool is_sep(char ch)
{
	return ch == ' ' || ch == '\t';
}

int samples_parse_line(const char *line, size_t len, uint64_t *ret_t_ns, const char **ret_stack,
		       size_t *ret_stack_len, uint64_t *ret_count, struct parse_error *reterr)
{
	struct folded_line fl;
	struct parse_error perr = { 0 };
	size_t i, tlen, cstart;
	uint64_t t, count;
	int r;

	if (len && line[len - 1] == '\r')
		len--;
	for (i = 0; i < len && (is_sep(line[i]) || line[i] == '\f' || line[i] == '\v'); i++)
		;
	if (i == len)
		return 0;
	if (line[0] == '#') {
		static const char hdr[] = "# ember-samples ";

		if (len >= sizeof(hdr) - 1 && !memcmp(line, hdr, sizeof(hdr) - 1)) {
			const char *v = line + sizeof(hdr) - 1;
			size_t vlen = len - (sizeof(hdr) - 1);

			while (vlen && is_sep(v[vlen - 1]))
				vlen--;
			if (vlen != 2 || memcmp(v, "v1", 2))
				return bad(reterr, sizeof(hdr), "unsupported ember-samples version");
		}
		return 0;
	}
	for (tlen = 0; tlen < len && !is_sep(line[tlen]); tlen++)
		;
	r = parse_seconds_ns(line, tlen, &t);
	if (r == -ERANGE)
		return bad(reterr, 1, "time out of range");
	if (r)
		return bad(reterr, 1, "expected a time in seconds (digits, up to 9 decimals)");
	if (tlen == len)
		return bad(reterr, (unsigned int)len + 1, "expected a stack and a count after the time");
	r = folded_parse_line(line + tlen + 1, len - tlen - 1, FOLDED_COLUMNS_ONE, &fl, &perr);
	if (r == 0)
		return bad(reterr, (unsigned int)tlen + 2, "expected a stack and a count after the time");
	if (r < 0)
		return bad(reterr, perr.col ? perr.col + (unsigned int)tlen + 1 : 0, perr.reason);
	/* the count token: after the stack and its one separator */
	cstart = tlen + 1 + fl.stack_len;
	while (cstart < len && is_sep(line[cstart]))
		cstart++;
	r = parse_count(line + cstart, len - cstart, &count);
	if (r == -ERANGE)
		return bad(reterr, (unsigned int)cstart + 1, "count too large");
	if (r)
		return bad(reterr, (unsigned int)cstart + 1, "the count must be a whole number");
	*ret_t_ns = t;
	*ret_stack = fl.stack;
	*ret_stack_len = fl.stack_len;
	*ret_count = count;
	return 1;
}

bool samples_detect(const char *line, size_t len)
{
	uint64_t t, count;
	const char *stack;
	size_t sl;

	if (len >= 15 && !memcmp(line, "# ember-samples", 15))
		return true;
	return samples_parse_line(line, len, &t, &stack, &sl, &count, NULL) == 1;
}

struct read_ctx {
	struct samples *s;
	const struct samples_read_opts *opts;
	struct samples_read_stats *stats;
};

static int read_line(const char *line, size_t len, struct parse_error *perr, void *ctx)
{
	struct read_ctx *c = ctx;
	const char *stack;
	size_t slen;
	uint64_t t, count;
	int r, err;

	r = samples_parse_line(line, len, &t, &stack, &slen, &count, perr);
	if (r <= 0)
		return r; /* blank or comment, or malformed */
	/* a record holds a 32-bit count: a huge count would become millions of records
	 * (fuzz_samples: one 42-byte line took gigabytes); more than 64 records' worth in
	 * one line (2.7e11 samples) is no real profile */
	if (count > (uint64_t)UINT32_MAX * 64) {
		perr->reason = "count too large (above 64 x 4294967295)";
		return -EINVAL;
	}
	/* interned whatever its depth, then checked: a cached text holds for any limit */
	r = samples__intern_folded(c->s, stack, slen);
	if (r >= 0 && c->opts->max_depth) {
		size_t depth;

		(void)samples__stack(c->s, (uint32_t)r, &depth);
		if (depth > c->opts->max_depth)
			r = -E2BIG;
	}
	if (r == -E2BIG) {
		perr->col = 1;
		perr->reason = "stack deeper than the limit";
		return -EINVAL;
	}
	if (r < 0)
		return r;
	c->stats->records++;
	c->stats->total += count;
	while (count) {
		uint32_t part = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;

		err = samples__add(c->s, t, (uint32_t)r, part);
		if (err)
			return err;
		count -= part;
	}
	return 0;
}

int samples_read(struct lineread *lr, struct samples *s, const struct samples_read_opts *opts,
		 struct samples_read_stats *stats, struct parse_error *reterr)
{
	static const struct samples_read_opts defaults;
	struct samples_read_stats dummy = { 0 };
	struct read_ctx c = { .s = s, .opts = opts ? opts : &defaults,
			      .stats = stats ? stats : &dummy };
	struct lineread_parse_opts lo = { .strict = c.opts->strict, .on_skip = c.opts->on_skip,
					  .on_skip_ctx = c.opts->on_skip_ctx, .name = c.opts->name,
					  .lines = &c.stats->lines, .skipped = &c.stats->skipped };
	int err;

	err = lineread__parse_lines(lr, &lo, read_line, &c, reterr);
	if (!err)
		err = samples__sort(s);
	if (!err)
		samples__shrink(s);
	return err;
}

int samples__write(const struct samples *s, struct sbuf *sb)
{
	struct sbuf text = SBUF_INIT;
	size_t i;

	if (!samples__sorted(s))
		return -EINVAL;
	sbuf_adds(sb, SAMPLES_HEADER "\n");
	for (i = 0; i < samples__nr(s); i++) {
		sbuf_reset(&text);
		samples__stack_text(s, samples__stack_id(s, i), &text);
		samples_format_line(sb, samples__time_ns(s, i), text.buf ? text.buf : "", text.len,
				    samples__count(s, i));
	}
	if (sbuf_error(&text)) {
		sbuf_fini(&text);
		return -ENOMEM;
	}
	sbuf_fini(&text);
	return sbuf_error(sb);
}
