// SPDX-License-Identifier: MIT
/* flamegraph options: flamegraph_opts_*() and the --cp and --nameattr maps they load. */
#include "fg_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/strtab.h"

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
int fg_cpmap_set(struct flamegraph_cpmap *m, const char *key, size_t klen, const char *val)
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

const char *fg_cpmap_get(const struct flamegraph_cpmap *m, const char *key, size_t klen)
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

const struct fg_attr *fg_find_attrs(const struct flamegraph_opts *o, const char *s, size_t len)
{
	int id;

	if (!o->nameattr)
		return NULL;
	id = strtab__find(o->nameattr->keys, s, len);
	if (id < 0 || (size_t)id >= o->nameattr->cap)
		return NULL;
	return o->nameattr->attrs[id];
}

const char *fg_attr_get(const struct fg_attr *a, const char *key)
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

bool fg_valid_bgcolors(const char *v)
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
	if (!strcmp(key, "unit")) {
		if (v && (!strcmp(v, "ns") || !strcmp(v, "nanoseconds") || !strcmp(v, "period")))
			o->counts_ns = true;
		else if (v && !strcmp(v, "samples"))
			o->counts_ns = false;
		else
			return -EINVAL;
		return 0;
	}
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
