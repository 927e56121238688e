// SPDX-License-Identifier: MIT
#include "ember/core/model/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/hash.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

/*
 * A count: samples as an exact integer, plus a double for what is not one (decimal counts,
 * scaled or negative values). Folded files from other tools may carry counts past 2^53, where a
 * double would round them; merging such files must print the exact sums.
 */
struct count {
	uint64_t n;
	double f;
};

struct stack_ent {
	uint64_t hash;
	size_t off;	/* into frames[] */
	uint32_t depth;
	struct count c1, c2;
};

struct profile {
	struct strtab *st; /* borrowed */
	uint32_t *frames;
	size_t nframes, frames_cap;
	struct stack_ent *ents;
	size_t nents, ents_cap;
	uint32_t *slots; /* idx + 1; 0 = empty */
	size_t nslots;
	struct count total, total2; /* a sum past 2^64-1 goes on in .f */
	size_t max_depth;
	bool has2;
	uint64_t *charge; /* its strtab's (strtab__charge_to): its memory there; NULL: none */
	size_t charged;
};

/* The counter its strtab charges brought to what the profile holds. */
static void charge_sync(struct profile *p)
{
	size_t now;

	if (!p->charge)
		return;
	now = profile__mem_bytes(p);
	if (now != p->charged) {
		__atomic_add_fetch(p->charge, (uint64_t)now - (uint64_t)p->charged, __ATOMIC_RELAXED);
		p->charged = now;
	}
}

struct profile *profile__new(struct strtab *st)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->st = st;
	p->nslots = 256;
	p->slots = calloc(p->nslots, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->charge = strtab__charge(st);
	charge_sync(p);
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	if (p->charge)
		__atomic_sub_fetch(p->charge, (uint64_t)p->charged, __ATOMIC_RELAXED);
	free(p->frames);
	free(p->ents);
	free(p->slots);
	free(p);
}

struct strtab *profile__strtab(const struct profile *p)
{
	return p->st;
}

static uint64_t stack_hash(const uint32_t *frames, size_t n)
{
	return hash_bytes(frames, n * sizeof(*frames), 0x57ac);
}

static size_t slot_of(const struct profile *p, const uint32_t *frames, size_t n, uint64_t h)
{
	size_t mask = p->nslots - 1, i;

	for (i = h & mask; p->slots[i]; i = (i + 1) & mask) {
		const struct stack_ent *e = &p->ents[p->slots[i] - 1];

		if (e->hash == h && e->depth == n &&
		    (!n || !memcmp(p->frames + e->off, frames, n * sizeof(*frames))))
			return i;
	}
	return i;
}

static int grow_slots(struct profile *p)
{
	size_t n = p->nslots * 2, i, j;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < p->nslots; i++) {
		if (!p->slots[i])
			continue;
		for (j = p->ents[p->slots[i] - 1].hash & (n - 1); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = p->slots[i];
	}
	free(p->slots);
	p->slots = s;
	p->nslots = n;
	return 0;
}

/* Adds integer @v to @c exactly; past 2^64-1 in the double part. */
static void count_add_u64(struct count *c, uint64_t v)
{
	if (c->n <= UINT64_MAX - v)
		c->n += v;
	else
		c->f += (double)v;
}

/* Adds @v to @c: integral values in [0, 2^64) exactly, others in the double part. */
static void count_add_double(struct count *c, double v)
{
	if (v >= 0 && v < 18446744073709551616.0 && v == (double)(uint64_t)v)
		count_add_u64(c, (uint64_t)v);
	else
		c->f += v;
}

static void count_sub(struct count *c, const struct count *v)
{
	if (c->n >= v->n)
		c->n -= v->n;
	else
		c->f -= (double)v->n;
	c->f -= v->f;
}

static double count_value(const struct count *c)
{
	return (double)c->n + c->f;
}

/* The entry of stack @frames[0..n), added with zero counts if new; NULL when out of memory. */
static struct stack_ent *entry(struct profile *p, const uint32_t *frames, size_t n)
{
	uint64_t h = stack_hash(frames, n);
	size_t i = slot_of(p, frames, n, h);
	struct stack_ent *e;

