// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/array.h"
#include "ember/daemon/elf/keysort.h"
#include "ember/core/base/parse.h"

struct pm_sym {
	uint64_t start, end;
	uint32_t name_off, name_len;
	uint32_t seq;		/* order of appearance: the later wins an overlap */
	uint32_t cookie;
};

struct perfmap {
	struct pm_sym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	uint32_t seq;
	uint64_t max_size;	/* the largest symbol: bounds the backwards walk in lookup */
	size_t max_entries;	/* 0: no bound */
	size_t max_bytes;	/* of entries and names; 0: no bound */
	bool defer_sort, unsorted; /* perfmap__defer_sort(): adds not sorted in yet */
};

static int cmp_seq(const void *a, const void *b, void *ctx);

static void sort_syms(struct perfmap *pm)
{
	keysort(pm->syms, pm->n, sizeof(*pm->syms), offsetof(struct pm_sym, start), cmp_seq, NULL);
	pm->unsorted = false;
}

void perfmap__defer_sort(struct perfmap *pm, bool defer)
{
	pm->defer_sort = defer;
	if (!defer && pm->unsorted)
		sort_syms(pm);
}

void perfmap__set_max_entries(struct perfmap *pm, size_t max)
{
	pm->max_entries = max;
}

void perfmap__set_max_bytes(struct perfmap *pm, size_t max)
{
	pm->max_bytes = max;
}

size_t perfmap__data_bytes(const struct perfmap *pm)
{
	return pm->n * sizeof(*pm->syms) + pm->names_len;
}

static int fail(struct parse_error *reterr, const char *line, const char *p, const char *reason)
{
	if (reterr) {
		reterr->line = 0;
		reterr->col = (unsigned int)(p - line) + 1;
		reterr->reason = reason;
	}
	return -EINVAL;
}

int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *ret,
		       struct parse_error *reterr)
{
	const char *p = line, *end = line + len, *q;
	struct perfmap_entry e;

	if (len > PERFMAP_MAX_LINE)
		return fail(reterr, line, line, "line too long");
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	q = parse_hex_u64(p, end, &e.start);
	if (!q)
		return fail(reterr, line, p, "bad start address");
	p = q;
	if (p >= end || (*p != ' ' && *p != '\t'))
		return fail(reterr, line, p, "expected a space after the address");
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	q = parse_hex_u64(p, end, &e.size);
	if (!q)
		return fail(reterr, line, p, "bad size");
	p = q;
	if (p >= end || (*p != ' ' && *p != '\t'))
		return fail(reterr, line, p, "expected a space after the size");
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end)
		return fail(reterr, line, p, "no name");
	if (e.size == 0)
		return fail(reterr, line, line, "zero size");
	if (e.start + e.size < e.start)
		return fail(reterr, line, line, "symbol wraps around the address space");
	if (memchr(p, '\0', (size_t)(end - p)))
		return fail(reterr, line, p, "NUL byte in name");
	e.name = p;
	e.name_len = (size_t)(end - p);
	*ret = e;
	return 0;
}

struct perfmap *perfmap__new(void)
{
	return calloc(1, sizeof(struct perfmap));
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->syms);
	free(pm->names);
	free(pm);
}

/* At one start address, the entry read first comes first. */
static int cmp_seq(const void *a, const void *b, void *ctx)
{
	const struct pm_sym *x = a, *y = b;

	(void)ctx;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int perfmap__add_text(struct perfmap *pm, const char *text, size_t len, size_t *ret_used,
		      unsigned long *ret_bad)
{
	const char *p = text, *end = text + len;
	size_t n0 = pm->n, names0 = pm->names_len;
	unsigned long bad = 0;
	uint32_t seq0 = pm->seq;
	uint64_t max0 = pm->max_size;
	bool full = false;

	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct perfmap_entry e;
		struct pm_sym *s;

		if (!nl)
			break;
		if (pm->max_entries && pm->n >= pm->max_entries) {
			full = true; /* consumed, not added */
			p = nl + 1;
			continue;
		}
		if (nl == p || perfmap_parse_line(p, (size_t)(nl - p), &e, NULL)) {
			if (nl != p)
				bad++;
			p = nl + 1;
			continue;
		}
		if (pm->max_bytes &&
		    perfmap__data_bytes(pm) + sizeof(*pm->syms) + e.name_len + 1 > pm->max_bytes) {
			full = true; /* consumed, not added */
			p = nl + 1;
			continue;
		}
		if (array_grow((void **)&pm->syms, &pm->cap, pm->n + 1, sizeof(*pm->syms), 64) ||
		    array_grow((void **)&pm->names, &pm->names_cap, pm->names_len + e.name_len + 1,
			       1, 64))
			goto enomem;
		s = &pm->syms[pm->n++];
		*s = (struct pm_sym){ .start = e.start, .end = e.start + e.size,
				      .name_off = (uint32_t)pm->names_len,
				      .name_len = (uint32_t)e.name_len, .seq = pm->seq++ };
		memcpy(pm->names + pm->names_len, e.name, e.name_len);
		pm->names_len += e.name_len;
		pm->names[pm->names_len++] = '\0';
		if (e.size > pm->max_size)
			pm->max_size = e.size;
		p = nl + 1;
	}
	if (pm->n != n0) {
		pm->unsorted = true;
		if (!pm->defer_sort)
			sort_syms(pm);
	}
	*ret_used = (size_t)(p - text);
	if (ret_bad)
		*ret_bad += bad;
	return full ? -E2BIG : 0;

enomem:
	/* drop this call's partial additions: they are at the end, not yet sorted in */
	pm->n = n0;
	pm->names_len = names0;
	pm->seq = seq0;
	pm->max_size = max0;
	return -ENOMEM;
}

int perfmap__lookup(const struct perfmap *pm, uint64_t addr)
{
	/* after the last symbol with start <= addr */
	size_t lo = keysort_upper(pm->syms, pm->n, sizeof(*pm->syms),
				  offsetof(struct pm_sym, start), addr), i;
	int best = -ENOENT;

	/*
	 * Walk back over the symbols that start early enough to reach @addr (start >= addr -
	 * max_size) and keep the latest one that contains it. Bounded so that a pathological map
	 * (one huge symbol, many small ones) costs at most 64 steps per lookup.
	 */
	for (i = lo; i > 0 && lo - i < 64; i--) {
		const struct pm_sym *s = &pm->syms[i - 1];

		if (addr - s->start >= pm->max_size)
			break;
		if (addr < s->end && (best < 0 || s->seq > pm->syms[best].seq))
			best = (int)(i - 1);
	}
	return best;
}

const char *perfmap__name(const struct perfmap *pm, int idx, size_t *ret_len)
{
	if (ret_len)
		*ret_len = pm->syms[idx].name_len;
	return pm->names + pm->syms[idx].name_off;
}

uint32_t perfmap__cookie(const struct perfmap *pm, int idx)
{
	return pm->syms[idx].cookie;
}

void perfmap__set_cookie(struct perfmap *pm, int idx, uint32_t cookie)
{
	pm->syms[idx].cookie = cookie;
}

void perfmap__clear_cookies(struct perfmap *pm)
{
	size_t i;

	for (i = 0; i < pm->n; i++)
		pm->syms[i].cookie = 0;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return pm->n;
}

size_t perfmap__mem_bytes(const struct perfmap *pm)
{
	return sizeof(*pm) + pm->cap * sizeof(*pm->syms) + pm->names_cap;
}
