// SPDX-License-Identifier: MIT
#include "ember/core/model/samples.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/array.h"
#include "ember/core/model/idle.h"

/*
 * A block starts a new 64-bit time base. Offsets are 32-bit nanoseconds, so a block spans at most
 * 4.29 s; it is also cut every BLOCK_MAX records so that lower_bound() is a binary search over
 * blocks then within one.
 */
#define BLOCK_MAX 4096u

/*
 * Every CUM_K records the running sums of counts (all, and non-idle) are kept, so that the count
 * of any index range is two lookups plus at most 2 * CUM_K records scanned: a heat map then costs
 * O(cells), not O(samples), for the default filter (idle excluded) and for no filter. That is
 * 16 / CUM_K = 0.25 bytes per record.
 */
#define CUM_K 64u

/*
 * The stack column carries the stack's idle flag in its top bit (stack ids are ints, so they
 * never use it): the default filter then reads one column, not a second lookup per record.
 */
#define STK_IDLE 0x80000000u
#define STK_ID(x) ((x) & ~STK_IDLE)

struct block {
	uint64_t base;
	size_t first;	/* index of the block's first record */
};

/* The sorted columns. */
struct cols {
	uint32_t *off;		/* time - block base */
	uint32_t *stk;		/* stack id */
	uint32_t *cnt;		/* count; NULL while every count is 1 */
	size_t n, cap;
	struct block *blocks;
	size_t nblocks, bcap;
	uint64_t total;
	uint64_t last;		/* time of the last record */
	uint64_t *cum_all;	/* [j]: sum of counts of records [0, j * CUM_K) */
	uint64_t *cum_busy;	/* [j]: the same over non-idle records */
	size_t ncum, cumcap;
	uint64_t total_busy;
};

struct staged {
	uint64_t t;
	uint32_t stack, count;
	size_t seq;		/* order of arrival, for a stable sort */
};

struct samples {
	struct strtab *st;	/* borrowed */
	struct profile *dict;	/* stack id = index in this profile (its counts stay 0) */
	uint8_t *idle;		/* per stack id: 1 if idle */
	size_t idle_cap;
	/*
	 * Folded text -> stack id, so that a text seen before costs one hash instead of a split and
	 * one intern per frame (readers see the same few stacks millions of times).
	 */
	struct strtab *texts;	/* owned; created on first use */
	uint32_t *text_stack;	/* [text id]: stack id */
	size_t text_cap;
	struct cols c;
	struct staged *stage;
	size_t nstage, scap;
};

struct samples *samples__new(struct strtab *st)
{
	struct samples *s = calloc(1, sizeof(*s));

	if (!s)
		goto nomem;
	s->st = st;
	s->dict = profile__new(st);
	if (!s->dict)
		goto nomem;
	return s;
nomem:
	samples__free(s);
	errno = ENOMEM;
	return NULL;
}

static void cols_fini(struct cols *c)
{
	free(c->off);
	free(c->stk);
	free(c->cnt);
	free(c->blocks);
	free(c->cum_all);
	free(c->cum_busy);
	*c = (struct cols){ 0 };
}

void samples__free(struct samples *s)
{
	if (!s)
		return;
	profile__free(s->dict);
	free(s->idle);
	strtab__free(s->texts);
	free(s->text_stack);
	cols_fini(&s->c);
	free(s->stage);
	free(s);
}

struct strtab *samples__strtab(const struct samples *s)
{
	return s->st;
}

/* The comm part of a root frame written as "comm", "comm-PID" or "comm-PID/TID". */
static size_t root_comm(const char *name, size_t len, long *ret_pid, long *ret_tid)
{
	size_t i = len, digits_end;
	long pid = -1, tid = -1;

	*ret_pid = *ret_tid = -1;
	/* optional "/TID" */
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i == len)
		return len;
	digits_end = len;
	if (i > 0 && name[i - 1] == '/') {
		tid = strtol(name + i, NULL, 10);
		digits_end = i - 1;
		i--;
		while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
			i--;
		if (i == digits_end)
			return len;	/* "x/12": no pid before the slash */
	}
	if (i == 0 || name[i - 1] != '-')
		return len;
	pid = strtol(name + i, NULL, 10);
	*ret_pid = pid;
	*ret_tid = tid >= 0 ? tid : -1;
	return i - 1;
}

