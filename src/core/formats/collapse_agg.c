// SPDX-License-Identifier: MIT
/*
 * collapse_agg: folded stack text -> summed count, the %collapsed hash of the stackcollapse
 * scripts. Open addressing over an insertion-ordered entry array; the stack bytes live in one
 * arena. Sums are exact 64-bit integers and turn into doubles past 2^64, as perl's do.
 */
#include "ember/core/formats/collapse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/folded.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/sbuf.h"

struct agg_entry {
	uint64_t hash;
	size_t off, len;	/* in the arena */
	uint64_t count;
	double count_f;		/* valid when huge */
	bool huge;
};

struct collapse_agg {
	struct agg_entry *e;
	size_t n, cap;
	uint32_t *slots;	/* entry index + 1; 0 is empty */
	size_t nslots;		/* power of two */
	char *arena;
	size_t arena_len, arena_cap;
};

struct collapse_agg *collapse_agg__new(void)
{
	struct collapse_agg *a = calloc(1, sizeof(*a));

	if (!a)
		errno = ENOMEM;
	return a;
}

void collapse_agg__free(struct collapse_agg *a)
{
	if (!a)
		return;
	free(a->e);
	free(a->slots);
	free(a->arena);
	free(a);
}

size_t collapse_agg__nr_stacks(const struct collapse_agg *a)
{
	return a->n;
}

size_t collapse_agg__mem_bytes(const struct collapse_agg *a)
{
	return sizeof(*a) + a->cap * sizeof(*a->e) + a->nslots * sizeof(*a->slots) + a->arena_cap;
}

static int rehash(struct collapse_agg *a, size_t nslots)
{
	uint32_t *s = calloc(nslots, sizeof(*s));
	size_t i, j;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < a->n; i++) {
		for (j = a->e[i].hash & (nslots - 1); s[j]; j = (j + 1) & (nslots - 1))
			;
		s[j] = (uint32_t)(i + 1);
	}
	free(a->slots);
	a->slots = s;
	a->nslots = nslots;
	return 0;
}

static void add_to(struct agg_entry *e, uint64_t count, bool huge, double count_f)
{
	if (!e->huge && !huge && e->count <= UINT64_MAX - count) {
		e->count += count;
		return;
	}
	e->count_f = (e->huge ? e->count_f : (double)e->count) + (huge ? count_f : (double)count);
	e->huge = true;
	e->count = UINT64_MAX;
}