	if (p->slots[i])
		return &p->ents[p->slots[i] - 1];
	if (p->nents >= UINT32_MAX - 1 || n > UINT32_MAX)
		return NULL;
	if ((p->nents + 1) * 2 > p->nslots) {
		if (grow_slots(p))
			return NULL;
		i = slot_of(p, frames, n, h);
	}
	if (p->nents == p->ents_cap) {
		size_t cap = p->ents_cap ? p->ents_cap * 2 : 64;
		struct stack_ent *ne = realloc(p->ents, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		p->ents = ne;
		p->ents_cap = cap;
	}
	/* also allocate for a first, empty stack: frames + off must never be NULL + 0 (UB) */
	if (n > p->frames_cap - p->nframes || !p->frames) {
		size_t cap = p->frames_cap ? p->frames_cap : 256;
		uint32_t *nf;

		while (cap - p->nframes < n)
			cap *= 2;
		nf = realloc(p->frames, cap * sizeof(*nf));
		if (!nf)
			return NULL;
		p->frames = nf;
		p->frames_cap = cap;
	}
	if (n)
		memcpy(p->frames + p->nframes, frames, n * sizeof(*frames));
	e = &p->ents[p->nents];
	*e = (struct stack_ent){ .hash = h, .off = p->nframes, .depth = (uint32_t)n };
	p->nframes += n;
	p->slots[i] = (uint32_t)++p->nents;
	if (n > p->max_depth)
		p->max_depth = n;
	charge_sync(p);
	return e;
}

static int add(struct profile *p, const uint32_t *frames, size_t n, double c1, double c2)
{
	struct stack_ent *e = entry(p, frames, n);

	if (!e)
		return -ENOMEM;
	count_add_double(&e->c1, c1);
	count_add_double(&e->c2, c2);
	count_add_double(&p->total, c1);
	count_add_double(&p->total2, c2);
	return (int)(e - p->ents);
}

/* Adds exact counts @c1, @c2 (each with its double part) to a stack; -ERANGE past 2^64-1. */
static int add_exact(struct profile *p, const uint32_t *frames, size_t n, const struct count *c1,
		     const struct count *c2)
{
	struct stack_ent *e = entry(p, frames, n);

	if (!e)
		return -ENOMEM;
	if (e->c1.n > UINT64_MAX - c1->n || e->c2.n > UINT64_MAX - c2->n)
		return -ERANGE;
	e->c1.n += c1->n;
	e->c1.f += c1->f;
	e->c2.n += c2->n;
	e->c2.f += c2->f;
	count_add_u64(&p->total, c1->n);
	p->total.f += c1->f;
	count_add_u64(&p->total2, c2->n);
	p->total2.f += c2->f;
	return (int)(e - p->ents);
}

int profile__add(struct profile *p, const uint32_t *frames, size_t n, double count)
{
	return add(p, frames, n, count, 0);
}

int profile__add2(struct profile *p, const uint32_t *frames, size_t n, double count, double count2)
{
	p->has2 = true;
	return add(p, frames, n, count, count2);
}

int profile__add_u64(struct profile *p, const uint32_t *frames, size_t n, uint64_t count)
{
	struct count c1 = { .n = count }, c2 = { 0 };

	return add_exact(p, frames, n, &c1, &c2);
}

int profile__add2_u64(struct profile *p, const uint32_t *frames, size_t n, uint64_t count,
		      uint64_t count2)
{
	struct count c1 = { .n = count }, c2 = { .n = count2 };

	p->has2 = true;
	return add_exact(p, frames, n, &c1, &c2);
}

int profile__find(const struct profile *p, const uint32_t *frames, size_t n)
{
	size_t i = slot_of(p, frames, n, stack_hash(frames, n));

	return p->slots[i] ? (int)(p->slots[i] - 1) : -ENOENT;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nents;
}

const uint32_t *profile__stack(const struct profile *p, size_t idx, size_t *ret_depth)
{
	*ret_depth = p->ents[idx].depth;
	return p->frames + p->ents[idx].off;
}

double profile__count(const struct profile *p, size_t idx)
{
	return count_value(&p->ents[idx].c1);
}

double profile__count2(const struct profile *p, size_t idx)
{
	return count_value(&p->ents[idx].c2);
}

bool profile__count_exact(const struct profile *p, size_t idx, uint64_t *ret_count,
			  uint64_t *ret_count2)
{
	const struct stack_ent *e = &p->ents[idx];

	if (e->c1.f != 0 || e->c2.f != 0)
		return false;
	*ret_count = e->c1.n;
	*ret_count2 = e->c2.n;
	return true;
}

void profile__set_counts(struct profile *p, size_t idx, double count, double count2)
{
	struct stack_ent *e = &p->ents[idx];

	count_sub(&p->total, &e->c1);
	count_sub(&p->total2, &e->c2);
	e->c1 = (struct count){ 0 };
	e->c2 = (struct count){ 0 };
	count_add_double(&e->c1, count);
	count_add_double(&e->c2, count2);
	count_add_double(&p->total, count);
	count_add_double(&p->total2, count2);
}

bool profile__has_count2(const struct profile *p)
{
	return p->has2;
}

void profile__set_has_count2(struct profile *p, bool on)
{
	p->has2 = on;
}

double profile__total(const struct profile *p)
{
	return count_value(&p->total);
}

double profile__total2(const struct profile *p)
{
	return count_value(&p->total2);
}

bool profile__total_exact(const struct profile *p, uint64_t *ret_total)
{
	if (p->total.f != 0)
		return false;
	*ret_total = p->total.n;
	return true;
}

size_t profile__max_depth(const struct profile *p)
{
	return p->max_depth;
}

size_t profile__mem_bytes(const struct profile *p)
{
	return sizeof(*p) + p->frames_cap * sizeof(*p->frames) + p->ents_cap * sizeof(*p->ents) +
	       p->nslots * sizeof(*p->slots);
}

int profile__merge(struct profile *dst, const struct profile *src, double scale)
{
	uint32_t *tmp = NULL;
	size_t i, j, n, cap = 0;
	int err = 0;

	if (dst == src)
		return -EINVAL;
	for (i = 0; i < src->nents; i++) {
		const struct stack_ent *e = &src->ents[i];
		const uint32_t *f = src->frames + e->off;

		n = e->depth;
		if (dst->st != src->st) {
			if (n > cap) {
				uint32_t *nt = realloc(tmp, n * sizeof(*nt));

				if (!nt) {
					err = -ENOMEM;
					goto out;
				}
				tmp = nt;
				cap = n;
			}
			for (j = 0; j < n; j++) {
				int id = strtab__intern(dst->st, strtab__str(src->st, f[j]),
							strtab__len(src->st, f[j]));

				if (id < 0) {
					err = id;
					goto out;
				}
				tmp[j] = (uint32_t)id;
			}
			f = tmp;
		}
		if (scale == 1)
			err = add_exact(dst, f, n, &e->c1, &e->c2);
		else
			err = add(dst, f, n, count_value(&e->c1) * scale,
				  count_value(&e->c2) * scale);
		if (err < 0)
			goto out;
		err = 0;
	}
	if (src->has2)
		dst->has2 = true;
out:
	free(tmp);
	return err;
}

struct profile *profile__filter(const struct profile *p, profile_keep_fn keep, void *ctx)
{
	struct profile *q = profile__new(p->st);
	size_t i;