/* The one idle rule (idle.h): the root's comm (and pid, when the root says it) is the idle
 * task's, and a frame below is an idle function. */
static bool compute_idle(const struct samples *s, uint32_t id)
{
	size_t depth, i, clen;
	const uint32_t *fr = profile__stack(s->dict, id, &depth);
	const char *root;
	long pid, tid;

	if (!depth)
		return false;
	root = strtab__str(s->st, fr[0]);
	clen = root_comm(root, strtab__len(s->st, fr[0]), &pid, &tid);
	if (!idle_task(pid, root, clen))
		return false;
	for (i = 1; i < depth; i++)
		if (idle_frame(strtab__str(s->st, fr[i]), strtab__len(s->st, fr[i])))
			return true;
	return false;
}

/* Records the idle flag of a newly interned stack. */
static int note_stack(struct samples *s, int id)
{
	size_t n;

	if (id < 0)
		return id;
	n = profile__nr_stacks(s->dict);
	if (n > s->idle_cap) {
		size_t cap = s->idle_cap ? s->idle_cap * 2 : 256;
		uint8_t *ni;

		while (cap < n)
			cap *= 2;
		ni = realloc(s->idle, cap);
		if (!ni)
			return -ENOMEM;
		s->idle = ni;
		s->idle_cap = cap;
	}
	if ((size_t)id == n - 1)
		s->idle[id] = compute_idle(s, (uint32_t)id);
	return id;
}

int samples__intern(struct samples *s, const uint32_t *frames, size_t n)
{
	return note_stack(s, profile__add(s->dict, frames, n, 0));
}

