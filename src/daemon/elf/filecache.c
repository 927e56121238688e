// SPDX-License-Identifier: MIT
/* filecache: per-file facts shared by every process mapping the file (filecache.h). */
#include "ember/daemon/elf/filecache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/hash.h"

#define DEFAULT_MAX_FILES 1024
#define DEFAULT_MAX_BYTES (16ull << 20)

struct fent {
	struct fent *hnext;
	struct fent *bnext; /* by build-id, when the entry has one */
	struct fent *lru_prev, *lru_next;
	struct filecache_id id;
	void *facts[FILECACHE__NR];
	size_t bytes[FILECACHE__NR];
	bool obj[FILECACHE__NR]; /* an object freed by its kind's function, not a copy */
};

struct filecache {
	struct filecache_opts o;
	struct fent **tab;  /* by device and inode */
	struct fent **btab; /* by build-id: the same size */
	size_t tab_size;
	struct fent lru; /* sentinel: lru.lru_next is the most recent */
	struct filecache_stats st;
	filecache_free_fn free_fn[FILECACHE__NR];
	void *free_ctx[FILECACHE__NR];
};

static size_t slot(const struct filecache *fc, uint64_t dev, uint64_t ino)
{
	return hash_mix64(dev * 0x9e3779b97f4a7c15ull ^ ino) & (fc->tab_size - 1);
}

static size_t bslot(const struct filecache *fc, const struct filecache_id *id)
{
	return hash_bytes(id->build_id, id->build_id_len, id->size) & (fc->tab_size - 1);
}

static void lru_unlink(struct fent *e)
{
	e->lru_prev->lru_next = e->lru_next;
	e->lru_next->lru_prev = e->lru_prev;
}

static void lru_front(struct filecache *fc, struct fent *e)
{
	e->lru_next = fc->lru.lru_next;
	e->lru_prev = &fc->lru;
	fc->lru.lru_next->lru_prev = e;
	fc->lru.lru_next = e;
}

static void slot_free(struct filecache *fc, struct fent *e, int k)
{
	fc->st.bytes -= e->bytes[k];
	fc->st.kind_bytes[k] -= e->bytes[k];
	if (e->obj[k] && e->facts[k])
		fc->free_fn[k](e->facts[k], fc->free_ctx[k]);
	else
		free(e->facts[k]);
	e->facts[k] = NULL;
	e->bytes[k] = 0;
	e->obj[k] = false;
}

static void fent_free(struct filecache *fc, struct fent *e)
{
	int k;

	for (k = 0; k < FILECACHE__NR; k++)
		slot_free(fc, e, k);
	fc->st.bytes -= sizeof(*e);
	fc->st.files--;
	free(e);
}

