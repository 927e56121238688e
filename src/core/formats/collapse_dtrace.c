// SPDX-License-Identifier: MIT
/*
 * DTrace stack aggregations (`dtrace -n '... { @[stack()] = count(); }'`) -> folded stacks, as
 * FlameGraph's stackcollapse.pl: the first three lines are a header, frames are indented lines
 * (leaf first), and a line holding only a number ends a stack with its count.
 */
#include "ember/core/formats/collapse.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/model/frame.h"
#include "collapse_priv.h"

#define DTRACE_HEADER_LINES 3

static int dtrace_func(struct collapse *c, const char *s, size_t n, size_t idx, void *ctx)
{
	size_t *nfuncs = ctx, i, start;

	if (idx > 0)
		sbuf_addc(&c->grp, ';');
	/* s/^L// (Java) */
	start = n > 0 && s[0] == 'L' ? 1 : 0;
	/* tr/;/:/ */
	if (sbuf_grow(&c->grp, n))
		return -ENOMEM;
	for (i = start; i < n; i++)
		c->grp.buf[c->grp.len++] = s[i] == ';' ? ':' : s[i];
	c->grp.buf[c->grp.len] = '\0';
	if (idx > 0)
		sbuf_adds(&c->grp, frame_kind_suffix(FRAME_INLINED));
	(*nfuncs)++;
	return sbuf_error(&c->grp);
}

static int dtrace_frame(struct collapse *c, const char *l, size_t n)
{
	const char *plus, *colons;
	size_t i = 0, k, nf, nfuncs = 0;
	int err;

	/* strip leading blanks */
	while (i < n && pl_space((unsigned char)l[i]))
		i++;
	l += i;
	n -= i;
	/* drop the offset: from the last '+' on */
	plus = memrchr(l, '+', n);
	if (plus)
		n = (size_t)(plus - l);
	/* C++ arguments: cut at the last "(" or "<" at least two bytes past the first "::" */
	colons = memmem(l, n, "::", 2);
	if (colons) {
		for (k = n; k-- > (size_t)(colons - l) + 2;)
			if (l[k] == '(' || l[k] == '<') {
				n = k;
				break;
			}
	}
	if (n == 0) {
		l = "-";
		n = 1;
	}
	if (c->groups.overflow)
		return 0;
	sbuf_reset(&c->grp);
	err = split_arrows(c, l, n, dtrace_func, &nfuncs, &nf);
	if (err)
		return err;
	return groups_push(&c->groups, &c->grp, nfuncs);
}

int collapse_dtrace_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno)
{
	struct collapse_sample s;
	size_t i = 0, d;
	int err;

	if (c->nr++ < DTRACE_HEADER_LINES)
		return 0;
	while (i < n && pl_space((unsigned char)l[i]))
		i++;
	d = i;
	while (i < n && pl_digit((unsigned char)l[i]))
		i++;
	if (i > d && i == n) {
		/* m/^\s*(\d+)+$/: the count ends the stack (an empty one too) */
		if (c->groups.overflow) {
			collapse_skip(c, c->rec_line, 0, "stack record too large");
			groups_reset(&c->groups);
			return 0;
		}
		groups_join(&c->groups, NULL, 0, &c->out);
		if (sbuf_error(&c->out))
			return -ENOMEM;
		s = (struct collapse_sample){
			.time_s = NAN,
			.time_str = "",
			.pid = -1,
			.tid = -1,
			.comm = "",
			.event = "",
			.stack = c->out.buf ? c->out.buf : "",
			.stack_len = c->out.len,
			.line = c->groups.n ? c->rec_line : lineno,
		};
		collapse_count(l + d, i - d, &s.count, &s.count_huge, &s.count_f);
		err = collapse_emit(c, &s);
		groups_reset(&c->groups);
		return err;
	}
	if (d == n && i == n)
		return 0; /* m/^\s*$/ */
	if (c->groups.n == 0)
		c->rec_line = lineno;
	return dtrace_frame(c, l, n);
}
