// SPDX-License-Identifier: MIT
/*
 * flamegraph layout: profile -> frames, in the order and with the widths flamegraph.pl gives them.
 *
 * flamegraph.pl sorts the input *lines* ("stack count"), then walks them keeping the frames that
 * the previous line shares ("flow"); a frame ends when the next line differs at its depth. So the
 * sibling order is the byte order of "frame;" (a frame that continues) and "frame count" (a leaf
 * line), which is not the order of the names alone: "foo.isra" sorts between the leaf "foo 5" and
 * "foo;bar", and then "foo" is drawn twice. We reproduce exactly that order without building
 * lines: every frame name gets two precomputed ranks (as "name;" and as "name "), and a
 * multikey quicksort orders the stacks depth by depth on these ranks; only a leaf whose name is a
 * prefix of another name plus a space needs the count text, and gets a byte comparison.
 *
 * The walk is one pass over the sorted stacks with an array of open frames; a frame is kept when
 * it closes if it is at least minwidth wide, so memory is the sort index plus the drawn frames.
 */
#include "fg_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/frame.h"

/* ---- the layout ---- */

struct fg_ent {
	const uint32_t *f;
	uint32_t n;
	uint32_t idx;	/* stack index in the profile, or event index (flame charts) */
	uint32_t kd;	/* the sort key cached in @key is the one at depth kd - 1 (0: none) */
	uint32_t key;
};

enum tok_kind { TOK_CONT, TOK_LEAF, TOK_END };

static inline void ent_counts(const struct fg_ctx *c, const struct fg_ent *e, double *c1,
			      double *c2)
{
	if (c->ev) {
		*c1 = c->ev[e->idx].count;
		*c2 = c->ev[e->idx].count2;
	} else {
		*c1 = profile__count(c->p, e->idx);
		*c2 = profile__count2(c->p, e->idx);
	}
}

/*
 * The stacks live in the profile in insertion order; sorted, they are visited in random order,
 * and every visit is a cache miss. Prefetching a few elements ahead hides most of it.
 */
#define FG_PREFETCH_AHEAD 8

static inline void prefetch_frame(const struct fg_ctx *c, const struct fg_ent *e, size_t d)
{
	if (d < e->n)
		__builtin_prefetch(c->reverse ? &e->f[e->n - 1 - d] : &e->f[d]);
}

static inline uint32_t ent_frame(const struct fg_ctx *c, const struct fg_ent *e, size_t d)
{
	return c->reverse ? e->f[e->n - 1 - d] : e->f[d];
}

const char *fg_frame_name(const struct fg_ctx *c, uint32_t id, size_t *len)
{
	if (id == FG_ROOT) {
		*len = 0;
		return "";
	}
	if (id >= c->nbase) {
		*len = strtab__len(c->wst, id - (uint32_t)c->nbase);
		return strtab__str(c->wst, id - (uint32_t)c->nbase);
	}
	*len = strtab__len(c->st, id);
	return strtab__str(c->st, id);
}

/* Token sort: "name;" and "name " for every used name, plus " " for the empty stack. */
/* The name travels with the token: qsort has no context argument, and no global is needed. */
struct tok {
	const char *s;	/* borrowed from the strtab; "" for the empty stack */
	uint32_t len;
	uint32_t id;	/* FG_ROOT for the empty stack */
	char term;
};

static int cmp_bytes_term(const char *a, size_t la, char ta, const char *b, size_t lb, char tb)
{
	size_t n = la < lb ? la : lb;
	int c = memcmp(a, b, n);
	unsigned char ca, cb;

	if (c)
		return c;
	if (la == lb)
		return (ta > tb) - (ta < tb);
	/* the shorter one continues with its terminator */
	if (la < lb) {
		ca = (unsigned char)ta;
		cb = (unsigned char)b[la];
		return ca < cb ? -1 : ca > cb ? 1 : -1; /* equal: a's string ends first */
	}
	ca = (unsigned char)a[lb];
	cb = (unsigned char)tb;
	return ca < cb ? -1 : ca > cb ? 1 : 1;
}

