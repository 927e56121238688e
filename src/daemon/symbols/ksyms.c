// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/array.h"
#include "ember/daemon/elf/keysort.h"
#include "ember/core/base/parse.h"

#define MAX_FILE_BYTES (256u << 20)

struct ksym {
	uint64_t addr;
	uint64_t end;
	uint32_t name_off;
	uint32_t mod_off;	/* UINT32_MAX: the kernel itself */
	uint32_t cookie;
	char type;
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t nr_mod;
	bool restricted;
};

static int fail(struct parse_error *reterr, const char *line, const char *p, const char *reason)
{
	if (reterr) {
		reterr->line = 0;
		reterr->col = (unsigned int)(p - line) + 1;
		reterr->reason = reason;
	}
	return -EINVAL;
}

int kallsyms_parse_line(const char *line, size_t len, struct kallsyms_line *ret,
			struct parse_error *reterr)
{
	const char *p = line, *end = line + len, *name, *tab;
	struct kallsyms_line l = { 0 };
	int n = 0, d;

	if (len && end[-1] == '\r')
		end--;
	while (p < end && (d = parse_hexval(*p)) >= 0) {
		if (++n > 16)
			return fail(reterr, line, p, "address too long");
		l.addr = l.addr << 4 | (uint64_t)d;
		p++;
	}
	if (!n)
		return fail(reterr, line, p, "bad address");
	if (p >= end || *p != ' ')
		return fail(reterr, line, p, "expected a space after the address");
	p++;
	if (p >= end || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return fail(reterr, line, p, "bad symbol type");
	l.type = *p++;
	if (p >= end || *p != ' ')
		return fail(reterr, line, p, "expected a space after the type");
	p++;
	name = p;
	tab = memchr(p, '\t', (size_t)(end - p));
	l.name = name;
	l.name_len = (size_t)((tab ? tab : end) - name);
	if (!l.name_len || memchr(name, ' ', l.name_len) || memchr(name, '\0', l.name_len))
		return fail(reterr, line, p, "bad symbol name");
	if (tab) {
		p = tab + 1;
		if (end - p < 3 || *p != '[' || end[-1] != ']')
			return fail(reterr, line, p, "bad module name");
		l.module = p + 1;
		l.module_len = (size_t)(end - p) - 2;
		if (memchr(l.module, '\0', l.module_len) || memchr(l.module, ']', l.module_len))
			return fail(reterr, line, p, "bad module name");
	}
	*ret = l;
	return 0;
}

static int add_str(struct ksyms *k, const char *s, size_t len, uint32_t *ret_off)
{
	if (k->names_len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (array_grow((void **)&k->names, &k->names_cap, k->names_len + len + 1, 1, 1024))
		return -ENOMEM;
	*ret_off = (uint32_t)k->names_len;
	memcpy(k->names + k->names_len, s, len);
	k->names_len += len;
	k->names[k->names_len++] = '\0';
	return 0;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int rank_type(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 'W':
		return 1;
	case 't':
		return 2;
	default:
		return 3;
	}
}

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Address order; at one address the preferred alias first. */
static int cmp_ksym_with(const struct ksym *a, const struct ksym *b, const char *names)
{
	int ra, rb, ua, ub;
	size_t la, lb;

	if (a->addr != b->addr)
		return (a->addr > b->addr) - (a->addr < b->addr);
	ra = rank_type(a->type);
	rb = rank_type(b->type);
	if (ra != rb)
		return (ra > rb) - (ra < rb);
	ua = underscores(names + a->name_off);
	ub = underscores(names + b->name_off);
	if (ua != ub)
		return (ua > ub) - (ua < ub);
	la = strlen(names + a->name_off);
	lb = strlen(names + b->name_off);
	if (la != lb)
		return (la < lb) - (la > lb); /* longer first */
	return strcmp(names + a->name_off, names + b->name_off);
}

static int cmp_ksym_tie(const void *a, const void *b, void *names)
{
	return cmp_ksym_with(a, b, names);
}

static void finish(struct ksyms *k)
{
	size_t i, j;

	keysort(k->syms, k->n, sizeof(*k->syms), offsetof(struct ksym, addr), cmp_ksym_tie,
		k->names);
	/* keep the first (best) alias at each address */
	for (i = 0, j = 0; i < k->n; i++) {
		if (j && k->syms[j - 1].addr == k->syms[i].addr)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->n = j;
	k->nr_mod = 0;
	for (i = 0; i < k->n; i++) {
		struct ksym *s = &k->syms[i];
		uint64_t tail_end = s->addr + KSYMS_MAX_TAIL < s->addr ? UINT64_MAX
								       : s->addr + KSYMS_MAX_TAIL;

		if (s->mod_off != UINT32_MAX)
			k->nr_mod++;
		/* to the next symbol when it is in the same module (or both in the kernel); a
		 * module symbol spans at most KSYMS_MAX_MODULE_SPAN: module text is sparse and
		 * kallsyms has no sizes, so a far gap is the module's, not its previous function's */
		if (i + 1 < k->n && k->syms[i + 1].mod_off == s->mod_off)
			s->end = s->mod_off != UINT32_MAX &&
						 k->syms[i + 1].addr - s->addr > KSYMS_MAX_MODULE_SPAN
					 ? s->addr + KSYMS_MAX_MODULE_SPAN
					 : k->syms[i + 1].addr;
		else if (i + 1 < k->n && k->syms[i + 1].addr < tail_end)
			s->end = k->syms[i + 1].addr;
		else
			s->end = tail_end;
	}
}

/* Parse state across chunks of the file. */
struct ksyms_builder {
	struct ksyms *k;
	unsigned long bad;
	size_t seen, zero;
	/* module names repeat on thousands of lines: reuse the last one's string */
	uint32_t last_mod_off;
	size_t last_mod_len;
};

/* Adds the complete lines in [text, text + len) (a last line without '\n' too). */
static int add_lines(struct ksyms_builder *b, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	struct ksyms *k = b->k;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct kallsyms_line l;
		struct ksym *s;

		if (n && kallsyms_parse_line(p, n, &l, NULL) < 0)
			b->bad++;
		else if (n && is_text(l.type)) {
			b->seen++;
			if (l.addr == 0) {
				b->zero++;
				goto next;
			}
			if (array_grow((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms),
				       1024))
				return -ENOMEM;
			s = &k->syms[k->n];
			*s = (struct ksym){ .addr = l.addr, .type = l.type, .mod_off = UINT32_MAX };
			if (add_str(k, l.name, l.name_len, &s->name_off))
				return -ENOMEM;
			if (l.module) {
				if (b->last_mod_off != UINT32_MAX && b->last_mod_len == l.module_len &&
				    !memcmp(k->names + b->last_mod_off, l.module, l.module_len)) {
					s->mod_off = b->last_mod_off;
				} else {
					if (add_str(k, l.module, l.module_len, &s->mod_off))
						return -ENOMEM;
					b->last_mod_off = s->mod_off;
					b->last_mod_len = l.module_len;
				}
			}
			k->n++;
		}
next:
		p += n + (nl ? 1 : 0);
	}
	return 0;
}

static int builder_init(struct ksyms_builder *b)
{
	*b = (struct ksyms_builder){ .last_mod_off = UINT32_MAX };
	b->k = calloc(1, sizeof(*b->k));
	return b->k ? 0 : -ENOMEM;
}

static struct ksyms *builder_finish(struct ksyms_builder *b, unsigned long *ret_bad)
{
	struct ksyms *k = b->k;

	k->restricted = b->seen > 0 && b->zero == b->seen;
	finish(k);
	if (ret_bad)
		*ret_bad += b->bad;
	return k;
}

struct ksyms *ksyms__from_text(const char *text, size_t len, unsigned long *ret_bad)
{
	struct ksyms_builder b;

	if (builder_init(&b))
		return NULL;
	if (add_lines(&b, text, len)) {
		ksyms__free(b.k);
		errno = ENOMEM;
		return NULL;
	}
	return builder_finish(&b, ret_bad);
}

/*
 * Streams the file through a fixed buffer, parsing whole lines as they come: /proc/kallsyms is
 * several MB that the kernel generates a page per read, and holding all of it (then copying it
 * while the buffer grows) cost as much as parsing it.
 */
struct ksyms *ksyms__load(const char *path, unsigned long *ret_bad)
{
	enum { CHUNK = 256 << 10 };
	struct ksyms_builder b = { 0 };
	size_t len = 0, total = 0;
	char *buf = NULL;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(CHUNK);
	if (!buf || builder_init(&b)) {
		err = ENOMEM;
		goto out;
	}
	/* a kernel has 100 000+ text symbols: start there rather than grow through copies */
	if (array_grow((void **)&b.k->syms, &b.k->cap, 1u << 16, sizeof(*b.k->syms), 1024) ||
	    array_grow((void **)&b.k->names, &b.k->names_cap, 4u << 20, 1, 1024)) {
		err = ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, CHUNK - len);
		const char *nl;
		size_t whole;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		total += (size_t)r;
		if (total > MAX_FILE_BYTES) {
			err = EFBIG;
			goto out;
		}
		nl = memrchr(buf, '\n', len);
		if (!nl) {
			if (len == CHUNK) { /* a line longer than the buffer: not kallsyms */
				b.bad++;
				len = 0;
			}
			continue;
		}
		whole = (size_t)(nl - buf) + 1;
		if (add_lines(&b, buf, whole)) {
			err = ENOMEM;
			goto out;
		}
		memmove(buf, buf + whole, len - whole);
		len -= whole;
	}
	if (len && add_lines(&b, buf, len)) {
		err = ENOMEM;
		goto out;
	}
out:
	free(buf);
	close(fd);
	if (err) {
		ksyms__free(b.k);
		errno = err;
		return NULL;
	}
	return builder_finish(&b, ret_bad);
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

int ksyms__lookup(const struct ksyms *k, uint64_t addr, const char **ret_module)
{
	size_t lo = keysort_upper(k->syms, k->n, sizeof(*k->syms), offsetof(struct ksym, addr),
				  addr);

	if (ret_module)
		*ret_module = NULL;
	if (lo == 0)
		return -ENOENT;
	if (addr < k->syms[lo - 1].end)
		return (int)(lo - 1);
	/* a gap: name the module when the symbols on both sides belong to it */
	if (ret_module && k->syms[lo - 1].mod_off != UINT32_MAX && lo < k->n &&
	    k->syms[lo].mod_off == k->syms[lo - 1].mod_off)
		*ret_module = k->names + k->syms[lo - 1].mod_off;
	return -ENOENT;
}

const char *ksyms__name(const struct ksyms *k, int idx)
{
	return k->names + k->syms[idx].name_off;
}

const char *ksyms__module(const struct ksyms *k, int idx)
{
	return k->syms[idx].mod_off == UINT32_MAX ? NULL : k->names + k->syms[idx].mod_off;
}

uint64_t ksyms__addr(const struct ksyms *k, int idx)
{
	return k->syms[idx].addr;
}

uint32_t ksyms__cookie(const struct ksyms *k, int idx)
{
	return k->syms[idx].cookie;
}

void ksyms__set_cookie(struct ksyms *k, int idx, uint32_t cookie)
{
	k->syms[idx].cookie = cookie;
}

void ksyms__clear_cookies(struct ksyms *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		k->syms[i].cookie = 0;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k->n;
}

size_t ksyms__nr_module_syms(const struct ksyms *k)
{
	return k->nr_mod;
}

bool ksyms__restricted(const struct ksyms *k)
{
	return k->restricted;
}

size_t ksyms__mem_bytes(const struct ksyms *k)
{
	return sizeof(*k) + k->cap * sizeof(*k->syms) + k->names_cap;
}