	if (!q)
		return NULL;
	q->has2 = p->has2;
	for (i = 0; i < p->nents; i++) {
		const struct stack_ent *e = &p->ents[i];

		if (!keep(p, i, ctx))
			continue;
		if (add_exact(q, p->frames + e->off, e->depth, &e->c1, &e->c2) < 0) {
			profile__free(q);
			errno = ENOMEM;
			return NULL;
		}
	}
	return q;
}

int profile__cmp_stacks(const struct profile *p, size_t a, size_t b)
{
	const struct stack_ent *ea = &p->ents[a], *eb = &p->ents[b];
	const uint32_t *fa = p->frames + ea->off, *fb = p->frames + eb->off;
	size_t ia = 0, ib = 0;

	/* compare the joined texts "f0;f1;..." without building them */
	for (;;) {
		const unsigned char *sa, *sb;
		size_t la, lb, k, m;

		if (ia == ea->depth || ib == eb->depth)
			return (ia < ea->depth) - (ib < eb->depth);
		if (fa[ia] == fb[ib]) {
			ia++, ib++;
			/* both continue with ';' or both end: nothing to compare here */
			if (ia < ea->depth && ib < eb->depth)
				continue;
			return (ia < ea->depth) - (ib < eb->depth);
		}
		sa = (const unsigned char *)strtab__str(p->st, fa[ia]);
		sb = (const unsigned char *)strtab__str(p->st, fb[ib]);
		la = strtab__len(p->st, fa[ia]);
		lb = strtab__len(p->st, fb[ib]);
		m = la < lb ? la : lb;
		for (k = 0; k < m; k++)
			if (sa[k] != sb[k])
				return (sa[k] > sb[k]) - (sa[k] < sb[k]);
		if (la == lb) {
			/* same text under two ids cannot happen with one strtab; keep going */
			ia++, ib++;
			continue;
		}
		/* one name is a prefix of the other: the shorter continues with ';' or ends */
		if (la < lb) {
			int ca = ia + 1 < ea->depth ? ';' : -1;

			return (ca > sb[la]) - (ca < sb[la]);
		} else {
			int cb = ib + 1 < eb->depth ? ';' : -1;

			return (sa[lb] > cb) - (sa[lb] < cb);
		}
	}
}

static int cmp_idx(const void *a, const void *b, void *ctx)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = profile__cmp_stacks(ctx, x, y);

