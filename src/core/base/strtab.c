// SPDX-License-Identifier: MIT
#include "ember/core/base/strtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/hash.h"

/*
 * Strings live in chunks that never move, so strtab__str() pointers stay valid; the index is an
 * open-addressing table of (hash, id) with linear probing, grown at 1/2 load.
 */
#define CHUNK_MIN (64u << 10)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct entry {
	uint64_t hash;
	uint32_t id1; /* id + 1; 0 = empty slot */
};

struct strtab {
	struct chunk *chunks;
	const char **strs; /* id -> string */
	uint32_t *lens;
	size_t count, strs_cap;
	struct entry *slots;
	size_t nslots; /* power of two */
	size_t mem;
	uint64_t *charge; /* strtab__charge_to(): mem added there (atomically); NULL: none */
	size_t charged;	  /* ... how much of it so far */
	size_t max_bytes; /* strtab__set_limit(): mem kept under it; 0: no bound */
	char *refused;	  /* ... the name given in place of one that does not fit */
	int32_t refused_id;
	uint64_t nr_refused;
	size_t share_max;     /* strtab__set_share_limit(): a share's bound; 0: none */
	uint64_t nr_share_refused;
	uint64_t generation;  /* strtab__renew()s so far */
	struct strtab *prev;  /* between strtab__renew() and strtab__renew_done(): the old names */
};

/* The counter of strtab__charge_to() brought to st->mem. */
static void charge_sync(struct strtab *st)
{
	if (st->charge && st->mem != st->charged) {
		__atomic_add_fetch(st->charge, (uint64_t)st->mem - (uint64_t)st->charged,
				   __ATOMIC_RELAXED);
		st->charged = st->mem;
	}
}

/* An empty table's contents in @st (its settings untouched). 0 or -ENOMEM. */
static int contents_init(struct strtab *st)
{
	st->chunks = NULL;
	st->strs = NULL;
	st->lens = NULL;
	st->count = st->strs_cap = 0;
	st->nslots = 1024;
	st->slots = calloc(st->nslots, sizeof(*st->slots));
	if (!st->slots)
		return -ENOMEM;
	st->mem = sizeof(*st) + st->nslots * sizeof(*st->slots);
	return 0;
}

static void contents_fini(struct strtab *st)
{
	struct chunk *c, *n;

	for (c = st->chunks; c; c = n) {
		n = c->next;
		free(c);
	}
	free(st->strs);
	free(st->lens);
	free(st->slots);
}

struct strtab *strtab__new(void)
{
	struct strtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->refused_id = -1;
	if (contents_init(st)) {
		free(st);
		errno = ENOMEM;
		return NULL;
	}
	return st;
}

void strtab__free(struct strtab *st)
{
	if (!st)
		return;
	if (st->charge)
		__atomic_sub_fetch(st->charge, (uint64_t)st->charged, __ATOMIC_RELAXED);
	strtab__renew_done(st);
	contents_fini(st);
	free(st->refused);
	free(st);
}

static int rehash(struct strtab *st)
{
	size_t n = st->nslots * 2, i, j;
	struct entry *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < st->nslots; i++) {
		if (!st->slots[i].id1)
			continue;
		for (j = st->slots[i].hash & (n - 1); s[j].id1; j = (j + 1) & (n - 1))
			;
		s[j] = st->slots[i];
	}
	free(st->slots);
	st->mem += (n - st->nslots) * sizeof(*s);
	st->slots = s;
	st->nslots = n;
	return 0;
}

static char *store(struct strtab *st, const char *s, size_t len)
{
	struct chunk *c = st->chunks;
	char *dst;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* a big one-off string goes behind the current chunk so its free space stays usable */
		if (st->chunks && cap > CHUNK_MIN) {
			c->next = st->chunks->next;
			st->chunks->next = c;
		} else {
			c->next = st->chunks;
			st->chunks = c;
		}
		st->mem += sizeof(*c) + cap;
	}
	dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

static size_t lookup(const struct strtab *st, const char *s, size_t len, uint64_t h)
{
	size_t mask = st->nslots - 1, i;

	for (i = h & mask; st->slots[i].id1; i = (i + 1) & mask) {
		uint32_t id = st->slots[i].id1 - 1;

		if (st->slots[i].hash == h && st->lens[id] == len && !memcmp(st->strs[id], s, len))
			return i;
	}
	return i;
}

/*
 * What interning a new string of @len bytes would add to st->mem at most: its bytes (or a new
 * chunk), the id arrays doubled, the index doubled.
 */
static size_t growth(const struct strtab *st, size_t len)
{
	const struct chunk *c = st->chunks;
	size_t g = 0;

	if (!c || c->cap - c->used < len + 1)
		g += sizeof(*c) + (len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN);
	if (st->count == st->strs_cap)
		g += (st->strs_cap ? st->strs_cap : 256) * (sizeof(*st->strs) + sizeof(*st->lens));
	if ((st->count + 1) * 2 > st->nslots)
		g += st->nslots * sizeof(*st->slots);
	return g;
}

size_t strtab__cost(size_t len)
{
	/* the bytes and their NUL, the id's pointer and length, two index slots (at most half
	 * full) */
	return len + 1 + sizeof(char *) + sizeof(uint32_t) + 2 * sizeof(struct entry);
}