static int add(struct collapse_agg *a, const char *stack, size_t len, uint64_t count, bool huge,
	       double count_f)
{
	uint64_t h = hash_bytes(stack, len, 0x5eed);
	struct agg_entry *e;
	size_t j;
	int err;

	if (a->nslots) {
		for (j = h & (a->nslots - 1); a->slots[j]; j = (j + 1) & (a->nslots - 1)) {
			e = &a->e[a->slots[j] - 1];
			if (e->hash == h && e->len == len && !memcmp(a->arena + e->off, stack, len)) {
				add_to(e, count, huge, count_f);
				return 0;
			}
		}
	}
	if (a->n >= UINT32_MAX - 1)
		return -ENOMEM;
	if ((a->n + 1) * 4 > a->nslots * 3) {
		err = rehash(a, a->nslots ? a->nslots * 2 : 1024);
		if (err)
			return err;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 512;
		struct agg_entry *ne = realloc(a->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		a->e = ne;
		a->cap = cap;
	}
	if (a->arena_len + len + 1 > a->arena_cap) {
		size_t cap = a->arena_cap ? a->arena_cap : 64 << 10;
		char *na;

		while (cap < a->arena_len + len + 1)
			cap *= 2;
		na = realloc(a->arena, cap);
		if (!na)
			return -ENOMEM;
		a->arena = na;
		a->arena_cap = cap;
	}
	memcpy(a->arena + a->arena_len, stack, len);
	a->arena[a->arena_len + len] = '\0';
	a->e[a->n] = (struct agg_entry){ .hash = h, .off = a->arena_len, .len = len };
	add_to(&a->e[a->n], count, huge, count_f);
	a->arena_len += len + 1;
	for (j = h & (a->nslots - 1); a->slots[j]; j = (j + 1) & (a->nslots - 1))
		;
	a->slots[j] = (uint32_t)(++a->n);
	return 0;
}

int collapse_agg__add(struct collapse_agg *a, const char *stack, size_t len, uint64_t count)
{
	return add(a, stack, len, count, false, (double)count);
}

int collapse_agg__add_sample(struct collapse_agg *a, const struct collapse_sample *s)
{
	return add(a, s->stack, s->stack_len, s->count, s->count_huge, s->count_f);
}

int collapse_agg_sample_cb(const struct collapse_sample *s, void *ctx)
{
	return collapse_agg__add_sample(ctx, s);
}

int collapse_agg__merge(struct collapse_agg *dst, const struct collapse_agg *src)
{
	size_t i;
	int err;

	for (i = 0; i < src->n; i++) {
		const struct agg_entry *e = &src->e[i];

		err = add(dst, src->arena + e->off, e->len, e->count, e->huge, e->count_f);
		if (err)
			return err;
	}
	return 0;
}

struct sort_key {
	const char *s;
	size_t len, idx;
};

static int cmp_keys(const void *x, const void *y)
{
	const struct sort_key *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(a->s, b->s, n);

	if (r)
		return r;
	return (a->len > b->len) - (a->len < b->len);
}

/* Entry order for output: sorted by stack bytes (perl's cmp), or insertion order. NULL. */
static size_t *order(const struct collapse_agg *a, bool sorted)
{
	size_t *idx = malloc((a->n ? a->n : 1) * sizeof(*idx)), i;
	struct sort_key *k;

	if (!idx)
		return NULL;
	for (i = 0; i < a->n; i++)
		idx[i] = i;
	if (!sorted || a->n < 2)
		return idx;
	/* keys carry their own pointers: no shared sort context, so any thread may write */
	k = malloc(a->n * sizeof(*k));
	if (!k) {
		free(idx);
		return NULL;
	}
	for (i = 0; i < a->n; i++)
		k[i] = (struct sort_key){ .s = a->arena + a->e[i].off, .len = a->e[i].len, .idx = i };
	qsort(k, a->n, sizeof(*k), cmp_keys);
	for (i = 0; i < a->n; i++)
		idx[i] = k[i].idx;
	free(k);
	return idx;
}

static void add_entry(const struct collapse_agg *a, const struct agg_entry *e, struct sbuf *sb)
{
	sbuf_add(sb, a->arena + e->off, e->len);
	sbuf_addc(sb, ' ');
	if (e->huge)
		sbuf_addf(sb, "%.15g", e->count_f); /* perl's NV format */
	else
		sbuf_addu(sb, e->count);
	sbuf_addc(sb, '\n');
}

int collapse_agg__foreach(const struct collapse_agg *a,
			  int (*fn)(const char *stack, size_t len, double count, void *ctx), void *ctx)
{
	size_t i;
	int r;

	for (i = 0; i < a->n; i++) {
		const struct agg_entry *e = &a->e[i];

		r = fn(a->arena + e->off, e->len, e->huge ? e->count_f : (double)e->count, ctx);
		if (r)
			return r;
	}
	return 0;
}

int collapse_agg__write(const struct collapse_agg *a, bool sorted, struct sbuf *sb)
{
	size_t *idx = order(a, sorted), i;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < a->n; i++)
		add_entry(a, &a->e[idx[i]], sb);
	free(idx);
	return sbuf_error(sb);
}

int collapse_agg__write_file(const struct collapse_agg *a, bool sorted, FILE *f)
{
	struct sbuf sb = SBUF_INIT;
	size_t *idx = order(a, sorted), i;
	int err = 0;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < a->n && !err; i++) {
		add_entry(a, &a->e[idx[i]], &sb);
		if (sb.len >= (1u << 20) || i + 1 == a->n) {
			if (sbuf_error(&sb))
				err = -ENOMEM;
			else if (sb.len && fwrite(sb.buf, 1, sb.len, f) != sb.len)
				err = -EIO;
			sbuf_reset(&sb);
		}
	}
	sbuf_fini(&sb);
	free(idx);
	return err;
}

int collapse_agg__to_profile(const struct collapse_agg *a, struct profile *p)
{
	size_t i;
	int r;

	for (i = 0; i < a->n; i++) {
		const struct agg_entry *e = &a->e[i];

		r = folded_add_stack(p, a->arena + e->off, e->len,
				     e->huge ? e->count_f : (double)e->count, 0, false, 0);
		if (r < 0)
			return r;
	}
	return 0;
}
