// SPDX-License-Identifier: MIT
/* d3json: a profile as d3-flame-graph's {name, value, children} tree. */
#include "ember/core/formats/d3json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

/* A call-tree node; children are chained, then sorted by name before writing. */
struct node {
	uint32_t frame;
	double value;
	size_t first_child;	/* node index + 1, 0: none */
	size_t next;		/* next sibling, index + 1 */
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	struct strtab *index;	/* "parent,frame" -> node index - 1 (node 0 is the root) */
	struct sbuf key;
};

static int tree_child(struct tree *t, size_t parent, uint32_t frame, size_t *ret)
{
	size_t before = strtab__count(t->index);
	int id;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct node *nn = realloc(t->nodes, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		t->cap = cap;
	}
	sbuf_reset(&t->key);
	sbuf_addu(&t->key, parent);
	sbuf_addc(&t->key, ',');
	sbuf_addu(&t->key, frame);
	if (sbuf_error(&t->key))
		return -ENOMEM;
	id = strtab__intern(t->index, t->key.buf, t->key.len);
	if (id < 0)
		return id;
	if (strtab__count(t->index) == before) {
		*ret = (size_t)id + 1;
		return 0;
	}
	/* ids are dense in order of creation, so the new node is number id + 1 == t->n */
	t->nodes[t->n] = (struct node){ .frame = frame, .next = t->nodes[parent].first_child };
	t->nodes[parent].first_child = t->n + 1;
	*ret = t->n++;
	return 0;
}

struct child_sort {
	const struct strtab *st;
	const struct node *nodes;
};

static int cmp_child(const void *a, const void *b, void *ctx)
{
	const struct child_sort *cs = ctx;
	const struct node *x = &cs->nodes[*(const size_t *)a];
	const struct node *y = &cs->nodes[*(const size_t *)b];

	return strcmp(strtab__str(cs->st, x->frame), strtab__str(cs->st, y->frame));
}

static int write_tree(const struct tree *t, const struct strtab *st, const char *root_name,
		      struct sbuf *out)
{
	/* iterative depth-first walk: a stack of (sorted children array, position) */
	struct frame {
		size_t *kids, nkids, pos;
	} *stk = NULL;
	struct child_sort cs = { .st = st, .nodes = t->nodes };
	size_t depth = 0, cap = 0, i, c, cur = 0;
	int err = 0;

	for (;;) {
		const struct node *nd = &t->nodes[cur];
		struct frame *f;

		sbuf_adds(out, "{\"name\":\"");
		if (cur == 0)
			sbuf_add_json(out, root_name, strlen(root_name));
		else
			sbuf_add_json(out, strtab__str(st, nd->frame), strtab__len(st, nd->frame));
		sbuf_adds(out, "\",\"value\":");
		sbuf_add_count(out, nd->value);
		if (nd->first_child) {
			if (depth == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct frame *ns = realloc(stk, ncap * sizeof(*ns));

				if (!ns) {
					err = -ENOMEM;
					goto out;
				}
				stk = ns;
				cap = ncap;
			}
			f = &stk[depth];
			for (f->nkids = 0, c = nd->first_child; c; c = t->nodes[c - 1].next)
				f->nkids++;
			f->kids = malloc(f->nkids * sizeof(*f->kids));
			if (!f->kids) {
				err = -ENOMEM;
				goto out;
			}
			for (i = 0, c = nd->first_child; c; c = t->nodes[c - 1].next)
				f->kids[i++] = c - 1;
			qsort_r(f->kids, f->nkids, sizeof(*f->kids), cmp_child, &cs);
			f->pos = 0;
			depth++;
			sbuf_adds(out, ",\"children\":[");
		} else {
			sbuf_addc(out, '}');
		}
		/* next node: the next child of the innermost open node, closing finished ones */
		for (;;) {
			if (!depth)
				goto out;
			f = &stk[depth - 1];
			if (f->pos < f->nkids) {
				if (f->pos)
					sbuf_addc(out, ',');
				cur = f->kids[f->pos++];
				break;
			}
			free(f->kids);
			depth--;
			sbuf_adds(out, "]}");
		}
	}
out:
	while (depth)
		free(stk[--depth].kids);
	free(stk);
	sbuf_addc(out, '\n');
	return err ? err : sbuf_error(out);
}

int d3json_write_profile(const struct profile *p, const char *root_name, struct sbuf *out)
{
	struct tree t = { .key = SBUF_INIT };
	const struct strtab *st = profile__strtab(p);
	size_t i, k, n, cur;
	int err = 0;

	t.index = strtab__new();
	t.nodes = malloc(256 * sizeof(*t.nodes));
	if (!t.index || !t.nodes) {
		err = -ENOMEM;
		goto out;
	}
	t.cap = 256;
	t.nodes[0] = (struct node){ 0 };
	t.n = 1;
	for (i = 0; i < profile__nr_stacks(p) && !err; i++) {
		const uint32_t *f = profile__stack(p, i, &n);
		double v = profile__count(p, i);

		if (v == 0)
			continue;
		t.nodes[0].value += v;
		for (k = 0, cur = 0; k < n; k++) {
			err = tree_child(&t, cur, f[k], &cur);
			if (err)
				break;
			t.nodes[cur].value += v;
		}
	}
	if (!err)
		err = write_tree(&t, st, root_name ? root_name : "root", out);
out:
	strtab__free(t.index);
	free(t.nodes);
	sbuf_fini(&t.key);
	return err;
}
