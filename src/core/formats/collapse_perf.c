// SPDX-License-Identifier: MIT
/*
 * `perf script` text -> folded stacks, byte for byte as FlameGraph's stackcollapse-perf.pl.
 *
 * The script decides with regular expressions; each is reproduced here by hand, including how
 * perl's backtracking picks the captures, because the corners show in real files (a comm with
 * spaces, "pid/tid", a frame whose symbol holds " (", tracepoint events with ':' inside).
 */
#include "ember/core/formats/collapse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/model/frame.h"
#include "collapse_priv.h"

/*
 * One sample header, as the script's two regexes see it: the record start
 *   ^(\S.+?)\s+(\d+)[/]*(\d+)*\s+   (comm, then PID or TID, or PID/TID)
 * and the event
 *   :\s*(\d+)*\s+(\S+):\s*$         (optional period, event name)
 */
struct perf_header {
	size_t comm_len;
	const char *d1, *d2;	/* $2, $3 (d2 NULL when undef) */
	size_t d1_len, d2_len;
	bool has_event;
	const char *period;	/* $1 of the event regex, NULL when undef */
	size_t period_len;
	const char *event;
	size_t event_len;
	double time_s;
	const char *time_str;
	size_t time_len;
};

/* The tail \s+(\d+)[/]*(\d+)*\s+ at @e; returns true and fills pid/tid, else sets *skip_to. */
static bool header_tail(const char *l, size_t n, size_t e, struct perf_header *h, size_t *skip_to)
{
	size_t k = e, d1, d1e, s2, d2e;

	while (k < n && pl_space((unsigned char)l[k]))
		k++;
	*skip_to = k;
	d1 = k;
	while (k < n && pl_digit((unsigned char)l[k]))
		k++;
	if (k == d1)
		return false;
	d1e = k;
	while (k < n && l[k] == '/')
		k++;
	s2 = k;
	while (k < n && pl_digit((unsigned char)l[k]))
		k++;
	d2e = k;
	if (k >= n || !pl_space((unsigned char)l[k]))
		return false;
	h->d1 = l + d1;
	h->d1_len = d1e - d1;
	h->d2 = d2e > s2 ? l + s2 : NULL;
	h->d2_len = d2e - s2;
	return true;
}

static bool parse_header(const char *l, size_t n, struct perf_header *h)
{
	size_t e, skip_to, last, s, k, p, dend;

	if (n < 3 || pl_space((unsigned char)l[0]))
		return false;
	/* (\S.+?) is lazy: the first end >= 2 where the tail matches */
	for (e = 2; e < n; e++) {
		if (!pl_space((unsigned char)l[e]))
			continue;
		if (header_tail(l, n, e, h, &skip_to))
			break;
		/* every start inside this whitespace run sees the same tail */
		e = skip_to > e ? skip_to - 1 : e;
	}
	if (e >= n)
		return false;
	h->comm_len = e;
	h->has_event = false;
	h->period = NULL;
	h->period_len = 0;
	h->time_s = NAN;
	h->time_str = "";
	h->time_len = 0;

	/* /:\s*(\d+)*\s+(\S+):\s*$/: the last token must end in ':' */
	last = n;
	while (last > 0 && pl_space((unsigned char)l[last - 1]))
		last--;
	if (last == 0 || l[last - 1] != ':')
		return true;
	last--; /* the ':' */
	s = last;
	while (s > 0 && !pl_space((unsigned char)l[s - 1]))
		s--;
	if (s == last || s == 0)
		goto time_only;
	/* between a ':' and the token: \s* digits? \s+ */
	k = s;
	while (k > 0 && pl_space((unsigned char)l[k - 1]))
		k--;
	dend = k;
	while (k > 0 && pl_digit((unsigned char)l[k - 1]))
		k--;
	if (k < dend) {
		h->period = l + k;
		h->period_len = dend - k;
	}
	while (k > 0 && pl_space((unsigned char)l[k - 1]))
		k--;
	if (k == 0 || l[k - 1] != ':') {
		h->period = NULL;
		h->period_len = 0;
		goto time_only;
	}
	p = k - 1;
	h->has_event = true;
	h->event = l + s;
	h->event_len = last - s;
	last = p;
time_only: {
		/* the time: "SECONDS.FRACTION" right before the ':' at @last (without an event,
		 * "... 1234.567:" ends the header and the time is its last token) */
		size_t t = last, dots = 0;
		char tmp[64];

		while (t > 0 && (pl_digit((unsigned char)l[t - 1]) || l[t - 1] == '.')) {
			dots += l[t - 1] == '.';
			t--;
		}
		if (last - t >= 3 && last - t < sizeof(tmp) && dots == 1 &&
		    pl_digit((unsigned char)l[t]) && pl_digit((unsigned char)l[last - 1]) &&
		    (t == 0 || pl_space((unsigned char)l[t - 1]))) {
			memcpy(tmp, l + t, last - t);
			tmp[last - t] = '\0';
			h->time_s = strtod(tmp, NULL);
			h->time_str = l + t;
			h->time_len = last - t;
		}
	}
	return true;
}