static int cmp_tok(const void *x, const void *y)
{
	const struct tok *a = x, *b = y;

	return cmp_bytes_term(a->s, a->len, a->term, b->s, b->len, b->term);
}

/* Does token @b's string start with token @a's string (a proper prefix)? */
static bool tok_prefixes(const struct tok *a, const struct tok *b)
{
	if (b->len <= a->len)
		return false; /* b (with its terminator) is not longer than a */
	return !memcmp(a->s, b->s, a->len) && b->s[a->len] == a->term;
}

static int build_keys(struct fg_ctx *c, const struct fg_ent *ents, size_t nents)
{
	size_t nnames = strtab__count(c->st), i, d, ntok = 0;
	unsigned char *used;
	struct tok *toks;

	used = calloc(nnames ? nnames : 1, 1);
	c->key_cont = malloc((nnames ? nnames : 1) * sizeof(uint32_t));
	c->key_leaf = malloc((nnames ? nnames : 1) * sizeof(uint32_t));
	if (!used || !c->key_cont || !c->key_leaf) {
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < nents; i++)
		for (d = 0; d < ents[i].n; d++)
			used[ents[i].f[d]] = 1;
	for (i = 0; i < nnames; i++)
		ntok += used[i] ? 2 : 0;
	toks = malloc((ntok + 1) * sizeof(*toks));
	if (!toks) {
		free(used);
		return -ENOMEM;
	}
	ntok = 0;
	for (i = 0; i < nnames; i++)
		if (used[i]) {
			const char *name = strtab__str(c->st, (uint32_t)i);
			uint32_t len = (uint32_t)strtab__len(c->st, (uint32_t)i);

			toks[ntok++] = (struct tok){ name, len, (uint32_t)i, ';' };
			toks[ntok++] = (struct tok){ name, len, (uint32_t)i, ' ' };
		}
	toks[ntok++] = (struct tok){ "", 0, FG_ROOT, ' ' };
	free(used);
	qsort(toks, ntok, sizeof(*toks), cmp_tok);
	c->amb = calloc(ntok, 1);
	if (!c->amb) {
		free(toks);
		return -ENOMEM;
	}
	for (i = 0; i < ntok; i++) {
		uint32_t k = (uint32_t)i;

		if (toks[i].id == FG_ROOT)
			c->key_end = k;
		else if (toks[i].term == ';')
			c->key_cont[toks[i].id] = k;
		else
			c->key_leaf[toks[i].id] = k;
		if (toks[i].term == ' ' && i + 1 < ntok && tok_prefixes(&toks[i], &toks[i + 1]))
			c->amb[i] = 1;
	}
	free(toks);
	return 0;
}

static inline enum tok_kind ent_kind(const struct fg_ent *e, size_t d)
{
	if (e->n == 0)
		return TOK_END;
	return d + 1 == e->n ? TOK_LEAF : TOK_CONT;
}

static inline uint32_t ent_key(const struct fg_ctx *c, const struct fg_ent *e, size_t d)
{
	if (e->n == 0)
		return c->key_end;
	if (d + 1 == e->n)
		return c->key_leaf[ent_frame(c, e, d)];
	return c->key_cont[ent_frame(c, e, d)];
}

/* The key at depth @d, cached: sub-partitions at the same depth then touch no stack memory. */
static inline uint32_t ent_key_cached(const struct fg_ctx *c, struct fg_ent *e, size_t d)
{
	if (e->kd != d + 1) {
		e->key = ent_key(c, e, d);
		e->kd = (uint32_t)(d + 1);
	}
	return e->key;
}

static void add_count_text(struct sbuf *sb, const struct fg_ctx *c, const struct fg_ent *e)
{
	double c1, c2;

	ent_counts(c, e, &c1, &c2);
	sbuf_addc(sb, ' ');
	sbuf_add_count(sb, c1);
	if (c->diff) {
		sbuf_addc(sb, ' ');
		sbuf_add_count(sb, c2);
	}
}