static int intern(struct strtab *st, const char *s, size_t len, bool bounded,
		  strtab_admit_fn admit, void *ctx)
{
	uint64_t h = hash_bytes(s, len, 0x5eed);
	size_t i = lookup(st, s, len, h);
	char *copy;

	if (st->slots[i].id1)
		return (int)(st->slots[i].id1 - 1);
	if (bounded && st->max_bytes && st->refused_id >= 0 &&
	    st->mem + growth(st, len) > st->max_bytes) {
		st->nr_refused++;
		return st->refused_id;
	}
	/* the share last: a string the table refuses anyway is not charged */
	if (bounded && admit && st->refused_id >= 0 &&
	    !admit(ctx, strtab__cost(len), st->generation, st->share_max)) {
		st->nr_refused++;
		st->nr_share_refused++;
		return st->refused_id;
	}
	if (len > UINT32_MAX || st->count >= INT32_MAX - 1 || st->count + 2 >= st->nslots)
		return -ENOMEM; /* the last check only bites if an earlier rehash failed */
	if (st->count == st->strs_cap) {
		size_t cap = st->strs_cap ? st->strs_cap * 2 : 256;
		const char **ns = realloc(st->strs, cap * sizeof(*ns));
		uint32_t *nl;

		if (!ns)
			return -ENOMEM;
		st->strs = ns;
		nl = realloc(st->lens, cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		st->lens = nl;
		st->mem += (cap - st->strs_cap) * (sizeof(*ns) + sizeof(*nl));
		st->strs_cap = cap;
	}
	copy = store(st, s, len);
	if (!copy)
		return -ENOMEM;
	st->strs[st->count] = copy;
	st->lens[st->count] = (uint32_t)len;
	st->slots[i].hash = h;
	st->slots[i].id1 = (uint32_t)st->count + 1;
	st->count++;
	if (st->count * 2 > st->nslots)
		(void)rehash(st); /* on failure the table still has room; retried next time */
	charge_sync(st);
	return (int)(st->count - 1);
}

int strtab__intern(struct strtab *st, const char *s, size_t len)
{
	return intern(st, s, len, true, NULL, NULL);
}

int strtab__intern_as(struct strtab *st, const char *s, size_t len, strtab_admit_fn admit,
		      void *ctx)
{
	return intern(st, s, len, true, admit, ctx);
}

void strtab__set_share_limit(struct strtab *st, size_t max_bytes)
{
	st->share_max = max_bytes;
}

size_t strtab__share_limit(const struct strtab *st)
{
	return st->share_max;
}

bool strtab__is_refused(const struct strtab *st, int id)
{
	return st->refused_id >= 0 && id == st->refused_id;
}

uint64_t strtab__share_refused(const struct strtab *st)
{
	return st->nr_share_refused;
}

int strtab__find(const struct strtab *st, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len, 0x5eed);
	size_t i = lookup(st, s, len, h);

	return st->slots[i].id1 ? (int)(st->slots[i].id1 - 1) : -ENOENT;
}

const char *strtab__str(const struct strtab *st, uint32_t id)
{
	return st->strs[id];
}

size_t strtab__len(const struct strtab *st, uint32_t id)
{
	return st->lens[id];
}

size_t strtab__count(const struct strtab *st)
{
	return st->count;
}

size_t strtab__mem_bytes(const struct strtab *st)
{
	return st->mem;
}

void strtab__charge_to(struct strtab *st, uint64_t *counter)
{
	st->charge = counter;
	st->charged = 0;
	charge_sync(st);
}

uint64_t *strtab__charge(const struct strtab *st)
{
	return st ? st->charge : NULL;
}

int strtab__set_limit(struct strtab *st, size_t max_bytes, const char *refused)
{
	char *r = NULL;
	int id = -1;

	if (max_bytes) {
		r = strdup(refused);
		if (!r)
			return -ENOMEM;
		id = intern(st, r, strlen(r), false, NULL, NULL);
		if (id < 0) {
			free(r);
			return id;
		}
	}
	free(st->refused);
	st->refused = r;
	st->refused_id = id;
	st->max_bytes = max_bytes;
	return 0;
}

uint64_t strtab__refused(const struct strtab *st)
{
	return st->nr_refused;
}

uint64_t strtab__generation(const struct strtab *st)
{
	return st->generation;
}

int strtab__renew(struct strtab *st)
{
	struct strtab *old;
	int id;

	if (st->prev)
		return -EBUSY;
	old = calloc(1, sizeof(*old));
	if (!old)
		return -ENOMEM;
	/* the old names move to @old; @st keeps its settings and starts empty */
	old->chunks = st->chunks;
	old->strs = st->strs;
	old->lens = st->lens;
	old->count = st->count;
	old->strs_cap = st->strs_cap;
	old->slots = st->slots;
	old->nslots = st->nslots;
	old->mem = st->mem;
	if (contents_init(st)) {
		st->chunks = old->chunks;
		st->strs = old->strs;
		st->lens = old->lens;
		st->count = old->count;
		st->strs_cap = old->strs_cap;
		st->slots = old->slots;
		st->nslots = old->nslots;
		st->mem = old->mem;
		free(old);
		return -ENOMEM;
	}
	st->prev = old;
	st->generation++;
	if (st->refused) {
		id = intern(st, st->refused, strlen(st->refused), false, NULL, NULL);
		st->refused_id = id;
		if (id < 0)
			return id; /* no placeholder: nothing refused until the next renewal */
	}
	return 0;
}

int strtab__carry(struct strtab *st, uint32_t old_id)
{
	if (!st->prev || old_id >= st->prev->count)
		return -EINVAL;
	return intern(st, st->prev->strs[old_id], st->prev->lens[old_id], false, NULL, NULL);
}

void strtab__renew_done(struct strtab *st)
{
	if (!st->prev)
		return;
	contents_fini(st->prev);
	free(st->prev);
	st->prev = NULL;
	charge_sync(st);
}
