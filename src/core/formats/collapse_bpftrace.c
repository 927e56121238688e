// SPDX-License-Identifier: MIT
/*
 * bpftrace map dumps keyed by stacks (`@[kstack, ustack, comm] = count();`) -> folded stacks, as
 * FlameGraph's stackcollapse-bpftrace.pl: "@[" opens a key, each following line is a frame (leaf
 * first; leading blanks stripped, offsets kept), and "..., last]: COUNT" closes it. Records are
 * delivered in input order (the script prints them so, without summing).
 */
#include "ember/core/formats/collapse.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ember/core/base/sbuf.h"
#include "collapse_priv.h"

/* (.*)\]: (\d+) with (.*) greedy: the last "]: " followed by a digit. */
static bool find_close(const char *l, size_t n, size_t from, size_t *ret_end, const char **ret_d,
		       size_t *ret_dlen)
{
	size_t k;

	for (k = n; k-- > from;) {
		if (k + 3 < n + 0 && l[k] == ']' && l[k + 1] == ':' && l[k + 2] == ' ' &&
		    pl_digit((unsigned char)l[k + 3])) {
			size_t e = k + 3;

			while (e < n && pl_digit((unsigned char)l[e]))
				e++;
			*ret_end = k;
			*ret_d = l + k + 3;
			*ret_dlen = e - (k + 3);
			return true;
		}
	}
	return false;
}

static int emit(struct collapse *c, const char *stack, size_t len, const char *d, size_t dlen,
		unsigned long lineno)
{
	struct collapse_sample s = {
		.time_s = NAN,
		.time_str = "",
		.pid = -1,
		.tid = -1,
		.comm = "",
		.event = "",
		.stack = stack,
		.stack_len = len,
		.line = lineno,
	};

	collapse_count(d, dlen, &s.count, &s.count_huge, &s.count_f);
	return collapse_emit(c, &s);
}

int collapse_bpftrace_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno)
{
	const char *d;
	size_t end, dlen, i;
	struct sbuf one = SBUF_INIT;
	int err;

	if (!c->in_stack) {
		if (n == 2 && l[0] == '@' && l[1] == '[') {
			c->in_stack = true;
			c->rec_line = lineno;
			groups_reset(&c->groups);
			return 0;
		}
		/* /^@\[,\s(.*)\]: (\d+)/: a key without stacks */
		if (n >= 4 && l[0] == '@' && l[1] == '[' && l[2] == ',' && pl_space((unsigned char)l[3]) &&
		    find_close(l, n, 4, &end, &d, &dlen))
			return emit(c, l + 4, end - 4, d, dlen, lineno);
		return 0; /* anything else outside a key is ignored, as the script does */
	}
	/* m/^,?\s?(.*)\]: (\d+)/ */
	i = 0;
	if (i < n && l[i] == ',')
		i++;
	if (i < n && pl_space((unsigned char)l[i]))
		i++;
	if (find_close(l, n, i, &end, &d, &dlen)) {
		if (end > i && !c->groups.overflow) {
			sbuf_add(&one, l + i, end - i);
			err = sbuf_error(&one) ? -ENOMEM : groups_push(&c->groups, &one, 1);
			sbuf_fini(&one);
			if (err)
				return err;
		}
		c->in_stack = false;
		if (c->groups.overflow) {
			collapse_skip(c, c->rec_line, 0, "stack record too large");
			groups_reset(&c->groups);
			return 0;
		}
		groups_join(&c->groups, NULL, 0, &c->out);
		groups_reset(&c->groups);
		if (sbuf_error(&c->out))
			return -ENOMEM;
		return emit(c, c->out.buf ? c->out.buf : "", c->out.len, d, dlen, c->rec_line);
	}
	/* a frame: s/^\s+// */
	i = 0;
	while (i < n && pl_space((unsigned char)l[i]))
		i++;
	if (c->groups.overflow)
		return 0;
	sbuf_reset(&c->grp);
	sbuf_add(&c->grp, l + i, n - i);
	if (sbuf_error(&c->grp))
		return -ENOMEM;
	/* an empty frame is still a frame: push it even with no bytes */
	return groups_push(&c->groups, &c->grp, 1);
}