/* The exact comparison of two tokens at depth @d as flamegraph.pl's sort sees them. */
static int slow_cmp(struct fg_ctx *c, const struct fg_ent *a, const struct fg_ent *b, size_t d)
{
	const struct fg_ent *e[2] = { a, b };
	struct sbuf *sb[2] = { &c->tmp_a, &c->tmp_b };
	size_t i, n, len;
	int r;

	for (i = 0; i < 2; i++) {
		sbuf_reset(sb[i]);
		if (e[i]->n) {
			const char *s = fg_frame_name(c, ent_frame(c, e[i], d), &len);

			sbuf_add(sb[i], s, len);
		}
		if (ent_kind(e[i], d) == TOK_CONT)
			sbuf_addc(sb[i], ';');
		else
			add_count_text(sb[i], c, e[i]);
	}
	if (sbuf_error(sb[0]) || sbuf_error(sb[1])) {
		c->err = -ENOMEM;
		return 0;
	}
	n = sb[0]->len < sb[1]->len ? sb[0]->len : sb[1]->len;
	r = memcmp(sb[0]->buf, sb[1]->buf, n);
	if (r)
		return r;
	return (sb[0]->len > sb[1]->len) - (sb[0]->len < sb[1]->len);
}

static inline int tok_cmp(struct fg_ctx *c, const struct fg_ent *a, const struct fg_ent *b,
			  size_t d)
{
	uint32_t ka = ent_key(c, a, d), kb = ent_key(c, b, d);

	if (ka == kb)
		return 0;
	if (c->amb[ka] || c->amb[kb])
		return slow_cmp(c, a, b, d);
	return ka < kb ? -1 : 1;
}

static int full_cmp(struct fg_ctx *c, const struct fg_ent *a, const struct fg_ent *b, size_t d)
{
	int r;

	for (;; d++) {
		r = tok_cmp(c, a, b, d);
		if (r || ent_kind(a, d) != TOK_CONT)
			return r;
	}
}

/*
 * Folded files are usually written sorted (stackcollapse, ember merge): one sequential pass
 * over neighbours proves it and saves the sort.
 */
static bool presorted(struct fg_ctx *c, const struct fg_ent *a, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (full_cmp(c, &a[i - 1], &a[i], 0) > 0)
			return false;
	return c->err == 0;
}

struct sort_task {
	size_t lo, n, d;
};

static inline void swap_ent(struct fg_ent *a, struct fg_ent *b)
{
	struct fg_ent t = *a;

	*a = *b;
	*b = t;
}

