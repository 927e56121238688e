// SPDX-License-Identifier: MIT
/*
 * flamegraph: profile -> frames -> SVG, with flamegraph.pl's layout.
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
#include "ember/core/render/flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "fg_internal.h"

#define FG_XPAD 10
#define FG_FRAMEPAD 1
#define FG_ROOT UINT32_MAX
#define FG_MAX_WIDTH 1000000u
#define FG_MAX_HEIGHT 10000u

static const char *const palette_names[FG_PALETTE__COUNT] = {
	[FG_PALETTE_HOT] = "hot",	    [FG_PALETTE_MEM] = "mem",
	[FG_PALETTE_IO] = "io",		    [FG_PALETTE_WAKEUP] = "wakeup",
	[FG_PALETTE_CHAIN] = "chain",	    [FG_PALETTE_JAVA] = "java",
	[FG_PALETTE_JS] = "js",		    [FG_PALETTE_PERL] = "perl",
	[FG_PALETTE_RED] = "red",	    [FG_PALETTE_GREEN] = "green",
	[FG_PALETTE_BLUE] = "blue",	    [FG_PALETTE_AQUA] = "aqua",
	[FG_PALETTE_YELLOW] = "yellow",	    [FG_PALETTE_PURPLE] = "purple",
	[FG_PALETTE_ORANGE] = "orange",
};

/* ---- string maps for --cp and --nameattr: a strtab for the keys, values by id ---- */

struct flamegraph_cpmap {
	struct strtab *keys;
	char **vals;
	size_t cap;
};

struct fg_attr {
	char *key, *val;
};

struct flamegraph_nameattr {
	struct strtab *keys;
	struct fg_attr **attrs; /* per key id: array ended by key == NULL */
	size_t cap;
};

static int grow_ptrs(void *pp, size_t *cap, size_t need)
{
	void ***p = pp;
	size_t ncap = *cap ? *cap : 64;
	void **n;

	if (need < *cap)
		return 0;
	while (ncap <= need)
		ncap *= 2;
	n = realloc(*p, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + *cap, 0, (ncap - *cap) * sizeof(*n));
	*p = n;
	*cap = ncap;
	return 0;
}

static void cpmap_free(struct flamegraph_cpmap *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->cap; i++)
		free(m->vals[i]);
	free(m->vals);
	strtab__free(m->keys);
	free(m);
}

static struct flamegraph_cpmap *cpmap_new(void)
{
	struct flamegraph_cpmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->keys = strtab__new();
	if (!m->keys) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

/* Sets @key -> @val (copied). 0 or -ENOMEM. */
static int fg_cpmap_set(struct flamegraph_cpmap *m, const char *key, size_t klen, const char *val)
{
	int id = strtab__intern(m->keys, key, klen);
	char *v;

	if (id < 0)
		return id;
	if (grow_ptrs(&m->vals, &m->cap, (size_t)id))
		return -ENOMEM;
	v = strdup(val);
	if (!v)
		return -ENOMEM;
	free(m->vals[id]);
	m->vals[id] = v;
	return 0;
}

static const char *fg_cpmap_get(const struct flamegraph_cpmap *m, const char *key, size_t klen)
{
	int id = strtab__find(m->keys, key, klen);

	return id >= 0 && (size_t)id < m->cap ? m->vals[id] : NULL;
}

static void nameattr_free(struct flamegraph_nameattr *na)
{
	size_t i;
	struct fg_attr *a;

	if (!na)
		return;
	for (i = 0; i < na->cap; i++) {
		for (a = na->attrs[i]; a && a->key; a++) {
			free(a->key);
			free(a->val);
		}
		free(na->attrs[i]);
	}
	free(na->attrs);
	strtab__free(na->keys);
	free(na);
}

static const struct fg_attr *fg_find_attrs(const struct flamegraph_opts *o, const char *s,
					   size_t len)
{
	int id;

	if (!o->nameattr)
		return NULL;
	id = strtab__find(o->nameattr->keys, s, len);
	if (id < 0 || (size_t)id >= o->nameattr->cap)
		return NULL;
	return o->nameattr->attrs[id];
}

static const char *fg_attr_get(const struct fg_attr *a, const char *key)
{
	for (; a && a->key; a++)
		if (!strcmp(a->key, key))
			return a->val;
	return NULL;
}

/* ---- options ---- */

void flamegraph_opts_init(struct flamegraph_opts *o)
{
	*o = (struct flamegraph_opts){
		.width = 1200,
		.height = 16,
		.fontsize = 12,
		.fontwidth = 0.59,
		.minwidth = 0.1,
		.colors = FG_PALETTE_HOT,
		.colorby = FG_COLORBY_NAME,
		.factor = 1,
	};
}

void flamegraph_opts_fini(struct flamegraph_opts *o)
{
	free(o->title);
	free(o->subtitle);
	free(o->info);
	free(o->notes);
	free(o->countname);
	free(o->nametype);
	free(o->fonttype);
	free(o->encoding);
	free(o->search);
	free(o->bgcolors);
	free(o->cp_path);
	free(o->nameattr_path);
	cpmap_free(o->cpmap);
	nameattr_free(o->nameattr);
	flamegraph_opts_init(o);
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v ? v : "");

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = { "", "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	if (!v) {
		*ret = true;
		return 0;
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcmp(v, yes[i])) {
			*ret = true;
			return 0;
		}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcmp(v, no[i])) {
			*ret = false;
			return 0;
		}
	return -EINVAL;
}

static int parse_double(const char *v, double lo, double hi, double *ret)
{
	char *end;
	double d;

	if (!v || !*v || *v == ' ' || *v == '\t')
		return -EINVAL;
	errno = 0;
	d = strtod(v, &end);
	if (errno || *end || !isfinite(d) || d < lo || d > hi)
		return -EINVAL;
	*ret = d;
	return 0;
}