	return c ? c : (x > y) - (x < y);
}

size_t *profile__sorted(const struct profile *p)
{
	size_t *idx = malloc((p->nents ? p->nents : 1) * sizeof(*idx));
	size_t i;

	if (!idx)
		return NULL;
	for (i = 0; i < p->nents; i++)
		idx[i] = i;
	qsort_r(idx, p->nents, sizeof(*idx), cmp_idx, (void *)p); /* glibc's signature */
	return idx;
}

void profile__stack_text(const struct profile *p, size_t idx, struct sbuf *sb)
{
	const struct stack_ent *e = &p->ents[idx];
	size_t i;

	for (i = 0; i < e->depth; i++) {
		uint32_t id = p->frames[e->off + i];

		if (i)
			sbuf_addc(sb, ';');
		sbuf_add(sb, strtab__str(p->st, id), strtab__len(p->st, id));
	}
}

/*
 * The frame ids of the text @stack[0..len) ("a;b;c", trailing empty frames dropped as perl's
 * split drops them), interned into @p's strtab: in @local (128 ids) when they fit, else in an
 * array the caller frees when *ret_frames != local. 0, -ENOMEM or -E2BIG past @max_depth.
 */
static int text_frames(struct profile *p, const char *stack, size_t len, size_t max_depth,
		       uint32_t *local, uint32_t **ret_frames, size_t *ret_n)
{
	struct strtab *st = profile__strtab(p);
	uint32_t *frames = local;
	size_t n = 0, cap = 128, start = 0, i;
	int id, err = 0;

	while (len > 0 && stack[len - 1] == ';')
		len--;
	for (i = 0; i <= len; i++) {
		if (i < len && stack[i] != ';')
			continue;
		if (i == 0 && len == 0)
			break; /* the empty stack */
		if (max_depth && n == max_depth) {
			err = -E2BIG;
			break;
		}
		if (n == cap) {
			uint32_t *nf = malloc(cap * 2 * sizeof(*nf));

			if (!nf) {
				err = -ENOMEM;
				break;
			}
			memcpy(nf, frames, n * sizeof(*nf));
			if (frames != local)
				free(frames);
			frames = nf;
			cap *= 2;
		}
		id = strtab__intern(st, stack + start, i - start);
		if (id < 0) {
			err = id;
			break;
		}
		frames[n++] = (uint32_t)id;
		start = i + 1;
	}
	*ret_frames = frames;
	*ret_n = n;
	return err;
}

int profile__add_text(struct profile *p, const char *stack, size_t len, double count, double count2,
		      bool two, size_t max_depth)
{
	uint32_t local[128], *frames;
	size_t n;
	int err = text_frames(p, stack, len, max_depth, local, &frames, &n);

	if (!err)
		err = two ? profile__add2(p, frames, n, count, count2)
			  : profile__add(p, frames, n, count);
	if (frames != local)
		free(frames);
	return err;
}

int profile__add_text_u64(struct profile *p, const char *stack, size_t len, uint64_t count,
			  uint64_t count2, bool two, size_t max_depth)
{
	uint32_t local[128], *frames;
	size_t n;
	int err = text_frames(p, stack, len, max_depth, local, &frames, &n);

	if (!err)
		err = two ? profile__add2_u64(p, frames, n, count, count2)
			  : profile__add_u64(p, frames, n, count);
	if (frames != local)
		free(frames);
	return err;
}