/* Multikey quicksort (Bentley & Sedgewick) on the tokens, with an explicit task stack. */
static int sort_ents(struct fg_ctx *c, struct fg_ent *a, size_t nents)
{
	struct sort_task *stk = NULL, t;
	size_t nstk = 0, cap = 0;

	if (nents < 2)
		return 0;
	t = (struct sort_task){ 0, nents, 0 };
	for (;;) {
		while (t.n > 1) {
			struct fg_ent *v = a + t.lo, piv;
			size_t lt, i, gt, m;
			uint32_t pk;
			bool pamb;

			/*
			 * Skip the depths where the whole group agrees: one sequential walk along
			 * each stack instead of one partition pass (and a cache miss) per depth.
			 */
			{
				size_t x, lcp = SIZE_MAX;

				for (x = 1; x < t.n && lcp; x++) {
					size_t k = 0;

					if (x + FG_PREFETCH_AHEAD < t.n)
						prefetch_frame(c, &v[x + FG_PREFETCH_AHEAD], t.d);
					if (lcp && ent_kind(&v[0], t.d) == TOK_CONT &&
					    ent_key_cached(c, &v[x], t.d) == ent_key_cached(c, &v[0], t.d))
						k = 1;
					while (k && k < lcp && ent_kind(&v[0], t.d + k) == TOK_CONT &&
					       ent_key(c, &v[x], t.d + k) == ent_key(c, &v[0], t.d + k))
						k++;
					lcp = k;
				}
				if (lcp && lcp != SIZE_MAX)
					t.d += lcp;
			}
			if (t.n < 16) {
				size_t x, y;

				for (x = 1; x < t.n; x++)
					for (y = x; y > 0 && full_cmp(c, &v[y - 1], &v[y], t.d) > 0; y--)
						swap_ent(&v[y - 1], &v[y]);
				break;
			}
			/* median of three as the pivot, moved to the front */
			m = t.n / 2;
			if (tok_cmp(c, &v[0], &v[m], t.d) > 0)
				swap_ent(&v[0], &v[m]);
			if (tok_cmp(c, &v[m], &v[t.n - 1], t.d) > 0)
				swap_ent(&v[m], &v[t.n - 1]);
			if (tok_cmp(c, &v[0], &v[m], t.d) > 0)
				swap_ent(&v[0], &v[m]);
			swap_ent(&v[0], &v[m]);
			pk = ent_key_cached(c, &v[0], t.d);
			piv = v[0];
			pamb = c->amb[pk];
			lt = 0;
			i = 1;
			gt = t.n - 1;
			while (i <= gt) {
				uint32_t k;

				int r;

				if (i + FG_PREFETCH_AHEAD <= gt && v[i + FG_PREFETCH_AHEAD].kd != t.d + 1)
					prefetch_frame(c, &v[i + FG_PREFETCH_AHEAD], t.d);
				k = ent_key_cached(c, &v[i], t.d);

				if (k == pk)
					r = 0;
				else if (pamb || c->amb[k])
					r = slow_cmp(c, &v[i], &piv, t.d);
				else
					r = k < pk ? -1 : 1;

				if (r < 0)
					swap_ent(&v[lt++], &v[i++]);
				else if (r > 0)
					swap_ent(&v[i], &v[gt--]);
				else
					i++;
			}
			/* [0,lt) less, [lt,gt] equal, (gt,n) greater */
			if (nstk + 2 > cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct sort_task *ns = realloc(stk, ncap * sizeof(*ns));

				if (!ns) {
					free(stk);
					return -ENOMEM;
				}
				stk = ns;
				cap = ncap;
			}
			if (lt > 1)
				stk[nstk++] = (struct sort_task){ t.lo, lt, t.d };
			if (t.n - 1 - gt > 1)
				stk[nstk++] = (struct sort_task){ t.lo + gt + 1, t.n - 1 - gt, t.d };
			if (ent_kind(&piv, t.d) != TOK_CONT)
				break; /* equal leaf tokens: identical lines */
			t = (struct sort_task){ t.lo + lt, gt - lt + 1, t.d + 1 };
		}
		if (!nstk)
			break;
		t = stk[--nstk];
	}
	free(stk);
	return c->err;
}

/* ---- the walk (flamegraph.pl's flow) ---- */

struct fg_open {
	uint32_t id;
	bool fresh;
	double stime, t1, delta, elided_child;
};