static int parse_uint(const char *v, unsigned int lo, unsigned int hi, unsigned int *ret)
{
	char *end;
	unsigned long n;

	if (!v || *v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -EINVAL;
	*ret = (unsigned int)n;
	return 0;
}

static bool fg_valid_bgcolors(const char *v)
{
	size_t i;

	if (!strcmp(v, "yellow") || !strcmp(v, "blue") || !strcmp(v, "green") ||
	    !strcmp(v, "grey") || !*v)
		return true;
	if (strlen(v) != 7 || v[0] != '#')
		return false;
	for (i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", v[i]))
			return false;
	return true;
}

static int nameattr_load(struct flamegraph_opts *o, const char *path)
{
	struct flamegraph_nameattr *na;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	na = calloc(1, sizeof(*na));
	if (!na || !(na->keys = strtab__new())) {
		err = -ENOMEM;
		goto out;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *tab, *p, *next;
		struct fg_attr *arr = NULL;
		size_t na_n = 0;
		int id;

		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		tab = strchr(line, '\t');
		if (!tab) {
			err = -EINVAL; /* flamegraph.pl: "Invalid format" */
			goto out;
		}
		id = strtab__intern(na->keys, line, (size_t)(tab - line));
		if (id < 0 || grow_ptrs(&na->attrs, &na->cap, (size_t)id)) {
			err = -ENOMEM;
			goto out;
		}
		for (p = tab + 1; p; p = next) {
			char *eq;
			struct fg_attr *narr;

			next = strchr(p, '\t');
			if (next)
				*next++ = 0;
			eq = strchr(p, '=');
			narr = realloc(arr, (na_n + 2) * sizeof(*arr));
			if (!narr) {
				free(arr);
				err = -ENOMEM;
				goto out;
			}
			arr = narr;
			arr[na_n].key = eq ? strndup(p, (size_t)(eq - p)) : strdup(p);
			arr[na_n].val = strdup(eq ? eq + 1 : "");
			arr[++na_n].key = NULL;
			arr[na_n].val = NULL;
			if (!arr[na_n - 1].key || !arr[na_n - 1].val) {
				/* keep the array well formed for nameattr_free() */
				free(arr[na_n - 1].key);
				free(arr[na_n - 1].val);
				arr[na_n - 1].key = NULL;
				arr[na_n - 1].val = NULL;
				err = -ENOMEM;
			}
			if (err)
				break;
		}
		if (na->attrs[id]) { /* a later line replaces an earlier one, as the perl hash */
			struct fg_attr *a;

			for (a = na->attrs[id]; a->key; a++) {
				free(a->key);
				free(a->val);
			}
			free(na->attrs[id]);
		}
		na->attrs[id] = arr;
		if (err)
			goto out;
	}
out:
	free(line);
	fclose(f);
	if (err) {
		nameattr_free(na);
		return err;
	}
	nameattr_free(o->nameattr);
	o->nameattr = na;
	return 0;
}

bool flamegraph_opt_is_file(const char *key)
{
	return !strcmp(key, "cp") || !strcmp(key, "nameattr");
}

int flamegraph_opts_set(struct flamegraph_opts *o, const char *key, const char *v)
{
	size_t i;
	bool b;
	int err;

	if (!key)
		return -EINVAL;
	if (!strcmp(key, "title"))
		return set_str(&o->title, v);
	if (!strcmp(key, "subtitle"))
		return set_str(&o->subtitle, v);
	if (!strcmp(key, "info"))
		return set_str(&o->info, v);
	if (!strcmp(key, "notes")) {
		if (v && (strpbrk(v, "<>") || strstr(v, "--")))
			return -EINVAL; /* an XML comment can hold neither */
		return set_str(&o->notes, v);
	}
	if (!strcmp(key, "countname"))
		return set_str(&o->countname, v);
	if (!strcmp(key, "nametype"))
		return set_str(&o->nametype, v);
	if (!strcmp(key, "fonttype"))
		return set_str(&o->fonttype, v);
	if (!strcmp(key, "encoding")) {
		/* an XML EncName: [A-Za-z] ([A-Za-z0-9._] | '-')* */
		if (!v || !((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z')) ||
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
			    strlen(v))
			return -EINVAL;
		return set_str(&o->encoding, v);
	}
	if (!strcmp(key, "search"))
		return set_str(&o->search, v);
	if (!strcmp(key, "width"))
		return parse_uint(v, 1, FG_MAX_WIDTH, &o->width);
	if (!strcmp(key, "height"))
		return parse_uint(v, 1, FG_MAX_HEIGHT, &o->height);
	if (!strcmp(key, "fontsize"))
		return parse_double(v, 0.01, 1000, &o->fontsize);
	if (!strcmp(key, "fontwidth"))
		return parse_double(v, 0.001, 100, &o->fontwidth);
	if (!strcmp(key, "factor"))
		return parse_double(v, 1e-300, 1e300, &o->factor);
	if (!strcmp(key, "total"))
		return parse_double(v, 0, 1e300, &o->total);
	if (!strcmp(key, "minwidth")) {
		char buf[64];
		size_t n = v ? strlen(v) : 0;
		bool pct = n && v[n - 1] == '%';
		double d;

		/* flamegraph.pl: ^([0-9.]+)%?$ */
		if (!n || n >= sizeof(buf) || strspn(v, "0123456789.") != n - pct)
			return -EINVAL;
		memcpy(buf, v, n - pct);
		buf[n - pct] = 0;
		err = parse_double(buf, 0, pct ? 100 : 1e12, &d);
		if (err)
			return err;
		o->minwidth = d;
		o->minwidth_pct = pct;
		return 0;
	}
	if (!strcmp(key, "colors") || !strcmp(key, "color")) {
		for (i = 0; i < FG_PALETTE__COUNT; i++)
			if (v && !strcmp(v, palette_names[i])) {
				o->colors = (enum flamegraph_palette)i;
				return 0;
			}
		return -EINVAL;
	}
	if (!strcmp(key, "bgcolors")) {
		if (!v || !fg_valid_bgcolors(v))
			return -EINVAL;
		return set_str(&o->bgcolors, v);
	}
	if (!strcmp(key, "hash") || !strcmp(key, "random")) {
		err = parse_bool(v, &b);
		if (err)
			return err;
		if (b)
			o->colorby = key[0] == 'h' ? FG_COLORBY_HASH : FG_COLORBY_RANDOM;
		else if (o->colorby == (key[0] == 'h' ? FG_COLORBY_HASH : FG_COLORBY_RANDOM))
			o->colorby = FG_COLORBY_NAME;
		return 0;
	}
	if (!strcmp(key, "seed")) {
		char *end;
		unsigned long long s;

		if (!v || *v < '0' || *v > '9')
			return -EINVAL;
		errno = 0;
		s = strtoull(v, &end, 10);
		if (errno || *end)
			return -EINVAL;
		o->seed = s;
		return 0;
	}
	if (!strcmp(key, "cp")) {
		/* a boolean, or the path of the palette map */
		if (parse_bool(v, &b) == 0) {
			o->cp = b;
			return 0;
		}
		o->cp = true;
		return set_str(&o->cp_path, v);
	}
	if (!strcmp(key, "nameattr")) {
		if (!v || !*v)
			return -EINVAL;
		err = nameattr_load(o, v);
		if (err)
			return err;
		return set_str(&o->nameattr_path, v);
	}
	{
		static const char *const flags[] = { "reverse", "inverted", "flamechart", "negate" };
		bool *dst[] = { &o->reverse, &o->inverted, &o->flamechart, &o->negate };

		for (i = 0; i < 4; i++)
			if (!strcmp(key, flags[i])) {
				err = parse_bool(v, &b);
				if (err)
					return err;
				*dst[i] = b;
				return 0;
			}
	}
	return -EINVAL;
}

static const char *cp_path(const struct flamegraph_opts *o)
{
	return o->cp_path && *o->cp_path ? o->cp_path : "palette.map";
}

int flamegraph_cp_load(struct flamegraph_opts *o)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	if (!o->cpmap) {
		o->cpmap = cpmap_new();
		if (!o->cpmap)
			return -ENOMEM;
	}
	f = fopen(cp_path(o), "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *arrow, *val, *end;

		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		arrow = strstr(line, "->");
		if (!arrow)
			continue; /* flamegraph.pl keeps such a key with no value: never used */
		val = arrow + 2;
		end = strstr(val, "->"); /* perl's split keeps only the second field */
		if (end)
			*end = 0;
		err = fg_cpmap_set(o->cpmap, line, (size_t)(arrow - line), val);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

struct cp_ent {
	const char *k;
	size_t klen;
	const char *v;
};

static int cmp_cp(const void *a, const void *b)
{
	const struct cp_ent *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->k, y->k, n);

	if (c)
		return c;
	return (x->klen > y->klen) - (x->klen < y->klen);
}

int flamegraph_cp_save(const struct flamegraph_opts *o)
{
	const struct flamegraph_cpmap *m = o->cpmap;
	struct cp_ent *ents;
	size_t n = 0, i, cnt;
	FILE *f;
	int err = 0;

	if (!m)
		return 0;
	cnt = strtab__count(m->keys);
	ents = malloc((cnt ? cnt : 1) * sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (i = 0; i < cnt && i < m->cap; i++)
		if (m->vals[i])
			ents[n++] = (struct cp_ent){ strtab__str(m->keys, (uint32_t)i),
						     strtab__len(m->keys, (uint32_t)i), m->vals[i] };
	qsort(ents, n, sizeof(*ents), cmp_cp);
	f = fopen(cp_path(o), "we");
	if (!f) {
		err = -errno;
		free(ents);
		return err;
	}
	for (i = 0; i < n; i++) {
		fwrite(ents[i].k, 1, ents[i].klen, f);
		fprintf(f, "->%s\n", ents[i].v);
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	free(ents);
	return err;
}

/* ---- the layout ---- */

struct fg_ent {
	const uint32_t *f;
	uint32_t n;
	uint32_t idx;	/* stack index in the profile, or event index (flame charts) */
	uint32_t kd;	/* the sort key cached in @key is the one at depth kd - 1 (0: none) */
	uint32_t key;
};

struct fg_node {
	uint32_t id;
	uint32_t depth;
	double stime, etime;
	double t1;	/* inclusive first-column count (differential) */
	double delta;	/* self delta, flamegraph.pl's */
};

enum tok_kind { TOK_CONT, TOK_LEAF, TOK_END };

struct fg_ctx {
	const struct profile *p;
	const struct strtab *st;
	const struct flamegraph_opts *o;
	const struct flamegraph_event *ev; /* NULL: counts come from the profile */
	bool diff, reverse;

	/* sort keys */
	uint32_t *key_cont, *key_leaf; /* per frame id */
	uint32_t key_end;
	unsigned char *amb;	/* per key: a leaf token that prefixes another token */
	struct sbuf tmp_a, tmp_b;

	/* chain palette: waker frames renamed "name_[w]" */
	struct strtab *wst;
	int32_t *wid;		/* per frame id: id in wst, or -1 */
	size_t nbase;

	/* results */
	struct fg_node *nodes;
	size_t nnodes, nodes_cap;
	double time, timemax, maxdelta;
	double widthpertime, minwidth_time;
	struct flamegraph_stats stats;
	int err;
};

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

static const char *fg_frame_name(const struct fg_ctx *c, uint32_t id, size_t *len)
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
			sbuf_adds(&nb, "_[w]");
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

static void fg_ctx_fini(struct fg_ctx *c)
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
static int fg_layout(struct fg_ctx *c, const struct profile *p, const struct flamegraph_event *ev,
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
	qsort(c->nodes, c->nnodes, sizeof(*c->nodes), cmp_node);
out:
	free(ents);
	return err;
}

/* ---- output ---- */

struct fg_geom {
	double fontsize, ypad1, ypad2, ypad3;
	double imageheight;	/* flamegraph.pl's, frames are placed from it */
	double fullheight;	/* plus our note lines */
	unsigned int nlines;	/* note lines below the graph */
};

static double node_y1(const struct fg_ctx *c, const struct fg_geom *g, const struct fg_node *n)
{
	double fh = c->o->height;

	if (!c->o->inverted)
		return g->imageheight - g->ypad2 - (n->depth + 1) * fh + FG_FRAMEPAD;
	return g->ypad1 + n->depth * fh;
}

static double node_y2(const struct fg_ctx *c, const struct fg_geom *g, const struct fg_node *n)
{
	double fh = c->o->height;

	if (!c->o->inverted)
		return g->imageheight - g->ypad2 - n->depth * fh;
	return g->ypad1 + (n->depth + 1) * fh - FG_FRAMEPAD;
}

static double node_etime(const struct fg_ctx *c, const struct fg_node *n)
{
	return n->id == FG_ROOT && n->depth == 0 ? c->timemax : n->etime;
}

/* flamegraph.pl prints x with %0.1f, and the width as %0.1f of the difference of those. */
static void rect_x_w(double x1, double x2, char *xs, size_t xn, char *ws, size_t wn)
{
	char x2s[64];

	snprintf(xs, xn, "%0.1f", x1);
	snprintf(x2s, sizeof(x2s), "%0.1f", x2);
	snprintf(ws, wn, "%0.1f", strtod(x2s, NULL) - strtod(xs, NULL));
}

/* perl's default number format */
static void add_num(struct sbuf *sb, double v)
{
	sbuf_addf(sb, "%.15g", v);
}

/*
 * XML-safe text: & < > (and " in attributes) as entities; bytes that are not valid UTF-8 or
 * encode a character XML forbids (controls but tab, surrogates, U+FFFE/F) become '?'.
 */
static void add_xml(struct sbuf *sb, const char *s, size_t len, bool attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;

	while (i < len) {
		unsigned char ch = p[i];
		const char *rep = NULL;
		size_t n = 1;

		if (ch >= 0x80) {
			uint32_t cp;
			size_t need, k;

			if (ch >= 0xc2 && ch <= 0xdf)
				need = 2, cp = ch & 0x1f;
			else if (ch >= 0xe0 && ch <= 0xef)
				need = 3, cp = ch & 0x0f;
			else if (ch >= 0xf0 && ch <= 0xf4)
				need = 4, cp = ch & 0x07;
			else
				goto bad;
			if (i + need > len)
				goto bad;
			for (k = 1; k < need; k++) {
				if ((p[i + k] & 0xc0) != 0x80)
					goto bad;
				cp = (cp << 6) | (p[i + k] & 0x3f);
			}
			if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
				goto bad;
			i += need;
			continue;
bad:
			rep = "?";
		} else if (ch == '&') {
			rep = "&amp;";
		} else if (ch == '<') {
			rep = "&lt;";
		} else if (ch == '>') {
			rep = "&gt;";
		} else if (ch == '"' && attr) {
			rep = "&quot;";
		} else if (ch < 0x20 && ch != '\t') {
			rep = "?";
		} else {
			i++;
			continue;
		}
		sbuf_add(sb, s + start, i - start);
		sbuf_adds(sb, rep);
		i += n;
		start = i;
	}
	sbuf_add(sb, s + start, i - start);
}

static void add_xmls(struct sbuf *sb, const char *s, bool attr)
{
	add_xml(sb, s, strlen(s), attr);
}

/* A JavaScript string body that is also safe inside CDATA and XML. */
static void add_js(struct sbuf *sb, const char *s)
{
	struct sbuf t = SBUF_INIT;
	size_t i;

	add_xml(&t, s, strlen(s), false); /* validates UTF-8, then we undo the entities */
	sbuf_fini(&t);
	for (i = 0; s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\\' || ch == '"')
			sbuf_addf(sb, "\\%c", ch);
		else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&' || ch == ']')
			sbuf_addf(sb, "\\u%04x", ch);
		else if (ch >= 0x80)
			sbuf_addf(sb, "\\u%04x", 0xfffd); /* keep non-ASCII out of the way */
		else
			sbuf_addc(sb, (char)ch);
	}
}

static void add_commas(struct sbuf *sb, double v)
{
	char buf[400];
	int n = snprintf(buf, sizeof(buf), "%.0f", v), i, lead;

	if (n <= 0 || n >= (int)sizeof(buf)) {
		sbuf_adds(sb, "?");
		return;
	}
	i = buf[0] == '-' ? 1 : 0;
	sbuf_add(sb, buf, (size_t)i);
	lead = (n - i) % 3;
	if (!lead)
		lead = 3;
	sbuf_add(sb, buf + i, (size_t)lead);
	for (i += lead; i < n; i += 3) {
		sbuf_addc(sb, ',');
		sbuf_add(sb, buf + i, 3);
	}
}

static size_t strip_annotation(const char *s, size_t len)
{
	if (len >= 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
	    strchr("kwij", s[len - 2]) && s[len - 2])
		return len - 4;
	return len;
}

static const char *opt_or(const char *s, const char *def)
{
	return s && *s ? s : def;
}

static void add_info(struct sbuf *sb, const struct fg_ctx *c, const struct fg_node *n,
		     const char *name, size_t len)
{
	const struct flamegraph_opts *o = c->o;
	const char *countname = opt_or(o->countname, "samples");
	double samples, denom = c->timemax * o->factor;
	char sbuf_s[400];

	snprintf(sbuf_s, sizeof(sbuf_s), "%.0f", (node_etime(c, n) - n->stime) * o->factor);
	samples = strtod(sbuf_s, NULL);
	if (n->id == FG_ROOT && n->depth == 0) {
		sbuf_adds(sb, "all (");
		add_commas(sb, samples);
		sbuf_addf(sb, " ");
		add_xmls(sb, countname, false);
		sbuf_adds(sb, ", 100%)");
		return;
	}
	add_xml(sb, name, strip_annotation(name, len), false);
	sbuf_adds(sb, " (");
	add_commas(sb, samples);
	sbuf_addc(sb, ' ');
	add_xmls(sb, countname, false);
	sbuf_addf(sb, ", %.2f%%", 100 * samples / denom);
	if (c->diff) {
		double d = o->negate ? -n->delta : n->delta;

		sbuf_adds(sb, "; before ");
		add_commas(sb, n->t1 * o->factor);
		sbuf_addf(sb, ", self %s%.2f%%", d > 0 ? "+" : "", 100 * d / denom);
	}
	sbuf_addc(sb, ')');
}

static void frame_color(struct fg_ctx *c, const struct fg_colorer *col, const struct fg_node *n,
			const char *name, size_t len, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_rgb rgb;

	if (len == 2 && !memcmp(name, "--", 2)) {
		sbuf_adds(sb, "rgb(160,160,160)");
		return;
	}
	if (len == 1 && name[0] == '-') {
		sbuf_adds(sb, "rgb(200,200,200)");
		return;
	}
	if (c->diff) {
		fg_color_scale(n->delta, c->maxdelta, o->negate, &rgb);
	} else if (o->cp && o->cpmap) {
		const char *v = fg_cpmap_get(o->cpmap, name, len);

		if (v) {
			add_xmls(sb, v, true);
			return;
		}
		fg_color(col, name, len, &rgb);
		{
			char tmp[48];

			snprintf(tmp, sizeof(tmp), "rgb(%d,%d,%d)", rgb.r, rgb.g, rgb.b);
			if (fg_cpmap_set(o->cpmap, name, len, tmp))
				c->err = -ENOMEM;
			sbuf_adds(sb, tmp);
			return;
		}
	} else {
		fg_color(col, name, len, &rgb);
	}
	sbuf_addf(sb, "rgb(%d,%d,%d)", rgb.r, rgb.g, rgb.b);
}

/* My own script (not flamegraph.pl's): hover, zoom, search, URL state. */
static const char fg_script[] =
	"\"use strict\";\n"
	"var details,matchedtxt,searchbtn,icbtn,unzoombtn,frames,svgw,term=null,ic=false,cur=null;\n"
	"function init(evt){details=document.getElementById(\"details\").firstChild;"
	"matchedtxt=document.getElementById(\"matched\");searchbtn=document.getElementById(\"search\");"
	"icbtn=document.getElementById(\"ignorecase\");unzoombtn=document.getElementById(\"unzoom\");"
	"frames=document.getElementById(\"frames\");"
	"svgw=+document.documentElement.getAttribute(\"width\");var p=params();"
	"if(p.x&&p.y){var r=frames.querySelector('rect[x=\"'+p.x+'\"][y=\"'+p.y+'\"]');"
	"if(r)zoom(r.parentNode);}"
	"if(p.s)search(p.s);else if(C.search)search(C.search);}\n"
	"function params(){var o={},a=window.location.search.substring(1).split(\"&\");"
	"for(var i=0;i<a.length;i++){var k=a[i].indexOf(\"=\");if(k<1)continue;"
	"try{o[a[i].substring(0,k)]=decodeURIComponent(a[i].substring(k+1));}catch(e){}}return o;}\n"
	"function setparams(o){var q=[];for(var k in o)q.push(k+\"=\"+encodeURIComponent(o[k]));"
	"try{history.replaceState(null,null,q.length?\"?\"+q.join(\"&\"):window.location.pathname);}"
	"catch(e){}}\n"
	"function group(n){while(n&&n.parentNode){if(n.parentNode===frames)return n;"
	"n=n.parentNode;}return null;}\n"
	"function geom(g){var r=g.querySelector(\"rect\");if(!r.hasAttribute(\"fx\")){"
	"r.setAttribute(\"fx\",r.getAttribute(\"x\"));r.setAttribute(\"fw\",r.getAttribute(\"width\"));}"
	"return{r:r,x:+r.getAttribute(\"fx\"),w:+r.getAttribute(\"fw\"),y:+r.getAttribute(\"y\")};}\n"
	"function title(g){var t=g.querySelector(\"title\");return t?t.textContent:\"\";}\n"
	"function fname(g){var t=title(g),k=t.lastIndexOf(\" (\");t=k<0?t:t.substring(0,k);"
	"return t;}\n"
	"function label(g,a,x,w){var t=g.querySelector(\"text\"),n=Math.floor(w/(C.fs*C.fw)),s=\"\";"
	"if(n>=3){s=fname(g);if(s.length>n)s=s.substring(0,n-2)+\"..\";}"
	"if(!t){if(!s)return;t=document.createElementNS(\"http://www.w3.org/2000/svg\",\"text\");"
	"t.setAttribute(\"y\",(a.y+(+a.r.getAttribute(\"height\"))/2+3).toFixed(1));g.appendChild(t);}"
	"t.setAttribute(\"x\",(x+3).toFixed(2));t.textContent=s;}\n"
	"function place(g,a,x,w){a.r.setAttribute(\"x\",x.toFixed(1));"
	"a.r.setAttribute(\"width\",w.toFixed(1));label(g,a,x,w);}\n"
	"function zoom(node){var z=geom(node),full=svgw-2*C.xpad,f=0.0001,gs=frames.children;"
	"if(z.w>=full-f){unzoom();return;}var ratio=full/z.w;cur=node;"
	"unzoombtn.classList.remove(\"hide\");"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);g.classList.remove(\"parent\",\"hide\");"
	"var rootside=C.inv?a.y<z.y:a.y>z.y;"
	"if(rootside){if(a.x<=z.x+f&&a.x+a.w>=z.x+z.w-f){g.classList.add(\"parent\");"
	"place(g,a,C.xpad,full);}else g.classList.add(\"hide\");}"
	"else if(a.x>=z.x-f&&a.x+a.w<=z.x+z.w+f)place(g,a,C.xpad+(a.x-z.x)*ratio,a.w*ratio);"
	"else g.classList.add(\"hide\");}"
	"var p=params();p.x=z.r.getAttribute(\"fx\");p.y=z.r.getAttribute(\"y\");setparams(p);}\n"
	"function unzoom(){var gs=frames.children;cur=null;unzoombtn.classList.add(\"hide\");"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);g.classList.remove(\"parent\",\"hide\");"
	"place(g,a,a.x,a.w);}var p=params();delete p.x;delete p.y;setparams(p);}\n"
	"function search_prompt(){if(term!==null){reset_search();return;}"
	"var t=prompt(\"Enter a search term (regexp allowed, eg: ^ext4_)\"+"
	"(ic?\", ignoring case\":\"\")+\"\\nPress Ctrl-i to toggle case sensitivity\",\"\");"
	"if(t!=null&&t!==\"\")search(t);}\n"
	"function reset_search(){term=null;var gs=frames.children;for(var i=0;i<gs.length;i++){"
	"var r=gs[i].querySelector(\"rect\");if(r.hasAttribute(\"ff\")){"
	"r.setAttribute(\"fill\",r.getAttribute(\"ff\"));r.removeAttribute(\"ff\");}}"
	"matchedtxt.classList.add(\"hide\");searchbtn.classList.remove(\"show\");"
	"searchbtn.firstChild.nodeValue=\"Search\";var p=params();delete p.s;setparams(p);}\n"
	"function search(t){var re;try{re=new RegExp(t,ic?\"i\":\"\");}catch(e){return;}"
	"reset_search();term=t;var gs=frames.children,m=[],full=svgw-2*C.xpad;"
	"for(var i=0;i<gs.length;i++){var g=gs[i],a=geom(g);if(!re.test(fname(g)))continue;"
	"a.r.setAttribute(\"ff\",a.r.getAttribute(\"fill\"));a.r.setAttribute(\"fill\",C.sc);"
	"m.push(a);}"
	"m.sort(function(p,q){return p.x-q.x||q.w-p.w;});var sum=0,end=-1;"
	"for(var j=0;j<m.length;j++){if(m[j].x>=end-0.0001){sum+=m[j].w;end=m[j].x+m[j].w;}}"
	"var pct=100*sum/full;pct=pct>=99.995?\"100\":pct.toFixed(1);"
	"matchedtxt.classList.remove(\"hide\");matchedtxt.firstChild.nodeValue=\"Matched: \"+pct+\"%\";"
	"searchbtn.classList.add(\"show\");searchbtn.firstChild.nodeValue=\"Reset Search\";"
	"var p=params();p.s=t;setparams(p);}\n"
	"function toggle_ic(){ic=!ic;icbtn.classList.toggle(\"show\",ic);"
	"if(term!==null)search(term);}\n"
	"window.addEventListener(\"click\",function(e){var g=group(e.target);if(g){"
	"if(g.nodeName==\"a\"){if(!e.ctrlKey)return;e.preventDefault();}zoom(g);return;}"
	"var id=e.target.id;if(id==\"unzoom\")unzoom();else if(id==\"search\")search_prompt();"
	"else if(id==\"ignorecase\")toggle_ic();},false);\n"
	"window.addEventListener(\"mouseover\",function(e){var g=group(e.target);"
	"if(g)details.nodeValue=C.nametype+\" \"+title(g);},false);\n"
	"window.addEventListener(\"mouseout\",function(e){if(group(e.target))details.nodeValue=\" \";},"
	"false);\n"
	"window.addEventListener(\"keydown\",function(e){"
	"if(e.keyCode===114||(e.ctrlKey&&e.keyCode===70)){e.preventDefault();search_prompt();}"
	"else if(e.ctrlKey&&e.keyCode===73){e.preventDefault();toggle_ic();}},false);\n";

static void bg_colors(const struct flamegraph_opts *o, const char **c1, const char **c2)
{
	const char *bg = o->bgcolors;

	if (!bg || !*bg) {
		switch (o->colors) {
		case FG_PALETTE_MEM:
			bg = "green";
			break;
		case FG_PALETTE_IO:
		case FG_PALETTE_WAKEUP:
		case FG_PALETTE_CHAIN:
			bg = "blue";
			break;
		case FG_PALETTE_RED:
		case FG_PALETTE_GREEN:
		case FG_PALETTE_BLUE:
		case FG_PALETTE_AQUA:
		case FG_PALETTE_YELLOW:
		case FG_PALETTE_PURPLE:
		case FG_PALETTE_ORANGE:
			bg = "grey";
			break;
		default:
			bg = "yellow";
		}
	}
	if (!strcmp(bg, "blue")) {
		*c1 = "#eeeeee";
		*c2 = "#e0e0ff";
	} else if (!strcmp(bg, "green")) {
		*c1 = "#eef2ee";
		*c2 = "#e0ffe0";
	} else if (!strcmp(bg, "grey")) {
		*c1 = "#f8f8f8";
		*c2 = "#e8e8e8";
	} else if (bg[0] == '#') {
		*c1 = *c2 = bg;
	} else {
		*c1 = "#eeeeee";
		*c2 = "#eeeeb0";
	}
}

static void svg_header(struct sbuf *sb, const struct flamegraph_opts *o, double w, double h)
{
	sbuf_adds(sb, "<?xml version=\"1.0\"");
	if (o->encoding && *o->encoding) {
		sbuf_adds(sb, " encoding=\"");
		add_xmls(sb, o->encoding, true);
		sbuf_addc(sb, '"');
	}
	sbuf_adds(sb, " standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
	sbuf_adds(sb, "<svg version=\"1.1\" width=\"");
	add_num(sb, w);
	sbuf_adds(sb, "\" height=\"");
	add_num(sb, h);
	sbuf_adds(sb, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	add_num(sb, w);
	sbuf_addc(sb, ' ');
	add_num(sb, h);
	sbuf_adds(sb, "\" xmlns=\"http://www.w3.org/2000/svg\" "
		      "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		      "<!-- Flame graph drawn by ember flamegraph (layout of FlameGraph's "
		      "flamegraph.pl) -->\n");
	if (o->notes && *o->notes) {
		sbuf_adds(sb, "<!-- NOTES: ");
		add_xmls(sb, o->notes, false);
		sbuf_adds(sb, " -->\n");
	}
}

static void text_el(struct sbuf *sb, const char *id, double x, double y, const char *extra,
		    const char *s, size_t len)
{
	sbuf_adds(sb, "<text");
	if (id)
		sbuf_addf(sb, " id=\"%s\"", id);
	sbuf_addf(sb, " x=\"%0.2f\" y=\"", x);
	add_num(sb, y);
	sbuf_addc(sb, '"');
	if (extra)
		sbuf_addf(sb, " %s", extra);
	sbuf_addc(sb, '>');
	add_xml(sb, s, len, false);
	sbuf_adds(sb, "</text>\n");
}

static void note_lines(const struct fg_ctx *c, struct sbuf *lines)
{
	const struct flamegraph_opts *o = c->o;

	if (c->stats.elided) {
		sbuf_addf(lines, "%zu frame%s (%.2f%% of %s) narrower than %g%s not shown",
			  c->stats.elided, c->stats.elided == 1 ? "" : "s",
			  100 * c->stats.elided_samples / c->timemax,
			  opt_or(o->countname, "samples"), o->minwidth,
			  o->minwidth_pct ? "%" : " px");
	}
	if (o->info && *o->info) {
		if (lines->len)
			sbuf_addc(lines, '\n');
		sbuf_adds(lines, o->info);
	}
}

static int fg_render_svg(struct fg_ctx *c, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_geom g = { .fontsize = o->fontsize };
	struct sbuf lines = SBUF_INIT;
	const char *bg1, *bg2, *title;
	uint64_t rng = o->seed ? o->seed : ((uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ULL);
	struct fg_colorer col = { .palette = o->colors, .by = o->colorby, .rng = &rng };
	double w = o->width, fs = o->fontsize;
	size_t i, l;

	if (!rng)
		rng = 1;
	g.ypad1 = fs * 3;
	g.ypad2 = fs * 2 + 10;
	g.ypad3 = fs * 2;
	g.imageheight = (c->stats.depth + 1.0) * o->height + g.ypad1 + g.ypad2;
	if (o->subtitle && *o->subtitle)
		g.imageheight += g.ypad3;
	note_lines(c, &lines);
	if (lines.len) {
		g.nlines = 1;
		for (l = 0; l < lines.len; l++)
			g.nlines += lines.buf[l] == '\n';
	}
	g.fullheight = g.imageheight + g.nlines * (fs + 5);
	title = opt_or(o->title, o->flamechart ? "Flame Chart"
				 : o->inverted ? "Icicle Graph"
					       : "Flame Graph");
	bg_colors(o, &bg1, &bg2);

	svg_header(sb, o, w, g.fullheight);
	sbuf_addf(sb, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		      "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" "
		      "offset=\"95%%\"/></linearGradient></defs>\n", bg1, bg2);
	sbuf_adds(sb, "<style type=\"text/css\">\ntext{font-family:");
	for (l = 0; o->fonttype && o->fonttype[l]; l++)
		if (!strchr(";{}<>&\\\"'", o->fonttype[l]) && (unsigned char)o->fonttype[l] >= 0x20 &&
		    (unsigned char)o->fonttype[l] < 0x7f)
			sbuf_addc(sb, o->fonttype[l]);
	if (!o->fonttype || !*o->fonttype)
		sbuf_adds(sb, "Verdana");
	sbuf_addf(sb, ";font-size:%gpx;fill:rgb(0,0,0)}\n", fs);
	sbuf_addf(sb, "#search,#ignorecase{opacity:0.1;cursor:pointer}\n"
		      "#search:hover,#search.show,#ignorecase:hover,#ignorecase.show{opacity:1}\n"
		      "#subtitle{text-anchor:middle;fill:rgb(160,160,160)}\n"
		      "#title{text-anchor:middle;font-size:%gpx}\n#unzoom{cursor:pointer}\n"
		      "#frames>*:hover{stroke:black;stroke-width:0.5;cursor:pointer}\n"
		      "#frames rect{rx:2px;ry:2px}\n.hide{display:none}\n.parent{opacity:0.5}\n"
		      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n",
		  fs + 5);
	sbuf_addf(sb, "var C={xpad:%d,fs:%g,fw:%g,inv:%s,sc:\"rgb(230,0,230)\",nametype:\"",
		  FG_XPAD, fs, o->fontwidth, o->inverted ? "true" : "false");
	add_js(sb, opt_or(o->nametype, "Function:"));
	sbuf_adds(sb, "\",search:\"");
	add_js(sb, o->search ? o->search : "");
	sbuf_adds(sb, "\"};\n");
	sbuf_adds(sb, fg_script);
	sbuf_adds(sb, "]]></script>\n");
	sbuf_adds(sb, "<rect x=\"0.0\" y=\"0\" width=\"");
	add_num(sb, w);
	sbuf_adds(sb, "\" height=\"");
	add_num(sb, g.fullheight);
	sbuf_adds(sb, "\" fill=\"url(#background)\"/>\n");
	text_el(sb, "title", (int)(w / 2), fs * 2, NULL, title, strlen(title));
	if (o->subtitle && *o->subtitle)
		text_el(sb, "subtitle", (int)(w / 2), fs * 4, NULL, o->subtitle,
			strlen(o->subtitle));
	text_el(sb, "details", FG_XPAD, g.imageheight - g.ypad2 / 2, NULL, " ", 1);
	text_el(sb, "unzoom", FG_XPAD, fs * 2, "class=\"hide\"", "Reset Zoom", 10);
	text_el(sb, "search", w - FG_XPAD - 100, fs * 2, NULL, "Search", 6);
	text_el(sb, "ignorecase", w - FG_XPAD - 16, fs * 2, NULL, "ic", 2);
	text_el(sb, "matched", w - FG_XPAD - 100, g.imageheight - g.ypad2 / 2, NULL, " ", 1);
	if (lines.len) {
		const char *s = lines.buf, *nl;
		unsigned int k = 0;

		for (;; k++) {
			nl = strchr(s, '\n');
			text_el(sb, k ? NULL : "elided", FG_XPAD,
				g.imageheight - g.ypad2 / 2 + (k + 1) * (fs + 5), NULL, s,
				nl ? (size_t)(nl - s) : strlen(s));
			if (!nl)
				break;
			s = nl + 1;
		}
	}
	sbuf_fini(&lines);

	sbuf_adds(sb, "<g id=\"frames\">\n");
	for (i = 0; i < c->nnodes; i++) {
		const struct fg_node *n = &c->nodes[i];
		double x1 = FG_XPAD + n->stime * c->widthpertime;
		double x2 = FG_XPAD + node_etime(c, n) * c->widthpertime;
		double y1 = node_y1(c, &g, n), y2 = node_y2(c, &g, n);
		char xs[64], ws[64];
		size_t len, tlen;
		const char *name = fg_frame_name(c, n->id, &len);
		const struct fg_attr *attrs = fg_find_attrs(o, name, len);
		const char *href = fg_attr_get(attrs, "href"),
			   *custom = fg_attr_get(attrs, "title");
		static const char *const gkeys[] = { "id", "class" };
		size_t k, chars;

		if (href) {
			sbuf_adds(sb, "<a xlink:href=\"");
			add_xmls(sb, href, true);
			sbuf_adds(sb, "\" target=\"");
			add_xmls(sb, opt_or(fg_attr_get(attrs, "target"), "_top"), true);
			sbuf_addc(sb, '"');
			if (fg_attr_get(attrs, "a_extra")) {
				sbuf_addc(sb, ' ');
				add_xmls(sb, fg_attr_get(attrs, "a_extra"), false);
			}
		} else {
			sbuf_adds(sb, "<g");
		}
		for (k = 0; k < 2; k++)
			if (fg_attr_get(attrs, gkeys[k])) {
				sbuf_addf(sb, " %s=\"", gkeys[k]);
				add_xmls(sb, fg_attr_get(attrs, gkeys[k]), true);
				sbuf_addc(sb, '"');
			}
		if (fg_attr_get(attrs, "g_extra")) {
			sbuf_addc(sb, ' ');
			add_xmls(sb, fg_attr_get(attrs, "g_extra"), false);
		}
		sbuf_adds(sb, "><title>");
		if (custom)
			add_xmls(sb, custom, false);
		else
			add_info(sb, c, n, name, len);
		rect_x_w(x1, x2, xs, sizeof(xs), ws, sizeof(ws));
		sbuf_addf(sb, "</title><rect x=\"%s\" y=\"", xs);
		add_num(sb, y1);
		sbuf_addf(sb, "\" width=\"%s\" height=\"%0.1f\" fill=\"", ws, y2 - y1);
		frame_color(c, &col, n, name, len, sb);
		sbuf_adds(sb, "\"/>");
		chars = (size_t)((x2 - x1) / (fs * o->fontwidth));
		if (chars >= 3) {
			const char *label = name;

			len = n->id == FG_ROOT ? 0 : strip_annotation(name, len);
			if (n->id == FG_ROOT)
				label = "";
			tlen = fg_utf8_chars(label, len);
			if (tlen > 0) {
				sbuf_addf(sb, "<text x=\"%0.2f\" y=\"", x1 + 3);
				add_num(sb, 3 + (y1 + y2) / 2);
				sbuf_adds(sb, "\">");
				if (chars < tlen) {
					add_xml(sb, label, fg_utf8_prefix(label, len, chars - 2),
						false);
					sbuf_adds(sb, "..");
				} else {
					add_xml(sb, label, len, false);
				}
				sbuf_adds(sb, "</text>");
			}
		}
		sbuf_adds(sb, href ? "</a>\n" : "</g>\n");
	}
	sbuf_adds(sb, "</g>\n</svg>\n");
	if (c->err)
		return c->err;
	return sbuf_error(sb);
}

static void fg_error_svg(const struct flamegraph_opts *o, struct sbuf *sb)
{
	double h = o->fontsize * 5;
	static const char msg[] = "ERROR: No valid input provided to ember flamegraph.";

	svg_header(sb, o, o->width, h);
	text_el(sb, NULL, (int)(o->width / 2), o->fontsize * 2, NULL, msg, sizeof(msg) - 1);
	sbuf_adds(sb, "</svg>\n");
}

struct tsv_row {
	double y, x;
	size_t node;
};

static int cmp_row(const void *a, const void *b)
{
	const struct tsv_row *x = a, *y = b;

	if (x->y != y->y)
		return (x->y > y->y) - (x->y < y->y);
	if (x->x != y->x)
		return (x->x > y->x) - (x->x < y->x);
	return (x->node > y->node) - (x->node < y->node);
}

static int fg_render_tsv(struct fg_ctx *c, struct sbuf *sb)
{
	const struct flamegraph_opts *o = c->o;
	struct fg_geom g = { .fontsize = o->fontsize };
	struct tsv_row *rows = malloc((c->nnodes ? c->nnodes : 1) * sizeof(*rows));
	size_t i;

	if (!rows)
		return -ENOMEM;
	g.ypad1 = o->fontsize * 3;
	g.ypad2 = o->fontsize * 2 + 10;
	g.imageheight = (c->stats.depth + 1.0) * o->height + g.ypad1 + g.ypad2;
	if (o->subtitle && *o->subtitle)
		g.imageheight += o->fontsize * 2;
	for (i = 0; i < c->nnodes; i++) {
		char xs[64];

		snprintf(xs, sizeof(xs), "%0.1f", FG_XPAD + c->nodes[i].stime * c->widthpertime);
		rows[i] = (struct tsv_row){ node_y1(c, &g, &c->nodes[i]), strtod(xs, NULL), i };
	}
	qsort(rows, c->nnodes, sizeof(*rows), cmp_row);
	for (i = 0; i < c->nnodes; i++) {
		const struct fg_node *n = &c->nodes[rows[i].node];
		char xs[64], ws[64];
		size_t len;
		const char *name = fg_frame_name(c, n->id, &len);

		rect_x_w(FG_XPAD + n->stime * c->widthpertime,
			 FG_XPAD + node_etime(c, n) * c->widthpertime, xs, sizeof(xs), ws,
			 sizeof(ws));
		add_num(sb, rows[i].y);
		sbuf_addf(sb, "\t%s\t%s\t%.0f\t", xs, ws, (node_etime(c, n) - n->stime) * o->factor);
		if (n->id == FG_ROOT && n->depth == 0)
			sbuf_adds(sb, "all");
		else
			sbuf_add(sb, name, strip_annotation(name, len)); /* as in the tooltip */
		sbuf_addc(sb, '\n');
	}
	free(rows);
	return sbuf_error(sb);
}

static int render_any(const struct profile *p, const struct flamegraph_event *ev, size_t nev,
		      bool events, const struct flamegraph_opts *o, struct sbuf *out,
		      struct flamegraph_stats *ret_stats, bool tsv)
{
	struct fg_ctx c;
	int err;

	if (o->width < 2 * FG_XPAD + 1 || o->height < 1 || !(o->fontsize > 0) ||
	    !(o->fontwidth > 0) || !(o->factor > 0) || !(o->minwidth >= 0) ||
	    (o->notes && (strpbrk(o->notes, "<>") || strstr(o->notes, "--"))) ||
	    (o->bgcolors && !fg_valid_bgcolors(o->bgcolors)) ||
	    (unsigned)o->colors >= FG_PALETTE__COUNT)
		return -EINVAL;
	err = fg_layout(&c, p, ev, nev, events, o);
	if (err == -ENODATA && !tsv)
		fg_error_svg(o, out);
	if (!err)
		err = tsv ? fg_render_tsv(&c, out) : fg_render_svg(&c, out);
	if (!err && ret_stats)
		*ret_stats = c.stats;
	fg_ctx_fini(&c);
	if (!err)
		err = sbuf_error(out);
	return err;
}

int flamegraph_render(const struct profile *p, const struct flamegraph_opts *o, struct sbuf *out)
{
	return render_any(p, NULL, 0, false, o, out, NULL, false);
}

int flamegraph_render_stats(const struct profile *p, const struct flamegraph_opts *o,
			    struct sbuf *out, struct flamegraph_stats *ret_stats)
{
	return render_any(p, NULL, 0, false, o, out, ret_stats, false);
}

int flamegraph_frames_tsv(const struct profile *p, const struct flamegraph_opts *o,
			  struct sbuf *out)
{
	return render_any(p, NULL, 0, false, o, out, NULL, true);
}

int flamegraph_render_events(const struct profile *p, const struct flamegraph_event *ev,
			     size_t nev, const struct flamegraph_opts *o, struct sbuf *out,
			     struct flamegraph_stats *ret_stats)
{
	return render_any(p, ev, nev, ev != NULL, o, out, ret_stats, false);
}

int flamegraph_frames_tsv_events(const struct profile *p, const struct flamegraph_event *ev,
				 size_t nev, const struct flamegraph_opts *o, struct sbuf *out)
{
	return render_any(p, ev, nev, ev != NULL, o, out, NULL, true);
}