int samples__intern_folded(struct samples *s, const char *stack, size_t len)
{
	int tid, id;

	if (!s->texts) {
		s->texts = strtab__new();
		if (!s->texts)
			return -ENOMEM;
	}
	tid = strtab__intern(s->texts, stack, len);
	if (tid < 0)
		return tid;
	if ((size_t)tid < s->text_cap && s->text_stack[tid] != UINT32_MAX)
		return (int)s->text_stack[tid];
	if ((size_t)tid >= s->text_cap) {
		size_t cap = s->text_cap ? s->text_cap * 2 : 256, i;
		uint32_t *nt;

		while (cap <= (size_t)tid)
			cap *= 2;
		nt = realloc(s->text_stack, cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (i = s->text_cap; i < cap; i++)
			nt[i] = UINT32_MAX;
		s->text_stack = nt;
		s->text_cap = cap;
	}
	id = note_stack(s, profile__add_text(s->dict, stack, len, 0, 0, false, 0));
	if (id < 0)
		return id;
	s->text_stack[tid] = (uint32_t)id;
	return id;
}

static int cols_append(struct cols *c, uint64_t t, uint32_t stack, uint32_t count, bool idle)
{
	struct block *b = c->nblocks ? &c->blocks[c->nblocks - 1] : NULL;
	size_t cap;

	if (c->n % CUM_K == 0) {
		if (c->ncum == c->cumcap) {
			size_t nc = c->cumcap ? c->cumcap * 2 : 256;
			uint64_t *na, *nb;

			na = realloc(c->cum_all, nc * sizeof(*na));
			if (!na)
				return -ENOMEM;
			c->cum_all = na;
			nb = realloc(c->cum_busy, nc * sizeof(*nb));
			if (!nb)
				return -ENOMEM;
			c->cum_busy = nb;
			c->cumcap = nc;
		}
		c->cum_all[c->ncum] = c->total;
		c->cum_busy[c->ncum] = c->total_busy;
		c->ncum++;
	}

	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 4096;
		uint32_t *no, *ns, *nn;

		no = realloc(c->off, nc * sizeof(*no));
		if (!no)
			return -ENOMEM;
		c->off = no;
		ns = realloc(c->stk, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->stk = ns;
		if (c->cnt) {
			nn = realloc(c->cnt, nc * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			c->cnt = nn;
		}
		c->cap = nc;
	}
	if (count != 1 && !c->cnt) {
		c->cnt = malloc(c->cap * sizeof(*c->cnt));
		if (!c->cnt)
			return -ENOMEM;
		for (size_t i = 0; i < c->n; i++)
			c->cnt[i] = 1;
	}
	if (!b || c->n - b->first >= BLOCK_MAX || t - b->base > UINT32_MAX) {
		cap = c->bcap;
		if (array_grow((void **)&c->blocks, &cap, c->nblocks + 1, sizeof(*c->blocks), 1024))
			return -ENOMEM;
		c->bcap = cap;
		b = &c->blocks[c->nblocks++];
		*b = (struct block){ .base = t, .first = c->n };
	}
	c->off[c->n] = (uint32_t)(t - b->base);
	c->stk[c->n] = stack | (idle ? STK_IDLE : 0);
	if (c->cnt)
		c->cnt[c->n] = count;
	c->n++;
	c->total += count;
	if (!idle)
		c->total_busy += count;
	c->last = t;
	return 0;
}

int samples__add(struct samples *s, uint64_t t_ns, uint32_t stack_id, uint32_t count)
{
	struct staged *st;

	if (!count)
		return 0;
	if (stack_id >= profile__nr_stacks(s->dict))
		return -EINVAL;
	if (!s->nstage && (!s->c.n || t_ns >= s->c.last))
		return cols_append(&s->c, t_ns, stack_id, count, s->idle[stack_id]);
	if (array_grow((void **)&s->stage, &s->scap, s->nstage + 1, sizeof(*s->stage), 1024))
		return -ENOMEM;
	st = &s->stage[s->nstage];
	*st = (struct staged){ .t = t_ns, .stack = stack_id, .count = count, .seq = s->nstage };
	s->nstage++;
	return 0;
}

static int cmp_staged(const void *a, const void *b)
{
	const struct staged *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Block index of record @idx. */
static size_t block_of(const struct cols *c, size_t idx)
{
	size_t lo = 0, hi = c->nblocks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->blocks[mid].first <= idx)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int samples__sort(struct samples *s)
{
	struct cols nc = { 0 };
	size_t i = 0, j = 0, b = 0;
	int err = 0;

	if (!s->nstage)
		return 0;
	qsort(s->stage, s->nstage, sizeof(*s->stage), cmp_staged);
	/* merge: at equal times, the records already sorted come first (they arrived earlier) */
	while (i < s->c.n || j < s->nstage) {
		uint64_t t = UINT64_MAX;

		if (i < s->c.n) {
			while (b + 1 < s->c.nblocks && s->c.blocks[b + 1].first <= i)
				b++;
			t = s->c.blocks[b].base + s->c.off[i];
		}
		if (i < s->c.n && (j == s->nstage || t <= s->stage[j].t)) {
			err = cols_append(&nc, t, STK_ID(s->c.stk[i]), s->c.cnt ? s->c.cnt[i] : 1,
					  s->c.stk[i] & STK_IDLE);
			i++;
		} else {
			err = cols_append(&nc, s->stage[j].t, s->stage[j].stack, s->stage[j].count,
					  s->idle[s->stage[j].stack]);
			j++;
		}
		if (err) {
			cols_fini(&nc);
			return err;
		}
	}
	cols_fini(&s->c);
	s->c = nc;
	s->nstage = 0;
	return 0;
}

/* realloc to @n elements of @size, keeping the old block if that fails. */
static void shrink_to(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;

	if (!*p || n >= *cap || !n)
		return;
	np = realloc(*p, n * size);
	if (np) {
		*p = np;
		*cap = n;
	}
}

void samples__shrink(struct samples *s)
{
	struct cols *c = &s->c;
	size_t cap = c->cap, cumcap = c->cumcap;

	if (c->n && c->n < c->cap) {
		/* three columns share one capacity: shrink each, then keep the smallest result */
		size_t a = cap, b = cap, d = cap;

		shrink_to((void **)&c->off, &a, c->n, sizeof(*c->off));
		shrink_to((void **)&c->stk, &b, c->n, sizeof(*c->stk));
		if (c->cnt)
			shrink_to((void **)&c->cnt, &d, c->n, sizeof(*c->cnt));
		else
			d = a;
		/* a failed shrink keeps a larger block: the smallest is what every column holds */
		c->cap = a < b ? a : b;
		if (d < c->cap)
			c->cap = d;
	}
	if (c->ncum && c->ncum < cumcap) {
		size_t a = cumcap, b = cumcap;

		shrink_to((void **)&c->cum_all, &a, c->ncum, sizeof(*c->cum_all));
		shrink_to((void **)&c->cum_busy, &b, c->ncum, sizeof(*c->cum_busy));
		c->cumcap = a < b ? a : b;
	}
	shrink_to((void **)&c->blocks, &c->bcap, c->nblocks, sizeof(*c->blocks));
	shrink_to((void **)&s->stage, &s->scap, s->nstage, sizeof(*s->stage));
}

bool samples__sorted(const struct samples *s)
{
	return s->nstage == 0;
}

size_t samples__nr(const struct samples *s)
{
	return s->c.n;
}

uint64_t samples__total(const struct samples *s)
{
	return s->c.total;
}

size_t samples__nr_stacks(const struct samples *s)
{
	return profile__nr_stacks(s->dict);
}

uint64_t samples__first_ns(const struct samples *s)
{
	return s->c.n ? s->c.blocks[0].base + s->c.off[0] : 0;
}

uint64_t samples__last_ns(const struct samples *s)
{
	return s->c.n ? s->c.last : 0;
}

uint64_t samples__time_ns(const struct samples *s, size_t idx)
{
	return s->c.blocks[block_of(&s->c, idx)].base + s->c.off[idx];
}

uint32_t samples__stack_id(const struct samples *s, size_t idx)
{
	return STK_ID(s->c.stk[idx]);
}

uint32_t samples__count(const struct samples *s, size_t idx)
{
	return s->c.cnt ? s->c.cnt[idx] : 1;
}

size_t samples__lower_bound(const struct samples *s, uint64_t t_ns)
{
	const struct cols *c = &s->c;
	size_t lo = 0, hi = c->nblocks, b, end;
	uint64_t rel;

	/* b = first block whose base >= t; earlier blocks' times are all below t except b - 1's */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->blocks[mid].base < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	b = lo;
	if (b == 0)
		return 0;
	end = b < c->nblocks ? c->blocks[b].first : c->n;
	rel = t_ns - c->blocks[b - 1].base;
	if (rel > UINT32_MAX)
		return end;
	lo = c->blocks[b - 1].first;
	hi = end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->off[mid] < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const uint32_t *samples__stack(const struct samples *s, uint32_t stack_id, size_t *ret_depth)
{
	return profile__stack(s->dict, stack_id, ret_depth);
}

void samples__stack_text(const struct samples *s, uint32_t stack_id, struct sbuf *sb)
{
	profile__stack_text(s->dict, stack_id, sb);
}

size_t samples__mem_bytes(const struct samples *s)
{
	const struct cols *c = &s->c;

	return sizeof(*s) + c->cap * (sizeof(*c->off) + sizeof(*c->stk)) +
	       (c->cnt ? c->cap * sizeof(*c->cnt) : 0) + c->bcap * sizeof(*c->blocks) +
	       c->cumcap * 2 * sizeof(*c->cum_all) + s->scap * sizeof(*s->stage) + s->idle_cap +
	       profile__mem_bytes(s->dict) + (s->texts ? strtab__mem_bytes(s->texts) : 0) +
	       s->text_cap * sizeof(*s->text_stack);
}

void samples_filter_init(struct samples_filter *f)
{
	*f = (struct samples_filter){ .include_idle = false, .comm = NULL, .pid = -1, .tid = -1 };
}

bool samples__stack_is_idle(const struct samples *s, uint32_t stack_id)
{
	return s->idle[stack_id];
}

bool samples__stack_matches(const struct samples *s, uint32_t stack_id,
			    const struct samples_filter *f)
{
	const uint32_t *fr;
	const char *root;
	size_t depth, clen;
	long pid, tid;

	if (!f)
		return true;
	if (!f->include_idle && s->idle[stack_id])
		return false;
	if (!f->comm && f->pid < 0 && f->tid < 0)
		return true;
	fr = profile__stack(s->dict, stack_id, &depth);
	if (!depth)
		return false;
	root = strtab__str(s->st, fr[0]);
	clen = root_comm(root, strtab__len(s->st, fr[0]), &pid, &tid);
	if (f->comm && (strlen(f->comm) != clen || memcmp(f->comm, root, clen)))
		return false;
	if (f->pid >= 0 && pid != f->pid)
		return false;
	if (f->tid >= 0 && tid != f->tid)
		return false;
	return true;
}

/* Per-stack keep flags for @f, or NULL (errno) ; *ret_all says every stack passes. */
static uint8_t *filter_mask(const struct samples *s, const struct samples_filter *f, bool *ret_all)
{
	size_t n = profile__nr_stacks(s->dict), i;
	uint8_t *m = malloc(n ? n : 1);
	bool all = true;

	if (!m)
		return NULL;
	for (i = 0; i < n; i++) {
		m[i] = samples__stack_matches(s, (uint32_t)i, f);
		all &= m[i];
	}
	*ret_all = all;
	return m;
}

enum sum_kind {
	SUM_ALL,	/* every record */
	SUM_BUSY,	/* non-idle records: the default filter */
	SUM_MASK,	/* records whose stack passes a per-stack mask */
};

/* Sum of counts of records [0, @i) for SUM_ALL / SUM_BUSY, from the checkpoints. */
static uint64_t prefix(const struct samples *s, enum sum_kind kind, size_t i)
{
	const struct cols *c = &s->c;
	size_t j = i / CUM_K, k;
	uint64_t v;

	if (j >= c->ncum)
		j = c->ncum - 1; /* i == n on a checkpoint boundary: not written yet */
	v = kind == SUM_ALL ? c->cum_all[j] : c->cum_busy[j];

	for (k = j * CUM_K; k < i; k++)
		if (kind == SUM_ALL || !(c->stk[k] & STK_IDLE))
			v += c->cnt ? c->cnt[k] : 1;
	return v;
}

/* Sum of counts of records [@from, @to) whose stack passes @keep. */
static uint64_t masked_sum(const struct cols *c, const uint8_t *keep, size_t from, size_t to)
{
	uint64_t v = 0;
	size_t i;

	if (c->cnt) {
		for (i = from; i < to; i++)
			v += keep[STK_ID(c->stk[i])] ? c->cnt[i] : 0;
	} else {
		for (i = from; i < to; i++)
			v += keep[STK_ID(c->stk[i])];
	}
	return v;
}

/*
 * The first index >= @from whose time is >= @t, for @t not decreasing between calls: walks the
 * blocks forward from *@pb (the block of @from, updated) and gallops within one, so that a walk
 * over consecutive cells touches memory in order instead of binary searching from scratch.
 */
static size_t seek(const struct cols *c, size_t *pb, size_t from, uint64_t t, size_t guess)
{
	size_t bb = *pb, end, lo, hi, prev, step;
	uint64_t rel;

	for (;;) {
		end = bb + 1 < c->nblocks ? c->blocks[bb + 1].first : c->n;
		if (from >= end) {
			if (bb + 1 >= c->nblocks)
				return c->n;
			bb++;
			continue;
		}
		/* every record of this block is <= the next block's base: if that is < t, skip */
		if (bb + 1 < c->nblocks && c->blocks[bb + 1].base < t) {
			bb++;
			if (from < c->blocks[bb].first)
				from = c->blocks[bb].first;
			continue;
		}
		break;
	}
	*pb = bb;
	if (t <= c->blocks[bb].base)
		return from;
	rel = t - c->blocks[bb].base;
	if (rel > UINT32_MAX)
		return end;
	if (c->off[from] >= rel)
		return from;
	prev = from;
	/*
	 * @guess: as many records as the last cell had. Cells of a steady profile hold about the
	 * same number, so probing there first and galloping back keeps the search in one or two
	 * cache lines.
	 */
	if (guess > 1 && from + guess < end) {
		size_t g = from + guess;

		if (c->off[g] < rel) {
			prev = g;
		} else {
			/* the answer is in (from, g]: gallop down from g */
			hi = g;
			step = 1;
			while (step < hi - from && c->off[hi - step] >= rel) {
				hi -= step;
				step *= 2;
			}
			lo = step < hi - from ? hi - step + 1 : from + 1;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (c->off[mid] < rel)
					lo = mid + 1;
				else
					hi = mid;
			}
			return lo;
		}
	}
	step = 1;
	while (prev + step < end && c->off[prev + step] < rel) {
		prev += step;
		step *= 2;
	}
	hi = prev + step < end ? prev + step : end;
	lo = prev + 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->off[mid] < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sum of counts of records [@from, @to), all or non-idle. */
static uint64_t direct_sum(const struct samples *s, enum sum_kind kind, size_t from, size_t to)
{
	const struct cols *c = &s->c;
	uint64_t v = 0;
	size_t k;

	for (k = from; k < to; k++)
		if (kind == SUM_ALL || !(c->stk[k] & STK_IDLE))
			v += c->cnt ? c->cnt[k] : 1;
	return v;
}

struct samples_cursor {
	const struct samples *s;
	enum sum_kind kind;
	uint8_t *keep; /* SUM_MASK: per-stack keep flags */
	size_t idx;    /* the next record */
	size_t b;      /* its block */
	size_t guess;  /* records in the last non-empty range */
	uint64_t pre;  /* SUM_ALL/SUM_BUSY: the prefix sum up to idx */
};

struct samples_cursor *samples_cursor__new(const struct samples *s, const struct samples_filter *f,
					   uint64_t start_ns)
{
	const struct cols *c = &s->c;
	struct samples_cursor *cur;
	bool all;

	if (s->nstage) {
		errno = EINVAL;
		return NULL;
	}
	cur = calloc(1, sizeof(*cur));
	if (!cur)
		return NULL;
	cur->s = s;
	cur->kind = SUM_MASK;
	if (!f || (f->include_idle && !f->comm && f->pid < 0 && f->tid < 0)) {
		cur->kind = SUM_ALL;
	} else if (!f->comm && f->pid < 0 && f->tid < 0) {
		cur->kind = SUM_BUSY;
	} else {
		cur->keep = filter_mask(s, f, &all);
		if (!cur->keep) {
			free(cur);
			errno = ENOMEM;
			return NULL;
		}
	}
	cur->idx = samples__lower_bound(s, start_ns);
	if (cur->idx < c->n)
		cur->b = block_of(c, cur->idx);
	if (cur->kind != SUM_MASK && cur->idx < c->n)
		cur->pre = prefix(s, cur->kind, cur->idx);
	return cur;
}

void samples_cursor__free(struct samples_cursor *cur)
{
	if (!cur)
		return;
	free(cur->keep);
	free(cur);
}

bool samples_cursor__end(const struct samples_cursor *cur)
{
	return cur->idx >= cur->s->c.n;
}

/*
 * A range's records are [idx, next), next being the first record at or after its end. With the
 * checkpointed sums a range costs about O(log(records in it) + CUM_K) for the default filter,
 * whatever its number of samples.
 */
uint64_t samples_cursor__sum_until(struct samples_cursor *cur, uint64_t end_ns)
{
	const struct samples *s = cur->s;
	const struct cols *c = &s->c;
	size_t next = seek(c, &cur->b, cur->idx, end_ns, cur->guess);
	uint64_t v;

	if (next == cur->idx)
		return 0;
	cur->guess = next - cur->idx;
	if (cur->kind == SUM_MASK) {
		v = masked_sum(c, cur->keep, cur->idx, next);
	} else if (next - cur->idx <= CUM_K) {
		v = direct_sum(s, cur->kind, cur->idx, next);
		cur->pre += v;
	} else {
		uint64_t p = prefix(s, cur->kind, next);

		v = p - cur->pre;
		cur->pre = p;
	}
	cur->idx = next;
	return v;
}

int samples__range_profile(const struct samples *s, uint64_t start_ns, uint64_t end_ns,
			   const struct samples_filter *f, struct profile *dst)
{
	const struct cols *c = &s->c;
	size_t nst = profile__nr_stacks(s->dict), i, from, to, ntouched = 0;
	struct strtab *dst_st;
	uint32_t *touched = NULL, *frames = NULL;
	uint64_t *sum = NULL, added = 0;
	uint8_t *keep = NULL;
	size_t fcap = 0;
	bool all;
	int err = 0;

	if (s->nstage)
		return -EINVAL;
	if (end_ns <= start_ns || !c->n)
		return 0;
	dst_st = profile__strtab(dst);
	keep = filter_mask(s, f, &all);
	sum = calloc(nst ? nst : 1, sizeof(*sum));
	touched = malloc((nst ? nst : 1) * sizeof(*touched));
	if (!keep || !sum || !touched) {
		err = -ENOMEM;
		goto out;
	}
	from = samples__lower_bound(s, start_ns);
	to = samples__lower_bound(s, end_ns);
	for (i = from; i < to; i++) {
		uint32_t id = STK_ID(c->stk[i]);

		if (!keep[id])
			continue;
		if (!sum[id])
			touched[ntouched++] = id;
		sum[id] += c->cnt ? c->cnt[i] : 1;
	}
	/* stacks in order of first appearance in the range: deterministic */
	for (i = 0; i < ntouched; i++) {
		uint32_t id = touched[i];
		size_t depth, k;
		const uint32_t *fr = profile__stack(s->dict, id, &depth);
		int r;

		if (dst_st != s->st) {
			if (depth > fcap) {
				uint32_t *nf = realloc(frames, depth * sizeof(*nf));

				if (!nf) {
					err = -ENOMEM;
					goto out;
				}
				frames = nf;
				fcap = depth;
			}
			for (k = 0; k < depth; k++) {
				r = strtab__intern(dst_st, strtab__str(s->st, fr[k]),
						   strtab__len(s->st, fr[k]));
				if (r < 0) {
					err = r;
					goto out;
				}
				frames[k] = (uint32_t)r;
			}
			fr = frames;
		}
		r = profile__add(dst, fr, depth, (double)sum[id]);
		if (r < 0) {
			err = r;
			goto out;
		}
		added += sum[id];
	}
	err = added > INT_MAX ? INT_MAX : (int)added;
out:
	free(keep);
	free(sum);
	free(touched);
	free(frames);
	return err;
}