static int push_node(struct fg_ctx *c, const struct fg_node *n)
{
	if (c->nnodes == c->nodes_cap) {
		size_t ncap = c->nodes_cap ? c->nodes_cap * 2 : 256;
		struct fg_node *nn = realloc(c->nodes, ncap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		c->nodes = nn;
		c->nodes_cap = ncap;
	}
	c->nodes[c->nnodes++] = *n;
	return 0;
}

static int close_frame(struct fg_ctx *c, struct fg_open *open, size_t d, double time,
		       double time1)
{
	struct fg_open *f = &open[d];
	double w = time - f->stime;

	if (w < c->minwidth_time) {
		c->stats.elided++;
		if (d)
			open[d - 1].elided_child += w;
		else
			c->stats.elided_samples += w;
		return 0;
	}
	c->stats.elided_samples += f->elided_child;
	if (d > c->stats.depth)
		c->stats.depth = (unsigned int)d;
	return push_node(c, &(struct fg_node){ .id = f->id, .depth = (uint32_t)d, .stime = f->stime,
					       .etime = time, .t1 = time1 - f->t1,
					       .delta = f->delta });
}

/* The id of @s for the walk: the profile's own if it has the name, else a chain-only one. */
static int chain_id(struct fg_ctx *c, const char *s, size_t len, uint32_t *ret)
{
	int id = strtab__find(c->st, s, len);

	if (id < 0) {
		id = strtab__intern(c->wst, s, len);
		if (id < 0)
			return id;
		id += (int)c->nbase;
	}
	*ret = (uint32_t)id;
	return 0;
}

/*
 * The chain palette's renaming, as flamegraph.pl does it on the line: the stack is split at
 * ";--;", the first part is kept and followed by "--" (always: a stack without a separator gains
 * a trailing "--" frame), and every frame of the later parts gets "_[w]". @ids has room for two
 * more frames; *@n is updated.
 */
static int chain_rewrite(struct fg_ctx *c, uint32_t *ids, size_t *np)
{
	size_t j, nlen, n = *np;
	bool seen = false, part_start = false;
	const char *s;
	uint32_t dash;
	int err;

	err = chain_id(c, "--", 2, &dash);
	if (err)
		return err;
	if (n == 1) { /* the empty stack: "" then "--" */
		err = chain_id(c, "", 0, &ids[1]);
		ids[2] = dash;
		*np = 3;
		return err;
	}

	for (j = 1; j < n; j++) {
		s = fg_frame_name(c, ids[j], &nlen);
		if (!seen) {
			if (nlen == 2 && !memcmp(s, "--", 2) && j >= 2 && j + 1 < n) {
				seen = true;
				part_start = true;
			}
			continue;
		}
		if (nlen == 2 && !memcmp(s, "--", 2) && !part_start && j + 1 < n) {
			part_start = true;
			continue;
		}
		part_start = false;
		if (ids[j] >= c->nbase)
			return -EINVAL; /* cannot happen: only profile ids get here */
		if (c->wid[ids[j]] < 0) {
			struct sbuf nb = SBUF_INIT;
			uint32_t id;

			sbuf_add(&nb, s, nlen);
			sbuf_adds(&nb, FRAME_WAKER_SUFFIX);
			if (sbuf_error(&nb))
				return -ENOMEM;
			err = chain_id(c, nb.buf, nb.len, &id);
			sbuf_fini(&nb);
			if (err)
				return err;
			c->wid[ids[j]] = (int32_t)id;
		}
		ids[j] = (uint32_t)c->wid[ids[j]];
	}
	if (!seen)
		ids[n++] = dash;
	*np = n;
	return 0;
}

static int flow(struct fg_ctx *c, const struct fg_ent *ents, size_t nents, size_t maxdepth)
{
	struct fg_open *open = calloc(maxdepth + 4, sizeof(*open));
	uint32_t *ids = malloc((maxdepth + 4) * sizeof(*ids));
	size_t nopen = 0, i, k, n, same;
	double time = 0, time1 = 0;
	int err = 0;

	if (!open || !ids) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nents; i++) {
		const struct fg_ent *e = &ents[i];

		if (i + FG_PREFETCH_AHEAD < nents) {
			prefetch_frame(c, &ents[i + FG_PREFETCH_AHEAD], 0);
			prefetch_frame(c, &ents[i + FG_PREFETCH_AHEAD], 16);
		}
		double c1, c2, w;

		ent_counts(c, e, &c1, &c2);
		w = c->diff ? c2 : c1;

		n = e->n + 1;
		ids[0] = FG_ROOT;
		for (k = 0; k < e->n; k++)
			ids[k + 1] = ent_frame(c, e, k);
		if (c->wst) {
			err = chain_rewrite(c, ids, &n);
			if (err)
				goto out;
		}
		for (same = 0; same < nopen && same < n && open[same].id == ids[same]; same++)
			;
		while (nopen > same) {
			err = close_frame(c, open, --nopen, time, time1);
			if (err)
				goto out;
		}
		for (k = same; k < n; k++)
			open[k] = (struct fg_open){ .id = ids[k], .stime = time, .t1 = time1 };
		if (c->diff && same < n)
			open[n - 1].delta += c2 - c1; /* only a newly opened leaf, as perl */
		nopen = n;
		time += w;
		time1 += c1;
	}
	while (nopen > 0) {
		err = close_frame(c, open, --nopen, time, time1);
		if (err)
			goto out;
	}
out:
	free(open);
	free(ids);
	return err;
}

