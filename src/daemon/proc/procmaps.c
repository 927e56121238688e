// SPDX-License-Identifier: MIT
#include "ember/daemon/proc/procmaps.h"

#include <errno.h>
#include <string.h>

#include "ember/core/base/parse.h"

struct cursor {
	const char *p, *end, *line;
};

static int fail(struct parse_error *reterr, const struct cursor *c, const char *reason)
{
	if (reterr) {
		reterr->line = 0;
		reterr->col = (unsigned int)(c->p - c->line) + 1;
		reterr->reason = reason;
	}
	return -EINVAL;
}

/* At least one hex digit, at most 16 (no overflow). */
static bool hex(struct cursor *c, uint64_t *ret)
{
	uint64_t v = 0;
	int n = 0, d;

	while (c->p < c->end && (d = parse_hexval(*c->p)) >= 0) {
		if (++n > 16)
			return false;
		v = v << 4 | (uint64_t)d;
		c->p++;
	}
	*ret = v;
	return n > 0;
}

static bool dec(struct cursor *c, uint64_t *ret)
{
	uint64_t v = 0;
	int n = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		c->p++;
		n++;
	}
	*ret = v;
	return n > 0;
}

static bool ch(struct cursor *c, char want)
{
	if (c->p < c->end && *c->p == want) {
		c->p++;
		return true;
	}
	return false;
}

static bool spaces(struct cursor *c)
{
	const char *p0 = c->p;

	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	return c->p > p0;
}

static bool perm(struct cursor *c, char set, bool *ret)
{
	if (c->p >= c->end)
		return false;
	if (*c->p == set)
		*ret = true;
	else if (*c->p == '-')
		*ret = false;
	else
		return false;
	c->p++;
	return true;
}

#define DELETED " (deleted)"

void procmaps_classify(const char *path, size_t plen, struct procmaps_entry *e)
{
	e->deleted = false;
	if (plen >= sizeof(DELETED) - 1 &&
	    !memcmp(path + plen - (sizeof(DELETED) - 1), DELETED, sizeof(DELETED) - 1)) {
		e->deleted = true;
		plen -= sizeof(DELETED) - 1;
	}
	if (plen == 0) {
		e->kind = PROCMAPS_ANON;
	} else if (path[0] == '[' && path[plen - 1] == ']') {
		if (plen == 6 && !memcmp(path, "[vdso]", 6))
			e->kind = PROCMAPS_VDSO;
		else if (plen >= 6 && !memcmp(path, "[anon:", 6))
			e->kind = PROCMAPS_ANON;
		else
			e->kind = PROCMAPS_SPECIAL;
	} else if (plen >= 6 && !memcmp(path, "//anon", 6)) {
		e->kind = PROCMAPS_ANON;
	} else {
		e->kind = PROCMAPS_FILE;
	}
	e->path = plen ? path : "";
	e->path_len = plen;
}

int procmaps_parse_line(const char *line, size_t len, struct procmaps_entry *ret,
			struct parse_error *reterr)
{
	struct cursor c = { .p = line, .end = line + len, .line = line };
	struct procmaps_entry e = { .kind = PROCMAPS_ANON };
	uint64_t major, minor;

	if (len && line[len - 1] == '\r')
		c.end--;
	if (!hex(&c, &e.start) || !ch(&c, '-'))
		return fail(reterr, &c, "bad start address");
	if (!hex(&c, &e.end))
		return fail(reterr, &c, "bad end address");
	if (e.end < e.start)
		return fail(reterr, &c, "end before start");
	if (!spaces(&c))
		return fail(reterr, &c, "expected a space");
	if (!perm(&c, 'r', &e.r) || !perm(&c, 'w', &e.w) || !perm(&c, 'x', &e.x))
		return fail(reterr, &c, "bad permissions");
	if (ch(&c, 's'))
		e.shared = true;
	else if (!ch(&c, 'p'))
		return fail(reterr, &c, "bad sharing flag");
	if (!spaces(&c) || !hex(&c, &e.pgoff))
		return fail(reterr, &c, "bad offset");
	if (!spaces(&c) || !hex(&c, &major) || !ch(&c, ':') || !hex(&c, &minor) ||
	    major > UINT32_MAX || minor > UINT32_MAX)
		return fail(reterr, &c, "bad device");
	e.dev_major = (uint32_t)major;
	e.dev_minor = (uint32_t)minor;
	if (!spaces(&c) || !dec(&c, &e.inode))
		return fail(reterr, &c, "bad inode");
	if (c.p < c.end && !spaces(&c))
		return fail(reterr, &c, "junk after inode");
	procmaps_classify(c.p, (size_t)(c.end - c.p), &e);
	*ret = e;
	return 0;
}

int procmaps_parse(const char *text, size_t len, procmaps_entry_fn fn, void *ctx,
		   unsigned long *ret_bad)
{
	const char *p = text, *end = text + len;
	unsigned long bad = 0;
	int r = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct procmaps_entry e;

		if (n) {
			if (procmaps_parse_line(p, n, &e, NULL) == 0) {
				r = fn(&e, ctx);
				if (r)
					break;
			} else {
				bad++;
			}
		}
		p += n + (nl ? 1 : 0);
	}
	if (ret_bad)
		*ret_bad = bad;
	return r;
}

const char *procmaps_basename(const struct procmaps_entry *e, size_t *ret_len)
{
	const char *p = e->path + e->path_len;

	while (p > e->path && p[-1] != '/')
		p--;
	*ret_len = (size_t)(e->path + e->path_len - p);
	return p;
}

bool procmaps_is_loader(const struct procmaps_entry *e)
{
	size_t n;
	const char *b = procmaps_basename(e, &n);

	return n >= 6 &&
	       (!strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-musl", 7) || !strncmp(b, "ld.so", 5));
}

bool procmaps_is_shared_object(const struct procmaps_entry *e)
{
	size_t i;

	if (procmaps_is_loader(e))
		return false;
	for (i = 0; i + 3 <= e->path_len; i++)
		if (!memcmp(e->path + i, ".so", 3) && (i + 3 == e->path_len || e->path[i + 3] == '.'))
			return true;
	return false;
}