/* /^\s*(\w+)\s*(.+) \((.*)\)/ with its backtracking: pc, rawfunc, mod. */
struct perf_frame {
	const char *pc, *func, *mod;
	size_t pc_len, func_len, mod_len;
};

static bool parse_frame(const char *l, size_t n, struct perf_frame *f)
{
	size_t a = 0, b, cc, jl, i, r;
	const char *rp;

	while (a < n && pl_space((unsigned char)l[a]))
		a++;
	b = a;
	while (b < n && pl_word((unsigned char)l[b]))
		b++;
	if (b == a)
		return false;
	cc = b;
	while (cc < n && pl_space((unsigned char)l[cc]))
		cc++;
	rp = memrchr(l, ')', n);
	if (!rp)
		return false;
	jl = (size_t)(rp - l);
	/* the rightmost " (" with a ')' at least one byte after its '(' */
	if (jl < 2)
		return false;
	for (rp = l + jl - 1;;) {
		rp = memrchr(l, '(', (size_t)(rp - l) + 1);
		if (!rp || rp == l)
			return false;
		if (rp[-1] == ' ')
			break;
		rp--;
	}
	i = (size_t)(rp - l) - 1;
	/* (.+) starts at r: as late as \w+\s* allows, but before the " (" */
	if (i < 1)
		return false;
	r = cc < i - 1 ? cc : i - 1;
	if (r < a + 1)
		return false;
	f->pc = l + a;
	f->pc_len = (r < b ? r : b) - a;
	f->func = l + r;
	f->func_len = i - r;
	f->mod = l + i + 2;
	f->mod_len = jl - (i + 2);
	return true;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* m:/tmp/perf-\d+\.map: */
static bool jit_module(const char *m, size_t n)
{
	const char *p = m, *end = m + n;

	while ((p = memmem(p, (size_t)(end - p), "/tmp/perf-", 10))) {
		const char *d = p + 10, *q = d;

		while (q < end && pl_digit((unsigned char)*q))
			q++;
		if (q > d && end - q >= 4 && !memcmp(q, ".map", 4))
			return true;
		p++;
	}
	return false;
}

struct frame_ctx {
	const struct perf_frame *fr;
	size_t nfuncs;
	bool plain;		/* the function holds none of the bytes tidying changes */
};

/* Bytes the tidying step may change: ; ( " ' */
static const unsigned char tidy_special[256] = {
	[';'] = 1, ['('] = 1, ['"'] = 1, ['\''] = 1,
};

/* The same, plus '>' (a possible "->" inline arrow): one scan decides the fast path. */
static const unsigned char frame_special[256] = {
	[';'] = 1, ['('] = 1, ['"'] = 1, ['\''] = 1, ['>'] = 1,
};

/* Tidies b[0..n) in place as the script's tidy_generic does; returns the new length. */
static size_t tidy(char *b, size_t n)
{
	static const char anon[] = "anonymous namespace)";
	char *p, *end = b + n, *q;
	size_t i, j;

	/* s/;/:/g */
	for (p = memchr(b, ';', n); p; p = memchr(p + 1, ';', (size_t)(end - p - 1)))
		*p = ':';
	p = memchr(b, '(', n);
	if (p) {
		/* a Go method ("net/http.(*Client).Do") keeps its parentheses: ".(" then ")." */
		bool go = false;

		for (q = p; q; q = memchr(q + 1, '(', (size_t)(end - q - 1)))
			if (q > b && q[-1] == '.')
				break;
		if (q) {
			char *dp = q - 1, *r;

			for (r = end - 1; r > dp + 2; r--)
				if (*r == '.' && r[-1] == ')') {
					go = r - 1 >= dp + 2;
					break;
				}
		}
		/* otherwise cut from the first "(" that does not open "(anonymous namespace)" */
		for (; !go && p; p = memchr(p + 1, '(', (size_t)(end - p - 1)))
			if (!((size_t)(end - p - 1) >= sizeof(anon) - 1 &&
			      !memcmp(p + 1, anon, sizeof(anon) - 1))) {
				n = (size_t)(p - b);
				break;
			}
	}
	/* tr/"'//d */
	if (!memchr(b, '"', n) && !memchr(b, '\'', n))
		return n;
	for (i = j = 0; i < n; i++)
		if (b[i] != '"' && b[i] != '\'')
			b[j++] = b[i];
	return j;
}

/* One function of a frame line (split on "->"), tidied and annotated, appended to the group. */
static int perf_func(struct collapse *c, const char *s, size_t n, size_t idx, void *vctx)
{
	struct frame_ctx *fc = vctx;
	const struct perf_frame *fr = fc->fr;
	struct sbuf *t = &c->groups.text;
	size_t i, start;
	char *b;

	if (idx > 0)
		sbuf_addc(t, ';');
	start = t->len;
	if (n == 9 && !memcmp(s, "[unknown]", 9)) {
		const char *name = "unknown";
		size_t nl = 7;

		if (!(fr->mod_len == 9 && !memcmp(fr->mod, "[unknown]", 9))) {
			const char *sl = memrchr(fr->mod, '/', fr->mod_len);

			name = sl ? sl + 1 : fr->mod;
			nl = fr->mod_len - (size_t)(name - fr->mod);
		}
		sbuf_addc(t, '[');
		sbuf_add(t, name, nl);
		if (c->opts.addrs) {
			sbuf_adds(t, " <");
			sbuf_add(t, fr->pc, fr->pc_len);
			sbuf_addc(t, '>');
		}
		sbuf_addc(t, ']');
	} else {
		sbuf_add(t, s, n);
	}
	if (sbuf_error(t))
		return -ENOMEM;
	b = t->buf + start;
	n = t->len - start;
	i = n;
	if (!fc->plain || b[0] == '[') /* [unknown] became the module name: check it */
		for (i = 0; i < n; i++)
			if (tidy_special[(unsigned char)b[i]])
				break;
	if (i < n)
		n = tidy(b, n);
	/* Java: s/^L// if m:/: */
	if (c->java && n > 0 && b[0] == 'L' && memchr(b, '/', n)) {
		memmove(b, b + 1, n - 1);
		n--;
	}
	t->len = start + n;
	t->buf[t->len] = '\0';
	if (idx > 0) {
		if (!contains(b, n, frame_kind_suffix(FRAME_INLINED)))
			sbuf_adds(t, frame_kind_suffix(FRAME_INLINED));
	} else if (c->opts.kernel && fr->mod_len > 0 &&
		   (fr->mod[0] == '[' ||
		    (fr->mod_len >= 7 && !memcmp(fr->mod + fr->mod_len - 7, "vmlinux", 7))) &&
		   !contains(fr->mod, fr->mod_len, "unknown")) {
		sbuf_adds(t, frame_kind_suffix(FRAME_KERNEL));
	} else if (c->opts.jit && jit_module(fr->mod, fr->mod_len)) {
		if (!contains(b, n, frame_kind_suffix(FRAME_JIT)))
			sbuf_adds(t, frame_kind_suffix(FRAME_JIT));
	}
	fc->nfuncs++;
	return sbuf_error(t);
}

static int perf_frame_line(struct collapse *c, struct perf_frame *fr)
{
	struct frame_ctx fc = { .fr = fr };
	const char *f = fr->func;
	size_t n = fr->func_len, h, start;
	size_t nf;
	int err;

	/* s/\+0x[\da-f]+$// */
	h = n;
	while (h > 0 && ((f[h - 1] >= '0' && f[h - 1] <= '9') || (f[h - 1] >= 'a' && f[h - 1] <= 'f')))
		h--;
	if (h < n && h >= 3 && f[h - 3] == '+' && f[h - 2] == '0' && f[h - 1] == 'x')
		n = h - 3;
	if (n > 0 && f[0] == '(')
		return 0; /* process names */
	if (c->groups.overflow)
		return 0;
	start = c->groups.text.len;
	for (h = 0; h < n; h++)
		if (frame_special[(unsigned char)f[h]])
			break;
	if (h == n && n > 0) {
		/* no arrow, nothing to tidy: one function as it is */
		fc.plain = true;
		err = perf_func(c, f, n, 0, &fc);
	} else {
		err = split_arrows(c, f, n, perf_func, &fc, &nf);
	}
	if (err)
		return err;
	return groups_close(&c->groups, start, fc.nfuncs);
}

static int set_other_event(struct collapse *c, const char *ev, size_t n)
{
	char *s;

	if (c->other_event[0])
		return 0;
	s = strndup(ev, n);
	if (!s)
		return -ENOMEM;
	free(c->other_event);
	c->other_event = s;
	return 0;
}

static long to_long(const char *s, size_t n)
{
	long v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v > (long)(__LONG_MAX__ / 10 - 10))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int perf_header_line(struct collapse *c, const char *l, struct perf_header *h,
			    unsigned long lineno)
{
	const char *pid, *tid;
	size_t pid_len, tid_len, i;
	int err;

	/* if (not $tid) { $tid = $pid; $pid = "?" } -- "0" is false too */
	if (!h->d2 || (h->d2_len == 1 && h->d2[0] == '0')) {
		tid = h->d1;
		tid_len = h->d1_len;
		pid = "?";
		pid_len = 1;
	} else {
		pid = h->d1;
		pid_len = h->d1_len;
		tid = h->d2;
		tid_len = h->d2_len;
	}
	if (h->has_event) {
		if (!c->event_set) {
			char *ev = strndup(h->event, h->event_len);

			if (!ev)
				return -ENOMEM;
			free(c->event);
			c->event = ev;
			c->event_set = true;
			c->event_defaulted = true;
		} else if (strlen(c->event) != h->event_len ||
			   memcmp(c->event, h->event, h->event_len)) {
			c->stats.filtered++;
			return set_other_event(c, h->event, h->event_len);
		}
	}
	/* $period: "" or "0" (false in perl) -> 1; otherwise perl's numeric value */
	if (c->opts.count_samples || !h->period || (h->period_len == 1 && h->period[0] == '0')) {
		c->period = 1;
		c->period_huge = false;
		c->period_f = 1;
	} else {
		collapse_count(h->period, h->period_len, &c->period, &c->period_huge, &c->period_f);
	}
	sbuf_reset(&c->comm);
	sbuf_add(&c->comm, l, h->comm_len);
	sbuf_reset(&c->rec_event);
	if (h->has_event)
		sbuf_add(&c->rec_event, h->event, h->event_len);
	sbuf_reset(&c->pname);
	sbuf_add(&c->pname, l, h->comm_len);
	if (c->opts.tid) {
		sbuf_addc(&c->pname, '-');
		sbuf_add(&c->pname, pid, pid_len);
		sbuf_addc(&c->pname, '/');
		sbuf_add(&c->pname, tid, tid_len);
	} else if (c->opts.pid) {
		sbuf_addc(&c->pname, '-');
		sbuf_add(&c->pname, pid, pid_len);
	}
	err = sbuf_error(&c->pname) ? -ENOMEM : 0;
	if (err || sbuf_error(&c->comm) || sbuf_error(&c->rec_event))
		return -ENOMEM;
	for (i = 0; i < c->pname.len; i++)
		if (c->pname.buf[i] == ' ')
			c->pname.buf[i] = '_';
	c->pid = pid[0] == '?' ? -1 : to_long(pid, pid_len);
	c->tid = to_long(tid, tid_len);
	c->time_s = h->time_s;
	sbuf_reset(&c->time_str);
	sbuf_add(&c->time_str, h->time_str, h->time_len);
	if (sbuf_error(&c->time_str))
		return -ENOMEM;
	c->java = c->pname.len >= 4 && !memcmp(c->pname.buf, "java", 4);
	/* (comm is at least two bytes, so $pname is never "" or "0": always true) */
	c->have_pname = true;
	c->rec_line = lineno;
	return 0;
}

static int perf_end_record(struct collapse *c)
{
	struct collapse_sample s;
	int err = 0;

	if (!c->have_pname)
		return 0;
	if (c->groups.overflow) {
		collapse_skip(c, c->rec_line, 0, "sample record too large");
	} else {
		groups_join(&c->groups, c->pname.buf, c->pname.len, &c->out);
		if (sbuf_error(&c->out))
			return -ENOMEM;
		s = (struct collapse_sample){
			.time_s = c->time_s,
			.time_str = c->time_str.buf ? c->time_str.buf : "",
			.time_len = c->time_str.len,
			.pid = c->pid,
			.tid = c->tid,
			.comm = c->comm.buf,
			.comm_len = c->comm.len,
			.event = c->rec_event.buf ? c->rec_event.buf : "",
			.event_len = c->rec_event.len,
			.stack = c->out.buf,
			.stack_len = c->out.len,
			.count = c->period,
			.count_huge = c->period_huge,
			.count_f = c->period_f,
			.line = c->rec_line,
		};
		if (isnan(c->time_s))
			c->stats.no_time++;
		if (c->period != 1 || c->period_huge)
			c->stats.weighted++;
		err = collapse_emit(c, &s);
	}
	groups_reset(&c->groups);
	c->have_pname = false;
	return err;
}

int collapse_perf_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno)
{
	struct perf_header h;
	struct perf_frame fr;

	if (n > 0 && l[0] == '#')
		return 0; /* comments and the --header block */
	if (n == 0)
		return perf_end_record(c);
	if (parse_header(l, n, &h))
		return perf_header_line(c, l, &h, lineno);
	if (parse_frame(l, n, &fr)) {
		if (!c->have_pname)
			return 0; /* filtered sample */
		return perf_frame_line(c, &fr);
	}
	collapse_skip(c, lineno, 0, "unrecognized line");
	return 0;
}
