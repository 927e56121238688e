// SPDX-License-Identifier: MIT
/* collapse: the parser object, format detection and the pieces the three formats share. */
#include "ember/core/formats/collapse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "collapse_priv.h"

/* perl's \w on bytes: [A-Za-z0-9_] */
const unsigned char collapse_word_chars[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
	['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
	['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
	['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
	['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
};

static const char *const format_names[] = {
	[COLLAPSE_FORMAT_AUTO] = "auto",
	[COLLAPSE_FORMAT_PERF] = "perf",
	[COLLAPSE_FORMAT_DTRACE] = "dtrace",
	[COLLAPSE_FORMAT_BPFTRACE] = "bpftrace",
};

const char *collapse_format_name(enum collapse_format f)
{
	if ((unsigned int)f < sizeof(format_names) / sizeof(format_names[0]))
		return format_names[f];
	return "?";
}

int collapse_format_parse(const char *s, enum collapse_format *ret)
{
	size_t i;

	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (!strcmp(s, format_names[i])) {
			*ret = (enum collapse_format)i;
			return 0;
		}
	return -EINVAL;
}

struct collapse *collapse__new(const struct collapse_opts *opts, collapse_sample_fn fn, void *ctx)
{
	struct collapse *c;

	if ((unsigned int)opts->format > COLLAPSE_FORMAT_BPFTRACE) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->opts = *opts;
	c->fn = fn;
	c->ctx = ctx;
	c->fmt = opts->format;
	c->pid = c->tid = -1;
	c->time_s = NAN;
	c->event = strdup(opts->event_filter ? opts->event_filter : "");
	c->other_event = strdup("");
	if (!c->event || !c->other_event)
		goto nomem;
	c->opts.event_filter = c->event;
	c->event_set = c->event[0] != '\0';
	c->event_defaulted = c->event_set && opts->event_defaulted;
	return c;
nomem:
	collapse__free(c);
	errno = ENOMEM;
	return NULL;
}

void collapse__free(struct collapse *c)
{
	if (!c)
		return;
	sbuf_fini(&c->held);
	sbuf_fini(&c->groups.text);
	free(c->groups.end);
	sbuf_fini(&c->out);
	sbuf_fini(&c->work);
	sbuf_fini(&c->grp);
	sbuf_fini(&c->pname);
	sbuf_fini(&c->comm);
	sbuf_fini(&c->rec_event);
	sbuf_fini(&c->time_str);
	free(c->event);
	free(c->other_event);
	free(c);
}

void collapse__set_name(struct collapse *c, const char *name)
{
	c->name = name;
}

enum collapse_format collapse__format(const struct collapse *c)
{
	return c->fmt;
}

const char *collapse__event(const struct collapse *c)
{
	return c->event;
}

bool collapse__event_defaulted(const struct collapse *c)
{
	return c->event_defaulted;
}

int collapse__set_event(struct collapse *c, const char *event, bool defaulted)
{
	char *ev;

	if (c->event_set || !event || !event[0])
		return 0;
	ev = strdup(event);
	if (!ev)
		return -ENOMEM;
	free(c->event);
	c->event = ev;
	c->event_set = true;
	c->event_defaulted = defaulted;
	return 0;
}

const char *collapse__other_event(const struct collapse *c)
{
	return c->other_event;
}

const struct collapse_stats *collapse__stats(const struct collapse *c)
{
	return &c->stats;
}

bool collapse__clean(const struct collapse *c)
{
	switch (c->fmt) {
	case COLLAPSE_FORMAT_PERF:
		return !c->have_pname && c->groups.n == 0 && !c->groups.overflow;
	case COLLAPSE_FORMAT_DTRACE:
		return c->nr >= 3 && c->groups.n == 0 && !c->groups.overflow;
	case COLLAPSE_FORMAT_BPFTRACE:
		return !c->in_stack;
	default:
		return c->nheld == 0;
	}
}

void collapse_skip(struct collapse *c, unsigned long lineno, unsigned int col, const char *reason)
{
	struct parse_error e = { .line = lineno, .col = col, .reason = reason };

	c->stats.skipped++;
	if (c->opts.on_skip)
		c->opts.on_skip(c->name ? c->name : "<input>", &e, c->opts.on_skip_ctx);
}

void collapse__feed_long(struct collapse *c, unsigned long lineno)
{
	struct parse_error e = { .line = lineno, .reason = "line too long" };

	c->stats.lines++;
	c->stats.long_lines++;
	if (c->opts.on_skip)
		c->opts.on_skip(c->name ? c->name : "<input>", &e, c->opts.on_skip_ctx);
}

void collapse_count(const char *s, size_t n, uint64_t *ret_u, bool *ret_huge, double *ret_f)
{
	uint64_t u = 0;
	double f = 0;
	bool huge = false;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (!huge && (u > (UINT64_MAX - d) / 10)) {
			huge = true;
			f = (double)u;
		}
		if (huge)
			f = f * 10 + d;
		else
			u = u * 10 + d;
	}
	*ret_u = huge ? UINT64_MAX : u;
	*ret_huge = huge;
	*ret_f = huge ? f : (double)u;
}

void groups_reset(struct frame_groups *g)
{
	sbuf_reset(&g->text);
	g->n = 0;
	g->overflow = false;
}

int groups_push(struct frame_groups *g, const struct sbuf *grp, size_t nfuncs)
{
	if (!nfuncs || g->overflow)
		return 0;
	if (g->text.len + grp->len + g->n + 1 > COLLAPSE_MAX_RECORD) {
		g->overflow = true;
		return 0;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		size_t *ne = realloc(g->end, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		g->end = ne;
		g->cap = cap;
	}
	sbuf_add(&g->text, grp->buf ? grp->buf : "", grp->len);
	if (sbuf_error(&g->text))
		return -ENOMEM;
	g->end[g->n++] = g->text.len;
	return 0;
}

int groups_close(struct frame_groups *g, size_t start, size_t nfuncs)
{
	if (sbuf_error(&g->text))
		return -ENOMEM;
	if (!nfuncs || g->overflow) {
		g->text.len = start;
		return 0;
	}
	if (g->text.len + g->n + 1 > COLLAPSE_MAX_RECORD) {
		g->overflow = true;
		g->text.len = start;
		return 0;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		size_t *ne = realloc(g->end, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		g->end = ne;
		g->cap = cap;
	}
	g->end[g->n++] = g->text.len;
	return 0;
}

void groups_join(const struct frame_groups *g, const char *first, size_t first_len,
		 struct sbuf *out)
{
	size_t i, start;
	bool sep = false;

	sbuf_reset(out);
	if (sbuf_grow(out, first_len + g->text.len + g->n + 1))
		return;
	if (first) {
		sbuf_add(out, first, first_len);
		sep = true;
	}
	for (i = g->n; i-- > 0;) {
		start = i ? g->end[i - 1] : 0;
		if (sep)
			out->buf[out->len++] = ';';
		memcpy(out->buf + out->len, g->text.buf + start, g->end[i] - start);
		out->len += g->end[i] - start;
		sep = true;
	}
	out->buf[out->len] = '\0';
}

int collapse_emit(struct collapse *c, struct collapse_sample *s)
{
	c->stats.samples++;
	if (!c->fn)
		return 0;
	return c->fn(s, c->ctx);
}

int split_arrows(struct collapse *c, const char *s, size_t n, split_fn fn, void *ctx,
		 size_t *ret_nfields)
{
	size_t start = 0, end, idx, nkeep = 0;
	const char *p;
	int err;

	if (!memchr(s, '>', n)) {
		/* no arrow: one field, or none for an empty string */
		*ret_nfields = n > 0;
		return n > 0 ? fn(c, s, n, 0, ctx) : 0;
	}
	/* pass 1: perl's split drops trailing empty fields; count the fields up to the last
	 * non-empty one (all empty: none at all) */
	for (idx = 1;; idx++) {
		p = start < n ? memmem(s + start, n - start, "->", 2) : NULL;
		end = p ? (size_t)(p - s) : n;
		if (end > start)
			nkeep = idx;
		if (!p)
			break;
		start = end + 2;
	}
	start = 0;
	for (idx = 0; idx < nkeep; idx++) {
		p = start < n ? memmem(s + start, n - start, "->", 2) : NULL;
		end = p ? (size_t)(p - s) : n;
		err = fn(c, s + start, end - start, idx, ctx);
		if (err)
			return err;
		start = end + 2;
	}
	*ret_nfields = nkeep;
	return 0;
}

/*
 * Format detection, one line at a time. Decisive signs: perf's --header lines, a perf frame
 * line ("  addr sym (module)"), bpftrace's "@[" or "Attaching N probes", DTrace's column header
 * or a count line after frame lines, or a "module`function" frame.
 */
enum { DETECT_NONE = 0, DETECT_FRAME = 1 };

static bool perf_frame_line(const char *l, size_t n)
{
	size_t i = 0, h;

	while (i < n && pl_space((unsigned char)l[i]))
		i++;
	h = i;
	while (i < n && ((l[i] >= '0' && l[i] <= '9') || (l[i] >= 'a' && l[i] <= 'f')))
		i++;
	/* old perf versions print frames without indentation: then ask for a long address */
	if (i == h || i >= n || l[i] != ' ' || (h == 0 && i < 6))
		return false;
	while (n > i && pl_space((unsigned char)l[n - 1]))
		n--;
	return n > i + 3 && l[n - 1] == ')' && memmem(l + i, n - i, " (", 2);
}

static enum collapse_format detect_line(int *state, const char *l, size_t n)
{
	size_t i = 0;
	bool digits = true;

	if (n >= 2 && l[0] == '#' && l[1] == ' ' &&
	    (memmem(l, n, "=====", 5) || memmem(l, n, "captured on", 11) ||
	     memmem(l, n, "cmdline", 7) || memmem(l, n, "perf version", 12)))
		return COLLAPSE_FORMAT_PERF;
	if (n >= 2 && l[0] == '@' && l[1] == '[')
		return COLLAPSE_FORMAT_BPFTRACE;
	if (n > 10 && !memcmp(l, "Attaching ", 10) && memmem(l, n, " probe", 6))
		return COLLAPSE_FORMAT_BPFTRACE;
	if (n >= 3 && !memcmp(l, "CPU", 3) && memmem(l, n, "FUNCTION:NAME", 13))
		return COLLAPSE_FORMAT_DTRACE;
	if (perf_frame_line(l, n))
		return COLLAPSE_FORMAT_PERF;
	while (i < n && pl_space((unsigned char)l[i]))
		i++;
	if (i == n) {
		return COLLAPSE_FORMAT_AUTO; /* blank: keeps the state */
	}
	if (i > 0) {
		size_t j;

		for (j = i; j < n; j++)
			if (!pl_digit((unsigned char)l[j]))
				digits = false;
		if (digits && *state == DETECT_FRAME)
			return COLLAPSE_FORMAT_DTRACE;
		if (memchr(l + i, '`', n - i) && !memchr(l + i, '(', n - i))
			return COLLAPSE_FORMAT_DTRACE;
		*state = DETECT_FRAME;
		return COLLAPSE_FORMAT_AUTO;
	}
	*state = DETECT_NONE;
	return COLLAPSE_FORMAT_AUTO;
}

enum collapse_format collapse_detect(const char *buf, size_t len)
{
	int state = DETECT_NONE;
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		enum collapse_format f = detect_line(&state, buf + off, n);

		if (f != COLLAPSE_FORMAT_AUTO)
			return f;
		off += n + 1;
	}
	return COLLAPSE_FORMAT_AUTO;
}

static int feed_fmt(struct collapse *c, const char *line, size_t len, unsigned long lineno)
{
	c->stats.lines++;
	switch (c->fmt) {
	case COLLAPSE_FORMAT_PERF:
		return collapse_perf_feed(c, line, len, lineno);
	case COLLAPSE_FORMAT_DTRACE:
		return collapse_dtrace_feed(c, line, len, lineno);
	case COLLAPSE_FORMAT_BPFTRACE:
		return collapse_bpftrace_feed(c, line, len, lineno);
	default:
		return -EINVAL;
	}
}

/* Replays the held lines into the now known format. */
static int replay(struct collapse *c)
{
	struct sbuf held = c->held;
	size_t off = 0, n = c->nheld;
	int err = 0;

	c->held = (struct sbuf)SBUF_INIT;
	c->nheld = 0;
	while (n-- > 0 && !err) {
		unsigned long lineno;
		size_t len;

		memcpy(&lineno, held.buf + off, sizeof(lineno));
		memcpy(&len, held.buf + off + sizeof(lineno), sizeof(len));
		off += sizeof(lineno) + sizeof(len);
		err = feed_fmt(c, held.buf + off, len, lineno);
		off += len;
	}
	sbuf_fini(&held);
	return err;
}

int collapse__feed(struct collapse *c, const char *line, size_t len, unsigned long lineno)
{
	enum collapse_format f;

	if (c->err)
		return c->err;
	if (c->fmt != COLLAPSE_FORMAT_AUTO)
		return feed_fmt(c, line, len, lineno);
	f = detect_line(&c->detect_state, line, len);
	if (len)
		c->saw_content = true;
	if (c->nheld >= COLLAPSE_DETECT_MAX_LINES ||
	    c->held.len + len > COLLAPSE_DETECT_MAX_BYTES)
		return -EINVAL;
	sbuf_add(&c->held, &lineno, sizeof(lineno));
	sbuf_add(&c->held, &len, sizeof(len));
	sbuf_add(&c->held, line, len);
	if (sbuf_error(&c->held))
		return c->err = -ENOMEM;
	c->nheld++;
	if (f == COLLAPSE_FORMAT_AUTO)
		return 0;
	c->fmt = f;
	return replay(c);
}

int collapse__read(struct collapse *c, struct lineread *lr, const char *name)
{
	const char *line;
	size_t len;
	int r;

	collapse__set_name(c, name);
	for (;;) {
		r = lineread__next(lr, &line, &len);
		if (r == 0)
			return 0;
		if (r == -E2BIG) {
			collapse__feed_long(c, lineread__lineno(lr));
			continue;
		}
		if (r < 0)
			return r;
		r = collapse__feed(c, line, len, lineread__lineno(lr));
		if (r)
			return r;
	}
}

int collapse__finish(struct collapse *c)
{
	if (c->err)
		return c->err;
	if (c->fmt == COLLAPSE_FORMAT_AUTO) {
		if (!c->saw_content)
			return 0; /* empty input: nothing to tell, nothing lost */
		return -EINVAL;
	}
	switch (c->fmt) {
	case COLLAPSE_FORMAT_PERF:
		if (c->have_pname)
			c->stats.incomplete++;
		c->have_pname = false;
		break;
	case COLLAPSE_FORMAT_DTRACE:
		if (c->groups.n)
			c->stats.incomplete++;
		break;
	case COLLAPSE_FORMAT_BPFTRACE:
		if (c->in_stack)
			c->stats.incomplete++;
		c->in_stack = false;
		break;
	default:
		break;
	}
	groups_reset(&c->groups);
	return 0;
}

int collapse_read_profile(struct lineread *lr, const char *name, const struct collapse_opts *opts,
			  struct profile *p, struct collapse_stats *stats)
{
	struct collapse_agg *a = collapse_agg__new();
	struct collapse *c = a ? collapse__new(opts, collapse_agg_sample_cb, a) : NULL;
	int err;

	if (!c) {
		err = -errno;
		goto out;
	}
	err = collapse__read(c, lr, name);
	if (!err)
		err = collapse__finish(c);
	if (!err)
		err = collapse_agg__to_profile(a, p);
	if (stats)
		*stats = c->stats;
out:
	collapse__free(c);
	collapse_agg__free(a);
	return err;
}

const char *collapse_count_unit(const char *event, bool weighted)
{
	size_t n;

	if (!weighted)
		return "samples";
	/* perf prints modifiers after a colon: "cpu-clock:pppH" */
	n = event ? strcspn(event, ":") : 0;
	if ((n == 9 && !strncmp(event, "cpu-clock", 9)) || (n == 10 && !strncmp(event, "task-clock", 10)))
		return "ns";
	return "events";
}