static int cmp_node(const void *x, const void *y)
{
	const struct fg_node *a = x, *b = y;

	if (a->depth != b->depth)
		return (a->depth > b->depth) - (a->depth < b->depth);
	return (a->stime > b->stime) - (a->stime < b->stime);
}

void fg_ctx_fini(struct fg_ctx *c)
{
	free(c->key_cont);
	free(c->key_leaf);
	free(c->amb);
	free(c->nodes);
	free(c->wid);
	strtab__free(c->wst);
	sbuf_fini(&c->tmp_a);
	sbuf_fini(&c->tmp_b);
}

/* Sorts (or keeps in order), walks, prunes: c->nodes sorted by depth then x. */
int fg_layout(struct fg_ctx *c, const struct profile *p, const struct flamegraph_event *ev,
	      size_t nev, bool events, const struct flamegraph_opts *o)
{
	size_t nents = events ? nev : profile__nr_stacks(p), i, maxdepth = 0, depth;
	double c1, c2;
	struct fg_ent *ents;
	int err = 0;

	*c = (struct fg_ctx){ .p = p, .st = profile__strtab(p), .o = o, .ev = events ? ev : NULL,
			      .diff = profile__has_count2(p), .reverse = o->reverse,
			      .maxdelta = 1, .nbase = strtab__count(profile__strtab(p)) };
	sbuf_init(&c->tmp_a);
	sbuf_init(&c->tmp_b);
	ents = malloc((nents ? nents : 1) * sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (i = 0; i < nents; i++) {
		size_t idx = events ? ev[i].stack : i;

		if (idx >= profile__nr_stacks(p)) {
			err = -EINVAL;
			goto out;
		}
		ents[i].f = profile__stack(p, idx, &depth);
		ents[i].n = (uint32_t)depth;
		ents[i].idx = (uint32_t)(events ? i : idx);
		ents[i].kd = 0;
		if (depth > maxdepth)
			maxdepth = depth;
		ent_counts(c, &ents[i], &c1, &c2);
		if (c->diff && fabs(c2 - c1) > c->maxdelta)
			c->maxdelta = fabs(c2 - c1);
	}
	if (o->flamechart) {
		/* input order as is: flamegraph.pl reverses twice */
	} else {
		err = build_keys(c, ents, nents);
		if (!err && !presorted(c, ents, nents))
			err = sort_ents(c, ents, nents);
		if (err)
			goto out;
	}
	/* the same total, now in the walk's order, as flamegraph.pl sums it */
	c->time = 0;
	for (i = 0; i < nents; i++) {
		ent_counts(c, &ents[i], &c1, &c2);
		c->time += c->diff ? c2 : c1;
	}
	c->timemax = c->time;
	if (o->total > 0 && o->total >= c->time)
		c->timemax = o->total;
	if (c->time <= 0) {
		err = -ENODATA;
		goto out;
	}
	c->widthpertime = ((double)o->width - 2 * FG_XPAD) / c->timemax;
	if (o->minwidth_pct)
		c->minwidth_time = c->timemax * o->minwidth / 100;
	else
		c->minwidth_time = o->minwidth / c->widthpertime;
	if (o->colors == FG_PALETTE_CHAIN) {
		c->wst = strtab__new();
		c->wid = malloc((c->nbase ? c->nbase : 1) * sizeof(*c->wid));
		if (!c->wst || !c->wid) {
			err = -ENOMEM;
			goto out;
		}
		memset(c->wid, 0xff, (c->nbase ? c->nbase : 1) * sizeof(*c->wid));
	}
	c->stats.total = c->time;
	err = flow(c, ents, nents, maxdepth);
	if (err)
		goto out;
	c->stats.frames = c->nnodes;
	if (c->nnodes) /* none at all past a huge minwidth: qsort's array may be NULL then */
		qsort(c->nodes, c->nnodes, sizeof(*c->nodes), cmp_node);
out:
	free(ents);
	return err;
}