static void fent_remove(struct filecache *fc, struct fent *e)
{
	struct fent **pp;

	for (pp = &fc->tab[slot(fc, e->id.dev, e->id.ino)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	for (pp = &fc->btab[bslot(fc, &e->id)]; e->id.build_id_len && *pp; pp = &(*pp)->bnext) {
		if (*pp == e) {
			*pp = e->bnext;
			break;
		}
	}
	lru_unlink(e);
	fent_free(fc, e);
}

struct filecache *filecache__new(const struct filecache_opts *o)
{
	struct filecache *fc = calloc(1, sizeof(*fc));

	if (!fc)
		return NULL;
	if (o)
		fc->o = *o;
	if (!fc->o.max_files)
		fc->o.max_files = DEFAULT_MAX_FILES;
	if (!fc->o.max_bytes)
		fc->o.max_bytes = DEFAULT_MAX_BYTES;
	for (fc->tab_size = 64; fc->tab_size < fc->o.max_files; fc->tab_size *= 2)
		;
	fc->tab = calloc(fc->tab_size, sizeof(*fc->tab));
	fc->btab = calloc(fc->tab_size, sizeof(*fc->btab));
	if (!fc->tab || !fc->btab) {
		free(fc->tab);
		free(fc->btab);
		free(fc);
		errno = ENOMEM;
		return NULL;
	}
	fc->lru.lru_next = fc->lru.lru_prev = &fc->lru;
	fc->st.bytes = 2 * fc->tab_size * sizeof(*fc->tab);
	return fc;
}

void filecache__free(struct filecache *fc)
{
	if (!fc)
		return;
	while (fc->lru.lru_next != &fc->lru) {
		struct fent *e = fc->lru.lru_next;

		lru_unlink(e);
		fent_free(fc, e);
	}
	free(fc->tab);
	free(fc->btab);
	free(fc);
}

void filecache__set_free(struct filecache *fc, enum filecache_kind k, filecache_free_fn fn,
			 void *ctx)
{
	if ((unsigned)k >= FILECACHE__NR)
		return;
	fc->free_fn[k] = fn;
	fc->free_ctx[k] = ctx;
}

void filecache_id_of(const struct stat *st, struct filecache_id *ret)
{
	*ret = (struct filecache_id){ .dev = st->st_dev, .ino = st->st_ino,
				      .size = (uint64_t)st->st_size,
				      .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
						  st->st_mtim.tv_nsec,
				      .uid = st->st_uid };
}

void filecache_id_set_build_id(struct filecache_id *id, const uint8_t *bid, size_t len)
{
	if (!len || len > sizeof(id->build_id)) {
		id->build_id_len = 0;
		return;
	}
	memcpy(id->build_id, bid, len);
	id->build_id_len = (uint8_t)len;
}

static bool same_build_id(const struct filecache_id *a, const struct filecache_id *b)
{
	return a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

bool filecache_id_same_file(const struct filecache_id *a, const struct filecache_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns &&
	       (!a->build_id_len || !b->build_id_len || same_build_id(a, b));
}

bool filecache_id_shares(const struct filecache_id *want, const struct filecache_id *have)
{
	return want->build_id_len && same_build_id(want, have) && want->size == have->size &&
	       (have->uid == want->uid || have->uid == 0);
}

static void touch(struct filecache *fc, struct fent *e)
{
	if (fc->lru.lru_next != e) {
		lru_unlink(e);
		lru_front(fc, e);
	}
}

/* The entry of @id's device and inode; one that is not the same file is dropped (changed). */
static struct fent *find(struct filecache *fc, const struct filecache_id *id)
{
	struct fent *e;

	for (e = fc->tab[slot(fc, id->dev, id->ino)]; e; e = e->hnext) {
		if (e->id.dev != id->dev || e->id.ino != id->ino)
			continue;
		if (!filecache_id_same_file(&e->id, id)) {
			fent_remove(fc, e);
			fc->st.changed++;
			return NULL;
		}
		touch(fc, e);
		return e;
	}
	return NULL;
}

/* Another file's entry whose kind @k may serve @id (filecache_id_shares), or NULL. */
static struct fent *find_shared(struct filecache *fc, const struct filecache_id *id,
				enum filecache_kind k)
{
	struct fent *e;

	if (!id->build_id_len)
		return NULL;
	for (e = fc->btab[bslot(fc, id)]; e; e = e->bnext) {
		if (e->facts[k] && filecache_id_shares(id, &e->id)) {
			touch(fc, e);
			return e;
		}
	}
	return NULL;
}

static void *get(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k)
{
	struct fent *e;

	if ((unsigned)k >= FILECACHE__NR)
		return NULL;
	e = find(fc, id);
	if (!e || !e->facts[k]) {
		e = find_shared(fc, id, k);
		if (!e) {
			fc->st.misses++;
			return NULL;
		}
		fc->st.shared++;
	}
	fc->st.hits++;
	return e->facts[k];
}

/* Keeps @data (owned from here: freed on error as @obj says) in @id's own entry, slot @k. */
static int put(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
	       void *data, size_t bytes, bool obj)
{
	struct fent *e;
	size_t h;
	int err;

	if (bytes + sizeof(*e) > fc->o.max_bytes) {
		fc->st.refused++;
		err = -E2BIG;
		goto fail;
	}
	e = find(fc, id);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			err = -ENOMEM;
			goto fail;
		}
		e->id = *id;
		e->id.build_id_len = 0; /* added below, with the build-id chain */
		h = slot(fc, id->dev, id->ino);
		e->hnext = fc->tab[h];
		fc->tab[h] = e;
		lru_front(fc, e);
		fc->st.files++;
		fc->st.bytes += sizeof(*e);
	}
	if (!e->id.build_id_len && id->build_id_len) { /* the same file (find), now with it */
		filecache_id_set_build_id(&e->id, id->build_id, id->build_id_len);
		h = bslot(fc, &e->id);
		e->bnext = fc->btab[h];
		fc->btab[h] = e;
	}
	slot_free(fc, e, k);
	e->facts[k] = data;
	e->bytes[k] = bytes;
	e->obj[k] = obj;
	fc->st.bytes += bytes;
	fc->st.kind_bytes[k] += bytes;
	/* room: the least recently used go (never the one just put: it is the most recent) */
	while ((fc->st.files > fc->o.max_files ||
		fc->st.bytes > fc->o.max_bytes + 2 * fc->tab_size * sizeof(*fc->tab)) &&
	       fc->lru.lru_prev != e) {
		fent_remove(fc, fc->lru.lru_prev);
		fc->st.evictions++;
	}
	return 0;

fail:
	if (obj)
		fc->free_fn[k](data, fc->free_ctx[k]);
	else
		free(data);
	return err;
}

const void *filecache__get(struct filecache *fc, const struct filecache_id *id,
			   enum filecache_kind k)
{
	return get(fc, id, k);
}

void *filecache__get_obj(struct filecache *fc, const struct filecache_id *id,
			 enum filecache_kind k)
{
	return get(fc, id, k);
}

int filecache__put(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		   const void *facts, size_t bytes)
{
	void *copy;

	if ((unsigned)k >= FILECACHE__NR || !bytes)
		return -EINVAL;
	if (bytes + sizeof(struct fent) > fc->o.max_bytes) {
		fc->st.refused++;
		return -E2BIG;
	}
	copy = malloc(bytes);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, facts, bytes);
	return put(fc, id, k, copy, bytes, false);
}

int filecache__put_obj(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		       void *obj, size_t bytes)
{
	if ((unsigned)k >= FILECACHE__NR || !fc->free_fn[k])
		return -EINVAL; /* cannot be freed: the caller keeps it */
	if (!obj)
		return -EINVAL;
	return put(fc, id, k, obj, bytes, true);
}

void filecache__drop(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k)
{
	struct fent *e;

	if ((unsigned)k >= FILECACHE__NR)
		return;
	for (e = fc->tab[slot(fc, id->dev, id->ino)]; e; e = e->hnext)
		if (filecache_id_same_file(&e->id, id))
			slot_free(fc, e, k);
}

void filecache__drop_kind(struct filecache *fc, enum filecache_kind k)
{
	struct fent *e;

	if (!fc || (unsigned)k >= FILECACHE__NR)
		return;
	for (e = fc->lru.lru_next; e != &fc->lru; e = e->lru_next)
		slot_free(fc, e, k);
}

void filecache__stats(const struct filecache *fc, struct filecache_stats *ret)
{
	*ret = fc->st;
}
